#pragma once
// The options of `asyncsolve model hybrid` (paper 002 §7.2). Pure: no MPI,
// no output.
#include <optional>
#include <string>

#include "options_common.hpp"

namespace asyncsolve::app {

/// What `asyncsolve model hybrid` takes (paper 002 §7.2): either the fractions
/// of T_masteronly (quantities mode) or a measured MVM sweep to fit (--fit).
/// Validated except for what depends on the sweep file (threads and reserved
/// taken from it are checked when it is read).
struct ModelHybridConfig {
  int threads = 0;   ///< n, threads per SMP node; 0: not given (--fit: the file's)
  int reserved = 0;  ///< m, threads reserved for communication; 0: not given (1, or the file's)
  double f_comm = 0.0;
  double f_comp_non = 0.0;
  std::optional<double> f_comp_overlap;  ///< given: the three must sum to 1 (eq. 1)
  std::string fit_path;                  ///< --fit FILE; empty: quantities mode
  std::optional<double> non_ratio;       ///< --non-ratio: x_MVM,non / x_MVM,overlap held fixed
  std::string json_path;                 ///< empty: no document

  bool is_fit() const { return !fit_path.empty(); }
};

/// The `model hybrid` options as the command line gave them (CLI11 writes
/// into it; it stays in place until validated).
struct ModelHybridArgs {
  ModelHybridConfig values;  ///< the numbers and paths
  double f_comp_overlap = 0.0;
  std::string non_ratio;  ///< --non-ratio as given ("1/6"); empty: fitted
  CLI::Option* threads = nullptr;
  CLI::Option* reserved = nullptr;
  CLI::Option* f_comm = nullptr;
  CLI::Option* f_comp_non = nullptr;
  CLI::Option* f_comp_overlap_option = nullptr;
};

/// Declares every option of `model hybrid`, writing into `args`.
void add_model_hybrid_options(CLI::App& model, ModelHybridArgs& args);

/// After the parse: the validated config. Throws core::InputError with one
/// line naming the bad value and what was expected.
ModelHybridConfig validate_model_hybrid(const ModelHybridArgs& args);

}  // namespace asyncsolve::app
