#include "benchkit.hpp"

#include <mpi.h>

#include <cstdio>
#include <exception>
#include <new>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/version.hpp"

namespace asyncsolve::bench {

void add_common_options(CLI::App& app, std::string_view program) {
  app.set_version_flag("--version",
                       fmt::format("{} (asyncsolve {}, git {})", program, version, git_commit));
  app.option_defaults()->always_capture_default();
}

std::optional<std::string> parse_options(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return app.help();
  } catch (const CLI::CallForVersion& v) {
    return std::string(v.what());
  } catch (const CLI::ParseError& e) {
    throw core::InputError(fmt::format("{} (see --help)", e.what()));
  }
  return std::nullopt;
}

namespace {

/// A rank-local failure: the message from the failing rank, then every rank
/// stops (MPI_Abort), unless this is the only rank.
int fail_locally(const Driver& driver, const par::Comm& world, const std::string& why) {
  if (world.size() == 1) {
    std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(driver.program.size()),
                 driver.program.data(), why.c_str());
    return core::to_int(core::ExitCode::runtime_failure);
  }
  std::fprintf(stderr, "%.*s: rank %d: error: %s\n", static_cast<int>(driver.program.size()),
               driver.program.data(), world.rank(), why.c_str());
  std::fflush(stderr);
  par::Environment::abort(core::to_int(core::ExitCode::runtime_failure));
  return core::to_int(core::ExitCode::runtime_failure);
}

}  // namespace

int driver_main(int argc, char** argv, const Driver& driver,
                const std::function<std::optional<std::string>()>& parse,
                const std::function<int(const DriverRun&)>& run) {
  const std::vector<std::string> args(argv, argv + argc);
  // Parse before MPI starts (pure, identical on every rank); act on it after.
  std::optional<std::string> text;
  std::optional<std::string> parse_error;
  try {
    text = parse();
  } catch (const core::InputError& e) {
    parse_error = e.what();
  }

  par::Environment env(argc, argv, driver.thread_level);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const par::Comm world = par::Comm::view(MPI_COMM_WORLD);
  const auto say = [&](const char* why) {
    if (world.is_root()) {
      std::fprintf(stderr, "%.*s: error: %s\n", static_cast<int>(driver.program.size()),
                   driver.program.data(), why);
    }
  };
  int code = core::to_int(core::ExitCode::success);
  try {
    if (parse_error) throw core::InputError(*parse_error);
    if (text) {
      if (world.is_root()) std::printf("%s\n", text->c_str());
    } else {
      code = run(DriverRun{world, env, args});
    }
  } catch (const core::InputError& e) {
    say(e.what());
    code = core::to_int(core::ExitCode::bad_input);
  } catch (const core::RuntimeFailure& e) {
    say(e.what());
    code = core::to_int(core::ExitCode::runtime_failure);
  } catch (const std::bad_alloc&) {
    const std::string_view hint = driver.memory_hint;
    code = fail_locally(driver, world,
                        fmt::format("out of memory{}{}", hint.empty() ? "" : " ", hint));
  } catch (const std::exception& e) {
    code = fail_locally(driver, world, e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  env.finalize();
  return code;
}

}  // namespace asyncsolve::bench
