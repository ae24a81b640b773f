// The CSR operator's layout policy (ops::choose_interior_layout,
// choose_boundary_layout) at and around its named thresholds.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>

#include "asyncsolve/ops/csr.hpp"

namespace {

using asyncsolve::ops::BoundaryLayout;
using asyncsolve::ops::choose_boundary_layout;
using asyncsolve::ops::choose_interior_layout;
using asyncsolve::ops::InteriorLayout;

TEST(CsrLayoutPolicy, Sell8WithinAQuarterOfPaddingElseBlocksWithinOneAndAHalfElseCsr) {
  EXPECT_EQ(asyncsolve::ops::sell_max_padding, 0.25);
  EXPECT_EQ(asyncsolve::ops::blocks_max_values_per_nonzero, 1.5);
  int asked = 0;
  const auto blocks = [&](std::optional<std::int64_t> stored) {
    return [&asked, stored] {
      ++asked;
      return stored;
    };
  };
  // SELL-8 padding 25 %: taken, and the blocks are never cut.
  EXPECT_EQ(choose_interior_layout(1000, 1250, blocks(1000)), InteriorLayout::sell8);
  EXPECT_EQ(asked, 0);
  // 25.1 %: the blocks are asked, and kept at 1.5 values a non-zero.
  EXPECT_EQ(choose_interior_layout(1000, 1251, blocks(1500)), InteriorLayout::blocks);
  EXPECT_EQ(asked, 1);
  EXPECT_EQ(choose_interior_layout(1000, 1251, blocks(1501)), InteriorLayout::csr);
  // Beyond 32-bit offsets (nothing): never that layout.
  EXPECT_EQ(choose_interior_layout(1000, std::nullopt, blocks(1000)), InteriorLayout::blocks);
  EXPECT_EQ(choose_interior_layout(1000, std::nullopt, blocks(std::nullopt)), InteriorLayout::csr);
  // No interior rows: SELL-8 (nothing stored, nothing padded).
  EXPECT_EQ(choose_interior_layout(0, 0, blocks(0)), InteriorLayout::sell8);
}

TEST(CsrLayoutPolicy, BoundaryInBlocksWithinOneAndAHalfValuesANonZero) {
  EXPECT_EQ(choose_boundary_layout(1000, 1500), BoundaryLayout::blocks);
  EXPECT_EQ(choose_boundary_layout(1000, 1501), BoundaryLayout::csr);
  EXPECT_EQ(choose_boundary_layout(1000, std::nullopt), BoundaryLayout::csr);
}

TEST(CsrLayoutPolicy, NamesAsTheDocumentSpellsThem) {
  EXPECT_EQ(asyncsolve::ops::layout_name(InteriorLayout::csr), "csr");
  EXPECT_EQ(asyncsolve::ops::layout_name(InteriorLayout::sell8), "sell8");
  EXPECT_EQ(asyncsolve::ops::layout_name(InteriorLayout::blocks), "blocks");
  EXPECT_EQ(asyncsolve::ops::layout_name(BoundaryLayout::csr), "csr");
  EXPECT_EQ(asyncsolve::ops::layout_name(BoundaryLayout::blocks), "blocks");
}

}  // namespace
