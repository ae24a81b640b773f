// The C API of asynchronous channels: argument checks, status codes, and the
// multi-channel create and destroy drivers.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <new>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "asyncsolve/par/shmem.hpp"
#include "channel_impl.hpp"

using asyncsolve::channel::detail::ChannelFailure;

namespace {

/// Runs `body`, mapping exceptions to status codes.
template <class Body>
int guarded(Body&& body) noexcept {
  try {
    body();
    return AS_SUCCESS;
  } catch (const ChannelFailure& e) {
    return e.status();
  } catch (const std::bad_alloc&) {
    return AS_ERR_NOMEM;
  } catch (...) {
    return AS_ERR_TRANSPORT;
  }
}

int validate(const as_channel_config* c) noexcept {
  if (c == nullptr) return AS_ERR_ARG;
  if (c->transport == AS_TRANSPORT_SHMEM && !asyncsolve::par::shmem_initialized()) {
    return AS_ERR_UNSUPPORTED;  // not in this build, or OpenSHMEM not started
  }
  if (c->transport != AS_TRANSPORT_MPI && c->transport != AS_TRANSPORT_RMA &&
      c->transport != AS_TRANSPORT_SHMEM) {
    return AS_ERR_ARG;
  }
  // An rma or shmem placeholder (a rank's share of the collective create)
  // needs only comm.
  if (c->transport != AS_TRANSPORT_MPI && c->peer == MPI_PROC_NULL && c->comm != MPI_COMM_NULL) {
    return AS_SUCCESS;
  }
  if (c->comm == MPI_COMM_NULL || c->sendbuf == nullptr || c->recvbuf == nullptr) return AS_ERR_ARG;
  if (c->message_size == 0 ||
      c->message_size > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    return AS_ERR_ARG;
  }
  if (c->max_in_flight < 1 || (c->mode != AS_MODE_ASYNC && c->mode != AS_MODE_RACY))
    return AS_ERR_ARG;
  int size = 0;
  int rank = 0;
  if (MPI_Comm_size(c->comm, &size) != MPI_SUCCESS ||
      MPI_Comm_rank(c->comm, &rank) != MPI_SUCCESS) {
    return AS_ERR_TRANSPORT;
  }
  if (c->peer < 0 || c->peer >= size || c->peer == rank) return AS_ERR_ARG;
  void* attr = nullptr;
  int has = 0;
  MPI_Comm_get_attr(c->comm, MPI_TAG_UB, &attr, &has);
  const long long tag_ub = has != 0 ? *static_cast<int*>(attr) : 32767;
  if (c->tag < 0 || 2LL * c->tag + 1 > tag_ub) return AS_ERR_ARG;
  if (c->mode == AS_MODE_RACY &&
      (c->message_size % 8 != 0 || reinterpret_cast<std::uintptr_t>(c->recvbuf) % 8 != 0)) {
    return AS_ERR_ARG;
  }
  return AS_SUCCESS;
}

/// Whether two channels of one call have the same communicator, peer and
/// tag: their messages could not be told apart.
bool shares_peer_and_tag(int count, const as_channel_config* configs) noexcept {
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < i; ++j) {
      if (configs[i].comm == configs[j].comm && configs[i].peer != MPI_PROC_NULL &&
          configs[i].peer == configs[j].peer && configs[i].tag == configs[j].tag) {
        return true;
      }
    }
  }
  return false;
}

/// The rma and shmem transports: as_channels_create is collective over the
/// one comm all configs name (see channel_rma.cpp, channel_shmem.cpp). Errors
/// a rank cannot share with the others (no common comm) return at once; the
/// others are shared.
int create_collective(int count, as_channel** channels, const as_channel_config* configs) noexcept {
  const MPI_Comm comm = configs[0].comm;
  const int transport = configs[0].transport;
  if (comm == MPI_COMM_NULL) return AS_ERR_ARG;
  for (int i = 0; i < count; ++i) {
    if (configs[i].transport != transport || configs[i].comm != comm) return AS_ERR_ARG;
  }
  // Identical on every rank (OpenSHMEM is started on all PEs or none).
  if (transport == AS_TRANSPORT_SHMEM && !asyncsolve::par::shmem_initialized()) {
    return AS_ERR_UNSUPPORTED;
  }
  int inter = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter != 0) return AS_ERR_ARG;
  int local = AS_SUCCESS;
  for (int i = 0; i < count && local == AS_SUCCESS; ++i) local = validate(&configs[i]);
  if (local == AS_SUCCESS && shares_peer_and_tag(count, configs)) local = AS_ERR_ARG;
  return guarded([&] {
    const std::span<const as_channel_config> all(configs, static_cast<std::size_t>(count));
    auto impls = transport == AS_TRANSPORT_SHMEM
                     ? asyncsolve::channel::detail::create_shmem_channels(all, local)
                     : asyncsolve::channel::detail::create_rma_channels(all, local);
    for (int i = 0; i < count; ++i) {
      // NOLINTNEXTLINE(bugprone-unhandled-exception-at-new): guarded() returns AS_ERR_NOMEM
      channels[i] = new as_channel{std::move(impls[static_cast<std::size_t>(i)])};
    }
  });
}

/// Channels of the rma (shmem) transport are destroyed by window (symmetric block): exactly the
/// channels of one create call, nothing else, each once.
int check_destroy_set(int count, as_channel** channels) noexcept {
  const void* group = nullptr;
  int grouped = 0;
  for (int i = 0; i < count; ++i) {
    const void* g = channels[i]->impl->window_group();
    if (g == nullptr) continue;
    if (group != nullptr && g != group) return AS_ERR_STATE;
    group = g;
    ++grouped;
  }
  if (grouped == 0) return AS_SUCCESS;
  // No channel twice (as_channels_destroy checks that first), so count
  // distinct channels of one group are the whole group.
  if (grouped != count || channels[0]->impl->window_group_size() != count) return AS_ERR_STATE;
  return AS_SUCCESS;
}

}  // namespace

extern "C" {

void as_channel_config_init(as_channel_config* config) {
  if (config == nullptr) return;
  config->transport = AS_TRANSPORT_MPI;
  config->comm = MPI_COMM_NULL;
  config->peer = -1;
  config->tag = 0;
  config->message_size = 0;
  config->sendbuf = nullptr;
  config->recvbuf = nullptr;
  config->max_in_flight = 1;
  config->mode = AS_MODE_ASYNC;
}

int as_channels_create(int count, as_channel** channels, const as_channel_config* configs) {
  if (count < 0 || (count > 0 && (channels == nullptr || configs == nullptr))) return AS_ERR_ARG;
  for (int i = 0; i < count; ++i) channels[i] = nullptr;
  for (int i = 0; i < count; ++i) {
    if (configs[i].transport == AS_TRANSPORT_RMA || configs[i].transport == AS_TRANSPORT_SHMEM) {
      return create_collective(count, channels, configs);
    }
  }
  // Check every configuration first; a bad one fails before any message is
  // sent. (The other end then fails too, or, if its own arguments were
  // fine, blocks: both ends must be given valid arguments.)
  for (int i = 0; i < count; ++i) {
    if (const int status = validate(&configs[i]); status != AS_SUCCESS) return status;
  }
  if (shares_peer_and_tag(count, configs)) return AS_ERR_ARG;
  // Allocated under guarded(): no exception reaches C.
  std::vector<as_channel*> made;
  std::vector<int> statuses;
  const auto size = static_cast<std::size_t>(count);
  if (const int s = guarded([&] {
        made.assign(size, nullptr);
        statuses.assign(size, AS_SUCCESS);
      });
      s != AS_SUCCESS) {
    return s;
  }
  int first_error = AS_SUCCESS;
  for (int i = 0; i < count; ++i) {
    const int status = guarded([&] {
      auto* ch = new as_channel{asyncsolve::channel::detail::make_mpi_channel(configs[i])};
      made[static_cast<std::size_t>(i)] = ch;
      ch->impl->start_create();
    });
    statuses[static_cast<std::size_t>(i)] = status;
    if (status != AS_SUCCESS && first_error == AS_SUCCESS) first_error = status;
  }
  // Complete every handshake, even after an error, so nothing is left posted
  // and no peer waits: a channel this end could not make (out of memory)
  // still sends its share, a refusal, and its peer fails with that status.
  for (int i = 0; i < count; ++i) {
    as_channel* ch = made[static_cast<std::size_t>(i)];
    const int status = guarded([&] {
      if (ch != nullptr) {
        ch->impl->finish_create();
      } else {
        asyncsolve::channel::detail::refuse_mpi_create(configs[i],
                                                       statuses[static_cast<std::size_t>(i)]);
      }
    });
    if (status != AS_SUCCESS && first_error == AS_SUCCESS) first_error = status;
  }
  if (first_error != AS_SUCCESS) {
    for (as_channel* ch : made) delete ch;
    return first_error;
  }
  for (int i = 0; i < count; ++i) channels[i] = made[static_cast<std::size_t>(i)];
  return AS_SUCCESS;
}

int as_channel_create(as_channel** channel, const as_channel_config* config) {
  if (channel == nullptr) return AS_ERR_ARG;
  return as_channels_create(1, channel, config);
}

int as_channels_destroy(int count, as_channel** channels) {
  if (count < 0 || (count > 0 && channels == nullptr)) return AS_ERR_ARG;
  for (int i = 0; i < count; ++i)
    if (channels[i] == nullptr) return AS_ERR_STATE;
  // The same channel twice would be destroyed twice: refused before anything.
  bool twice = false;
  if (const int status = guarded([&] {
        std::vector<as_channel*> sorted(channels, channels + count);
        std::sort(sorted.begin(), sorted.end());
        twice = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
      });
      status != AS_SUCCESS) {
    return status;
  }
  if (twice) return AS_ERR_STATE;
  if (const int status = check_destroy_set(count, channels); status != AS_SUCCESS) return status;
  return guarded([&] {
    for (int i = 0; i < count; ++i) channels[i]->impl->start_destroy();
    // Progress all channels together until every one has nothing in flight.
    std::vector<bool> done(static_cast<std::size_t>(count), false);
    for (int remaining = count; remaining > 0;) {
      for (int i = 0; i < count; ++i) {
        if (done[static_cast<std::size_t>(i)]) continue;
        if (channels[i]->impl->test_destroy()) {
          done[static_cast<std::size_t>(i)] = true;
          --remaining;
        }
      }
    }
    // Every end announces before any waits, so no order between channels can deadlock.
    for (int i = 0; i < count; ++i) channels[i]->impl->announce_closed();
    for (int i = 0; i < count; ++i) channels[i]->impl->wait_closed();
    for (int i = 0; i < count; ++i) {
      channels[i]->impl->finish_destroy();
      delete channels[i];
      channels[i] = nullptr;
    }
  });
}

int as_channel_destroy(as_channel** channel) {
  if (channel == nullptr) return AS_ERR_ARG;
  return as_channels_destroy(1, channel);
}

int as_channel_can_send(as_channel* channel, int* flag) {
  if (channel == nullptr || flag == nullptr) return AS_ERR_ARG;
  return guarded([&] { *flag = channel->impl->can_send() ? 1 : 0; });
}

int as_channel_send(as_channel* channel) {
  if (channel == nullptr) return AS_ERR_ARG;
  return guarded([&] { channel->impl->send(); });
}

int as_channel_try_send(as_channel* channel, int* sent) {
  if (channel == nullptr || sent == nullptr) return AS_ERR_ARG;
  *sent = 0;
  return guarded([&] { *sent = channel->impl->try_send() ? 1 : 0; });
}

int as_channel_can_recv(as_channel* channel, int* flag) {
  if (channel == nullptr || flag == nullptr) return AS_ERR_ARG;
  return guarded([&] { *flag = channel->impl->can_recv() ? 1 : 0; });
}

int as_channel_recv(as_channel* channel, int* messages) {
  if (channel == nullptr) return AS_ERR_ARG;
  return guarded([&] {
    const int n = channel->impl->recv();
    if (messages != nullptr) *messages = n;
  });
}

int as_channel_progress(as_channel* channel) {
  if (channel == nullptr) return AS_ERR_ARG;
  return guarded([&] { channel->impl->progress(); });
}

int as_channels_wait_any(int count, as_channel** channels, double timeout_s, int* index) {
  if (count < 0 || index == nullptr || (count > 0 && channels == nullptr)) return AS_ERR_ARG;
  if (!(timeout_s >= 0.0) || !std::isfinite(timeout_s)) return AS_ERR_ARG;
  for (int i = 0; i < count; ++i)
    if (channels[i] == nullptr) return AS_ERR_ARG;
  *index = -1;
  return guarded([&] {
    // Back-off: polls back to back at first (news often follows within
    // microseconds), then sleeps doubling up to AS_WAIT_MAX_SLEEP_US.
    constexpr int eager_polls = 4;
    const double deadline = MPI_Wtime() + timeout_s;
    double sleep_s = 2e-6;
    for (int round = 0;; ++round) {
      for (int i = 0; i < count; ++i) {
        if (channels[i]->impl->poll_news()) {
          *index = i;
          return;
        }
      }
      const double left = deadline - MPI_Wtime();
      if (left <= 0.0) return;
      if (round < eager_polls) continue;
      const double pause = std::min(sleep_s, left);
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));
      sleep_s = std::min(2.0 * sleep_s, AS_WAIT_MAX_SLEEP_US * 1e-6);
    }
  });
}

int as_channel_get_stats(const as_channel* channel, as_channel_stats* stats) {
  if (channel == nullptr || stats == nullptr) return AS_ERR_ARG;
  *stats = channel->impl->stats();
  return AS_SUCCESS;
}

int as_channel_in_flight(const as_channel* channel, int* count) {
  if (channel == nullptr || count == nullptr) return AS_ERR_ARG;
  *count = channel->impl->in_flight();
  return AS_SUCCESS;
}

const char* as_strerror(int status) {
  switch (status) {
    case AS_SUCCESS:
      return "success";
    case AS_ERR_ARG:
      return "invalid argument";
    case AS_ERR_MISMATCH:
      return "the two ends of the channel differ in message size, depth or mode";
    case AS_ERR_STATE:
      return "operation not allowed in the channel's state";
    case AS_ERR_TRANSPORT:
      return "the transport reported an error";
    case AS_ERR_NOMEM:
      return "out of memory";
    case AS_ERR_UNSUPPORTED:
      return "transport not available in this build or run";
    default:
      return "unknown status";
  }
}

}  // extern "C"
