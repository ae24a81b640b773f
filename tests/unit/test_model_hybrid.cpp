// Paper 002 §7.2: the hybrid masteronly/funneled model and the fit of eq. 14.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/model/hybrid.hpp"

namespace model = asyncsolve::model;
using asyncsolve::core::InputError;

namespace {

const std::string data_dir = ASYNCSOLVE_TEST_DATA_DIR;

/// The paper prints its numbers to two decimals (1.60, 43%, 10%, 0.90).
double round2(double v) { return std::round(v * 100.0) / 100.0; }

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The parameters tests/data/make_hybrid_mvm.py wrote the samples with.
constexpr double x_overlap = 3e-9;
constexpr double x_non = x_overlap / 6;
constexpr double x_comm = 4.57 * x_overlap;

}  // namespace

// §7.2.1: "if m = 1, n = 8, and f_comp,non = 20%, then ε_max = 1.60 (5) is
// achieved for f_comm,best = 43% (6). For f_comm,equiv = 10%, the performance
// of both models are equal, i.e., ε = 1. And for smaller f_comm, the ratio can
// decrease to ε_min = 0.90 for f_comm = 0% (9)."
TEST(ModelHybrid, ReproducesThePapersWorkedExample) {
  const int n = 8;
  const int m = 1;
  const double f_non = 0.20;
  EXPECT_EQ(round2(model::epsilon_max(n, m, f_non)), 1.60);
  EXPECT_DOUBLE_EQ(model::epsilon_max(n, m, f_non), 1.875 / 1.175);
  EXPECT_EQ(round2(model::f_comm_best(n, m, f_non)), 0.43);
  EXPECT_DOUBLE_EQ(model::f_comm_best(n, m, f_non), 0.8 / 1.875);
  EXPECT_DOUBLE_EQ(model::f_comm_equiv(n, m, f_non), 0.10);
  EXPECT_NEAR(model::epsilon(n, m, 0.10, f_non), 1.0, 1e-12);
  EXPECT_EQ(round2(model::epsilon_min(n, m, f_non)), 0.90);
  EXPECT_DOUBLE_EQ(model::epsilon_min(n, m, f_non), 0.875 / 0.975);
  // ε_max and ε_min are eq. 3 at f_comm,best and at f_comm = 0.
  EXPECT_NEAR(model::epsilon(n, m, model::f_comm_best(n, m, f_non), f_non),
              model::epsilon_max(n, m, f_non), 1e-12);
  EXPECT_NEAR(model::epsilon(n, m, 0.0, f_non), model::epsilon_min(n, m, f_non), 1e-12);
  // The bounds of Wellein et al. for m = 1: 1 − 1/n and 2 − 1/n.
  EXPECT_DOUBLE_EQ(model::epsilon_bound(n, m), 2.0 - 1.0 / n);
  EXPECT_DOUBLE_EQ(model::epsilon_floor(n, m), 1.0 - 1.0 / n);
}

TEST(ModelHybrid, EvaluateGathersEveryQuantity) {
  const model::HybridQuantities q = model::evaluate(8, 1, 0.43, 0.20);
  EXPECT_DOUBLE_EQ(q.f_comp_overlap, 1.0 - 0.43 - 0.20);
  EXPECT_DOUBLE_EQ(q.epsilon, 1.0 / (0.20 + 0.43));  // communication-bound
  EXPECT_EQ(q.limited_by, model::LimitedBy::communication);
  EXPECT_EQ(model::evaluate(8, 1, 0.05, 0.20).limited_by, model::LimitedBy::computation);
  EXPECT_EQ(model::evaluate(8, 1, 0.8 / 1.875, 0.20).limited_by, model::LimitedBy::balanced);
  EXPECT_DOUBLE_EQ(q.epsilon_max, model::epsilon_max(8, 1, 0.20));
  EXPECT_DOUBLE_EQ(q.f_comm_best, model::f_comm_best(8, 1, 0.20));
  EXPECT_DOUBLE_EQ(q.epsilon_min, model::epsilon_min(8, 1, 0.20));
  EXPECT_DOUBLE_EQ(q.f_comm_equiv, 0.10);
  EXPECT_DOUBLE_EQ(q.m_min, 0.43 / (0.43 + 0.37));
  EXPECT_EQ(model::evaluate(8, 1, 0.0, 1.0).m_min, 0.0);
}

// "1 − 1/n ≤ ε ≤ 2 − 1/n if n is the number of threads of each SMP node, and
// one thread is reserved for communication", and in general ε_min ≤ ε ≤ ε_max
// for a fixed f_comp,non (eqs. 7 and 9), over a grid of fractions.
TEST(ModelHybrid, BoundsHoldOverAGridOfFractions) {
  constexpr int steps = 50;
  for (int n : {2, 3, 4, 8, 16, 64}) {
    for (int m = 1; m < n && m <= 4; ++m) {
      for (int i = 0; i <= steps; ++i) {
        for (int j = 0; i + j <= steps; ++j) {
          const double f_comm = static_cast<double>(i) / steps;
          const double f_non = static_cast<double>(j) / steps;
          const double eps = model::epsilon(n, m, f_comm, f_non);
          SCOPED_TRACE(testing::Message() << "n=" << n << " m=" << m << " f_comm=" << f_comm
                                          << " f_comp_non=" << f_non);
          if (m == 1) {
            EXPECT_GE(eps, 1.0 - 1.0 / n - 1e-12);
            EXPECT_LE(eps, 2.0 - 1.0 / n + 1e-12);
          }
          EXPECT_GE(eps, model::epsilon_floor(n, m) - 1e-12);
          EXPECT_LE(eps, model::epsilon_bound(n, m) + 1e-12);
          EXPECT_LE(eps, model::epsilon_max(n, m, f_non) + 1e-12);
          EXPECT_GE(eps, model::epsilon_min(n, m, f_non) - 1e-12);
          EXPECT_LE(model::epsilon_max(n, m, f_non), model::epsilon_bound(n, m) + 1e-12);
          EXPECT_GE(model::epsilon_min(n, m, f_non), model::epsilon_floor(n, m) - 1e-12);
          // Break-even: funneled wins exactly above f_comm,equiv (while some
          // computation is left to overlap).
          const double f_overlap = 1.0 - f_comm - f_non;
          const double equiv = model::f_comm_equiv(n, m, f_non);
          if (f_overlap > 1e-9 && std::abs(f_comm - equiv) > 1e-9) {
            EXPECT_EQ(eps > 1.0, f_comm > equiv);
          }
        }
      }
    }
  }
}

TEST(ModelHybrid, RejectsBadArgumentsNamingTheValue) {
  EXPECT_NE(error_of([] { model::check_threads(1, 1); }).find("n = 1"), std::string::npos);
  EXPECT_NE(error_of([] { model::check_threads(8, 0); }).find("m = 0"), std::string::npos);
  EXPECT_NE(error_of([] { model::check_threads(8, 8); }).find("expected 1 <= m < n"),
            std::string::npos);
  EXPECT_NE(error_of([] { model::check_fractions(-0.1, 0.2); }).find("f_comm = -0.1"),
            std::string::npos);
  EXPECT_NE(error_of([] { model::check_fractions(0.2, 1.5); }).find("f_comp,non = 1.5"),
            std::string::npos);
  EXPECT_NE(error_of([] { model::check_fractions(0.6, 0.5); }).find("expected at most 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { model::check_fractions(std::nan(""), 0.5); }).find("expected"),
            std::string::npos);
  EXPECT_THROW(model::epsilon(8, 1, 0.7, 0.7), InputError);
  EXPECT_THROW(model::evaluate(1, 1, 0.1, 0.1), InputError);
  EXPECT_NO_THROW(model::check_fractions(0.7, 0.3));  // sums to 1 up to rounding
}

// Eq. 14 with the paper's Hitachi parameters: x_comm/x_MVM,overlap = 4.57 and
// x_MVM,non/x_MVM,overlap = 1/6 put ε = 1 at n_k^loc = 32 for n = 8, m = 1.
TEST(ModelHybrid, Eq14CrossesOneAtThePapersNkLocal) {
  const model::MvmCosts x{4.57, 1.0 / 6.0, 1.0};
  EXPECT_NEAR(model::mvm_epsilon(x, 8, 1, 32.0), 1.0, 1e-3);
  EXPECT_GT(model::mvm_epsilon(x, 8, 1, 16.0), 1.0);
  EXPECT_LT(model::mvm_epsilon(x, 8, 1, 64.0), 1.0);
  // n_i n_j cancels in ε.
  EXPECT_DOUBLE_EQ(model::masteronly_time(x, 512.0 * 512.0, 8.0) /
                       model::funneled_time(x, 8, 1, 512.0 * 512.0, 8.0),
                   model::mvm_epsilon(x, 8, 1, 8.0));
}

TEST(ModelHybrid, FitRecoversTheParametersOfTheExactSample) {
  const model::MvmSweep sweep = model::load_mvm_sweep(data_dir + "/hybrid_mvm_exact.json");
  EXPECT_EQ(sweep.threads, 8);
  EXPECT_EQ(sweep.reserved, 1);
  EXPECT_EQ(sweep.records.size(), 9u);
  EXPECT_FALSE(sweep.records[0].multiple_s.has_value());
  const model::MvmFit fit = model::fit_mvm(sweep, sweep.threads, sweep.reserved);
  EXPECT_EQ(fit.masteronly_source, model::MasteronlySource::split);
  EXPECT_NEAR(fit.comm_over_overlap, 4.57, 4.57 * 1e-8);
  EXPECT_NEAR(fit.non_over_overlap, 1.0 / 6.0, 1e-8);
  EXPECT_NEAR(fit.x.x_comm, x_comm, x_comm * 1e-8);
  EXPECT_NEAR(fit.x.x_mvm_non, x_non, x_non * 1e-7);
  EXPECT_NEAR(fit.x.x_mvm_overlap, x_overlap, x_overlap * 1e-8);
  EXPECT_NEAR(fit.nk_crossover, 4.57 * 7, 1e-6);
  EXPECT_NEAR(fit.nk_best, 4.57 * 7 / 8, 1e-6);
  EXPECT_LT(fit.rms_epsilon_error, 1e-10);
  ASSERT_EQ(fit.rows.size(), sweep.records.size());
  for (std::size_t i = 0; i < fit.rows.size(); ++i) {
    EXPECT_NEAR(fit.rows[i].epsilon_predicted, fit.rows[i].epsilon_measured, 1e-10);
    EXPECT_NEAR(*fit.rows[i].f_comm_measured, fit.rows[i].f_comm_predicted, 1e-12);
  }
}

TEST(ModelHybrid, FitWithoutTheSplitRegressesTheMasteronlyTimes) {
  model::MvmSweep sweep = model::load_mvm_sweep(data_dir + "/hybrid_mvm_exact.json");
  for (auto& r : sweep.records) {
    r.masteronly_comm_s.reset();
    r.masteronly_compute_s.reset();
  }
  const model::MvmFit fit = model::fit_mvm(sweep, 8, 1);
  EXPECT_EQ(fit.masteronly_source, model::MasteronlySource::regression);
  EXPECT_NEAR(fit.comm_over_overlap, 4.57, 4.57 * 1e-7);
  EXPECT_NEAR(fit.non_over_overlap, 1.0 / 6.0, 1e-7);
  EXPECT_NEAR(fit.x.x_comm, x_comm, x_comm * 1e-7);
  EXPECT_FALSE(fit.rows[0].f_comm_measured.has_value());
}

// The paper's procedure: x_MVM,non/x_MVM,overlap = 1/6 fixed, one parameter.
TEST(ModelHybrid, FitWithAFixedNonRatioRecoversTheCommRatio) {
  const model::MvmSweep sweep = model::load_mvm_sweep(data_dir + "/hybrid_mvm_exact.json");
  const model::MvmFit fit = model::fit_mvm(sweep, 8, 1, 1.0 / 6.0);
  EXPECT_TRUE(fit.non_ratio_fixed);
  EXPECT_EQ(fit.masteronly_source, model::MasteronlySource::scaled);
  EXPECT_NEAR(fit.comm_over_overlap, 4.57, 4.57 * 1e-7);
  EXPECT_DOUBLE_EQ(fit.non_over_overlap, 1.0 / 6.0);
  EXPECT_NEAR(fit.x.x_mvm_overlap, x_overlap, x_overlap * 1e-7);
  EXPECT_LT(fit.rms_epsilon_error, 1e-9);
}

TEST(ModelHybrid, FitOfTheNoisySampleStaysCloseToTheTruth) {
  const model::MvmSweep sweep = model::load_mvm_sweep(data_dir + "/hybrid_mvm_noisy.json");
  ASSERT_TRUE(sweep.records[0].multiple_s.has_value());
  const model::MvmFit fit = model::fit_mvm(sweep, 8, 1);
  EXPECT_NEAR(fit.comm_over_overlap, 4.57, 4.57 * 0.15);
  EXPECT_NEAR(fit.x.x_comm, x_comm, x_comm * 0.05);
  EXPECT_NEAR(fit.nk_crossover, 32.0, 32.0 * 0.15);
  EXPECT_LT(fit.rms_epsilon_error, 0.05);
  EXPECT_TRUE(fit.rows[0].epsilon_multiple.has_value());
  const model::MvmFit fixed = model::fit_mvm(sweep, 8, 1, 1.0 / 6.0);
  EXPECT_NEAR(fixed.comm_over_overlap, 4.57, 4.57 * 0.10);
}

TEST(ModelHybrid, ReaderRejectsBadDocumentsNamingTheField) {
  nlohmann::json good = {{"schema", "asyncsolve.bench.hybrid_mvm/1"},
                         {"threads", 8},
                         {"reserved", 1},
                         {"ni", 16},
                         {"nj", 16},
                         {"ranks", 2},
                         {"records",
                          {{{"nk_local", 1}, {"masteronly_s", 2.0}, {"funneled_s", 1.5}},
                           {{"nk_local", 2},
                            {"masteronly_s", 3.0},
                            {"funneled_s", 2.0},
                            {"multiple_s", nullptr},
                            {"masteronly_comm_s", nullptr},
                            {"masteronly_compute_s", nullptr}}}}};
  EXPECT_NO_THROW(model::read_mvm_sweep(good, "f.json"));
  const auto error = [&](const auto& edit) {
    nlohmann::json doc = good;
    edit(doc);
    return error_of([&] { model::read_mvm_sweep(doc, "f.json"); });
  };
  EXPECT_NE(error([](auto& d) { d["schema"] = "other/1"; }).find("schema \"other/1\": expected"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) { d.erase("ni"); }).find("f.json: ni: missing, expected"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) { d["threads"] = 1; }).find("threads = 1: expected"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) { d["reserved"] = 8; }).find("reserved = 8 with threads = 8"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) {
              d["records"][1].erase("funneled_s");
            }).find("records[1].funneled_s: missing"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) {
              d["records"][0]["masteronly_s"] = -1.0;
            }).find("records[0].masteronly_s = -1.0: expected a time in seconds > 0"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) {
              d["records"][0]["nk_local"] = "x";
            }).find("records[0].nk_local = \"x\": expected"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) { d["records"][1]["nk_local"] = 1; }).find("at least 2"),
            std::string::npos);
  EXPECT_NE(error([](auto& d) { d["records"] = 3; }).find("expected an array"), std::string::npos);
  EXPECT_NE(
      error_of([] { model::load_mvm_sweep(data_dir + "/no_such_file.json"); }).find("no such file"),
      std::string::npos);
}
