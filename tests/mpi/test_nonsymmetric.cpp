// The nonsymmetric Krylov methods on P ranks (gmres, fgmres, pgmres,
// bicgstab, pipebicgstab) on matrices made here: upwind convection-diffusion
// on 2-D and 3-D grids at Peclet 1, 100 and 1000, and the non-normal Grcar
// matrix. Every method converges with a true residual below the tolerance
// under none, jacobi and ilu0; gmres takes the serial reference GMRES's
// iteration count (same restart, same Gram-Schmidt, right Jacobi) within 2,
// bicgstab the serial BiCGStab's within 5%; restarts, breakdowns and
// refusals; the symmetry check; block-Jacobi ILU(0) against its definition.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/symmetry.hpp"
#include "serial_krylov.hpp"

using namespace asyncsolve;
using reference::SerialCsr;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// This rank's contiguous block of rows of an n-row matrix.
std::pair<std::int64_t, std::int64_t> my_rows(std::int64_t n) {
  const par::Comm w = world();
  const std::int64_t first = n * w.rank() / w.size();
  return {first, n * (w.rank() + 1) / w.size()};
}

sparse::DistMatrix distribute(const SerialCsr& a) {
  const auto [first, end] = my_rows(a.n);
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  for (std::int64_t i = first; i < end; ++i) {
    for (std::int64_t e = a.ptr[i]; e < a.ptr[i + 1]; ++e) {
      col.push_back(a.col[e]);
      val.push_back(a.val[e]);
    }
    ptr.push_back(static_cast<std::int64_t>(col.size()));
  }
  return sparse::DistMatrix::from_rows(world(), a.n, {ptr, col, val});
}

/// b = A * (1, 1, ...): the solution is all ones.
std::vector<double> ones_rhs(const SerialCsr& a) {
  return reference::multiply(a, std::vector<double>(static_cast<std::size_t>(a.n), 1.0));
}

struct Outcome {
  solvers::SolveResult result;
  double error = 0.0;  ///< max |x - 1| over every rank
};

Outcome solve(const SerialCsr& a, solvers::KrylovOptions o,
              comm::HaloStrategy strategy = comm::HaloStrategy::waitall) {
  sparse::DistMatrix m = distribute(a);
  const std::vector<double> b_all = ones_rhs(a);
  const auto [first, end] = my_rows(a.n);
  const std::vector<double> b(b_all.begin() + first, b_all.begin() + end);
  solvers::CsrSystem s = solvers::make_csr_system(m, b);
  auto halo = comm::make_sparse_halo_exchange(strategy, m);
  Outcome run;
  run.result = solvers::krylov_solve(s, m, *halo, o);
  halo->close();
  for (int i = 0; i < m.local_rows(); ++i)
    run.error = std::max(run.error, std::abs(s.x.origin()[i] - 1.0));
  MPI_Allreduce(MPI_IN_PLACE, &run.error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  m.free();
  return run;
}

solvers::KrylovOptions options(solvers::KrylovMethod method, precond::PcKind pc, double tol) {
  solvers::KrylovOptions o;
  o.method = method;
  o.tol = tol;
  o.max_iters = 3000;
  o.test_every = 2;
  o.pc.kind = pc;
  const bool pipelined =
      method == solvers::KrylovMethod::pgmres || method == solvers::KrylovMethod::pipebicgstab;
  o.allreduce =
      collectives::AllreduceAlgorithm{pipelined ? collectives::AllreduceAlgorithm::Kind::impi
                                                : collectives::AllreduceAlgorithm::Kind::mpi};
  return o;
}

std::vector<SerialCsr> matrices() {
  std::vector<SerialCsr> out;
  for (const double pe : {1.0, 100.0, 1000.0}) {
    out.push_back(reference::convection_diffusion(32, 2, pe));
    out.push_back(reference::convection_diffusion(10, 3, pe));
  }
  out.push_back(reference::grcar(200));
  return out;
}

const std::vector<solvers::KrylovMethod> nonsymmetric{
    solvers::KrylovMethod::gmres, solvers::KrylovMethod::fgmres, solvers::KrylovMethod::pgmres,
    solvers::KrylovMethod::bicgstab, solvers::KrylovMethod::pipebicgstab};

std::string label(const SerialCsr& a, solvers::KrylovMethod m, precond::PcKind pc) {
  return a.name + " " + std::string(solvers::krylov_method_name(m)) + " pc " +
         std::string(precond::pc_kind_name(pc));
}

}  // namespace

// Every method, every preconditioner, every matrix: converged, the true
// residual below the tolerance, x close to the solution. One exception:
// BiCGStab without a preconditioner on the most convection-dominated
// matrix (Pe = 1000) is not guaranteed to converge. Its minimal-residual
// step stalls (omega ~ 0.01) while ||r|| grows, and whether it recovers
// depends on rounding: on an Intel Xeon, pipebicgstab on 8 ranks grew to
// 4e10 x ||r0|| and stopped "diverged", where other rank counts and an AMD
// EPYC converged. There the solve must either converge or say that it
// failed (diverged or breakdown, with its detail, and a true residual that
// agrees).
TEST(Nonsymmetric, EveryMethodConvergesOnEveryMatrix) {
  constexpr double tol = 1e-8;
  for (const SerialCsr& a : matrices()) {
    for (const auto method : nonsymmetric) {
      for (const auto pc :
           {precond::PcKind::none, precond::PcKind::jacobi, precond::PcKind::ilu0}) {
        const Outcome run = solve(a, options(method, pc, tol));
        const std::string what = label(a, method, pc);
        const bool may_fail = pc == precond::PcKind::none &&
                              a.name.find("Pe=1000") != std::string::npos &&
                              (method == solvers::KrylovMethod::bicgstab ||
                               method == solvers::KrylovMethod::pipebicgstab);
        if (may_fail && !run.result.converged) {
          EXPECT_TRUE(run.result.reason == solvers::StopReason::diverged ||
                      run.result.reason == solvers::StopReason::breakdown)
              << what << ": " << solvers::stop_reason_name(run.result.reason);
          EXPECT_FALSE(run.result.detail.empty()) << what;
          EXPECT_GE(run.result.true_residual, tol) << what;
          continue;
        }
        EXPECT_TRUE(run.result.converged)
            << what << ": " << solvers::stop_reason_name(run.result.reason) << " "
            << run.result.detail;
        EXPECT_LT(run.result.true_residual, tol) << what;
        EXPECT_GT(run.result.iterations, 0) << what;
        EXPECT_LT(run.error, 1e-3) << what;
      }
    }
  }
}

// gmres --restart 30 with jacobi and none: the serial GMRES's count within
// 2 (the same method in another summation order; in fact equal). bicgstab:
// the serial BiCGStab's residual history over the first 5 iterations, to
// 1e-6 (the same method; later the rounding of the summation order grows:
// on Grcar 3e-5 by iteration 8, where the residual jumps to 15 ||b||); its
// count is compared with PETSc's KSPBCGS, within
// 5%, in tests/sparse/test_nonsymmetric.py. Counts against a serial loop
// would not be a fair test of BiCGStab: on the 2-D problem at Peclet 1 its
// residual hovers near the tolerance for a while, and the order of the sums
// alone moves the count (n = 24: 50 to 57 over 1 to 8 ranks here, 50 and 52
// for PETSc's own none and Jacobi, which are the same method there; n = 32:
// 69 here and in PETSc, 74 in the serial loop with Jacobi).
TEST(Nonsymmetric, IterationCountsMatchTheSerialReferences) {
  constexpr double tol = 1e-8;
  for (const SerialCsr& a : matrices()) {
    const std::vector<double> b = ones_rhs(a);
    for (const bool jacobi : {false, true}) {
      const auto pc = jacobi ? precond::PcKind::jacobi : precond::PcKind::none;
      const auto serial = reference::serial_gmres(a, b, 30, jacobi, tol, 3000);
      ASSERT_TRUE(serial.converged) << a.name;
      const Outcome gmres = solve(a, options(solvers::KrylovMethod::gmres, pc, tol));
      EXPECT_LE(std::abs(gmres.result.iterations - serial.iterations), 2)
          << label(a, solvers::KrylovMethod::gmres, pc) << ": " << gmres.result.iterations
          << " vs serial " << serial.iterations;
      // p(1)-GMRES is GMRES in exact arithmetic
      const Outcome pgmres = solve(a, options(solvers::KrylovMethod::pgmres, pc, tol));
      EXPECT_LE(std::abs(pgmres.result.iterations - serial.iterations),
                std::max<long>(2, serial.iterations / 20))
          << label(a, solvers::KrylovMethod::pgmres, pc) << ": " << pgmres.result.iterations
          << " vs serial " << serial.iterations;
      const auto sb = reference::serial_bicgstab(a, b, jacobi, tol, 3000);
      const Outcome bicg = solve(a, options(solvers::KrylovMethod::bicgstab, pc, tol));
      EXPECT_TRUE(bicg.result.converged) << a.name;
      if (world().rank() != 0) continue;  // the history is rank 0's
      const std::size_t n =
          std::min<std::size_t>({7, sb.history.size(), bicg.result.history.size()});
      for (std::size_t it = 0; it < n; ++it) {
        EXPECT_NEAR(bicg.result.history[it].residual, sb.history[it], 1e-6 * sb.history[it])
            << label(a, solvers::KrylovMethod::bicgstab, pc) << " iteration " << it;
      }
    }
  }
}

// A short restart: every cycle ends with the true residual, recorded, and
// the count matches the serial GMRES(5); fgmres with jacobi is gmres.
TEST(Nonsymmetric, RestartsRecordTheTrueResidual) {
  const SerialCsr a = reference::convection_diffusion(16, 2, 100.0);
  solvers::KrylovOptions o = options(solvers::KrylovMethod::gmres, precond::PcKind::jacobi, 1e-8);
  o.restart = 5;
  const Outcome run = solve(a, o);
  ASSERT_TRUE(run.result.converged) << run.result.detail;
  const auto serial = reference::serial_gmres(a, ones_rhs(a), 5, true, 1e-8, 3000);
  EXPECT_LE(std::abs(run.result.iterations - serial.iterations), 2);
  ASSERT_FALSE(run.result.restarts.empty());
  long previous = 0;
  for (const auto& r : run.result.restarts) {
    EXPECT_EQ(r.reason, solvers::RestartReason::cycle);
    EXPECT_EQ(r.iteration % 5, 0);
    EXPECT_GT(r.iteration, previous);
    previous = r.iteration;
    // the estimate of GMRES is the true residual of its iterate, up to rounding
    EXPECT_NEAR(r.true_residual, r.estimate, 1e-6 * r.estimate + 1e-12);
  }
  o.method = solvers::KrylovMethod::fgmres;
  const Outcome flexible = solve(a, o);
  EXPECT_EQ(flexible.result.iterations, run.result.iterations);
}

// A second Gram-Schmidt pass: always makes one per iteration, and so does
// delayed (each in the next iteration's reduction); never none.
TEST(Nonsymmetric, RefinementIsCountedAsAsked) {
  const SerialCsr a = reference::convection_diffusion(12, 2, 100.0);
  solvers::KrylovOptions o = options(solvers::KrylovMethod::gmres, precond::PcKind::none, 1e-8);
  o.refinement = solvers::CgsRefinement::always;
  const Outcome always = solve(a, o);
  EXPECT_TRUE(always.result.converged);
  EXPECT_EQ(always.result.refinements, always.result.iterations);
  o.refinement = solvers::CgsRefinement::never;
  const Outcome never = solve(a, o);
  EXPECT_TRUE(never.result.converged);
  EXPECT_EQ(never.result.refinements, 0);
  EXPECT_LE(std::abs(never.result.iterations - always.result.iterations), 2);
  o.refinement = solvers::CgsRefinement::delayed;
  for (const auto method : {solvers::KrylovMethod::gmres, solvers::KrylovMethod::fgmres}) {
    o.method = method;
    const Outcome delayed = solve(a, o);
    EXPECT_TRUE(delayed.result.converged);
    EXPECT_EQ(delayed.result.refinements, delayed.result.iterations);
    EXPECT_LE(std::abs(delayed.result.iterations - always.result.iterations), 2);
  }
}

// The pipelined methods keep their reduction in flight through the mat-vec.
TEST(Nonsymmetric, PipelinedMethodsHideTheirReductions) {
  const SerialCsr a = reference::convection_diffusion(10, 3, 100.0);
  for (const auto method : {solvers::KrylovMethod::pgmres, solvers::KrylovMethod::pipebicgstab}) {
    const Outcome run = solve(a, options(method, precond::PcKind::jacobi, 1e-8));
    ASSERT_TRUE(run.result.converged);
    // pgmres: every mat-vec of the cycle but the first; pipebicgstab: one of two
    EXPECT_GE(run.result.matvecs_behind_reduction, run.result.iterations / 2)
        << solvers::krylov_method_name(method);
    EXPECT_GT(run.result.phases.seconds(solvers::matvec_hidden_phase), 0.0);
  }
  const Outcome blocking =
      solve(a, options(solvers::KrylovMethod::gmres, precond::PcKind::none, 1e-8));
  EXPECT_EQ(blocking.result.matvecs_behind_reduction, 0);
}

// The same solves over every halo strategy: identical iterates.
TEST(Nonsymmetric, EveryHaloStrategyGivesTheSameIterations) {
  const SerialCsr a = reference::convection_diffusion(10, 3, 100.0);
  for (const auto method : nonsymmetric) {
    long first = -1;
    for (const auto s : {comm::HaloStrategy::waitall, comm::HaloStrategy::alltoallv,
                         comm::HaloStrategy::ialltoallv, comm::HaloStrategy::neighbor,
                         comm::HaloStrategy::persistent}) {
      const Outcome run = solve(a, options(method, precond::PcKind::ilu0, 1e-8), s);
      EXPECT_TRUE(run.result.converged) << comm::halo_strategy_name(s);
      if (first < 0) first = run.result.iterations;
      EXPECT_EQ(run.result.iterations, first)
          << solvers::krylov_method_name(method) << " " << comm::halo_strategy_name(s);
    }
  }
}

// Breakdowns. A skew-symmetric A makes (A r0, r0) = 0: BiCGStab restarts,
// meets the same zero and cannot proceed (exit code 3's reason "breakdown",
// naming the quantity and the iteration); GMRES solves it. A zero matrix
// gives GMRES a zero Krylov vector. A = I: a happy breakdown after one
// iteration, converged (the true residual meets the tolerance).
TEST(Nonsymmetric, BreakdownsAreReportedOrRecovered) {
  const SerialCsr k = reference::skew(64);
  for (const auto method : {solvers::KrylovMethod::bicgstab, solvers::KrylovMethod::pipebicgstab}) {
    const Outcome run = solve(k, options(method, precond::PcKind::none, 1e-8));
    EXPECT_FALSE(run.result.converged) << solvers::krylov_method_name(method);
    EXPECT_EQ(run.result.reason, solvers::StopReason::breakdown);
    EXPECT_NE(run.result.detail.find("cannot proceed"), std::string::npos) << run.result.detail;
    EXPECT_NE(run.result.detail.find("iteration"), std::string::npos) << run.result.detail;
  }
  // bicgstab restarted once before it gave up; pipebicgstab's start is where
  // (A r, r) = 0 shows, and a restart would start the same way
  EXPECT_FALSE(solve(k, options(solvers::KrylovMethod::bicgstab, precond::PcKind::none, 1e-8))
                   .result.restarts.empty());
  const Outcome gmres =
      solve(k, options(solvers::KrylovMethod::gmres, precond::PcKind::none, 1e-8));
  EXPECT_TRUE(gmres.result.converged) << gmres.result.detail;

  SerialCsr zero = reference::skew(8);
  std::fill(zero.val.begin(), zero.val.end(), 0.0);
  {
    sparse::DistMatrix m = distribute(zero);
    const auto [first, end] = my_rows(zero.n);
    const std::vector<double> b(static_cast<std::size_t>(end - first), 1.0);
    solvers::CsrSystem s = solvers::make_csr_system(m, b);
    auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
    for (const auto method : {solvers::KrylovMethod::gmres, solvers::KrylovMethod::fgmres,
                              solvers::KrylovMethod::pgmres}) {
      const solvers::SolveResult r =
          solvers::krylov_solve(s, m, *halo, options(method, precond::PcKind::none, 1e-8));
      EXPECT_EQ(r.reason, solvers::StopReason::breakdown) << solvers::krylov_method_name(method);
      EXPECT_NE(r.detail.find("zero Krylov vector"), std::string::npos) << r.detail;
    }
    halo->close();
    m.free();
  }

  SerialCsr identity = reference::skew(8);
  identity.col.clear();
  identity.val.clear();
  identity.ptr = {0};
  for (int i = 0; i < 8; ++i) {
    identity.col.push_back(i);
    identity.val.push_back(1.0);
    identity.ptr.push_back(i + 1);
  }
  for (const auto method : nonsymmetric) {
    const Outcome run = solve(identity, options(method, precond::PcKind::none, 1e-10));
    EXPECT_TRUE(run.result.converged) << solvers::krylov_method_name(method);
    EXPECT_LE(run.result.iterations, 1) << solvers::krylov_method_name(method);
    EXPECT_LT(run.error, 1e-12);
  }
}

// Bad input: --restart 0, a restart whose basis cannot fit, chebyshev with a
// nonsymmetric method; every rank throws InputError alike.
TEST(Nonsymmetric, BadOptionsAreRefused) {
  const SerialCsr a = reference::convection_diffusion(8, 2, 1.0);
  solvers::KrylovOptions o = options(solvers::KrylovMethod::gmres, precond::PcKind::none, 1e-8);
  o.restart = 0;
  EXPECT_THROW(solve(a, o), core::InputError);
  o.restart = 1000000000;  // 1e9 vectors of 64 rows and a 1e9-square Hessenberg matrix
  try {
    solve(a, o);
    ADD_FAILURE() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--restart 1000000000"), std::string::npos) << e.what();
  }
  o = options(solvers::KrylovMethod::bicgstab, precond::PcKind::none, 1e-8);
  o.pc.kind = precond::PcKind::chebyshev;
  EXPECT_THROW(solve(a, o), core::InputError);
}

// The symmetry check: symmetric matrices pass, convection-diffusion does not
// (on any number of ranks, its asymmetry spanning ranks), and one entry
// changed on the last rank is found; an explicit zero without its transpose
// is numerically symmetric, not structurally.
TEST(Symmetry, FindsWhatIsNotSymmetric) {
  {
    sparse::DistMatrix m = distribute(reference::convection_diffusion(12, 2, 0.0));
    const sparse::Symmetry s = sparse::check_symmetry(m);
    EXPECT_TRUE(s.symmetric());
    EXPECT_TRUE(s.structural);
    EXPECT_EQ(s.max_asymmetry, 0.0);
    m.free();
  }
  {
    sparse::DistMatrix m = distribute(reference::convection_diffusion(12, 3, 100.0));
    const sparse::Symmetry s = sparse::check_symmetry(m);
    EXPECT_FALSE(s.symmetric());
    EXPECT_TRUE(s.structural);
    EXPECT_GT(s.max_asymmetry, 0.1);
    m.free();
  }
  SerialCsr a = reference::convection_diffusion(12, 2, 0.0);
  // a_(n-1, n-2) changed by 1e-6 relative: found, on whichever rank owns it
  a.val[static_cast<std::size_t>(a.ptr[a.n - 1])] *= 1.0 + 1e-6;
  {
    sparse::DistMatrix m = distribute(a);
    const sparse::Symmetry s = sparse::check_symmetry(m);
    EXPECT_FALSE(s.symmetric());
    EXPECT_NEAR(s.max_asymmetry, 1e-6 / 4.0, 1e-9);  // |a_ij| = 1, max |a| = 4
    m.free();
  }
  // row 0 gets an explicit zero in the last column; a_(n-1, 0) is not stored
  SerialCsr b = reference::convection_diffusion(12, 2, 0.0);
  b.col.insert(b.col.begin() + b.ptr[1], b.n - 1);
  b.val.insert(b.val.begin() + b.ptr[1], 0.0);
  for (std::size_t i = 1; i < b.ptr.size(); ++i) ++b.ptr[i];
  {
    sparse::DistMatrix m = distribute(b);
    const sparse::Symmetry s = sparse::check_symmetry(m);
    EXPECT_TRUE(s.symmetric());
    EXPECT_FALSE(s.structural);
    EXPECT_EQ(s.unmatched, 1);
    m.free();
  }
  // Two uncoupled blocks: a symmetric one times 1e12 and a nonsymmetric one. Against
  // max |a| the second's asymmetry is 1e-12, below the tolerance (it was called
  // symmetric, and the CG family ran to --max-iters); against sqrt(|a_ii a_jj|), as
  // Jacobi or --scale see it, it is its own. A symmetric matrix scaled so stays so.
  for (const double peclet : {100.0, 0.0}) {
    const SerialCsr big = reference::convection_diffusion(6, 2, 0.0);
    const SerialCsr small = reference::convection_diffusion(6, 2, peclet);
    SerialCsr c;
    c.n = big.n + small.n;
    for (const SerialCsr* block : {&big, &small}) {
      const std::int64_t offset = block == &big ? 0 : big.n;
      for (std::int64_t e = 0; e < block->ptr[block->n]; ++e) {
        c.col.push_back(block->col[e] + offset);
        c.val.push_back(block->val[e] * (block == &big ? 1e12 : 1.0));
      }
      for (std::int64_t i = 1; i <= block->n; ++i)
        c.ptr.push_back(block->ptr[i] + c.ptr.back() - block->ptr[i - 1]);
    }
    sparse::DistMatrix m = distribute(c);
    const sparse::Symmetry s = sparse::check_symmetry(m);
    EXPECT_LT(s.max_asymmetry, s.tolerance);
    EXPECT_EQ(s.symmetric(), peclet == 0.0);
    if (peclet > 0.0) {
      EXPECT_GT(s.max_scaled_asymmetry, 0.1);
    } else {
      EXPECT_EQ(s.max_scaled_asymmetry, 0.0);
    }
    m.free();
  }
}

namespace {

/// What a preconditioner sees of a distributed matrix: its rows with global
/// columns, and vectors as one-row fields.
class MatrixRows final : public precond::PcOperator {
 public:
  explicit MatrixRows(const sparse::DistMatrix& m) : m_(m) {}
  const par::Comm& comm() const override { return m_.comm(); }
  grid::Field make_vector() const override {
    grid::Field f({m_.local_rows(), 1, 1}, 0);
    f.fill(0.0);
    return f;
  }
  void apply(grid::Field&, grid::Field&) override {}
  ops::Scaling inverse_diagonal() const override { return {}; }
  precond::AssembledRows assemble() override {
    precond::AssembledRows rows;
    rows.first_row = m_.first_row();
    rows.global_rows = m_.global_rows();
    for (int i = 0; i < m_.local_rows(); ++i) {
      for (std::int64_t e = m_.row_ptr()[i]; e < m_.row_ptr()[i + 1]; ++e) {
        const int c = m_.col()[e];
        rows.col.push_back(c < m_.local_rows()
                               ? m_.first_row() + c
                               : m_.ghost_globals()[static_cast<std::size_t>(c - m_.local_rows())]);
        rows.val.push_back(m_.val()[e]);
      }
      rows.row_ptr.push_back(static_cast<std::int64_t>(rows.col.size()));
    }
    return rows;
  }
  void gather(const grid::Field& v, std::span<double> out) const override {
    std::copy(v.origin(), v.origin() + m_.local_rows(), out.begin());
  }
  void scatter(std::span<const double> in, grid::Field& v) const override {
    std::copy(in.begin(), in.end(), v.origin());
  }

 private:
  const sparse::DistMatrix& m_;
};

}  // namespace

// Block-Jacobi ILU(0) against its definition, made densely here on this
// rank's block (Saad's Algorithm 10.4: for i, for k < i in row i's pattern,
// a_ik /= a_kk, then a_ij -= a_ik a_kj for j > k in row i's pattern), then
// L U z = r solved densely: the preconditioner's z to 1e-12.
TEST(Ilu0, IsTheIncompleteFactorisationOfEachBlock) {
  for (const SerialCsr& a : {reference::convection_diffusion(9, 2, 100.0), reference::grcar(50)}) {
    sparse::DistMatrix m = distribute(a);
    MatrixRows op(m);
    precond::PcSettings settings;
    settings.kind = precond::PcKind::ilu0;
    auto pc = precond::make_preconditioner(settings, op);
    const auto [first, end] = my_rows(a.n);
    const int n = static_cast<int>(end - first);
    grid::Field r = op.make_vector();
    grid::Field z = op.make_vector();
    for (int i = 0; i < n; ++i) r.origin()[i] = std::cos(0.3 * static_cast<double>(first + i));
    pc->apply(r, z);
    // the dense reference on the block
    std::vector<std::vector<double>> lu(n, std::vector<double>(n, 0.0));
    std::vector<std::vector<bool>> pattern(n, std::vector<bool>(n, false));
    for (int i = 0; i < n; ++i)
      for (std::int64_t e = a.ptr[first + i]; e < a.ptr[first + i + 1]; ++e) {
        const std::int64_t c = a.col[e] - first;
        if (c < 0 || c >= n) continue;
        lu[i][c] = a.val[e];
        pattern[i][c] = true;
      }
    for (int i = 1; i < n; ++i)
      for (int k = 0; k < i; ++k) {
        if (!pattern[i][k]) continue;
        lu[i][k] /= lu[k][k];
        for (int j = k + 1; j < n; ++j)
          if (pattern[i][j]) lu[i][j] -= lu[i][k] * lu[k][j];
      }
    std::vector<double> y(n);
    for (int i = 0; i < n; ++i) {
      y[i] = r.origin()[i];
      for (int j = 0; j < i; ++j) y[i] -= lu[i][j] * y[j];
    }
    for (int i = n - 1; i >= 0; --i) {
      for (int j = i + 1; j < n; ++j) y[i] -= lu[i][j] * y[j];
      y[i] /= lu[i][i];
    }
    double worst = 0.0;
    double biggest = 0.0;
    for (int i = 0; i < n; ++i) {
      worst = std::max(worst, std::abs(z.origin()[i] - y[i]));
      biggest = std::max(biggest, std::abs(y[i]));
    }
    EXPECT_LE(worst, 1e-12 * biggest) << a.name;
    EXPECT_EQ(pc->report().applies, 1);
    pc->free();
    m.free();
  }
}

// A zero pivot is refused on every rank alike.
TEST(Ilu0, RefusesAZeroPivot) {
  sparse::DistMatrix m = distribute(reference::skew(16));  // a zero diagonal
  MatrixRows op(m);
  precond::PcSettings settings;
  settings.kind = precond::PcKind::ilu0;
  EXPECT_THROW((void)precond::make_preconditioner(settings, op), core::InputError);
  m.free();
}
