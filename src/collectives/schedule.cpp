#include "asyncsolve/collectives/schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <climits>
#include <stdexcept>
#include <utility>

#include "asyncsolve/par/check.hpp"
#include "nonblocking_base.hpp"

namespace asyncsolve::collectives {
namespace {

int checked_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX))
    throw std::length_error(
        fmt::format("schedule message of {} doubles: more than an MPI count "
                    "can hold",
                    count));
  return static_cast<int>(count);
}

}  // namespace

namespace detail {

bool mpi_finalized() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return finalized != 0;
}

/// dst[i] = a[i] op b[i]. min/max return the left operand on ties (and for
/// NaN on the right), so both partners of a combine get the same bits when
/// they pass the operands in the same order.
void combine(const double* a, const double* b, double* dst, std::size_t n, ReduceOp op) {
  switch (op) {
    case ReduceOp::sum:
      for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] + b[i];
      break;
    case ReduceOp::min:
      for (std::size_t i = 0; i < n; ++i) dst[i] = b[i] < a[i] ? b[i] : a[i];
      break;
    case ReduceOp::max:
      for (std::size_t i = 0; i < n; ++i) dst[i] = a[i] < b[i] ? b[i] : a[i];
      break;
  }
}

}  // namespace detail

// --- Schedule -----------------------------------------------------------

void Schedule::add(const ScheduleAction& action) {
  const auto fits = [&](std::size_t offset) {
    return offset <= buffer_size_ && action.count <= buffer_size_ - offset;
  };
  bool ok = true;
  switch (action.kind) {
    case ScheduleAction::Kind::send:
      ok = fits(action.a);
      break;
    case ScheduleAction::Kind::recv:
      ok = fits(action.dst);
      break;
    case ScheduleAction::Kind::reduce:
      ok = fits(action.a) && fits(action.b) && fits(action.dst);
      break;
    case ScheduleAction::Kind::copy:
      ok = fits(action.a) && fits(action.dst);
      break;
  }
  if (!ok)
    throw std::out_of_range(fmt::format("schedule action of {} doubles outside the buffer of {}",
                                        action.count, buffer_size_));
  if (action.is_communication()) checked_count(action.count);
  actions_.push_back(action);
  open_ = true;
}

void Schedule::add_send(std::size_t offset, std::size_t count, int peer) {
  add({.kind = ScheduleAction::Kind::send, .a = offset, .count = count, .peer = peer});
}

void Schedule::add_recv(std::size_t offset, std::size_t count, int peer) {
  add({.kind = ScheduleAction::Kind::recv, .dst = offset, .count = count, .peer = peer});
}

void Schedule::add_reduce(std::size_t a, std::size_t b, std::size_t dst, std::size_t count,
                          ReduceOp op) {
  add({.kind = ScheduleAction::Kind::reduce, .op = op, .a = a, .b = b, .dst = dst, .count = count});
}

void Schedule::add_copy(std::size_t src, std::size_t dst, std::size_t count) {
  add({.kind = ScheduleAction::Kind::copy, .a = src, .dst = dst, .count = count});
}

void Schedule::end_round() {
  if (!open_) return;
  round_begin_.push_back(actions_.size());
  open_ = false;
}

std::span<const ScheduleAction> Schedule::round(std::size_t r) const {
  assert(r < rounds());
  return std::span<const ScheduleAction>(actions_).subspan(round_begin_[r],
                                                           round_begin_[r + 1] - round_begin_[r]);
}

std::size_t Schedule::sends() const noexcept {
  return static_cast<std::size_t>(
      std::count_if(actions_.begin(), actions_.end(),
                    [](const ScheduleAction& a) { return a.kind == ScheduleAction::Kind::send; }));
}

std::size_t Schedule::max_requests_per_round() const noexcept {
  std::size_t most = 0;
  for (std::size_t r = 0; r + 1 < round_begin_.size(); ++r) {
    std::size_t n = 0;
    for (std::size_t i = round_begin_[r]; i < round_begin_[r + 1]; ++i)
      if (actions_[i].is_communication()) ++n;
    most = std::max(most, n);
  }
  return most;
}

// --- ScheduleExecutor ---------------------------------------------------

ScheduleExecutor::ScheduleExecutor(Schedule schedule, MPI_Comm comm, std::size_t input,
                                   std::size_t result, std::size_t count, int tag)
    : schedule_(std::move(schedule)),
      comm_(comm),
      input_(input),
      result_(result),
      count_(count),
      tag_(tag) {
  schedule_.end_round();  // an unclosed last round belongs to the schedule too
  // One spare double so that data() is never null for zero-byte messages.
  buffer_.assign(schedule_.buffer_size() + 1, 0.0);
  if (input_ > schedule_.buffer_size() || count_ > schedule_.buffer_size() - input_ ||
      result_ > schedule_.buffer_size() || count_ > schedule_.buffer_size() - result_)
    throw std::out_of_range("ScheduleExecutor: input or result outside the schedule's buffer");
  requests_.reserve(schedule_.max_requests_per_round());
}

ScheduleExecutor::ScheduleExecutor(ScheduleExecutor&& other) noexcept
    : schedule_(std::move(other.schedule_)),
      comm_(other.comm_),
      input_(other.input_),
      result_(other.result_),
      count_(other.count_),
      tag_(other.tag_),
      buffer_(std::move(other.buffer_)),
      requests_(std::move(other.requests_)),
      round_(other.round_),
      running_(std::exchange(other.running_, false)),
      active_(std::exchange(other.active_, false)) {}

ScheduleExecutor::~ScheduleExecutor() {
  assert(!running_ && "ScheduleExecutor destroyed with an operation in flight");
  if (!running_ || detail::mpi_finalized()) return;
  // Never leave a request behind: cancel receives (sends cannot be cancelled
  // in Open MPI 4.1), then complete everything.
  const auto actions = schedule_.round(round_);
  std::size_t k = 0;
  for (const auto& action : actions) {
    if (!action.is_communication()) continue;
    if (action.kind == ScheduleAction::Kind::recv && requests_[k] != MPI_REQUEST_NULL)
      MPI_Cancel(&requests_[k]);
    ++k;
  }
  MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
}

void ScheduleExecutor::start(std::span<const double> values) {
  if (active_) throw std::logic_error("ScheduleExecutor::start with an operation active");
  if (!values.empty()) {
    if (values.size() != count_)
      throw std::logic_error(
          fmt::format("ScheduleExecutor::start: {} doubles, expected {}", values.size(), count_));
    std::copy(values.begin(), values.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(input_));
  }
  active_ = true;
  round_ = 0;
  running_ = schedule_.rounds() > 0;
  if (!running_) return;
  post_round();
  advance(false);
}

bool ScheduleExecutor::test() {
  if (!active_) throw std::logic_error("ScheduleExecutor::test with no operation active");
  if (running_ && !advance(false)) return false;
  active_ = false;
  return true;
}

void ScheduleExecutor::wait() {
  if (!active_) throw std::logic_error("ScheduleExecutor::wait with no operation active");
  if (running_) advance(true);
  active_ = false;
}

int ScheduleExecutor::outstanding_requests() const noexcept {
  return static_cast<int>(std::count_if(requests_.begin(), requests_.end(),
                                        [](MPI_Request r) { return r != MPI_REQUEST_NULL; }));
}

std::span<const double> ScheduleExecutor::result() const noexcept {
  return std::span<const double>(buffer_).subspan(result_, count_);
}

void ScheduleExecutor::post_round() {
  requests_.clear();
  const int tag = tag_;
  for (const auto& action : schedule_.round(round_)) {
    if (action.kind == ScheduleAction::Kind::send) {
      requests_.push_back(MPI_REQUEST_NULL);
      par::check_mpi(MPI_Isend(buffer_.data() + action.a, static_cast<int>(action.count),
                               MPI_DOUBLE, action.peer, tag, comm_, &requests_.back()),
                     "MPI_Isend");
    } else if (action.kind == ScheduleAction::Kind::recv) {
      requests_.push_back(MPI_REQUEST_NULL);
      par::check_mpi(MPI_Irecv(buffer_.data() + action.dst, static_cast<int>(action.count),
                               MPI_DOUBLE, action.peer, tag, comm_, &requests_.back()),
                     "MPI_Irecv");
    }
  }
}

void ScheduleExecutor::run_local_ops() {
  double* buf = buffer_.data();
  for (const auto& action : schedule_.round(round_)) {
    if (action.kind == ScheduleAction::Kind::reduce) {
      detail::combine(buf + action.a, buf + action.b, buf + action.dst, action.count, action.op);
    } else if (action.kind == ScheduleAction::Kind::copy) {
      std::copy_n(buf + action.a, action.count, buf + action.dst);
    }
  }
}

bool ScheduleExecutor::advance(bool blocking) {
  while (true) {
    const int n = static_cast<int>(requests_.size());
    if (blocking) {
      par::check_mpi(MPI_Waitall(n, requests_.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    } else {
      int done = 0;
      par::check_mpi(MPI_Testall(n, requests_.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
      if (done == 0) return false;
    }
    requests_.clear();
    run_local_ops();
    ++round_;
    if (round_ == schedule_.rounds()) {
      running_ = false;
      return true;
    }
    post_round();
  }
}

}  // namespace asyncsolve::collectives
