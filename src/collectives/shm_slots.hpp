#pragma once
/// Sequence-numbered slots in an MPI-3 shared-memory window (internal): what
/// the `shm` allreduce and the node level of `twolevel:shm+ALG` are built on
/// (allreduce/shm.cpp).
///
/// Layout. Every rank of the node communicator owns a segment of the window
/// (MPI_Win_allocate_shared, each segment in its own pages:
/// alloc_shared_noncontig). A segment holds `areas` areas (the deposits; for
/// two levels also the leader's results) of `depth` = 2 slots each; a slot is
/// one sequence word (std::uint64_t) followed by `count` doubles, padded to
/// whole 64-byte cache lines, so that a small reduction's word and values
/// travel in one line.
///
/// Protocol. A rank's k-th operation (k = 0, 1, 2, ...) writes its values
/// into its slot k mod 2 of an area with relaxed atomic stores, then stores
/// k + 1 into the slot's word with release semantics (publish). A reader that
/// loads k + 1 from that word with acquire semantics (is_published) has the
/// release store synchronise with its load, so every value store happens
/// before its reads (read): it sees the values of operation k, whole. A word
/// only grows (k + 1, then k + 3, ...), so a reader waiting for k + 1 never
/// mistakes an older operation for it.
///
/// Slot reuse is safe by construction, with two slots and not more. The
/// owner overwrites slot k mod 2 at its operation k + 2. It can start that
/// operation only after completing k + 1 (one operation active per rank and
/// object), and completing k + 1 needs the k + 1 publication of every rank
/// whose reads of operation k's slots could still be pending:
///   - one level (every rank reads every rank's deposit): rank s publishes
///     k + 1 in start(), after it completed k, i.e. after its last read of
///     any slot of k. So s's reads of slot k happen before s's release store
///     of k + 2 into its word, which happens before the owner's acquire load
///     of it, which happens before the owner's stores of operation k + 2.
///   - two levels: the leader reads the deposits of k before it publishes
///     result k; a non-leader s reads result k before it deposits k + 1. The
///     leader overwrites result slot k mod 2 after it has read every deposit
///     of k + 2 (made after s read results k and k + 1); s overwrites its
///     deposit slot k mod 2 after it has read result k + 1, which the leader
///     published after reading deposit k.
/// A slow rank therefore never reads a slot being rewritten, however far
/// behind it falls: the fast ranks wait for it. read() checks this at run
/// time anyway (the seqlock test: an acquire fence after the value loads,
/// then the word again) and throws std::logic_error if the word moved.
///
/// Between processes. Every access to the window goes through
/// std::atomic_ref, never a plain load or store, so nothing is a data race
/// even if the argument above were wrong (the test would then see a torn
/// value, not undefined behaviour). The atomics are lock-free, hence
/// address-free ([atomics.lockfree]: usable between processes that map the
/// same memory). MPI leaves the consistency of loads and stores to shared
/// windows to the architecture (MPI-3.1 §11.2.3) once the memory model is
/// unified (checked at construction); the window is held in a passive-target
/// epoch (MPI_Win_lock_all, MPI_MODE_NOCHECK) for its whole life, and the
/// zeroed words are made visible with MPI_Win_sync around a barrier before
/// the first operation. Sanitizers do not see accesses by other processes:
/// this argument and the stress test (tests/mpi/test_shm_allreduce.cpp) are
/// the evidence.
///
/// Lifetime: free() is collective (MPI_Win_free, which no rank leaves before
/// every rank has called it, so nobody still reads a freed segment); the
/// destructor never calls MPI.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::collectives::detail {

class ShmSlots {
 public:
  /// Slots per area and rank: the fewest for which reuse is safe (above).
  static constexpr std::uint64_t depth = 2;

  /// Collective over `node`, whose ranks must share memory (one node, or a
  /// part of one): allocates and zeroes every rank's `areas` areas of slots
  /// for `count` doubles. Throws par::MpiError (with MPI's error string) if
  /// the window cannot be allocated, core::RuntimeFailure if its memory
  /// model is not unified.
  ShmSlots(const par::Comm& node, std::size_t count, int areas);
  ShmSlots(const ShmSlots&) = delete;
  ShmSlots& operator=(const ShmSlots&) = delete;
  /// Never calls MPI: a window not freed is left to MPI_Finalize.
  ~ShmSlots();

  /// Collective over the node: ends the epoch and frees the window. Every
  /// rank's reads of other ranks' slots must be over (no operation active).
  void free();

  /// Doubles per slot.
  std::size_t count() const noexcept { return count_; }

  /// Writes `values` (count() doubles) into this rank's slot of operation
  /// `op` in `area`, then publishes it (release).
  void publish(int area, std::uint64_t op, std::span<const double> values) noexcept;
  /// True once node rank `rank` has published operation `op` (or, against
  /// the protocol, a later one) in `area` (acquire).
  bool is_published(int rank, int area, std::uint64_t op) const noexcept;
  /// A hint, not an access: asks the cache for the first line of node rank
  /// `rank`'s slot of operation `op` in `area` (its word and first values),
  /// so that a later is_published() finds it near if it was written by then.
  void prefetch(int rank, int area, std::uint64_t op) const noexcept {
    __builtin_prefetch(slot(rank, area, op));
  }
  /// Copies node rank `rank`'s values of operation `op` in `area` into `dst`
  /// (count() doubles). Requires is_published(rank, area, op). Throws
  /// std::logic_error if the slot was rewritten while it was read (which the
  /// protocol rules out).
  void read(int rank, int area, std::uint64_t op, std::span<double> dst) const;
  /// out[j] = v_0[j] rop v_1[j] rop ... rop v_{ranks-1}[j], left to right,
  /// over the values of operation `op` in `area` of node ranks 0 to
  /// ranks - 1, in one pass (min and max keep the left operand on ties, as
  /// combine() does). Requires every one of them published; the same check
  /// as read() afterwards.
  void fold(int ranks, int area, std::uint64_t op, ReduceOp rop, std::span<double> out) const;

 private:
  std::byte* slot(int rank, int area, std::uint64_t op) const noexcept;
  /// A relaxed atomic load of a value in the window.
  static double load(const double& v) noexcept;
  /// Throws std::logic_error if the word of the slot no longer holds op + 1.
  void check_unchanged(int rank, int area, std::uint64_t op) const;

  MPI_Win win_ = MPI_WIN_NULL;
  std::vector<std::byte*> bases_;               ///< every node rank's segment, in this process
  mutable std::vector<const double*> sources_;  ///< fold()'s value pointers
  std::size_t count_ = 0;
  std::size_t stride_ = 0;  ///< bytes per slot (word + values, whole cache lines)
  int areas_ = 0;
  int rank_ = 0;  ///< this process's node rank
};

}  // namespace asyncsolve::collectives::detail
