#pragma once
// Internal: what the halo-exchange strategies share. StagedHalo runs an
// exchange as the same steps for all of them (pack, post, complete, unpack),
// each strategy supplying how its messages move; below it, the two ways of
// holding the slabs: one message per link with buffers of its own
// (LinkedHalo: waitall, persistent), or every link packed into one buffer
// for a collective (PackedHaloBase: alltoallv, ialltoallv, neighbor).
#include <mpi.h>

#include <cstddef>
#include <vector>

#include "asyncsolve/comm/halo_exchange.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {

/// An exchange in steps: start() checks that none is in flight and that
/// close() has not come, packs, then post()s the transfers; finish()
/// complete()s them, then unpacks; close() refuses while an exchange is in
/// flight, then release()s what the strategy holds (start() after it throws).
/// Misuse (start twice, finish without start) throws std::logic_error.
class StagedHalo : public HaloExchange {
 public:
  /// A started exchange must be finished first (debug builds assert it).
  ~StagedHalo() override;
  void start(grid::Field& field) final;
  void finish(grid::Field& field) final;
  void close() final;

 protected:
  /// Copies the send slabs of `field` into the send buffers.
  virtual void pack(const grid::Field& field) = 0;
  /// Copies the receive buffers into the halo of `field`.
  virtual void unpack(grid::Field& field) const = 0;
  /// Starts the transfers of the packed buffers.
  virtual void post() = 0;
  /// Waits until every transfer of the exchange has completed.
  virtual void complete() = 0;
  /// Frees what close() releases (requests, communicators); by default nothing.
  virtual void release() {}

  bool in_flight_ = false;  ///< between start() and finish()

 private:
  bool closed_ = false;
};

/// A point-to-point strategy: one send and one receive buffer per link,
/// allocated once at construction and never moved after (requests may hold
/// their addresses). Messages per exchange: one per link. Not copyable.
class LinkedHalo : public StagedHalo {
 public:
  LinkedHalo(const LinkedHalo&) = delete;
  LinkedHalo& operator=(const LinkedHalo&) = delete;
  ~LinkedHalo() override = default;
  int messages_per_exchange() const final { return static_cast<int>(links_.size()); }
  std::size_t bytes_per_exchange() const final { return bytes_; }

 protected:
  /// One link and its buffers (send_count and recv_count values).
  struct Link {
    HaloLink link;
    std::vector<double> send_buffer;
    std::vector<double> recv_buffer;
  };

  /// The links of `neighbourhood` (halo_links) with their buffers. Not
  /// collective.
  LinkedHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
             Neighbourhood neighbourhood);

  void pack(const grid::Field& field) final;
  void unpack(grid::Field& field) const final;

  std::vector<Link> links_;  ///< in direction_code order; never resized after construction

 private:
  std::size_t bytes_ = 0;
};

/// A collective strategy: every link packed into one send and one receive
/// buffer (PackedHalo), moved by one collective whose request (if it has
/// one) is `request_`: test() is MPI_Test on it, complete() MPI_Wait, and the
/// destructor completes one left active (unless MPI is finalized). Messages
/// and bytes per exchange as for waitall. Not copyable.
class PackedHaloBase : public StagedHalo {
 public:
  PackedHaloBase(const PackedHaloBase&) = delete;
  PackedHaloBase& operator=(const PackedHaloBase&) = delete;
  ~PackedHaloBase() override;
  int messages_per_exchange() const final { return packed_.links(); }
  std::size_t bytes_per_exchange() const final { return packed_.bytes(); }

 protected:
  /// The packed layout of `neighbourhood`. Not collective.
  PackedHaloBase(const grid::Decomposition& decomposition, const grid::Field& shape,
                 Neighbourhood neighbourhood)
      : packed_(decomposition, shape, neighbourhood) {}

  void pack(const grid::Field& field) final { packed_.pack(field); }
  void unpack(grid::Field& field) const final { packed_.unpack(field); }
  bool do_test() final;
  void complete() final;

  PackedHalo packed_;
  MPI_Request request_ = MPI_REQUEST_NULL;  ///< the collective in flight; null if blocking
};

}  // namespace asyncsolve::comm
