#pragma once
// Internal pieces of the Stencil2D variants (include/asyncsolve/kernels/stencil2d.hpp):
// the padded block layout, the filter phases every variant shares, and the
// interface of the one-sided spaces (one implementation file per transport:
// stencil2d_rma.cpp, stencil2d_shmem.cpp).
#include <memory>
#include <string>
#include <string_view>

#include "asyncsolve/kernels/filter2d.hpp"
#include "asyncsolve/kernels/stencil2d.hpp"

namespace asyncsolve::kernels::detail {

/// A rectangle of block coordinates: x0 <= x < x0 + w, y0 <= y < y0 + h
/// ((0, 0) is the first interior point; halos have negative or >= n
/// coordinates).
struct Rect2d {
  int x0 = 0, y0 = 0, w = 0, h = 0;
};

/// The padded block V: (n + 2r) x (n + 2r) doubles, row-major in y.
struct Stencil2dLayout {
  int n = 0;
  int r = 0;
  long stride = 0;  ///< n + 2r

  Stencil2dLayout(int n_, int r_) : n(n_), r(r_), stride(n_ + 2L * r_) {}
  long doubles() const noexcept { return stride * stride; }
  /// Offset in doubles of point (x, y) from the start of V.
  long index(int x, int y) const noexcept { return (y + r) * stride + (x + r); }
  /// The points of this block that the neighbour in direction d needs.
  Rect2d border(int d) const noexcept;
  /// Where the data from the neighbour in direction d lands.
  Rect2d halo(int d) const noexcept;
};

/// What every variant shares: V (storage owned by the derived class), the
/// filter phases (timed) and the test hook.
class Stencil2dBlock : public Stencil2d {
 protected:
  Stencil2dBlock(const Stencil2dGrid& grid, const Stencil2dSpec& spec);

  /// V(interior) = dom.
  void copy_in() noexcept;
  /// dom = filter(V) over the inner region (reads no halo), the border
  /// (the rest), or all of it. Time spent is added to filter_s_.
  void filter_inner() noexcept;
  void filter_border() noexcept;
  void filter_all() noexcept;
  /// Called by every variant once the halo of this iteration is complete
  /// and before any filter reads it: the corrupt_corner test hook.
  void halo_complete() noexcept;

  Stencil2dLayout layout_;
  kernels::Filter2d filter_;
  double* v_ = nullptr;  ///< V, set by the derived class
  double filter_s_ = 0.0;

 private:
  void filter_rect(int x0, int x1, int y0, int y1) noexcept;
};

/// Memory that remote ranks can put into and get from, with flags: the
/// transport under the one-sided variants. Slots 0..15 are 64-bit counters
/// in the same memory, written by exactly one remote rank each, read
/// atomically by the owner.
class OneSidedSpace {
 public:
  virtual ~OneSidedSpace() = default;
  virtual std::string transport() const = 0;
  /// Local V (layout().doubles() doubles).
  virtual double* data() noexcept = 0;
  /// Issues the put of this rank's border(d) into `target`'s halo(opposite(d)).
  virtual void put_block(int target, int d) = 0;
  /// Issues the get of `target`'s border(opposite(d)) into this rank's
  /// halo(d): in bulk (one call, a strided type) or fine (one call per row).
  virtual void get_block(int target, int d, bool fine) = 0;
  /// Completes every put and get issued so far, at origin and target.
  virtual void complete_all() = 0;
  /// Sets counter `slot` of `target` to `value`, after every put issued to
  /// `target` is delivered there.
  virtual void signal(int target, int slot, long long value) = 0;
  /// This rank's counter `slot`, read atomically; drives progress.
  virtual long long read_flag(int slot) = 0;
  /// Local stores to V become visible to remote gets (before a signal).
  virtual void publish_local() = 0;
  /// Remote puts seen through a counter become visible to local loads.
  virtual void acquire_local() = 0;
  /// Collective: frees the memory. Idempotent.
  virtual void free() = 0;
};

std::unique_ptr<OneSidedSpace> make_rma_space(const par::Comm& comm, const Stencil2dLayout& layout);
/// Throws core::RuntimeFailure when OpenSHMEM is not built or not started.
std::unique_ptr<OneSidedSpace> make_shmem_space(const par::Comm& comm,
                                                const Stencil2dLayout& layout);

/// A two-sided variant (trivial, sendrecv, halo).
std::unique_ptr<Stencil2d> make_stencil2d_mpi(Stencil2dVariant variant, const par::Comm& comm,
                                              const Stencil2dGrid& grid, const Stencil2dSpec& spec);
/// A one-sided variant (put, get, get0, get1) over `space`.
std::unique_ptr<Stencil2d> make_stencil2d_onesided(Stencil2dVariant variant,
                                                   std::unique_ptr<OneSidedSpace> space,
                                                   const Stencil2dGrid& grid,
                                                   const Stencil2dSpec& spec);

}  // namespace asyncsolve::kernels::detail
