// The decomposition on P ranks: blocks tile the global grid, neighbours are
// mutual, and the physical boundary is MPI_PROC_NULL.
#include <gtest/gtest.h>
#include <mpi.h>

#include "asyncsolve/grid/decomposition.hpp"

using namespace asyncsolve;
using grid::Face;
using grid::Int3;

namespace {

void check_decomposition(const grid::DecompositionSpec& spec) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  grid::Decomposition d = grid::Decomposition::create(world, spec);
  const MPI_Comm comm = d.comm().get();
  EXPECT_EQ(d.rank(), world.rank()) << "no reordering";
  EXPECT_EQ(core::product(d.dims()), world.size());

  // Blocks tile the grid: local point counts add up, and along each axis the
  // blocks of one process row add up to the global extent.
  long long points = core::product(d.local());
  MPI_Allreduce(MPI_IN_PLACE, &points, 1, MPI_LONG_LONG, MPI_SUM, comm);
  EXPECT_EQ(points, core::product(d.global()));
  for (int a = 0; a < 3; ++a) {
    EXPECT_GE(d.local()[a], 1);
    EXPECT_LE(d.offset()[a] + d.local()[a], d.global()[a]);
  }

  for (const Face f : grid::all_faces) {
    const int a = grid::axis(f);
    const bool at_edge = grid::is_high(f) ? d.coords()[a] == d.dims()[a] - 1 : d.coords()[a] == 0;
    EXPECT_EQ(d.is_physical_boundary(f), at_edge);
    EXPECT_EQ(d.is_physical_boundary(f), d.neighbour(f) == MPI_PROC_NULL);
    // Tell the neighbour across f who I am and where my block ends; it must
    // see me across the opposite face and its block must continue mine.
    int mine[2] = {d.rank(), grid::is_high(f) ? d.offset()[a] + d.local()[a] : d.offset()[a]};
    int theirs[2] = {-1, -1};
    MPI_Sendrecv(mine, 2, MPI_INT, d.neighbour(f), static_cast<int>(f), theirs, 2, MPI_INT,
                 d.neighbour(grid::opposite(f)), static_cast<int>(f), comm, MPI_STATUS_IGNORE);
    const Face from = grid::opposite(f);
    if (!d.is_physical_boundary(from)) {
      EXPECT_EQ(theirs[0], d.neighbour(from));
      const int my_edge = grid::is_high(from) ? d.offset()[a] + d.local()[a] : d.offset()[a];
      EXPECT_EQ(theirs[1], my_edge) << "blocks must be contiguous across faces";
    }
  }
  // Face neighbours agree with the 27-direction table.
  EXPECT_EQ(d.neighbour(Int3{1, 0, 0}), d.neighbour(Face::x_hi));
  EXPECT_EQ(d.neighbour(Int3{0, -1, 0}), d.neighbour(Face::y_lo));
  EXPECT_EQ(d.neighbour(Int3{0, 0, 0}), d.rank());
  d.free();
}

}  // namespace

TEST(Decomposition, WeakScaling) {
  grid::DecompositionSpec spec;
  spec.local = Int3{4, 3, 2};
  check_decomposition(spec);
}

TEST(Decomposition, UnevenGlobalGrid) {
  grid::DecompositionSpec spec;
  spec.global = Int3{13, 11, 9};
  check_decomposition(spec);
}

TEST(Decomposition, ForcedSlabs) {
  int p = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  grid::DecompositionSpec spec;
  spec.global = Int3{8, 9, 10};
  spec.dims = Int3{1, p, 1};
  check_decomposition(spec);
}
