/*
 * asyncsolve asynchronous communication channels: the C API proposed in
 * paper 000 (Bethune et al., IJHPCA 2014) §4.2, usable from C, C++ and
 * Fortran (through ISO_C_BINDING).
 *
 * A channel connects two processes. Each end sends messages of a fixed size
 * from its send buffer and receives them into its receive buffer; at most
 * `max_in_flight` unacknowledged messages travel in each direction (end-to-end
 * flow control). Handles of individual transfers are never exposed: the
 * channel completes everything it starts, and destroying a channel leaves
 * nothing outstanding. See docs/channels.md for the semantics and an example.
 *
 * Modes:
 *   AS_MODE_ASYNC  recv() fills the receive buffer with the newest complete
 *                  message and discards older ones; the buffer changes only
 *                  inside recv().
 *   AS_MODE_RACY   data may land in the receive buffer whenever the channel
 *                  is progressed (any call on it), element by element with
 *                  8-byte atomicity; recv() only progresses. Message sizes
 *                  must be multiples of 8 bytes and the receive buffer
 *                  8-byte aligned; read it with relaxed atomic loads
 *                  (std::atomic_ref) if another thread progresses the channel.
 *
 * Transports:
 *   AS_TRANSPORT_MPI  two-sided (MPI_Issend / MPI_Irecv); creation and
 *                     destruction involve only the two ends of each channel.
 *   AS_TRANSPORT_RMA  MPI-3 one-sided, passive target: MPI_Win_allocate,
 *                     MPI_Win_lock_all, MPI_Put into R slots (async and racy)
 *                     plus MPI_Win_flush, and arrival / acknowledgement flags
 *                     in the window (MPI_Fetch_and_op). A message is
 *                     acknowledged when the receiver has taken it (delivered
 *                     or discarded), freeing its slot.
 *                     Creation and destruction are COLLECTIVE OVER `comm`:
 *                     every rank of comm calls as_channels_create once with
 *                     all its rma channels on comm (a rank with none passes
 *                     one placeholder config: transport AS_TRANSPORT_RMA,
 *                     comm, peer MPI_PROC_NULL; it yields a channel on which
 *                     send() goes nowhere and recv() gets nothing). The call
 *                     allocates one window over comm holding this rank's
 *                     landing areas for those channels. All configs of the
 *                     call must be rma and name the same comm, and no two may
 *                     share peer and tag (else AS_ERR_ARG, at once and on this
 *                     rank only); every other error, including a mismatch of
 *                     two ends, fails the call on every rank of comm, each
 *                     returning its own error or, if it had none, another
 *                     rank's, and creates nothing. as_channels_destroy must be
 *                     given exactly the channels of one create call (else
 *                     AS_ERR_STATE and nothing happens) and is collective over
 *                     comm; several windows on one comm are destroyed in the
 *                     same order on all ranks. The handshake uses tag 2*tag+1
 *                     of comm. The channels of one create call share a window:
 *                     using them from several threads at once needs
 *                     MPI_THREAD_MULTIPLE. See src/comm/channel_rma.cpp.
 *   AS_TRANSPORT_SHMEM OpenSHMEM: shmem_putmem, shmem_fence, then an arrival
 *                     flag set with shmem_long_atomic_set (the put-fence-put
 *                     handshake); racy mode relies, as paper 000 did, on the
 *                     implementation delivering aligned 8-byte words whole.
 *                     Collective like rma, over ALL PEs (shmem_malloc of one
 *                     symmetric block per create call; same placeholder,
 *                     destroy and error rules). comm must span the SHMEM
 *                     world with rank == PE number (else AS_ERR_ARG on every
 *                     rank). Needs a build with OpenSHMEM and OpenSHMEM
 *                     started after MPI with asyncsolve::par::Shmem
 *                     (asyncsolve/par/shmem.hpp); otherwise
 *                     AS_ERR_UNSUPPORTED. See src/comm/channel_shmem.cpp.
 *
 * Every function returns AS_SUCCESS or an error code; as_strerror() describes
 * it. None of them is thread-safe for the same channel.
 */
#ifndef ASYNCSOLVE_CHANNEL_H
#define ASYNCSOLVE_CHANNEL_H

/* A C header: typedef and <stddef.h>, not C++'s using and <cstddef>. */
/* NOLINTBEGIN(modernize-use-using,modernize-deprecated-headers) */

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes. */
enum as_status {
  AS_SUCCESS = 0,
  AS_ERR_ARG = 1,        /**< an argument is invalid (null, size, tag, alignment) */
  AS_ERR_MISMATCH = 2,   /**< the two ends asked for different sizes, depths or modes (rma,
                            shmem: or an end has none on its peer) */
  AS_ERR_STATE = 3,      /**< the call is not allowed now (e.g. a null or destroyed channel) */
  AS_ERR_TRANSPORT = 4,  /**< the transport (MPI) reported an error */
  AS_ERR_NOMEM = 5,      /**< out of memory */
  AS_ERR_UNSUPPORTED = 6 /**< the transport is not available in this build or run */
};

/** Delivery modes (paper 000 §3). */
enum as_mode { AS_MODE_ASYNC = 0, AS_MODE_RACY = 1 };

/** Transports. */
enum as_transport {
  AS_TRANSPORT_MPI = 0, /**< MPI two-sided: MPI_Issend / MPI_Irecv */
  AS_TRANSPORT_RMA = 1, /**< MPI-3 one-sided, passive target; create/destroy collective over comm */
  AS_TRANSPORT_SHMEM = 2 /**< OpenSHMEM; collective over all PEs like rma (needs par::Shmem) */
};

/** An opaque channel. */
typedef struct as_channel as_channel;

/** How to create one end of a channel. Initialise with as_channel_config_init(). */
typedef struct as_channel_config {
  int transport;       /**< enum as_transport; default AS_TRANSPORT_MPI */
  MPI_Comm comm;       /**< communicator containing both ends; default MPI_COMM_NULL */
  int peer;            /**< rank of the other end in comm (not the caller); rma only:
                            MPI_PROC_NULL makes a placeholder (see Transports) */
  int tag;             /**< tells apart channels between the same pair; the MPI
                            transport uses tags 2*tag and 2*tag+1 of comm; default 0 */
  size_t message_size; /**< bytes per message, > 0 */
  void* sendbuf;       /**< message_size bytes read by send(); owned by the caller */
  void* recvbuf;       /**< message_size bytes written by recv() (racy: by any call) */
  int max_in_flight;   /**< unacknowledged messages per direction, >= 1; default 1 */
  int mode;            /**< enum as_mode; default AS_MODE_ASYNC */
} as_channel_config;

/** Counters of one end of a channel. */
typedef struct as_channel_stats {
  long long sent;          /**< messages sent */
  long long arrived;       /**< messages that arrived */
  long long delivered;     /**< messages copied into the receive buffer */
  long long discarded;     /**< async: arrived but superseded by a newer one before recv() */
  long long recv_calls;    /**< calls of recv() */
  long long blocked_sends; /**< send() calls that had to wait for a free slot */
} as_channel_stats;

/** Fills `config` with defaults (transport MPI, max_in_flight 1, async). */
void as_channel_config_init(as_channel_config* config);

/** Creates one end of a channel. Blocks until the other end makes the
 *  matching call (same message_size, max_in_flight and mode, same tag). When
 *  a process creates several channels, call in an order both ends share, or
 *  use as_channels_create. An end that cannot allocate its buffers returns
 *  AS_ERR_NOMEM and tells the other end, which returns AS_ERR_NOMEM too
 *  (neither is left waiting). Rma: collective over comm, as
 *  as_channels_create. */
int as_channel_create(as_channel** channel, const as_channel_config* config);

/** Creates `count` channels at once: no ordering constraint between them.
 *  Two of them with the same comm, peer and tag are refused (AS_ERR_ARG,
 *  before any message). Rma: collective over comm, one window for the
 *  `count` channels. */
int as_channels_create(int count, as_channel** channels, const as_channel_config* configs);

/** Destroys a channel after completing everything in flight in both
 *  directions; blocks until the other end makes the matching call. Sets
 *  *channel to NULL. Messages still in flight are received and dropped. */
int as_channel_destroy(as_channel** channel);

/** Destroys `count` channels at once, progressing all of them together.
 *  Each channel once (a channel given twice, or a NULL entry: AS_ERR_STATE,
 *  nothing destroyed). Rma: exactly the channels of one create call;
 *  collective over comm. */
int as_channels_destroy(int count, as_channel** channels);

/** *flag = 1 if fewer than max_in_flight messages are unacknowledged, so
 *  that send() will not block; else 0. */
int as_channel_can_send(as_channel* channel, int* flag);

/** Sends message_size bytes from sendbuf. Blocks while the channel is full
 *  (check can_send first). On return sendbuf may be reused. */
int as_channel_send(as_channel* channel);

/** Sends sendbuf if it can without blocking: completes acknowledged sends,
 *  then, if fewer than max_in_flight messages are unacknowledged, sends as
 *  send() does and sets *sent = 1; otherwise sends nothing and sets *sent =
 *  0. can_send() followed by send() in one call, progressing once (it does
 *  not progress receives). */
int as_channel_try_send(as_channel* channel, int* sent);

/** *flag = 1 if a message has arrived since the last recv() (async), or
 *  always 1 (racy). */
int as_channel_can_recv(as_channel* channel, int* flag);

/** Async: if messages have arrived since the last call, copies the newest
 *  into recvbuf and discards the others. Racy: progresses. *messages (may be
 *  NULL) receives the number of messages that arrived since the last call:
 *  the batch size of paper 000 §6.2. */
int as_channel_recv(as_channel* channel, int* messages);

/** Progresses the channel's transfers without sending or receiving. */
int as_channel_progress(as_channel* channel);

/** Waits for news on any of `count` channels: returns when a message has
 *  arrived on one of them since its last recv() (async and racy alike: in
 *  racy mode, unlike can_recv(), only a real arrival counts), or when
 *  `timeout_s` seconds have passed. *index is the first such channel's
 *  position in `channels`, or -1 at the timeout. timeout_s = 0 polls once;
 *  it must be >= 0 and finite. count = 0 is valid (it only waits).
 *
 *  While it waits, every channel's sends and receives are progressed (sends
 *  complete and free their slots; racy: recvbuf may change), and the caller's
 *  core is given up between polls with a bounded back-off: a few polls
 *  back to back, then sleeps that double from a few microseconds up to
 *  AS_WAIT_MAX_SLEEP_US (and never past the timeout). So a process with
 *  nothing to do does not steal the core a slower peer needs, and wakes
 *  within about that long of the news. Call it in a loop with a short
 *  timeout to progress other work (a non-blocking reduction) in between.
 *  Local (no matching call needed); NULL entries are an error (AS_ERR_ARG). */
int as_channels_wait_any(int count, as_channel** channels, double timeout_s, int* index);

/** The longest sleep, in microseconds, between two polls of as_channels_wait_any. */
#define AS_WAIT_MAX_SLEEP_US 200

/** Copies the channel's counters. */
int as_channel_get_stats(const as_channel* channel, as_channel_stats* stats);

/** Messages sent and not yet acknowledged, in *count. */
int as_channel_in_flight(const as_channel* channel, int* count);

/** A static, human-readable description of a status code. */
const char* as_strerror(int status);

#ifdef __cplusplus
}
#endif

/* NOLINTEND(modernize-use-using,modernize-deprecated-headers) */
#endif /* ASYNCSOLVE_CHANNEL_H */
