// Hybrid MPI+OpenMP (--hybrid, paper 002): masteronly, funneled and multiple
// with 1, 2 and 3 threads per rank. Sync Jacobi gives exactly the serial
// reference's iterates; the mat-vec equals the pure MPI split mat-vec bit for
// bit (7 and 27 points); CG takes the same iterations with the same residual
// history (1e-12 relative) as pure MPI. Runs with MPI_THREAD_MULTIPLE.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/hybrid_stencil.hpp"
#include "asyncsolve/grid/gather.hpp"
#include "asyncsolve/grid/split.hpp"
#include "asyncsolve/ops/stencil.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "serial_jacobi.hpp"

using namespace asyncsolve;
using comm::HybridMode;
using grid::Int3;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

bool is_root() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

bool has_thread_multiple() {
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided >= MPI_THREAD_MULTIPLE;
}

struct Scheme {
  comm::HybridMode mode;
  int threads;
};

std::vector<Scheme> schemes() {
  std::vector<Scheme> out;
  for (const comm::HybridMode m :
       {comm::HybridMode::masteronly, comm::HybridMode::funneled, comm::HybridMode::multiple})
    for (const int t : {1, 2, 3}) out.push_back({m, t});
  return out;
}

std::string label(const Scheme& s) {
  return std::string(comm::hybrid_mode_name(s.mode)) + "/" + std::to_string(s.threads);
}

/// The hybrid objects for one scheme (the linkwise exchange only for multiple).
struct Hybrid {
  std::unique_ptr<comm::LinkwiseHaloExchange> links;
  std::unique_ptr<comm::HybridStencil> stencil;
};

Hybrid make_hybrid(const Scheme& s, const grid::Decomposition& d, const grid::Field& shape,
                   comm::HaloExchange& halo, comm::Neighbourhood neighbourhood) {
  Hybrid h;
  if (s.mode == comm::HybridMode::multiple) {
    h.links = comm::make_linkwise_halo_exchange(d, shape, neighbourhood);
  }
  h.stencil = std::make_unique<comm::HybridStencil>(d, s.mode, s.threads, &halo, h.links.get());
  return h;
}

/// A value for global interior point g that is not symmetric in anything.
double value_at(const Int3& g) {
  const double x = 0.37 * g[0] + 1.13 * g[1] * g[1] - 0.71 * g[2] + 0.01 * g[0] * g[2];
  return std::sin(x) + 0.25 * std::cos(3.0 * x + g[1]);
}

// ---- Jacobi ---------------------------------------------------------------

struct JacobiRun {
  solvers::SolveResult result;
  std::vector<double> u;  // gathered on rank 0
  Int3 global{};
};

JacobiRun run_jacobi(const grid::Problem& problem, const grid::DecompositionSpec& spec,
                     solvers::JacobiOptions options, const Scheme* scheme) {
  grid::Decomposition d = grid::Decomposition::create(world(), spec);
  grid::Field u(d.local(), 1);
  grid::apply_initial_guess(problem, u);
  grid::apply_boundary(problem, d, u);
  auto halo = comm::make_halo_exchange("waitall", d, u, comm::Neighbourhood::faces);
  auto reduction = collectives::make_allreduce("mpi", d.comm());
  Hybrid hybrid;
  if (scheme != nullptr) {
    hybrid = make_hybrid(*scheme, d, u, *halo, comm::Neighbourhood::faces);
    options.hybrid = hybrid.stencil.get();
  }
  JacobiRun run;
  run.result = solvers::jacobi_sync(problem, d, u, *halo, *reduction, options);
  run.u = grid::gather_to_root(d, u);
  run.global = d.global();
  hybrid = Hybrid{};
  halo->close();
  halo.reset();
  reduction.reset();
  d.free();
  return run;
}

/// Every scheme and thread count against the serial reference: the same
/// iteration count and exactly the same iterate.
void expect_jacobi_matches_serial(const std::string& name, const grid::DecompositionSpec& spec,
                                  double tol, int check_every, long max_iters = 100000) {
  const auto problem = grid::make_problem(name, {});
  solvers::JacobiOptions options;
  options.tol = tol;
  options.check_every = check_every;
  options.max_iters = max_iters;
  std::optional<reference::SerialJacobi> ref;
  for (const Scheme& s : schemes()) {
    if (s.mode == comm::HybridMode::multiple && !has_thread_multiple()) continue;
    const JacobiRun run = run_jacobi(*problem, spec, options, &s);
    if (!is_root()) continue;
    if (!ref) ref = reference::serial_jacobi(*problem, run.global, tol, max_iters, check_every);
    EXPECT_EQ(run.result.iterations, ref->iterations) << label(s);
    EXPECT_EQ(run.result.converged, ref->converged) << label(s);
    // The residual is a cancellation, sum of the neighbours - 6u: whether 6u
    // is rounded before the subtraction or fused into it (the kernels fuse
    // it explicitly where the target has FMA; the serial loop as the build's
    // optimisation level decides) moves each r_i by up to one rounding of
    // 6 u_i, so by up to 6 eps ||u|| / ||b|| in the relative residual.
    double u2 = 0;
    for (const double v : ref->u) u2 += v * v;
    const double rounding =
        2 * 6 * std::numeric_limits<double>::epsilon() * std::sqrt(u2) / ref->b_norm;
    EXPECT_NEAR(run.result.residual_estimate, ref->residual, 1e-12 * ref->residual + rounding)
        << label(s);
    ASSERT_EQ(run.u.size(), ref->u.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < ref->u.size(); ++i) differ += run.u[i] != ref->u[i] ? 1 : 0;
    EXPECT_EQ(differ, 0U) << name << ", " << label(s) << " on " << world_size() << " ranks";
  }
}

TEST(HybridJacobi, PlumeUnevenGridEqualsSerial) {
  grid::DecompositionSpec spec;
  spec.global = Int3{13, 11, 9};
  expect_jacobi_matches_serial("plume", spec, 1e-4, 10);
}

TEST(HybridJacobi, OnesSlabsOfThreePlanesEqualSerial) {
  // z-slabs of 3 planes per rank: funneled's interior is one plane (or none
  // on the end ranks' sides), shared by up to 2 threads.
  grid::DecompositionSpec spec;
  spec.global = Int3{9, 8, 3 * world_size()};
  spec.dims = Int3{1, 1, world_size()};
  expect_jacobi_matches_serial("ones", spec, 1e-5, 7);
}

TEST(HybridJacobi, StopsAtMaxItersWithTheSerialIterate) {
  grid::DecompositionSpec spec;
  spec.global = Int3{10, 10, 10};
  expect_jacobi_matches_serial("plume", spec, 1e-12, 7, /*max_iters=*/40);
}

TEST(HybridJacobi, CopyLoopAndHaloEveryGiveThePureMpiIterates) {
  const auto problem = grid::make_problem("plume", {});
  grid::DecompositionSpec spec;
  spec.global = Int3{11, 10, 9};
  for (const bool copy : {false, true}) {
    solvers::JacobiOptions options;
    options.check_every = 10;
    options.copy = copy;
    options.halo_every = copy ? 1 : 4;
    const JacobiRun pure = run_jacobi(*problem, spec, options, nullptr);
    for (const Scheme s :
         {Scheme{comm::HybridMode::masteronly, 2}, Scheme{comm::HybridMode::funneled, 3},
          Scheme{comm::HybridMode::multiple, 2}}) {
      if (s.mode == comm::HybridMode::multiple && !has_thread_multiple()) continue;
      const JacobiRun run = run_jacobi(*problem, spec, options, &s);
      EXPECT_EQ(run.result.iterations, pure.result.iterations) << label(s);
      EXPECT_EQ(run.result.halo_exchanges, pure.result.halo_exchanges) << label(s);
      if (is_root()) {
        EXPECT_EQ(run.u, pure.u) << label(s) << (copy ? " --copy" : " --halo-every 4");
      }
      EXPECT_GT(run.result.phases.seconds(solvers::sweep_phase), 0.0);
    }
  }
}

// ---- the mat-vec ----------------------------------------------------------

class HybridMatvec : public testing::TestWithParam<ops::Stencil> {};

// q = A p through HybridStencil::apply equals the pure MPI split mat-vec bit
// for bit, for every scheme and thread count (also more threads than the
// block has planes); the fused p . q to 1e-12.
TEST_P(HybridMatvec, EqualsThePureMpiMatvec) {
  const ops::Stencil stencil = GetParam();
  const comm::Neighbourhood nb =
      stencil == ops::Stencil::seven_point ? comm::Neighbourhood::faces : comm::Neighbourhood::full;
  const ops::StencilOperator a{stencil, 0.5};
  // {9, 8, 2}: blocks of 1 or 2 planes, fewer than 3 threads.
  for (const Int3 global : {Int3{13, 11, 9}, Int3{8, 17, 10}, Int3{9, 8, 2}}) {
    grid::DecompositionSpec spec;
    spec.global = global;
    grid::Decomposition d = grid::Decomposition::create(world(), spec);
    const Int3& n = d.local();
    const Int3& o = d.offset();
    grid::Field p(n, 1);
    grid::Field q_pure(n, 1);
    p.fill(0.0);
    q_pure.fill(0.0);
    for (int k = 0; k < n[2]; ++k)
      for (int j = 0; j < n[1]; ++j)
        for (int i = 0; i < n[0]; ++i) p(i, j, k) = value_at({o[0] + i, o[1] + j, o[2] + k});
    auto halo = comm::make_halo_exchange("waitall", d, p, nb);
    const grid::OverlapSplit split = grid::split_for_overlap(d);
    halo->start(p);
    double dot_pure = ops::apply(a, p, q_pure, split.interior);
    halo->finish(p);
    for (const grid::Box& b : split.boundary) dot_pure += ops::apply(a, p, q_pure, b);
    double pure_global = 0.0;
    MPI_Allreduce(&dot_pure, &pure_global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    for (const Scheme& s : schemes()) {
      if (s.mode == comm::HybridMode::multiple && !has_thread_multiple()) continue;
      // More threads than planes: the passes split the block along y (share()).
      // The halo is cleared first: the scheme must fill it again.
      grid::Field p2(n, 1);
      p2.fill(0.0);
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) p2(i, j, k) = p(i, j, k);
      grid::Field q(n, 1);
      q.fill(0.0);
      Hybrid h = make_hybrid(s, d, p2, *halo, nb);
      comm::HybridTimes times;
      double dot = 0.0;
      for (int rep = 0; rep < 2; ++rep) {  // twice: buffers are reused
        dot = h.stencil->apply(
            p2, [&](const grid::Box& box) { return ops::apply(a, p2, q, box); }, times);
      }
      std::size_t differ = 0;
      for (int k = 0; k < n[2]; ++k)
        for (int j = 0; j < n[1]; ++j)
          for (int i = 0; i < n[0]; ++i) differ += q(i, j, k) != q_pure(i, j, k) ? 1 : 0;
      EXPECT_EQ(differ, 0U) << label(s) << " on " << world_size() << " ranks";
      double global_dot = 0.0;
      MPI_Allreduce(&dot, &global_dot, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_NEAR(global_dot, pure_global, 1e-12 * std::abs(pure_global)) << label(s);
      EXPECT_GE(times.exchange_start + times.exchange_wait + times.interior + times.boundary, 0.0);
    }
    halo->close();
    d.free();
  }
}

INSTANTIATE_TEST_SUITE_P(Stencils, HybridMatvec,
                         testing::Values(ops::Stencil::seven_point,
                                         ops::Stencil::twenty_seven_point),
                         [](const testing::TestParamInfo<ops::Stencil>& stencil_info) {
                           return std::to_string(ops::points(stencil_info.param)) + "point";
                         });

TEST(HybridStencil, SharesTileTheBox) {
  const grid::Box box{{1, 2, 3}, {9, 7, 5}};  // 2 planes, 5 rows
  for (const int parts : {1, 2, 3, 4, 7}) {
    long long total = 0;
    for (int t = 0; t < parts; ++t) {
      const grid::Box b = comm::HybridStencil::share(box, parts, t);
      total += std::max(0LL, b.size());
      if (t > 0) {
        const grid::Box prev = comm::HybridStencil::share(box, parts, t - 1);
        const int axis = parts <= 2 ? 2 : 1;  // z while parts <= planes, then y (5 rows > 2)
        EXPECT_EQ(b.lo[axis], prev.hi[axis]) << parts;
      }
    }
    EXPECT_EQ(total, box.size()) << parts;
  }
}

// ---- CG -------------------------------------------------------------------

struct CgRun {
  solvers::SolveResult result;
  std::vector<double> x;
};

CgRun run_cg(const std::string& problem_name, const grid::DecompositionSpec& spec,
             const std::string& method, const Scheme* scheme) {
  const auto problem = grid::make_problem(problem_name, {});
  grid::Decomposition d = grid::Decomposition::create(world(), spec);
  solvers::KrylovSystem system = solvers::make_krylov_system(*problem, d, 0.0);
  const comm::Neighbourhood nb = system.op.stencil == ops::Stencil::seven_point
                                     ? comm::Neighbourhood::faces
                                     : comm::Neighbourhood::full;
  auto halo = comm::make_halo_exchange("waitall", d, system.x, nb);
  solvers::KrylovOptions options;
  options.method = solvers::parse_krylov_method(method).value();
  options.tol = 1e-8;
  options.allreduce = collectives::parse_allreduce(method == "cg" ? "mpi" : "impi");
  Hybrid hybrid;
  if (scheme != nullptr) {
    hybrid = make_hybrid(*scheme, d, system.x, *halo, nb);
    options.hybrid = hybrid.stencil.get();
  }
  CgRun run;
  run.result = solvers::krylov_solve(system, d, *halo, options);
  run.x = grid::gather_to_root(d, system.x);
  hybrid = Hybrid{};
  halo->close();
  d.free();
  return run;
}

void expect_same_history(const CgRun& pure, const CgRun& run, const std::string& what) {
  EXPECT_TRUE(run.result.converged) << what;
  EXPECT_EQ(run.result.iterations, pure.result.iterations) << what;
  if (!is_root()) return;
  ASSERT_EQ(run.result.history.size(), pure.result.history.size()) << what;
  for (std::size_t k = 0; k < pure.result.history.size(); ++k) {
    const double want = pure.result.history[k].residual;
    EXPECT_NEAR(run.result.history[k].residual, want, 1e-12 * want) << what << ", iteration " << k;
  }
  double worst = 0.0;
  for (std::size_t i = 0; i < pure.x.size(); ++i)
    worst = std::max(worst, std::abs(run.x[i] - pure.x[i]));
  EXPECT_LT(worst, 1e-10) << what;
}

TEST(HybridCg, SameIterationsAndResidualHistoryAsPureMpi) {
  grid::DecompositionSpec spec;
  spec.global = Int3{14, 11, 9};
  const CgRun pure = run_cg("plume", spec, "cg", nullptr);
  ASSERT_TRUE(pure.result.converged);
  for (const Scheme& s : schemes()) {
    if (s.mode == comm::HybridMode::multiple && !has_thread_multiple()) continue;
    const CgRun run = run_cg("plume", spec, "cg", &s);
    expect_same_history(pure, run, "cg " + label(s));
    EXPECT_EQ(run.result.halo_exchanges, pure.result.halo_exchanges);
    EXPECT_EQ(run.result.halo_tests, 0) << "hybrid passes do not test";
  }
}

TEST(HybridCg, OtherMethodsAndTheTwentySevenPointProblem) {
  // The mat-vec is shared by every Krylov method: a smoke test of two more
  // methods and of the 27-point operator (edge and corner links).
  grid::DecompositionSpec spec;
  spec.global = Int3{12, 10, 9};
  const std::vector<std::pair<std::string, std::string>> cases{{"ones", "pipecg"},
                                                               {"laplace27", "pcg-overlap"}};
  for (const auto& [problem, method] : cases) {
    const CgRun pure = run_cg(problem, spec, method, nullptr);
    for (const Scheme s :
         {Scheme{comm::HybridMode::funneled, 2}, Scheme{comm::HybridMode::multiple, 3}}) {
      if (s.mode == comm::HybridMode::multiple && !has_thread_multiple()) continue;
      const CgRun run = run_cg(problem, spec, method, &s);
      expect_same_history(pure, run, method + " on " + problem + " " + label(s));
    }
  }
}

}  // namespace
