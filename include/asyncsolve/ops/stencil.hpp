#pragma once
/// Matrix-free operators of the Krylov solvers, split so that the halo
/// exchange can be in flight while most of the mat-vec is computed (paper 001
/// §3.4, Listing 3).
///
/// The operators are the 7-point Laplacian (6 on the diagonal, -1 for each
/// face neighbour; paper 001) and the 27-point Laplacian as hypre's
/// `ij -laplacian -27pt` builds it (26 on the diagonal, -1 for each of the 26
/// neighbours; paper 003), both optionally shifted by a multiple of the
/// identity. Dirichlet points are eliminated: the halo of the input field must
/// hold zeros on the physical boundary and the neighbours' values elsewhere.
#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::ops {

enum class Stencil { seven_point, twenty_seven_point };

/// Number of points of the stencil: 7 or 27.
constexpr int points(Stencil s) noexcept { return s == Stencil::seven_point ? 7 : 27; }

/// A = (stencil) + shift * I. Cheap to copy.
struct StencilOperator {
  Stencil stencil = Stencil::seven_point;
  double shift = 0.0;
  /// The (constant) diagonal of A.
  double diagonal() const noexcept {
    return (stencil == Stencil::seven_point ? 6.0 : 26.0) + shift;
  }
};

/// q = A p on the points of `box` (inside the interior of both fields, same
/// shape); returns the local sum over `box` of p * q, the fused inner product
/// that CG needs next (paper 001 §3.3 fuses vector work the same way). Reads
/// p on the box and one layer around it.
double apply(const StencilOperator& a, const grid::Field& p, grid::Field& q,
             const grid::Box& box) noexcept;
/// The same with plain loops (the tests' reference). Sums in a fixed order.
double apply_ref(const StencilOperator& a, const grid::Field& p, grid::Field& q,
                 const grid::Box& box) noexcept;

}  // namespace asyncsolve::ops
