#pragma once
// Internal to the 7-point stencil: what stencil7_choice.cpp (the variant
// chosen per field shape) needs from stencil7.cpp (the variants).
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/stencil7.hpp"

namespace asyncsolve::ops::stencil7_detail {

/// The fused sweep on planes [k_begin, k_end) with `kernel` (not automatic):
/// jacobi_sweep_residual_planes with that variant.
double sweep_residual_with(Stencil7Kernel kernel, const grid::Field& u, grid::Field& u_new,
                           int k_begin, int k_end) noexcept;

/// The variant used where none is set and measuring fails (no memory for
/// the scratch fields): avx512 where built, else stream where built, else
/// portable.
[[nodiscard]] Stencil7Kernel default_kernel() noexcept;

/// Whether this build has `kernel` (automatic and portable: always).
[[nodiscard]] bool kernel_built(Stencil7Kernel kernel) noexcept;

}  // namespace asyncsolve::ops::stencil7_detail
