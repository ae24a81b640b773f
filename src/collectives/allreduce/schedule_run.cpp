// The schedule-engine allreduces (`rd`, `knomial:K`) behind the
// NonblockingAllreduce interface: one schedule built once, run per reduction.
#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <stdexcept>
#include <utility>
#include <vector>

#include "../algorithms.hpp"
#include "../nonblocking_base.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::collectives::detail {
namespace {

/// A schedule-engine allreduce (`rd`, `knomial:K`): one schedule, built at
/// construction, run once per reduction.
class ScheduleAllreduce final : public NonblockingBase {
 public:
  ScheduleAllreduce(std::string name, const par::Comm& comm, std::size_t size, ReduceOp op,
                    const ScheduleBuilder& build)
      : NonblockingBase(comm, size, op), name_(std::move(name)), run_(make_run(build)) {}
  ~ScheduleAllreduce() override {
    assert(!active_ && "NonblockingAllreduce destroyed with a reduction active");
  }

  std::string_view name() const override { return name_; }
  bool active() const override { return active_; }
  int outstanding_requests() const override { return run_.outstanding_requests(); }

  void start(std::span<const double> values) override {
    check_start(values);
    active_ = true;
    run_.start(values);
  }

 private:
  ScheduleExecutor make_run(const ScheduleBuilder& build) {
    BuiltSchedule b = build(comm_.rank(), comm_.size());
    return ScheduleExecutor(std::move(b.schedule), comm_.get(), b.input, b.result, size_);
  }
  bool advance(bool blocking) override {
    if (blocking) {
      run_.wait();
    } else if (!run_.test()) {
      return false;
    }
    active_ = false;
    return true;
  }
  std::span<const double> reduced() const override { return run_.result(); }

  std::string name_;
  ScheduleExecutor run_;
  bool active_ = false;
};

}  // namespace

std::unique_ptr<NonblockingAllreduce> make_schedule_allreduce(std::string name,
                                                              const par::Comm& comm,
                                                              std::size_t size, ReduceOp op,
                                                              const ScheduleBuilder& build) {
  return std::make_unique<ScheduleAllreduce>(std::move(name), comm, size, op, build);
}

}  // namespace asyncsolve::collectives::detail
