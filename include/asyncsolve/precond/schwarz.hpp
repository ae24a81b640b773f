#pragma once
/// Additive Schwarz on a distributed matrix: each rank's subdomain (its
/// owned rows grown by an overlap, sparse/subdomain.hpp) factorised once by
/// a local solver, applied as
///   basic:       z = sum_i R_i^T A_i^-1 R_i r        (ASM, symmetric: CG)
///   restricted:  z = sum_i R~_i^T A_i^-1 R_i r       (RAS: owned rows only)
/// plus, with a coarse space, the additive z += Z E^+ Z^T r (coarse.hpp).
///
/// Per apply: one exchange of r over the overlap plan (the overlap rows'
/// values from their owners), one local solve, for basic one reverse
/// exchange (the overlap rows' results back to their owners, who add them),
/// and with a coarse space one MPI_Allgather of count values a rank.
///
/// What an asynchronous Schwarz iteration needs is here too: subdomain()
/// (its halo plan and whole rows give b - A x on the subdomain from the
/// newest extended-halo values) and solve_local (the subdomain solve).
#include <memory>
#include <span>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/comm/sparse_halo.hpp"
#include "asyncsolve/precond/coarse.hpp"
#include "asyncsolve/precond/local_solver.hpp"
#include "asyncsolve/precond/near_null_space.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "asyncsolve/sparse/subdomain.hpp"

namespace asyncsolve::precond {

/// What a Schwarz setup built, for the result document.
struct SchwarzReport {
  sparse::SubdomainMetrics subdomains;
  LocalSolverReport local;        ///< this rank's
  double max_factor_s = 0;        ///< the slowest rank's factorisation
  double max_memory_bytes = 0;    ///< the largest factors
  double total_memory_bytes = 0;  ///< every rank's factors
  double max_fill = 0;            ///< the largest fill (nnz factor / nnz A_i)
  int coarse_dimension = 0;       ///< 0: one level
  int coarse_dropped = 0;         ///< coarse eigenvalues dropped as zero
  double coarse_setup_s = 0;
};

/// Additive Schwarz on `matrix` (borrowed: it must outlive this object).
class Schwarz {
 public:
  /// Collective over matrix.comm(): grows the subdomains, factorises A_i
  /// (every rank; a failure on any rank throws core::CollectiveBreakdown on
  /// every rank, naming the first failing rank's subdomain and what its
  /// solver found), builds the exchanges (`strategy`) and, with
  /// settings.coarse, the coarse space from `near_null` (null: the
  /// partition of unity). Throws core::InputError for an overlap out of
  /// range or a local solver this build lacks.
  Schwarz(const sparse::DistMatrix& matrix, const SchwarzSettings& settings,
          const NearNullSpace* near_null,
          comm::HaloStrategy strategy = comm::HaloStrategy::waitall);
  Schwarz(const Schwarz&) = delete;
  Schwarz& operator=(const Schwarz&) = delete;

  /// Collective: z = M^-1 r on the owned rows (local_rows() values each).
  void apply(std::span<const double> r, std::span<double> z);

  /// Collective: out = R_i v, the owned values of v (local_rows() values)
  /// then the overlap rows' from their owners (rows_count() values).
  void restrict_to_subdomain(std::span<const double> v, std::span<double> out);

  /// Local: y = A_i^-1 rs on the subdomain's rows (rows_count() values each).
  void solve_local(std::span<const double> rs, std::span<double> y) { solver_->solve(rs, y); }

  const sparse::Subdomain& subdomain() const noexcept { return sub_; }
  /// The coarse space (settings.coarse), else null.
  CoarseSpace* coarse() noexcept { return coarse_.get(); }
  const SchwarzReport& report() const noexcept { return report_; }
  const SchwarzSettings& settings() const noexcept { return settings_; }

  /// What the setup built as a preconditioner's report entries (numbers:
  /// the subdomain and factor sizes; settings: type, overlap, local solver
  /// asked and used, coarse), `block_size` the near-null space's.
  void describe(PcReport& report, int block_size) const;

  /// Collective: closes the exchanges. Call once, before the matrix is freed.
  void close();

 private:
  const sparse::DistMatrix& matrix_;
  SchwarzSettings settings_;
  sparse::Subdomain sub_;
  sparse::NeighbourPlan reverse_;
  std::unique_ptr<LocalSolver> solver_;
  std::unique_ptr<CoarseSpace> coarse_;
  std::unique_ptr<comm::SparseHaloExchange> forward_;
  std::unique_ptr<comm::SparseHaloExchange> backward_;
  /// rs_ = R_i rs_: the owned values in rs_, the overlap's fetched after them.
  void fetch_overlap();
  grid::Field rs_;  ///< R_i r: the owned values, then the overlap's
  grid::Field ys_;  ///< A_i^-1 R_i r
  SchwarzReport report_;
  bool closed_ = false;
};

}  // namespace asyncsolve::precond
