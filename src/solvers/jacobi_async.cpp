#include "asyncsolve/solvers/jacobi_async.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "asyncsolve/channel.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/ops/stencil7.hpp"
#include "asyncsolve/solvers/norm.hpp"
#include "jacobi_check.hpp"

namespace asyncsolve::solvers {
namespace {

/// The halo channel across one face, with its send and landing buffers.
struct FaceLink {
  grid::Face face;
  grid::Box send_box;
  grid::Box recv_box;
  std::vector<double> send_buffer;
  std::vector<double> recv_buffer;
  bool unsent = false;  ///< the newest faces were not sent: the channel was full
};

/// Copies a neighbour's halo `in` into the values of `box` (a face of the
/// halo) in both fields, and returns the squared 2-norm of the change in u.
/// A face halo value enters exactly one interior point's residual, with
/// coefficient 1: the change of ||b - A u|| is at most the norm returned.
double unpack_both(grid::Field& u, grid::Field& u_new, const grid::Box& box,
                   const double* in) noexcept {
  const int nx = box.hi[0] - box.lo[0];
  double change_sq = 0.0;
  for (int k = box.lo[2]; k < box.hi[2]; ++k)
    for (int j = box.lo[1]; j < box.hi[1]; ++j) {
      double* a = u.origin() + u.index(box.lo[0], j, k);
      double* b = u_new.origin() + u_new.index(box.lo[0], j, k);
      for (int i = 0; i < nx; ++i) {
        const double d = in[i] - a[i];
        change_sq += d * d;
        a[i] = in[i];
        b[i] = in[i];
      }
      in += nx;
    }
  return change_sq;
}

/// How long one wait for news lasts before the reduction is progressed
/// again (as_channels_wait_any sleeps at most AS_WAIT_MAX_SLEEP_US at a time).
constexpr double idle_slice_s = 200e-6;

}  // namespace

SolveResult jacobi_async(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& sync_halo,
                         collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options) {
  if (convergence.size() != async_convergence_values) {
    throw std::invalid_argument("jacobi_async: the convergence reduction must carry " +
                                std::to_string(async_convergence_values) + " doubles");
  }
  const JacobiOptions& base = options.base;
  SolveResult result;
  result.phases = core::PhaseTimers({"recv", "sweep", "send", "residual", "reduce", "idle"});
  core::PhaseTimers& timers = result.phases;
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  const auto points = static_cast<double>(core::product(u.interior()));
  const int size = decomposition.comm().size();
  const auto ranks = static_cast<double>(size);
  // Below this part of ||b - A u||^2, a rank with nothing new idles.
  const double idle_r2 = std::pow(async_idle_fraction * base.tol * b_norm, 2) / ranks;
  const bool timed = std::isfinite(base.max_time_s);

  // One channel per neighbour. Both ends of a face have the same face size
  // (blocks of one process row share their extents), so the configs match.
  std::vector<FaceLink> links;
  std::vector<as_channel_config> configs;
  for (const grid::Face face : grid::all_faces) {
    if (decomposition.is_physical_boundary(face)) continue;
    FaceLink link{face, u.send_box(face), u.recv_box(face), {}, {}};
    link.send_buffer.resize(static_cast<std::size_t>(link.send_box.size()));
    link.recv_buffer.resize(static_cast<std::size_t>(link.recv_box.size()));
    links.push_back(std::move(link));
  }
  for (FaceLink& link : links) {
    as_channel_config c;
    as_channel_config_init(&c);
    c.transport = options.transport;
    c.comm = decomposition.comm().get();
    c.peer = decomposition.neighbour(link.face);
    c.tag = 0;  // two ranks of a non-periodic grid share at most one face
    c.message_size = link.send_buffer.size() * sizeof(double);
    c.sendbuf = link.send_buffer.data();
    c.recvbuf = link.recv_buffer.data();
    c.max_in_flight = options.max_in_flight;
    c.mode = options.racy ? AS_MODE_RACY : AS_MODE_ASYNC;
    configs.push_back(c);
  }
  if (configs.empty() && options.transport != AS_TRANSPORT_MPI) {
    // rma and shmem creation is collective over the communicator: take part with a
    // placeholder when this rank has no neighbour.
    as_channel_config c;
    as_channel_config_init(&c);
    c.transport = options.transport;
    c.comm = decomposition.comm().get();
    c.peer = MPI_PROC_NULL;
    configs.push_back(c);
  }
  std::vector<Channel> channels = Channel::create_many(configs);

  grid::Field u_new(u.interior(), u.halo());
  std::copy(u.storage().begin(), u.storage().end(), u_new.storage().begin());

  const double t0 = core::now_s();
  double estimate = std::numeric_limits<double>::infinity();
  // An upper bound of this block's ||b - A u||^2 with its current halos: the
  // fused sweep's value for the iterate it read (a Jacobi sweep with fixed
  // halos does not increase it: r_{k+1} = (N / 6) r_k, ||N / 6|| < 1), plus
  // the halos' change since.
  double local_r2 = std::numeric_limits<double>::infinity();
  long k = 0;
  // With idle on, fused sweeps also refresh local_r2 for the idle decision,
  // at the pace detail::idle_refresh_gap sets: the last refresh, and the next.
  double refreshed_r2 = std::numeric_limits<double>::infinity();
  long refreshed_k = -1;
  long next_refresh = 0;
  detail::AsyncCheckSums contribution{};
  detail::AsyncCheckSums sum{};

  // The newest halo of every neighbour that sent one, into the halos of both
  // fields (the sweep never writes halos, so the next one reads it too).
  // local_r2 stays an upper bound of this block's ||b - A u||^2 with the
  // halos it now has: the halos' change is added to its root.
  const auto take_news = [&]() {
    double change_sq = 0.0;
    for (std::size_t i = 0; i < links.size(); ++i) {
      const int n = channels[i].recv();
      const auto batch = static_cast<std::size_t>(n);
      if (batch >= result.batch_sizes.size()) result.batch_sizes.resize(batch + 1, 0);
      ++result.batch_sizes[batch];
      if (n == 0) continue;  // async: nothing new; racy: nothing landed since the last recv
      change_sq += unpack_both(u, u_new, links[i].recv_box, links[i].recv_buffer.data());
    }
    if (change_sq > 0.0) local_r2 = std::pow(std::sqrt(local_r2) + std::sqrt(change_sq), 2);
  };
  // The new faces to every neighbour whose channel has room; the others are
  // marked unsent (the paper skips them; idle waits retry them).
  const auto send_faces = [&]() {
    for (std::size_t i = 0; i < links.size(); ++i) {
      FaceLink& link = links[i];
      grid::pack(u, link.send_box, link.send_buffer.data());
      link.unsent = !channels[i].try_send();
      if (link.unsent) ++result.skipped_sends;  // R messages in flight
    }
  };
  const auto retry_unsent = [&]() {
    for (std::size_t i = 0; i < links.size(); ++i) {
      FaceLink& link = links[i];
      if (!link.unsent || !channels[i].can_send()) continue;
      grid::pack(u, link.send_box, link.send_buffer.data());
      channels[i].send();
      link.unsent = false;
    }
  };
  // Starts a round with this rank's part: its residual, whether it made
  // max_iters sweeps, whether it ran out of time.
  const auto start_round = [&]() {
    contribution = detail::async_contribution(base, k, t0, local_r2);
    convergence.start(contribution);
  };
  // Tests the round in flight; true when it completed and stops the solve
  // (the same decision on every rank: the sums are the same).
  // The history keeps one point per iteration of this rank (an idle rank
  // completes many rounds without sweeping) and the last one.
  long recorded_k = -1;
  const auto round_stops = [&]() {
    if (!convergence.active() || !convergence.test(sum)) return false;
    estimate = std::sqrt(sum[detail::residual_sq_value]) / b_norm;
    // The decision every asynchronous Jacobi shares (jacobi_check.hpp).
    const bool stop = detail::async_check_stops(result, base, k, sum, estimate, size);
    if (k != recorded_k || stop) {
      recorded_k = k;
      const HistoryPoint point{k, core::now_s() - t0, estimate, std::sqrt(local_r2) / b_norm};
      result.history.push_back(point);
      if (base.monitor) base.monitor(point);
    }
    return stop;
  };
  // Waits for news (idle on), keeping sends and the reduction going; true
  // when a round stops the solve meanwhile.
  const auto idle_wait = [&]() {
    ++result.idle_waits;
    const double start = core::now_s();
    bool stop = false;
    for (;;) {
      if (!convergence.active()) start_round();  // restarted at once: nothing else to do
      if (round_stops()) {
        stop = true;
        break;
      }
      retry_unsent();
      if (Channel::wait_any(channels, idle_slice_s) >= 0) break;
    }
    timers.add(async_idle_phase, core::now_s() - start);
    return stop;
  };

  // Per iteration: at most one message per neighbour in each direction (fewer
  // when a channel is full or halo_every > 1), one fused sweep (16 B/point)
  // that also yields this block's residual, one test of the reduction; every
  // check_every iterations one started reduction of 3 doubles.
  for (;;) {
    {
      const auto scope = timers.time(async_recv_phase);
      take_news();
    }
    if (options.idle && k > 0 && local_r2 < idle_r2 && !links.empty()) {
      // This block is converged against its halos, and what arrived since
      // the last sweep (if anything) changes its residual too little to
      // matter: another sweep would only spin on (nearly) stale data. (A
      // rank without neighbours never gets news: it goes on.)
      if (idle_wait()) break;
      continue;
    }
    if (!options.idle && k >= base.max_iters) {
      // Done with its sweeps: wait, taking news and keeping the reduction
      // going, until every rank is (or the solve ends otherwise).
      if (idle_wait()) break;
      continue;
    }
    {
      const double ts = core::now_s();
      // The residual comes with the sweep (fused, no extra pass) when a
      // round starts after it, and with idle on when the bound the idle
      // decision uses is due a refresh (idle_refresh_gap: every 4 to 64
      // sweeps, more often as it nears the threshold). Other sweeps keep the
      // bound: a sweep with fixed halos does not increase it.
      const bool round_next =
          !convergence.active() && ((k + 1) % base.check_every == 0 || k + 1 == base.max_iters ||
                                    (timed && core::now_s() - t0 >= base.max_time_s));
      const bool fused = k == 0 || round_next || (options.idle && k >= next_refresh);
      const auto sweep = [&](int z0, int z1) {
        // u^{k+1} = (sum of neighbours of u^k) / 6 on planes [z0, z1), and
        // (fused) ||b - A u^k||^2 there
        if (fused) return ops::jacobi_sweep_residual_planes(u, u_new, z0, z1);
        ops::jacobi_sweep_planes(u, u_new, z0, z1);
        return 0.0;
      };
      const int nz = u.interior()[2];
      double r2 = 0.0;
      if (options.progress_planes > 0) {
        // K planes at a time, the channels progressed in between (messages
        // move inside MPI calls).
        for (int z = 0; z < nz; z += options.progress_planes) {
          r2 += sweep(z, std::min(nz, z + options.progress_planes));
          for (Channel& ch : channels) ch.progress();
        }
      } else {
        r2 = sweep(0, nz);
      }
      if (fused) {
        local_r2 = r2;
        next_refresh = k + detail::idle_refresh_gap(refreshed_r2, refreshed_k, r2, k, idle_r2);
        refreshed_r2 = r2;
        refreshed_k = k;
      }
      if (base.faults != nullptr) base.faults->after_sweep(core::now_s() - ts);
      u.swap(u_new);  // both carry the newest halos
      timers.add(async_sweep_phase, core::now_s() - ts);
      if (base.faults != nullptr) base.faults->poll();
    }
    ++k;
    if (k % base.halo_every == 0) {
      const auto scope = timers.time(async_send_phase);
      send_faces();
    }
    {
      const auto scope = timers.time(async_reduce_phase);
      if (!convergence.active() && (k % base.check_every == 0 || k == base.max_iters ||
                                    (timed && core::now_s() - t0 >= base.max_time_s))) {
        start_round();
      }
      if (round_stops()) break;
    }
  }
  result.time_s = core::now_s() - t0;
  result.iterations = k;
  result.residual_estimate = estimate;
  result.bytes_sent = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const as_channel_stats s = channels[i].stats();
    result.messages_sent += s.sent;
    result.bytes_sent += static_cast<double>(s.sent) *
                         static_cast<double>(links[i].send_buffer.size() * sizeof(double));
  }
  // Nothing may stay in flight: complete every message in both directions.
  Channel::destroy_many(channels);
  result.sweep_bytes = 16.0 * points * static_cast<double>(k);
  if (base.faults != nullptr) result.injected_s = base.faults->injected_s();

  // The true residual of this rank's last iterate together with the others'.
  sync_halo.exchange(u);
  result.true_residual = jacobi_residual_norm(u, &reduction) / b_norm;
  if (const long tail_iterations =
          detail::final_sync_iterations(result, base.tol, options.final_sync);
      tail_iterations > 0) {
    JacobiOptions sync = base;
    sync.max_iters = tail_iterations;
    sync.check_every = 1;
    sync.halo_every = 1;
    sync.monitor = nullptr;
    sync.max_time_s = std::numeric_limits<double>::infinity();
    const SolveResult tail = jacobi_sync(problem, decomposition, u, sync_halo, reduction, sync);
    result.final_sync_iterations = tail.iterations;
    result.converged = tail.converged;
    result.reason = tail.converged ? "tolerance" : "final_sync";
    result.true_residual = tail.true_residual;
    result.time_s += tail.time_s;
    result.sweep_bytes += tail.sweep_bytes;
  }
  confirm_convergence(result, base.tol);
  result.error_inf = error_inf(problem, decomposition, u, reduction);
  return result;
}

}  // namespace asyncsolve::solvers
