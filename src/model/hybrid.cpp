// Paper 002 §7.2: the hybrid masteronly/funneled performance model (eqs. 1–9)
// and the fit of its sparse-MVM form (eqs. 11–14).
#include "asyncsolve/model/hybrid.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/parse.hpp"

namespace asyncsolve::model {
namespace {

using core::InputError;

// Slack for f_comm + f_comp,non ≤ 1 with decimal input (0.7 + 0.3 and the like).
constexpr double sum_slack = 1e-12;
constexpr double inf = std::numeric_limits<double>::infinity();

double overlap_fraction(double f_comm, double f_comp_non) {
  return std::max(0.0, 1.0 - f_comm - f_comp_non);
}

void check_fraction(double f, std::string_view name) {
  if (!(f >= 0.0 && f <= 1.0)) {
    throw InputError(
        fmt::format("{} = {}: expected a fraction of T_masteronly in [0, 1]", name, f));
  }
}

/// Minimises `f` over [lo, hi]: the best of `samples` evenly spaced points,
/// then golden-section search in the interval around it. The objectives here
/// are continuous and piecewise smooth, with a kink where the max of eq. 14
/// switches terms, which the sampling steps over.
double minimise(const std::function<double(double)>& f, double lo, double hi, int samples) {
  const double h = (hi - lo) / samples;
  double best = lo;
  double best_value = f(lo);
  for (int i = 1; i <= samples; ++i) {
    const double x = lo + h * i;
    const double v = f(x);
    if (v < best_value) {
      best = x;
      best_value = v;
    }
  }
  double a = std::max(lo, best - h);
  double b = std::min(hi, best + h);
  const double g = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = b - g * (b - a);
  double x2 = a + g * (b - a);
  double f1 = f(x1);
  double f2 = f(x2);
  for (int it = 0; it < 200 && b - a > 1e-15 * std::max(1.0, std::abs(a)); ++it) {
    if (f1 <= f2) {
      b = x2;
      x2 = x1;
      f2 = f1;
      x1 = b - g * (b - a);
      f1 = f(x1);
    } else {
      a = x1;
      x1 = x2;
      f1 = f2;
      x2 = a + g * (b - a);
      f2 = f(x2);
    }
  }
  const double mid = 0.5 * (a + b);
  return f(mid) <= best_value ? mid : best;
}

// ---- reading asyncsolve.bench.hybrid_mvm/1 ----------------------------------

std::string where(std::string_view source, std::string_view field) {
  return fmt::format("{}: {}", source, field);
}

const nlohmann::json& field(const nlohmann::json& obj, std::string_view source,
                            const std::string& path, const char* key, std::string_view expected) {
  const std::string name = path.empty() ? key : path + "." + key;
  const auto it = obj.find(key);
  if (it == obj.end()) {
    throw InputError(fmt::format("{}: missing, expected {}", where(source, name), expected));
  }
  return *it;
}

long integer_field(const nlohmann::json& obj, std::string_view source, const std::string& path,
                   const char* key, long min, std::string_view expected) {
  const nlohmann::json& v = field(obj, source, path, key, expected);
  const std::string name = path.empty() ? key : path + "." + key;
  if (!v.is_number() || std::floor(v.get<double>()) != v.get<double>() ||
      v.get<double>() < static_cast<double>(min) || !std::isfinite(v.get<double>())) {
    throw InputError(fmt::format("{} = {}: expected {}", where(source, name), v.dump(), expected));
  }
  return v.get<long>();
}

double time_value(const nlohmann::json& v, std::string_view source, const std::string& name,
                  bool allow_zero) {
  const char* expected = allow_zero ? "a time in seconds >= 0" : "a time in seconds > 0";
  if (!v.is_number() || !std::isfinite(v.get<double>()) ||
      (allow_zero ? v.get<double>() < 0.0 : !(v.get<double>() > 0.0))) {
    throw InputError(fmt::format("{} = {}: expected {}", where(source, name), v.dump(), expected));
  }
  return v.get<double>();
}

double time_field(const nlohmann::json& obj, std::string_view source, const std::string& path,
                  const char* key) {
  const nlohmann::json& v = field(obj, source, path, key, "a time in seconds > 0");
  return time_value(v, source, path + "." + key, false);
}

/// A time that may be absent or null.
std::optional<double> optional_time(const nlohmann::json& obj, std::string_view source,
                                    const std::string& path, const char* key, bool allow_zero) {
  const auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::nullopt;
  return time_value(*it, source, path + "." + key, allow_zero);
}

}  // namespace

std::string_view limited_by_name(LimitedBy term) noexcept {
  switch (term) {
    case LimitedBy::communication:
      return "communication";
    case LimitedBy::computation:
      return "computation";
    case LimitedBy::balanced:
      break;
  }
  return "balanced";
}

// ---- §7.2.1 ------------------------------------------------------------------

void check_threads(int n, int m) {
  if (n < 2) {
    throw InputError(
        fmt::format("n = {} threads per SMP node: expected n >= 2 (a communicating "
                    "thread and at least one computing thread)",
                    n));
  }
  if (m < 1 || m >= n) {
    throw InputError(
        fmt::format("m = {} threads reserved for communication with n = {}: "
                    "expected 1 <= m < n",
                    m, n));
  }
}

void check_fractions(double f_comm, double f_comp_non) {
  check_fraction(f_comm, "f_comm");
  check_fraction(f_comp_non, "f_comp,non");
  if (f_comm + f_comp_non > 1.0 + sum_slack) {
    throw InputError(
        fmt::format("f_comm + f_comp,non = {} + {} = {:.6g}: expected at most 1 "
                    "(f_comp,overlap = 1 - f_comm - f_comp,non, eq. 1)",
                    f_comm, f_comp_non, f_comm + f_comp_non));
  }
}

double epsilon(int n, int m, double f_comm, double f_comp_non) {
  check_threads(n, m);
  check_fractions(f_comm, f_comp_non);
  const double f_overlap = overlap_fraction(f_comm, f_comp_non);
  // eq. 3: the communication (on m threads) and the overlappable computation
  // (on the n − m others) run side by side; the non-overlappable part on all n.
  return 1.0 / (f_comp_non + std::max(f_comm / m, f_overlap * n / (n - m)));
}

double epsilon_max(int n, int m, double f_comp_non) {
  check_threads(n, m);
  check_fractions(0.0, f_comp_non);
  const double k = m * (1.0 - 1.0 / n);
  return (1.0 + k) / (1.0 + f_comp_non * k);  // eq. 5
}

double f_comm_best(int n, int m, double f_comp_non) {
  check_threads(n, m);
  check_fractions(0.0, f_comp_non);
  return (1.0 - f_comp_non) / (1.0 + 1.0 / m - 1.0 / n);  // eq. 6
}

double epsilon_bound(int n, int m) {
  check_threads(n, m);
  return 1.0 + m * (1.0 - 1.0 / n);  // eq. 7
}

double epsilon_min(int n, int m, double f_comp_non) {
  check_threads(n, m);
  check_fractions(0.0, f_comp_non);
  const double r = static_cast<double>(m) / n;
  return (1.0 - r) / (1.0 - f_comp_non * r);  // eq. 9
}

double epsilon_floor(int n, int m) {
  check_threads(n, m);
  return 1.0 - static_cast<double>(m) / n;  // eq. 9, last line
}

double f_comm_equiv(int n, int m, double f_comp_non) {
  check_threads(n, m);
  check_fractions(0.0, f_comp_non);
  return static_cast<double>(m) / n * (1.0 - f_comp_non);
}

HybridQuantities evaluate(int n, int m, double f_comm, double f_comp_non) {
  check_threads(n, m);
  check_fractions(f_comm, f_comp_non);
  HybridQuantities q;
  q.threads = n;
  q.reserved = m;
  q.f_comm = f_comm;
  q.f_comp_non = f_comp_non;
  q.f_comp_overlap = overlap_fraction(f_comm, f_comp_non);
  q.epsilon = epsilon(n, m, f_comm, f_comp_non);
  const double comm_term = f_comm / m;
  const double comp_term = q.f_comp_overlap * n / (n - m);
  const double scale = std::max({comm_term, comp_term, 1e-300});
  q.limited_by = std::abs(comm_term - comp_term) <= 1e-12 * scale ? LimitedBy::balanced
                 : comm_term > comp_term                          ? LimitedBy::communication
                                                                  : LimitedBy::computation;
  q.epsilon_max = epsilon_max(n, m, f_comp_non);
  q.f_comm_best = f_comm_best(n, m, f_comp_non);
  q.epsilon_bound = epsilon_bound(n, m);
  q.epsilon_min = epsilon_min(n, m, f_comp_non);
  q.epsilon_floor = epsilon_floor(n, m);
  q.f_comm_equiv = f_comm_equiv(n, m, f_comp_non);
  const double moving = q.f_comp_overlap + f_comm;
  q.m_min = moving > 0.0 ? f_comm / moving : 0.0;
  return q;
}

// ---- §7.2.2 ------------------------------------------------------------------

double masteronly_time(const MvmCosts& x, double plane_points, double nk_local) {
  return plane_points * (x.x_comm + (x.x_mvm_non + x.x_mvm_overlap) * nk_local);  // eqs. 11–13
}

double funneled_time(const MvmCosts& x, int n, int m, double plane_points, double nk_local) {
  return plane_points * (x.x_mvm_non * nk_local +
                         std::max(x.x_comm / m, static_cast<double>(n) / (n - m) * x.x_mvm_overlap *
                                                    nk_local));  // eq. 2
}

double mvm_epsilon(const MvmCosts& x, int n, int m, double nk_local) {
  return masteronly_time(x, 1.0, nk_local) / funneled_time(x, n, m, 1.0, nk_local);  // eq. 14
}

MvmSweep read_mvm_sweep(const nlohmann::json& doc, std::string_view source) {
  if (!doc.is_object()) {
    throw InputError(fmt::format("{}: a JSON {}, expected an object with schema \"{}\"", source,
                                 doc.type_name(), mvm_sweep_schema));
  }
  const nlohmann::json& schema =
      field(doc, source, "", "schema", fmt::format("\"{}\"", mvm_sweep_schema));
  if (!schema.is_string() || schema.get<std::string>() != mvm_sweep_schema) {
    throw InputError(
        fmt::format("{}: schema {}: expected \"{}\"", source, schema.dump(), mvm_sweep_schema));
  }
  MvmSweep s;
  s.threads = static_cast<int>(
      integer_field(doc, source, "", "threads", 2, "an integer >= 2 (threads per SMP node, n)"));
  s.reserved = static_cast<int>(integer_field(doc, source, "", "reserved", 1,
                                              "an integer >= 1 (threads reserved for "
                                              "communication, m)"));
  if (s.reserved >= s.threads) {
    throw InputError(fmt::format("{}: reserved = {} with threads = {}: expected reserved < threads",
                                 source, s.reserved, s.threads));
  }
  s.ni = integer_field(doc, source, "", "ni", 1, "an integer >= 1 (points in i)");
  s.nj = integer_field(doc, source, "", "nj", 1, "an integer >= 1 (points in j)");
  s.ranks = integer_field(doc, source, "", "ranks", 1, "an integer >= 1 (MPI processes)");
  const nlohmann::json& records =
      field(doc, source, "", "records", "an array of records, one per nk_local");
  if (!records.is_array()) {
    throw InputError(
        fmt::format("{}: records is a JSON {}: expected an array of records, one "
                    "per nk_local",
                    source, records.type_name()));
  }
  std::set<long> distinct;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::string path = fmt::format("records[{}]", i);
    const nlohmann::json& r = records[i];
    if (!r.is_object()) {
      throw InputError(
          fmt::format("{}: {} is a JSON {}: expected an object", source, path, r.type_name()));
    }
    MvmRecord rec;
    rec.nk_local = integer_field(r, source, path, "nk_local", 1, "an integer >= 1 (local planes)");
    rec.masteronly_s = time_field(r, source, path, "masteronly_s");
    rec.funneled_s = time_field(r, source, path, "funneled_s");
    rec.multiple_s = optional_time(r, source, path, "multiple_s", false);
    rec.masteronly_comm_s = optional_time(r, source, path, "masteronly_comm_s", true);
    rec.masteronly_compute_s = optional_time(r, source, path, "masteronly_compute_s", false);
    distinct.insert(rec.nk_local);
    s.records.push_back(rec);
  }
  if (distinct.size() < 2) {
    throw InputError(
        fmt::format("{}: records cover {} distinct nk_local: expected at least 2 "
                    "(a sweep over n_k^loc)",
                    source, distinct.size()));
  }
  return s;
}

MvmSweep load_mvm_sweep(const std::filesystem::path& path) {
  std::string text;
  try {
    text = core::read_input_file(path, mvm_sweep_max_bytes);
  } catch (const InputError& e) {
    throw InputError(
        fmt::format("{}, expected a JSON file with schema \"{}\"", e.what(), mvm_sweep_schema));
  }
  nlohmann::json doc;
  // A document nested deeper than any sweep is refused while it is read
  // (millions of '[' would otherwise become millions of nested arrays).
  struct TooDeep {};
  const auto limit_depth = [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > mvm_sweep_max_depth) throw TooDeep{};
    return true;
  };
  try {
    doc = nlohmann::json::parse(text, limit_depth);
  } catch (const TooDeep&) {
    throw InputError(
        fmt::format("{}: JSON nested deeper than {} levels, expected a JSON file "
                    "with schema \"{}\"",
                    core::printable(path.string()), mvm_sweep_max_depth, mvm_sweep_schema));
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() reads "[json.exception.parse_error.101] parse error at line 1, ...".
    std::string what = e.what();
    const std::size_t close = what.find("] ");
    if (close != std::string::npos) what = what.substr(close + 2);
    throw InputError(
        fmt::format("{}: not JSON ({}), expected a JSON file with schema "
                    "\"{}\"",
                    core::printable(path.string()), what, mvm_sweep_schema));
  }
  return read_mvm_sweep(doc, path.string());
}

const char* to_string(MasteronlySource source) noexcept {
  switch (source) {
    case MasteronlySource::split:
      return "split";
    case MasteronlySource::regression:
      return "regression";
    case MasteronlySource::scaled:
      return "scaled";
  }
  return "?";
}

MvmFit fit_mvm(const MvmSweep& sweep, int threads, int reserved, std::optional<double> non_ratio) {
  check_threads(threads, reserved);
  if (non_ratio && !(*non_ratio >= 0.0 && std::isfinite(*non_ratio))) {
    throw InputError(
        fmt::format("x_MVM,non / x_MVM,overlap = {}: expected a number >= 0 (the "
                    "paper's 1/6)",
                    *non_ratio));
  }
  const int n = threads;
  const int m = reserved;
  const double plane = static_cast<double>(sweep.ni) * static_cast<double>(sweep.nj);
  const auto& recs = sweep.records;
  if (recs.empty()) throw InputError("the sweep has no records: expected at least 2");

  std::vector<double> eps_measured;
  eps_measured.reserve(recs.size());
  for (const auto& r : recs) eps_measured.push_back(r.masteronly_s / r.funneled_s);
  // Sum of squared ε errors of a candidate (eq. 14 against the measurements).
  const auto eps_error = [&](const MvmCosts& x) {
    double sum = 0.0;
    for (std::size_t i = 0; i < recs.size(); ++i) {
      const double d =
          mvm_epsilon(x, n, m, static_cast<double>(recs[i].nk_local)) - eps_measured[i];
      sum += d * d;
    }
    return sum;
  };

  MvmFit fit;
  fit.threads = n;
  fit.reserved = m;
  if (!non_ratio) {
    // Step 1: T_masteronly = c + a·K, c = n_i n_j x_comm, a = n_i n_j x_MVM
    // (eqs. 11–13), K = n_k^loc; least squares of relative residuals.
    double c = 0.0;
    double a = 0.0;
    const bool split = std::all_of(recs.begin(), recs.end(), [](const MvmRecord& r) {
      return r.masteronly_comm_s.has_value() && r.masteronly_compute_s.has_value();
    });
    if (split) {
      fit.masteronly_source = MasteronlySource::split;
      // c: the communication time does not depend on K (eq. 11), its mean.
      for (const auto& r : recs) c += *r.masteronly_comm_s;
      c /= static_cast<double>(recs.size());
      // a: min Σ ((a K − C)/C)² over the computation times C.
      double num = 0.0;
      double den = 0.0;
      for (const auto& r : recs) {
        const double u = static_cast<double>(r.nk_local) / *r.masteronly_compute_s;
        num += u;
        den += u * u;
      }
      a = num / den;
    } else {
      fit.masteronly_source = MasteronlySource::regression;
      // min Σ w (c + a K − T)², w = 1/T²: the 2 × 2 normal equations.
      double sw = 0, swk = 0, swkk = 0, swt = 0, swkt = 0;
      for (const auto& r : recs) {
        const auto k = static_cast<double>(r.nk_local);
        const double t = r.masteronly_s;
        const double w = 1.0 / (t * t);
        sw += w;
        swk += w * k;
        swkk += w * k * k;
        swt += w * t;
        swkt += w * k * t;
      }
      const double det = sw * swkk - swk * swk;
      c = (swkk * swt - swk * swkt) / det;
      a = (sw * swkt - swk * swt) / det;
      if (c < 0.0) {  // no communication cost: a line through the origin
        c = 0.0;
        a = swkt / swkk;
      }
    }
    if (!(a > 0.0) || !std::isfinite(a) || !std::isfinite(c)) {
      throw InputError(
          fmt::format("the masteronly times give {} s per local plane: expected "
                      "them to grow with nk_local (eqs. 12-13)",
                      a));
    }
    // Step 2: q = x_MVM,non / x_MVM, the share of the computation that cannot
    // overlap, from the measured ε.
    const auto costs = [&](double q) {
      return MvmCosts{c / plane, q * a / plane, (1.0 - q) * a / plane};
    };
    const double q = minimise([&](double v) { return eps_error(costs(v)); }, 0.0, 1.0, 2000);
    fit.x = costs(q);
  } else {
    // The paper's fit: x_MVM,non / x_MVM,overlap = s fixed, ε depends on
    // r = x_comm / x_MVM,overlap alone; fit log r, then scale x_MVM,overlap to
    // the masteronly times (min Σ ((P x g − T)/T)², g = r + (1 + s) K).
    const double s = *non_ratio;
    const auto ratios = [&](double log_r) { return MvmCosts{std::exp(log_r), s, 1.0}; };
    const double log_r = minimise([&](double v) { return eps_error(ratios(v)); }, std::log(1e-6),
                                  std::log(1e6), 4000);
    const double r = std::exp(log_r);
    double num = 0.0;
    double den = 0.0;
    for (const auto& rec : recs) {
      const double g = (r + (1.0 + s) * static_cast<double>(rec.nk_local)) / rec.masteronly_s;
      num += g;
      den += g * g;
    }
    const double x_overlap = num / den / plane;
    fit.x = MvmCosts{r * x_overlap, s * x_overlap, x_overlap};
    fit.non_ratio_fixed = true;
    fit.masteronly_source = MasteronlySource::scaled;
  }

  const MvmCosts& x = fit.x;
  fit.comm_over_overlap = x.x_mvm_overlap > 0.0 ? x.x_comm / x.x_mvm_overlap : inf;
  fit.non_over_overlap = x.x_mvm_overlap > 0.0 ? x.x_mvm_non / x.x_mvm_overlap : inf;
  // ε = 1 where f_comm = f_comm,equiv (overlap term of the max): K = r (n − m)/m;
  // ε largest where the two terms are equal (eq. 4): K = r (n − m)/(m n).
  const double r = fit.comm_over_overlap;
  fit.nk_crossover = r * (n - m) / m;
  fit.nk_best = r * (n - m) / (static_cast<double>(m) * n);
  fit.epsilon_at_best = std::isfinite(fit.nk_best) ? mvm_epsilon(x, n, m, fit.nk_best)
                                                   : std::numeric_limits<double>::quiet_NaN();
  double sum = 0.0;
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const auto& rec = recs[i];
    const auto k = static_cast<double>(rec.nk_local);
    MvmFit::Row row;
    row.nk_local = rec.nk_local;
    row.epsilon_measured = eps_measured[i];
    row.epsilon_predicted = mvm_epsilon(x, n, m, k);
    if (rec.multiple_s) row.epsilon_multiple = rec.masteronly_s / *rec.multiple_s;
    if (rec.masteronly_comm_s) row.f_comm_measured = *rec.masteronly_comm_s / rec.masteronly_s;
    row.f_comm_predicted = x.x_comm / (x.x_comm + (x.x_mvm_non + x.x_mvm_overlap) * k);
    const double d = row.epsilon_predicted - row.epsilon_measured;
    sum += d * d;
    fit.rows.push_back(row);
  }
  fit.rms_epsilon_error = std::sqrt(sum / static_cast<double>(recs.size()));
  return fit;
}

}  // namespace asyncsolve::model
