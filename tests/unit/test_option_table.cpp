// The option tables (issue 19): strict numbers with messages quoting what
// was typed and the limits, a range for every number, options that do
// nothing refused from the table, every option part of the configuration the
// ranks compare, one-line messages, and the option reference's table
// (docs/options.md) true to the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/agreement.hpp"
#include "app/cli.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "cli_support.hpp"

using asyncsolve::app::canonical;
using asyncsolve::app::Command;
using asyncsolve::app::option_rows;
using asyncsolve::app::OptionRow;
using asyncsolve::app::parse_command_line;
using asyncsolve::core::InputError;

namespace {

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

using asyncsolve_test::error_of;
using asyncsolve_test::parse;

/// What a command needs besides the option under test to be valid.
std::vector<std::string> base_args(const std::string& command) {
  std::vector<std::string> args = words(command);
  if (command == "model hybrid") {
    for (const char* a : {"--threads", "4", "--f-comm", "0.3", "--f-comp-non", "0.3"})
      args.emplace_back(a);
  }
  return args;
}

/// `args` without `name` and its value.
std::vector<std::string> without(std::vector<std::string> args, const OptionRow& row) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == row.name) {
      args.erase(args.begin() + static_cast<long>(i),
                 args.begin() + static_cast<long>(i + (row.value.empty() ? 1 : 2)));
      break;
    }
  }
  return args;
}

/// The configuration (first alternative of where the row applies) as options.
std::vector<std::string> context_args(const OptionRow& row) {
  std::vector<std::string> out;
  if (row.applies.everywhere()) return out;
  // The first context this build can run: --pc boomeramg needs hypre (a
  // build without it, as with MPICH, takes --block-size's next one).
  const auto runnable = [](const auto& context) {
    return std::none_of(context.begin(), context.end(), [](const auto& c) {
      return c.dimension == "--pc" && c.values.front() == "boomeramg" &&
             !asyncsolve::precond::boomeramg_available();
    });
  };
  const auto found = std::find_if(row.applies.any.begin(), row.applies.any.end(), runnable);
  for (const auto& c : found != row.applies.any.end() ? *found : row.applies.any.front()) {
    if (c.dimension == "--fit") continue;  // model hybrid's modes: see the test
    out.push_back(c.dimension);
    out.push_back(c.values.front());
  }
  return out;
}

}  // namespace

TEST(OptionTable, StrictNumbersQuoteWhatWasTypedAndTheLimits) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"solve", "--max-iters", "0x10"}, "--max-iters 0x10: expected an integer from 0 to 1e9"},
      {{"solve", "--max-iters", "1e3"}, "--max-iters 1e3: expected an integer from 0 to 1e9"},
      {{"solve", "--max-iters", "16 "}, "--max-iters '16 ': expected an integer"},
      {{"solve", "--max-iters", "+16"}, "--max-iters +16: expected an integer"},
      {{"solve", "--tol", "1e-400"}, "--tol 1e-400: expected a positive number from 1e-300 to 1"},
      {{"solve", "--tol", "1e-6x"}, "--tol 1e-6x: expected a positive number from 1e-300 to 1"},
      {{"solve", "--tol", "abc"}, "--tol abc: expected a positive number from 1e-300 to 1"},
      {{"solve", "--tol", "nan"}, "(a finite number)"},
      {{"solve", "--tol", ""}, "--tol '': expected"},
      {{"solve", "--slow-factor", "1e300"},
       "--slow-factor 1e300: expected a positive number from "
       "1 to 100"},
      {{"solve", "--offset", "1e308"}, "--offset 1e308: expected a number from -1e12 to 1e12"},
      {{"solve", "--local", "99999999999999999999,10,10"},
       "out of range, expected three "
       "integers from 1 to 1000000000"},
      {{"solve", "--local"}, "--local: missing value, expected --local X,Y,Z"},
      {{"solve", "--tol", "0.1", "--tol", "0.2"}, "--tol: given more than once"},
      {{"solve", "--problem", "nope"}, "expected one of plume, ones, laplace27, tfim"},
      {{"solve", "--method", "lanczos", "--problem", "tfim", "--coupling", "1e308"},
       "--coupling 1e308: expected a number from -1e6 to 1e6"},
      {{"bench", "stencil2d", "--radius", "100"}, "--radius 100: expected an integer from 1 to 64"},
      {{"solve", "--allreduce", "knomial:99999999"}, "K at most 1024"},
      {{"solve", "--variant", "async", "--progress", "thread:99999999"}, "thread"},
      {{"model", "hybrid", "--fit", ""}, "--fit '': expected a file path"},
      {{"solve", "--json", ""}, "--json '': expected a file path"},
      {{"solve", "--dims", ""}, "--dims '': expected --dims"},
      {{"model", "hybrid", "--fit", "x.json", "--non-ratio", ""}, "--non-ratio '': expected"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.args);
    EXPECT_NE(message.find(c.message), std::string::npos)
        << "message '" << message << "' should contain '" << c.message << "'";
  }
  // What the strict parser takes, CLI11 converts to the same value.
  EXPECT_EQ(parse({"solve", "--max-iters", "010"}).solve.max_iters, 10);
  EXPECT_EQ(parse({"solve", "--max-iters", "16"}).solve.max_iters, 16);
  EXPECT_EQ(parse({"solve", "--tol", "1e-300"}).solve.tol, 1e-300);
  EXPECT_EQ(parse({"solve", "--offset", "-1e12"}).solve.offset, -1e12);
}

TEST(OptionTable, EveryNumberHasAFiniteRangeHoldingItsDefault) {
  std::size_t numbers = 0;
  for (const auto& [command, row] : option_rows()) {
    if (!row.range) continue;
    ++numbers;
    SCOPED_TRACE(command + " " + row.name);
    EXPECT_TRUE(std::isfinite(row.range->min) && std::isfinite(row.range->max));
    EXPECT_LE(row.range->min, row.range->max);
    if (row.unchanged) {
      const double d = std::stod(*row.unchanged);
      EXPECT_GE(d, row.range->min);
      EXPECT_LE(d, row.range->max);
    }
    EXPECT_FALSE(row.default_text.empty()) << "a number shows its default";
  }
  EXPECT_GE(numbers, 30u);
}

TEST(OptionTable, EveryOptionChangesTheConfigurationTheRanksCompare) {
  std::size_t checked = 0;
  for (const auto& [command, row] : option_rows()) {
    SCOPED_TRACE(command + " " + row.name);
    std::vector<std::string> base = base_args(command);
    for (const auto& a : context_args(row)) base.push_back(a);
    // An option that does nothing alone is refused: its partner beside it
    // (and, for the two noise options, the option itself at another value).
    const std::map<std::string, std::string> partners{{"--slow-factor", "--slow-rank 0"},
                                                      {"--noise-us", "--noise-hz 1 --noise-us 1"},
                                                      {"--noise-hz", "--noise-us 1 --noise-hz 1"},
                                                      {"--noise-seed", "--noise-us 1 --noise-hz 1"},
                                                      {"--monitor-every", "--monitor"}};
    if (command == "solve" && partners.contains(row.name)) {
      for (const auto& a : words(partners.at(row.name))) base.push_back(a);
    }
    std::string sample = row.sample;
    if (row.name == "--pc") {
      // auto is none for cg (the first Krylov method): jacobi with pipecg.
      base = words("solve --method pipecg");
      sample = "jacobi";
    }
    // The option as the base gives it (model hybrid's required ones), then
    // the base with the option at its sample value instead.
    std::vector<std::string> with = without(base, row);
    if (row.name == "--fit") with = words(command);  // the fit mode: no fractions
    if (row.name == "--non-ratio") {
      base = words("model hybrid --fit sweep.json");
      with = base;
    }
    with.push_back(row.name);
    if (!row.value.empty()) {
      ASSERT_FALSE(sample.empty()) << "every option has a sample value";
      with.push_back(sample);
    }
    std::string before;
    std::string after;
    try {
      before = canonical(parse(base));
      after = canonical(parse(with));
    } catch (const InputError& e) {
      ADD_FAILURE() << "where the table says it applies, the sample is refused: " << e.what();
      continue;
    }
    EXPECT_NE(before, after) << "the option does not reach the canonical config";
    EXPECT_NE(asyncsolve::app::fnv1a(before), asyncsolve::app::fnv1a(after));
    ++checked;
  }
  EXPECT_GE(checked, 55u);
}

TEST(OptionTable, OptionsThatDoNothingAreRefused) {
  // One case (at least) for every option that does not apply everywhere.
  struct Case {
    std::string option;
    std::vector<std::string> args;
  };
  const std::vector<Case> cases = {
      {"--offset", {"solve", "--problem", "ones", "--offset", "1"}},
      {"--global", {"solve", "--method", "lanczos", "--problem", "tfim", "--global", "8,8,8"}},
      {"--local", {"solve", "--method", "lanczos", "--problem", "tfim", "--local", "8,8,8"}},
      {"--dims", {"solve", "--method", "lanczos", "--problem", "tfim", "--dims", "1,1,1"}},
      {"--variant", {"solve", "--method", "cg", "--variant", "async"}},
      {"--transport", {"solve", "--method", "cg", "--transport", "rma"}},
      {"--threads", {"solve", "--threads", "2"}},
      {"--hybrid", {"solve", "--method", "lanczos", "--problem", "tfim", "--hybrid", "funneled"}},
      {"--halo", {"solve", "--transport", "rma", "--halo", "alltoallv"}},
      {"--halo", {"solve", "--transport", "omp", "--halo", "alltoallv"}},
      {"--test-every", {"solve", "--test-every", "8"}},
      {"--pc", {"solve", "--pc", "jacobi"}},
      {"--pc-option", {"solve", "--pc-option", "lanczos_steps=20"}},
      {"--overlap", {"solve", "--method", "pcg1", "--overlap", "2"}},
      {"--local-solver", {"solve", "--method", "pcg1", "--local-solver", "ic0"}},
      {"--coarse", {"solve", "--method", "pcg1", "--pc", "jacobi", "--coarse", "nicolaides"}},
      {"--block-size", {"solve", "--method", "pcg1", "--pc", "asm", "--block-size", "3"}},
      {"--coordinates",
       {"solve", "--matrix", "a.mtx", "--method", "pcg1", "--pc", "asm", "--coordinates", "c.mtx"}},
      {"--shift", {"solve", "--shift", "1"}},
      {"--repeat-solve", {"solve", "--repeat-solve", "2"}},
      {"--restart", {"solve", "--method", "bicgstab", "--restart", "10"}},
      {"--restart", {"solve", "--method", "cg", "--restart", "10"}},
      {"--cgs-refinement", {"solve", "--method", "pgmres", "--cgs-refinement", "always"}},
      {"--allreduce", {"solve", "--transport", "omp", "--allreduce", "impi"}},
      {"--max-in-flight", {"solve", "--max-in-flight", "7"}},
      {"--max-in-flight", {"solve", "--method", "cg", "--max-in-flight", "7"}},
      {"--max-in-flight",
       {"solve", "--transport", "omp", "--variant", "async", "--max-in-flight", "7"}},
      {"--final-sync", {"solve", "--method", "cg", "--final-sync", "3"}},
      {"--final-sync", {"solve", "--final-sync", "3"}},
      {"--idle", {"solve", "--idle", "off"}},
      {"--kernel", {"solve", "--method", "cg", "--kernel", "portable"}},
      {"--idle", {"solve", "--method", "cg", "--idle", "off"}},
      {"--max-time", {"solve", "--method", "lanczos", "--problem", "tfim", "--max-time", "5"}},
      {"--slow-rank", {"solve", "--transport", "omp", "--slow-rank", "0"}},
      {"--slow-factor", {"solve", "--transport", "omp", "--slow-factor", "3"}},
      {"--noise-us", {"solve", "--transport", "omp", "--noise-us", "3"}},
      {"--noise-hz", {"solve", "--transport", "omp", "--noise-hz", "3"}},
      {"--noise-seed", {"solve", "--transport", "omp", "--noise-seed", "3"}},
      {"--progress", {"solve", "--progress", "poll:4"}},
      {"--check-every", {"solve", "--method", "cg", "--check-every", "7"}},
      {"--halo-every", {"solve", "--method", "cg", "--halo-every", "3"}},
      {"--halo-every", {"solve", "--transport", "omp", "--halo-every", "3"}},
      {"--copy", {"solve", "--variant", "racy", "--copy"}},
      {"--copy", {"solve", "--method", "cg", "--copy"}},
      {"--sites", {"solve", "--sites", "10"}},
      {"--coupling", {"solve", "--coupling", "2"}},
      {"--field", {"solve", "--field", "2"}},
      {"--lattice", {"solve", "--lattice", "square:2x3"}},
      {"--buffers", {"solve", "--buffers", "4"}},
      {"--buffers",
       {"solve", "--method", "lanczos", "--problem", "tfim", "--transport", "rma", "--buffers",
        "4"}},
      {"--chunk",
       {"solve", "--method", "lanczos", "--problem", "tfim", "--transport", "rma", "--chunk",
        "64"}},
      {"--rma-sync", {"solve", "--method", "lanczos", "--problem", "tfim", "--rma-sync", "notify"}},
      {"--rhs", {"solve", "--rhs", "b.mtx"}},
      {"--x0", {"solve", "--x0", "x0.mtx"}},
      {"--write-solution", {"solve", "--write-solution", "x.mtx"}},
      {"--partition", {"solve", "--partition", "metis"}},
      {"--scale", {"solve", "--scale", "unit-diagonal"}},
      {"--force", {"solve", "--force"}},
      {"--matrix-memory", {"solve", "--matrix-memory", "2"}},
      {"--f-comm", {"model", "hybrid", "--fit", "sweep.json", "--f-comm", "0.1"}},
      {"--f-comp-non", {"model", "hybrid", "--fit", "sweep.json", "--f-comp-non", "0.1"}},
      {"--f-comp-overlap", {"model", "hybrid", "--fit", "sweep.json", "--f-comp-overlap", "0.1"}},
      {"--non-ratio",
       {"model", "hybrid", "--threads", "4", "--f-comm", "0.3", "--f-comp-non", "0.1",
        "--non-ratio", "1/6"}},
  };
  std::set<std::string> covered;
  for (const Case& c : cases) {
    const std::string message = error_of(c.args);
    EXPECT_NE(message, "(no error)") << c.option;
    EXPECT_NE(message.find(c.option), std::string::npos) << message;
    covered.insert(c.option);
  }
  for (const auto& [command, row] : option_rows()) {
    if (row.applies.everywhere()) continue;
    EXPECT_TRUE(covered.count(row.name) > 0) << command << " " << row.name << " has no case";
  }
  // At their defaults, options that do nothing stay harmless (suites pass
  // them uniformly).
  EXPECT_NO_THROW(parse({"solve", "--method", "cg", "--variant", "sync", "--check-every", "100",
                         "--final-sync", "0", "--max-in-flight", "1"}));
}

TEST(OptionTable, MessagesAreOneLineWhateverWasTyped) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"solve", "--tol", "1\n2"},
                                             {"solve", "--problem", "a\nb"},
                                             {"solve", "--local", "1,\n2,3"},
                                             {"bench", "a\nb"},
                                             {"solve", "--bogus\n", "x"},
                                             {"solve", "--allreduce", "x\ny"},
                                             {"solve", "--progress", "\x1b[2J"}}) {
    const std::string message = error_of(args);
    EXPECT_NE(message, "(no error)");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  }
}

TEST(OptionTable, TheOptionReferenceHoldsTheTable) {
  std::ifstream in(std::string(ASYNCSOLVE_TEST_DATA_DIR) + "/../../docs/options.md");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string table = asyncsolve::app::options_markdown();
  EXPECT_NE(text.str().find(table), std::string::npos)
      << "docs/options.md's option table differs from the code; regenerate it with "
         "'make docs-options' (it writes 'asyncsolve --options-table' between the "
         "page's BEGIN generated and END generated lines):\n"
      << table;
}

TEST(Agreement, TheCanonicalConfigIgnoresSpellingButNotValues) {
  const auto same = [](std::vector<std::string> a, std::vector<std::string> b) {
    return canonical(parse(std::move(a))) == canonical(parse(std::move(b)));
  };
  EXPECT_TRUE(same({"solve", "--tol", "1e-5"}, {"solve", "--tol", "0.00001"}));
  EXPECT_TRUE(same({"solve", "--max-iters", "010"}, {"solve", "--max-iters", "10"}));
  EXPECT_TRUE(same({"solve", "--local", "10,10,10"}, {"solve", "--local=10,10,10"}));
  EXPECT_FALSE(same({"solve", "--local", "10,10,10"}, {"solve", "--local", "0010,10,11"}));
  EXPECT_FALSE(same({"solve", "--tol", "1e-5"}, {"solve", "--tol", "1.0000000000000002e-5"}));
  EXPECT_FALSE(same({"solve"}, {"bench", "allreduce"}));
}
