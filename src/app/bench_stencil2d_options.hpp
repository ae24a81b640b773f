#pragma once
// The options of `asyncsolve bench stencil2d` (paper 004's Stencil2D),
// parsed once into a typed BenchStencil2dConfig. Pure: no MPI, no output
// (reads the launcher's environment to decide whether OpenSHMEM can run).
#include <string>
#include <vector>

#include "options_common.hpp"

namespace asyncsolve::app {

/// --transport of `bench stencil2d`.
enum class Stencil2dTransport { mpi, rma, shmem };
template <>
struct EnumNames<Stencil2dTransport> {
  static constexpr std::array<std::string_view, 3> names{"mpi", "rma", "shmem"};
};

/// --variant of `bench stencil2d`: trivial, sendrecv and halo are two-sided
/// (mpi), the others one-sided (rma and shmem); kernels::is_stencil2d_variant.
enum class Stencil2dVariant { trivial, sendrecv, halo, put, get, get0, get1 };
template <>
struct EnumNames<Stencil2dVariant> {
  static constexpr std::array<std::string_view, 7> names{"trivial", "sendrecv", "halo", "put",
                                                         "get",     "get0",     "get1"};
};

/// One run of `bench stencil2d`: a variant over a transport.
struct Stencil2dRun {
  Stencil2dTransport transport = Stencil2dTransport::mpi;
  Stencil2dVariant variant = Stencil2dVariant::trivial;
  /// "transport/variant", e.g. "rma/get1".
  std::string name() const;
};

/// What `asyncsolve bench stencil2d` takes (paper 004's Stencil2D), fully
/// validated: sizes, radius against every size, variant x transport pairs,
/// and whether OpenSHMEM can be used.
struct BenchStencil2dConfig {
  std::vector<int> local_sizes{256};    ///< --local: n of the n x n block per rank, one run each
  int radius = 1;                       ///< --radius: halo width r, 1 <= r < every local size
  long iterations = 100;                ///< -i: timed iterations per measurement
  long warmup = 5;                      ///< -x: untimed iterations before them
  int repeats = 5;                      ///< measurements per figure (min/median/max)
  std::string transport_text = "auto";  ///< --transport as given (recorded in the document)
  std::string variant_text = "all";     ///< --variant as given (recorded in the document)
  std::vector<Stencil2dRun> runs;       ///< resolved, in order
  bool corrupt_corner = false;  ///< --test-corrupt-corner (hidden test hook): validation must fail
  std::string json_path;        ///< empty: no result document

  /// True if some run goes over OpenSHMEM (main starts it).
  bool uses_shmem() const;
};

/// The `bench stencil2d` options as the command line gave them (CLI11
/// writes into it; it stays in place until validated).
struct BenchStencil2dArgs {
  BenchStencil2dConfig values;  ///< the numbers, the texts of --transport and --variant, --json
  std::string local = "256";
};

/// Declares every option of `bench stencil2d`, writing into `args`.
void add_bench_stencil2d_options(CLI::App& bench, BenchStencil2dArgs& args);

/// After the parse: the validated config. Throws core::InputError with one
/// line naming the bad value and what was expected.
BenchStencil2dConfig validate_bench_stencil2d(const BenchStencil2dArgs& args);

}  // namespace asyncsolve::app
