#include "asyncsolve/collectives/nonblocking_allreduce.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <stdexcept>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "nonblocking_base.hpp"
#include "schedule_allreduce.hpp"

namespace asyncsolve::collectives {
namespace {

using detail::mpi_finalized;
using detail::NonblockingBase;

/// MPI_Iallreduce; test() is MPI_Test.
class ImpiAllreduce final : public NonblockingBase {
 public:
  ImpiAllreduce(const par::Comm& comm, std::size_t size, ReduceOp op)
      : NonblockingBase(comm, size, op), send_(size), recv_(size) {}
  ImpiAllreduce(const ImpiAllreduce&) = delete;
  ImpiAllreduce& operator=(const ImpiAllreduce&) = delete;
  ~ImpiAllreduce() override {
    assert(!active() && "NonblockingAllreduce destroyed with a reduction active");
    // A collective request cannot be cancelled: complete it (this waits for
    // the other ranks to join the reduction).
    if (active() && !mpi_finalized()) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

  std::string_view name() const override { return "impi"; }
  bool active() const override { return request_ != MPI_REQUEST_NULL; }
  int outstanding_requests() const override { return active() ? 1 : 0; }

  void start(std::span<const double> values) override {
    check_start(values);
    std::copy(values.begin(), values.end(), send_.begin());
    par::check_mpi(MPI_Iallreduce(send_.data(), recv_.data(), count(), MPI_DOUBLE,
                                  detail::to_mpi_op(op_), comm_.get(), &request_),
                   "MPI_Iallreduce");
  }

  bool test(std::span<double> result) override {
    check_complete(result);
    int done = 0;
    par::check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done == 0) return false;
    finish(result);
    return true;
  }

  void wait(std::span<double> result) override {
    check_complete(result);
    par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
    finish(result);
  }

 private:
  void finish(std::span<double> result) {
    std::copy(recv_.begin(), recv_.end(), result.begin());
    ++completed_;
  }

  std::vector<double> send_;
  std::vector<double> recv_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

/// Paper 000 §3.1.2: partial sums travel up a binary tree (parent (r-1)/2,
/// children 2r+1, 2r+2), the root's total travels down it. The protocol and
/// why it terminates cleanly are documented in the header.
class TreeAllreduce final : public NonblockingBase {
 public:
  TreeAllreduce(const par::Comm& comm, std::size_t size, ReduceOp op)
      : NonblockingBase(comm, size, op), partial_(size), total_(size) {
    const int rank = comm_.rank();
    const int ranks = comm_.size();
    parent_ = rank == 0 ? MPI_PROC_NULL : (rank - 1) / 2;
    for (int i = 0; i < 2; ++i) {
      const int child = 2 * rank + 1 + i;
      if (child < ranks) {
        children_[static_cast<std::size_t>(children_count_)] = child;
        child_partial_[static_cast<std::size_t>(children_count_)].resize(size);
        ++children_count_;
      }
    }
    requests_.fill(MPI_REQUEST_NULL);
  }
  TreeAllreduce(const TreeAllreduce&) = delete;
  TreeAllreduce& operator=(const TreeAllreduce&) = delete;
  ~TreeAllreduce() override {
    assert(!active() && "NonblockingAllreduce destroyed with a reduction active");
    if (!active() || mpi_finalized()) return;
    // Never leave a request behind: receives can be cancelled; sends cannot
    // (Open MPI ignores MPI_Cancel on a send), so they are completed. A
    // down-send's receive is always posted already; an up-send is a few
    // doubles, sent eagerly.
    for (std::size_t i = kRecvChild0; i <= kRecvParent; ++i)
      if (requests_[i] != MPI_REQUEST_NULL) MPI_Cancel(&requests_[i]);
    MPI_Waitall(kRequests, requests_.data(), MPI_STATUSES_IGNORE);
  }

  std::string_view name() const override { return "tree"; }
  bool active() const override { return phase_ != Phase::idle; }
  int outstanding_requests() const override {
    return static_cast<int>(std::count_if(requests_.begin(), requests_.end(),
                                          [](MPI_Request r) { return r != MPI_REQUEST_NULL; }));
  }

  void start(std::span<const double> values) override {
    check_start(values);
    assert(outstanding_requests() == 0);
    std::copy(values.begin(), values.end(), partial_.begin());
    for (int i = 0; i < children_count_; ++i) {
      const auto c = static_cast<std::size_t>(i);
      par::check_mpi(MPI_Irecv(child_partial_[c].data(), count(), MPI_DOUBLE, children_[c], kTagUp,
                               comm_.get(), &requests_[kRecvChild0 + c]),
                     "MPI_Irecv");
    }
    if (parent_ != MPI_PROC_NULL)
      par::check_mpi(MPI_Irecv(total_.data(), count(), MPI_DOUBLE, parent_, kTagDown, comm_.get(),
                               &requests_[kRecvParent]),
                     "MPI_Irecv");
    phase_ = Phase::gathering;
  }

  bool test(std::span<double> result) override {
    check_complete(result);
    if (!advance(false)) return false;
    finish(result);
    return true;
  }

  void wait(std::span<double> result) override {
    check_complete(result);
    advance(true);
    finish(result);
  }

 private:
  enum class Phase {
    idle,            // no round active, no request outstanding
    gathering,       // waiting for the children's partial sums
    awaiting_total,  // partial sent up; waiting for the total from the parent
    draining,        // total known and sent down; waiting for this rank's sends
  };
  // Request slots; each phase waits on one contiguous range.
  static constexpr std::size_t kRecvChild0 = 0;  // and kRecvChild0 + 1
  static constexpr std::size_t kRecvParent = 2;
  static constexpr std::size_t kSendUp = 3;
  static constexpr std::size_t kSendChild0 = 4;  // and kSendChild0 + 1
  static constexpr int kRequests = 6;
  static constexpr int kTagUp = 1;
  static constexpr int kTagDown = 2;

  /// Moves through the phases as far as the completed requests allow
  /// (blocking: until the round is complete). True when the round is complete.
  bool advance(bool blocking) {
    while (true) {
      switch (phase_) {
        case Phase::gathering:
          if (!complete(kRecvChild0, 2, blocking)) return false;
          // partial = own op child 2r+1 op child 2r+2, in this order on every run.
          for (int i = 0; i < children_count_; ++i) {
            const auto& child = child_partial_[static_cast<std::size_t>(i)];
            detail::combine(partial_.data(), child.data(), partial_.data(), size_, op_);
          }
          if (parent_ == MPI_PROC_NULL) {
            total_ = partial_;
            send_down();
            phase_ = Phase::draining;
          } else {
            par::check_mpi(MPI_Isend(partial_.data(), count(), MPI_DOUBLE, parent_, kTagUp,
                                     comm_.get(), &requests_[kSendUp]),
                           "MPI_Isend");
            phase_ = Phase::awaiting_total;
          }
          break;
        case Phase::awaiting_total:
          if (!complete(kRecvParent, 1, blocking)) return false;
          send_down();
          phase_ = Phase::draining;
          break;
        case Phase::draining:
          if (!complete(kSendUp, 3, blocking)) return false;
          phase_ = Phase::idle;
          return true;
        case Phase::idle:
          assert(false && "advance without an active round");
          return false;
      }
    }
  }

  /// Tests (or waits for) requests_[first, first + n). Null slots count as
  /// complete. True when all have completed (and are reset to null).
  bool complete(std::size_t first, int n, bool blocking) {
    MPI_Request* r = &requests_[first];
    if (blocking) {
      par::check_mpi(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
      return true;
    }
    int done = 0;
    par::check_mpi(MPI_Testall(n, r, &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    return done != 0;
  }

  /// Forwards the total, unchanged, to each child.
  void send_down() {
    for (int i = 0; i < children_count_; ++i) {
      const auto c = static_cast<std::size_t>(i);
      par::check_mpi(MPI_Isend(total_.data(), count(), MPI_DOUBLE, children_[c], kTagDown,
                               comm_.get(), &requests_[kSendChild0 + c]),
                     "MPI_Isend");
    }
  }

  void finish(std::span<double> result) {
    assert(outstanding_requests() == 0);
    std::copy(total_.begin(), total_.end(), result.begin());
    ++completed_;
  }

  int parent_ = MPI_PROC_NULL;
  std::array<int, 2> children_{MPI_PROC_NULL, MPI_PROC_NULL};
  int children_count_ = 0;
  std::vector<double> partial_;                       // own contribution, then + children
  std::array<std::vector<double>, 2> child_partial_;  // receive buffers, one per child
  std::vector<double> total_;                         // the root's total (receive/send buffer)
  std::array<MPI_Request, kRequests> requests_{};
  Phase phase_ = Phase::idle;
};

/// The blocking reduction behind the non-blocking interface: start() runs
/// MPI_Allreduce to completion and test() returns the result at once. What
/// solvers use when nothing should overlap (PCG-Algorithm1 and 2 of paper 003).
class BlockingAllreduce final : public NonblockingBase {
 public:
  BlockingAllreduce(const par::Comm& comm, std::size_t size, ReduceOp op)
      : NonblockingBase(comm, size, op), result_(size) {}
  std::string_view name() const override { return "mpi"; }
  bool active() const override { return active_; }
  int outstanding_requests() const override { return 0; }

  void start(std::span<const double> values) override {
    check_start(values);
    std::copy(values.begin(), values.end(), result_.begin());
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, result_.data(), count(), MPI_DOUBLE,
                                 detail::to_mpi_op(op_), comm_.get()),
                   "MPI_Allreduce");
    active_ = true;
  }
  bool test(std::span<double> result) override {
    wait(result);
    return true;
  }
  void wait(std::span<double> result) override {
    check_complete(result);
    std::copy(result_.begin(), result_.end(), result.begin());
    active_ = false;
    ++completed_;
  }

 private:
  std::vector<double> result_;
  bool active_ = false;
};

}  // namespace

std::vector<std::string> nonblocking_allreduce_names() { return {"tree", "impi", "mpi", "rd"}; }

void check_allreduce_name(std::string_view name) { (void)detail::parse_allreduce_name(name); }

std::unique_ptr<NonblockingAllreduce> make_nonblocking_allreduce(std::string_view name,
                                                                 const par::Comm& comm,
                                                                 std::size_t size, ReduceOp op) {
  const detail::AllreduceName parsed = detail::parse_allreduce_name(name);
  if (size > static_cast<std::size_t>(INT_MAX))
    throw std::length_error(fmt::format("non-blocking allreduce of {} doubles: more than an MPI "
                                        "count can hold",
                                        size));
  detail::check_same_arguments(comm, size, op);
  switch (parsed.kind) {
    case detail::AllreduceName::Kind::tree:
      return std::make_unique<TreeAllreduce>(comm, size, op);
    case detail::AllreduceName::Kind::mpi:
      return std::make_unique<BlockingAllreduce>(comm, size, op);
    case detail::AllreduceName::Kind::impi:
      return std::make_unique<ImpiAllreduce>(comm, size, op);
    case detail::AllreduceName::Kind::rd:
    case detail::AllreduceName::Kind::knomial:
      return detail::make_schedule_allreduce(parsed, comm, size, op);
    case detail::AllreduceName::Kind::twolevel:
      return detail::make_two_level(parsed, comm, size, op, -1);
  }
  throw std::logic_error("make_nonblocking_allreduce: unhandled algorithm");
}

std::unique_ptr<NonblockingAllreduce> make_two_level_allreduce(const par::Comm& comm,
                                                               std::size_t size,
                                                               std::string_view leader_algorithm,
                                                               ReduceOp op, int node_color) {
  const detail::AllreduceName parsed =
      detail::parse_allreduce_name(fmt::format("twolevel:{}", leader_algorithm));
  if (size > static_cast<std::size_t>(INT_MAX))
    throw std::length_error(fmt::format("non-blocking allreduce of {} doubles: more than an MPI "
                                        "count can hold",
                                        size));
  detail::check_same_arguments(comm, size, op);
  return detail::make_two_level(parsed, comm, size, op, node_color);
}

}  // namespace asyncsolve::collectives
