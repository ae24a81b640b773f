#pragma once
// The options of `asyncsolve bench stencil2d` (paper 004's Stencil2D),
// parsed once into a typed BenchStencil2dConfig. Pure: no MPI, no output
// (reads the launcher's environment to decide whether OpenSHMEM can run).
#include <string>
#include <vector>

#include "asyncsolve/kernels/stencil2d.hpp"
#include "option_table.hpp"
#include "options_common.hpp"

namespace asyncsolve::app {

/// --transport of `bench stencil2d`: the kernels' enum, spelled by its table.
using kernels::Stencil2dTransport;
template <>
struct EnumNames<Stencil2dTransport> {
  static constexpr const auto& names = kernels::stencil2d_transport_table;
};

/// --variant of `bench stencil2d`: trivial, sendrecv and halo are two-sided
/// (mpi), the others one-sided (rma and shmem); kernels::is_stencil2d_variant.
using kernels::Stencil2dVariant;
template <>
struct EnumNames<Stencil2dVariant> {
  static constexpr const auto& names = kernels::stencil2d_variant_table;
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
  std::vector<int> local_sizes{256};  ///< --local: n of the n x n block per rank, one run each
  int radius = 1;                     ///< --radius: halo width r, 1 <= r < every local size
  long iterations = 100;              ///< -i: timed iterations per measurement
  long warmup = 5;                    ///< -x: untimed iterations before them
  int repeats = 5;                    ///< measurements per figure (min/median/max)
  std::string transport_text{auto_choice};  ///< --transport as given (recorded in the document)
  std::string variant_text{
      kernels::stencil2d_every_variant};  ///< --variant as given (recorded in the document)
  std::vector<Stencil2dRun> runs;         ///< resolved, in order
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

/// The largest block size and halo width of `bench stencil2d` (whether a
/// block fits in memory is checked when the benchmark starts).
inline constexpr int stencil2d_local_max = 65536;
inline constexpr int stencil2d_radius_max = 64;

/// Declares every option of `bench stencil2d` in `table`, writing into `args`.
void add_bench_stencil2d_options(OptionTable& table, BenchStencil2dArgs& args);

/// After the parse: the validated config. Throws core::InputError with one
/// line naming the bad value and what was expected.
BenchStencil2dConfig validate_bench_stencil2d(const BenchStencil2dArgs& args,
                                              const OptionTable& table);

/// True when the process was started by a launcher (mpirun, mpiexec or
/// oshrun, which in Open MPI is mpirun), not as a singleton: Stencil2D's
/// shmem variants need one (checked in main, not by the parse, which stays
/// the same wherever it runs).
bool started_by_launcher();

}  // namespace asyncsolve::app
