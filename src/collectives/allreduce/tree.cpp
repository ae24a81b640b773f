// `tree`: the asynchronous binary-tree reduction of paper 000 §3.1.2 over
// point-to-point messages (protocol: nonblocking_allreduce.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <climits>
#include <stdexcept>
#include <vector>

#include "../algorithms.hpp"
#include "../nonblocking_base.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::collectives::detail {
namespace {

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
            combine(partial_.data(), child.data(), partial_.data(), size_, op_);
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

}  // namespace

std::unique_ptr<NonblockingAllreduce> make_tree_allreduce(const par::Comm& comm, std::size_t size,
                                                          ReduceOp op) {
  return std::make_unique<TreeAllreduce>(comm, size, op);
}

}  // namespace asyncsolve::collectives::detail
