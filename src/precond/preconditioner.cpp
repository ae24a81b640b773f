// make_preconditioner, and the two preconditioners that need no setup: none
// (z = r) and jacobi (z = D^-1 r). The Krylov solvers fuse jacobi into their
// vector kernels; these serve the interface and its tests.
#include "asyncsolve/precond/preconditioner.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

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

}  // namespace

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
  }
  return nullptr;
}

}  // namespace asyncsolve::precond
