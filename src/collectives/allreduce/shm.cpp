// `shm` and `twolevel:shm+ALG`: a non-blocking allreduce that needs no
// progress engine, over an MPI-3 shared-memory window per node (the slots
// and their ordering argument: ../shm_slots.hpp).
//
// `shm` (one node): start() deposits the values and returns; whoever calls
// test() or wait() reads every rank's deposit once all are there and folds
// them in node-rank order, v_0 op v_1 op ... op v_{P-1}, left to right. Every
// rank performs the same operations on the same bits in the same order, so
// the result is bit-identical everywhere; no rank waits for another to
// advance anything, so a rank that computes between start() and wait() delays
// nobody but those who wait for its own deposit.
//
// `twolevel:shm+ALG` (several nodes): the node level the same deposits; the
// leader (node rank 0) folds its node's deposits in node-rank order, runs ALG
// among the leaders (started by the test()/wait() that finds the deposits
// complete) and publishes ALG's result in its result slots, which the other
// ranks of the node copy. On one node it is `shm` itself.
#include <fmt/format.h>

#include <cassert>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../algorithms.hpp"
#include "../nonblocking_base.hpp"
#include "../shm_slots.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::collectives::detail {
namespace {

constexpr int deposit_area = 0;  // the slots' areas
constexpr int result_area = 1;

/// Polls a waiting rank spins before it starts yielding its core: a peer
/// running on another core publishes within a microsecond, while on an
/// oversubscribed node (more ranks than cores) the peer may need this very
/// core to get there, so there it yields at once.
int spin_polls(int node_ranks) noexcept { return par::exceeds_cores(node_ranks) ? 0 : 1000; }

void relax(int& polls, int spin) noexcept {
  if (++polls < spin) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  } else {
    std::this_thread::yield();
  }
}

class ShmAllreduce final : public NonblockingBase {
 public:
  ShmAllreduce(const AllreduceAlgorithm& algorithm, const par::Comm& comm, std::size_t size,
               ReduceOp op, int node_color)
      : NonblockingBase(comm, size, op),
        name_(algorithm.name()),
        node_(split_node(comm_, node_color)),
        node_rank_(node_.rank()),
        node_ranks_(node_.size()),
        spin_(spin_polls(node_ranks_)),
        acc_(size),
        result_(size) {
    const int nodes = count_nodes(algorithm, node_color);
    two_level_ = nodes > 1;
    slots_.emplace(node_, size, two_level_ ? 2 : 1);
    // Leaders (node rank 0) of several nodes run the leaders' algorithm.
    if (two_level_)
      inner_ =
          make_leaders_allreduce(comm_, node_rank_ == 0, algorithm.leader_algorithm(), size, op);
  }
  ~ShmAllreduce() override {
    assert(!active() && "NonblockingAllreduce destroyed with a reduction active");
    // Release builds: the leaders' reduction completes its own requests.
    if (phase_ == Phase::across && !mpi_finalized()) {
      std::vector<double> sink(size_);
      inner_->wait(sink);
    }
  }

  std::string_view name() const override { return name_; }
  bool active() const override { return phase_ != Phase::idle; }
  int outstanding_requests() const override { return inner_ ? inner_->outstanding_requests() : 0; }

  void start(std::span<const double> values) override {
    check_start(values);
    op_index_ = started_++;
    ready_ = 0;
    slots_->publish(deposit_area, op_index_, values);
    // What wait() will read, asked for now: the deposits of this operation
    // (or, for a non-leader of several nodes, its leader's result).
    if (two_level_ && node_rank_ != 0) {
      slots_->prefetch(0, result_area, op_index_);
    } else {
      for (int r = 0; r < node_ranks_; ++r)
        if (r != node_rank_) slots_->prefetch(r, deposit_area, op_index_);
    }
    phase_ = Phase::deposits;
  }

 protected:
  void free_resources() override {
    if (inner_) inner_->free();
    slots_->free();
    node_.free();
  }

 private:
  enum class Phase { idle, deposits, across };

  /// Collective: the number of nodes (leaders). Throws core::InputError on
  /// every rank if a node's ranks do not share memory, or if `shm` alone
  /// spans several nodes.
  int count_nodes(const AllreduceAlgorithm& algorithm, int node_color) {
    int shares = 1;
    if (node_color >= 0) {
      par::Comm shared = node_.split_shared();
      shares = shared.size() == node_ranks_ ? 1 : 0;
      shared.free();
    }
    int counts[2] = {node_rank_ == 0 ? 1 : 0, shares == 0 ? 1 : 0};
    par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, comm_.get()),
                   "MPI_Allreduce");
    const int nodes = counts[0];
    std::string problem;
    if (counts[1] > 0) {
      problem = fmt::format(
          "--allreduce '{}': the ranks grouped as one node do not all share memory, expected "
          "groups within one node",
          name_);
    } else if (nodes > 1 && algorithm.kind == AllreduceAlgorithm::Kind::shm) {
      problem = fmt::format(
          "--allreduce '{}': the {} ranks run on {} nodes that do not share memory, expected "
          "twolevel:shm+ALG (ALG: rd, knomial:K, mpi, impi) or a message-passing algorithm",
          name_, comm_.size(), nodes);
    }
    if (!problem.empty()) {
      node_.free();
      comm_.free();
      throw core::InputError(problem);
    }
    return nodes;
  }

  /// One step: true once the active reduction has completed into result_.
  bool progress(bool blocking) {
    if (phase_ == Phase::deposits) {
      if (two_level_ && node_rank_ != 0) {
        // A non-leader copies its leader's result.
        if (!slots_->is_published(0, result_area, op_index_)) return false;
        slots_->read(0, result_area, op_index_, result_);
        phase_ = Phase::idle;
        return true;
      }
      while (ready_ < node_ranks_ && slots_->is_published(ready_, deposit_area, op_index_))
        ++ready_;
      if (ready_ < node_ranks_) return false;
      // v_0 op v_1 op ... op v_{P-1} over the node's deposits, left to right
      // (the documented order every rank repeats)
      slots_->fold(node_ranks_, deposit_area, op_index_, op_, two_level_ ? acc_ : result_);
      if (!two_level_) {
        phase_ = Phase::idle;
        return true;
      }
      inner_->start(acc_);
      phase_ = Phase::across;
    }
    assert(phase_ == Phase::across);
    if (blocking) {
      inner_->wait(result_);
    } else if (!inner_->test(result_)) {
      return false;
    }
    slots_->publish(result_area, op_index_, result_);
    phase_ = Phase::idle;
    return true;
  }

  bool advance(bool blocking) override {
    int polls = 0;
    while (!progress(blocking)) {
      if (!blocking) return false;
      relax(polls, spin_);
    }
    return true;
  }
  std::span<const double> reduced() const override { return result_; }

  std::string name_;
  par::Comm node_;
  int node_rank_;
  int node_ranks_;
  int spin_;  // polls spun before yielding (spin_polls)
  std::optional<ShmSlots> slots_;
  std::unique_ptr<NonblockingAllreduce> inner_;  // leaders of several nodes only
  bool two_level_ = false;
  std::vector<double> acc_;  // a leader's node total
  std::vector<double> result_;
  std::uint64_t started_ = 0;   // operations started on this rank
  std::uint64_t op_index_ = 0;  // the active one's index
  int ready_ = 0;               // deposits of the active operation known to be there
  Phase phase_ = Phase::idle;
};

}  // namespace

std::unique_ptr<NonblockingAllreduce> make_shm_allreduce(const AllreduceAlgorithm& algorithm,
                                                         const par::Comm& comm, std::size_t size,
                                                         ReduceOp op, int node_color) {
  if (par::is_simulated()) {
    throw core::InputError(fmt::format(
        "--allreduce '{}': the simulation build has no memory shared between simulated ranks, "
        "expected a message-passing algorithm (mpi, impi, tree, rd, knomial:K, twolevel:ALG)",
        algorithm.name()));
  }
  return std::make_unique<ShmAllreduce>(algorithm, comm, size, op, node_color);
}

}  // namespace asyncsolve::collectives::detail
