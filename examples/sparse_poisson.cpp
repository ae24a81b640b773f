// sparse_poisson: a distributed sparse matrix built from one's own arrays,
// solved with asyncsolve's PCG-Overlap and checked.
//
// Each rank owns a contiguous range of the rows of the 5-point Poisson
// matrix on an N x N grid, in CSR form with global column indices (what an
// application that assembles its own matrix has). asyncsolve discovers the
// ghost columns and the neighbour plan (sparse::DistMatrix::from_rows),
// splits the rows into interior and boundary ones (ops::CsrOperator, in
// solvers::make_csr_system), and runs any of its solvers with any halo
// strategy. b = A * 1, so the solution is all ones: the program exits
// non-zero unless it finds it.
//
//   mpirun -np 4 ./sparse_poisson [N]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/solvers/csr_system.hpp"
#include "asyncsolve/solvers/krylov.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

int main(int argc, char** argv) {
  using namespace asyncsolve;
  par::Environment env(argc, argv, par::ThreadLevel::single);
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  const long long n = argc > 1 ? std::atoll(argv[1]) : 64;
  const long long rows = n * n;

  // This rank's rows: a balanced contiguous range, as the application chooses.
  const long long first = rows * world.rank() / world.size();
  const long long last = rows * (world.rank() + 1) / world.size();
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  std::vector<double> b;
  for (long long i = first; i < last; ++i) {
    const long long x = i % n;
    const long long y = i / n;
    double row_sum = 0.0;
    const auto add = [&](long long j, double v) {
      col.push_back(j);
      val.push_back(v);
      row_sum += v;
    };
    if (y > 0) add(i - n, -1.0);
    if (x > 0) add(i - 1, -1.0);
    add(i, 4.0);
    if (x < n - 1) add(i + 1, -1.0);
    if (y < n - 1) add(i + n, -1.0);
    row_ptr.push_back(static_cast<std::int64_t>(col.size()));
    b.push_back(row_sum);  // b = A * 1
  }

  // Collective: ghosts, neighbour plan, metrics.
  sparse::DistMatrix a = sparse::DistMatrix::from_rows(world, rows, {row_ptr, col, val});
  solvers::CsrSystem system = solvers::make_csr_system(a, b);  // x0 = 0
  auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::neighbor, a);
  solvers::KrylovOptions options;
  options.method = solvers::KrylovMethod::pcg_overlap;
  options.allreduce =
      collectives::parse_allreduce("impi");  // each inner product behind independent work
  options.tol = 1e-10;
  const solvers::SolveResult r = solvers::krylov_solve(system, a, *halo, options);

  double error = 0.0;
  for (int i = 0; i < a.local_rows(); ++i)
    error = std::max(error, std::abs(system.x.origin()[i] - 1.0));
  MPI_Allreduce(MPI_IN_PLACE, &error, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const bool ok = r.converged && r.true_residual < 1e-9 && error < 1e-7;
  if (world.is_root()) {
    std::printf(
        "sparse_poisson: %lld rows on %d ranks, edge cut %lld, %d iterations, true "
        "residual %.3e, max |x - 1| = %.3e: %s\n",
        rows, world.size(), static_cast<long long>(a.metrics().edge_cut),
        static_cast<int>(r.iterations), r.true_residual, error, ok ? "ok" : "FAILED");
  }
  // Collective frees at a point every rank reaches.
  halo->close();
  a.free();
  env.finalize();
  return ok ? 0 : 1;
}
