#pragma once
/// Lanczos for the ground state of the TFIM (paper 004's SPIN benchmark).
///
/// Algorithm (paper 004, Algorithm 1, with the w -= alpha v step its slide
/// leaves out): v_1 = start / ||start||, beta_1 = 0, and for j = 1, 2, ...
///   w = H v_j - beta_j v_{j-1};  alpha_j = (w, v_j);  w -= alpha_j v_j;
///   beta_{j+1} = ||w||;  v_{j+1} = w / beta_{j+1};
/// theta_j, the lowest eigenvalue of the j x j tridiagonal T_j, is found
/// each iteration (LAPACK dstebz + dstein). Stop when
///   |theta_j - theta_{j-1}| <= tol |theta_j|   (reason "tolerance"),
/// or when beta_{j+1} <= 1e-11 max_i(|alpha_i|, beta_i): the Krylov space is
/// invariant under H and theta_j is an exact eigenvalue (reason
/// "invariant_subspace", converged: tiny spaces end this way), or after
/// max_iters (reason "max_iters", not converged).
///
/// No reorthogonalisation: once theta_1 converges the basis loses
/// orthogonality and copies ("ghosts") of converged Ritz values appear, but
/// none below the lowest eigenvalue, so the ground-state energy is
/// unaffected (Paige); only the energy is computed, not the ground state.
///
/// The start vector's entry for global state s is kernels::tfim_start_value(s):
/// the same vector on any rank count. Per iteration: one mat-vec (m remote
/// blocks of 2^(n-m) doubles in and out per rank), two one-double
/// reductions, one tridiagonal solve of size j (O(j)).
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/kernels/spin_exchange.hpp"
#include "asyncsolve/kernels/tfim.hpp"
#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::kernels {

/// The distributed TFIM Hamiltonian: this rank's block of 2^(n-m) states on
/// 2^m ranks, the local part from kernels::TfimHamiltonian and the remote part
/// from a kernels::SpinExchange. Non-owning: the Hamiltonian and exchange must
/// outlive it.
/// Phases SpinOperator::apply() adds time to (indices into the caller's PhaseTimers).
struct SpinPhaseIds {
  std::size_t local = 0;   ///< diagonal and low-bit flips
  std::size_t remote = 1;  ///< starting the exchange, waiting, adding the remote blocks
};

class SpinOperator {
 public:
  using PhaseIds = SpinPhaseIds;

  /// Throws std::invalid_argument if the rank count does not leave
  /// n - m >= 1 local bits or differs from the exchange's.
  SpinOperator(const kernels::TfimHamiltonian& hamiltonian, kernels::SpinExchange& exchange,
               const par::Comm& comm);

  /// Collective: y = H x on this rank's block (x and y of block() doubles,
  /// not overlapping). Times the parts into `timers` when given.
  void apply(std::span<const double> x, std::span<double> y, core::PhaseTimers* timers = nullptr,
             PhaseIds ids = {}) const;

  std::size_t block() const noexcept { return block_; }
  int local_bits() const noexcept { return local_bits_; }
  std::uint64_t first_state() const noexcept { return first_state_; }
  const kernels::TfimHamiltonian& hamiltonian() const noexcept { return h_; }

 private:
  const kernels::TfimHamiltonian& h_;
  kernels::SpinExchange& exchange_;
  int local_bits_ = 0;
  std::size_t block_ = 0;
  std::uint64_t first_state_ = 0;
};

/// One Lanczos iteration as rank 0 saw it.
struct LanczosPoint {
  long iteration = 0;
  double time_s = 0;  ///< since the start of the solve
  double energy = 0;  ///< theta_j
  double change = 0;  ///< |theta_j - theta_{j-1}| / |theta_j| (|theta_j - theta_{j-1}| if theta_j =
                      ///< 0; NaN at j = 1)
  double alpha = 0;
  double beta = 0;            ///< beta_{j+1}
  double residual_bound = 0;  ///< beta_{j+1} |s_j|: ||H y - theta y|| for the Ritz vector y
};

/// Settings of lanczos_ground_state.
struct LanczosOptions {
  double tol = 1e-10;     ///< relative change of theta between iterations
  long max_iters = 1000;  ///< >= 1
  /// Relative size of beta_{j+1} that counts as an invariant subspace.
  double breakdown = 1e-11;
  /// Called on every rank after each iteration.
  std::function<void(const LanczosPoint&)> monitor;
};

/// What lanczos_ground_state returns (global values identical on every rank;
/// times this rank's).
struct LanczosResult {
  bool converged = false;
  std::string reason;  ///< tolerance, invariant_subspace or max_iters
  long iterations = 0;
  double energy = 0;
  double change = 0;
  double residual_bound = 0;
  double time_s = 0;
  /// local (low-bit mat-vec), remote (exchange), reduce (inner products),
  /// tridiagonal (LAPACK), vector (axpy and scaling), start (start vector).
  core::PhaseTimers phases{{"local", "remote", "reduce", "tridiagonal", "vector", "start"}};
  std::vector<LanczosPoint> history;
};

/// Collective over the operator's communicator: the lowest eigenvalue of H.
/// Allocates three vectors of op.block() doubles.
LanczosResult lanczos_ground_state(const SpinOperator& op, collectives::Allreduce& reduce,
                                   const LanczosOptions& options);

}  // namespace asyncsolve::kernels
