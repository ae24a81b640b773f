#pragma once
/// Halo exchanges of distributed CSR vectors, over the neighbour plan of a
/// sparse::DistMatrix: the same strategies as for the structured fields
/// (--halo waitall, alltoallv, ialltoallv, neighbor, persistent), a
/// synchronous exchange over asynchronous channels (the asynchronous halo
/// is comm::make_async_sparse_halo, async_halo.hpp).
///
/// The vector is a one-row grid::Field without halo holding this rank's
/// local_rows() entries; the ghosts it needs land in the exchange's own
/// ghost array (ghosts(), in the matrix's ghost numbering), which every
/// receive writes directly: each neighbour's ghosts are one contiguous block.
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "asyncsolve/channel.hpp"
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/sparse/dist_matrix.hpp"

namespace asyncsolve::comm {

/// A halo exchange whose halo is a separate ghost array. start(x) packs the
/// owned entries each neighbour needs and starts the transfers; finish(x)
/// completes them, after which ghosts() holds the neighbours' entries of
/// the same exchange (until the next start()).
class SparseHaloExchange : public HaloExchange {
 public:
  /// The ghost array (never empty: one spare value when there is no ghost).
  std::span<double> ghosts() noexcept { return {ghosts_.data(), count_}; }
  std::span<const double> ghosts() const noexcept { return {ghosts_.data(), count_}; }

 protected:
  explicit SparseHaloExchange(std::size_t ghosts) : ghosts_(ghosts + 1, 0.0), count_(ghosts) {}
  double* ghost_data() noexcept { return ghosts_.data(); }

 private:
  std::vector<double> ghosts_;
  std::size_t count_;
};

/// Builds `strategy` for vectors of `matrix` (which must outlive it; the
/// exchange runs on the matrix's communicator). Collective over it for
/// `neighbor` (it creates a distributed-graph communicator whose sources are
/// the ranks this one receives from and whose destinations those it sends
/// to); call close() before the matrix is freed.
std::unique_ptr<SparseHaloExchange> make_sparse_halo_exchange(HaloStrategy strategy,
                                                              const sparse::DistMatrix& matrix);

/// The same over any neighbour plan on `comm` (both borrowed, outliving
/// the exchange): e.g. a Schwarz subdomain's overlap or extended-halo plan
/// (sparse/subdomain.hpp). The vector start() packs from holds the entries
/// the plan's send indices name.
std::unique_ptr<SparseHaloExchange> make_sparse_halo_exchange(HaloStrategy strategy,
                                                              const sparse::NeighbourPlan& plan,
                                                              const par::Comm& comm);

/// A synchronous exchange over asynchronous channels of `transport` (enum
/// as_transport), one per neighbour, one message in flight: every exchange
/// sends one message on every channel and waits for one from each (a rank
/// with nothing to send to a neighbour sends it an empty message, so both
/// ends stay in step). Runs synchronous Jacobi over rma and shmem.
/// Collective as channel creation is (over the communicator for rma and
/// shmem); close() destroys the channels.
std::unique_ptr<SparseHaloExchange> make_sparse_channel_halo_exchange(
    const sparse::DistMatrix& matrix, int transport);

/// The same over any neighbour plan on `comm` (both borrowed): sync
/// Schwarz's extended halo over rma and shmem.
std::unique_ptr<SparseHaloExchange> make_sparse_channel_halo_exchange(
    const sparse::NeighbourPlan& plan, const par::Comm& comm, int transport);

// The asynchronous channels of a neighbour plan, for asynchronous
// iterations: comm::make_async_sparse_halo (async_halo.hpp).

}  // namespace asyncsolve::comm
