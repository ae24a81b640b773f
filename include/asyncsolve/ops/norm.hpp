#pragma once
/// The pieces of norms that neither underflow to 0 nor overflow to
/// infinity: the largest magnitude, then the sum of squares of the values
/// scaled by a power of two near it (exact scaling, each square at most 4).
/// Plain loops: they run once per solve (||b||, the true residual), not in
/// the iteration.
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::ops {

/// max |x| over the interior of `x`.
double max_abs(const grid::Field& x) noexcept;

/// Sum over the interior of (x 2^-exponent)^2.
double sum_sq_scaled(const grid::Field& x, int exponent) noexcept;

/// max |r| of Jacobi's 7-point residual r = (sum of the six neighbours) - 6 u
/// (b in the boundary halos) on interior planes [k_begin, k_end).
double jacobi_residual_max_abs(const grid::Field& u, int k_begin, int k_end) noexcept;

/// Sum of (r 2^-exponent)^2 of the same residual on planes [k_begin, k_end).
double jacobi_residual_sum_sq_scaled(const grid::Field& u, int exponent, int k_begin,
                                     int k_end) noexcept;

}  // namespace asyncsolve::ops
