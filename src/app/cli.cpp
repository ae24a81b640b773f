#include "cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/version.hpp"

namespace asyncsolve::app {

using core::InputError;

Command parse_command_line(const std::vector<std::string>& args) {
  CLI::App app{"asyncsolve: latency-tolerant parallel iterative solvers", "asyncsolve"};
  app.set_version_flag("--version", fmt::format("asyncsolve {} (git {})", version, git_commit));
  app.require_subcommand(1, 1);
  app.footer(
      "Run under mpirun, e.g.: mpirun -np 4 asyncsolve solve --problem plume\n"
      "Exit codes: 0 success, 2 bad input, 3 did not converge, 4 runtime failure.");

  Command cmd;
  SolveArgs solve_args;
  CLI::App* solve = app.add_subcommand("solve", "Solve a model problem in parallel");
  add_solve_options(*solve, solve_args);
  CLI::App* info =
      app.add_subcommand("info", "Show the MPI library, thread level, OpenSHMEM, OpenMP and cores");
  CLI::App* bench = app.add_subcommand("bench", "Microbenchmarks of the communication layer");
  bench->require_subcommand(1, 1);
  BenchAllreduceArgs bench_allreduce_args;
  CLI::App* bench_allreduce = bench->add_subcommand(
      "allreduce",
      "Latency, overlap (IMB-NBC) and noise sensitivity of the reductions (OSU conventions)");
  add_bench_allreduce_options(*bench_allreduce, bench_allreduce_args);
  BenchStencil2dArgs bench_stencil2d_args;
  CLI::App* bench_stencil2d = bench->add_subcommand(
      "stencil2d",
      "Paper 004's Stencil2D: 8-neighbour halo exchange and (2r+1)^2 filter on a 2-D periodic "
      "process grid, two-sided and one-sided (RMA, OpenSHMEM) variants, validated");
  add_bench_stencil2d_options(*bench_stencil2d, bench_stencil2d_args);
  CLI::App* model = app.add_subcommand("model", "Performance models of the papers");
  model->require_subcommand(1, 1);
  ModelHybridArgs model_hybrid_args;
  CLI::App* model_hybrid = model->add_subcommand(
      "hybrid",
      "Paper 002 §7.2: masteronly vs funneled hybrid MPI+OpenMP with reserved communication "
      "threads (eqs. 1-9), or the fit of eq. 14 to a measured MVM sweep (--fit)");
  add_model_hybrid_options(*model_hybrid, model_hybrid_args);

  std::vector<std::string> reversed(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    cmd.kind = Command::Kind::help;
    cmd.text = app.help();
    return cmd;
  } catch (const CLI::CallForAllHelp&) {
    cmd.kind = Command::Kind::help;
    cmd.text = app.help("", CLI::AppFormatMode::All);
    return cmd;
  } catch (const CLI::CallForVersion& v) {
    cmd.kind = Command::Kind::version;
    cmd.text = v.what();
    return cmd;
  } catch (const CLI::ExtrasError&) {
    std::vector<std::string> extras = app.remaining();
    for (const CLI::App* sub :
         {solve, info, bench, bench_allreduce, bench_stencil2d, model, model_hybrid})
      for (const auto& x : sub->remaining()) extras.push_back(x);
    const char* which = solve->parsed()             ? "solve"
                        : bench_allreduce->parsed() ? "bench allreduce"
                        : bench_stencil2d->parsed() ? "bench stencil2d"
                        : bench->parsed()           ? "bench"
                        : model_hybrid->parsed()    ? "model hybrid"
                        : model->parsed()           ? "model"
                                                    : "info";
    throw InputError(
        fmt::format("unexpected argument{} '{}': expected the options listed by "
                    "'asyncsolve {} --help'",
                    extras.size() == 1 ? "" : "s", fmt::join(extras, " "), which));
  } catch (const CLI::ParseError& e) {
    std::string message = e.what();
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      if (args.size() <= 1) {
        message = "no command given: expected one of solve, bench, model, info (see --help)";
      } else if (args[1] == "bench") {
        message =
            args.size() <= 2 || args[2].starts_with("-")
                ? std::string("bench: no benchmark given: expected allreduce or stencil2d")
                : fmt::format("unknown benchmark '{}': expected allreduce or stencil2d", args[2]);
      } else if (args[1] == "model") {
        message = args.size() <= 2 || args[2].starts_with("-")
                      ? std::string("model: no model given: expected hybrid")
                      : fmt::format("unknown model '{}': expected hybrid", args[2]);
      } else if (!args[1].starts_with("-")) {
        message =
            fmt::format("unknown command '{}': expected one of solve, bench, model, info", args[1]);
      }
    }
    throw InputError(message);
  }
  if (solve->parsed()) {
    cmd.solve = validate_solve(solve_args);
    cmd.kind = Command::Kind::solve;
  } else if (info->parsed()) {
    cmd.kind = Command::Kind::info;
  } else if (bench_allreduce->parsed()) {
    cmd.bench_allreduce = validate_bench_allreduce(bench_allreduce_args);
    cmd.kind = Command::Kind::bench_allreduce;
  } else if (bench_stencil2d->parsed()) {
    cmd.bench_stencil2d = validate_bench_stencil2d(bench_stencil2d_args);
    cmd.kind = Command::Kind::bench_stencil2d;
  } else if (model_hybrid->parsed()) {
    cmd.model_hybrid = validate_model_hybrid(model_hybrid_args);
    cmd.kind = Command::Kind::model_hybrid;
  }
  return cmd;
}

}  // namespace asyncsolve::app
