#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "asyncsolve/grid/field.hpp"

using namespace asyncsolve::grid;

TEST(Field, LayoutIsXFastestWithHalo) {
  Field f({4, 3, 2}, 1);
  EXPECT_EQ(f.stride_y(), 6);
  EXPECT_EQ(f.stride_z(), 6 * 5);
  EXPECT_EQ(f.storage_size(), 6u * 5u * 4u);
  EXPECT_EQ(f.index(1, 0, 0) - f.index(0, 0, 0), 1);
  // The first stored value is the corner halo point (-1, -1, -1).
  EXPECT_EQ(&f(-1, -1, -1), f.storage().data());
  EXPECT_EQ(&f(4, 3, 2), f.storage().data() + f.storage_size() - 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.storage().data()) % 64, 0u);
}

TEST(Field, StartsAtZeroAndFillsInteriorOnly) {
  Field f({3, 3, 3}, 1);
  for (double v : f.storage()) EXPECT_EQ(v, 0.0);
  f.fill_interior(2.0);
  EXPECT_EQ(f(0, 0, 0), 2.0);
  EXPECT_EQ(f(2, 2, 2), 2.0);
  EXPECT_EQ(f(-1, 0, 0), 0.0);
  EXPECT_EQ(f(0, 3, 0), 0.0);
  double sum = std::accumulate(f.storage().begin(), f.storage().end(), 0.0);
  EXPECT_EQ(sum, 2.0 * 27);
}

TEST(Field, FaceBoxes) {
  Field f({5, 4, 3}, 1);
  const Box s = f.send_box(Face::x_hi);
  EXPECT_EQ(s.lo, (Int3{4, 0, 0}));
  EXPECT_EQ(s.hi, (Int3{5, 4, 3}));
  const Box r = f.recv_box(Face::z_lo);
  EXPECT_EQ(r.lo, (Int3{0, 0, -1}));
  EXPECT_EQ(r.hi, (Int3{5, 4, 0}));
  EXPECT_EQ(f.send_box(Face::y_lo).size(), 5 * 3);
}

TEST(Field, EdgeAndCornerBoxes) {
  Field f({5, 4, 3}, 2);
  const Box corner = f.recv_box(Int3{1, -1, 1});
  EXPECT_EQ(corner.lo, (Int3{5, -2, 3}));
  EXPECT_EQ(corner.hi, (Int3{7, 0, 5}));
  const Box edge = f.send_box(Int3{-1, 0, 1});
  EXPECT_EQ(edge.lo, (Int3{0, 0, 1}));
  EXPECT_EQ(edge.hi, (Int3{2, 4, 3}));
  EXPECT_EQ(edge.size(), 2 * 4 * 2);
}

TEST(Field, PackUnpackRoundTrip) {
  Field a({6, 5, 4}, 1);
  for (int k = -1; k <= 4; ++k)
    for (int j = -1; j <= 5; ++j)
      for (int i = -1; i <= 6; ++i) a(i, j, k) = i + 10 * j + 100 * k;
  const Box box{{1, 0, 2}, {4, 5, 4}};
  std::vector<double> buf(static_cast<std::size_t>(box.size()));
  EXPECT_EQ(pack(a, box, buf.data()), buf.size());
  EXPECT_EQ(buf[0], 1 + 0 + 200);  // x fastest
  EXPECT_EQ(buf[1], 2 + 0 + 200);
  EXPECT_EQ(buf[3], 1 + 10 + 200);  // then y
  Field b({6, 5, 4}, 1);
  EXPECT_EQ(unpack(b, box, buf.data()), buf.size());
  for (int k = -1; k <= 4; ++k)
    for (int j = -1; j <= 5; ++j)
      for (int i = -1; i <= 6; ++i) {
        const bool inside = i >= 1 && i < 4 && j >= 0 && j < 5 && k >= 2 && k < 4;
        EXPECT_EQ(b(i, j, k), inside ? a(i, j, k) : 0.0);
      }
}

TEST(Field, SwapExchangesStorage) {
  Field a({2, 2, 2}, 1);
  Field b({2, 2, 2}, 1);
  a.fill(1.0);
  b.fill(2.0);
  const double* pa = a.origin();
  a.swap(b);
  EXPECT_EQ(a(0, 0, 0), 2.0);
  EXPECT_EQ(b(-1, -1, -1), 1.0);
  EXPECT_EQ(b.origin(), pa);
}

TEST(Field, CopyFaceHalosCopiesOnlyFaceLayers) {
  Field a({3, 4, 5}, 1);
  Field b({3, 4, 5}, 1);
  a.fill(7.0);
  b.fill(1.0);
  copy_face_halos(a, b);
  EXPECT_EQ(b(-1, 0, 0), 7.0);
  EXPECT_EQ(b(3, 3, 4), 7.0);
  EXPECT_EQ(b(1, 4, 2), 7.0);
  EXPECT_EQ(b(2, 1, -1), 7.0);
  EXPECT_EQ(b(0, 0, 0), 1.0);    // interior untouched
  EXPECT_EQ(b(-1, -1, 0), 1.0);  // edges untouched
}
