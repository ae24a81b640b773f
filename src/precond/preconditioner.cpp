// make_preconditioner, and the two preconditioners that need no setup: none
// (z = r) and jacobi (z = D^-1 r). The Krylov solvers fuse jacobi into their
// vector kernels; these serve the interface and its tests.
#include "asyncsolve/precond/preconditioner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/timer.hpp"
#include "precond_impl.hpp"

namespace asyncsolve::precond {

namespace {

/// z = c r with c = 1 (none) or D^-1 (jacobi).
class ScalingPreconditioner final : public Preconditioner {
 public:
  ScalingPreconditioner(PcKind kind, ops::Scaling scale) : scale_(scale) {
    report_.name = std::string(pc_kind_name(kind));
  }
  void apply(grid::Field& r, grid::Field& z) override {
    ops::scale(scale_, r, z);
    ++report_.applies;
  }
  const PcReport& report() const override { return report_; }

 private:
  ops::Scaling scale_;
  PcReport report_;
};

template <class Col>
DiagonalBlock diagonal_block_of(std::span<const std::int64_t> row_ptr, std::span<const Col> col,
                                std::span<const double> val, std::int64_t first) {
  DiagonalBlock b;
  const auto n = static_cast<std::int64_t>(row_ptr.size()) - 1;
  b.row_ptr.reserve(row_ptr.size());
  b.col.reserve(col.size());
  b.val.reserve(val.size());
  std::vector<std::pair<int, double>> row;
  for (std::int64_t i = 0; i < n; ++i) {
    const std::size_t begin = b.col.size();
    bool ascending = true;
    for (std::int64_t e = row_ptr[i]; e < row_ptr[i + 1]; ++e) {
      const std::int64_t c = static_cast<std::int64_t>(col[e]) - first;
      if (c < 0 || c >= n) continue;
      ascending = ascending && (b.col.size() == begin || b.col.back() < c);
      b.col.push_back(static_cast<int>(c));
      b.val.push_back(val[e]);
    }
    if (!ascending) {
      // sorted by column, repeated columns summed
      row.clear();
      for (std::size_t e = begin; e < b.col.size(); ++e) row.emplace_back(b.col[e], b.val[e]);
      std::sort(row.begin(), row.end());
      b.col.resize(begin);
      b.val.resize(begin);
      for (std::size_t e = 0; e < row.size(); ++e) {
        if (e > 0 && row[e].first == row[e - 1].first) {
          b.val.back() += row[e].second;
          continue;
        }
        b.col.push_back(row[e].first);
        b.val.push_back(row[e].second);
      }
    }
    b.row_ptr.push_back(static_cast<std::int64_t>(b.col.size()));
  }
  return b;
}

}  // namespace

DiagonalBlock make_diagonal_block(std::span<const std::int64_t> row_ptr,
                                  std::span<const std::int64_t> col, std::span<const double> val,
                                  std::int64_t first) {
  return diagonal_block_of(row_ptr, col, val, first);
}

DiagonalBlock make_diagonal_block(std::span<const std::int64_t> row_ptr,
                                  std::span<const std::int32_t> col, std::span<const double> val,
                                  std::int64_t first) {
  return diagonal_block_of(row_ptr, col, val, first);
}

DiagonalBlock PcOperator::diagonal_block() {
  const AssembledRows rows = assemble();
  DiagonalBlock b = make_diagonal_block(rows.row_ptr, rows.col, rows.val, rows.first_row);
  b.first_row = rows.first_row;
  b.global_rows = rows.global_rows;
  return b;
}

double PcOperator::gershgorin_bound() {
  const AssembledRows rows = assemble();
  double bound = 0.0;
  for (int i = 0; i < rows.rows(); ++i) {
    double sum = 0.0;
    double diagonal = 0.0;
    for (std::int64_t k = rows.row_ptr[i]; k < rows.row_ptr[i + 1]; ++k) {
      sum += std::abs(rows.val[k]);
      if (rows.col[k] == rows.first_row + i) diagonal += std::abs(rows.val[k]);
    }
    bound = std::max(bound, sum / diagonal);
  }
  return collectives::make_allreduce(collectives::AllreduceAlgorithm{}, comm())->max(bound);
}

std::unique_ptr<Preconditioner> make_preconditioner(const PcSettings& settings, PcOperator& op) {
  switch (settings.kind) {
    case PcKind::none:
      return std::make_unique<ScalingPreconditioner>(PcKind::none, ops::Scaling{1.0, nullptr});
    case PcKind::jacobi:
      return std::make_unique<ScalingPreconditioner>(PcKind::jacobi, op.inverse_diagonal());
    case PcKind::chebyshev:
      return detail::make_chebyshev(settings, op);
    case PcKind::boomeramg:
      return detail::make_boomeramg(settings, op);
    case PcKind::ilu0:
      return detail::make_ilu0(settings, op);
    case PcKind::additive_schwarz:
      return detail::make_schwarz(settings, op);
  }
  return nullptr;
}

}  // namespace asyncsolve::precond
