#include "asyncsolve/solvers/jacobi_async.hpp"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <limits>
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
};

enum AsyncPhase : std::size_t {
  recv_phase,
  sweep_phase_a,
  send_phase,
  residual_phase_a,
  reduce_phase_a
};

}  // namespace

SolveResult jacobi_async(const grid::Problem& problem, const grid::Decomposition& decomposition,
                         grid::Field& u, comm::HaloExchange& sync_halo,
                         collectives::Allreduce& reduction,
                         collectives::NonblockingAllreduce& convergence,
                         const AsyncJacobiOptions& options) {
  const JacobiOptions& base = options.base;
  SolveResult result;
  result.phases = core::PhaseTimers({"recv", "sweep", "send", "residual", "reduce"});
  core::PhaseTimers& timers = result.phases;
  const double b_norm = rhs_norm(problem, decomposition, u, reduction);
  const auto points = static_cast<double>(core::product(u.interior()));

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
  double local_r2 = 0.0;
  bool at_max = false;
  long k = 0;
  double contribution[2] = {0.0, 0.0};
  double sum[2] = {0.0, 0.0};
  // Per iteration: at most one message per neighbour in each direction (fewer
  // when a channel is full or halo_every > 1), one sweep (16 B/point); every
  // check_every iterations a local residual pass and one started reduction of
  // 2 doubles, progressed by a test every iteration.
  for (;;) {
    {
      const auto scope = timers.time(recv_phase);
      for (std::size_t i = 0; i < links.size(); ++i) {
        const int n = channels[i].recv();
        if (static_cast<std::size_t>(n) >= result.batch_sizes.size()) {
          result.batch_sizes.resize(static_cast<std::size_t>(n) + 1, 0);
        }
        ++result.batch_sizes[static_cast<std::size_t>(n)];
        // Async: a new whole message; racy: whatever has landed so far.
        if (n > 0 || options.racy) grid::unpack(u, links[i].recv_box, links[i].recv_buffer.data());
      }
    }
    if (!convergence.active() && (k % base.check_every == 0 || at_max)) {
      {
        const auto scope = timers.time(residual_phase_a);
        local_r2 = ops::residual_norm_sq(u);  // ||b - A u||^2 on this block, current halos
      }
      contribution[0] = local_r2;
      contribution[1] = at_max ? 1.0 : 0.0;
      const auto scope = timers.time(reduce_phase_a);
      convergence.start(contribution);
    }
    bool stop = false;
    {
      const auto scope = timers.time(reduce_phase_a);
      stop = convergence.active() && convergence.test(sum) &&
             detail::finish_async_check(result, base, k, t0, sum, local_r2, b_norm, estimate);
    }
    if (stop) break;
    if (k >= base.max_iters) {
      // Wait (progressing) until the reduction lets every rank stop.
      at_max = true;
      for (Channel& ch : channels) ch.progress();
      continue;
    }
    {
      const double ts = core::now_s();
      if (options.progress_planes > 0) {
        // u^{k+1} = (sum of neighbours of u^k) / 6, K planes at a time, the
        // channels progressed in between (messages move inside MPI calls).
        const int nz = u.interior()[2];
        for (int z = 0; z < nz; z += options.progress_planes) {
          ops::jacobi_sweep_planes(u, u_new, z, std::min(nz, z + options.progress_planes));
          for (Channel& ch : channels) ch.progress();
        }
      } else {
        ops::jacobi_sweep(u, u_new);  // u^{k+1} = (sum of neighbours of u^k) / 6
      }
      if (base.faults != nullptr) base.faults->after_sweep(core::now_s() - ts);
      // u_new carries the newest halo: the next recv may bring nothing new.
      grid::copy_face_halos(u, u_new);
      u.swap(u_new);
      timers.add(sweep_phase_a, core::now_s() - ts);
      if (base.faults != nullptr) base.faults->poll();
    }
    ++k;
    if (k % base.halo_every == 0) {
      const auto scope = timers.time(send_phase);
      for (std::size_t i = 0; i < links.size(); ++i) {
        if (!channels[i].can_send()) {
          ++result.skipped_sends;  // R messages in flight: skip, as the paper does
          continue;
        }
        grid::pack(u, links[i].send_box, links[i].send_buffer.data());
        channels[i].send();
      }
    }
  }
  result.time_s = core::now_s() - t0;
  result.iterations = k;
  result.residual_estimate = estimate;
  for (const Channel& ch : channels) {
    const as_channel_stats s = ch.stats();
    result.messages_sent += s.sent;
  }
  result.bytes_sent = 0;
  for (std::size_t i = 0; i < links.size(); ++i) {
    result.bytes_sent += static_cast<double>(channels[i].stats().sent) *
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
