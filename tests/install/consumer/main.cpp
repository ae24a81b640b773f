// Solves the ones problem through the installed C++ API and checks u = 1.
#include <mpi.h>

#include <cstdio>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/solvers/jacobi.hpp"
#include "asyncsolve/version.hpp"

int main(int argc, char** argv) {
  using namespace asyncsolve;
  par::Environment env(argc, argv, par::ThreadLevel::single);
  const auto world = par::Comm::view(MPI_COMM_WORLD);
  grid::DecompositionSpec spec;
  spec.global = grid::Int3{10, 9, 8};
  auto decomposition = grid::Decomposition::create(world, spec);
  const auto problem = grid::make_problem("ones", {});
  grid::Field u(decomposition.local(), 1);
  grid::apply_initial_guess(*problem, u);
  grid::apply_boundary(*problem, decomposition, u);
  auto halo = comm::make_halo_exchange("waitall", decomposition, u, comm::Neighbourhood::faces);
  auto sum = collectives::make_allreduce("mpi", decomposition.comm());
  solvers::JacobiOptions options;
  options.tol = 1e-8;
  const auto r = solvers::jacobi_sync(*problem, decomposition, u, *halo, *sum, options);
  const bool ok = r.converged && r.error_inf && *r.error_inf < 1e-5;
  if (world.is_root()) std::printf("asyncsolve %s: %s\n", version, ok ? "ok" : "FAILED");
  halo.reset();
  sum.reset();
  decomposition.free();
  env.finalize();
  return ok ? 0 : 1;
}
