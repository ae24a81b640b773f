#include "cli.hpp"

#include <algorithm>
#include <istream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/sparse/partition.hpp"
#include "asyncsolve/version.hpp"
#include "simulation_options.hpp"

namespace asyncsolve::app {

using core::InputError;

namespace {

/// The option row of `name` in `tables`, or nullptr.
const OptionRow* find_row(const std::string& name, const std::vector<const OptionTable*>& tables) {
  const OptionRow* row = nullptr;
  for (const OptionTable* t : tables)
    if (row == nullptr) row = t->find(name);
  return row;
}

/// The form an option's value takes, as its table row says ("a value" when
/// the option is not found).
std::string value_form(const std::string& name, const std::vector<const OptionTable*>& tables) {
  const OptionRow* row = find_row(name, tables);
  return row != nullptr && !row->value.empty() ? row->value : "a value";
}

/// A flag given a value CLI11 cannot read as true or false (--force=maybe):
/// CLI11 says "Could not convert: --force = maybe".
std::string flag_value(const std::string& what, const std::vector<const OptionTable*>& tables) {
  constexpr std::string_view prefix = "Could not convert: ";
  const std::size_t eq = what.find(" = ");
  if (!what.starts_with(prefix) || eq == std::string::npos) return core::printable(what);
  const std::string name = what.substr(prefix.size(), eq - prefix.size());
  const std::string value = what.substr(eq + 3);
  const OptionRow* row = find_row(name, tables);
  if (row != nullptr && !row->value.empty()) {
    return fmt::format("{} '{}': expected {} {}", core::printable(name), core::printable(value),
                       core::printable(name), row->value);
  }
  return fmt::format("{}={}: {} is a flag and takes no value: expected {} alone",
                     core::printable(name), core::printable(value), core::printable(name),
                     core::printable(name));
}

/// CLI11's ArgumentMismatch ("--local: 1 required TEXT missing", "--tol: At
/// most 1 argument(s) expected ...", "--force was given a disallowed flag
/// override") as one line naming the option and the form its value takes
/// (`args`: the command line, where a flag's value is found).
std::string argument_mismatch(const std::string& what,
                              const std::vector<const OptionTable*>& tables,
                              const std::vector<std::string>& args) {
  constexpr std::string_view override_suffix = " was given a disallowed flag override";
  if (what.ends_with(override_suffix)) {
    // CLI11 names the option without its dashes ("force").
    std::string name = what.substr(0, what.size() - override_suffix.size());
    if (!name.starts_with("-")) name = (name.size() == 1 ? "-" : "--") + name;
    const auto given = std::find_if(
        args.begin(), args.end(), [&](const std::string& a) { return a.starts_with(name + "="); });
    return fmt::format("{}: {} is a flag and takes no value: expected {} alone",
                       core::printable(given != args.end() ? *given : name + "=..."),
                       core::printable(name), core::printable(name));
  }
  const std::string name = what.substr(0, what.find(':'));
  const std::string form = value_form(name, tables);
  if (what.find("missing") != std::string::npos) {
    return fmt::format("{}: missing value, expected {} {}", core::printable(name),
                       core::printable(name), form);
  }
  return fmt::format("{}: given more than once or with more than one value, expected one {} {}",
                     core::printable(name), core::printable(name), form);
}

/// The command line's declarations: the CLI11 application, its subcommands,
/// what CLI11 writes into, and the option tables. Declared once per parse.
struct Declarations {
  CLI::App app{"asyncsolve: latency-tolerant parallel iterative solvers", "asyncsolve"};
  CLI::App* solve = nullptr;
  CLI::App* info = nullptr;
  CLI::App* bench = nullptr;
  CLI::App* bench_allreduce = nullptr;
  CLI::App* bench_stencil2d = nullptr;
  CLI::App* model = nullptr;
  CLI::App* model_hybrid = nullptr;
  SolveArgs solve_args;
  BenchAllreduceArgs bench_allreduce_args;
  BenchStencil2dArgs bench_stencil2d_args;
  ModelHybridArgs model_hybrid_args;
  std::optional<OptionTable> solve_table;
  std::optional<OptionTable> bench_allreduce_table;
  std::optional<OptionTable> bench_stencil2d_table;
  std::optional<OptionTable> model_hybrid_table;

  Declarations() {
    app.set_version_flag("--version", fmt::format("asyncsolve {} (git {})", version, git_commit));
    app.require_subcommand(1, 1);
    app.footer(
        "Run under mpirun, e.g.: mpirun -np 4 asyncsolve solve --problem plume\n"
        "Exit codes: 0 success, 2 bad input, 3 did not converge, 4 runtime failure.");
    solve = app.add_subcommand("solve", "Solve a model problem in parallel");
    solve_table.emplace(*solve, "solve");
    add_solve_options(*solve_table, solve_args);
    info = app.add_subcommand("info",
                              "Show the MPI library, thread level, OpenSHMEM, OpenMP and cores");
    bench = app.add_subcommand("bench", "Microbenchmarks of the communication layer");
    bench->require_subcommand(1, 1);
    bench_allreduce = bench->add_subcommand(
        "allreduce",
        "Latency, overlap (IMB-NBC) and noise sensitivity of the reductions (OSU conventions)");
    bench_allreduce_table.emplace(*bench_allreduce, "bench allreduce");
    add_bench_allreduce_options(*bench_allreduce_table, bench_allreduce_args);
    bench_stencil2d = bench->add_subcommand(
        "stencil2d",
        "Paper 004's Stencil2D: 8-neighbour halo exchange and (2r+1)^2 filter on a 2-D periodic "
        "process grid, two-sided and one-sided (RMA, OpenSHMEM) variants, validated");
    bench_stencil2d_table.emplace(*bench_stencil2d, "bench stencil2d");
    add_bench_stencil2d_options(*bench_stencil2d_table, bench_stencil2d_args);
    model = app.add_subcommand("model", "Performance models of the papers");
    model->require_subcommand(1, 1);
    model_hybrid = model->add_subcommand(
        "hybrid",
        "Paper 002 §7.2: masteronly vs funneled hybrid MPI+OpenMP with reserved communication "
        "threads (eqs. 1-9), or the fit of eq. 14 to a measured MVM sweep (--fit)");
    model_hybrid_table.emplace(*model_hybrid, "model hybrid");
    add_model_hybrid_options(*model_hybrid_table, model_hybrid_args);
  }
  Declarations(const Declarations&) = delete;
  Declarations& operator=(const Declarations&) = delete;

  std::vector<const OptionTable*> tables() const {
    return {&*solve_table, &*bench_allreduce_table, &*bench_stencil2d_table, &*model_hybrid_table};
  }
};

}  // namespace

std::vector<std::pair<std::string, OptionRow>> option_rows() {
  const Declarations d;
  std::vector<std::pair<std::string, OptionRow>> out;
  for (const OptionTable* t : d.tables()) {
    for (OptionRow row : t->rows()) {
      row.option = nullptr;
      out.emplace_back(t->command(), std::move(row));
    }
  }
  return out;
}

std::string options_markdown() {
  const Declarations d;
  std::string out = markdown_header();
  for (const OptionTable* t : d.tables()) out += t->markdown();
  return out;
}

std::string out_of_memory_hint(const Command& command) {
  if (command.kind == Command::Kind::bench_stencil2d) return " (try a smaller --local)";
  if (command.kind != Command::Kind::solve) return "";
  const SolveConfig& c = command.solve;
  if (is_lanczos(c)) return " (try fewer --sites or more ranks)";
  // The GMRES family keeps its basis: restart + 1 vectors (fgmres twice that).
  const bool basis =
      c.method == Method::gmres || c.method == Method::fgmres || c.method == Method::pgmres;
  const std::string restart =
      basis ? fmt::format("a smaller --restart ({} keeps {} vectors of the basis), or ", c.restart,
                          (c.method == Method::fgmres ? 2 : 1) * c.restart + 1)
            : std::string();
  if (c.sparse.matrix_path.empty())
    return fmt::format(" (try {}a smaller --local or --global)", restart);
  // A rank holds its part of the matrix and the method's vectors; rank 0
  // also the whole matrix while it reads and partitions it.
  const std::string_view graph = sparse::partitioner_available(sparse::Partitioner::metis)
                                     ? "metis:nnz or block:nnz"
                                     : "block:nnz";
  return fmt::format(
      " (with --matrix: try {}more ranks, or a partition that balances the non-zeros, "
      "--partition {}; rank 0 reads the whole matrix, which --matrix-memory bounds)",
      restart, graph);
}

int check_command_lines(std::istream& in, std::ostream& out) {
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> args{"asyncsolve"};
    std::string verdict = "ok";
    try {
      const nlohmann::json given = nlohmann::json::parse(line);
      if (!given.is_array()) throw std::invalid_argument("not an array");
      for (const nlohmann::json& a : given) args.push_back(a.get<std::string>());
      (void)parse_command_line(args);
    } catch (const InputError& e) {
      verdict = "error: " + core::one_line(e.what());
    } catch (const std::exception&) {
      verdict =
          "error: a line that is not a JSON array of strings: expected one command line "
          "per line, e.g. [\"solve\", \"--method\", \"cg\"]";
    }
    out << verdict << '\n';
  }
  out.flush();
  return 0;
}

Command parse_command_line(const std::vector<std::string>& args) {
  Command cmd;
  if (args.size() == 2 && args[1] == "--options-table") {
    // The option reference's table (hidden: for docs/options.md and its test).
    cmd.kind = Command::Kind::help;
    cmd.text = options_markdown();
    cmd.text.pop_back();  // main adds the last newline
    return cmd;
  }
  Declarations d;
  CLI::App& app = d.app;
  CLI::App* const solve = d.solve;
  CLI::App* const info = d.info;
  CLI::App* const bench = d.bench;
  CLI::App* const bench_allreduce = d.bench_allreduce;
  CLI::App* const bench_stencil2d = d.bench_stencil2d;
  CLI::App* const model = d.model;
  CLI::App* const model_hybrid = d.model_hybrid;
  const std::vector<const OptionTable*> tables = d.tables();

  // --help and --version are flags: "--help=x" would print the help and
  // "--version extra" the version, both with exit 0, hiding the mistake.
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--help=", 0) == 0 || a.rfind("-h=", 0) == 0) {
      throw InputError(fmt::format("{}: --help is a flag and takes no value: expected --help alone",
                                   core::printable(a)));
    }
    if (a == "--version" && args.size() > 2) {
      throw InputError(fmt::format(
          "unexpected argument '{}' with --version: expected 'asyncsolve --version' alone",
          core::printable(i == 1 ? args[2] : args[1])));
    }
  }
  // "--name=" is an empty value. CLI11 would read it as "--name" and take
  // the next argument as its value; refuse it here, naming the option.
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() > 3 && a.rfind("--", 0) == 0 && a.find('=') == a.size() - 1) {
      const std::string name = a.substr(0, a.size() - 1);
      const OptionRow* row = find_row(name, tables);
      if (row != nullptr && row->value.empty()) {
        throw InputError(
            fmt::format("{}: empty value after '=': {} is a flag and takes no "
                        "value, expected {} alone",
                        core::printable(name), core::printable(name), core::printable(name)));
      }
      throw InputError(fmt::format("{}: empty value after '=', expected {} {}",
                                   core::printable(name), core::printable(name),
                                   value_form(name, tables)));
    }
  }
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
                    extras.size() == 1 ? "" : "s",
                    core::printable(fmt::format("{}", fmt::join(extras, " "))), which));
  } catch (const CLI::ArgumentMismatch& e) {
    throw InputError(argument_mismatch(e.what(), tables, args));
  } catch (const CLI::ConversionError& e) {
    throw InputError(flag_value(e.what(), tables));
  } catch (const CLI::ParseError& e) {
    std::string message = core::printable(e.what());
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
      if (args.size() <= 1) {
        message = "no command given: expected one of solve, bench, model, info (see --help)";
      } else if (args[1] == bench->get_name()) {
        message = args.size() <= 2 || args[2].starts_with("-")
                      ? std::string("bench: no benchmark given: expected allreduce or stencil2d")
                      : fmt::format("unknown benchmark '{}': expected allreduce or stencil2d",
                                    core::printable(args[2]));
      } else if (args[1] == model->get_name()) {
        message =
            args.size() <= 2 || args[2].starts_with("-")
                ? std::string("model: no model given: expected hybrid")
                : fmt::format("unknown model '{}': expected hybrid", core::printable(args[2]));
      } else if (!args[1].starts_with("-")) {
        message = fmt::format("unknown command '{}': expected one of solve, bench, model, info",
                              core::printable(args[1]));
      }
    }
    throw InputError(message);
  }
  if (solve->parsed()) {
    cmd.solve = validate_solve(d.solve_args, *d.solve_table);
    refuse_unsimulated(cmd.solve);
    cmd.kind = Command::Kind::solve;
  } else if (info->parsed()) {
    cmd.kind = Command::Kind::info;
  } else if (bench_allreduce->parsed()) {
    cmd.bench_allreduce =
        validate_bench_allreduce(d.bench_allreduce_args, *d.bench_allreduce_table);
    cmd.kind = Command::Kind::bench_allreduce;
  } else if (bench_stencil2d->parsed()) {
    cmd.bench_stencil2d =
        validate_bench_stencil2d(d.bench_stencil2d_args, *d.bench_stencil2d_table);
    cmd.kind = Command::Kind::bench_stencil2d;
  } else if (model_hybrid->parsed()) {
    cmd.model_hybrid = validate_model_hybrid(d.model_hybrid_args, *d.model_hybrid_table);
    cmd.kind = Command::Kind::model_hybrid;
  }
  return cmd;
}

}  // namespace asyncsolve::app
