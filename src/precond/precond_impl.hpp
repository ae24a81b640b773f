#pragma once
/// The preconditioners' constructors (internal to the precond layer), one
/// file each: preconditioner.cpp (none, jacobi), chebyshev.cpp,
/// boomeramg.cpp (or no_boomeramg.cpp in a build without hypre), ilu0.cpp.
#include <memory>

#include "asyncsolve/precond/preconditioner.hpp"

namespace asyncsolve::precond::detail {

/// Collective: Chebyshev of settings.degree on D^-1 A, bounds from Lanczos.
std::unique_ptr<Preconditioner> make_chebyshev(const PcSettings& settings, PcOperator& op);

/// Collective: hypre's BoomerAMG on op's rows.
std::unique_ptr<Preconditioner> make_boomeramg(const PcSettings& settings, PcOperator& op);

/// Collective (the stencils' rows, and the verdict on a zero pivot):
/// block-Jacobi ILU(0) on each rank's rows (ilu0.cpp).
std::unique_ptr<Preconditioner> make_ilu0(const PcSettings& settings, PcOperator& op);

}  // namespace asyncsolve::precond::detail
