// CsrKrylovSolver: krylov_solve's checks and preconditioner setup once,
// then one KrylovContext per solve (krylov_run.hpp).
#include "asyncsolve/solvers/krylov_solver.hpp"

#include <cassert>
#include <stdexcept>

#include "krylov_run.hpp"
#include "linear_operator.hpp"

namespace asyncsolve::solvers {

struct CsrKrylovSolver::State {
  CsrSystem& system;
  KrylovOptions options;
  detail::KrylovLoop loop;
  detail::CsrLinearOperator op;
  detail::PreparedPc pc;
  bool first = true;

  State(CsrSystem& s, const sparse::DistMatrix& matrix, comm::SparseHaloExchange& halo,
        const KrylovOptions& o)
      : system(s), options(o), loop(detail::loop_of(o.method)), op(s.op, matrix, halo) {
    options.repeat_solves = 1;
  }
};

CsrKrylovSolver::CsrKrylovSolver(CsrSystem& system, const sparse::DistMatrix& matrix,
                                 comm::SparseHaloExchange& halo, const KrylovOptions& options) {
  detail::check_csr_krylov(system, matrix, options);
  state_ = std::make_unique<State>(system, matrix, halo, options);
  state_->pc = detail::setup_preconditioner(state_->op, state_->options);
}

CsrKrylovSolver::CsrKrylovSolver(CsrKrylovSolver&&) noexcept = default;
CsrKrylovSolver& CsrKrylovSolver::operator=(CsrKrylovSolver&&) noexcept = default;

CsrKrylovSolver::~CsrKrylovSolver() {
  // A preconditioner still set up here was not freed collectively (a bug).
  assert(state_ == nullptr || state_->pc.pc == nullptr);
}

SolveResult CsrKrylovSolver::solve() {
  if (state_ == nullptr) throw std::logic_error("CsrKrylovSolver::solve after free()");
  State& s = *state_;
  const double setup_s = s.first ? s.pc.setup_s : 0.0;
  s.first = false;
  return detail::solve_once(s.op, s.system.x, s.system.b, s.options, s.loop, s.pc.pc.get(),
                            setup_s);
}

void CsrKrylovSolver::free() {
  if (state_ == nullptr) return;
  if (state_->pc.pc) {
    state_->pc.pc->free();
    state_->pc.pc.reset();
  }
  state_.reset();
}

}  // namespace asyncsolve::solvers
