// krylov_solve: checks the options, then runs one method's loop (one file
// each: cg.cpp, pcg1.cpp, pcg2.cpp, pcg_overlap.cpp, pipecg.cpp, gmres.cpp,
// fgmres.cpp, pgmres.cpp, bicgstab.cpp, pipebicgstab.cpp) in a
// KrylovContext (krylov_context.hpp), which does what every method shares.
#include "asyncsolve/solvers/krylov.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "krylov_context.hpp"
#include "krylov_run.hpp"

namespace asyncsolve::solvers {

using grid::Field;

namespace {

constexpr std::array all_methods{KrylovMethod::cg,       KrylovMethod::pcg1,
                                 KrylovMethod::pcg2,     KrylovMethod::pcg_overlap,
                                 KrylovMethod::pipecg,   KrylovMethod::gmres,
                                 KrylovMethod::fgmres,   KrylovMethod::pgmres,
                                 KrylovMethod::bicgstab, KrylovMethod::pipebicgstab};

/// Each method's loop, in KrylovMethod's order.
constexpr std::array<detail::KrylovLoop, all_methods.size()> loops{
    detail::run_cg,       detail::run_pcg1,        detail::run_pcg2,   detail::run_pcg_overlap,
    detail::run_pipecg,   detail::run_gmres,       detail::run_fgmres, detail::run_pgmres,
    detail::run_bicgstab, detail::run_pipebicgstab};

detail::KrylovLoop loop_of(KrylovMethod method) {
  const auto index = static_cast<std::size_t>(method);
  if (index >= loops.size()) {
    throw std::invalid_argument(fmt::format("{} is not a KrylovMethod", index));
  }
  return loops.at(index);
}

/// True when `method` applies the Jacobi preconditioner (pcg1, pcg2 and
/// pcg-overlap always, pipecg and the nonsymmetric methods when asked).
bool is_preconditioned(KrylovMethod method, bool jacobi) {
  switch (method) {
    case KrylovMethod::cg:
      return false;
    case KrylovMethod::pipecg:
    case KrylovMethod::gmres:
    case KrylovMethod::fgmres:
    case KrylovMethod::pgmres:
    case KrylovMethod::bicgstab:
    case KrylovMethod::pipebicgstab:
      return jacobi;
    case KrylovMethod::pcg1:
    case KrylovMethod::pcg2:
    case KrylovMethod::pcg_overlap:
      return true;
  }
  return true;
}

/// True for the preconditioners applied through the precond interface.
bool is_general(const precond::PcSettings& pc) {
  return pc.kind == precond::PcKind::chebyshev || pc.kind == precond::PcKind::boomeramg ||
         pc.kind == precond::PcKind::ilu0 || pc.kind == precond::PcKind::additive_schwarz;
}

/// The preconditioner of the solve that divides by the diagonal of A, as
/// messages name it: Chebyshev (on D^-1 A), or the Jacobi one fused into
/// the method (pcg1, pcg2 and pcg-overlap unless a general one is given;
/// pipecg with --pc jacobi); empty when none does (cg, none, boomeramg,
/// whose smoothers need no sign of the diagonal).
std::string diagonal_divider(const KrylovOptions& options) {
  const std::string_view method = krylov_method_name(options.method);
  if (options.pc.kind == precond::PcKind::chebyshev)
    return fmt::format("the Chebyshev preconditioner (--pc {}) of {}", precond::pc_text(options.pc),
                       method);
  if (is_general(options.pc) ||
      !is_preconditioned(options.method, options.pc.kind == precond::PcKind::jacobi)) {
    return {};
  }
  return fmt::format("the Jacobi preconditioner of {}", method);
}

/// Local: max |x - y| over the owned unknowns of two vectors laid out alike.
double max_abs_difference(const Field& x, const Field& y) {
  const grid::Int3& n = x.interior();
  double out = 0.0;
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) out = std::max(out, error_term(x(i, j, k), y(i, j, k)));
  return out;
}

/// One solve as SolveResult::repeats lists it.
RepeatedSolve repeated(const SolveResult& r) {
  RepeatedSolve out;
  out.time_s = r.time_s;
  out.iterations = r.iterations;
  out.converged = r.converged;
  out.reason = r.reason;
  out.true_residual = r.true_residual;
  return out;
}

/// check_restart for the method of `options` on vectors of `a`.
void check_restart_on(const KrylovOptions& options, const detail::LinearOperator& a) {
  if (!is_restarted(options.method)) return;
  const grid::Field one = a.make_vector();
  check_restart(a.comm(), options.method, options.restart,
                8.0 * static_cast<double>(one.storage().size()));
}

/// Collective: sets the preconditioner up (when options.pc is general)
/// once, runs `loop` options.repeat_solves times from the same x0 (x reset
/// before each solve; the last solution stays in x), frees the
/// preconditioner. The result is the first solve's, its report included,
/// with every solve in `repeats`.
SolveResult run_solve(detail::LinearOperator& a, Field& x, const Field& b,
                      const KrylovOptions& options, detail::KrylovLoop loop) {
  if (options.repeat_solves < 1) {
    throw core::InputError(
        fmt::format("--repeat-solve {}: expected at least 1 solve", options.repeat_solves));
  }
  detail::PreparedPc pc = detail::setup_preconditioner(a, options);
  const bool repeating = options.repeat_solves > 1;
  Field x0;     // the initial guess, restored before every solve after the first
  Field first;  // the first solve's solution, against which the others are measured
  std::unique_ptr<collectives::Allreduce> reduction;
  if (repeating) {
    x0 = a.make_vector();
    ops::copy(x, x0);
    reduction = collectives::make_allreduce(collectives::AllreduceAlgorithm{}, a.comm());
  }
  SolveResult result;
  for (int solve = 0; solve < options.repeat_solves; ++solve) {
    if (solve > 0) ops::copy(x0, x);
    SolveResult r =
        detail::solve_once(a, x, b, options, loop, pc.pc.get(), solve == 0 ? pc.setup_s : 0.0);
    RepeatedSolve one = repeated(r);
    if (solve == 0) {
      result = std::move(r);
      if (repeating) {
        first = a.make_vector();
        ops::copy(x, first);
      }
    } else {
      // max |x - x_1| (one blocking reduction, outside the solves' times)
      one.change_inf = reduction->max(max_abs_difference(x, first));
    }
    result.repeats.push_back(one);
    if (!result.repeats.back().converged) break;
  }
  if (pc.pc) pc.pc->free();
  return result;
}

/// Throws core::InputError for a general preconditioner with cg, and for
/// chebyshev with a nonsymmetric method.
void check_pc(const KrylovOptions& options) {
  if (is_general(options.pc) && options.method == KrylovMethod::cg) {
    throw core::InputError(fmt::format(
        "--pc {} with --method cg: cg is unpreconditioned, expected pcg1, pcg2, pcg-overlap or "
        "pipecg",
        precond::pc_text(options.pc)));
  }
  if (options.pc.kind == precond::PcKind::chebyshev && !needs_symmetric_matrix(options.method)) {
    throw core::InputError(fmt::format(
        "--pc {} with --method {}: Chebyshev needs real eigenvalue bounds of a symmetric "
        "matrix, expected none, jacobi, ilu0 or boomeramg",
        precond::pc_text(options.pc), krylov_method_name(options.method)));
  }
}

}  // namespace

namespace detail {

PreparedPc setup_preconditioner(LinearOperator& a, const KrylovOptions& options) {
  check_restart_on(options, a);
  PreparedPc out;
  if (is_general(options.pc)) {
    const double t0 = core::now_s();
    precond::PcSettings settings = options.pc;
    settings.row_names = options.row_names;  // messages name the user's rows
    if (!needs_symmetric_matrix(options.method)) precond::use_nonsymmetric_defaults(settings);
    out.pc = precond::make_preconditioner(settings, a);
    out.setup_s = core::now_s() - t0;
  }
  return out;
}

SolveResult solve_once(LinearOperator& a, Field& x, const Field& b, const KrylovOptions& options,
                       KrylovLoop loop, precond::Preconditioner* pc, double setup_s) {
  KrylovContext k(a, x, b, options);
  k.set_preconditioner(pc);
  if (setup_s > 0.0) k.add_setup_time(setup_s);
  SolveResult r = k.run(loop);
  if (pc != nullptr) r.pc = pc->report();
  return r;
}

KrylovLoop loop_of(KrylovMethod method) { return asyncsolve::solvers::loop_of(method); }

namespace {

/// Throws InputError when a diagonal entry of `matrix` is zero: "<who>
/// divide(s) by the diagonal, and <row> has a_ii = 0: expected a non-zero
/// diagonal (try --pc none or asm)".
void refuse_zero_diagonal(const sparse::DistMatrix& matrix, const CsrSystem& system,
                          const KrylovOptions& options, std::string_view who) {
  if (const DiagonalCheck d =
          smallest_diagonal(matrix, system.op, options.row_names.rows, DiagonalOrder::magnitude);
      !(d.value != 0.0)) {
    throw core::InputError(
        fmt::format("{} by the diagonal, and {} has a_ii = 0: expected a non-zero diagonal (try "
                    "--pc none or asm)",
                    who, options.row_names.name(d.row)));
  }
}

}  // namespace

void check_csr_krylov(CsrSystem& system, const sparse::DistMatrix& matrix,
                      const KrylovOptions& options) {
  check_pc(options);
  if (options.hybrid != nullptr) {
    throw core::InputError(
        "--hybrid: the hybrid MPI+OpenMP schemes run on the structured "
        "problems only; expected no --hybrid with --matrix");
  }
  if (const std::string divider = diagonal_divider(options); !divider.empty()) {
    if (!needs_symmetric_matrix(options.method) && options.pc.kind != precond::PcKind::chebyshev) {
      // D^-1 of a general matrix: any non-zero diagonal, the zero one named
      refuse_zero_diagonal(matrix, system, options, divider + " divides");
    } else if (const DiagonalCheck d = smallest_diagonal(matrix, system.op, options.row_names.rows);
               !(d.value > 0.0)) {
      throw core::InputError(fmt::format(
          "{} divides by the diagonal, and {} has a_ii = {}: expected a positive diagonal (a "
          "symmetric positive definite matrix has one)",
          divider, options.row_names.name(d.row), options.row_names.given(d.value)));
    }
  }
  if (options.pc.kind == precond::PcKind::boomeramg) {
    // hypre's smoothers divide by the diagonal: refused here, by row, rather
    // than as a runtime failure inside HYPRE_BoomerAMGSetup
    refuse_zero_diagonal(matrix, system, options, "--pc boomeramg: its smoothers divide");
  }
}

}  // namespace detail

std::string_view krylov_method_name(KrylovMethod method) {
  static constexpr std::array<std::string_view, 10> names{
      "cg",    "pcg1",   "pcg2",   "pcg-overlap", "pipecg",
      "gmres", "fgmres", "pgmres", "bicgstab",    "pipebicgstab"};
  return core::enum_name(names, method, "unknown");
}

bool needs_symmetric_matrix(KrylovMethod method) {
  switch (method) {
    case KrylovMethod::cg:
    case KrylovMethod::pcg1:
    case KrylovMethod::pcg2:
    case KrylovMethod::pcg_overlap:
    case KrylovMethod::pipecg:
      return true;
    case KrylovMethod::gmres:
    case KrylovMethod::fgmres:
    case KrylovMethod::pgmres:
    case KrylovMethod::bicgstab:
    case KrylovMethod::pipebicgstab:
      return false;
  }
  return true;
}

bool is_restarted(KrylovMethod method) {
  return method == KrylovMethod::gmres || method == KrylovMethod::fgmres ||
         method == KrylovMethod::pgmres;
}

std::string_view cgs_refinement_name(CgsRefinement refinement) {
  static constexpr std::array<std::string_view, 4> names{"never", "ifneeded", "always", "delayed"};
  return core::enum_name(names, refinement, "unknown");
}

std::optional<KrylovMethod> parse_krylov_method(std::string_view name) {
  for (const KrylovMethod method : all_methods)
    if (krylov_method_name(method) == name) return method;
  return std::nullopt;
}

std::vector<std::string> krylov_method_names() {
  std::vector<std::string> names;
  names.reserve(all_methods.size());
  for (const KrylovMethod method : all_methods) names.emplace_back(krylov_method_name(method));
  return names;
}

void check_restart(const par::Comm& comm, KrylovMethod method, int restart, double vector_bytes) {
  if (!is_restarted(method)) return;
  if (restart < 1) {
    throw core::InputError(fmt::format("--restart {}: expected at least 1 basis vector", restart));
  }
  const double m = restart;
  const double bytes = static_cast<double>(krylov_fields(method, restart)) * vector_bytes +
                       3.0 * 8.0 * (m + 2.0) * (m + 1.0);
  const par::NodeMemory memory = par::node_memory(comm, bytes);
  if (memory.need_bytes > 0.9 * memory.have_bytes) {
    throw core::InputError(fmt::format(
        "--restart {}: {} keeps {} vectors and an {}-square Hessenberg matrix, {:.1f} GiB on one "
        "node, which has {:.1f} GiB of memory; expected a shorter restart",
        restart, krylov_method_name(method), krylov_fields(method, restart), restart + 1,
        memory.need_bytes / 1073741824.0, memory.have_bytes / 1073741824.0));
  }
}

long krylov_fields(KrylovMethod method, int restart) {
  const long m = restart;
  switch (method) {
    case KrylovMethod::cg:
    case KrylovMethod::pcg1:
      return 5;
    case KrylovMethod::pcg2:
    case KrylovMethod::pcg_overlap:
      return 8;
    case KrylovMethod::pipecg:
      return 11;
    case KrylovMethod::gmres:
      return m + 5;  // x, b, the basis (m + 1), z and the correction
    case KrylovMethod::fgmres:
      return 2 * m + 3;  // x, b, the basis (m + 1), the kept z (m)
    case KrylovMethod::pgmres:
      return m + 6;  // x, b, the basis (m + 2), z and the correction
    case KrylovMethod::bicgstab:
      return 10;  // x, b, r, r0, p, v, s, t, M^-1 p, M^-1 s
    case KrylovMethod::pipebicgstab:
      return 17;  // x, b and 15
  }
  return 17;
}

std::vector<std::string> krylov_phase_names() {
  return {"matvec_interior", "halo_start", "halo_wait",    "matvec_boundary",
          "sdotp_start",     "sdotp_wait", "gamma_start",  "gamma_wait",
          "iprod_start",     "iprod_wait", "dots_start",   "dots_wait",
          "precond",         "axpy",       "vector_scale", "precond_setup",
          "precond_hidden",  "orthog",     "reduce_start", "reduce_wait",
          "matvec_hidden"};
}

KrylovSystem make_krylov_system(const grid::Problem& problem,
                                const grid::Decomposition& decomposition, double shift) {
  KrylovSystem system;
  system.op.stencil =
      problem.stencil_points() == 27 ? ops::Stencil::twenty_seven_point : ops::Stencil::seven_point;
  system.op.shift = shift;
  const grid::Int3& n = decomposition.local();
  // b = source + the boundary contributions = source - A g, g being zero
  // except for the Dirichlet data in its physical-boundary halo.
  Field g(n, 1);
  g.fill(0.0);
  grid::apply_boundary(problem, decomposition, g);
  system.b = Field(n, 1);
  system.b.fill(0.0);
  ops::StencilOperator unshifted = system.op;
  unshifted.shift = 0.0;
  ops::apply(unshifted, g, system.b, system.b.interior_box());
  const double source = problem.source();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) system.b(i, j, k) = source - system.b(i, j, k);
  system.x = Field(n, 1);
  system.x.fill(0.0);
  system.x.fill_interior(problem.initial_value());
  return system;
}

SolveResult krylov_solve(KrylovSystem& system, const grid::Decomposition& decomposition,
                         comm::HaloExchange& halo, const KrylovOptions& options) {
  const detail::KrylovLoop loop = loop_of(options.method);
  check_pc(options);
  if (is_general(options.pc) && options.hybrid != nullptr) {
    throw core::InputError(fmt::format(
        "--pc {} with --hybrid: the hybrid schemes run with jacobi or none, expected no --hybrid",
        precond::pc_text(options.pc)));
  }
  if (const std::string divider = diagonal_divider(options); !divider.empty()) {
    // D^-1 of a matrix the method takes as SPD (and Chebyshev's): a positive
    // diagonal; of a general one: any non-zero diagonal.
    const bool positive =
        needs_symmetric_matrix(options.method) || options.pc.kind == precond::PcKind::chebyshev;
    const double diagonal = system.op.diagonal();
    if (positive ? !(diagonal > 0.0) : !(diagonal != 0.0)) {
      throw core::InputError(fmt::format(
          "--shift {}: the diagonal of A is {} with it, and {} divides by it; expected a shift "
          "{} {} (a {} diagonal)",
          system.op.shift, diagonal, divider, positive ? "above" : "other than",
          -(diagonal - system.op.shift), positive ? "positive" : "non-zero"));
    }
  }
  detail::StencilLinearOperator a(system.op, decomposition, system.x, halo);
  return run_solve(a, system.x, system.b, options, loop);
}

SolveResult krylov_solve(CsrSystem& system, const sparse::DistMatrix& matrix,
                         comm::SparseHaloExchange& halo, const KrylovOptions& options) {
  const detail::KrylovLoop loop = loop_of(options.method);
  detail::check_csr_krylov(system, matrix, options);
  detail::CsrLinearOperator a(system.op, matrix, halo);
  return run_solve(a, system.x, system.b, options, loop);
}

}  // namespace asyncsolve::solvers
