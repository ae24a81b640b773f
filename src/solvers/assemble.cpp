#include "asyncsolve/solvers/assemble.hpp"

#include <mpi.h>

#include <array>

#include "asyncsolve/par/check.hpp"
#include "asyncsolve/solvers/krylov.hpp"

namespace asyncsolve::solvers {
namespace {

/// The block of `parts` (grid::block_range's split of n) that holds point g.
int part_of(int g, int n, int parts) {
  const int base = n / parts;
  const int extra = n % parts;
  const int big = extra * (base + 1);
  return g < big ? g / (base + 1) : extra + (g - big) / base;
}

}  // namespace

AssembledSystem assemble(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         double shift) {
  const par::Comm& comm = decomposition.comm();
  const int ranks = comm.size();
  const grid::Int3& n = decomposition.local();
  const grid::Int3& global = decomposition.global();
  const grid::Int3& dims = decomposition.dims();
  // Every rank's block size, and so its first global row.
  std::vector<int> sizes(static_cast<std::size_t>(3 * ranks));
  par::check_mpi(MPI_Allgather(n.data(), 3, MPI_INT, sizes.data(), 3, MPI_INT, comm.get()),
                 "MPI_Allgather");
  std::vector<std::int64_t> first(static_cast<std::size_t>(ranks) + 1, 0);
  for (std::size_t r = 0; r < static_cast<std::size_t>(ranks); ++r)
    first[r + 1] =
        first[r] + static_cast<std::int64_t>(sizes[3 * r]) * sizes[3 * r + 1] * sizes[3 * r + 2];

  // The global row of global grid point g (inside the grid).
  const grid::Int3& off = decomposition.offset();
  const int me = comm.rank();
  const auto row_of = [&](const grid::Int3& g) {
    grid::Int3 mine{};
    bool own = true;
    for (int a = 0; a < 3; ++a) {
      mine[a] = g[a] - off[a];
      own = own && mine[a] >= 0 && mine[a] < n[a];
    }
    if (own)
      return first[me] + mine[0] + static_cast<std::int64_t>(n[0]) * (mine[1] + n[1] * mine[2]);
    grid::Int3 coords{};
    grid::Int3 local{};
    for (int a = 0; a < 3; ++a) {
      coords[a] = part_of(g[a], global[a], dims[a]);
      local[a] = g[a] - grid::block_range(global[a], dims[a], coords[a]).begin;
    }
    int owner = 0;
    par::check_mpi(MPI_Cart_rank(comm.get(), coords.data(), &owner), "MPI_Cart_rank");
    const int* s = &sizes[3 * static_cast<std::size_t>(owner)];
    return first[owner] + local[0] + static_cast<std::int64_t>(s[0]) * (local[1] + s[1] * local[2]);
  };

  const bool full = problem.stencil_points() == 27;
  const double diagonal = (full ? 26.0 : 6.0) + shift;
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  for (int k = 0; k < n[2]; ++k) {
    for (int j = 0; j < n[1]; ++j) {
      for (int i = 0; i < n[0]; ++i) {
        const grid::Int3 p{off[0] + i, off[1] + j, off[2] + k};
        for (int dz = -1; dz <= 1; ++dz) {
          for (int dy = -1; dy <= 1; ++dy) {
            for (int dx = -1; dx <= 1; ++dx) {
              const int distance = (dx != 0) + (dy != 0) + (dz != 0);
              if (!full && distance > 1) continue;
              const grid::Int3 q{p[0] + dx, p[1] + dy, p[2] + dz};
              bool inside = true;
              for (int a = 0; a < 3; ++a) inside = inside && q[a] >= 0 && q[a] < global[a];
              if (!inside) continue;  // a Dirichlet point: eliminated into b
              col.push_back(row_of(q));
              val.push_back(distance == 0 ? diagonal : -1.0);
            }
          }
        }
        row_ptr.push_back(static_cast<std::int64_t>(col.size()));
      }
    }
  }
  AssembledSystem out;
  out.matrix = sparse::DistMatrix::from_rows(comm, first[ranks], {row_ptr, col, val});
  // b and x0 exactly as the matrix-free path builds them.
  const KrylovSystem system = make_krylov_system(problem, decomposition, shift);
  for (int k = 0; k < n[2]; ++k) {
    for (int j = 0; j < n[1]; ++j) {
      for (int i = 0; i < n[0]; ++i) {
        out.b.push_back(system.b(i, j, k));
        out.x0.push_back(system.x(i, j, k));
      }
    }
  }
  return out;
}

}  // namespace asyncsolve::solvers
