#pragma once
// The options of `asyncsolve solve --method lanczos --problem tfim` (paper
// 004's SPIN benchmark): declared beside the other solve options, validated
// here. Pure: no MPI.
#include <string>

#include "asyncsolve/kernels/spin_exchange.hpp"
#include "option_table.hpp"
#include "options_common.hpp"

namespace asyncsolve::app {

struct SolveArgs;
struct SolveConfig;

/// --lattice: the periodic chain, or the periodic L x W square (square:LxW).
enum class Lattice { chain, square };
template <>
struct EnumNames<Lattice> {
  static constexpr std::array<std::string_view, 2> names{"chain", "square"};
};

/// --rma-sync of --transport rma: the kernels' RmaSync, spelled by its table.
using kernels::RmaSync;
template <>
struct EnumNames<RmaSync> {
  static constexpr const auto& names = kernels::rma_sync_names;
};

/// What --method lanczos --problem tfim takes (paper 004's SPIN benchmark).
struct SpinConfig {
  int sites = 16;         ///< n: 2^n states (square: L W)
  double coupling = 1.0;  ///< J of J sum_<ij> Z_i Z_j
  double field = 1.0;     ///< Gamma of Gamma sum_i X_i
  Lattice lattice = Lattice::chain;
  int length = 0;                     ///< square: L (0 for the chain)
  int width = 0;                      ///< square: W (0 for the chain)
  int buffers = 2;                    ///< --transport mpi: K round-robin receive buffers
  long chunk = 32768;                 ///< --transport mpi: doubles per message
  RmaSync rma_sync = RmaSync::fence;  ///< --transport rma
};

/// The lanczos options as the command line gave them (CLI11 writes into
/// this; it must stay in place until validated).
struct SpinArgs {
  SpinConfig values;              ///< the numbers; lattice and rma_sync are set by validation
  std::string lattice = "chain";  ///< chain or square:LxW
  std::string rma_sync = "fence";
  CLI::Option* sites = nullptr;
};

/// Adds --sites, --coupling, --field, --lattice, --buffers, --chunk and
/// --rma-sync to the solve table, writing into `args`; `lanczos` says where
/// they apply (--method lanczos).
void add_spin_options(OptionTable& table, SpinArgs& args, const Applies& lanczos);

/// Validates a solve of --method lanczos or --problem tfim into `config`
/// (whose grid and numbers `args` has set): the two go together, the grid
/// and Jacobi/Krylov options are refused, the reduction resolves to mpi
/// unless given. Throws core::InputError naming the value and what was
/// expected. Checks that need the rank count are made when the solve starts
/// (run_lanczos).
void validate_spin(const SolveArgs& args, SolveConfig& config);

}  // namespace asyncsolve::app
