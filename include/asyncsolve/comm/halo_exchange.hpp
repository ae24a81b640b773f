#pragma once
/// Halo exchange strategies behind one interface.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::comm {

/// Which neighbours a stencil needs: the 6 faces (7-point) or also the 12
/// edges and 8 corners (27-point).
enum class Neighbourhood { faces, full };

/// Fills the halo of a field with the neighbouring ranks' boundary layers.
/// Bound at construction to one decomposition and one field shape; start()
/// and finish() are collective among neighbours, and every start() must be
/// followed by finish() on the same field before the next start().
class HaloExchange {
 public:
  HaloExchange() = default;
  /// Not copyable: a strategy's requests and buffers belong to its exchanges.
  HaloExchange(const HaloExchange&) = delete;
  HaloExchange& operator=(const HaloExchange&) = delete;
  virtual ~HaloExchange() = default;
  /// Strategy name as given to --halo.
  virtual std::string_view name() const = 0;
  /// Packs the send layers of `field` and starts the transfers.
  virtual void start(grid::Field& field) = 0;
  /// Local: progresses the transfers of the exchange in flight without
  /// blocking (MPI_Test on its requests; paper 001 §3.4 calls NBC_Test every
  /// few planes of the interior mat-vec). True once every transfer has
  /// completed; finish() is still required. Counted in tests().
  bool test() {
    ++tests_;
    return do_test();
  }
  /// Completes the transfers and writes the received layers into the halo.
  virtual void finish(grid::Field& field) = 0;
  /// start() then finish().
  void exchange(grid::Field& field) {
    start(field);
    finish(field);
  }
  /// Messages this rank sends per exchange.
  virtual int messages_per_exchange() const = 0;
  /// Bytes this rank sends per exchange.
  virtual std::size_t bytes_per_exchange() const = 0;
  /// Collective: releases communication resources (channels, windows) at a
  /// point every rank reaches. Strategies that hold none do nothing.
  virtual void close() {}
  /// Calls of test() so far.
  long tests() const noexcept { return tests_; }

 protected:
  /// test() without the counting. Strategies whose start() blocks return true.
  virtual bool do_test() = 0;

 private:
  long tests_ = 0;
};

/// The halo-exchange strategies (--halo): waitall (Isend/Irecv + Waitall),
/// alltoallv (MPI_Alltoallv), ialltoallv (MPI_Ialltoallv), neighbor
/// (MPI_Ineighbor_alltoallv on a graph communicator it owns), persistent
/// (MPI_Send_init/MPI_Recv_init + MPI_Startall). See docs/design.md.
enum class HaloStrategy { waitall, alltoallv, ialltoallv, neighbor, persistent };

/// Names accepted by make_halo_exchange, in the order of HaloStrategy.
std::vector<std::string> halo_exchange_names();
/// "waitall", "alltoallv", ...
std::string_view halo_strategy_name(HaloStrategy strategy) noexcept;
/// The strategy `name` stands for; throws core::InputError ("--halo 'x':
/// expected one of waitall, ...") otherwise.
HaloStrategy parse_halo_strategy(std::string_view name);

/// Builds the named strategy for fields shaped like `shape` on `decomposition`
/// (which must outlive it). Throws InputError for an unknown name. Collective
/// over the decomposition's communicator (neighbor creates a communicator);
/// call close() after the last finish() and before the decomposition is freed.
std::unique_ptr<HaloExchange> make_halo_exchange(std::string_view name,
                                                 const grid::Decomposition& decomposition,
                                                 const grid::Field& shape,
                                                 Neighbourhood neighbourhood);
/// The same for a parsed strategy.
std::unique_ptr<HaloExchange> make_halo_exchange(HaloStrategy strategy,
                                                 const grid::Decomposition& decomposition,
                                                 const grid::Field& shape,
                                                 Neighbourhood neighbourhood);

/// The messages of a halo exchange one neighbour direction ("link") at a
/// time, so that the threads of a rank can share them out (paper 002's
/// *multiple* scheme, `--hybrid multiple`): exchange_link(field, i) posts the
/// receive and the send of link i (MPI_Irecv + MPI_Isend, tagged by the
/// direction the message travels, as `waitall`), waits for both and writes
/// the received slab into the halo. Links have their own buffers and
/// requests and fill disjoint halo slabs, so different threads may exchange
/// different links at the same time, which needs MPI_THREAD_MULTIPLE; one
/// link must not be exchanged by two threads at once. Every link of an
/// exchange must be exchanged (by some thread) on every rank, since each is
/// matched by the opposite link of the neighbour.
class LinkwiseHaloExchange {
 public:
  virtual ~LinkwiseHaloExchange() = default;
  /// Number of links (neighbour directions with a neighbouring rank).
  virtual int links() const noexcept = 0;
  /// Exchanges link `i` (0 <= i < links()) of `field`; blocks until both its
  /// messages have completed.
  virtual void exchange_link(grid::Field& field, int i) = 0;
  /// Every link, one after the other (from one thread).
  void exchange(grid::Field& field) {
    for (int i = 0; i < links(); ++i) exchange_link(field, i);
  }
  /// Messages and bytes this rank sends per exchange of all links.
  virtual int messages_per_exchange() const noexcept = 0;
  virtual std::size_t bytes_per_exchange() const noexcept = 0;
};

/// Builds the linkwise exchange for fields shaped like `shape` on
/// `decomposition` (which must outlive it). Not collective.
std::unique_ptr<LinkwiseHaloExchange> make_linkwise_halo_exchange(
    const grid::Decomposition& decomposition, const grid::Field& shape,
    Neighbourhood neighbourhood);

/// A synchronous halo exchange built on asynchronous channels (one per
/// neighbour, one message in flight): start() sends every face, finish()
/// waits for the neighbours' faces of the same exchange. Runs synchronous
/// Jacobi over any channel transport (`as_transport`). Collective over the
/// decomposition's communicator for the rma transport (see channel.h), else
/// between neighbours; call close() before the decomposition is freed.
std::unique_ptr<HaloExchange> make_channel_halo_exchange(const grid::Decomposition& decomposition,
                                                         const grid::Field& shape, int transport);

}  // namespace asyncsolve::comm
