// The MPI-3 RMA space of the one-sided Stencil2D variants
// (stencil2d_onesided.cpp): one window over the caller's communicator
// (MPI_Win_allocate, disp_unit 1), each rank's part holding V
// then 16 int64 counters, one passive-target epoch for the window's life
// (MPI_Win_lock_all with MPI_MODE_NOCHECK at creation, MPI_Win_unlock_all in
// free()).
//
// Data: MPI_Put / MPI_Get with committed subarray types of V (bulk) or one
// MPI_DOUBLE run per row (fine). Counters: written with
// MPI_Accumulate(MPI_REPLACE) after MPI_Win_flush(target) completed the data
// puts to that target, then flushed; read with MPI_Fetch_and_op(MPI_NO_OP) on
// oneself plus MPI_Win_flush: accumulates on one location are atomic with
// respect to each other. MPI_Win_sync separates local loads and stores of V
// from remote accesses announced by a counter (publish / acquire).
//
// Progress: every counter read also calls MPI_Iprobe on a private duplicate
// of the communicator on which nothing is ever sent, so components that move
// passive-target operations only inside MPI calls at the target (osc/ucx,
// osc/pt2pt) make progress while a rank waits (as in channel_rma.cpp).
#include <mpi.h>

#include <array>
#include <cstdint>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/window.hpp"
#include "stencil2d_impl.hpp"

namespace asyncsolve::kernels::detail {
namespace {

using par::check_mpi;

constexpr int flag_slots = 2 * stencil2d_directions;

class RmaSpace final : public OneSidedSpace {
 public:
  RmaSpace(const par::Comm& comm, const Stencil2dLayout& layout) : layout_(layout) {
    send_.fill(MPI_DATATYPE_NULL);
    recv_.fill(MPI_DATATYPE_NULL);
    check_mpi(MPI_Comm_rank(comm.get(), &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_dup(comm.get(), &quiet_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(quiet_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    flags_disp_ = static_cast<MPI_Aint>(layout_.doubles()) * 8;
    const MPI_Aint bytes = flags_disp_ + MPI_Aint{flag_slots} * 8;
    void* base = nullptr;
    check_mpi(MPI_Win_allocate(par::padded_window_bytes(bytes), 1, MPI_INFO_NULL, comm.get(), &base,
                               &win_),
              "MPI_Win_allocate");
    check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
    v_ = static_cast<double*>(base);
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all");
    for (long i = 0; i < layout_.doubles(); ++i) v_[i] = 0.0;
    auto* flags = reinterpret_cast<std::int64_t*>(static_cast<unsigned char*>(base) + flags_disp_);
    for (int s = 0; s < flag_slots; ++s) flags[s] = 0;
    for (int d = 0; d < stencil2d_directions; ++d) {
      send_[d] = rect_type(layout_.border(d));
      recv_[d] = rect_type(layout_.halo(d));
    }
    // Local stores reach the public copy, and nobody accesses a peer's
    // window before the peer initialised it.
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    check_mpi(MPI_Barrier(comm.get()), "MPI_Barrier");
  }
  // free() is collective and must be called explicitly by every rank; the
  // destructor frees nothing collectively (it may run while unwinding on
  // one rank only), so an unfreed window is left to MPI_Finalize/abort.
  ~RmaSpace() override = default;

  std::string transport() const override { return "rma"; }
  double* data() noexcept override { return v_; }

  void put_block(int target, int d) override {
    check_mpi(MPI_Put(v_, 1, send_[d], target, 0, 1, recv_[dir2d_opposite(d)], win_), "MPI_Put");
  }

  void get_block(int target, int d, bool fine) override {
    if (!fine) {
      check_mpi(MPI_Get(v_, 1, recv_[d], target, 0, 1, send_[dir2d_opposite(d)], win_), "MPI_Get");
      return;
    }
    const Rect2d h = layout_.halo(d);
    const Rect2d b = layout_.border(dir2d_opposite(d));
    for (int row = 0; row < h.h; ++row) {
      const MPI_Aint disp = static_cast<MPI_Aint>(layout_.index(b.x0, b.y0 + row)) * 8;
      check_mpi(MPI_Get(v_ + layout_.index(h.x0, h.y0 + row), h.w, MPI_DOUBLE, target, disp, h.w,
                        MPI_DOUBLE, win_),
                "MPI_Get");
    }
  }

  void complete_all() override { check_mpi(MPI_Win_flush_all(win_), "MPI_Win_flush_all"); }

  void signal(int target, int slot, long long value) override {
    const std::int64_t v = value;
    check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");  // the data first
    check_mpi(
        MPI_Accumulate(&v, 1, MPI_INT64_T, target, flags_disp_ + static_cast<MPI_Aint>(slot) * 8, 1,
                       MPI_INT64_T, MPI_REPLACE, win_),
        "MPI_Accumulate");
    check_mpi(MPI_Win_flush(target, win_), "MPI_Win_flush");
  }

  long long read_flag(int slot) override {
    std::int64_t ignored = 0;
    std::int64_t value = 0;
    check_mpi(MPI_Fetch_and_op(&ignored, &value, MPI_INT64_T, rank_,
                               flags_disp_ + static_cast<MPI_Aint>(slot) * 8, MPI_NO_OP, win_),
              "MPI_Fetch_and_op");
    check_mpi(MPI_Win_flush(rank_, win_), "MPI_Win_flush");
    int flag = 0;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet_, &flag, MPI_STATUS_IGNORE),
              "MPI_Iprobe");
    return value;
  }

  void publish_local() override { check_mpi(MPI_Win_sync(win_), "MPI_Win_sync"); }
  void acquire_local() override { check_mpi(MPI_Win_sync(win_), "MPI_Win_sync"); }

  void free() override {
    if (win_ == MPI_WIN_NULL) return;
    check_mpi(MPI_Win_unlock_all(win_), "MPI_Win_unlock_all");
    check_mpi(MPI_Win_free(&win_), "MPI_Win_free");
    v_ = nullptr;
    for (auto* set : {&send_, &recv_})
      for (MPI_Datatype& t : *set)
        if (t != MPI_DATATYPE_NULL) check_mpi(MPI_Type_free(&t), "MPI_Type_free");
    check_mpi(MPI_Comm_free(&quiet_), "MPI_Comm_free");
  }

 private:
  MPI_Datatype rect_type(const Rect2d& rect) const {
    const int sizes[2] = {static_cast<int>(layout_.stride), static_cast<int>(layout_.stride)};
    const int sub[2] = {rect.h, rect.w};
    const int starts[2] = {rect.y0 + layout_.r, rect.x0 + layout_.r};
    MPI_Datatype t = MPI_DATATYPE_NULL;
    check_mpi(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t),
              "MPI_Type_create_subarray");
    check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
    return t;
  }

  Stencil2dLayout layout_;
  int rank_ = 0;
  MPI_Comm quiet_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  MPI_Aint flags_disp_ = 0;
  double* v_ = nullptr;
  std::array<MPI_Datatype, stencil2d_directions> send_{}, recv_{};
};

}  // namespace

std::unique_ptr<OneSidedSpace> make_rma_space(const par::Comm& comm,
                                              const Stencil2dLayout& layout) {
  return std::make_unique<RmaSpace>(comm, layout);
}

}  // namespace asyncsolve::kernels::detail
