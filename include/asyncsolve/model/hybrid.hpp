#pragma once
/// Paper 002 §7.2: the performance model of hybrid MPI+OpenMP schemes with
/// threads reserved for communication (masteronly versus funneled/multiple),
/// and the fit of its MVM form (eq. 14) to measured run times.
///
/// Notation of the paper: n threads per SMP node, m of them reserved for
/// communication; the masteronly run time T_masteronly splits into the
/// fractions f_comm (communication by the master thread), f_comp,non
/// (computation that cannot overlap communication, run on all n threads) and
/// f_comp,overlap = 1 − f_comm − f_comp,non (computation that can, run on the
/// n − m computing threads in the funneled/multiple scheme), eq. 1. The
/// performance ratio ε = T_masteronly / T_funneled; ε > 1 means reserving
/// threads pays.
///
/// Everything here is pure (no MPI, no output); bad arguments throw
/// core::InputError naming the value and what was expected.
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace asyncsolve::model {

// ---- §7.2.1: the fractions model, eqs. 1–9 ----------------------------------

/// Checks n ≥ 2 and 1 ≤ m < n; throws core::InputError otherwise.
void check_threads(int n, int m);

/// Checks f_comm and f_comp,non are in [0, 1] and sum to at most 1 (so that
/// f_comp,overlap = 1 − f_comm − f_comp,non ≥ 0, eq. 1); throws
/// core::InputError otherwise.
void check_fractions(double f_comm, double f_comp_non);

/// ε of eq. 3: [f_comp,non + max(f_comm/m, f_comp,overlap·n/(n−m))]^−1.
double epsilon(int n, int m, double f_comm, double f_comp_non);

/// ε_max of eq. 5: (1 + m(1 − 1/n)) / (1 + f_comp,non·m(1 − 1/n)), the best
/// ratio for this f_comp,non, reached at f_comm = f_comm,best.
double epsilon_max(int n, int m, double f_comp_non);

/// f_comm,best of eq. 6: (1 − f_comp,non) / (1 + 1/m − 1/n), where both terms
/// of the max in eq. 3 are equal (eq. 4).
double f_comm_best(int n, int m, double f_comp_non);

/// The right-hand bound of eq. 7, 1 + m(1 − 1/n): ε for any fractions stays
/// below it (2 − 1/n for m = 1).
double epsilon_bound(int n, int m);

/// ε_min of eq. 9: (1 − m/n) / (1 − f_comp,non·m/n), ε at f_comm = 0 (the
/// reserved threads idle); the lowest ε for this f_comp,non.
double epsilon_min(int n, int m, double f_comp_non);

/// The last line of eq. 9, 1 − m/n: ε for any fractions stays above it
/// (1 − 1/n for m = 1).
double epsilon_floor(int n, int m);

/// f_comm,equiv = (m/n)(1 − f_comp,non): the f_comm where ε = 1 (eq. 8 with
/// eq. 1); ε > 1 above it, ε < 1 below it.
double f_comm_equiv(int n, int m, double f_comp_non);

/// Which term of the max in eq. 3 sets the funneled time.
enum class LimitedBy {
  communication,  ///< f_comm/m
  computation,    ///< f_comp,overlap·n/(n−m)
  balanced,       ///< both alike (eq. 4)
};

/// "communication", "computation" or "balanced".
std::string_view limited_by_name(LimitedBy term) noexcept;

/// Every quantity of §7.2.1 for one machine and one split of T_masteronly.
struct HybridQuantities {
  int threads = 2;   ///< n
  int reserved = 1;  ///< m
  double f_comm = 0;
  double f_comp_non = 0;
  double f_comp_overlap = 0;  ///< 1 − f_comm − f_comp,non (eq. 1)
  double epsilon = 1;         ///< eq. 3
  /// Which term of the max in eq. 3 sets the funneled time.
  LimitedBy limited_by = LimitedBy::balanced;
  double epsilon_max = 1;    ///< eq. 5
  double f_comm_best = 0;    ///< eq. 6
  double epsilon_bound = 1;  ///< eq. 7, 1 + m(1 − 1/n)
  double epsilon_min = 1;    ///< eq. 9
  double epsilon_floor = 1;  ///< eq. 9, 1 − m/n
  double f_comm_equiv = 0;   ///< ε = 1
  double m_min = 0;          ///< f_comm / (f_comp,overlap + f_comm), §7.2.1 (0 when both are 0)
};

/// Validates the arguments (check_threads, check_fractions) and evaluates
/// every quantity.
HybridQuantities evaluate(int n, int m, double f_comm, double f_comp_non);

// ---- §7.2.2: the MVM experiment, eqs. 11–14 ---------------------------------

/// Costs of the parallel sparse MVM (eqs. 11–13), in seconds per point of an
/// n_i × n_j plane: communication x_comm per MVM, and per local plane the
/// non-overlappable x_MVM,non and overlappable x_MVM,overlap computation.
struct MvmCosts {
  double x_comm = 0;
  double x_mvm_non = 0;
  double x_mvm_overlap = 0;
};

/// T_masteronly per MVM (eqs. 11–13 summed): n_i n_j (x_comm + (x_MVM,non +
/// x_MVM,overlap) n_k^loc).
double masteronly_time(const MvmCosts& x, double plane_points, double nk_local);

/// T_funneled per MVM (eq. 2 with eqs. 11–13): n_i n_j (x_MVM,non n_k^loc +
/// max(x_comm/m, n/(n−m) x_MVM,overlap n_k^loc)).
double funneled_time(const MvmCosts& x, int n, int m, double plane_points, double nk_local);

/// ε of eq. 14 (n_i n_j cancels): masteronly_time / funneled_time.
double mvm_epsilon(const MvmCosts& x, int n, int m, double nk_local);

/// One record of an `asyncsolve.bench.hybrid_mvm/1` document: median times
/// per MVM, in seconds, at one n_k^loc.
struct MvmRecord {
  long nk_local = 0;
  double masteronly_s = 0;
  double funneled_s = 0;
  std::optional<double> multiple_s;
  std::optional<double> masteronly_comm_s;     ///< the communication part of masteronly_s
  std::optional<double> masteronly_compute_s;  ///< the computation part of masteronly_s
};

/// A hybrid MVM sweep over n_k^loc (schema "asyncsolve.bench.hybrid_mvm/1").
struct MvmSweep {
  int threads = 2;   ///< n
  int reserved = 1;  ///< m
  long ni = 0;
  long nj = 0;
  long ranks = 1;
  std::vector<MvmRecord> records;  ///< in file order
};

/// The schema name read_mvm_sweep accepts.
inline constexpr std::string_view mvm_sweep_schema = "asyncsolve.bench.hybrid_mvm/1";

/// Reads a sweep from a parsed document; `source` names it in errors (the
/// file name). Throws core::InputError naming the field and what was
/// expected for a wrong schema, a missing or mistyped field, non-positive
/// times, threads/reserved outside n ≥ 2, 1 ≤ m < n, or fewer than two
/// distinct n_k^loc. multiple_s and the masteronly split may be null or absent.
MvmSweep read_mvm_sweep(const nlohmann::json& doc, std::string_view source);

/// The largest sweep file load_mvm_sweep reads (a sweep of thousands of
/// records is a few hundred KiB), and the deepest nesting of its JSON.
inline constexpr std::size_t mvm_sweep_max_bytes = 4u << 20;
inline constexpr int mvm_sweep_max_depth = 32;

/// Reads and parses the file at `path`, then read_mvm_sweep. Throws
/// core::InputError for a missing or unreadable file, one that is not a
/// regular file (a directory, a device such as /dev/zero, a FIFO: refused
/// without reading), one larger than mvm_sweep_max_bytes, invalid JSON, or
/// JSON nested deeper than mvm_sweep_max_depth.
MvmSweep load_mvm_sweep(const std::filesystem::path& path);

/// How the masteronly model T = c + a·n_k^loc was obtained.
enum class MasteronlySource {
  split,       ///< c from masteronly_comm_s, a from masteronly_compute_s (every record has both)
  regression,  ///< a straight line through masteronly_s over n_k^loc
  scaled,      ///< the ratios fitted to ε, x_MVM,overlap scaled to masteronly_s (fixed non-ratio)
};

/// The fitted model and, per record, measured next to predicted ε.
struct MvmFit {
  int threads = 2;
  int reserved = 1;
  MvmCosts x;                    ///< seconds per point of an n_i × n_j plane
  double comm_over_overlap = 0;  ///< x_comm / x_MVM,overlap (infinite when x_MVM,overlap = 0)
  double non_over_overlap = 0;   ///< x_MVM,non / x_MVM,overlap (infinite when x_MVM,overlap = 0)
  bool non_ratio_fixed = false;  ///< x_MVM,non / x_MVM,overlap was given, not fitted
  MasteronlySource masteronly_source = MasteronlySource::regression;
  /// n_k^loc where eq. 14 gives ε = 1: (x_comm/x_MVM,overlap)(n − m)/m.
  double nk_crossover = 0;
  /// n_k^loc where both terms of the max in eq. 14 are equal (ε is largest):
  /// (x_comm/x_MVM,overlap)(n − m)/(m n).
  double nk_best = 0;
  double epsilon_at_best = 1;    ///< eq. 14 at nk_best
  double rms_epsilon_error = 0;  ///< root mean square of predicted − measured ε
  struct Row {
    long nk_local = 0;
    double epsilon_measured = 1;             ///< masteronly_s / funneled_s
    double epsilon_predicted = 1;            ///< eq. 14
    std::optional<double> epsilon_multiple;  ///< masteronly_s / multiple_s
    std::optional<double> f_comm_measured;   ///< masteronly_comm_s / masteronly_s
    double f_comm_predicted = 0;             ///< eq. 11 over eqs. 11–13
  };
  std::vector<Row> rows;  ///< in the sweep's order
};

/// Fits eq. 14 to `sweep` with n = `threads`, m = `reserved` (validated with
/// check_threads). Step 1, the masteronly model: T_masteronly = c + a·n_k^loc
/// with c = n_i n_j x_comm and a = n_i n_j (x_MVM,non + x_MVM,overlap), from
/// the split times when every record has them, else a straight line through
/// masteronly_s (c is clamped at 0). Step 2 splits a into its non-overlappable
/// share q = x_MVM,non / (x_MVM,non + x_MVM,overlap) ∈ [0, 1] by least squares
/// of predicted against measured ε. With `non_ratio` (x_MVM,non /
/// x_MVM,overlap, ≥ 0; the paper's 1/6) only x_comm/x_MVM,overlap is fitted
/// to ε, as the paper does, and x_MVM,overlap is then scaled to the masteronly
/// times. All least squares use relative residuals, so that every n_k^loc
/// counts alike. Throws core::InputError when the data cannot be fitted (the
/// masteronly times do not grow with n_k^loc).
MvmFit fit_mvm(const MvmSweep& sweep, int threads, int reserved,
               std::optional<double> non_ratio = std::nullopt);

/// "split", "regression" or "scaled".
const char* to_string(MasteronlySource source) noexcept;

}  // namespace asyncsolve::model
