#pragma once
/// Kernels of the 7-point Laplacian on one rank's block.
///
/// A = 7-point stencil with 6 on the diagonal and -1 for each neighbour; the
/// halo of `u` holds neighbours' values and, on the physical boundary, the
/// Dirichlet data, so b - A u at an interior point is (sum of the six
/// neighbours) - 6 u. Each fast kernel has a plain `_ref` twin that the tests
/// compare it with.
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::ops {

/// True when this build's fast kernels are the AVX-512 ones, false when they
/// are the portable loops (no AVX-512 on the build machine, or a compiler
/// that CMakeLists.txt found miscompiling it).
[[nodiscard]] bool stencil7_uses_avx512() noexcept;

/// One Jacobi sweep over the interior: u_new = (sum of the six neighbours of u) / 6.
/// Reads u (halo included), writes the interior of u_new. u_new's x-face
/// halo cells (i < 0 and i >= nx of interior rows) may also be given u's
/// values there: for fields out of cache the AVX-512 pass runs through the
/// rows of a plane as one line, halo cells included. Every other halo cell
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
