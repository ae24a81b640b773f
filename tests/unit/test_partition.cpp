// Partitioning: block by rows and by non-zeros, METIS and Scotch (when
// built), the symmetrised graph and the edge cut, and the --partition parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"
#include "asyncsolve/sparse/partition.hpp"

using namespace asyncsolve::sparse;
using asyncsolve::core::InputError;

namespace {

/// The 5-point Laplacian on an n x n grid (n^2 rows).
CsrMatrix laplacian_2d(int n) {
  CsrMatrix a;
  a.rows = a.cols = static_cast<std::int64_t>(n) * n;
  for (int y = 0; y < n; ++y) {
    for (int x = 0; x < n; ++x) {
      const int i = x + n * y;
      const auto add = [&](int j, double v) {
        a.col.push_back(j);
        a.val.push_back(v);
      };
      if (y > 0) add(i - n, -1);
      if (x > 0) add(i - 1, -1);
      add(i, 4);
      if (x < n - 1) add(i + 1, -1);
      if (y < n - 1) add(i + n, -1);
      a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
    }
  }
  return a;
}

std::vector<int> sizes(const std::vector<int>& part, int parts) {
  std::vector<int> s(static_cast<std::size_t>(parts), 0);
  for (const int p : part) ++s.at(p);
  return s;
}

}  // namespace

TEST(Partition, ParsesNamesAndWeights) {
  EXPECT_EQ(parse_partition("block").method, Partitioner::block);
  EXPECT_EQ(parse_partition("block:nnz").weight, PartWeight::nnz);
  EXPECT_EQ(format_partition(parse_partition("block:rows")), "block");
  EXPECT_EQ(format_partition(parse_partition("block:nnz")), "block:nnz");
  EXPECT_THROW(parse_partition("parmetis"), InputError);
  EXPECT_THROW(parse_partition("block:edges"), InputError);
  for (const Partitioner p : {Partitioner::metis, Partitioner::scotch}) {
    const std::string text(name(p));
    if (partitioner_available(p)) {
      EXPECT_EQ(parse_partition(text).method, p);
    } else {
      try {
        parse_partition(text);
        FAIL() << "a build without " << text << " accepted it";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("this build has no"), std::string::npos);
      }
    }
  }
}

TEST(Partition, BlockByRowsIsContiguousAndBalanced) {
  const CsrMatrix a = laplacian_2d(5);  // 25 rows
  const auto part = partition_rows(a, 4, {Partitioner::block, PartWeight::rows});
  EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
  EXPECT_EQ(sizes(part, 4), (std::vector<int>{7, 6, 6, 6}));
}

TEST(Partition, BlockByNonZerosBalancesEntries) {
  // Row 0 is dense (100 entries), the others hold one entry each.
  CsrMatrix a;
  a.rows = a.cols = 100;
  for (int j = 0; j < 100; ++j) {
    a.col.push_back(j);
    a.val.push_back(1);
  }
  a.row_ptr.push_back(100);
  for (int i = 1; i < 100; ++i) {
    a.col.push_back(i);
    a.val.push_back(1);
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
  }
  const auto part = partition_rows(a, 2, {Partitioner::block, PartWeight::nnz});
  EXPECT_TRUE(std::is_sorted(part.begin(), part.end()));
  const auto s = sizes(part, 2);
  EXPECT_LT(s[0], 30);  // the dense row weighs as much as ~100 others
  EXPECT_GT(s[0], 0);
}

TEST(Partition, EveryPartGetsARowAndTooFewRowsAreRefused) {
  const CsrMatrix a = laplacian_2d(2);  // 4 rows
  for (const PartWeight w : {PartWeight::rows, PartWeight::nnz}) {
    const auto part = partition_rows(a, 4, {Partitioner::block, w});
    EXPECT_EQ(sizes(part, 4), (std::vector<int>{1, 1, 1, 1}));
  }
  EXPECT_THROW(partition_rows(a, 5, {}), InputError);
}

TEST(Partition, SymmetrisedGraphAndEdgeCut) {
  // Unsymmetric: a_01 only. The graph has the one edge 0-1 both ways.
  CsrMatrix a;
  a.rows = a.cols = 3;
  a.row_ptr = {0, 2, 3, 4};
  a.col = {0, 1, 1, 2};
  a.val = {1, 1, 1, 1};
  const AdjacencyGraph g = symmetrised_graph(a);
  EXPECT_EQ(g.xadj, (std::vector<int>{0, 1, 2, 2}));
  EXPECT_EQ(g.adjncy, (std::vector<int>{1, 0}));
  EXPECT_EQ(edge_cut(g, {0, 1, 1}), 1);
  EXPECT_EQ(edge_cut(g, {0, 0, 1}), 0);
  // 5-point Laplacian, 4 x 4, split in two halves along y: 4 cut edges.
  const CsrMatrix l = laplacian_2d(4);
  const auto half = partition_rows(l, 2, {});
  EXPECT_EQ(edge_cut(symmetrised_graph(l), half), 4);
}

TEST(Partition, GraphPartitionersCutLessThanBlocksOnAWideGrid) {
  const CsrMatrix a = laplacian_2d(24);
  const AdjacencyGraph g = symmetrised_graph(a);
  const auto block = partition_rows(a, 8, {});
  for (const Partitioner p : {Partitioner::metis, Partitioner::scotch}) {
    if (!partitioner_available(p)) continue;
    for (const PartWeight w : {PartWeight::rows, PartWeight::nnz}) {
      const auto part = partition_rows(a, 8, {p, w});
      ASSERT_EQ(part.size(), static_cast<std::size_t>(a.rows));
      const auto s = sizes(part, 8);
      EXPECT_GT(*std::min_element(s.begin(), s.end()), 0) << name(p);
      EXPECT_LE(*std::max_element(s.begin(), s.end()), 1.2 * 576 / 8) << name(p);
      EXPECT_LT(edge_cut(g, part), edge_cut(g, block)) << name(p);
      EXPECT_EQ(partition_rows(a, 8, {p, w}), part) << name(p) << " is not deterministic";
    }
  }
}

TEST(Partition, DiagonalMatrixFallsBackToBlocks) {
  CsrMatrix a;
  a.rows = a.cols = 6;
  for (int i = 0; i < 6; ++i) {
    a.col.push_back(i);
    a.val.push_back(1);
    a.row_ptr.push_back(i + 1);
  }
  for (const Partitioner p : {Partitioner::metis, Partitioner::scotch}) {
    if (!partitioner_available(p)) continue;
    EXPECT_EQ(partition_rows(a, 3, {p, PartWeight::rows}), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  }
}
