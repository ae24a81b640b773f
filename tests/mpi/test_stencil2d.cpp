// Stencil2D (kernels/stencil2d.hpp): every variant of every transport under test
// reproduces the serial filter (kernels::filter2d_serial) on the periodic global
// domain, for radius 1, 2, 3 and block sizes from radius + 1 up; the serial
// filter itself matches a naive periodic convolution; a corrupted halo
// corner (the test hook) is caught at the expected point. Built twice: for
// mpi and rma under mpiexec, and with ASYNCSOLVE_TEST_SHMEM for shmem under
// oshrun.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>
#include <string>
#include <vector>

#include "asyncsolve/kernels/filter2d.hpp"
#include "asyncsolve/kernels/stencil2d.hpp"
#include "asyncsolve/par/comm.hpp"

namespace {

using namespace asyncsolve;

#ifdef ASYNCSOLVE_TEST_SHMEM
const std::vector<std::string> kTransports{"shmem"};
#else
const std::vector<std::string> kTransports{"mpi", "rma"};
#endif

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// A naive twin of kernels::filter2d_serial: the same sum, written directly with
/// periodic indices and a fresh array per iteration.
std::vector<double> naive_filter(int r, int sx, int sy, long iterations) {
  const kernels::Filter2d f(r);
  std::vector<double> u(static_cast<std::size_t>(sx) * sy);
  for (int y = 0; y < sy; ++y)
    for (int x = 0; x < sx; ++x) u[y * sx + x] = kernels::stencil2d_initial(x, y);
  for (long it = 0; it < iterations; ++it) {
    std::vector<double> next(u.size());
    for (int y = 0; y < sy; ++y) {
      for (int x = 0; x < sx; ++x) {
        double s = 0.0;
        for (int l = -r; l <= r; ++l)
          for (int k = -r; k <= r; ++k)
            s += f.weight(k, l) * u[((y + l) % sy + sy) % sy * sx + ((x + k) % sx + sx) % sx];
        next[y * sx + x] = s;
      }
    }
    u.swap(next);
  }
  return u;
}

TEST(Filter2d, WeightsSumToOneAndAreNotSymmetric) {
  for (int r = 1; r <= 3; ++r) {
    const kernels::Filter2d f(r);
    double sum = 0.0;
    bool mirror_x = true, mirror_y = true, transpose = true;
    for (int l = -r; l <= r; ++l) {
      for (int k = -r; k <= r; ++k) {
        EXPECT_GT(f.weight(k, l), 0.0);
        sum += f.weight(k, l);
        mirror_x = mirror_x && f.weight(k, l) == f.weight(-k, l);
        mirror_y = mirror_y && f.weight(k, l) == f.weight(k, -l);
        transpose = transpose && f.weight(k, l) == f.weight(l, k);
      }
    }
    EXPECT_NEAR(sum, 1.0, 1e-14);
    EXPECT_FALSE(mirror_x);
    EXPECT_FALSE(mirror_y);
    EXPECT_FALSE(transpose);
  }
}

TEST(Filter2d, SerialMatchesNaiveConvolution) {
  for (int r = 1; r <= 3; ++r) {
    for (const auto& [sx, sy] : {std::pair{7, 5}, std::pair{2, 3}, std::pair{12, 12}}) {
      const auto fast = kernels::filter2d_serial(kernels::Filter2d(r), sx, sy, 3);
      const auto slow = naive_filter(r, sx, sy, 3);
      ASSERT_EQ(fast.size(), slow.size());
      for (std::size_t i = 0; i < fast.size(); ++i) {
        ASSERT_NEAR(fast[i], slow[i], 1e-13) << "r=" << r << " " << sx << "x" << sy << " i=" << i;
      }
    }
  }
}

TEST(Stencil2dGrid, NeighboursMatchMpiCartesianTopology) {
  const auto comm = world();
  const auto g = kernels::Stencil2dGrid::create(comm.rank(), comm.size());
  EXPECT_EQ(g.px * g.py, comm.size());
  int dims[2] = {g.px, g.py};
  int periods[2] = {1, 1};
  MPI_Comm cart = MPI_COMM_NULL;
  ASSERT_EQ(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart), MPI_SUCCESS);
  int coords[2] = {0, 0};
  MPI_Cart_coords(cart, comm.rank(), 2, coords);
  EXPECT_EQ(coords[0], g.cx);
  EXPECT_EQ(coords[1], g.cy);
  for (int d = 0; d < kernels::stencil2d_directions; ++d) {
    int c[2] = {g.cx + kernels::dir2d_dx(d), g.cy + kernels::dir2d_dy(d)};
    int expected = -1;
    MPI_Cart_rank(cart, c, &expected);  // periodic: wraps
    EXPECT_EQ(g.neighbour[d], expected) << "direction " << d;
    EXPECT_EQ(kernels::dir2d_opposite(kernels::dir2d_opposite(d)), d);
    EXPECT_EQ(kernels::dir2d_dx(kernels::dir2d_opposite(d)), -kernels::dir2d_dx(d));
  }
  MPI_Comm_free(&cart);
}

/// Runs `variant`, validates after `first` iterations and then after
/// `second` more (the counters carry on across run() calls), then after a
/// reset() and `first` again.
void expect_validates(const std::string& transport, const std::string& variant, int local,
                      int radius) {
  const auto comm = world();
  kernels::Stencil2dSpec spec;
  spec.local = local;
  spec.radius = radius;
  auto s = kernels::make_stencil2d(transport, variant, comm, spec);
  const std::string what = transport + "/" + variant + " local " + std::to_string(local) +
                           " radius " + std::to_string(radius);
  const long first = 3;
  const long second = 2;
  const auto t = s->run(first);
  EXPECT_EQ(t.iterations, first);
  EXPECT_GE(t.total_s, t.filter_s);
  auto check =
      kernels::stencil2d_compare(comm, s->grid(), spec, s->field(),
                                 kernels::stencil2d_reference(comm, s->grid(), spec, first));
  EXPECT_TRUE(check.ok) << what << ": first wrong point (" << check.gx << ", " << check.gy
                        << ") got " << check.got << " expected " << check.expected;
  s->run(second);
  check = kernels::stencil2d_compare(
      comm, s->grid(), spec, s->field(),
      kernels::stencil2d_reference(comm, s->grid(), spec, first + second));
  EXPECT_TRUE(check.ok) << what << " (second run): (" << check.gx << ", " << check.gy << ")";
  s->reset();
  s->run(first);
  check = kernels::stencil2d_compare(comm, s->grid(), spec, s->field(),
                                     kernels::stencil2d_reference(comm, s->grid(), spec, first));
  EXPECT_TRUE(check.ok) << what << " (after reset): (" << check.gx << ", " << check.gy << ")";
  EXPECT_EQ(s->halo_bytes(), 8L * (4L * local * radius + 4L * radius * radius));
  s->free();
  s->free();  // idempotent
}

TEST(Stencil2d, EveryVariantMatchesTheSerialFilter) {
  for (const auto& transport : kTransports) {
    for (const auto& variant : kernels::stencil2d_variant_names(transport)) {
      for (int radius = 1; radius <= 3; ++radius) {
        // A block just wider than the halo (no inner region), one with an
        // inner region of one point, and a larger one.
        for (const int local : {radius + 1, 2 * radius + 1, 9}) {
          expect_validates(transport, variant, local, radius);
        }
      }
    }
  }
}

TEST(Stencil2d, CorruptedCornerIsCaughtAtTheFirstAffectedPoint) {
  const auto comm = world();
  for (const auto& transport : kTransports) {
    for (const auto& variant : kernels::stencil2d_variant_names(transport)) {
      for (const int radius : {1, 3}) {
        kernels::Stencil2dSpec spec;
        spec.local = 8;
        spec.radius = radius;
        spec.corrupt_corner = true;
        auto s = kernels::make_stencil2d(transport, variant, comm, spec);
        s->run(1);
        const auto g = s->grid();
        const auto check = kernels::stencil2d_compare(
            comm, g, spec, s->field(), kernels::stencil2d_reference(comm, g, spec, 1));
        const std::string what = transport + "/" + variant + " radius " + std::to_string(radius);
        EXPECT_FALSE(check.ok) << what;
        // The corrupted halo point (n, n) of the last rank (coordinates
        // px - 1, py - 1) feeds its outputs within r of it: the first in
        // row-major order is (n - r, n - r) of that block, off by w(r, r),
        // and the r x r outputs within r of it are wrong.
        EXPECT_EQ(check.gx, (g.px - 1) * 8L + 8 - radius) << what;
        EXPECT_EQ(check.gy, (g.py - 1) * 8L + 8 - radius) << what;
        EXPECT_EQ(check.wrong_points, static_cast<long>(radius) * radius) << what;
        EXPECT_NEAR(check.got - check.expected, kernels::Filter2d(radius).weight(radius, radius),
                    1e-12)
            << what;
        s->free();
      }
    }
  }
}

TEST(Stencil2d, RejectsBadNamesAndSpecs) {
  const auto comm = world();
  kernels::Stencil2dSpec spec;
  spec.local = 4;
  spec.radius = 4;
  EXPECT_THROW(kernels::make_stencil2d(
                   kTransports.front(),
                   kernels::stencil2d_variant_names(kTransports.front()).front(), comm, spec),
               std::invalid_argument);
  spec.radius = 1;
  EXPECT_THROW(kernels::make_stencil2d("mpi", "put", comm, spec), std::invalid_argument);
  EXPECT_THROW(kernels::make_stencil2d("rma", "trivial", comm, spec), std::invalid_argument);
  EXPECT_THROW(kernels::make_stencil2d("tcp", "put", comm, spec), std::invalid_argument);
  EXPECT_TRUE(kernels::is_stencil2d_variant("shmem", "get1"));
  EXPECT_FALSE(kernels::is_stencil2d_variant("mpi", "get1"));
  EXPECT_FALSE(kernels::is_stencil2d_variant("tcp", "get1"));
  EXPECT_TRUE(kernels::is_stencil2d_variant(kernels::Stencil2dTransport::mpi,
                                            kernels::Stencil2dVariant::halo));
  EXPECT_FALSE(kernels::is_stencil2d_variant(kernels::Stencil2dTransport::rma,
                                             kernels::Stencil2dVariant::halo));
  EXPECT_THROW(kernels::make_stencil2d(kernels::Stencil2dTransport::mpi,
                                       kernels::Stencil2dVariant::put, comm, spec),
               std::invalid_argument);
}

}  // namespace
