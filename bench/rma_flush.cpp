// NAME
//   rma_flush - the cost of one message of the rma channel's protocol, with
//   and without more ranks than cores
//
// PURPOSE
//   The figure behind `asyncsolve solve`'s warning for --transport rma under
//   MPICH on a crowded node. Each rank of a ring sends one message to each of
//   its two neighbours per step with the steps of the rma channel
//   (src/channel/rma.cpp): MPI_Put of --bytes into the neighbour's window,
//   MPI_Win_flush, MPI_Fetch_and_op(MPI_REPLACE) of the arrival flag,
//   MPI_Win_flush; then reads its own two flags with MPI_Fetch_and_op
//   (MPI_NO_OP) on itself and MPI_Win_flush, as a receiver does. Nothing
//   waits for anything else, so a step costs what the library's completion
//   of these operations costs: microseconds where it completes them without
//   the target's help or the target runs, a scheduler's time slice per flush
//   where it needs the target and the target is not running. The steps are
//   validated: after the last one, each rank's flags hold its neighbours'
//   last step.
//
// USAGE
//   mpirun -np P rma_flush [--steps 300] [--repeats 5] [--bytes 1024]
//                          [--json FILE]
//
// OUTPUT
//   One line per repeat and a summary on rank 0: the median time per step
//   (max over ranks), whether the node has more ranks than cores. With
//   --json the document asyncsolve.bench.rma_flush/1: the parameters, the
//   environment (MPI library, ranks, cores), "oversubscribed", and the
//   series of step times. Exit 0, 2 bad input, 4 failed validation.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/statistics.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/stats.hpp"
#include "benchkit.hpp"

namespace {

using namespace asyncsolve;
using Json = nlohmann::ordered_json;

struct Config {
  long steps = 300;
  int repeats = 5;
  int bytes = 1024;
  std::string json_path;
};

/// The window's layout: two int64 flags (one per neighbour), then one data
/// area of `bytes` per neighbour.
constexpr MPI_Aint flag_disp(int side) { return MPI_Aint{8} * side; }
MPI_Aint data_disp(int side, int bytes) { return 16 + static_cast<MPI_Aint>(side) * bytes; }

/// Reads this rank's flag of `side` as a receiver does.
std::int64_t read_flag(MPI_Win win, int rank, int side) {
  const std::int64_t ignored = 0;
  std::int64_t flag = 0;
  par::check_mpi(
      MPI_Fetch_and_op(&ignored, &flag, MPI_INT64_T, rank, flag_disp(side), MPI_NO_OP, win),
      "MPI_Fetch_and_op");
  par::check_mpi(MPI_Win_flush(rank, win), "MPI_Win_flush");
  return flag;
}

/// One repeat: `steps` steps; returns the seconds per step on this rank.
double repeat(const Config& c, MPI_Win win, const int peer[2], const int side_at_peer[2], int rank,
              std::int64_t first_step) {
  std::vector<unsigned char> data(static_cast<std::size_t>(c.bytes), 1);
  const double t0 = MPI_Wtime();
  for (long k = 0; k < c.steps; ++k) {
    const std::int64_t step = first_step + k + 1;
    for (int s = 0; s < 2; ++s) {
      par::check_mpi(MPI_Put(data.data(), c.bytes, MPI_BYTE, peer[s],
                             data_disp(side_at_peer[s], c.bytes), c.bytes, MPI_BYTE, win),
                     "MPI_Put");
      par::check_mpi(MPI_Win_flush(peer[s], win), "MPI_Win_flush");
      std::int64_t previous = 0;
      par::check_mpi(MPI_Fetch_and_op(&step, &previous, MPI_INT64_T, peer[s],
                                      flag_disp(side_at_peer[s]), MPI_REPLACE, win),
                     "MPI_Fetch_and_op");
      par::check_mpi(MPI_Win_flush(peer[s], win), "MPI_Win_flush");
    }
    for (int s = 0; s < 2; ++s) read_flag(win, rank, s);
  }
  return (MPI_Wtime() - t0) / static_cast<double>(c.steps);
}

int run(const Config& c, const bench::DriverRun& driver) {
  const par::Comm& world = driver.world;
  const std::string started = core::iso8601_now();
  par::check_json_path(c.json_path, world);
  const int rank = world.rank();
  const int size = world.size();
  const bool crowded = world.node_oversubscribed();
  // Side 0 receives from the left neighbour, side 1 from the right one; with
  // one or two ranks both neighbours may be the same rank (or this one).
  const int peer[2] = {(rank + 1) % size, (rank + size - 1) % size};
  const int side_at_peer[2] = {0, 1};
  void* base = nullptr;
  MPI_Win win = MPI_WIN_NULL;
  par::check_mpi(
      MPI_Win_allocate(data_disp(2, c.bytes), 1, MPI_INFO_NULL, world.get(), &base, &win),
      "MPI_Win_allocate");
  par::check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win), "MPI_Win_lock_all");
  auto* flags = static_cast<std::int64_t*>(base);
  flags[0] = flags[1] = 0;
  par::check_mpi(MPI_Win_sync(win), "MPI_Win_sync");
  world.barrier();

  std::vector<double> step_s;
  for (int r = 0; r < c.repeats; ++r) {
    const double local = repeat(c, win, peer, side_at_peer, rank, r * c.steps);
    world.barrier();
    step_s.push_back(par::max_over_ranks(world, local));
    if (world.is_root()) {
      std::printf("repeat %d: %.3f us per step (max over ranks)\n", r + 1, step_s.back() * 1e6);
    }
  }
  // Validation: each flag holds the last step its sender wrote.
  world.barrier();
  const std::int64_t got[2] = {read_flag(win, rank, 0), read_flag(win, rank, 1)};
  const std::int64_t last = static_cast<std::int64_t>(c.repeats) * c.steps;
  const bool valid =
      par::max_over_ranks(world, got[0] == last && got[1] == last ? 0.0 : 1.0) == 0.0;
  par::check_mpi(MPI_Win_unlock_all(win), "MPI_Win_unlock_all");
  par::check_mpi(MPI_Win_free(&win), "MPI_Win_free");
  if (!valid) throw core::RuntimeFailure("a flag does not hold its sender's last step");

  const double median = core::median(step_s);
  if (world.is_root()) {
    std::printf("rma_flush: %d ranks (%s), %d bytes: median %.3f us per step of %d repeats\n", size,
                crowded ? "more ranks than cores" : "at most one rank per core", c.bytes,
                median * 1e6, c.repeats);
  }
  const bool written = par::write_document(world, c.json_path, "rma_flush", "Wrote {}", [&] {
    Json doc = core::document_header("asyncsolve.bench.rma_flush/1", driver.args, started);
    doc["environment"] = par::environment_json(par::describe_environment(world, driver.env));
    doc["parameters"] = {{"steps", c.steps}, {"repeats", c.repeats}, {"bytes", c.bytes}};
    doc["oversubscribed"] = crowded;
    doc["result"] = {{"converged", true}, {"time_per_step_s", median}};
    doc["step_s"] = core::series_json(step_s);
    return doc;
  });
  return written ? 0 : 4;
}

}  // namespace

int main(int argc, char** argv) {
  Config c;
  CLI::App app{"rma_flush: the cost of one message of the rma channel's protocol", "rma_flush"};
  asyncsolve::bench::add_common_options(app, "rma_flush");
  app.add_option("--steps", c.steps, "Steps per repeat (one message to each neighbour each)");
  app.add_option("--repeats", c.repeats, "Repeats (median reported)");
  app.add_option("--bytes", c.bytes, "Bytes of each message");
  app.add_option("--json", c.json_path, "Write the result document to this file");
  return asyncsolve::bench::driver_main(
      argc, argv, {"rma_flush", asyncsolve::par::ThreadLevel::single, ""},
      [&]() -> std::optional<std::string> {
        auto text = asyncsolve::bench::parse_options(app, argc, argv);
        if (text) return text;
        if (c.steps < 1 || c.repeats < 1 || c.bytes < 1 || c.bytes > (1 << 24)) {
          throw asyncsolve::core::InputError(
              "--steps and --repeats: expected integers >= 1; --bytes: expected 1 to 16777216");
        }
        return std::nullopt;
      },
      [&](const asyncsolve::bench::DriverRun& driver) { return run(c, driver); });
}
