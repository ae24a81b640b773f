#pragma once
/// The remote part of the distributed TFIM mat-vec (paper 004's SPIN
/// benchmark): on 2^m ranks, rank r adds Gamma times the whole vector block
/// of each rank r ^ 2^k, k = 0 .. m-1 (the flips of the m high bits of the
/// state index). One strategy per transport, chosen at run time:
///
/// - `mpi` (src/comm/spin_exchange_mpi.cpp): the m blocks travel as a stream
///   of chunks (MPI_Isend straight from x, MPI_Irecv into K round-robin
///   buffers, paper 004's Opt_MPI); while chunk c is added, the next K - 1
///   are in flight. K = 2 is the paper's double buffering.
/// - `rma` (spin_exchange_rma.cpp): MPI_Put of x into slot k of each
///   partner's window, between two MPI_Win_fence calls (the paper's MPI-2
///   one-sided PUT); or, with rma_sync "notify", passive target: MPI_Put,
///   MPI_Win_flush_all, then a flag the partner polls and an
///   acknowledgement it writes back (no collective synchronisation).
/// - `shmem` (spin_exchange_shmem.cpp): shmem_putmem_nbi into slot k of the
///   partner's symmetric buffer, shmem_fence, then a put of the mat-vec's
///   sequence number into the slot's flag, which the receiver waits on with
///   shmem_long_wait_until (the paper's "SHMEM fast", with a separate flag
///   instead of an in-band sentinel).
///
/// Usage per mat-vec: start(x), the local part, finish(y, gamma). x must not
/// change between start and finish. Contributions are added in increasing k
/// and, within a block, in index order, so every transport gives the same
/// bits.
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::kernels {

/// The transports of the remote mat-vec (see above).
enum class SpinTransport { mpi, rma, shmem };
/// Their names, in SpinTransport's order.
inline constexpr std::array<std::string_view, 3> spin_transport_names{"mpi", "rma", "shmem"};

/// rma's synchronisation: active target (MPI_Put between two MPI_Win_fence)
/// or passive target (put, flush, flag and acknowledgement).
enum class RmaSync { fence, notify };
/// Their names, in RmaSync's order.
inline constexpr std::array<std::string_view, 2> rma_sync_names{"fence", "notify"};

/// Settings of a SpinExchange.
struct SpinExchangeOptions {
  SpinTransport transport = SpinTransport::mpi;
  int buffers = 2;                    ///< mpi: K round-robin receive buffers (>= 2)
  std::size_t chunk = 1 << 15;        ///< mpi: doubles per message (>= 1; capped at the block)
  RmaSync rma_sync = RmaSync::fence;  ///< rma
};

/// Remote contributions of the TFIM mat-vec over one transport.
class SpinExchange {
 public:
  virtual ~SpinExchange() = default;
  SpinExchange() = default;
  SpinExchange(const SpinExchange&) = delete;
  SpinExchange& operator=(const SpinExchange&) = delete;

  /// The transport's name.
  virtual std::string_view name() const = 0;

  /// Collective over the partners: starts sending x (this rank's block, 2^(n-m)
  /// doubles) to every partner. x is read until finish() returns.
  virtual void start(std::span<const double> x) = 0;

  /// Collective over the partners: y += gamma * x_{r ^ 2^k} for k = 0..m-1,
  /// in that order; completes what start() began.
  virtual void finish(std::span<double> y, double gamma) = 0;

  /// Collective: releases windows, symmetric memory and communicators. Every
  /// rank must call it at the same point, before MPI (or SHMEM) finalizes.
  virtual void free() = 0;

  /// Messages (puts) this rank sends per mat-vec, flags excluded.
  virtual std::size_t messages_per_matvec() const = 0;

  /// Bytes of vector data this rank sends per mat-vec.
  std::size_t bytes_per_matvec() const { return partners() * block() * sizeof(double); }

  /// m: the number of partners (log2 of the rank count).
  virtual int partners() const = 0;
  /// 2^(n-m): doubles in a block.
  virtual std::size_t block() const = 0;
  /// Bytes of communication buffers this rank holds (receive buffers, window, symmetric heap).
  virtual std::size_t buffer_bytes() const = 0;
};

/// The transports make_spin_exchange accepts.
std::vector<std::string> spin_exchange_names();

/// Bytes of buffers a transport will allocate per rank for blocks of
/// `block` doubles and m = `partners` (for the memory check before
/// anything is allocated).
std::size_t spin_exchange_buffer_bytes(const SpinExchangeOptions& options, int partners,
                                       std::size_t block);

/// Collective over `comm` (2^m ranks; must outlive the result): builds the
/// exchange for blocks of `block` doubles. Throws core::InputError (on every
/// rank alike) for a bad option or an unsupported transport; shmem needs a
/// started par::Shmem and comm ranks equal to PE numbers.
std::unique_ptr<SpinExchange> make_spin_exchange(const SpinExchangeOptions& options,
                                                 const par::Comm& comm, std::size_t block);

/// For embedders: make_spin_exchange over the transport named `transport`
/// (one of spin_exchange_names(); core::InputError otherwise).
std::unique_ptr<SpinExchange> make_spin_exchange(std::string_view transport,
                                                 SpinExchangeOptions options, const par::Comm& comm,
                                                 std::size_t block);

namespace detail {
std::unique_ptr<SpinExchange> make_spin_exchange_mpi(const SpinExchangeOptions& options,
                                                     const par::Comm& comm, int partners,
                                                     std::size_t block);
std::unique_ptr<SpinExchange> make_spin_exchange_rma(const par::Comm& comm, int partners,
                                                     std::size_t block, bool notify);
std::unique_ptr<SpinExchange> make_spin_exchange_shmem(const par::Comm& comm, int partners,
                                                       std::size_t block);
/// Most doubles one MPI call moves (well inside an int count).
inline constexpr std::size_t max_message_doubles = std::size_t{1} << 27;
}  // namespace detail

}  // namespace asyncsolve::kernels
