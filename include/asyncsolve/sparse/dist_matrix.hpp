#pragma once
/// A square sparse matrix distributed by rows, with its ghost (halo)
/// columns and the neighbour plan that fills them.
///
/// Rank r owns the contiguous global rows [first_row, first_row + local_rows)
/// (ranks in order), and the entries of the vectors with those indices. Its
/// local matrix numbers columns locally: owned column j is j - first_row
/// (0 .. local_rows-1); every other column it references is a ghost, numbered
/// local_rows + g, the ghosts ascending by global index (so grouped by the
/// rank that owns them). The neighbour plan says which ranks send this rank
/// its ghosts (one contiguous block of the ghost array each) and which owned
/// values this rank sends to whom, in the order the receiver stores them.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::sparse {

/// Ghosts this rank receives from one rank per exchange.
struct RecvLink {
  int rank = 0;    ///< the owner of these ghosts
  int offset = 0;  ///< first ghost (index into the ghost array)
  int count = 0;   ///< ghosts from this rank
};

/// Owned values this rank sends to one rank per exchange.
struct SendLink {
  int rank = 0;              ///< the rank that needs them
  std::vector<int> indices;  ///< local indices of owned entries, in the receiver's ghost order
};

/// Who exchanges what with whom in a halo exchange of a distributed vector.
/// Both lists are ascending by rank; a rank may appear in one and not the
/// other (an unsymmetric pattern).
struct NeighbourPlan {
  std::vector<RecvLink> recvs;
  std::vector<SendLink> sends;
  int ghosts = 0;  ///< length of the ghost array

  /// Ranks in recvs or sends, ascending (one channel each, for the
  /// asynchronous solvers).
  std::vector<int> neighbours() const;
  /// Values this rank sends per exchange.
  std::int64_t send_volume() const noexcept;
};

/// Quality of the distribution, the same on every rank.
struct PartitionMetrics {
  std::int64_t edge_cut = 0;  ///< undirected edges i-j (i != j, a_ij or a_ji stored) between ranks
  std::int64_t volume = 0;    ///< values sent per halo exchange, summed over ranks
  std::int64_t messages = 0;  ///< messages per halo exchange, summed over ranks
  std::int64_t max_rank_volume = 0;  ///< the most values one rank receives per exchange
  int max_neighbours = 0;            ///< the most ranks one rank exchanges with
  double row_imbalance = 1.0;        ///< max rows / mean rows over ranks
  double nnz_imbalance = 1.0;        ///< max non-zeros / mean non-zeros over ranks
  std::int64_t min_rows = 0;
  std::int64_t max_rows = 0;
  std::int64_t interior_rows = 0;  ///< rows without a ghost column, summed over ranks
};

/// This rank's rows as a user holds them: CSR with global column indices.
/// Within a row, columns may come in any order; repeated columns are summed.
struct RowsView {
  std::span<const std::int64_t> row_ptr;  ///< local rows + 1 offsets, row_ptr[0] == 0
  std::span<const std::int64_t> col;      ///< global column indices (0-based)
  std::span<const double> val;
};

/// One rank's part of a distributed square matrix. Move-only; owns a
/// duplicate of the communicator it was built on (what its halo exchanges
/// use), freed by the collective free().
class DistMatrix {
 public:
  DistMatrix() = default;
  DistMatrix(DistMatrix&&) noexcept = default;
  DistMatrix& operator=(DistMatrix&&) noexcept = default;
  DistMatrix(const DistMatrix&) = delete;
  DistMatrix& operator=(const DistMatrix&) = delete;

  /// Collective over `comm`: builds the distributed matrix of `global_rows`
  /// rows from every rank's own rows (ranks own consecutive row ranges, in
  /// rank order; the sizes of the ranges are this call's `rows`). Copies
  /// the arrays; sorts each row by column and sums repeated columns;
  /// discovers the ghosts and the neighbour plan (one MPI_Alltoall of
  /// counts, one MPI_Alltoallv of indices) and the metrics. Throws
  /// core::InputError on every rank, naming the first rank at fault, if the
  /// row counts do not add up to global_rows, a rank has no row, row_ptr is
  /// not ascending from 0 to the entries, or a column is outside
  /// [0, global_rows).
  static DistMatrix from_rows(const par::Comm& comm, std::int64_t global_rows, RowsView rows);

  /// The communicator (an owned duplicate, MPI_ERRORS_RETURN).
  const par::Comm& comm() const noexcept { return comm_; }
  std::int64_t global_rows() const noexcept { return global_rows_; }
  /// Global index of this rank's first row.
  std::int64_t first_row() const noexcept { return first_row_; }
  int local_rows() const noexcept { return local_rows_; }
  /// Global row offsets of every rank (size ranks + 1).
  const std::vector<std::int64_t>& row_offsets() const noexcept { return offsets_; }

  /// Local CSR: row_ptr (local_rows + 1), local column indices (owned, then
  /// ghosts from local_rows on), values. Columns ascending by global index
  /// within each row.
  const std::vector<std::int64_t>& row_ptr() const noexcept { return row_ptr_; }
  const std::vector<std::int32_t>& col() const noexcept { return col_; }
  const std::vector<double>& val() const noexcept { return val_; }
  std::int64_t local_nnz() const noexcept { return static_cast<std::int64_t>(val_.size()); }
  std::int64_t global_nnz() const noexcept { return global_nnz_; }

  /// Global index of every ghost, ascending.
  const std::vector<std::int64_t>& ghost_globals() const noexcept { return ghost_globals_; }
  const NeighbourPlan& plan() const noexcept { return plan_; }
  const PartitionMetrics& metrics() const noexcept { return metrics_; }

  /// Collective: A <- S A S with S = diag(s), `s` holding this rank's
  /// local_rows() values (the ghosts' values are exchanged through the
  /// plan). With s_i = |a_ii|^-1/2 this is the symmetric scaling to a unit
  /// diagonal (Wolfson-Pou and Chow's distributed Southwell code).
  void scale_symmetric(std::span<const double> s);

  /// Collective: fills `ghosts` (plan().ghosts values) with the other
  /// ranks' entries of `owned` (local_rows() values), through the plan with
  /// MPI_Isend/MPI_Irecv on comm(): a setup-time exchange (the solvers use
  /// comm's strategies).
  void exchange_ghosts(std::span<const double> owned, std::span<double> ghosts) const;

  /// Collective: frees the communicator. Call at a point every rank
  /// reaches, after the strategies built on this matrix are closed.
  void free() { comm_.free(); }

 private:
  par::Comm comm_;
  std::int64_t global_rows_ = 0;
  std::int64_t first_row_ = 0;
  int local_rows_ = 0;
  std::int64_t global_nnz_ = 0;
  std::vector<std::int64_t> offsets_;
  std::vector<std::int64_t> row_ptr_{0};
  std::vector<std::int32_t> col_;
  std::vector<double> val_;
  std::vector<std::int64_t> ghost_globals_;
  NeighbourPlan plan_;
  PartitionMetrics metrics_;
};

/// Collective over `comm`: the plan whose ghosts are `ghost_globals`
/// (ascending global indices outside this rank's range [offsets[rank],
/// offsets[rank + 1])), each owned by the rank whose range of `offsets`
/// holds it. One MPI_Alltoall of counts and one MPI_Alltoallv of indices
/// tell the owners what to send. DistMatrix::from_rows builds its plan so;
/// so do the Schwarz subdomains (subdomain.hpp) their extended halo's.
NeighbourPlan plan_for_ghosts(const par::Comm& comm, const std::vector<std::int64_t>& offsets,
                              const std::vector<std::int64_t>& ghost_globals);

/// Collective over `comm`: fills `ghosts` (plan.ghosts values) with the
/// entries of `owned` the other ranks send through `plan`, by
/// MPI_Isend/MPI_Irecv: a setup-time exchange (the solvers use comm's
/// strategies). `owned` holds whatever the plan's send indices name.
void exchange_plan(const par::Comm& comm, const NeighbourPlan& plan, std::span<const double> owned,
                   std::span<double> ghosts);

/// Collective over `comm`: the message of the lowest rank passing a
/// non-empty `local_error`, on every rank; empty if no rank does.
std::string first_error(const par::Comm& comm, const std::string& local_error);

/// Collective over `comm`: throws core::InputError on every rank if any
/// rank passes an error (the message of the lowest such rank); returns
/// otherwise. How a verdict reached on some ranks stops all together.
void raise_together(const par::Comm& comm, const std::string& local_error);

/// Local: sqrt(||M||_1 ||M||_inf), a bound of ||M||_2, for M = (A_oo - D) D^-1,
/// A_oo this rank's rows and own columns, D its diagonal: one Jacobi sweep
/// with fixed ghosts maps the residual r of these rows to -M r, so it
/// raises ||r|| at most this many times. +inf where a diagonal entry is 0.
double jacobi_sweep_growth(const DistMatrix& a);

/// Local: sqrt(||G||_1 ||G||_inf), a bound of ||G||_2, for G this rank's rows
/// and ghost columns: a change d of the ghosts changes the residual of these
/// rows by G d, at most this many times ||d|| (0 without ghosts).
double ghost_block_norm(const DistMatrix& a);

}  // namespace asyncsolve::sparse
