#pragma once
/// Kernels of the 7-point Laplacian on one rank's block.
///
/// A = 7-point stencil with 6 on the diagonal and -1 for each neighbour; the
/// halo of `u` holds neighbours' values and, on the physical boundary, the
/// Dirichlet data, so b - A u at an interior point is (sum of the six
/// neighbours) - 6 u. Each fast kernel has a plain `_ref` twin that the tests
/// compare it with.
#include <array>
#include <string_view>
#include <vector>

#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::ops {

/// True when this build has the AVX-512 kernels, false when its fast kernels
/// are the portable loops only (no AVX-512 on the build machine, or a
/// compiler that CMakeLists.txt found miscompiling it).
[[nodiscard]] bool stencil7_uses_avx512() noexcept;

/// The variants of the fast kernels (jacobi_sweep, jacobi_sweep_residual,
/// residual_norm_sq and their _planes and _box forms). Every variant writes
/// the bits of jacobi_sweep_ref; portable and stream also sum the residual
/// in the same order (the same bits), avx512 in its own (the same value to
/// rounding). Which one is fastest depends on the machine, not only on its
/// instruction set: see docs/PERFORMANCE.md.
enum class Stencil7Kernel {
  automatic,  ///< the fastest, measured once per field shape (stencil7_kernel)
  portable,   ///< loops the compiler vectorises; stores through the cache
  stream,     ///< the same loops, streaming stores to u_new (builds with AVX)
  avx512,     ///< the AVX-512 line walk, streaming past the cache (AVX-512 builds)
};

/// The variants' names as --kernel takes them, in Stencil7Kernel's order.
inline constexpr std::array<std::string_view, 4> stencil7_kernel_names{"auto", "portable", "stream",
                                                                       "avx512"};

/// stencil7_kernel_names' entry for `kernel`.
[[nodiscard]] std::string_view stencil7_kernel_name(Stencil7Kernel kernel) noexcept;
/// The variants this build has, automatic first.
[[nodiscard]] std::vector<Stencil7Kernel> stencil7_kernels();
/// Makes the fast kernels use `kernel` from now on in this process
/// (automatic, the default: measure). Throws std::invalid_argument for a
/// variant this build lacks. Not to be called while kernels run.
void stencil7_set_kernel(Stencil7Kernel kernel);
/// The variant the fast kernels use for fields of u's shape: the one set by
/// stencil7_set_kernel, or under automatic the fastest for that shape,
/// measured at the first call for it in this process (each variant's fused
/// sweep on two scratch fields of u's shape, a few calls interleaved, the
/// least time wins; tens of milliseconds for 200^3) and kept for the
/// process. Thread-safe; not collective (ranks measure on their own).
[[nodiscard]] Stencil7Kernel stencil7_kernel(const grid::Field& u) noexcept;
/// The variants the fast kernels have run in this process so far (none
/// before the first call), in the order of Stencil7Kernel.
[[nodiscard]] std::vector<Stencil7Kernel> stencil7_kernels_used();

/// One Jacobi sweep over the interior: u_new = (sum of the six neighbours of u) / 6.
/// Reads u (halo included), writes the interior of u_new. u_new's x-face
/// halo cells (i < 0 and i >= nx of interior rows) may also be given u's
/// values there: the avx512 pass (for fields out of cache) and the stream
/// pass run through the rows of a plane as one line, halo cells included. Every other halo cell
/// of u_new is left as it is. 16 bytes of memory traffic per point (one
/// read, one write) when the layer condition holds.
void jacobi_sweep(const grid::Field& u, grid::Field& u_new) noexcept;
void jacobi_sweep_ref(const grid::Field& u, grid::Field& u_new) noexcept;
/// The sweep restricted to planes k_begin <= k < k_end: a sweep in pieces,
/// so that communication can be progressed between them (--progress poll:K).
void jacobi_sweep_planes(const grid::Field& u, grid::Field& u_new, int k_begin, int k_end) noexcept;
/// The sweep restricted to the points of `box` (inside the interior): a
/// thread's share of a hybrid sweep (--hybrid). Every point is computed with
/// the same arithmetic as jacobi_sweep, so any tiling gives the same bits.
/// A box of whole planes goes to jacobi_sweep_planes.
void jacobi_sweep_box(const grid::Field& u, grid::Field& u_new, const grid::Box& box) noexcept;

/// The sweep fused with the residual (the residual for free): writes u_new =
/// (sum of the six neighbours of u) / 6 like jacobi_sweep (and may give
/// u_new's x-face halo cells u's values, as it does) and returns this
/// block's ||b - A u||_2^2 of the iterate it READ (b - A u = sum - 6 u =
/// D (u_new - u) on every interior point), in the same pass: 16 bytes of
/// memory traffic per point, like the sweep alone. The field written has the
/// bits of jacobi_sweep_ref, and the value returned the bits of
/// residual_norm_sq(u) (the same summation order), so a solver may check its
/// residual at any sweep without a second pass. The `_ref` twin has those of
/// jacobi_sweep_ref and residual_norm_sq_ref.
double jacobi_sweep_residual(const grid::Field& u, grid::Field& u_new) noexcept;
double jacobi_sweep_residual_ref(const grid::Field& u, grid::Field& u_new) noexcept;
/// The fused sweep on planes k_begin <= k < k_end; returns the residual of
/// those planes with residual_norm_sq_planes's bits.
double jacobi_sweep_residual_planes(const grid::Field& u, grid::Field& u_new, int k_begin,
                                    int k_end) noexcept;
/// The fused sweep on the points of `box` (a thread's share of a hybrid
/// sweep): the field as jacobi_sweep_box writes it; the residual of the box
/// (whole planes: with residual_norm_sq_planes's bits; otherwise summed in
/// another order).
double jacobi_sweep_residual_box(const grid::Field& u, grid::Field& u_new,
                                 const grid::Box& box) noexcept;

/// Local part of ||b - A u||_2^2 over the interior (halo must be current).
double residual_norm_sq(const grid::Field& u) noexcept;
double residual_norm_sq_ref(const grid::Field& u) noexcept;
/// The residual restricted to planes k_begin <= k < k_end (a thread's slab,
/// or a piece of one); the same arithmetic as residual_norm_sq, summed over
/// fewer rows.
double residual_norm_sq_planes(const grid::Field& u, int k_begin, int k_end) noexcept;

/// Copies the interior of `src` into `dst` (paper 000's copy loop).
void copy_interior(const grid::Field& src, grid::Field& dst) noexcept;

}  // namespace asyncsolve::ops
