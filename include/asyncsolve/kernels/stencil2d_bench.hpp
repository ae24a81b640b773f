#pragma once
/// What every driver of the Stencil2D benchmark shares (`asyncsolve bench
/// stencil2d` over MPI, RMA and OpenSHMEM, and asyncsolve-stencil2d-caf in
/// Coarray Fortran), so that they take the same options and write the same
/// table and document asyncsolve.bench.stencil2d/1: the common options and
/// their checks, a measured run, its table row and its document row, and the
/// document's "parameters". Pure: no communication, no output.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}  // namespace CLI

namespace asyncsolve::kernels {

/// The options every Stencil2D driver takes, as the command line gives them
/// (CLI11 writes into it), with their defaults.
struct Stencil2dBenchArgs {
  std::string local = "256";  ///< --local: block size n, or a comma-separated sweep
  int radius = 1;             ///< --radius: halo width r
  long iterations = 100;      ///< -i: timed iterations per measurement
  long warmup = 5;            ///< -x: untimed iterations before them
  int repeats = 5;            ///< --repeats: measurements of every variant
};

/// Declares --local, --radius, -i, -x and --repeats on `app` (in that
/// order, defaults shown), writing into `args`, which must outlive the
/// parse. `worker` names what owns a block in the help: "rank" or "image".
void add_stencil2d_bench_options(CLI::App& app, Stencil2dBenchArgs& args, std::string_view worker);

/// Checks the common options: --local a list of sizes 2..65536 (at most
/// `max_sizes` of them; 0: any number), 1 <= --radius < every size, -i >= 1,
/// -x >= 0, --repeats >= 1. Returns the sizes; throws core::InputError with
/// one line naming the bad value and what was expected.
std::vector<int> validate_stencil2d_bench_args(const Stencil2dBenchArgs& args,
                                               std::size_t max_sizes = 0);

/// One run (a variant over a transport) at one local size, over the
/// repeats: the slowest worker's figures, per iteration.
struct Stencil2dMeasurement {
  std::string name;       ///< "transport/variant", e.g. "rma/get1"
  std::string model;      ///< the programming model in the row ("caf"); empty: none recorded
  std::string transport;  ///< e.g. "mpi"
  std::string variant;    ///< e.g. "get1"
  int local = 0;          ///< n of the n x n block
  long halo_bytes = 0;    ///< halo bytes per worker and iteration
  long calls = 0;         ///< communication calls per worker and iteration
  long syncs = -1;        ///< synchronisations per iteration; < 0: none recorded
  std::vector<double> iteration_us, exchange_us, filter_us;  ///< per repeat, us per iteration
  std::vector<double> bandwidth_mbs;  ///< per repeat, halo bytes / exchange time (MB/s)
};

/// The document's "results" (of asyncsolve.bench.stencil2d/1): a row per
/// measurement, on a px x py grid of `ranks` workers with halo width `radius`.
nlohmann::ordered_json stencil2d_results_json(const std::vector<Stencil2dMeasurement>& measurements,
                                              int px, int py, int radius, int ranks);

/// The table printed after the run: a line per measurement (with a syncs
/// column when `with_syncs`), then a line saying how the times were taken
/// (`worker`: "rank" or "image").
std::string stencil2d_table(const std::vector<Stencil2dMeasurement>& measurements, long iterations,
                            long warmup, std::string_view worker, bool with_syncs);

/// What the document's "parameters" record of a run.
struct Stencil2dParameters {
  std::vector<int> local_sizes;
  int radius = 1;
  long iterations = 0;
  long warmup = 0;
  int repeats = 0;
  std::string transport;                ///< --transport as given
  std::string variant;                  ///< --variant as given
  std::vector<std::string> transports;  ///< resolved, in order
  std::vector<std::string> variants;    ///< resolved, in order
  std::vector<std::string> runs;        ///< the measurements' names, in order
  std::string grid;                     ///< the worker grid as given; empty: not recorded
  std::string worker;                   ///< "rank" or "image"
  std::string reference_worker;         ///< the worker holding the reference ("rank 0")
  double validation_tol = 0.0;          ///< relative tolerance of the validation
  std::string synchronisation;          ///< how the variants synchronise; empty: not recorded
};

/// The document's "parameters" of `p`, with the descriptions of the filter,
/// the initial field, the validation and the timing.
nlohmann::ordered_json stencil2d_parameters_json(const Stencil2dParameters& p);

}  // namespace asyncsolve::kernels
