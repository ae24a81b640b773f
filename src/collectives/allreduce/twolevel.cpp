// `twolevel:ALG` (paper 003 §IV-C): a node-aware allreduce on the schedule
// engine, ALG among the node leaders.
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

/// `twolevel:ALG` (paper 003 §IV-C): binomial reduce to the node leader (node
/// rank 0), ALG among the leaders, binomial broadcast within the node. Three
/// phases; the leaders' reduction is started by the test() that completes
/// the node reduction, and the broadcast by the one that completes ALG.
class TwoLevelAllreduce final : public NonblockingBase {
 public:
  TwoLevelAllreduce(const AllreduceAlgorithm& algorithm, const par::Comm& comm, std::size_t size,
                    ReduceOp op, int node_color)
      : NonblockingBase(comm, size, op),
        name_(algorithm.name()),
        node_(split_node(comm_, node_color)),
        up_(build_up()),
        down_(build_down()),
        across_(size),
        // Leaders: node rank 0.
        inner_(make_leaders_allreduce(comm_, node_.rank() == 0, algorithm.leader_algorithm(), size,
                                      op)) {}
  ~TwoLevelAllreduce() override {
    assert(!active() && "NonblockingAllreduce destroyed with a reduction active");
    // Release builds: each part completes or cancels its own requests.
    if (phase_ == Phase::across && inner_ && !mpi_finalized()) {
      std::vector<double> sink(size_);
      inner_->wait(sink);
    }
  }

  std::string_view name() const override { return name_; }
  bool active() const override { return phase_ != Phase::idle; }
  int outstanding_requests() const override {
    return up_.outstanding_requests() + down_.outstanding_requests() +
           (inner_ ? inner_->outstanding_requests() : 0);
  }

  void start(std::span<const double> values) override {
    check_start(values);
    phase_ = Phase::up;
    up_.start(values);
  }

 protected:
  void free_resources() override {
    if (inner_) inner_->free();
    node_.free();
  }

 private:
  enum class Phase { idle, up, across, down };
  static constexpr int kDegree = 2;   // within the node
  static constexpr int kDownTag = 1;  // the broadcast's tag on the node communicator

  ScheduleExecutor build_up() {
    // Buffer: acc | one receive area per child at a stride.
    Schedule s(2 * size_);
    append_knomial_reduce(s, node_.rank(), node_.size(), kDegree, 0, size_, size_, op_);
    return ScheduleExecutor(std::move(s), node_.get(), 0, 0, size_);
  }
  ScheduleExecutor build_down() {
    Schedule s(size_);
    append_knomial_bcast(s, node_.rank(), node_.size(), kDegree, 0, size_);
    return ScheduleExecutor(std::move(s), node_.get(), 0, 0, size_, kDownTag);
  }

  /// Progresses one executor: true once its operation has completed.
  static bool step(ScheduleExecutor& run, bool blocking) {
    if (blocking) {
      run.wait();
      return true;
    }
    return run.test();
  }

  bool advance(bool blocking) override {
    const bool leader = node_.rank() == 0;
    while (true) {
      switch (phase_) {
        case Phase::up:
          if (!step(up_, blocking)) return false;
          if (inner_) {
            inner_->start(up_.result());
            phase_ = Phase::across;
          } else {
            // A lone node's leader broadcasts its node's total; the other
            // ranks post their receive (no input).
            down_.start(leader ? up_.result() : std::span<const double>{});
            phase_ = Phase::down;
          }
          break;
        case Phase::across:
          if (blocking) {
            inner_->wait(across_);
          } else if (!inner_->test(across_)) {
            return false;
          }
          down_.start(across_);
          phase_ = Phase::down;
          break;
        case Phase::down:
          if (!step(down_, blocking)) return false;
          phase_ = Phase::idle;
          return true;
        case Phase::idle:
          assert(false && "advance without an active reduction");
          return false;
      }
    }
  }

  std::span<const double> reduced() const override { return down_.result(); }

  std::string name_;
  par::Comm node_;
  ScheduleExecutor up_;
  ScheduleExecutor down_;
  std::vector<double> across_;  // the leaders' result
  std::unique_ptr<NonblockingAllreduce> inner_;
  Phase phase_ = Phase::idle;
};

}  // namespace

std::unique_ptr<NonblockingAllreduce> make_two_level(const AllreduceAlgorithm& algorithm,
                                                     const par::Comm& comm, std::size_t size,
                                                     ReduceOp op, int node_color) {
  return std::make_unique<TwoLevelAllreduce>(algorithm, comm, size, op, node_color);
}

}  // namespace asyncsolve::collectives::detail
