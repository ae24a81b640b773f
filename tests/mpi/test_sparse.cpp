// The distributed CSR matrix on 1, 2, 3, 4 and 8 ranks: ghost discovery and
// the neighbour plan, every halo strategy and the channels filling the
// ghosts, the CSR kernels against their references and the serial product,
// the metrics against a serial count, loading from files with every
// partitioner, writing the solution, and bad input stopping every rank.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "../support/world.hpp"
#include "alltoallv_impl.hpp"
#include "asyncsolve/comm/async_halo.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/csr.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"
#include "asyncsolve/sparse/load.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"
#include "asyncsolve/sparse/partition.hpp"

namespace fs = std::filesystem;
using namespace asyncsolve;

namespace {

par::Comm world() { return par::Comm::view(MPI_COMM_WORLD); }

/// The test matrices, defined row by row on every rank.
enum class Kind { laplacian, unsymmetric, banded, arrow, blocks, faces };

/// Kind::blocks: the rows in blocks of these sizes, over and over (the
/// last block cut short), every row of a block coupled to every column of
/// its own and the two neighbouring blocks, as a DG matrix's element rows.
constexpr int block_sizes[] = {3, 1, 9, 2, 5, 4, 8, 6, 2, 7};

/// First row of every block of Kind::blocks with n rows, and n.
std::vector<int> block_starts(int n) {
  std::vector<int> starts{0};
  for (int b = 0; starts.back() < n; ++b)
    starts.push_back(std::min(n, starts.back() + block_sizes[b % std::size(block_sizes)]));
  return starts;
}

/// Global matrix of `kind` with n rows (laplacian: a 2-D grid of width 7;
/// banded: columns i - 9, i - 1, i, i + 1, i + 9 where they exist, so the
/// middle rows' SELL-8 steps have consecutive columns; arrow: row 0 full,
/// the others a diagonal and column 0, so SELL-8 would pad row 0's slice;
/// blocks: rows in groups with identical columns, see block_sizes; faces:
/// rows in elements of 8, row l of element e coupled to e's columns and
/// to the first l of element e + 1, as a DG element's face rows: 8 to 15
/// long in every slice, so SELL-8 pads by 30 %, while an element's rows
/// hold 15 columns together).
sparse::CsrMatrix global_matrix(Kind kind, int n) {
  sparse::CsrMatrix a;
  a.rows = a.cols = n;
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> row;
    if (kind == Kind::blocks) {
      const std::vector<int> starts = block_starts(n);
      const auto b = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), i) -
                                              starts.begin() - 1);
      const int lo = starts[b == 0 ? 0 : b - 1];
      const int hi = starts[std::min(b + 2, starts.size() - 1)];
      for (int j = lo; j < hi; ++j)
        if (j != i) row.emplace_back(j, -1.0 / (1.0 + 0.01 * (i + 2 * j)));
      row.emplace_back(i, 1.0 + hi - lo);
    } else if (kind == Kind::faces) {
      const int e = i / 8;
      for (int j = 8 * e; j < std::min(n, 8 * e + 8 + i % 8); ++j)
        if (j != i) row.emplace_back(j, -1.0 / (1.0 + 0.01 * (i + 2 * j)));
      row.emplace_back(i, 16.0);
    } else if (kind == Kind::banded) {
      for (const int j : {i - 9, i - 1, i + 1, i + 9})
        if (j >= 0 && j < n) row.emplace_back(j, -1.0 - 0.001 * j);
      row.emplace_back(i, 5.0);
    } else if (kind == Kind::arrow) {
      if (i == 0) {
        for (int j = 1; j < n; ++j) row.emplace_back(j, 0.5 / n);
      } else {
        row.emplace_back(0, 0.25);
      }
      row.emplace_back(i, 2.0);
    } else if (kind == Kind::laplacian) {
      constexpr int w = 7;
      if (i - w >= 0) row.emplace_back(i - w, -1.0);
      if (i % w != 0) row.emplace_back(i - 1, -1.0);
      row.emplace_back(i, 4.0 + 0.01 * i);
      if (i % w != w - 1 && i + 1 < n) row.emplace_back(i + 1, -1.0);
      if (i + w < n) row.emplace_back(i + w, -1.0);
    } else {
      // Diagonally dominant, unsymmetric pattern and values.
      row.emplace_back(i, 10.0);
      row.emplace_back((i * 7 + 3) % n, 0.5 + 0.001 * i);
      row.emplace_back((i * 13 + 1) % n, -0.25);
      row.emplace_back((i + n / 2) % n, 1.0 / 3.0);
    }
    std::sort(row.begin(), row.end());
    // Merge repeated columns.
    std::vector<std::pair<int, double>> merged;
    for (const auto& e : row) {
      if (!merged.empty() && merged.back().first == e.first) {
        merged.back().second += e.second;
      } else {
        merged.push_back(e);
      }
    }
    for (const auto& [j, v] : merged) {
      a.col.push_back(j);
      a.val.push_back(v);
    }
    a.row_ptr.push_back(static_cast<std::int64_t>(a.col.size()));
  }
  return a;
}

/// Uneven contiguous row counts: rank r gets base + (r % 3) rows, the last the rest.
std::vector<std::int64_t> offsets_for(int n, int ranks) {
  std::vector<std::int64_t> off(static_cast<std::size_t>(ranks) + 1, 0);
  const int base = std::max(1, n / ranks - 1);
  for (int r = 0; r < ranks; ++r) off[r + 1] = off[r] + (r + 1 < ranks ? base + r % 3 : 0);
  off[ranks] = n;
  return off;
}

/// This rank's rows of `a` under `off`, with global columns, the columns of
/// each row listed in reverse and the first entry split in two (from_rows
/// must sort and sum).
struct OwnedRows {
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
};
OwnedRows owned_rows(const sparse::CsrMatrix& a, const std::vector<std::int64_t>& off, int rank) {
  OwnedRows out;
  for (std::int64_t i = off[rank]; i < off[rank + 1]; ++i) {
    for (std::int64_t k = a.row_ptr[i + 1] - 1; k >= a.row_ptr[i]; --k) {
      if (k == a.row_ptr[i]) {
        out.col.push_back(a.col[k]);
        out.val.push_back(0.5 * a.val[k]);
        out.col.push_back(a.col[k]);
        out.val.push_back(a.val[k] - 0.5 * a.val[k]);
      } else {
        out.col.push_back(a.col[k]);
        out.val.push_back(a.val[k]);
      }
    }
    out.row_ptr.push_back(static_cast<std::int64_t>(out.col.size()));
  }
  return out;
}

sparse::DistMatrix build(Kind kind, int n) {
  const par::Comm w = world();
  const sparse::CsrMatrix a = global_matrix(kind, n);
  const auto off = offsets_for(n, w.size());
  const OwnedRows rows = owned_rows(a, off, w.rank());
  return sparse::DistMatrix::from_rows(w, n, {rows.row_ptr, rows.col, rows.val});
}

/// The channel transports of this build of the test: mpi and rma, and
/// shmem in the shmem_sparse build (run under oshrun).
std::vector<int> transports() {
#ifdef ASYNCSOLVE_TEST_SHMEM
  return {AS_TRANSPORT_MPI, AS_TRANSPORT_RMA, AS_TRANSPORT_SHMEM};
#else
  return {AS_TRANSPORT_MPI, AS_TRANSPORT_RMA};
#endif
}

double value_of(std::int64_t global) { return 0.5 + static_cast<double>(global) * 0.25; }

/// sum over row i of a of |a_ij x_j|: the scale of the rounding of (A x)_i.
double row_scale(const sparse::CsrMatrix& a, std::size_t i, const std::vector<double>& x) {
  double sum = 0.0;
  for (auto k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) sum += std::abs(a.val[k] * x[a.col[k]]);
  return sum;
}

/// A one-row field holding value_of(global index) for this rank's rows.
grid::Field owned_vector(const sparse::DistMatrix& m) {
  grid::Field x({m.local_rows(), 1, 1}, 0);
  for (int i = 0; i < m.local_rows(); ++i) x.origin()[i] = value_of(m.first_row() + i);
  return x;
}

void expect_ghosts(const sparse::DistMatrix& m, std::span<const double> ghosts,
                   const std::string& what) {
  ASSERT_GE(ghosts.size(), m.ghost_globals().size());
  for (std::size_t g = 0; g < m.ghost_globals().size(); ++g)
    ASSERT_EQ(ghosts[g], value_of(m.ghost_globals()[g])) << what << " ghost " << g;
}

std::string scratch_dir() {
  const par::Comm w = world();
  std::string dir;
  if (w.is_root()) {
    dir =
        (fs::temp_directory_path() / ("asyncsolve_sparse_" + std::to_string(::getpid()))).string();
    fs::create_directories(dir);
  }
  int length = static_cast<int>(dir.size());
  MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
  dir.resize(static_cast<std::size_t>(length));
  MPI_Bcast(dir.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
  return dir;
}

}  // namespace

TEST(SparseExchange, EveryListArrivesOnceBySourceOverManyRounds) {
  // detail::alltoallv sends only the non-empty lists (no message to the
  // other ranks) and must still return what an MPI_Alltoallv would. Rounds
  // follow each other at once, with patterns that change every round, so a
  // message of the next round taken by this one would show.
  const par::Comm w = world();
  const int ranks = w.size();
  const int me = w.rank();
  const auto length = [](int round, int from, int to) {
    std::mt19937 g(static_cast<unsigned>(round * 7919 + from * 131 + to));
    return g() % 3 == 0 ? 0 : static_cast<int>(g() % 6);
  };
  const auto value = [](int round, int from, int to, int k) {
    return static_cast<std::int64_t>(round) * 1000000 + from * 10000 + to * 100 + k;
  };
  for (int round = 0; round < 300; ++round) {
    std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(ranks));
    for (int to = 0; to < ranks; ++to)
      for (int k = 0; k < length(round, me, to); ++k) out[to].push_back(value(round, me, to, k));
    std::vector<int> counts;
    const std::vector<std::int64_t> in = sparse::detail::alltoallv(w, out, counts);
    ASSERT_EQ(counts.size(), static_cast<std::size_t>(ranks));
    std::size_t at = 0;
    for (int from = 0; from < ranks; ++from) {
      ASSERT_EQ(counts[from], length(round, from, me)) << "round " << round << " from " << from;
      for (int k = 0; k < counts[from]; ++k, ++at)
        ASSERT_EQ(in[at], value(round, from, me, k)) << "round " << round << " from " << from;
    }
    ASSERT_EQ(at, in.size());
  }
}

TEST(DistMatrix, OwnershipGhostsAndPlanAreConsistent) {
  for (const Kind kind : {Kind::laplacian, Kind::unsymmetric}) {
    sparse::DistMatrix m = build(kind, 61);
    const par::Comm w = world();
    EXPECT_EQ(m.global_rows(), 61);
    EXPECT_EQ(m.row_offsets(), offsets_for(61, w.size()));
    EXPECT_EQ(m.first_row(), m.row_offsets()[w.rank()]);
    // Ghosts: ascending, none owned here, each referenced.
    const auto& g = m.ghost_globals();
    EXPECT_TRUE(std::is_sorted(g.begin(), g.end()));
    for (const auto x : g) EXPECT_TRUE(x < m.first_row() || x >= m.first_row() + m.local_rows());
    // Receive blocks tile the ghost array in rank order.
    int at = 0;
    for (const auto& r : m.plan().recvs) {
      EXPECT_EQ(r.offset, at);
      EXPECT_NE(r.rank, w.rank());
      at += r.count;
    }
    EXPECT_EQ(at, m.plan().ghosts);
    // What this rank sends, summed over ranks, is what the others receive.
    std::int64_t sent = m.plan().send_volume();
    MPI_Allreduce(MPI_IN_PLACE, &sent, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(sent, m.metrics().volume);
    if (w.size() == 1) {
      EXPECT_EQ(m.plan().ghosts, 0);
    }
    // Entries are sorted and summed: the local matrix equals the global one's rows.
    const sparse::CsrMatrix a = global_matrix(kind, 61);
    for (int i = 0; i < m.local_rows(); ++i) {
      const std::int64_t gi = m.first_row() + i;
      ASSERT_EQ(m.row_ptr()[i + 1] - m.row_ptr()[i], a.row_ptr[gi + 1] - a.row_ptr[gi]);
      for (std::int64_t k = 0; k < a.row_ptr[gi + 1] - a.row_ptr[gi]; ++k) {
        const std::int32_t c = m.col()[m.row_ptr()[i] + k];
        const std::int64_t global = c < m.local_rows() ? m.first_row() + c : g[c - m.local_rows()];
        EXPECT_EQ(global, a.col[a.row_ptr[gi] + k]);
        EXPECT_DOUBLE_EQ(m.val()[m.row_ptr()[i] + k], a.val[a.row_ptr[gi] + k]);
      }
    }
    m.free();
  }
}

TEST(DistMatrix, MetricsMatchASerialCount) {
  for (const Kind kind : {Kind::laplacian, Kind::unsymmetric}) {
    sparse::DistMatrix m = build(kind, 61);
    const par::Comm w = world();
    const sparse::CsrMatrix a = global_matrix(kind, 61);
    std::vector<int> part(61);
    const auto off = offsets_for(61, w.size());
    for (int r = 0; r < w.size(); ++r)
      for (std::int64_t i = off[r]; i < off[r + 1]; ++i) part[i] = r;
    EXPECT_EQ(m.metrics().edge_cut, sparse::edge_cut(sparse::symmetrised_graph(a), part));
    EXPECT_EQ(m.global_nnz(), a.nnz());
    EXPECT_GE(m.metrics().row_imbalance, 1.0);
    if (w.size() == 1) {
      EXPECT_EQ(m.metrics().interior_rows, 61);
      EXPECT_EQ(m.metrics().messages, 0);
    }
    m.free();
  }
}

TEST(DistMatrix, BadRowsStopEveryRankWithOneMessage) {
  const par::Comm w = world();
  const int n = 4 * w.size();
  std::vector<std::int64_t> row_ptr{0, 1, 2, 3, 4};
  std::vector<std::int64_t> col(4);
  for (int k = 0; k < 4; ++k) col[k] = 4 * w.rank() + k;
  if (w.rank() == w.size() - 1) col[2] = n + 5;  // out of range on the last rank
  std::vector<double> val(4, 1.0);
  try {
    sparse::DistMatrix::from_rows(w, n, {row_ptr, col, val});
    FAIL() << "no error";
  } catch (const core::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(w.size() - 1)), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("expected 0 to"), std::string::npos) << e.what();
  }
  // Row counts that do not add up.
  EXPECT_THROW(sparse::DistMatrix::from_rows(w, n + 1, {row_ptr, col, val}), core::InputError);
}

TEST(SparseHalo, EveryStrategyFillsTheGhosts) {
  for (const Kind kind : {Kind::laplacian, Kind::unsymmetric}) {
    sparse::DistMatrix m = build(kind, 61);
    grid::Field x = owned_vector(m);
    for (const comm::HaloStrategy s : {comm::HaloStrategy::waitall, comm::HaloStrategy::alltoallv,
                                       comm::HaloStrategy::ialltoallv, comm::HaloStrategy::neighbor,
                                       comm::HaloStrategy::persistent}) {
      auto halo = comm::make_sparse_halo_exchange(s, m);
      for (int round = 0; round < 3; ++round) {
        std::fill(halo->ghosts().begin(), halo->ghosts().end(), -1.0);
        halo->start(x);
        while (!halo->test()) {
        }
        halo->finish(x);
        expect_ghosts(m, halo->ghosts(), std::string(comm::halo_strategy_name(s)));
      }
      EXPECT_EQ(halo->messages_per_exchange(), static_cast<int>(m.plan().sends.size()));
      EXPECT_EQ(halo->bytes_per_exchange(), m.plan().send_volume() * sizeof(double));
      halo->close();
    }
    for (const int transport : transports()) {
      auto halo = comm::make_sparse_channel_halo_exchange(m, transport);
      for (int round = 0; round < 3; ++round) {
        // A different vector each round: the exchange must deliver this round's.
        for (int i = 0; i < m.local_rows(); ++i)
          x.origin()[i] = value_of(m.first_row() + i) + round;
        halo->start(x);
        halo->finish(x);
        for (std::size_t g = 0; g < m.ghost_globals().size(); ++g)
          ASSERT_EQ(halo->ghosts()[g], value_of(m.ghost_globals()[g]) + round);
      }
      halo->close();
    }
    m.free();
  }
}

TEST(DistMatrix, BlockNormsBoundTheSweepAndTheGhostChange) {
  // ||M r|| <= jacobi_sweep_growth ||r|| for M = (A_oo - D) D^-1, and
  // ||G d|| <= ghost_block_norm ||d|| for the ghost columns G, on random
  // vectors; a diagonally dominant matrix's sweep does not raise ||r||.
  for (const Kind kind : {Kind::banded, Kind::unsymmetric, Kind::arrow}) {
    sparse::DistMatrix m = build(kind, 61);
    const int n = m.local_rows();
    const double growth = sparse::jacobi_sweep_growth(m);
    const double ghost = sparse::ghost_block_norm(m);
    std::vector<double> diag(static_cast<std::size_t>(n), 0.0);
    for (int i = 0; i < n; ++i)
      for (auto k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k)
        if (m.col()[k] == i) diag[i] = m.val()[k];
    std::mt19937 rng(17 + static_cast<unsigned>(m.comm().rank()));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> r(static_cast<std::size_t>(n));
      std::vector<double> d(static_cast<std::size_t>(m.plan().ghosts));
      for (double& v : r) v = u(rng);
      for (double& v : d) v = u(rng);
      double mr = 0.0;  // ||M r||^2
      double gd = 0.0;  // ||G d||^2
      double rr = 0.0;
      double dd = 0.0;
      for (int i = 0; i < n; ++i) {
        double a = 0.0;
        double b = 0.0;
        for (auto k = m.row_ptr()[i]; k < m.row_ptr()[i + 1]; ++k) {
          const int j = m.col()[k];
          if (j >= n) {
            b += m.val()[k] * d[j - n];
          } else if (j != i) {
            a += m.val()[k] / diag[j] * r[j];
          }
        }
        mr += a * a;
        gd += b * b;
      }
      for (const double v : r) rr += v * v;
      for (const double v : d) dd += v * v;
      EXPECT_LE(std::sqrt(mr), growth * std::sqrt(rr) * (1 + 1e-12));
      EXPECT_LE(std::sqrt(gd), ghost * std::sqrt(dd) * (1 + 1e-12));
    }
    if (kind == Kind::banded) {
      EXPECT_LT(growth, 1.0);
    }
    if (m.comm().size() == 1) {
      EXPECT_EQ(ghost, 0.0);
    }
    m.free();
  }
}

TEST(SparseHalo, AsynchronousChannelsDeliverEventually) {
  for (const int transport : transports()) {
    for (const bool racy : {false, true}) {
      sparse::DistMatrix m = build(Kind::unsymmetric, 61);
      grid::Field x = owned_vector(m);
      std::vector<double> ghosts(static_cast<std::size_t>(m.plan().ghosts) + 1, -1.0);
      auto channels = comm::make_async_sparse_halo(m, x, ghosts, {transport, racy, 2, 0});
      std::vector<long> batches;
      EXPECT_EQ(channels->send(), 0);
      const auto complete = [&] {
        for (std::size_t g = 0; g < m.ghost_globals().size(); ++g)
          if (ghosts[g] != value_of(m.ghost_globals()[g])) return false;
        return true;
      };
      double change_sq = 0.0;
      const double t0 = MPI_Wtime();
      const double limit = 60 * test_time_factor();
      while (!complete() && MPI_Wtime() - t0 < limit) change_sq += channels->receive(batches);
      EXPECT_TRUE(complete()) << "transport " << transport << " racy " << racy;
      // The change reported bounds the residual's: the ghosts' change from -1
      // to their values, times the ghost block's norm bound.
      double expected_sq = 0.0;
      for (std::size_t g = 0; g < m.ghost_globals().size(); ++g)
        expected_sq += std::pow(value_of(m.ghost_globals()[g]) + 1.0, 2);
      expected_sq *= std::pow(sparse::ghost_block_norm(m), 2);
      EXPECT_NEAR(change_sq, expected_sq, 1e-12 * (1.0 + expected_sq));
      EXPECT_EQ(channels->messages_sent(), static_cast<long>(m.plan().sends.size()));
      // Every rank got everything before anyone destroys (destroy completes
      // what is in flight either way).
      MPI_Barrier(MPI_COMM_WORLD);
      channels->destroy();
      m.free();
    }
  }
}

TEST(CsrOperator, KernelsMatchTheirReferencesAndTheSerialProduct) {
  for (const Kind kind :
       {Kind::laplacian, Kind::unsymmetric, Kind::banded, Kind::arrow, Kind::blocks, Kind::faces})
    for (const auto layout :
         {ops::InteriorLayout::csr, ops::InteriorLayout::sell8, ops::InteriorLayout::blocks}) {
      SCOPED_TRACE(::testing::Message()
                   << "kind " << static_cast<int>(kind) << " layout " << static_cast<int>(layout));
      sparse::DistMatrix m = build(kind, 61);
      const sparse::CsrMatrix a = global_matrix(kind, 61);
      const ops::CsrOperator op(m, layout);
      ASSERT_EQ(op.interior_layout(), layout);
      EXPECT_GE(op.interior_stored(),
                op.nnz() - op.boundary_local().val.size() - op.boundary_ghost().val.size());
      EXPECT_EQ(op.interior_rows() + op.boundary_rows(), m.local_rows());
      EXPECT_EQ(op.nnz(), m.local_nnz());
      grid::Field x = owned_vector(m);
      auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
      halo->exchange(x);
      const double* gh = halo->ghosts().data();
      const auto n = static_cast<std::size_t>(m.local_rows());

      // Reference == serial product (same order of summation; FMA contraction
      // may differ between the two loops, so to rounding).
      std::vector<double> xs(61);
      for (int i = 0; i < 61; ++i) xs[i] = value_of(i);
      std::vector<double> ys(61);
      sparse::multiply(a, xs, ys);
      std::vector<double> y_ref(n), y(n, -7.0);
      const double dot_ref = ops::spmv_ref(m, x.origin(), gh, y_ref.data());
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(y_ref[i], ys[m.first_row() + i], 1e-14 * std::abs(ys[m.first_row() + i]));

      // How far two orders of summing row i may differ: the layouts' SELL-8
      // and CSR loops both sum in stored order (SELL-8 with one FMA per
      // entry, the CSR loop as the compiler contracts it), to rounding; the
      // grouped rows (Kind::blocks in CSR) add 8 partial sums and the row
      // blocks 4, so up to twice the error bound of a sum of the row's
      // length.
      const auto order_tol = [&](std::size_t i) {
        const std::size_t g = m.first_row() + i;
        const double scale = row_scale(a, g, xs);
        if (kind != Kind::blocks && layout != ops::InteriorLayout::blocks) return 4e-16 * scale;
        return 2.0 * static_cast<double>(a.row_ptr[g + 1] - a.row_ptr[g]) * 0x1p-52 * scale;
      };

      // Fast: interior in three pieces, then the boundary.
      const int ni = op.interior_rows();
      double dot = 0.0;
      dot += ops::spmv_interior(op, x.origin(), y.data(), 0, ni / 3);
      dot += ops::spmv_interior(op, x.origin(), y.data(), ni / 3, 2 * ni / 3);
      dot += ops::spmv_interior(op, x.origin(), y.data(), 2 * ni / 3, ni);
      dot += ops::spmv_boundary(op, x.origin(), gh, y.data());
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(y[i], y_ref[i], 1e-13 * std::abs(y_ref[i]) + order_tol(i));
      EXPECT_NEAR(dot, dot_ref, 1e-12 * std::abs(dot_ref));
      // The two layouts give y to rounding (order_tol).
      const ops::CsrOperator plain(m, ops::InteriorLayout::csr);
      std::vector<double> y_plain(n, -7.0);
      ops::spmv_interior(plain, x.origin(), y_plain.data(), 0, ni);
      ops::spmv_boundary(plain, x.origin(), gh, y_plain.data());
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(y[i], y_plain[i], order_tol(i)) << "row " << i;

      // Jacobi step and residual.
      std::vector<double> b(n), u_new(n), u_new_ref(n), r(n), r_ref(n);
      for (std::size_t i = 0; i < n; ++i) b[i] = 1.0 + 0.1 * static_cast<double>(i % 5);
      std::vector<double> dinv(n);
      for (std::size_t i = 0; i < n; ++i) dinv[i] = 1.0 / op.diagonal()[i];
      const double rr_ref = ops::jacobi_ref(m, b.data(), x.origin(), gh, u_new_ref.data());
      const double rr =
          ops::jacobi_interior(op, b.data(), dinv.data(), x.origin(), u_new.data(), 0, ni) +
          ops::jacobi_boundary(op, b.data(), dinv.data(), x.origin(), gh, u_new.data());
      EXPECT_NEAR(rr, rr_ref, 1e-12 * rr_ref);
      // u + D^-1 r cancels: compare to the size of u.
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(u_new[i], u_new_ref[i], 1e-13 * std::abs(x.origin()[i]));
      std::vector<double> u_plain(n, -7.0);
      ops::jacobi_interior(plain, b.data(), dinv.data(), x.origin(), u_plain.data(), 0, ni / 2);
      ops::jacobi_interior(plain, b.data(), dinv.data(), x.origin(), u_plain.data(), ni / 2, ni);
      ops::jacobi_boundary(plain, b.data(), dinv.data(), x.origin(), gh, u_plain.data());
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_NEAR(u_new[i], u_plain[i], 1e-15 * std::abs(x.origin()[i]) + dinv[i] * order_tol(i))
            << "row " << i;
      EXPECT_NEAR(ops::residual(op, b.data(), x.origin(), gh, r.data()),
                  ops::residual_ref(m, b.data(), x.origin(), gh, r_ref.data()), 1e-12 * rr_ref);
      for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(r[i], r_ref[i], 1e-12);
      halo->close();
      m.free();
    }
}

TEST(CsrOperator, InteriorLayoutIsSell8UnlessItPadsByMoreThanAQuarterThenRowBlocks) {
  for (const Kind kind :
       {Kind::laplacian, Kind::unsymmetric, Kind::banded, Kind::arrow, Kind::blocks, Kind::faces}) {
    sparse::DistMatrix m = build(kind, 61);
    const ops::CsrOperator op(m);
    const ops::CsrOperator sell(m, ops::InteriorLayout::sell8);
    const ops::CsrOperator blocks(m, ops::InteriorLayout::blocks);
    const std::int64_t interior_nnz =
        op.nnz() -
        static_cast<std::int64_t>(op.boundary_local().val.size() + op.boundary_ghost().val.size());
    // The padded size: every slice of 8 interior rows as wide as its longest row.
    std::int64_t padded = 0;
    const auto& ptr = op.interior().ptr;
    for (int p = 0; p < op.interior_rows(); p += 8) {
      std::int32_t width = 0;
      for (int q = p; q < std::min(p + 8, op.interior_rows()); ++q)
        width = std::max(width, ptr[q + 1] - ptr[q]);
      padded += 8 * static_cast<std::int64_t>(width);
    }
    EXPECT_EQ(sell.interior_stored(), padded);
    // Else row blocks, unless they store more than 1.5 values a non-zero.
    const ops::InteriorLayout expected = 4 * padded <= 5 * interior_nnz ? ops::InteriorLayout::sell8
                                         : 2 * blocks.interior_stored() <= 3 * interior_nnz
                                             ? ops::InteriorLayout::blocks
                                             : ops::InteriorLayout::csr;
    EXPECT_EQ(op.interior_layout(), expected) << "kind " << static_cast<int>(kind);
    EXPECT_EQ(op.interior_stored(), expected == ops::InteriorLayout::sell8 ? padded
                                    : expected == ops::InteriorLayout::blocks
                                        ? blocks.interior_stored()
                                        : interior_nnz);
    // On one rank the arrow's full row 0 is interior and pads its slice
    // 8-fold, and its other rows (column 0 and the diagonal) share too few
    // columns for blocks; the banded rows are 4 or 5 long; Kind::blocks's
    // rows pad SELL-8 by less than a quarter; Kind::faces's rows by 30 %,
    // and its row blocks store 1.3 values a non-zero.
    if (world().size() == 1) {
      const ops::InteriorLayout one_rank[] = {
          ops::InteriorLayout::sell8, ops::InteriorLayout::sell8, ops::InteriorLayout::sell8,
          ops::InteriorLayout::csr,   ops::InteriorLayout::sell8, ops::InteriorLayout::blocks};
      EXPECT_EQ(op.interior_layout(), one_rank[static_cast<int>(kind)])
          << "kind " << static_cast<int>(kind);
    }
    m.free();
  }
}

TEST(CsrOperator, RowBlocksHoldEveryEntryOnceInTheFewestValues) {
  constexpr int lanes = ops::RowBlocks::lanes;
  for (const Kind kind : {Kind::faces, Kind::blocks, Kind::arrow, Kind::laplacian}) {
    SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind));
    sparse::DistMatrix m = build(kind, 61);
    const ops::CsrOperator op(m, ops::InteriorLayout::blocks);
    const ops::CsrOperator plain(m, ops::InteriorLayout::csr);
    const ops::RowBlocks& rb = op.interior_blocks();
    const ops::CsrBlock& in = plain.interior();
    ASSERT_EQ(op.interior_layout(), ops::InteriorLayout::blocks);
    ASSERT_EQ(rb.position.front(), 0);
    ASSERT_EQ(rb.position.back(), in.rows());
    ASSERT_EQ(static_cast<int>(rb.position.size()), rb.blocks() + 1);
    ASSERT_EQ(static_cast<std::size_t>(rb.col_start.back()), rb.col.size());
    ASSERT_EQ(rb.val.size(), lanes * rb.col.size());
    EXPECT_EQ(op.interior_stored(), static_cast<std::int64_t>(rb.val.size()));
    // Local row of every interior position, from the runs.
    std::vector<int> row_at(static_cast<std::size_t>(in.rows()));
    for (const ops::RowRun& run : in.runs)
      for (int q = 0; q < run.count; ++q) row_at[run.position + q] = run.first + q;
    std::int64_t nonzero_values = 0;
    for (const double v : rb.val) nonzero_values += v != 0.0 ? 1 : 0;
    EXPECT_EQ(nonzero_values, static_cast<std::int64_t>(in.val.size())) << "every entry once";
    for (int b = 0; b < rb.blocks(); ++b) {
      const int p0 = rb.position[b];
      const int rows = rb.position[b + 1] - p0;
      ASSERT_GE(rows, 1);
      ASSERT_LE(rows, lanes);
      for (int l = 0; l < rows; ++l) ASSERT_EQ(row_at[p0 + l], rb.row[b] + l) << "block " << b;
      for (std::int32_t j = rb.col_start[b] + 1; j < rb.col_start[b + 1]; ++j)
        ASSERT_LT(rb.col[j - 1], rb.col[j]) << "block " << b;
      // Lane l's values are row p0 + l's entries at their columns; lanes
      // past the block's rows hold zeros.
      for (int l = 0; l < lanes; ++l) {
        std::int32_t k = l < rows ? in.ptr[p0 + l] : 0;
        const std::int32_t k1 = l < rows ? in.ptr[p0 + l + 1] : 0;
        for (std::int32_t j = rb.col_start[b]; j < rb.col_start[b + 1]; ++j) {
          const double v = rb.val[static_cast<std::size_t>(lanes) * j + l];
          if (k < k1 && in.col[k] == rb.col[j]) {
            ASSERT_EQ(v, in.val[k]) << "block " << b << " lane " << l;
            ++k;
          } else {
            ASSERT_EQ(v, 0.0) << "block " << b << " lane " << l << " column " << rb.col[j];
          }
        }
        ASSERT_EQ(k, k1) << "block " << b << " lane " << l << ": every entry's column in the union";
      }
    }
    // The cut minimises lanes * (union + 1) summed over the blocks: no more
    // than cutting every run into slices of 8, or into single rows.
    const auto cost = [&](int p, int q) {
      std::vector<std::int32_t> u;
      for (int r = p; r < q; ++r)
        u.insert(u.end(), in.col.begin() + in.ptr[r], in.col.begin() + in.ptr[r + 1]);
      std::sort(u.begin(), u.end());
      return lanes * (static_cast<std::int64_t>(std::unique(u.begin(), u.end()) - u.begin()) + 1);
    };
    const std::int64_t chosen =
        op.interior_stored() + lanes * static_cast<std::int64_t>(rb.blocks());
    std::int64_t slices = 0;
    std::int64_t singles = 0;
    for (const ops::RowRun& run : in.runs) {
      for (int p = run.position; p < run.position + run.count; p += lanes)
        slices += cost(p, std::min(p + lanes, run.position + run.count));
      for (int p = run.position; p < run.position + run.count; ++p) singles += cost(p, p + 1);
    }
    EXPECT_LE(chosen, slices);
    EXPECT_LE(chosen, singles);
    if (world().size() == 1 && kind == Kind::faces) {
      // A block an element: 15 columns each, but the last two's (the
      // last element has 5 rows: 13 and 5).
      EXPECT_EQ(rb.blocks(), 8);
      EXPECT_EQ(op.interior_stored(), lanes * (6 * 15 + 13 + 5));
    }
    m.free();
  }
}

TEST(CsrOperator, KernelsAreTheOnesThisBuildAskedFor) {
#ifdef ASYNCSOLVE_TEST_PORTABLE_CSR
  EXPECT_FALSE(ops::csr_kernels_avx512());
  EXPECT_EQ(ops::csr_sell_kernel(), "portable");
#elif defined(__x86_64__)
  // Without AVX-512, a build with AVX2 and FMA (as this test's own flags
  // say) has the AVX2 slice sums.
#if defined(__AVX2__) && defined(__FMA__)
  EXPECT_NE(ops::csr_sell_kernel(), "portable");
#endif
  EXPECT_EQ(ops::csr_sell_kernel() == "avx512", ops::csr_kernels_avx512());
  // The library's csr.cpp has the AVX-512 options where the compiler passed
  // CMake's probe; a build whose csr.cpp lacks them says so.
  if (!ops::csr_kernels_avx512()) GTEST_SKIP() << "csr.cpp built without AVX-512";
  SUCCEED();
#endif
}

namespace {

/// Local row of the first lane of every SELL-8 slice of op's interior rows.
std::vector<int> slice_rows(const ops::CsrOperator& op) {
  std::vector<int> rows;
  for (const ops::RowRun& run : op.interior().runs)
    for (int lane0 = 0; lane0 < run.count; lane0 += ops::SellBlock::lanes)
      rows.push_back(run.first + lane0);
  return rows;
}

}  // namespace

TEST(CsrOperator, Sell8AlignsSlicesOnColumnOffsetsAndStoresOneIndexPerConsecutiveStep) {
  // Both matrices' rows have columns at fixed offsets from the row (the
  // Laplacian: -7, -1, 0, 1, 7; banded: -9, -1, 0, 1, 9), some missing at
  // the grid's x faces or the ends. Aligned on the offsets, a step is
  // gathered only where its first column would lie before column 0.
  for (const auto& [kind, reach] : {std::pair{Kind::laplacian, 7}, std::pair{Kind::banded, 9}}) {
    SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind));
    sparse::DistMatrix m = build(kind, 61);
    const ops::CsrOperator op(m, ops::InteriorLayout::sell8);
    const ops::SellBlock& sell = op.interior_sell();
    const std::vector<int> row0 = slice_rows(op);
    ASSERT_EQ(static_cast<int>(row0.size()), sell.slices());
    std::size_t words = 0;
    int partial = 0;
    for (int s = 0; s < sell.slices(); ++s) {
      ASSERT_EQ(sell.col_start[s], static_cast<std::int32_t>(words));
      for (std::int32_t g = sell.start[s] / 8; g < sell.start[s + 1] / 8; ++g) {
        const ops::SellStep step = sell.steps[g];
        EXPECT_NE(step.real, 0) << "a step of padding only";
        if (step.real != 0xFF) ++partial;
        if (step.consecutive == 0) {
          EXPECT_LT(row0[s], reach) << "slice " << s << " (row " << row0[s] << ") gathers";
        }
        words += step.consecutive != 0 ? 1 : 8;
      }
    }
    EXPECT_EQ(sell.col.size(), words);
    // Every slice of the Laplacian holds a row on an x face (width 7).
    if (kind == Kind::laplacian && sell.slices() > 0) {
      EXPECT_GT(partial, 0);
    }
    m.free();
  }
}

TEST(CsrOperator, Sell8StoresAUniformStepsValueOnceAndComputesTheSameBits) {
  // The Laplacian's off-diagonal steps are uniform (-1) and its diagonal
  // (4 + 0.01 i) is not; banded and unsymmetric have a uniform diagonal
  // and varying off-diagonals; blocks' values all differ (a step with one
  // entry is uniform all the same). The operator
  // built with plain values stores 8 per step: its values say which steps
  // the compressed one must mark uniform, and the kernels of both must
  // agree bit for bit (a broadcast value is the same value).
  for (const Kind kind : {Kind::laplacian, Kind::unsymmetric, Kind::banded, Kind::blocks}) {
    SCOPED_TRACE(::testing::Message() << "kind " << static_cast<int>(kind));
    sparse::DistMatrix m = build(kind, 61);
    const ops::CsrOperator packed(m, ops::InteriorLayout::sell8);
    const ops::CsrOperator plain(m, ops::InteriorLayout::sell8, false);
    const ops::SellBlock& ps = packed.interior_sell();
    const ops::SellBlock& pl = plain.interior_sell();
    ASSERT_EQ(ps.steps.size(), pl.steps.size());
    EXPECT_EQ(pl.val.size(), 8 * pl.steps.size());
    EXPECT_EQ(packed.interior_stored(), plain.interior_stored());
    std::size_t values = 0;
    int uniform = 0;
    for (int s = 0; s < ps.slices(); ++s) {
      ASSERT_EQ(ps.val_start[s], static_cast<std::int32_t>(values)) << "slice " << s;
      for (std::int32_t g = ps.start[s] / 8; g < ps.start[s + 1] / 8; ++g) {
        EXPECT_EQ(pl.steps[g].uniform, 0);
        bool same = true;
        double first = 0.0;
        bool seen = false;
        for (int l = 0; l < 8; ++l) {
          if ((pl.steps[g].real >> l & 1U) == 0) continue;
          const double v = pl.val[8 * static_cast<std::size_t>(g) + l];
          same = same && (!seen || v == first);
          if (!seen) first = v;
          seen = true;
        }
        ASSERT_EQ(ps.steps[g].uniform != 0, same) << "step " << g;
        if (same) {
          EXPECT_EQ(ps.val[values], first);
          ++uniform;
        }
        values += same ? 1 : 8;
      }
    }
    EXPECT_EQ(ps.val.size(), values);
    EXPECT_EQ(packed.interior_values(), static_cast<std::int64_t>(values));
    if (ps.slices() > 4) {
      // Aligned slices have uniform steps (the Laplacian's -1s, banded's
      // diagonal); the unsymmetric rows' diagonals fall at different steps.
      // No kind is all uniform.
      if (kind == Kind::laplacian || kind == Kind::banded) {
        EXPECT_GT(uniform, 0);
      }
      EXPECT_LT(uniform, static_cast<int>(ps.steps.size()));
    }

    grid::Field x = owned_vector(m);
    auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::waitall, m);
    halo->exchange(x);
    const double* gh = halo->ghosts().data();
    const auto n = static_cast<std::size_t>(m.local_rows());
    const int ni = packed.interior_rows();
    std::vector<double> y1(n, -7.0), y2(n, -7.0), b(n), dinv(n), u1(n, -7.0), u2(n, -7.0);
    for (std::size_t i = 0; i < n; ++i) {
      b[i] = 1.0 + 0.1 * static_cast<double>(i % 5);
      dinv[i] = 1.0 / packed.diagonal()[i];
    }
    EXPECT_EQ(ops::spmv_interior(packed, x.origin(), y1.data(), 0, ni),
              ops::spmv_interior(plain, x.origin(), y2.data(), 0, ni));
    EXPECT_EQ(ops::jacobi_interior(packed, b.data(), dinv.data(), x.origin(), u1.data(), 0, ni),
              ops::jacobi_interior(plain, b.data(), dinv.data(), x.origin(), u2.data(), 0, ni));
    for (std::size_t i = 0; i < static_cast<std::size_t>(ni); ++i) {
      ASSERT_EQ(y1[i], y2[i]) << "row " << i;
      ASSERT_EQ(u1[i], u2[i]) << "row " << i;
    }
    EXPECT_EQ(ops::residual(packed, b.data(), x.origin(), gh, nullptr),
              ops::residual(plain, b.data(), x.origin(), gh, nullptr));
    halo->close();
    m.free();
  }
}

TEST(CsrOperator, CsrRowsWithTheSameColumnsAreGroupedUpToEight) {
  // Kind::blocks: every block's rows share their columns; a block of 9 is
  // two groups (8 + 1). The Laplacian's rows all differ: no groups.
  for (const Kind kind : {Kind::blocks, Kind::laplacian}) {
    sparse::DistMatrix m = build(kind, 61);
    const ops::CsrOperator op(m, ops::InteriorLayout::csr);
    const ops::CsrBlock& in = op.interior();
    if (kind == Kind::laplacian || in.rows() == 0) {
      EXPECT_TRUE(in.groups.empty());
      m.free();
      continue;
    }
    // Grouped where the groups average 1.5 rows or more: then they cover
    // the rows, each within a run, each at most 8 rows of equal columns,
    // and no two neighbours could have been one.
    int groups = 0;
    for (const ops::RowRun& run : in.runs) {
      for (int p = run.position; p < run.position + run.count;) {
        int q = p + 1;
        const auto same = [&](int r) {
          return std::equal(in.col.begin() + in.ptr[p], in.col.begin() + in.ptr[p + 1],
                            in.col.begin() + in.ptr[r], in.col.begin() + in.ptr[r + 1]);
        };
        while (q < run.position + run.count && q - p < 8 && same(q)) ++q;
        ++groups;
        p = q;
      }
    }
    if (2 * in.rows() < 3 * groups) {
      EXPECT_TRUE(in.groups.empty());
    } else {
      ASSERT_EQ(static_cast<int>(in.groups.size()), groups + 1);
      EXPECT_EQ(in.groups.front(), 0);
      EXPECT_EQ(in.groups.back(), in.rows());
    }
    if (world().size() == 1) {
      EXPECT_FALSE(in.groups.empty()) << "61 rows in 13 groups";
    }
    for (std::size_t g = 0; g + 1 < in.groups.size(); ++g) {
      EXPECT_LE(in.groups[g + 1] - in.groups[g], ops::CsrBlock::max_group);
      for (int p = in.groups[g] + 1; p < in.groups[g + 1]; ++p)
        EXPECT_TRUE(std::equal(in.col.begin() + in.ptr[p], in.col.begin() + in.ptr[p + 1],
                               in.col.begin() + in.ptr[in.groups[g]],
                               in.col.begin() + in.ptr[in.groups[g] + 1]));
    }
    m.free();
  }
}

TEST(LoadSystem, EveryPartitionerGivesTheSerialProductAndWritesBack) {
  const par::Comm w = world();
  const std::string dir = scratch_dir();
  const std::string path = dir + "/a.mtx";
  const std::string rhs = dir + "/b.mtx";
  const sparse::CsrMatrix a = global_matrix(Kind::unsymmetric, 97);
  if (w.is_root()) {
    std::ofstream(path) << sparse::format_matrix(a);
    std::vector<double> b(97);
    for (int i = 0; i < 97; ++i) b[i] = i;
    std::ofstream(rhs) << sparse::format_vector(b);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<double> xs(97), ys(97);
  for (int i = 0; i < 97; ++i) xs[i] = value_of(i);
  sparse::multiply(a, xs, ys);
  for (const auto method :
       {sparse::Partitioner::block, sparse::Partitioner::metis, sparse::Partitioner::scotch}) {
    if (!sparse::partitioner_available(method)) continue;
    for (const auto weight : {sparse::PartWeight::rows, sparse::PartWeight::nnz}) {
      sparse::LoadOptions options;
      options.partition = {method, weight};
      options.rhs = rhs;
      sparse::LoadedSystem s = sparse::load_system(w, path, options);
      const sparse::DistMatrix& m = s.matrix;
      EXPECT_EQ(m.global_rows(), 97);
      EXPECT_EQ(s.info.entries, a.nnz());
      EXPECT_FALSE(s.exact_known);
      // b arrives permuted like the rows.
      for (int i = 0; i < m.local_rows(); ++i) ASSERT_EQ(s.b[i], s.file_rows[i]);
      // The distributed numbering puts interior rows first.
      const ops::CsrOperator op(m);
      ASSERT_LE(op.interior().runs.size(), 1u);
      ASSERT_LE(op.boundary_local().runs.size(), 1u);
      // y = A x in the distributed numbering, gathered in file order.
      grid::Field x({m.local_rows(), 1, 1}, 0);
      for (int i = 0; i < m.local_rows(); ++i) x.origin()[i] = value_of(s.file_rows[i]);
      auto halo = comm::make_sparse_halo_exchange(comm::HaloStrategy::neighbor, m);
      halo->exchange(x);
      std::vector<double> y(static_cast<std::size_t>(m.local_rows()));
      ops::spmv_interior(op, x.origin(), y.data(), 0, op.interior_rows());
      ops::spmv_boundary(op, x.origin(), halo->ghosts().data(), y.data());
      halo->close();
      const auto all = sparse::gather_in_file_order(m.comm(), s.file_rows, y, 97);
      if (w.is_root()) {
        for (int i = 0; i < 97; ++i) ASSERT_NEAR(all[i], ys[i], 1e-13 * std::abs(ys[i]));
      }
      // The solution file: x in file order, bit for bit.
      sparse::write_solution(s.matrix, s.file_rows, std::span<const double>(x.origin(), y.size()),
                             dir + "/x.mtx");
      if (w.is_root()) {
        EXPECT_EQ(sparse::read_vector(dir + "/x.mtx", 97, "--x0"), xs);
      }
      s.matrix.free();
    }
  }
  // Without --rhs: b = A * 1 (row sums), the solution known.
  sparse::LoadedSystem s = sparse::load_system(w, path, {});
  EXPECT_TRUE(s.exact_known);
  for (int i = 0; i < s.matrix.local_rows(); ++i) {
    const std::int64_t f = s.file_rows[i];
    double sum = 0.0;
    for (std::int64_t k = a.row_ptr[f]; k < a.row_ptr[f + 1]; ++k) sum += a.val[k];
    EXPECT_DOUBLE_EQ(s.b[i], sum);
    EXPECT_EQ(s.x0[i], 0.0);
  }
  s.matrix.free();
  MPI_Barrier(MPI_COMM_WORLD);
  if (w.is_root()) fs::remove_all(dir);
}

TEST(LoadSystem, BadFilesStopEveryRankWithTheSameLine) {
  const par::Comm w = world();
  const std::string dir = scratch_dir();
  if (w.is_root()) {
    std::ofstream(dir + "/bad.mtx") << "%%MatrixMarket matrix coordinate real general\n3 3 2\n"
                                       "1 1 1\n4 1 1\n";
    std::ofstream(dir + "/rect.mtx") << "%%MatrixMarket matrix coordinate real general\n3 4 1\n"
                                        "1 1 1\n";
    std::ofstream(dir + "/short.mtx") << sparse::format_vector(std::vector<double>(2, 1.0));
    std::ofstream(dir + "/big.mtx") << "%%MatrixMarket matrix coordinate real general\n"
                                       "1000000 1000000 100000000000\n";
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const auto message = [&](const std::string& file, sparse::LoadOptions options = {}) {
    try {
      sparse::LoadedSystem s = sparse::load_system(w, dir + "/" + file, options);
      s.matrix.free();
    } catch (const core::InputError& e) {
      // The same line on every rank.
      std::string m = e.what();
      std::string root = m;
      int length = static_cast<int>(root.size());
      MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
      root.resize(static_cast<std::size_t>(length));
      MPI_Bcast(root.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD);
      EXPECT_EQ(m, root);
      return m;
    }
    return std::string("no error");
  };
  EXPECT_NE(message("bad.mtx").find("bad.mtx:4: row index '4'"), std::string::npos);
  EXPECT_NE(message("missing.mtx").find("missing.mtx: cannot open"), std::string::npos);
  EXPECT_NE(message("rect.mtx").find("expected a square matrix"), std::string::npos);
  EXPECT_NE(message("big.mtx").find("big.mtx:2:"), std::string::npos);
  sparse::LoadOptions with_rhs;
  with_rhs.rhs = dir + "/short.mtx";
  if (w.is_root()) {
    std::ofstream(dir + "/ok.mtx") << sparse::format_matrix(global_matrix(Kind::laplacian, 12));
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_NE(message("ok.mtx", with_rhs).find("--rhs"), std::string::npos);
  EXPECT_NE(message("ok.mtx", with_rhs).find("expected 12"), std::string::npos);
  MPI_Barrier(MPI_COMM_WORLD);
  if (w.is_root()) fs::remove_all(dir);
}
