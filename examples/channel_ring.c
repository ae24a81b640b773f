/*
 * NAME    channel_ring: asynchronous Jacobi on a chain of ranks, with the
 *         halo exchange done through asyncsolve channels.
 *
 * PURPOSE Show the channel API (include/asyncsolve/channel.h) in plain C.
 *         Rank r owns `points` consecutive unknowns of the 1D Laplace
 *         problem u'' = 0 on (0,1) with u(0) = 0, u(1) = 1, plus one ghost
 *         value per side. Neighbours on the chain r-1 and r+1 exchange their
 *         boundary values through one channel each, never waiting for each
 *         other: a send is skipped when the channel is full, and a ghost
 *         value is refreshed only when a newer one has arrived.
 *
 * USAGE   mpiexec -n 4 channel_ring [--racy] [--iterations N] [--points N]
 *
 * OUTPUT  One line from rank 0 with the channel traffic and the result of
 *         the self-check; exit status 0 if the check passed, 1 if not.
 *
 * Self-check. Every message carries the sender's value, its iteration
 * ("stamp") and a checksum of both. The receiver checks that each delivered
 * message is intact, that stamps never go backwards (and advance by at least
 * the number of messages that arrived: sends may be skipped, never
 * reordered), that no send ever blocked, and finally that the solution is
 * right: after the asynchronous phase the channels are destroyed and
 * synchronous Jacobi (MPI_Sendrecv + MPI_Allreduce) runs to convergence, and
 * the result must match the exact discrete solution u_i = x_i.
 */
#include <asyncsolve/channel.h>
#include <mpi.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LEFT = 0, RIGHT = 1 };
enum { MAX_IN_FLIGHT = 4 }; /* unacknowledged messages per direction */

/* One halo message: 3 x 8 bytes, so it is also valid in racy mode (sizes a
 * multiple of 8 bytes, receive buffer 8-byte aligned). */
struct halo {
  double value;   /* the neighbour's boundary value ... */
  int64_t stamp;  /* ... at this iteration (0: the initial guess) */
  uint64_t check; /* halo_checksum(value, stamp) */
};

static uint64_t halo_checksum(double value, int64_t stamp) {
  uint64_t bits;
  memcpy(&bits, &value, sizeof bits);
  return bits ^ ((uint64_t)stamp * UINT64_C(0x9E3779B97F4A7C15));
}

static struct halo make_halo(double value, int64_t stamp) {
  struct halo h = {value, stamp, halo_checksum(value, stamp)};
  return h;
}

/* A failed channel call cannot be recovered from locally (the peer may be
 * blocked in create or destroy, and sends cannot be cancelled): report and
 * abort the job. */
static void check(int status, const char* call) {
  if (status == AS_SUCCESS) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "channel_ring: rank %d: %s: %s\n", rank, call, as_strerror(status));
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static void usage(void) {
  fprintf(stderr, "usage: channel_ring [--racy] [--iterations N] [--points N]\n");
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  int racy = 0;
  long iterations = 5000, points = 8;
  for (int a = 1; a < argc; ++a) {
    if (strcmp(argv[a], "--racy") == 0) {
      racy = 1;
    } else if (strcmp(argv[a], "--iterations") == 0 && a + 1 < argc) {
      iterations = strtol(argv[++a], NULL, 10);
    } else if (strcmp(argv[a], "--points") == 0 && a + 1 < argc) {
      points = strtol(argv[++a], NULL, 10);
    } else {
      points = 0; /* reported below */
    }
  }
  if (iterations < 0 || points < 1 || points > 1000000) {
    if (rank == 0) usage();
    MPI_Finalize();
    return 2;
  }

  /* The channels get a communicator of their own. They use tags 2*tag and
   * 2*tag+1 on it, and a rank may still have receives posted on them after
   * its neighbour's destroy has returned, so the application's own messages
   * (the synchronous phase below) must not travel on it. */
  MPI_Comm comm = MPI_COMM_WORLD, channel_comm;
  MPI_Comm_dup(comm, &channel_comm);

  /* u[0] and u[n+1] are ghosts: a neighbour's value, or the fixed boundary
   * value 0 (left end of the chain) or 1 (right end). */
  const int n = (int)points;
  const long global_n = (long)size * n;
  double* u = calloc((size_t)n + 2, sizeof *u);
  double* u_new = calloc((size_t)n + 2, sizeof *u_new);
  if (u == NULL || u_new == NULL) MPI_Abort(MPI_COMM_WORLD, 3);
  const int peer[2] = {rank > 0 ? rank - 1 : MPI_PROC_NULL,
                       rank < size - 1 ? rank + 1 : MPI_PROC_NULL};
  u[n + 1] = u_new[n + 1] = peer[RIGHT] == MPI_PROC_NULL ? 1.0 : 0.0;

  /* One channel per neighbour; out[s] and in[s] are its send and receive
   * buffers, owned by us and used by the channel until it is destroyed. */
  struct halo out[2], in[2] = {make_halo(0.0, 0), make_halo(0.0, 0)};
  as_channel* channel[2] = {NULL, NULL};
  as_channel_config config[2];
  int side[2]; /* side[c]: the side channel c serves */
  int channels = 0;
  for (int s = LEFT; s <= RIGHT; ++s) {
    if (peer[s] == MPI_PROC_NULL) continue;
    as_channel_config* c = &config[channels];
    as_channel_config_init(c);
    c->comm = channel_comm;
    c->peer = peer[s];
    c->tag = 0; /* one channel per pair of ranks: no need to tell them apart */
    c->message_size = sizeof(struct halo);
    c->sendbuf = &out[s];
    c->recvbuf = &in[s];
    c->max_in_flight = MAX_IN_FLIGHT;
    c->mode = racy ? AS_MODE_RACY : AS_MODE_ASYNC;
    side[channels++] = s;
  }
  /* Collective with each neighbour; creating both at once avoids having to
   * order the calls between ranks (rank 1 waits for 0 and 2 together). */
  check(as_channels_create(channels, channel, config), "as_channels_create");

  /* Asynchronous phase. Per iteration: at most one 24-byte message to each
   * neighbour, no waiting and no reduction. */
  long long sent = 0, skipped = 0, batches = 0, messages = 0;
  int max_batch = 0, bad = 0;
  int64_t last_stamp[2] = {0, 0};
  for (int64_t t = 1; t <= iterations; ++t) {
    /* Take the newest halo from each neighbour, if one has arrived. */
    for (int c = 0; c < channels; ++c) {
      const int s = side[c];
      int ready = 0, batch = 0;
      check(as_channel_can_recv(channel[c], &ready), "as_channel_can_recv");
      if (!ready) continue;
      check(as_channel_recv(channel[c], &batch), "as_channel_recv");
      if (batch == 0) continue; /* racy: can_recv is always true */
      ++batches;
      messages += batch;
      if (batch > max_batch) max_batch = batch;
      /* in[s] is the newest of `batch` messages whose stamps increased. */
      if (in[s].check != halo_checksum(in[s].value, in[s].stamp) ||
          in[s].stamp - last_stamp[s] < batch || in[s].stamp > iterations) {
        ++bad;
      }
      last_stamp[s] = in[s].stamp;
      u[s == LEFT ? 0 : n + 1] = in[s].value;
    }

    /* u_new_i = (u_{i-1} + u_{i+1}) / 2 */
    u_new[0] = u[0];
    u_new[n + 1] = u[n + 1];
    for (int i = 1; i <= n; ++i) u_new[i] = 0.5 * (u[i - 1] + u[i + 1]);
    double* swap = u;
    u = u_new;
    u_new = swap;

    /* Offer the new boundary values; skip a neighbour whose channel is full
     * rather than wait for it. */
    for (int c = 0; c < channels; ++c) {
      const int s = side[c];
      int free_slot = 0;
      check(as_channel_can_send(channel[c], &free_slot), "as_channel_can_send");
      if (!free_slot) {
        ++skipped;
        continue;
      }
      out[s] = make_halo(u[s == LEFT ? 1 : n], t);
      check(as_channel_send(channel[c]), "as_channel_send"); /* out[s] reusable now */
      ++sent;
    }
  }

  /* The channel's own counters must agree with ours, and no send may have
   * blocked, since we only sent when can_send said there was room. */
  long long discarded = 0, counted_sent = 0;
  for (int c = 0; c < channels; ++c) {
    as_channel_stats stats;
    check(as_channel_get_stats(channel[c], &stats), "as_channel_get_stats");
    if (stats.blocked_sends != 0) ++bad;
    counted_sent += stats.sent;
    discarded += stats.discarded;
  }
  if (counted_sent != sent) ++bad;
  /* Collective with each neighbour: completes every message in flight (and
   * drops those not received), leaving nothing outstanding in MPI. */
  check(as_channels_destroy(channels, channel), "as_channels_destroy");
  MPI_Comm_free(&channel_comm);

  /* Synchronous phase: plain Jacobi to convergence. Per iteration: one
   * 8-byte message each way per neighbour and one MPI_Allreduce (max). */
  const double tolerance = 1e-13; /* on the largest update */
  const long max_sync_iterations = 10000000;
  long sync_iterations = 0;
  double update = 1.0;
  for (; update > tolerance && sync_iterations < max_sync_iterations; ++sync_iterations) {
    MPI_Sendrecv(&u[1], 1, MPI_DOUBLE, peer[LEFT], 0, &u[n + 1], 1, MPI_DOUBLE, peer[RIGHT], 0,
                 comm, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&u[n], 1, MPI_DOUBLE, peer[RIGHT], 1, &u[0], 1, MPI_DOUBLE, peer[LEFT], 1, comm,
                 MPI_STATUS_IGNORE);
    double local = 0.0;
    for (int i = 1; i <= n; ++i) {
      u_new[i] = 0.5 * (u[i - 1] + u[i + 1]); /* u_new = D^-1 (b - (A - D) u) */
      const double d = u_new[i] > u[i] ? u_new[i] - u[i] : u[i] - u_new[i];
      if (d > local) local = d;
    }
    for (int i = 1; i <= n; ++i) u[i] = u_new[i];
    MPI_Allreduce(&local, &update, 1, MPI_DOUBLE, MPI_MAX, comm);
  }

  if (update > tolerance) ++bad;

  /* The exact discrete solution is linear: u_i = x_i = i / (N + 1). Jacobi's
   * error is at most update / (1 - rho), with 1 - rho ~ pi^2 / (2 N^2). */
  double error = 0.0;
  for (int i = 1; i <= n; ++i) {
    const double x = (double)((long)rank * n + i) / (double)(global_n + 1);
    const double d = u[i] > x ? u[i] - x : x - u[i];
    if (d > error) error = d;
  }
  if (error > tolerance * (double)global_n * (double)global_n) ++bad;

  /* Totals over ranks, for the summary line. */
  long long counts[6] = {sent, skipped, batches, messages, discarded, bad};
  long long totals[6];
  MPI_Reduce(counts, totals, 6, MPI_LONG_LONG, MPI_SUM, 0, comm);
  int max_batch_all = 0;
  MPI_Reduce(&max_batch, &max_batch_all, 1, MPI_INT, MPI_MAX, 0, comm);
  double max_error = 0.0;
  MPI_Reduce(&error, &max_error, 1, MPI_DOUBLE, MPI_MAX, 0, comm);
  int failed = 0;
  if (rank == 0) {
    failed = totals[5] != 0;
    printf(
        "channel_ring: ranks %d mode %s max_in_flight %d iterations %ld sent %lld "
        "skipped %lld batches %lld mean_batch %.2f max_batch %d discarded %lld "
        "sync_iterations %ld max_error %.1e: %s\n",
        size, racy ? "racy" : "async", MAX_IN_FLIGHT, iterations, totals[0], totals[1], totals[2],
        totals[2] > 0 ? (double)totals[3] / (double)totals[2] : 0.0, max_batch_all, totals[4],
        sync_iterations, max_error,
        failed ? "FAILED (bad messages, blocked sends or wrong solution)" : "Solution validates");
  }
  MPI_Bcast(&failed, 1, MPI_INT, 0, comm);

  free(u);
  free(u_new);
  MPI_Finalize();
  return failed ? 1 : 0;
}
