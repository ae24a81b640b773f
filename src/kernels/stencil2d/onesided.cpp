// Stencil2D over one-sided communication (paper 004's CAF versions put, get,
// get0, get1), written once over OneSidedSpace and run over MPI-3 RMA
// (stencil2d_rma.cpp) or OpenSHMEM (stencil2d_shmem.cpp).
//
// Synchronisation is pairwise, through monotonic counters in each rank's
// space (no barrier, no fence inside the loop). Slot d (0..7) is "ready": the
// neighbour in direction d has made data of iteration k available, value
// k + 1; slot 8 + d is "consumed": the neighbour in direction d is done with
// this rank's data of iteration k, value k + 1. Each slot has exactly one
// writer (the neighbour in that direction), so a counter never races with
// another writer; reads and writes are atomic (RMA accumulate / fetch_and_op,
// SHMEM atomic set / fetch). Iterations are counted across run() calls.
//
// put, iteration k (data travels into the neighbours' halos):
//   V(interior) = dom
//   for d: wait consumed[d] >= k          (neighbour(d) read my last halo data)
//          put border(d) -> neighbour(d).halo(opp d); signal ready[opp d] = k+1
//   filter inner                           (overlaps the puts in flight)
//   wait ready[d] >= k+1 for all d; acquire; filter border
//   for d: signal neighbour(d).consumed[opp d] = k+1
// get, get0, get1, iteration k (data is fetched from the neighbours' V):
//   wait consumed[d] >= k for all d        (no neighbour still reads my V)
//   V(interior) = dom; publish; for d: signal neighbour(d).ready[opp d] = k+1
//   get:  for d: wait ready[d] >= k+1; get halo(d) in bulk; complete;
//         signal consumed; filter all
//   get0: filter inner; then per d: wait ready, fine-grain gets (a call per
//         row of the block); complete; signal consumed; filter border
//   get1: even cx + cy as get0; odd: the gets and the border first, then the
//         inner region
// A halo is never read while a put into it may be in flight (its ready flag
// was seen, and the writer waits for consumed before the next put), and V's
// interior is never overwritten while a neighbour may be getting it (consumed
// from all 8 neighbours is awaited first): legal under the MPI-3 memory model
// (unified or separate, with MPI_Win_sync) and the OpenSHMEM 1.4 ordering
// rules (shmem_fence before the flag, shmem_quiet before publishing).
//
// Calls per rank and iteration: put and get 8 bulk data calls + 16 flag
// writes; get0/get1 2n + 6r fine-grain gets + 16 flag writes.
#include <thread>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/timer.hpp"
#include "stencil2d_impl.hpp"

namespace asyncsolve::kernels::detail {
namespace {

using OneSidedVariant = Stencil2dVariant;  // put, get, get0 or get1
constexpr int ready_slot = 0;
constexpr int consumed_slot = stencil2d_directions;

class Stencil2dOneSided final : public Stencil2dBlock {
 public:
  Stencil2dOneSided(OneSidedVariant variant, std::unique_ptr<OneSidedSpace> space,
                    const Stencil2dGrid& grid, const Stencil2dSpec& spec)
      : Stencil2dBlock(grid, spec), variant_(variant), space_(std::move(space)) {
    v_ = space_->data();
  }

  std::string transport() const override { return space_->transport(); }
  std::string variant() const override {
    return std::string(core::enum_name(stencil2d_variant_table, variant_));
  }
  long messages_per_iteration() const override {
    if (variant_ == OneSidedVariant::put || variant_ == OneSidedVariant::get) return 8;
    return 2L * layout_.n + 6L * layout_.r;
  }

  Stencil2dTiming run(long iterations) override {
    Stencil2dTiming t;
    t.iterations = iterations;
    filter_s_ = 0.0;
    const double t0 = core::now_s();
    for (long it = 0; it < iterations; ++it) {
      const long long k = step_++;
      if (variant_ == OneSidedVariant::put) {
        iterate_put(k);
      } else {
        iterate_get(k);
      }
    }
    t.total_s = core::now_s() - t0;
    t.filter_s = filter_s_;
    return t;
  }

  void free() override { space_->free(); }

 private:
  /// Waits until this rank's counter `slot` reaches `value` (reading it
  /// drives progress; the yield lets oversubscribed ranks run).
  void wait_for(int slot, long long value) {
    while (space_->read_flag(slot) < value) std::this_thread::yield();
  }

  void signal_all(int base_slot, long long value) {
    for (int d = 0; d < stencil2d_directions; ++d) {
      space_->signal(grid_.neighbour[d], base_slot + dir2d_opposite(d), value);
    }
  }

  void iterate_put(long long k) {
    copy_in();  // V(interior) = dom; the puts read it
    for (int d = 0; d < stencil2d_directions; ++d) {
      wait_for(consumed_slot + d, k);
      space_->put_block(grid_.neighbour[d], d);
      space_->signal(grid_.neighbour[d], ready_slot + dir2d_opposite(d), k + 1);
    }
    filter_inner();
    for (int d = 0; d < stencil2d_directions; ++d) wait_for(ready_slot + d, k + 1);
    space_->acquire_local();
    halo_complete();
    filter_border();
    space_->publish_local();  // the halo loads are done before the neighbours may write it
    signal_all(consumed_slot, k + 1);
  }

  void fetch_halo(long long k, bool fine) {
    for (int d = 0; d < stencil2d_directions; ++d) {
      wait_for(ready_slot + d, k + 1);
      space_->get_block(grid_.neighbour[d], d, fine);
    }
    space_->complete_all();
    signal_all(consumed_slot, k + 1);
    halo_complete();
  }

  void iterate_get(long long k) {
    for (int d = 0; d < stencil2d_directions; ++d) wait_for(consumed_slot + d, k);
    space_->acquire_local();
    copy_in();  // V(interior) = dom; the neighbours get from it
    space_->publish_local();
    signal_all(ready_slot, k + 1);
    switch (variant_) {
      case OneSidedVariant::get:
        fetch_halo(k, false);
        filter_all();
        break;
      case OneSidedVariant::get1:
        if ((grid_.cx + grid_.cy) % 2 == 1) {
          fetch_halo(k, true);
          filter_border();
          filter_inner();
          break;
        }
        [[fallthrough]];
      case OneSidedVariant::get0:
        filter_inner();
        fetch_halo(k, true);
        filter_border();
        break;
      case OneSidedVariant::put:
      case OneSidedVariant::trivial:  // two-sided: not made here (make_stencil2d_onesided)
      case OneSidedVariant::sendrecv:
      case OneSidedVariant::halo:
        break;
    }
  }

  OneSidedVariant variant_;
  std::unique_ptr<OneSidedSpace> space_;
  long long step_ = 0;
};

}  // namespace

std::unique_ptr<Stencil2d> make_stencil2d_onesided(Stencil2dVariant variant,
                                                   std::unique_ptr<OneSidedSpace> space,
                                                   const Stencil2dGrid& grid,
                                                   const Stencil2dSpec& spec) {
  if (is_stencil2d_variant(Stencil2dTransport::mpi, variant)) {
    space->free();
    throw std::invalid_argument(fmt::format("stencil2d: no one-sided variant '{}'",
                                            core::enum_name(stencil2d_variant_table, variant)));
  }
  return std::make_unique<Stencil2dOneSided>(variant, std::move(space), grid, spec);
}

}  // namespace asyncsolve::kernels::detail
