// make_preconditioner, and the two preconditioners that need no setup: none
// (z = r) and jacobi (z = D^-1 r). The Krylov solvers fuse jacobi into their
// vector kernels; these serve the interface and its tests.
#include "asyncsolve/precond/preconditioner.hpp"

#include <utility>

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
