#pragma once
/// Communicators: a non-owning view, or the owner of one asyncsolve created.
#include <mpi.h>

namespace asyncsolve::par {

/// Local: whether `load` processes or threads outnumber this machine's cores
/// (std::thread::hardware_concurrency; false where that is not known).
bool exceeds_cores(int load) noexcept;

/// An MPI communicator. A view (Comm::view) never frees; a communicator made
/// by dup() or by a topology constructor is owned and freed by free(), or by
/// the destructor as a fallback. Freeing is collective: call free() at a point
/// every rank reaches. Move-only.
class Comm {
 public:
  /// A non-owning view of `comm` (e.g. the world communicator in main).
  static Comm view(MPI_Comm comm) noexcept { return Comm(comm, false); }
  /// Takes ownership of `comm`, which the caller created.
  static Comm adopt(MPI_Comm comm) noexcept { return Comm(comm, true); }

  Comm() = default;
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& other) noexcept;
  /// Frees an owned target first (collective, like free()), so it may throw.
  // NOLINTNEXTLINE(performance-noexcept-move-constructor,bugprone-exception-escape)
  Comm& operator=(Comm&& other);
  ~Comm();

  /// Collective: a duplicate owned by the result, with MPI_ERRORS_RETURN set
  /// so failing calls report through check_mpi instead of aborting.
  Comm dup() const;

  /// Collective: the ranks that share memory with this one (one node), as
  /// an owned communicator (MPI_Comm_split_type, MPI_COMM_TYPE_SHARED).
  Comm split_shared() const;

  /// Collective: whether this rank's node runs more ranks of this
  /// communicator, times `threads_per_rank`, than it has cores
  /// (exceeds_cores); the same answer on every rank of a node. False under
  /// simulation, where ranks are not processes.
  bool node_oversubscribed(int threads_per_rank = 1) const;

  /// Collective: frees an owned communicator; no-op for a view.
  void free();

  int rank() const;
  int size() const;
  bool is_root() const { return rank() == 0; }
  MPI_Comm get() const noexcept { return comm_; }
  bool is_owner() const noexcept { return owned_; }

  /// Collective barrier.
  void barrier() const;

 private:
  Comm(MPI_Comm comm, bool owned) noexcept : comm_(comm), owned_(owned) {}
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

}  // namespace asyncsolve::par
