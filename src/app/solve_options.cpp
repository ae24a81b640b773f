#include "solve_options.hpp"

#include <cmath>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/grid/problem.hpp"
#include "asyncsolve/par/shmem.hpp"
#include "asyncsolve/par/simulation.hpp"

namespace asyncsolve::app {
namespace {

using core::InputError;

/// The choice options looked up once, without judging them yet (nullopt:
/// text that names nothing): the checks below come in the order their
/// messages always had, and compare these, not text.
struct Lookup {
  std::optional<Variant> variant;
  std::optional<Transport> transport;
  std::optional<comm::HaloStrategy> halo;
  std::optional<Progress> progress;
  bool progress_none = false;   ///< --progress none
  bool pc_auto = false;         ///< --pc auto
  bool allreduce_auto = false;  ///< --allreduce auto
  bool threads_given = false;
};

Lookup look_up(const SolveArgs& a) {
  Lookup l;
  l.variant = parse<Variant>(a.variant);
  l.transport = parse<Transport>(a.transport);
  l.halo = try_parse([&] { return comm::parse_halo_strategy(a.halo); });
  l.progress = parse_progress(a.progress);
  l.progress_none = l.progress && l.progress->mode == Progress::Mode::none;
  l.pc_auto = is_auto(a.pc);
  l.allreduce_auto = is_auto(a.allreduce);
  l.threads_given = given(a.threads);
  return l;
}

/// What only the Krylov methods take, and the Jacobi options they refuse.
void validate_krylov(const SolveArgs& a, const Lookup& l, SolveConfig& c) {
  const std::string context = fmt::format("--method {}", a.method);
  // The methods each takes, as the option table's applicability says.
  const auto stationary_only = [&](bool given, const std::string& what, std::string_view methods,
                                   std::string_view expected) {
    refuse(given, what, context,
           fmt::format("{} applies to --method {} only, expected {}",
                       what.substr(0, what.find(' ')), methods, expected));
  };
  stationary_only(l.variant != Variant::sync, "--variant " + a.variant, "jacobi|schwarz",
                  "sync (the default)");
  stationary_only(l.transport != Transport::mpi, "--transport " + a.transport,
                  "jacobi|lanczos|schwarz", "mpi (the default)");
  stationary_only(c.halo_every != 1, fmt::format("--halo-every {}", c.halo_every), "jacobi", "1");
  stationary_only(c.copy, "--copy", "jacobi", "no --copy");
  if (!l.progress_none) {
    if (!l.progress || l.progress->mode == Progress::Mode::poll) {
      if (c.sparse.is_sparse()) {  // (a thread is refused there too: sparse_command.cpp)
        throw InputError(fmt::format(
            "--progress '{}' with --method {} {}: expected none (the sparse Krylov solves "
            "poll through --test-every)",
            a.progress, a.method, c.sparse.assemble ? "--assemble" : "--matrix"));
      }
      throw InputError(
          fmt::format("--progress '{}' with --method {}: expected none or thread or "
                      "thread:US with US from 0 to 1e6 (Krylov methods poll through "
                      "--test-every)",
                      a.progress, a.method));
    }
    c.progress = *l.progress;
  }
  expect_at_least("--test-every", c.test_every, 0);
  expect_finite("--shift", c.shift);
  const bool nonsymmetric = !solvers::needs_symmetric_matrix(krylov_method(c.method));
  if (l.pc_auto) {
    // cg is unpreconditioned and so, unless asked, is pipecg; the nonsymmetric
    // methods take PETSc's default, block-Jacobi ILU(0).
    const bool plain = c.method == Method::cg || c.method == Method::pipecg;
    c.pc.kind = nonsymmetric ? precond::PcKind::ilu0
                : plain      ? precond::PcKind::none
                             : precond::PcKind::jacobi;
  } else {
    precond::PcSettings pc;
    precond::parse_pc(a.pc, pc);  // an unknown --pc, or a chebyshev degree out of range
    const bool general =
        pc.kind == precond::PcKind::chebyshev || pc.kind == precond::PcKind::boomeramg ||
        pc.kind == precond::PcKind::ilu0 || pc.kind == precond::PcKind::additive_schwarz;
    if (nonsymmetric) {
      if (pc.kind == precond::PcKind::chebyshev) {
        throw InputError(fmt::format(
            "--pc {} with --method {}: Chebyshev needs real eigenvalue bounds of a symmetric "
            "matrix, expected auto, none, jacobi, ilu0, boomeramg or asm",
            a.pc, a.method));
      }
    } else if (c.method == Method::pipecg) {
      if (!general) expect_one_of("--pc", a.pc, {"auto", "none", "jacobi"});
    } else if (c.method == Method::cg) {
      expect_one_of("--pc", a.pc, {"auto", "none"},
                    " (cg is unpreconditioned; pcg1, pcg2, pcg-overlap and pipecg take "
                    "jacobi, chebyshev, boomeramg, ilu0 or asm)");
    } else if (!general) {
      expect_one_of(
          "--pc", a.pc,
          {"auto", "jacobi", "chebyshev", "chebyshev:DEGREE", "boomeramg", "ilu0", "asm"},
          fmt::format(" ({} is the preconditioned CG of paper 003; none is cg)", a.method));
    }
    if (pc.kind == precond::PcKind::boomeramg && !precond::boomeramg_available()) {
      throw InputError(
          "--pc boomeramg: this build has no hypre (configure with libhypre-dev installed), "
          "expected jacobi or chebyshev");
    }
    c.pc = pc;
  }
  if (!a.pc_option.empty()) precond::parse_pc_options(a.pc_option, c.pc);
  c.schwarz = validate_schwarz(a.schwarz, !a.sparse.values.matrix_path.empty(), c.pc);
  if (!nonsymmetric && c.pc.kind == precond::PcKind::additive_schwarz &&
      c.pc.schwarz.type == precond::SchwarzType::restricted) {
    throw InputError(fmt::format(
        "--pc-option type=restricted with --method {}: restricted additive Schwarz is not "
        "symmetric, which CG needs; expected type=basic, or a nonsymmetric method (gmres, "
        "fgmres, bicgstab)",
        a.method));
  }
  expect_at_least("--restart", c.restart, 1);
  c.refinement = parse_one_of<solvers::CgsRefinement>("--cgs-refinement", a.cgs_refinement);
}

/// What --transport omp takes (checks that need the rank count or the grid
/// are made when the solve starts).
void validate_omp(const SolveArgs& a, const Lookup& l, const SolveConfig& c) {
  if (l.threads_given) expect_at_least("--threads", c.threads, 1);
  const auto omp_refuse = [](bool given, const std::string& what, std::string_view expected) {
    refuse(given, what, "--transport omp", fmt::format("expected {}", expected));
  };
  omp_refuse(c.halo_every != 1, fmt::format("--halo-every {}", c.halo_every),
             "1 (threads read their neighbours' planes directly)");
  omp_refuse(!l.progress_none, "--progress " + a.progress, "none");
  omp_refuse(c.slow_rank != -1, fmt::format("--slow-rank {}", c.slow_rank),
             "-1 (fault injection is for MPI ranks)");
  omp_refuse(c.noise_hz != 0.0, fmt::format("--noise-hz {}", c.noise_hz),
             "0 (noise injection is for MPI ranks)");
  omp_refuse(!l.allreduce_auto, "--allreduce " + a.allreduce,
             "auto (threads reduce through shared memory)");
}

/// What --hybrid takes (the thread count against the planes of the block is
/// checked when the solve starts, and MPI_THREAD_MULTIPLE once MPI is up).
void validate_hybrid(const SolveArgs& a, const Lookup& l, SolveConfig& c) {
  std::vector<std::string> allowed{std::string(comm::hybrid_mode_name(comm::HybridMode::none))};
  for (const auto& mode : comm::hybrid_mode_names()) allowed.push_back(mode);
  expect_one_of("--hybrid", a.hybrid, allowed);
  c.hybrid = comm::parse_hybrid_mode(a.hybrid);
  if (!is_hybrid(c)) return;
  if (l.threads_given) expect_at_least("--threads", c.threads, 1);
  const std::string what = "--hybrid " + a.hybrid;
  const auto hybrid_refuse = [&](bool given, const std::string& other, std::string_view expected) {
    refuse(given, what, other, fmt::format("expected {}", expected));
  };
  hybrid_refuse(c.transport != Transport::mpi, "--transport " + a.transport,
                "--transport mpi (hybrid schemes run over MPI two-sided; --transport omp is "
                "OpenMP alone)");
  hybrid_refuse(!is_krylov(c) && c.variant != Variant::sync, "--variant " + a.variant,
                "--variant sync (the hybrid schemes are written for synchronous Jacobi)");
  hybrid_refuse(!l.progress_none, "--progress " + a.progress,
                "--progress none (the hybrid schemes place MPI calls on threads themselves)");
  // The hybrid schemes precondition with jacobi or none (krylov_solve refuses
  // the others): a default --pc that resolved to another is named as such.
  if (is_krylov(c) && l.pc_auto && c.pc.kind != precond::PcKind::jacobi &&
      c.pc.kind != precond::PcKind::none) {
    throw InputError(fmt::format(
        "{} with --method {}: its default --pc ({}) does not run under the hybrid schemes, "
        "expected --pc jacobi or --pc none",
        what, a.method, precond::pc_text(c.pc)));
  }
  hybrid_refuse(c.hybrid == comm::HybridMode::multiple && l.halo != comm::HaloStrategy::waitall,
                "--halo " + a.halo,
                "--halo waitall (multiple exchanges each halo message with its own "
                "MPI_Isend/MPI_Irecv on the thread that owns it)");
}

/// --allreduce, resolved: "auto" becomes the algorithm the method and
/// variant use; async and racy Jacobi need a non-blocking one.
void validate_allreduce(const SolveArgs& a, const Lookup& l, SolveConfig& c) {
  if (c.transport == Transport::omp) {
    c.allreduce.reset();  // validate_omp made sure it is auto
    return;
  }
  if (!l.allreduce_auto) {
    c.allreduce = collectives::parse_allreduce(a.allreduce);
    if ((c.allreduce->kind == collectives::AllreduceAlgorithm::Kind::shm ||
         c.allreduce->shm_node) &&
        !mca_osc_allows_shared_windows()) {
      throw InputError(fmt::format(
          "--allreduce {}: OMPI_MCA_osc={} leaves out Open MPI's osc/sm, which allocates the "
          "shared-memory window this reduction needs; expected OMPI_MCA_osc=sm,ucx (OpenSHMEM "
          "takes it too), OMPI_MCA_osc unset, or another --allreduce",
          a.allreduce, std::getenv("OMPI_MCA_osc")));
    }
    if (!is_krylov(c) && c.variant != Variant::sync &&
        c.allreduce->kind == collectives::AllreduceAlgorithm::Kind::mpi) {
      throw_not_one_of("--allreduce", a.allreduce, {"auto", "tree", "impi"},
                       fmt::format(" or another non-blocking algorithm (the {} variant needs a "
                                   "non-blocking reduction)",
                                   a.variant));
    }
    return;
  }
  using Kind = collectives::AllreduceAlgorithm::Kind;
  const bool overlapping = c.method == Method::pcg_overlap || c.method == Method::pipecg ||
                           c.method == Method::pgmres || c.method == Method::pipebicgstab;
  const Kind kind = is_krylov(c) ? (overlapping ? Kind::impi : Kind::mpi)
                                 : (c.variant == Variant::sync ? Kind::mpi : Kind::tree);
  c.allreduce = collectives::AllreduceAlgorithm{kind};
  // The overlapping methods: twolevel:shm+impi, which is the progress-free
  // shared-memory reduction alone on one node (impi only among node leaders);
  // the simulation build has no shared memory, and Open MPI none without
  // osc/sm (OMPI_MCA_osc=ucx): impi then.
  if (is_krylov(c) && overlapping && !par::is_simulated() && mca_osc_allows_shared_windows()) {
    c.allreduce->kind = Kind::twolevel;
    c.allreduce->leader = Kind::impi;
    c.allreduce->shm_node = true;
  }
}

/// --progress of Jacobi: poll:K (async and racy) or a progress thread
/// (async and racy over mpi or rma).
void validate_jacobi_progress(const SolveArgs& a, const Lookup& l, SolveConfig& c) {
  if (l.progress_none) return;
  if (!l.progress) {
    throw InputError(
        a.progress.starts_with("thread")
            ? fmt::format("--progress '{}': expected none, poll:K with K from 1 to 1e6, or "
                          "thread or thread:US with US from 0 to 1e6",
                          a.progress)
            : fmt::format("--progress '{}': expected none, poll:K with K from 1 to 1e6, or "
                          "thread[:US]",
                          a.progress));
  }
  if (l.progress->mode == Progress::Mode::thread) {
    if (c.variant == Variant::sync ||
        (c.transport != Transport::mpi && c.transport != Transport::rma)) {
      throw InputError(
          fmt::format("--progress {} with --variant {} --transport {}: a progress "
                      "thread serves async and racy Jacobi over mpi or rma, expected "
                      "none or poll:K",
                      a.progress, a.variant, a.transport));
    }
  } else if (c.variant == Variant::sync) {
    throw InputError(
        fmt::format("--progress {} with the sync variant: its exchanges block, "
                    "expected none (poll:K applies to async and racy)",
                    a.progress));
  }
  c.progress = *l.progress;
}

/// Fault and noise injection: --slow-rank, --slow-factor, --noise-us, --noise-hz.
void validate_faults(const SolveConfig& c) {
  expect(c.slow_rank >= -1, "--slow-rank", c.slow_rank, "a rank, or -1 for none");
  expect(c.slow_factor >= 1.0 && std::isfinite(c.slow_factor), "--slow-factor", c.slow_factor,
         "a number >= 1");
  expect(c.noise_us >= 0.0 && std::isfinite(c.noise_us), "--noise-us", c.noise_us,
         "a number of microseconds >= 0");
  expect(c.noise_hz >= 0.0 && std::isfinite(c.noise_hz), "--noise-hz", c.noise_hz,
         "a frequency >= 0");
  if (c.noise_us * 1e-6 * c.noise_hz >= 1.0) {
    throw InputError(
        fmt::format("--noise-us {} at --noise-hz {}: interrupts take all the time; "
                    "expected noise_us * 1e-6 * noise_hz < 1",
                    c.noise_us, c.noise_hz));
  }
  // An option that does nothing without its partner (the document would
  // record an injection that never happened).
  const SolveConfig defaults;
  const auto needs = [](bool alone, const std::string& given, const char* partner) {
    if (!alone) return;
    throw InputError(fmt::format("{} without {}: it does nothing alone; expected {} too", given,
                                 partner, partner));
  };
  needs(c.noise_us > 0.0 && c.noise_hz == 0.0, fmt::format("--noise-us {}", c.noise_us),
        "--noise-hz F (interruptions per second)");
  needs(c.noise_hz > 0.0 && c.noise_us == 0.0, fmt::format("--noise-hz {}", c.noise_hz),
        "--noise-us D (microseconds per interruption)");
  needs(c.noise_seed != defaults.noise_seed && (c.noise_us == 0.0 || c.noise_hz == 0.0),
        fmt::format("--noise-seed {}", c.noise_seed), "--noise-us D and --noise-hz F");
  needs(c.slow_factor != defaults.slow_factor && c.slow_rank < 0,
        fmt::format("--slow-factor {}", c.slow_factor), "--slow-rank R");
}

/// --max-time and --idle with --method lanczos: the Lanczos iteration has
/// no wall-clock guard and does not idle (the table checked the number).
void refuse_max_time_and_idle_with_lanczos(const SolveArgs& a) {
  if (given(a.max_time)) {
    throw InputError(
        "--max-time with --method lanczos: the Lanczos iteration has no wall-clock guard, "
        "expected no --max-time");
  }
  if (a.idle.empty()) return;
  parse_one_of<OnOff>("--idle", a.idle);
  throw InputError(
      fmt::format("--idle {} with --method lanczos: idling applies to asynchronous "
                  "Jacobi, expected no --idle",
                  a.idle));
}

/// --kernel NAME: one of the variants, and one this build has (ops::stencil7_kernels);
/// only on a grid: the CSR system's Jacobi (--matrix, --assemble) has no stencil kernels.
void validate_kernel(const SolveArgs& a, SolveConfig& c) {
  c.kernel = parse_one_of<ops::Stencil7Kernel>("--kernel", a.kernel);
  std::vector<std::string> built;
  for (const ops::Stencil7Kernel k : ops::stencil7_kernels()) built.emplace_back(name(k));
  expect_one_of("--kernel", a.kernel, built, " (the variants this build has)");
  const bool csr = !c.sparse.matrix_path.empty() || c.sparse.assemble;
  if (csr && c.kernel != ops::Stencil7Kernel::automatic) {
    throw InputError(fmt::format(
        "--kernel {} with {}: the stencil kernels run on the structured problems, expected no "
        "--kernel (or auto)",
        a.kernel, c.sparse.assemble ? "--assemble" : "--matrix"));
  }
}

/// --idle on|off: asynchronous Jacobi only (any --idle, even "on", with sync,
/// a Krylov method or lanczos is refused), on the stencils and on a CSR
/// system alike.
void validate_idle(const SolveArgs& a, SolveConfig& c) {
  if (a.idle.empty()) return;
  const auto idle = parse_one_of<OnOff>("--idle", a.idle);
  if (c.method != Method::jacobi) {
    throw InputError(
        fmt::format("--idle {} with --method {}: idling applies to asynchronous "
                    "Jacobi, expected no --idle",
                    a.idle, name(c.method)));
  }
  if (c.variant == Variant::sync) {
    throw InputError(
        fmt::format("--idle {} with --variant sync: idling applies to the async and "
                    "racy variants, expected no --idle (or --variant async or racy)",
                    a.idle));
  }
  c.idle = idle == OnOff::on;
}

/// --method schwarz: restricted additive Schwarz on a matrix, one level,
/// over mpi, rma or shmem channels; its subdomains from --overlap and
/// --local-solver (the table refused --coarse and --pc).
void validate_schwarz_method(const SolveArgs& a, SolveConfig& c) {
  if (!c.sparse.is_sparse()) {
    throw InputError(
        fmt::format("--method schwarz with --problem {}: the Schwarz iteration solves a "
                    "matrix, expected --matrix FILE or --assemble",
                    a.problem));
  }
  refuse(c.transport == Transport::omp, "--transport omp", "--method schwarz",
         "expected mpi, rma or shmem (the Schwarz iteration runs on MPI ranks)");
  refuse(is_hybrid(c), "--hybrid " + a.hybrid, "--method schwarz",
         "expected none (the hybrid schemes are written for the structured stencils)");
  c.schwarz = validate_schwarz(a.schwarz, !c.sparse.matrix_path.empty(), c.pc);
  c.pc.schwarz.type = precond::SchwarzType::restricted;
  if (!given(a.check_every)) c.check_every = 1;  // a sweep costs a subdomain solve
}

/// When to stop and report: --tol, --max-iters, --check-every, --halo-every,
/// --monitor-every.
void validate_stop(const SolveConfig& c) {
  expect(c.tol > 0.0 && std::isfinite(c.tol), "--tol", c.tol, "a positive number");
  expect_at_least("--max-iters", c.max_iters, 0);
  expect_at_least("--check-every", c.check_every, 1);
  expect_at_least("--halo-every", c.halo_every, 1);
  expect_monitor_every(c.monitor, c.monitor_every_s, SolveConfig{}.monitor_every_s);
}

}  // namespace

Context solve_context(const SolveConfig& c) {
  return Context{{{"--problem", {std::string(name(c.problem))}},
                  {"--method", {std::string(name(c.method))}},
                  {"--variant", {std::string(name(c.variant))}},
                  {"--transport", {std::string(name(c.transport))}},
                  {"--hybrid", {std::string(comm::hybrid_mode_name(c.hybrid))}},
                  {"--matrix", {c.sparse.matrix_path.empty() ? "" : "FILE"}},
                  {"--assemble", {c.sparse.assemble ? "given" : ""}},
                  {"--pc", {std::string(name(c.pc.kind))}},
                  {"--coarse", {std::string(precond::coarse_name(c.pc.schwarz.coarse))}}}};
}

grid::ModelProblem model_problem(Problem problem) {
  switch (problem) {
    case Problem::plume:
      return grid::ModelProblem::plume;
    case Problem::ones:
      return grid::ModelProblem::ones;
    case Problem::laplace27:
      return grid::ModelProblem::laplace27;
    case Problem::tfim:
      break;
  }
  throw std::logic_error("model_problem: tfim is not a grid problem");
}

solvers::KrylovMethod krylov_method(Method method) {
  // --method spells each Krylov method as the solvers name it.
  if (const auto krylov = solvers::parse_krylov_method(name(method))) return *krylov;
  throw std::logic_error("krylov_method: not a Krylov method");
}

bool is_lanczos(const SolveConfig& config) { return config.method == Method::lanczos; }

bool is_krylov(const SolveConfig& config) { return is_krylov(config.method); }

bool is_hybrid(const SolveConfig& config) { return config.hybrid != comm::HybridMode::none; }

bool is_sparse(const SolveConfig& config) { return config.sparse.is_sparse(); }

std::string reduction_name(const SolveConfig& config) {
  if (config.allreduce) return config.allreduce->name();
  // OpenMP Jacobi: an OpenMP reduction (sync) or the running shared sum.
  return config.variant == Variant::sync ? "omp" : "running-sum";
}

SolveConfig validate_solve(const SolveArgs& a, const OptionTable& table) {
  SolveConfig c = a.values;
  if (!a.global.empty()) c.decomposition.global = core::parse_triple(a.global, "--global");
  if (!a.local.empty()) c.decomposition.local = core::parse_triple(a.local, "--local");
  if (!a.dims.empty()) c.decomposition.dims = core::parse_triple(a.dims, "--dims");
  if (c.decomposition.global && c.decomposition.local) {
    throw InputError("--global and --local both given: expected one of them");
  }
  const auto hybrid = try_parse([&] { return comm::parse_hybrid_mode(a.hybrid); });
  SparseContext sparse_context{parse<Method>(a.method) == Method::lanczos,
                               parse<Problem>(a.problem) == Problem::tfim,
                               parse<Transport>(a.transport) == Transport::omp,
                               !hybrid || *hybrid != comm::HybridMode::none,
                               a.problem,
                               a.hybrid,
                               !a.global.empty() || !a.local.empty() || !a.dims.empty(),
                               !a.global.empty()  ? "--global"
                               : !a.local.empty() ? "--local"
                                                  : "--dims",
                               c.copy,
                               c.shift,
                               c.offset};
  c.sparse = validate_sparse(a.sparse, sparse_context);
  if (parse<Method>(a.method) == Method::lanczos || parse<Problem>(a.problem) == Problem::tfim) {
    if (parse<Method>(a.method) == Method::lanczos) refuse_max_time_and_idle_with_lanczos(a);
    validate_spin(a, c);
    table.refuse_inapplicable(solve_context(c));
    return c;
  }
  expect_one_of("--problem", a.problem, names<Problem>(), " (tfim goes with --method lanczos)");
  c.problem = *parse<Problem>(a.problem);
  expect_finite("--offset", c.offset);
  if (c.offset != 0.0 && c.problem != Problem::plume) {
    throw InputError(
        fmt::format("--offset {}: only the plume problem takes an offset, expected 0 "
                    "with --problem {}",
                    c.offset, a.problem));
  }
  c.method = parse_one_of<Method>("--method", a.method);
  const Lookup l = look_up(a);
  if (!given(a.tol)) c.tol = c.method == Method::jacobi ? 1e-4 : 1e-6;
  if (is_krylov(c)) {
    validate_krylov(a, l, c);
  } else {
    if (c.problem == Problem::laplace27 && !c.sparse.assemble) {
      std::vector<std::string> krylov;
      for (const Method m : values<Method>())
        if (is_krylov(m)) krylov.emplace_back(name(m));
      throw InputError(
          fmt::format("--problem laplace27 with --method {}: the 27-point problem is "
                      "solved by the Krylov methods, expected one of {}",
                      a.method, fmt::join(krylov, ", ")));
    }
    const std::string context = "--method " + a.method;
    refuse(!l.pc_auto, "--pc " + a.pc, context,
           c.method == Method::jacobi
               ? "expected auto (Jacobi takes no preconditioner)"
               : "expected auto (the Schwarz iteration is its own preconditioner: --overlap, "
                 "--local-solver)");
    refuse(c.shift != 0.0, fmt::format("--shift {}", c.shift), context,
           "expected 0 (the shift applies to the Krylov methods)");
    refuse(c.repeat_solves != 1, fmt::format("--repeat-solve {}", c.repeat_solves), context,
           "expected 1 (only the Krylov methods repeat a solve after one setup)");
    c.pc = {};
  }
  c.variant = parse_one_of<Variant>("--variant", a.variant);
  validate_idle(a, c);
  validate_kernel(a, c);
  c.transport = parse_one_of<Transport>("--transport", a.transport);
  validate_hybrid(a, l, c);
  if (c.transport == Transport::omp) {
    validate_omp(a, l, c);
  } else if (l.threads_given && !is_hybrid(c)) {
    throw InputError(
        fmt::format("--threads {} with --transport {}: threads apply to "
                    "--transport omp or --hybrid, expected no --threads",
                    c.threads, a.transport));
  }
  if (c.transport == Transport::shmem && !par::shmem_available()) {
    throw InputError(
        "--transport shmem: this build of asyncsolve has no OpenSHMEM, expected mpi or rma");
  }
  c.halo = comm::parse_halo_strategy(a.halo);
  validate_allreduce(a, l, c);
  if (c.copy && c.variant != Variant::sync) {
    throw InputError(
        fmt::format("--copy with --variant {}: the copy loop exists only in the sync "
                    "variant, expected no --copy",
                    a.variant));
  }
  expect(c.max_in_flight >= 1 && c.max_in_flight <= 512, "--max-in-flight", c.max_in_flight,
         "an integer from 1 to 512");
  expect_at_least("--final-sync", c.final_sync, 0);
  validate_faults(c);
  if (c.method == Method::schwarz) validate_schwarz_method(a, c);
  if (!is_krylov(c)) validate_jacobi_progress(a, l, c);
  validate_stop(c);
  table.refuse_inapplicable(solve_context(c));
  return c;
}

}  // namespace asyncsolve::app
