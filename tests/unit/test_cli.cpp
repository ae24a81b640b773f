#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "app/cli.hpp"
#include "asyncsolve/core/error.hpp"
#include "cli_support.hpp"

using asyncsolve::app::AllreduceMode;
using asyncsolve::app::Command;
using asyncsolve::app::parse_command_line;
using asyncsolve::app::Problem;
using asyncsolve::app::Progress;
using asyncsolve::app::Variant;
using asyncsolve::collectives::AllreduceAlgorithm;
using asyncsolve::comm::HybridMode;
using asyncsolve::core::InputError;
using Kind = AllreduceAlgorithm::Kind;

namespace {

using asyncsolve_test::error_of;
using asyncsolve_test::parse;

}  // namespace

TEST(Cli, DefaultsMatchThePaper) {
  const Command c = parse({"solve"});
  ASSERT_EQ(c.kind, Command::Kind::solve);
  EXPECT_EQ(c.solve.problem, Problem::plume);
  EXPECT_EQ(c.solve.tol, 1e-4);
  EXPECT_EQ(c.solve.check_every, 100);
  EXPECT_EQ(c.solve.halo_every, 1);
  EXPECT_FALSE(c.solve.copy);
  EXPECT_FALSE(c.solve.decomposition.global.has_value());
  EXPECT_FALSE(c.solve.decomposition.local.has_value());
}

TEST(Cli, ParsesEveryOption) {
  const Command c =
      parse({"solve", "--problem",    "ones",     "--global",    "10,20,30",  "--dims",
             "1,2,2", "--tol",        "1e-8",     "--max-iters", "50",        "--check-every",
             "7",     "--halo-every", "3",        "--copy",      "--monitor", "--monitor-every",
             "0.5",   "--json",       "out.json", "--method",    "jacobi",    "--variant",
             "sync",  "--transport",  "mpi",      "--halo",      "waitall",   "--allreduce",
             "mpi",   "--progress",   "none"});
  ASSERT_EQ(c.kind, Command::Kind::solve);
  EXPECT_EQ(c.solve.problem, Problem::ones);
  EXPECT_EQ(*c.solve.decomposition.global, (asyncsolve::core::Int3{10, 20, 30}));
  EXPECT_EQ(*c.solve.decomposition.dims, (asyncsolve::core::Int3{1, 2, 2}));
  EXPECT_EQ(c.solve.tol, 1e-8);
  EXPECT_EQ(c.solve.max_iters, 50);
  EXPECT_EQ(c.solve.check_every, 7);
  EXPECT_EQ(c.solve.halo_every, 3);
  EXPECT_TRUE(c.solve.copy);
  EXPECT_TRUE(c.solve.monitor);
  EXPECT_EQ(c.solve.monitor_every_s, 0.5);
  EXPECT_EQ(c.solve.json_path, "out.json");
}

TEST(Cli, AsynchronousOptions) {
  const Command c = parse({"solve", "--variant", "racy", "--max-in-flight", "7", "--final-sync",
                           "50", "--slow-rank", "1", "--slow-factor", "5", "--noise-us", "100",
                           "--noise-hz", "50", "--noise-seed", "9", "--allreduce", "impi"});
  ASSERT_EQ(c.kind, Command::Kind::solve);
  EXPECT_EQ(c.solve.variant, Variant::racy);
  EXPECT_EQ(c.solve.max_in_flight, 7);
  EXPECT_EQ(c.solve.final_sync, 50);
  EXPECT_EQ(c.solve.slow_rank, 1);
  EXPECT_EQ(c.solve.slow_factor, 5.0);
  EXPECT_EQ(c.solve.noise_us, 100.0);
  EXPECT_EQ(c.solve.noise_hz, 50.0);
  EXPECT_EQ(c.solve.noise_seed, 9);
  EXPECT_EQ(c.solve.allreduce, AllreduceAlgorithm{Kind::impi});
  EXPECT_EQ(parse({"solve", "--variant", "async"}).solve.allreduce, AllreduceAlgorithm{Kind::tree});
  EXPECT_EQ(parse({"solve"}).solve.allreduce, AllreduceAlgorithm{Kind::mpi});
  // The schedule-engine algorithms, for Krylov methods and async/racy Jacobi.
  const std::vector<std::pair<std::string, AllreduceAlgorithm>> algorithms{
      {"rd", {Kind::rd}},
      {"knomial:3", {Kind::knomial, 3}},
      {"twolevel:knomial:4", {Kind::twolevel, 0, Kind::knomial, 4}},
      {"twolevel:mpi", {Kind::twolevel, 0, Kind::mpi, 0}}};
  for (const auto& [name, algorithm] : algorithms) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"solve", "--method", "pcg-overlap", "--allreduce", name},
             {"solve", "--variant", "racy", "--allreduce", name}}) {
      const Command r = parse(args);
      EXPECT_EQ(r.solve.allreduce, algorithm) << name;
      EXPECT_EQ(asyncsolve::app::reduction_name(r.solve), name);
    }
  }
  EXPECT_EQ(parse({"solve"}).solve.max_in_flight, 1);  // paper 000 §6.3's optimum
  EXPECT_EQ(parse({"solve", "--variant", "async", "--progress", "poll:8"}).solve.progress,
            (Progress{Progress::Mode::poll, 8, std::nullopt}));
}

TEST(Cli, IdleAndMaxTime) {
  const Command d = parse({"solve", "--variant", "async"});
  EXPECT_TRUE(d.solve.idle);           // on by default for async and racy
  EXPECT_EQ(d.solve.max_time_s, 0.0);  // no guard unless asked
  const Command c = parse({"solve", "--variant", "racy", "--idle", "off", "--max-time", "2.5"});
  EXPECT_FALSE(c.solve.idle);
  EXPECT_EQ(c.solve.max_time_s, 2.5);
  EXPECT_EQ(parse({"solve", "--method", "pipecg", "--max-time", "1e3"}).solve.max_time_s, 1e3);
  // The option table's number message (issue 19's format): the text as
  // typed, then the range.
  EXPECT_EQ(error_of({"solve", "--max-time", "0"}),
            "--max-time 0: expected a positive number of seconds from 1e-300 to 1e9");
  EXPECT_EQ(error_of({"solve", "--max-time", "nan"}),
            "--max-time nan: expected a positive number of seconds from 1e-300 to 1e9 (a finite "
            "number)");
  EXPECT_EQ(error_of({"solve", "--max-time", "abc"}),
            "--max-time abc: expected a positive number of seconds from 1e-300 to 1e9");
  EXPECT_EQ(error_of({"solve", "--variant", "async", "--idle", "yes"}),
            "--idle 'yes': expected one of on, off");
  EXPECT_NE(error_of({"solve", "--idle", "off"}).find("--idle off with --variant sync"),
            std::string::npos);
  EXPECT_NE(error_of({"solve", "--idle", "on"}).find("--idle on with --variant sync"),
            std::string::npos);  // any --idle, even the default, with sync
  EXPECT_NE(
      error_of({"solve", "--method", "cg", "--idle", "off"}).find("--idle off with --method cg"),
      std::string::npos);
  EXPECT_NE(error_of({"solve", "--method", "lanczos", "--problem", "tfim", "--idle", "on"})
                .find("--idle on with --method lanczos"),
            std::string::npos);
  EXPECT_NE(error_of({"solve", "--method", "lanczos", "--problem", "tfim", "--max-time", "3"})
                .find("--max-time with --method lanczos"),
            std::string::npos);
}

TEST(Cli, HelpAndVersion) {
  EXPECT_EQ(parse({"--help"}).kind, Command::Kind::help);
  const Command h = parse({"solve", "--help"});
  EXPECT_EQ(h.kind, Command::Kind::help);
  EXPECT_NE(h.text.find("--check-every"), std::string::npos);
  EXPECT_NE(h.text.find("=100"), std::string::npos) << "defaults shown in --help";
  const Command v = parse({"--version"});
  EXPECT_EQ(v.kind, Command::Kind::version);
  EXPECT_NE(v.text.find("0.1.0"), std::string::npos);
  EXPECT_EQ(parse({"info"}).kind, Command::Kind::info);
}

TEST(Cli, BenchAllreduceDefaultsAndOptions) {
  Command d = parse({"bench", "allreduce"});
  ASSERT_EQ(d.kind, Command::Kind::bench_allreduce);
  const auto& b = d.bench_allreduce;
  EXPECT_EQ(b.algorithms,
            (std::vector<AllreduceAlgorithm>{{Kind::mpi}, {Kind::impi}, {Kind::tree}}));
  ASSERT_EQ(b.sizes_bytes.size(), 11u);  // 8, 16, ..., 8192
  EXPECT_EQ(b.sizes_bytes.front(), 8u);
  EXPECT_EQ(b.sizes_bytes.back(), 8192u);
  EXPECT_EQ(b.iterations, 1000);
  EXPECT_EQ(b.warmup, 100);
  EXPECT_EQ(b.repeats, 3);
  EXPECT_EQ(b.modes, (std::vector<AllreduceMode>{AllreduceMode::latency, AllreduceMode::overlap}));
  EXPECT_EQ(b.progress, Progress{});  // none: the compute is not cut, no thread
  ASSERT_EQ(b.noise.size(), 2u);
  EXPECT_EQ(b.noise[1].us, 200.0);
  EXPECT_EQ(b.noise[1].hz, 1000.0);
  EXPECT_EQ(b.noise_allreduce, AllreduceAlgorithm{Kind::impi});

  Command c = parse({"bench",
                     "allreduce",
                     "--algorithms",
                     "tree,rd",
                     "-m",
                     "64:256",
                     "-i",
                     "5",
                     "-x",
                     "0",
                     "--repeats",
                     "1",
                     "--modes",
                     "noise,latency",
                     "--progress",
                     "poll:4",
                     "--noise",
                     "10:5",
                     "--noise-global",
                     "8,9,10",
                     "--json",
                     "b.json"});
  const auto& o = c.bench_allreduce;
  EXPECT_EQ(o.algorithms, (std::vector<AllreduceAlgorithm>{{Kind::tree}, {Kind::rd}}));
  EXPECT_EQ(o.sizes_bytes, (std::vector<std::size_t>{64, 128, 256}));
  EXPECT_EQ(o.progress, (Progress{Progress::Mode::poll, 4, std::nullopt}));
  EXPECT_TRUE(o.has_mode(AllreduceMode::noise));
  EXPECT_FALSE(o.has_mode(AllreduceMode::overlap));
  EXPECT_EQ(o.noise_global, (asyncsolve::grid::Int3{8, 9, 10}));
  EXPECT_EQ(o.json_path, "b.json");
  EXPECT_EQ(parse({"bench", "allreduce", "-m", "1024"}).bench_allreduce.sizes_bytes.size(), 8u);
  EXPECT_EQ(parse({"bench", "allreduce", "--progress", "thread"}).bench_allreduce.progress.mode,
            Progress::Mode::thread);
}

TEST(Cli, BadInputNamesTheValueAndWhatWasExpected) {
  struct Case {
    std::vector<std::string> args;
    std::string must_contain;
  };
  const std::vector<Case> cases = {
      {{"solve", "--bogus"}, "--bogus"},
      {{"solve", "--local", "0,5,5"}, "0,5,5"},
      {{"solve", "--local", "5,5"}, "X,Y,Z"},
      {{"solve", "--global", "-4,5,5"}, "-4,5,5"},
      {{"solve", "--dims", "2,x,1"}, "--dims"},
      {{"solve", "--tol", "0"}, "--tol 0"},
      {{"solve", "--tol", "-1e-3"}, "positive"},
      {{"solve", "--tol", "abc"}, "abc"},
      {{"solve", "--check-every", "0"}, "--check-every 0"},
      {{"solve", "--halo-every", "-2"}, "--halo-every -2"},
      {{"solve", "--max-iters", "-1"}, "--max-iters -1"},
      {{"solve", "--problem", "heat"}, "plume, ones"},
      {{"solve", "--variant", "chaotic"}, "'chaotic'"},
      {{"solve", "--variant", "async", "--copy"}, "--copy"},
      {{"solve", "--variant", "async", "--progress", "poll:0"}, "poll:K"},
      {{"solve", "--variant", "async", "--progress", "thread:x"}, "'thread:x'"},
      {{"solve", "--progress", "thread"}, "--variant sync"},
      {{"solve", "--variant", "racy", "--transport", "shmem", "--progress", "thread"}, "shmem"},
      {{"solve", "--progress", "poll:4"}, "sync"},
      {{"solve", "--variant", "async", "--max-in-flight", "0"}, "--max-in-flight 0"},
      {{"solve", "--variant", "racy", "--max-in-flight", "513"}, "1 to 512"},
      {{"solve", "--allreduce", "knomial:0"}, "knomial:K (K >= 2)"},
      {{"solve", "--variant", "async", "--allreduce", "mpi"}, "non-blocking"},
      {{"solve", "--variant", "async", "--allreduce", "knomial:1"}, "knomial:K (K >= 2)"},
      {{"solve", "--method", "cg", "--allreduce", "twolevel:tree"}, "--allreduce 'twolevel:tree'"},
      {{"solve", "--slow-factor", "0.5"}, "--slow-factor 0.5"},
      {{"solve", "--slow-rank", "-3"}, "--slow-rank -3"},
      {{"solve", "--noise-us", "-1"}, "--noise-us -1"},
      {{"solve", "--noise-us", "2000", "--noise-hz", "1000"}, "all the time"},
      {{"solve", "--variant", "async", "--final-sync", "-1"}, "--final-sync -1"},
      {{"solve", "--variant", "async", "--transport", "tcp"}, "'tcp'"},
      {{"solve", "--transport", "omp", "--threads", "0"}, "--threads 0"},
      {{"solve", "--threads", "2"}, "--threads 2 with --transport mpi"},
      {{"solve", "--transport", "omp", "--allreduce", "mpi"}, "--allreduce mpi"},
      {{"solve", "--transport", "omp", "--slow-rank", "0"}, "--slow-rank 0"},
      {{"solve", "--halo", "magic"}, "waitall"},
      {{"solve", "--global", "8,8,8", "--local", "4,4,4"}, "--local"},
      {{"solve", "--problem", "ones", "--offset", "1"}, "--offset"},
      {{"frobnicate"}, "frobnicate"},
      {{}, "solve, bench, model, info"},
      {{"bench"}, "expected allreduce"},
      {{"bench", "allgather"}, "'allgather'"},
      {{"bench", "allreduce", "-m", "0:8"}, "-m '0:8'"},
      {{"bench", "allreduce", "-m", "64:8"}, "-m '64:8'"},
      {{"bench", "allreduce", "-m", "8:abc"}, "-m '8:abc'"},
      {{"bench", "allreduce", "-m", "12:64"}, "powers of two"},
      {{"bench", "allreduce", "-m", "8:16777216"}, "8388608"},
      {{"bench", "allreduce", "-i", "0"}, "-i 0"},
      {{"bench", "allreduce", "-x", "-1"}, "-x -1"},
      {{"bench", "allreduce", "--repeats", "0"}, "--repeats 0"},
      {{"bench", "allreduce", "--modes", "bogus"}, "'bogus'"},
      {{"bench", "allreduce", "--modes", "latency,latency"}, "twice"},
      {{"bench", "allreduce", "--algorithms", "mpi,,tree"}, "empty item"},
      {{"bench", "allreduce", "--algorithms", "mpi,bogus"}, "--algorithms 'bogus'"},
      {{"bench", "allreduce", "--noise-allreduce", "knomial:1"}, "--noise-allreduce 'knomial:1'"},
      {{"bench", "allreduce", "--progress", "poll:0"}, "poll:K"},
      {{"bench", "allreduce", "--progress", "thread:5"}, "'thread:5'"},
      {{"bench", "allreduce", "--noise", "50"}, "US:HZ"},
      {{"bench", "allreduce", "--noise", "2000:1000"}, "'2000:1000'"},
      {{"bench", "allreduce", "--noise-global", "4,4"}, "--noise-global"},
  };
  for (const Case& c : cases) {
    const std::string message = error_of(c.args);
    EXPECT_NE(message, "(no error)");
    EXPECT_NE(message.find(c.must_contain), std::string::npos)
        << "message '" << message << "' should contain '" << c.must_contain << "'";
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
  }
}

TEST(Cli, ModelHybridTakesTheFractions) {
  const Command c =
      parse({"model", "hybrid", "--threads", "8", "--f-comm", "0.43", "--f-comp-non", "0.2"});
  ASSERT_EQ(c.kind, Command::Kind::model_hybrid);
  EXPECT_EQ(c.model_hybrid.threads, 8);
  EXPECT_EQ(c.model_hybrid.reserved, 1);  // funneled by default
  EXPECT_EQ(c.model_hybrid.f_comm, 0.43);
  EXPECT_EQ(c.model_hybrid.f_comp_non, 0.2);
  EXPECT_FALSE(c.model_hybrid.is_fit());
  const Command f = parse({"model", "hybrid", "--fit", "sweep.json", "--non-ratio", "1/6"});
  ASSERT_EQ(f.kind, Command::Kind::model_hybrid);
  EXPECT_TRUE(f.model_hybrid.is_fit());
  EXPECT_EQ(f.model_hybrid.threads, 0);  // the file's
  EXPECT_DOUBLE_EQ(*f.model_hybrid.non_ratio, 1.0 / 6.0);
}

TEST(Cli, ModelHybridRejectsBadInput) {
  EXPECT_NE(error_of({"model"}).find("expected hybrid"), std::string::npos);
  EXPECT_NE(error_of({"model", "hybrid", "--f-comm", "0.1", "--f-comp-non", "0.1"})
                .find("--threads: missing"),
            std::string::npos);
  EXPECT_NE(
      error_of({"model", "hybrid", "--threads", "1", "--f-comm", "0.1", "--f-comp-non", "0.1"})
          .find("--threads 1: expected"),
      std::string::npos);
  EXPECT_NE(error_of({"model", "hybrid", "--threads", "4", "--reserved", "4", "--f-comm", "0.1",
                      "--f-comp-non", "0.1"})
                .find("--reserved 4 with --threads 4"),
            std::string::npos);
  EXPECT_NE(
      error_of({"model", "hybrid", "--threads", "4", "--f-comm", "-0.1", "--f-comp-non", "0.1"})
          .find("--f-comm -0.1: expected a fraction"),
      std::string::npos);
  EXPECT_NE(
      error_of({"model", "hybrid", "--threads", "4", "--f-comm", "0.6", "--f-comp-non", "0.5"})
          .find("= 1.1: expected a sum <= 1"),
      std::string::npos);
  EXPECT_NE(error_of({"model", "hybrid", "--threads", "4", "--f-comm", "0.4", "--f-comp-non", "0.2",
                      "--f-comp-overlap", "0.3"})
                .find("expected the three fractions to sum to 1"),
            std::string::npos);
  EXPECT_EQ(error_of({"model", "hybrid", "--threads", "4", "--f-comm", "0.4", "--f-comp-non", "0.2",
                      "--f-comp-overlap", "0.4"}),
            "(no error)");
  EXPECT_NE(error_of({"model", "hybrid", "--fit", "x.json", "--f-comm", "0.1"})
                .find("--f-comm with --fit"),
            std::string::npos);
  EXPECT_NE(error_of({"model", "hybrid", "--fit", "x.json", "--non-ratio", "-1"})
                .find("--non-ratio '-1'"),
            std::string::npos);
}

TEST(Cli, HybridSchemes) {
  EXPECT_EQ(parse({"solve"}).solve.hybrid, HybridMode::none);
  const std::vector<std::pair<std::string, HybridMode>> modes{
      {"masteronly", HybridMode::masteronly},
      {"funneled", HybridMode::funneled},
      {"multiple", HybridMode::multiple}};
  for (const auto& [mode, expected] : modes) {
    const Command c = parse({"solve", "--hybrid", mode, "--threads", "3"});
    EXPECT_EQ(c.solve.hybrid, expected);
    EXPECT_EQ(c.solve.threads, 3);
    EXPECT_TRUE(asyncsolve::app::is_hybrid(c.solve));
    EXPECT_EQ(parse({"solve", "--method", "cg", "--hybrid", mode}).solve.threads, 0);
  }
  EXPECT_NE(error_of({"solve", "--hybrid", "serialized"}).find("--hybrid 'serialized'"),
            std::string::npos);
  EXPECT_NE(error_of({"solve", "--hybrid", "funneled", "--threads", "0"}).find("--threads 0"),
            std::string::npos);
  EXPECT_NE(error_of({"solve", "--hybrid", "funneled", "--variant", "racy"}).find("--variant racy"),
            std::string::npos);
  EXPECT_NE(
      error_of({"solve", "--hybrid", "funneled", "--transport", "shmem"}).find("--transport shmem"),
      std::string::npos);
  EXPECT_NE(
      error_of({"solve", "--hybrid", "multiple", "--halo", "persistent"}).find("--halo persistent"),
      std::string::npos);
  EXPECT_NE(error_of({"solve", "--threads", "2"}).find("--threads 2 with --transport mpi"),
            std::string::npos);
  // A flag given a value it cannot take says so (it was CLI11's "Could not convert:
  // --force = maybe", and "--force=" asked for "a value").
  EXPECT_EQ(error_of({"solve", "--force=maybe"}),
            "--force=maybe: --force is a flag and takes no value: expected --force alone");
  EXPECT_EQ(error_of({"solve", "--force="}),
            "--force: empty value after '=': --force is a flag and takes no value, expected "
            "--force alone");
  EXPECT_TRUE(parse({"solve", "--assemble", "--force=true"}).solve.sparse.force);
  // Any other value is refused: --force=2 forced and --force=-1 or --force=off silently
  // did not (CLI11 reads numbers and words as true or false).
  for (const std::string value : {"2", "-1", "off", "false", "yes"}) {
    EXPECT_EQ(
        error_of({"solve", "--assemble", "--force=" + value}),
        "--force=" + value + ": --force is a flag and takes no value: expected --force alone");
  }
  EXPECT_EQ(error_of({"solve", "--monitor=1"}),
            "--monitor=1: --monitor is a flag and takes no value: expected --monitor alone");
  // A default --pc the hybrid schemes do not take is named as the default it is
  // (it was refused as "--pc ilu0 with --hybrid", an option not given).
  EXPECT_EQ(error_of({"solve", "--method", "pgmres", "--hybrid", "funneled"}),
            "--hybrid funneled with --method pgmres: its default --pc (ilu0) does not run under "
            "the hybrid schemes, expected --pc jacobi or --pc none");
  EXPECT_EQ(
      parse({"solve", "--method", "gmres", "--hybrid", "funneled", "--pc", "jacobi"}).solve.hybrid,
      HybridMode::funneled);
}

TEST(Cli, ChoicesAreTypedAndResolved) {
  using asyncsolve::app::Method;
  using asyncsolve::app::Transport;
  using asyncsolve::comm::HaloStrategy;
  using asyncsolve::precond::PcKind;
  const Command c = parse(
      {"solve", "--method", "pcg-overlap", "--halo", "persistent", "--progress", "thread:25"});
  EXPECT_EQ(c.solve.method, Method::pcg_overlap);
  EXPECT_EQ(c.solve.transport, Transport::mpi);
  EXPECT_EQ(c.solve.halo, HaloStrategy::persistent);
  EXPECT_EQ(c.solve.progress, (Progress{Progress::Mode::thread, 0, 25}));
  EXPECT_EQ(c.solve.progress.name(), "thread:25");
  EXPECT_EQ(c.solve.pc.kind, PcKind::jacobi);  // auto: pcg-overlap is preconditioned
  EXPECT_EQ(asyncsolve::app::krylov_method(c.solve.method),
            asyncsolve::solvers::KrylovMethod::pcg_overlap);
  EXPECT_EQ(parse({"solve", "--method", "cg"}).solve.pc.kind, PcKind::none);
  EXPECT_EQ(parse({"solve", "--method", "pipecg"}).solve.pc.kind, PcKind::none);
  EXPECT_EQ(parse({"solve", "--method", "pipecg", "--pc", "jacobi"}).solve.pc.kind, PcKind::jacobi);
  EXPECT_EQ(parse({"solve", "--method", "cg", "--progress", "thread"}).solve.progress.name(),
            "thread");
  // OpenMP Jacobi reduces through shared memory: no MPI algorithm.
  const Command omp = parse({"solve", "--transport", "omp", "--variant", "async"});
  EXPECT_FALSE(omp.solve.allreduce.has_value());
  EXPECT_EQ(asyncsolve::app::reduction_name(omp.solve), "running-sum");
  EXPECT_EQ(asyncsolve::app::reduction_name(parse({"solve", "--transport", "omp"}).solve), "omp");
}

TEST(Cli, EveryNameParsesBack) {
  using asyncsolve::app::name;
  using asyncsolve::app::parse;
  const auto round_trip = [](auto value) {
    using E = decltype(value);
    for (const E v : asyncsolve::app::values<E>()) EXPECT_EQ(parse<E>(name(v)), v) << name(v);
    EXPECT_FALSE(parse<E>("bogus").has_value());
  };
  round_trip(asyncsolve::app::Method{});
  round_trip(asyncsolve::app::Variant{});
  round_trip(asyncsolve::app::Transport{});
  round_trip(asyncsolve::app::Problem{});
  round_trip(asyncsolve::precond::PcKind{});
  round_trip(asyncsolve::app::OnOff{});
  round_trip(asyncsolve::app::Lattice{});
  round_trip(asyncsolve::app::RmaSync{});
  round_trip(asyncsolve::app::AllreduceMode{});
  round_trip(asyncsolve::app::Stencil2dTransport{});
  round_trip(asyncsolve::app::Stencil2dVariant{});
  for (const std::string text : {"none", "poll:1", "poll:12", "thread", "thread:0", "thread:40"}) {
    const auto p = asyncsolve::app::parse_progress(text);
    ASSERT_TRUE(p.has_value()) << text;
    EXPECT_EQ(p->name(), text);
  }
  for (const std::string text : {"", "poll", "poll:", "poll:0", "poll:x", "thread:", "thread:-1",
                                 "threads", "thread:1x", "None"}) {
    EXPECT_FALSE(asyncsolve::app::parse_progress(text).has_value()) << text;
  }
}
