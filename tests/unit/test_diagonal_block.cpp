// make_diagonal_block: a rank's rows cut to the columns of its own rows
// (block-Jacobi ILU(0)'s block), from global or local column indices.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "asyncsolve/precond/preconditioner.hpp"

namespace {

using asyncsolve::precond::make_diagonal_block;

TEST(DiagonalBlock, KeepsTheOwnColumnsAscendingAndSumsRepeatedOnes) {
  // Rows 10 to 12 of a global matrix: row 10 ascending with another rank's
  // column (3) dropped; row 11 out of order with column 12 given twice; row
  // 12 with only other ranks' columns but its diagonal.
  const std::vector<std::int64_t> row_ptr{0, 3, 7, 9};
  const std::vector<std::int64_t> col{3, 10, 11, 12, 10, 12, 11, 13, 12};
  const std::vector<double> val{9, 1, 2, 3, 4, 5, 6, 7, 8};
  const auto b = make_diagonal_block(row_ptr, col, val, 10);
  EXPECT_EQ(b.rows(), 3);
  EXPECT_EQ(b.row_ptr, (std::vector<std::int64_t>{0, 2, 5, 6}));
  EXPECT_EQ(b.col, (std::vector<int>{0, 1, 0, 1, 2, 2}));
  EXPECT_EQ(b.val, (std::vector<double>{1, 2, 4, 6, 3 + 5, 8}));
}

TEST(DiagonalBlock, SortsAnUnorderedRowAndSumsItsRepeatedColumn) {
  const std::vector<std::int64_t> row_ptr{0, 1, 5};
  const std::vector<std::int64_t> col{0, 1, 0, 1, 5};
  const std::vector<double> val{1, 2, 3, 4, 5};
  const auto b = make_diagonal_block(row_ptr, col, val, 0);
  EXPECT_EQ(b.row_ptr, (std::vector<std::int64_t>{0, 1, 3}));
  EXPECT_EQ(b.col, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(b.val, (std::vector<double>{1, 3, 6}));  // row 1: a_10 = 3, a_11 = 2 + 4
}

TEST(DiagonalBlock, LocalColumnsDropTheGhosts) {
  // A distributed matrix's local numbering: the 2 owned rows' columns 0 and
  // 1, the ghosts from 2 on.
  const std::vector<std::int64_t> row_ptr{0, 3, 5};
  const std::vector<std::int32_t> col{0, 2, 1, 3, 1};
  const std::vector<double> val{4, -1, -1, -1, 4};
  const auto b = make_diagonal_block(row_ptr, col, val, 0);
  EXPECT_EQ(b.row_ptr, (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(b.col, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(b.val, (std::vector<double>{4, -1, 4}));
}

}  // namespace
