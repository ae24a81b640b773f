#pragma once
/// Numerics that cannot lie, shared by every solver: norms that neither
/// underflow to 0 nor overflow to infinity (for ||b|| and the true
/// residual), the breakdown rule (a residual that is not finite stops the
/// solve at once, reason "breakdown"), and the convergence rule (a solve is
/// converged only when its true residual met the tolerance).
#include <cmath>
#include <cstddef>
#include <functional>
#include <limits>
#include <string>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/solvers/result.hpp"

namespace asyncsolve::solvers {

/// The Euclidean norm of values spread over ranks without overflow or
/// underflow. First the plain sum of squares (`local_sum_sq`, reduced): when
/// it is finite and far above the underflow range it is the answer, bit for
/// bit what a solver's own estimate from the same kernel gives. Otherwise
/// (overflow to infinity, or a sum so small that squares may have underflowed)
/// M = the largest |x| over the ranks, 2^e the power of two near it, then
/// 2^e sqrt(sum over the ranks of (x 2^-e)^2): `local_max_abs()` is this
/// rank's largest |x| and `local_sum_sq_scaled(e)` its sum of (x 2^-e)^2.
/// Collective over `reduction` (one reduction, or three, the same on every
/// rank since the branch depends on reduced values only); a null
/// `reduction` takes this rank's values alone. A NaN value gives NaN.
double scaled_norm(collectives::Allreduce* reduction, double local_sum_sq,
                   const std::function<double()>& local_max_abs,
                   const std::function<double(int exponent)>& local_sum_sq_scaled);

/// ||x||_2 over the interiors of every rank's `x`, scaled. Collective (see
/// scaled_norm; null: this rank's field alone).
double field_norm(const grid::Field& x, collectives::Allreduce* reduction);

/// ||b - A u||_2 of Jacobi's 7-point problem (b in the boundary halos, the
/// halos of `u` current), scaled. Collective (see scaled_norm).
double jacobi_residual_norm(const grid::Field& u, collectives::Allreduce* reduction);

/// |value - exact|, a term of a maximum error: NaN counts as +infinity, so
/// that an iterate that is not finite reports an unbounded error
/// (std::max and MPI_MAX would drop a NaN and report the finite rest).
inline double error_term(double value, double exact) noexcept {
  const double d = std::abs(value - exact);
  return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
}

/// True when a residual or a reduced sum of squares is NaN or infinite: the
/// iteration cannot go on and must stop at once with reason "breakdown".
bool breaks_down(double residual) noexcept;

/// Marks `result` as stopped at `iteration` because its residual is
/// `residual` (not finite): converged false, reason "breakdown" and a
/// detail; or reason "diverged" when a finite residual was checked before
/// (result.best_residual): Jacobi's iterate outgrew the double between two
/// checks, as a diverging asynchronous iteration does when a round spans
/// hundreds of sweeps.
void set_breakdown(SolveResult& result, double residual, long iteration);

/// The divergence rule of Jacobi (synchronous and asynchronous): a
/// residual that has grown to this many times the smallest one the solve
/// reached means the iteration diverges (a spectral radius of D^-1 (A - D)
/// of 1 or more), not a transient: the solve stops at once, long before
/// the residual overflows or --max-iters runs out.
inline constexpr double divergence_factor = 1e6;

/// Below this relative residual (about the square root of the double's
/// epsilon) no growth counts as divergence: at the roundoff floor the
/// residual an asynchronous round sees wanders by many orders of magnitude
/// (seen: a best of 1e-22 against a later 1e-16, 3 ranks under MPICH), and
/// an iteration that diverges passes this value soon after anyway.
inline constexpr double divergence_floor = 1.5e-8;

/// The floor of asynchronous Jacobi's rule: ten times ||b||. Its estimate
/// is an upper bound (a rank that does not sweep adds each halo change to
/// its last measured residual), which grows with the news it takes while
/// the true residual falls: seen, a bound of 0.97 after a best of 1.5e-9,
/// with a true residual of 9.6e-7 (a rank waiting at max_iters under load).
/// The sum of the halo changes of a converging iteration stays of the order
/// of the first error, and a diverging one passes ten times ||b|| soon.
inline constexpr double async_divergence_floor = 10.0;

/// The divergence rule of the Krylov methods: a residual that has grown to
/// this many times the first one. Far above Jacobi's factor, because
/// BiCGStab's residual may rise a long way before it falls: on the upwind
/// convection-diffusion at Peclet 1000 (tests/mpi/test_nonsymmetric.cpp) it
/// passes 1.5e6 times the first at iteration 14 and then converges.
inline constexpr double krylov_divergence_factor = 1e10;

/// Records the checked `residual` of `iteration` in result.best_residual
/// (and best_iteration) when it is the smallest so far. True, with
/// `result` marked diverged (converged false, reason "diverged", a detail
/// naming both residuals and iterations), when it is divergence_factor
/// times the smallest or more and above `floor`. Local; the same on every
/// rank for a reduced residual.
bool check_divergence(SolveResult& result, double residual, long iteration,
                      double floor = divergence_floor);

/// How many checks in a row, after the first, must find the residual
/// standing still for check_stagnation to stop a synchronous stationary
/// iteration.
inline constexpr std::size_t stagnation_checks = 20;

/// The fewest iterations those checks must span (more checks are looked at
/// where they are closer together), so that the verdict does not hang on
/// --check-every.
inline constexpr long stagnation_iterations = 1000;

/// The relative change of the residual per iteration below which it stands
/// still: at that rate a reduction by 10 takes more than 10^9 iterations.
/// A stationary iteration that converges at all moves faster (Jacobi on a
/// 7-point Laplacian of 10^4 points a side: about 5 10^-8).
inline constexpr double stagnation_rate = 1e-9;

/// The relative residual below which no stagnation is declared: sqrt of
/// the machine epsilon. Lower, a residual that no longer changes is the
/// rounding floor of a solve that has converged as far as double precision
/// takes it (rounding_checks decides there).
inline constexpr double stagnation_floor = 1.4901161193847656e-08;

/// A Krylov method's recursively updated residual estimate below which it
/// no longer says anything of the true residual: epsilon squared. The true
/// residual of a solve in double precision stays near epsilon (or is 0,
/// exactly), while the recurrence goes on shrinking its estimate; a --tol
/// below this point is chased until --max-iters or an underflow.
inline constexpr double krylov_estimate_floor = 4.930380657631324e-32;

/// Below stagnation_floor: how many checks in a row without a new smallest
/// residual (result.best_residual) make the residual the rounding level's,
/// for check_stagnation. An iteration that still converges finds a new
/// smallest residual at nearly every check.
inline constexpr std::size_t rounding_checks = 100;

/// True, with `result` marked as a breakdown (reason "breakdown", a detail
/// saying so), when the residuals of the last stagnation_checks + 1 checks
/// of result.history (more, to span `min_span` iterations), above
/// stagnation_floor, all lie within a relative band of stagnation_rate
/// times the iterations they span (the same residual bit for bit among
/// them): a synchronous stationary iteration at a fixed point that is not
/// the solution (its update rounds to nothing, the subdomain solves return
/// the iterate they were given, or an inconsistent system's residual
/// settles on its part outside the range of A), which would otherwise run
/// to --max-iters or --max-time. An iteration proven to converge (Jacobi
/// with rho(|D^-1 (A - D)|) < 1) has the solution as its only fixed point:
/// its residual can stand still while information crosses the matrix
/// graph, an edge an iteration (a non-normal iteration: upwind transport),
/// so its caller gives a `min_span` of the rows, at least. Or,
/// below stagnation_floor, when rounding_checks checks in a row found no
/// residual below result.best_residual (which check_divergence keeps): a
/// --tol below the rounding level double precision reaches. Local; the same
/// on every rank for a reduced residual.
bool check_stagnation(SolveResult& result, long iteration, long min_span = stagnation_iterations);

/// What a residual standing still above stagnation_floor can mean and what
/// to try: the end of check_stagnation's detail and of the asynchronous
/// iterations' (AsyncStandstill in the solvers' sources).
inline constexpr const char* stagnation_causes =
    ": the iteration is at a fixed point that is not the solution, or stands still longer "
    "than that (a singular or inconsistent system, an update that rounds to nothing, or a "
    "non-normal iteration whose residual waits for information to cross the domain: try "
    "--scale unit-diagonal, or a Krylov method)";

/// The end of the rounding level's detail (check_stagnation below
/// stagnation_floor, and the asynchronous iterations').
inline constexpr const char* rounding_level_causes =
    ": it is at the rounding level of double precision, which --tol is below (expected a "
    "tolerance the arithmetic can reach, e.g. 1e-12)";

/// Marks `result` diverged: converged false, reason "diverged", a detail
/// saying the residual grew from `from` (at `from_iteration`) to `to` (at
/// `iteration`), more than `factor` times. Shared by Jacobi's rule and the
/// Krylov methods' (KrylovContext::stop).
void mark_diverged(SolveResult& result, double from, long from_iteration, double to, long iteration,
                   double factor);

/// The convergence rule, after a solve has measured its true residual:
/// converged only when true_residual < tol. A solve whose stop test was met
/// but whose true residual was not becomes not converged with reason
/// "unconfirmed" (and a detail); a true residual that is not finite makes
/// the reason "breakdown", unless the solve had already stopped as
/// "diverged" (an iterate that outgrew the double).
void confirm_convergence(SolveResult& result, double tol);

/// After a Krylov breakdown (p^T A p <= 0, a zero inner product): when the
/// true residual (result.true_residual) is at the rounding level, at most
/// stagnation_floor and not below `tol`, adds to result.detail that it is
/// there (rounding_level_causes), since the breakdown's quantity is then
/// rounding, not a property of A (a --tol of 1e-300 makes CG's p^T A p 0 or
/// negative on a Laplacian). A detail that already says so is left as it is.
void note_rounding_level(SolveResult& result, double tol);

/// Marks `result` unconfirmed: converged false, reason "unconfirmed", a
/// detail saying the residual estimate `estimate` met `tol` and the true
/// residual (result.true_residual) did not, nor after `sync_iterations`
/// synchronous iterations that tried to confirm it when that is not 0.
/// Shared by confirm_convergence and the end of the asynchronous
/// stationary methods (detail::finish_async).
void mark_unconfirmed(SolveResult& result, double estimate, double tol, long sync_iterations);

}  // namespace asyncsolve::solvers
