// Halo exchange on P ranks: after an exchange, every halo point that lies in
// a neighbour's block holds that neighbour's value, for faces only and for
// faces, edges and corners, with halo widths 1 and 2.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

#include "asyncsolve/comm/halo_exchange.hpp"

using namespace asyncsolve;
using grid::Int3;

namespace {

double tag_value(int gi, int gj, int gk) { return gi + 1000.0 * gj + 1.0e6 * gk; }

void check_exchange(comm::Neighbourhood neighbourhood, int width, const Int3& global) {
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  grid::DecompositionSpec spec;
  spec.global = global;
  grid::Decomposition d = grid::Decomposition::create(world, spec);
  grid::Field f(d.local(), width);
  f.fill(-1.0);
  const Int3& n = d.local();
  const Int3& o = d.offset();
  for (int k = 0; k < n[2]; ++k)
    for (int j = 0; j < n[1]; ++j)
      for (int i = 0; i < n[0]; ++i) f(i, j, k) = tag_value(o[0] + i, o[1] + j, o[2] + k);

  auto halo = comm::make_halo_exchange("waitall", d, f, neighbourhood);
  halo->exchange(f);
  halo->exchange(f);  // a second exchange reuses the buffers

  long checked = 0;
  for (int k = -width; k < n[2] + width; ++k)
    for (int j = -width; j < n[1] + width; ++j)
      for (int i = -width; i < n[0] + width; ++i) {
        const Int3 p{i, j, k};
        Int3 dir{};
        int outside = 0;
        bool in_domain = true;
        for (int a = 0; a < 3; ++a) {
          dir[a] = p[a] < 0 ? -1 : (p[a] >= n[a] ? 1 : 0);
          outside += std::abs(dir[a]);
          const int g = o[a] + p[a];
          in_domain = in_domain && g >= 0 && g < d.global()[a];
        }
        if (outside == 0) continue;
        const bool expected_filled = in_domain && d.neighbour(dir) != MPI_PROC_NULL &&
                                     (neighbourhood == comm::Neighbourhood::full || outside == 1);
        if (expected_filled) {
          ASSERT_EQ(f(i, j, k), tag_value(o[0] + i, o[1] + j, o[2] + k))
              << "halo point " << i << "," << j << "," << k << " on rank " << d.rank();
          ++checked;
        } else {
          ASSERT_EQ(f(i, j, k), -1.0) << "untouched halo point " << i << "," << j << "," << k;
        }
      }
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks > 1) {
    long total = checked;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_GT(total, 0);
  }
  const int expected_messages = [&] {
    int m = 0;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int nz = std::abs(dx) + std::abs(dy) + std::abs(dz);
          if (nz == 0 || (neighbourhood == comm::Neighbourhood::faces && nz != 1)) continue;
          if (d.neighbour(Int3{dx, dy, dz}) != MPI_PROC_NULL) ++m;
        }
    return m;
  }();
  EXPECT_EQ(halo->messages_per_exchange(), expected_messages);
  halo.reset();
  d.free();
}

}  // namespace

TEST(HaloExchange, FacesWidthOne) { check_exchange(comm::Neighbourhood::faces, 1, {13, 11, 9}); }
TEST(HaloExchange, FullWidthOne) { check_exchange(comm::Neighbourhood::full, 1, {13, 11, 9}); }
TEST(HaloExchange, FullWidthTwo) { check_exchange(comm::Neighbourhood::full, 2, {17, 16, 18}); }
