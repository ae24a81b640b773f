#pragma once
/// Overlapping subdomains of a distributed matrix, for Schwarz methods.
///
/// A rank's subdomain is its owned rows grown by `overlap` layers of the
/// matrix graph (row i is adjacent to the columns it stores): layer 1 holds
/// the rows of the owned rows' ghost columns, layer l + 1 the rows of the
/// columns layer l references outside the subdomain so far. The overlap rows
/// (their whole matrix rows) are fetched from their owners at setup.
///
/// Three numberings, all local to the rank:
/// - subdomain: 0 .. owned-1 the owned rows (the DistMatrix's local order),
///   then the overlap rows ascending by global index (size rows());
/// - extended: 0 .. owned-1 the owned entries, then owned + e for halo
///   entry e, the halo being every global index outside the owned rows that
///   the subdomain holds or its rows reference, ascending (grouped by owner,
///   so each neighbour's entries are one block);
/// - overlap ghosts: the overlap rows alone, ascending (overlap_plan's ghosts).
///
/// Plans (sparse::NeighbourPlan, usable by every comm strategy and channel):
/// - overlap_plan: who sends whom which owned values to fill the overlap
///   (what additive Schwarz restricts r to);
/// - halo_plan: the extended halo, i.e. the overlap rows plus the columns
///   the subdomain's rows reference outside it: what a restricted Schwarz
///   update needs to form b - A x on the subdomain from the newest values;
/// - reverse_plan(): the overlap's values travelling back to their owners
///   (the sum of additive Schwarz's overlapping contributions).
#include <cstdint>
#include <span>
#include <vector>

#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::sparse {

/// The largest overlap (--overlap) accepted.
inline constexpr int kMaxOverlap = 8;

/// A square CSR block held by one rank, local indices.
struct LocalCsr {
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int32_t> col;
  std::vector<double> val;
  int rows() const noexcept { return static_cast<int>(row_ptr.size()) - 1; }
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(val.size()); }
};

/// Sizes of the subdomains and their exchanges, the same on every rank.
struct SubdomainMetrics {
  int overlap = 0;                    ///< layers grown
  std::int64_t overlap_rows = 0;      ///< overlap rows, summed over ranks
  std::int64_t max_overlap_rows = 0;  ///< the most overlap rows of one rank
  std::int64_t max_rows = 0;          ///< the largest subdomain (rows)
  std::int64_t max_nnz = 0;           ///< the most non-zeros of one subdomain matrix
  std::int64_t overlap_volume = 0;    ///< values per overlap exchange, summed over ranks
  std::int64_t halo_volume = 0;       ///< values per extended-halo exchange, summed over ranks
  std::int64_t halo_messages = 0;     ///< messages per extended-halo exchange, summed
  std::int64_t max_halo_volume = 0;   ///< the most values one rank receives per halo exchange
  int max_neighbours = 0;             ///< the most ranks one rank's halo plan exchanges with
};

/// One rank's overlapping subdomain. Plain data; built collectively by
/// grow_subdomain.
struct Subdomain {
  int owned = 0;  ///< owned rows (first in every numbering)
  int overlap = 0;
  /// Global index of every subdomain row (owned, then overlap ascending).
  std::vector<std::int64_t> globals;
  /// Layer (1 .. overlap) of each overlap row, in overlap order.
  std::vector<int> layer;
  /// A_i: the subdomain's rows restricted to its columns, subdomain numbering.
  LocalCsr matrix;
  /// The subdomain's whole rows, columns in the extended numbering.
  LocalCsr rows;
  /// Global index of every halo entry, ascending.
  std::vector<std::int64_t> halo_globals;
  /// Halo index of each overlap row (overlap row k is halo entry overlap_in_halo[k]).
  std::vector<int> overlap_in_halo;
  NeighbourPlan overlap_plan;
  NeighbourPlan halo_plan;
  SubdomainMetrics metrics;

  int rows_count() const noexcept { return static_cast<int>(globals.size()); }
  int overlap_rows() const noexcept { return rows_count() - owned; }
  /// The overlap plan reversed: sends the subdomain vector's overlap entries
  /// (indices owned .. rows_count()-1, read from a vector of rows_count()
  /// values) to their owners; what arrives from each rank is one block of
  /// the ghost array, to be added into the owned entries at that rank's
  /// overlap_plan.sends indices (same order).
  NeighbourPlan reverse_plan() const;
};

/// Collective over matrix.comm(): grows this rank's subdomain by `overlap`
/// layers (0 to kMaxOverlap; 0: the owned rows alone), fetching the overlap
/// rows from their owners (one round of MPI_Alltoall + MPI_Alltoallv per
/// layer), and builds the plans and the metrics. Throws core::InputError
/// for an overlap out of range (the same on every rank).
Subdomain grow_subdomain(const DistMatrix& matrix, int overlap);

}  // namespace asyncsolve::sparse
