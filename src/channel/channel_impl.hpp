#pragma once
// Internal: the transport-independent face of one channel end, behind the C
// API of include/asyncsolve/channel.h. Errors are thrown as ChannelFailure and
// turned into status codes at the C boundary.
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "asyncsolve/channel.h"

namespace asyncsolve::channel::detail {

/// A failure with the status code the C API returns for it.
class ChannelFailure : public std::runtime_error {
 public:
  ChannelFailure(int status, const std::string& what) : std::runtime_error(what), status_(status) {}
  int status() const noexcept { return status_; }

 private:
  int status_;
};

/// Throws ChannelFailure(AS_ERR_TRANSPORT) with MPI's description unless
/// `rc` is MPI_SUCCESS; `call` names the MPI function.
inline void check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = {};
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw ChannelFailure(AS_ERR_TRANSPORT, std::string(call) + ": " + text);
  }
}

/// Copies `bytes` (a multiple of 8) with relaxed atomic 8-byte loads and
/// stores: a reader using relaxed atomic loads on `dst` sees, for every
/// element, a value some message carried, even while a transport (racy
/// mode) writes `src` concurrently.
inline void atomic_copy(void* dst, void* src, std::size_t bytes) noexcept {
  auto* d = static_cast<std::uint64_t*>(dst);
  auto* s = static_cast<std::uint64_t*>(src);
  for (std::size_t i = 0; i < bytes / 8; ++i) {
    const std::uint64_t v = std::atomic_ref<std::uint64_t>(s[i]).load(std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(d[i]).store(v, std::memory_order_relaxed);
  }
}

/// One end of a channel. Creation and destruction are split into a start and
/// a completion step so that many channels can be created or destroyed
/// together without an ordering constraint.
class ChannelImpl {
 public:
  virtual ~ChannelImpl() = default;
  /// Starts the handshake with the peer (exchange of size, depth and mode).
  virtual void start_create() = 0;
  /// Completes the handshake (blocking) and readies the channel; throws
  /// ChannelFailure(AS_ERR_MISMATCH) if the ends disagree.
  virtual void finish_create() = 0;
  virtual bool can_send() = 0;
  virtual void send() = 0;
  /// can_send() and, if true, send(), progressing once; true if it sent.
  virtual bool try_send() {
    if (!can_send()) return false;
    send();
    return true;
  }
  virtual bool can_recv() = 0;
  /// Returns the number of messages that arrived since the last call.
  virtual int recv() = 0;
  virtual void progress() = 0;
  /// Progresses sends and receives like progress(); true if a message has
  /// arrived since the last recv() (racy too: a real arrival, not can_recv's
  /// constant true).
  virtual bool poll_news() = 0;
  /// Starts the closing protocol: tell the peer how many messages were sent.
  virtual void start_destroy() = 0;
  /// Progresses the closing protocol; true when nothing is left in flight.
  virtual bool test_destroy() = 0;
  /// After test_destroy() held on every channel being destroyed: cancels
  /// what is idle and tells the peer, without waiting (default: nothing).
  virtual void announce_closed() {}
  /// Waits until the peer announced the same, so that when destroy returns
  /// neither end has anything posted on the channel's tags (default: nothing).
  virtual void wait_closed() {}
  /// Releases what is left.
  virtual void finish_destroy() = 0;
  virtual as_channel_stats stats() const = 0;
  virtual int in_flight() const = 0;
  /// Channels that must be destroyed together (the rma transport: the
  /// channels of one create call, which share a window); nullptr if none.
  virtual const void* window_group() const { return nullptr; }
  /// How many channels window_group() has.
  virtual int window_group_size() const { return 0; }
};

/// The MPI two-sided transport.
std::unique_ptr<ChannelImpl> make_mpi_channel(const as_channel_config& config);
/// This end's share of the handshake of a channel it could not make (out of
/// memory: `status`), so that the peer, waiting for it, fails with the same
/// status instead of waiting for ever. Blocking; takes the peer's handshake.
void refuse_mpi_create(const as_channel_config& config, int status);

/// The MPI one-sided transport: creates all `configs` (transport RMA, one
/// comm, placeholders with peer MPI_PROC_NULL included) with one window;
/// collective over the comm. `local_status` is the result of this rank's
/// argument checks: the first step shares it with every rank. Throws
/// ChannelFailure if the call fails on any rank; nothing is left allocated.
std::vector<std::unique_ptr<ChannelImpl>> create_rma_channels(
    std::span<const as_channel_config> configs, int local_status);

/// The OpenSHMEM transport: as create_rma_channels, with one symmetric block
/// (shmem_malloc, collective over all PEs) instead of a window; comm must
/// span the SHMEM world with rank == PE. Throws ChannelFailure
/// (AS_ERR_UNSUPPORTED in a build without OpenSHMEM).
std::vector<std::unique_ptr<ChannelImpl>> create_shmem_channels(
    std::span<const as_channel_config> configs, int local_status);

}  // namespace asyncsolve::channel::detail

/// The opaque C handle.
struct as_channel {
  std::unique_ptr<asyncsolve::channel::detail::ChannelImpl> impl;
};
