// The dissemination barrier (paper 001 §2.2) on the schedule engine, and the
// NonblockingBarrier factory.
#include "asyncsolve/collectives/nonblocking_barrier.hpp"

#include <fmt/format.h>

#include <cassert>
#include <charconv>
#include <stdexcept>
#include <utility>

#include "../algorithms.hpp"
#include "asyncsolve/collectives/schedule.hpp"
#include "asyncsolve/core/error.hpp"

namespace asyncsolve::collectives {

namespace detail {

Schedule dissemination_barrier(int rank, int ranks, int ways) {
  Schedule s(0);
  for (long long distance = 1; distance < ranks; distance *= ways + 1) {
    for (int i = 1; i <= ways; ++i) {
      const long long d = i * distance;
      if (d >= ranks) break;  // would only repeat peers already covered
      s.add_send(0, 0, static_cast<int>((rank + d) % ranks));
      s.add_recv(0, 0, static_cast<int>((rank - d + ranks) % ranks));
    }
    s.end_round();
  }
  return s;
}

}  // namespace detail

namespace {

/// The dissemination barrier's schedule run on an owned duplicate.
class DisseminationBarrier final : public NonblockingBarrier {
 public:
  DisseminationBarrier(const par::Comm& comm, int ways)
      : comm_(comm.dup()),
        name_(fmt::format("dissemination:{}", ways)),
        run_(detail::dissemination_barrier(comm_.rank(), comm_.size(), ways), comm_.get(), 0, 0,
             0) {}
  DisseminationBarrier(const DisseminationBarrier&) = delete;
  DisseminationBarrier& operator=(const DisseminationBarrier&) = delete;
  ~DisseminationBarrier() override {
    assert(!active_ && "NonblockingBarrier destroyed with a barrier active");
  }

  std::string_view name() const override { return name_; }
  bool active() const override { return active_; }
  int outstanding_requests() const override { return run_.outstanding_requests(); }
  const par::Comm& comm() const override { return comm_; }

  void start() override {
    if (active_) throw std::logic_error("NonblockingBarrier::start with a barrier active");
    if (comm_.get() == MPI_COMM_NULL) throw std::logic_error("NonblockingBarrier used after free");
    active_ = true;
    run_.start({});
  }
  bool test() override {
    if (!active_) throw std::logic_error("NonblockingBarrier::test with no barrier active");
    if (!run_.test()) return false;
    active_ = false;
    return true;
  }
  void wait() override {
    if (!active_) throw std::logic_error("NonblockingBarrier::wait with no barrier active");
    run_.wait();
    active_ = false;
  }
  void free() override {
    if (active_) throw std::logic_error("NonblockingBarrier::free with a barrier active");
    comm_.free();
  }

 private:
  par::Comm comm_;
  std::string name_;
  ScheduleExecutor run_;
  bool active_ = false;
};

[[noreturn]] void bad_name(std::string_view name) {
  throw core::InputError(
      fmt::format("barrier '{}': expected dissemination or dissemination:N (N >= 1)", name));
}

}  // namespace

std::vector<std::string> nonblocking_barrier_names() { return {"dissemination"}; }

std::unique_ptr<NonblockingBarrier> make_nonblocking_barrier(std::string_view name,
                                                             const par::Comm& comm) {
  int ways = 1;
  if (name != "dissemination") {
    if (!name.starts_with("dissemination:")) bad_name(name);
    const std::string_view text = name.substr(14);
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, ways);
    if (text.empty() || ec != std::errc() || ptr != end || ways < 1) bad_name(name);
  }
  return std::make_unique<DisseminationBarrier>(comm, ways);
}

}  // namespace asyncsolve::collectives
