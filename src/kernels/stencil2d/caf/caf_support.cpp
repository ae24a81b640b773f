// The C++ side of asyncsolve-stencil2d-caf (stencil2d_caf.f90): what the
// Coarray Fortran program shares with `asyncsolve bench stencil2d`, so that
// the two measure the same thing and write the same document.
//
//   options     parsed with CLI11 like the asyncsolve command's (the same
//               names, defaults, checks and one-line errors: the common ones
//               declared and checked by kernels/stencil2d_bench.hpp),
//               identically on every image;
//   the kernel  kernels::stencil2d_initial (the initial field),
//               kernels::Filter2d (the weights) and kernels::filter2d_serial
//               (the serial reference every repeat is validated against);
//   the output  the banner, the table and the document
//               asyncsolve.bench.stencil2d/1 with "model": "caf", written
//               atomically by image 1 (table, parameters and result rows by
//               kernels/stencil2d_bench.hpp, as bench stencil2d's).
//
// Everything here is local to the calling image; the Fortran side decides
// which image calls what (image 1 prints and writes). Open MPI has been
// initialised by the coarray runtime (OpenCoarrays) before the program
// starts, so MPI_Dims_create and the MPI queries below are legal.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "asyncsolve/core/document.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/core/parse.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/kernels/filter2d.hpp"
#include "asyncsolve/kernels/stencil2d.hpp"
#include "asyncsolve/kernels/stencil2d_bench.hpp"
#include "asyncsolve/par/document.hpp"
#include "asyncsolve/par/environment.hpp"
#include "asyncsolve/version.hpp"

#ifndef ASYNCSOLVE_CAF_VERSION
#define ASYNCSOLVE_CAF_VERSION ""
#endif

namespace {

constexpr const char* program_name = "asyncsolve-stencil2d-caf";
constexpr int max_sizes = 64;
constexpr int caf_variants = 5;
constexpr std::string_view variant_names[caf_variants] = {"trivial", "put", "get", "get0", "get1"};
constexpr double validation_tol = 1e-12;

}  // namespace

extern "C" {

/// The validated options, as the Fortran side reads them (bind(C) type
/// caf_config in stencil2d_caf_support.f90: same members, same order).
struct asyncsolve_caf_config {
  int local_count;             ///< how many local sizes
  int local[max_sizes];        ///< n of each n x n block
  int radius;                  ///< r
  int repeats;                 ///< measurements of every variant
  long long iterations;        ///< timed iterations per measurement
  long long warmup;            ///< untimed iterations before them
  int variant_count;           ///< how many variants run
  int variants[caf_variants];  ///< 1 trivial, 2 put, 3 get, 4 get0, 5 get1, in order
  int px, py;                  ///< the image grid
  int corrupt_corner;          ///< the test hook
  double validation_tol;       ///< relative tolerance of the validation
};

}  // extern "C"

namespace {

/// What the run was asked for and what it measured (this image's copy).
struct State {
  std::vector<std::string> command;
  std::string started;
  asyncsolve::kernels::Stencil2dBenchArgs args;  ///< --local, --radius, -i, -x, --repeats
  std::string variant_text{asyncsolve::kernels::stencil2d_every_variant};
  std::string grid_text;
  std::string json_path;
  asyncsolve_caf_config config{};
  std::vector<asyncsolve::kernels::Stencil2dMeasurement> records;  ///< slowest image's figures
};

State& state() {
  static State s;
  return s;
}

/// Open MPI 4.1 as configured by Debian 12 (osc = ^ucx,pt2pt in
/// openmpi-mca-params.conf) leaves osc/rdma, which needs the shared-memory
/// BTL (vader) between the processes, and osc/sm, whose MPI_Win_create fails.
/// Where rdma cannot serve — a job of one process, or BTLs without vader
/// (the lab's tcp regime: btl self,tcp) — OpenCoarrays' start-up then dies in
/// MPI_Win_create ("MPI_ERR_WIN: invalid window", exit 53) before the
/// program's first statement. Such runs use osc/pt2pt (one-sided over the
/// point-to-point messages of the chosen BTLs), unless the user chose an osc
/// component; the document records it (environment.mpi_osc). Set before
/// main, i.e. before the coarray runtime calls MPI_Init.
bool rdma_osc_usable() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  if (size == nullptr || std::string_view(size) == "1") return false;
  const char* btl = std::getenv("OMPI_MCA_btl");
  if (btl == nullptr || btl[0] == '^') return true;  // the default BTLs, vader among them
  const std::string_view list(btl);
  return list.find("vader") != std::string_view::npos || list.find("sm") != std::string_view::npos;
}

[[maybe_unused]] const bool osc_steered = [] {
  if (std::getenv("OMPI_MCA_osc") == nullptr && !rdma_osc_usable()) {
    setenv("OMPI_MCA_osc", "pt2pt", 0);
  }
  return true;
}();

void print_error(const std::string& message) {
  std::fprintf(stderr, "%s: error: %s\n", program_name, message.c_str());
  std::fflush(stderr);
}

/// Checks the options (the same rules as `asyncsolve bench stencil2d`) and
/// resolves the grid. Throws core::InputError naming the value.
void validate(State& s, int images) {
  asyncsolve_caf_config& c = s.config;
  const std::vector<int> sizes = asyncsolve::kernels::validate_stencil2d_bench_args(
      s.args, static_cast<std::size_t>(max_sizes));
  c.local_count = 0;
  for (const int n : sizes) c.local[c.local_count++] = n;
  c.radius = s.args.radius;
  c.iterations = s.args.iterations;
  c.warmup = s.args.warmup;
  c.repeats = s.args.repeats;
  std::vector<std::string> variants;
  if (s.variant_text == asyncsolve::kernels::stencil2d_every_variant) {
    variants.assign(std::begin(variant_names), std::end(variant_names));
  } else {
    variants = asyncsolve::core::split_list(
        "--variant", s.variant_text,
        "all or a comma-separated list of trivial, put, get, get0, get1");
  }
  c.variant_count = 0;
  for (const auto& v : variants) {
    const auto* found = std::find(std::begin(variant_names), std::end(variant_names), v);
    if (found == std::end(variant_names)) {
      throw asyncsolve::core::InputError(
          fmt::format("--variant '{}': expected one of trivial, put, get, get0, get1 (or all)", v));
    }
    c.variants[c.variant_count++] = static_cast<int>(found - std::begin(variant_names)) + 1;
  }
  // The image grid: MPI_Dims_create's, as `asyncsolve bench stencil2d` uses,
  // or the one given, which must hold exactly the images of the run.
  if (s.grid_text.empty()) {
    int dims[2] = {0, 0};
    if (MPI_Dims_create(images, 2, dims) != MPI_SUCCESS) {
      throw asyncsolve::core::RuntimeFailure("MPI_Dims_create failed");
    }
    c.px = dims[0];
    c.py = dims[1];
  } else {
    const std::size_t x = s.grid_text.find('x');
    int px = 0;
    int py = 0;
    if (x == std::string::npos ||
        !asyncsolve::core::parse_whole(std::string_view(s.grid_text).substr(0, x), px) ||
        !asyncsolve::core::parse_whole(std::string_view(s.grid_text).substr(x + 1), py) || px < 1 ||
        py < 1) {
      throw asyncsolve::core::InputError(
          fmt::format("--grid '{}': expected PXxPY, two positive integers, e.g. 2x2", s.grid_text));
    }
    if (static_cast<long long>(px) * py != images) {
      throw asyncsolve::core::InputError(fmt::format(
          "--grid {} with {} image{}: a {}x{} grid cannot use that image count, expected PX * "
          "PY = {} (or no --grid: the grid of MPI_Dims_create)",
          s.grid_text, images, images == 1 ? "" : "s", px, py, images));
    }
    c.px = px;
    c.py = py;
  }
  for (int i = 0; i < c.local_count; ++i) {
    // The serial reference holds the whole (px n) x (py n) domain on image 1.
    const long long gx = static_cast<long long>(c.px) * c.local[i];
    const long long gy = static_cast<long long>(c.py) * c.local[i];
    if (gx > 1000000 || gy > 1000000 || gx * gy > (1LL << 31)) {
      throw asyncsolve::core::InputError(fmt::format(
          "--local {} on a {}x{} grid: a {}x{} domain, expected at most 2^31 points (the "
          "serial reference holds the whole domain)",
          c.local[i], c.px, c.py, gx, gy));
    }
  }
}

std::string run_name(int variant) { return fmt::format("caf/{}", variant_names[variant - 1]); }

std::string thread_level_name() {
  int provided = -1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized == 0 || MPI_Query_thread(&provided) != MPI_SUCCESS) return "unknown";
  switch (provided) {
    case MPI_THREAD_SINGLE:
      return "single";
    case MPI_THREAD_FUNNELED:
      return "funneled";
    case MPI_THREAD_SERIALIZED:
      return "serialized";
    case MPI_THREAD_MULTIPLE:
      return "multiple";
    default:
      return "unknown";
  }
}

nlohmann::ordered_json make_document(const State& s, int images) {
  const asyncsolve_caf_config& c = s.config;
  nlohmann::ordered_json doc =
      asyncsolve::core::document_header("asyncsolve.bench.stencil2d/1", s.command, s.started);
  doc["model"] = "caf";
  const char* osc = std::getenv("OMPI_MCA_osc");
  const std::string cpu = asyncsolve::par::cpu_model();
  doc["environment"] = {
      {"mpi_library", asyncsolve::par::mpi_library_version()},
      {"mpi_version", asyncsolve::par::mpi_standard_version()},
      {"ranks", images},
      {"threads", 1},
      {"thread_level_requested", "none (the coarray runtime initialises MPI)"},
      {"thread_level", thread_level_name()},
      {"shmem", false},
      {"hostname", asyncsolve::par::processor_name()},
      {"cores", static_cast<int>(std::max(1U, std::thread::hardware_concurrency()))},
      {"images", images},
      {"coarray_runtime",
       fmt::format("OpenCoarrays {} (libcaf_mpi over Open MPI)", ASYNCSOLVE_CAF_VERSION)},
      {"mpi_osc", osc != nullptr ? osc : "default"},
      {"cpu_model", cpu.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(cpu)}};
  asyncsolve::kernels::Stencil2dParameters p;
  p.local_sizes.assign(c.local, c.local + c.local_count);
  p.radius = c.radius;
  p.iterations = static_cast<long>(c.iterations);
  p.warmup = static_cast<long>(c.warmup);
  p.repeats = c.repeats;
  p.transport = "caf";
  p.variant = s.variant_text;
  p.transports = {"caf"};
  for (int i = 0; i < c.variant_count; ++i) {
    p.variants.emplace_back(variant_names[c.variants[i] - 1]);
    p.runs.push_back(run_name(c.variants[i]));
  }
  p.grid = s.grid_text.empty() ? "auto" : s.grid_text;
  p.worker = "image";
  p.reference_worker = "image 1";
  p.validation_tol = c.validation_tol;
  p.synchronisation =
      "trivial: two sync all per iteration; put, get, get0, get1: two pairwise handshakes "
      "(sync images with the x neighbours, then with the y neighbours)";
  doc["parameters"] = asyncsolve::kernels::stencil2d_parameters_json(p);
  doc["grid"] = {{"dims", {c.px, c.py}}, {"periodic", true}};
  doc["results"] =
      asyncsolve::kernels::stencil2d_results_json(s.records, c.px, c.py, c.radius, images);
  return doc;
}

}  // namespace

extern "C" {

/// The coarray runtime's finalisation (gfortran's coarray library ABI; what
/// the program's end calls): frees the coarrays, MPI_Finalize.
void _gfortran_caf_finalize();

/// Ends this image with exit status `code` after finalising the coarray
/// runtime. Every image calls it at the same point (after a sync all), so
/// the job ends cleanly with one status: unlike `error stop`, which
/// OpenCoarrays implements with MPI_Abort (mpirun then prints an abort
/// banner and, now and then, libevent warnings beside the error line).
[[noreturn]] void asyncsolve_caf_exit(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  _gfortran_caf_finalize();
  std::exit(code);
}

/// Parses and checks the command line (argc words, NUL-separated in `args`,
/// the program name first) for a run on `images` images. Returns 0 to run, 1
/// when --help was asked (printed if `print`), 2 for bad input (one line on
/// stderr if `print`). Local; every image gets the same answer.
int asyncsolve_caf_setup(int argc, const char* args, int images, int print,
                         asyncsolve_caf_config* config) {
  State& s = state();
  s = State();
  s.started = asyncsolve::core::iso8601_now();
  std::vector<std::string> words;
  const char* p = args;
  for (int i = 0; i < argc; ++i) {
    words.emplace_back(p);
    p += words.back().size() + 1;
  }
  s.command = words;
  s.command[0] = program_name;
  asyncsolve_caf_config& c = s.config;
  c.validation_tol = validation_tol;
  bool corrupt = false;

  CLI::App app{
      "Paper 004's Stencil2D in Coarray Fortran: the slides' variants trivial, put, get, "
      "get0 and get1 on an n x n block per image of a periodic domain, validated "
      "against the serial filter before any time is reported",
      program_name};
  app.option_defaults()->always_capture_default();
  asyncsolve::kernels::add_stencil2d_bench_options(app, s.args, "image");
  app.add_option("--variant", s.variant_text,
                 "all, or a comma-separated list of the CAF variants: trivial, put, get, get0, "
                 "get1");
  app.add_option("--grid", s.grid_text,
                 "The image grid PXxPY (PX * PY = the images), e.g. 2x2; default: "
                 "MPI_Dims_create's, as asyncsolve bench stencil2d")
      ->default_str("auto");
  app.add_flag("--test-corrupt-corner", corrupt,
               "Test hook: corrupt one halo corner so that validation fails (exit 4)")
      ->group("");
  app.add_option("--json", s.json_path, "Write the result document to this file")->default_str("");
  std::vector<char*> argv;
  argv.reserve(words.size());
  for (auto& w : words) argv.push_back(w.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
    validate(s, images);
  } catch (const CLI::CallForHelp&) {
    if (print != 0) {
      std::fputs(app.help().c_str(), stdout);
      std::fflush(stdout);
    }
    return 1;
  } catch (const CLI::ParseError& e) {
    if (print != 0) print_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    if (print != 0) print_error(e.what());
    return 2;
  }
  c.corrupt_corner = corrupt ? 1 : 0;
  *config = c;
  return 0;
}

/// Checks that the --json path can be written (probes beside it). Returns 0,
/// or 2 with one line on stderr. Local: image 1 calls it.
int asyncsolve_caf_check_json() {
  const State& s = state();
  if (s.json_path.empty()) return 0;
  try {
    asyncsolve::core::check_writable(s.json_path, "--json");
  } catch (const std::exception& e) {
    print_error(e.what());
    return 2;
  }
  return 0;
}

/// Prints the first line of the run on stdout. Local: image 1 calls it.
void asyncsolve_caf_banner(int images) {
  const asyncsolve_caf_config& c = state().config;
  std::printf(
      "%s %s: bench stencil2d in Coarray Fortran (OpenCoarrays %s), %d image%s (grid "
      "%dx%d, periodic), radius %d, %lld iterations (%lld warm-up), %d repeat%s\n",
      program_name, asyncsolve::version, ASYNCSOLVE_CAF_VERSION, images, images == 1 ? "" : "s",
      c.px, c.py, c.radius, c.iterations, c.warmup, c.repeats, c.repeats == 1 ? "" : "s");
  std::fflush(stdout);
}

/// kernels::stencil2d_initial at global point (gx, gy), 0-based.
double asyncsolve_caf_initial(long long gx, long long gy) {
  return asyncsolve::kernels::stencil2d_initial(gx, gy);
}

/// The weights of kernels::Filter2d(radius) into w((2r+1)^2), w(k, l) at
/// (l + r)(2r + 1) + (k + r): Fortran's w(-r:r, -r:r).
void asyncsolve_caf_weights(int radius, double* w) {
  const asyncsolve::kernels::Filter2d filter(radius);
  const int side = 2 * radius + 1;
  for (int l = -radius; l <= radius; ++l)
    for (int k = -radius; k <= radius; ++k)
      w[(l + radius) * side + (k + radius)] = filter.weight(k, l);
}

/// The serial reference, kernels::filter2d_serial, of the periodic size_x x
/// size_y domain after `iterations` iterations, into field(size_x, size_y)
/// (x fastest). Returns 0, or 4 out of memory (one line on stderr).
int asyncsolve_caf_reference(int size_x, int size_y, int radius, long long iterations,
                             double* field) {
  try {
    const std::vector<double> global = asyncsolve::kernels::filter2d_serial(
        asyncsolve::kernels::Filter2d(radius), size_x, size_y, static_cast<long>(iterations));
    std::copy(global.begin(), global.end(), field);
  } catch (const std::bad_alloc&) {
    print_error(fmt::format("the serial reference of the {}x{} domain does not fit in memory",
                            size_x, size_y));
    return 4;
  }
  return 0;
}

/// One variant at one local size: the slowest image's microseconds per
/// iteration of every repeat. Local: image 1 keeps the records.
void asyncsolve_caf_record(int variant, int local, long long halo_bytes, long long calls,
                           long long syncs, int repeats, const double* iteration_us,
                           const double* exchange_us, const double* filter_us) {
  asyncsolve::kernels::Stencil2dMeasurement r;
  r.name = run_name(variant);
  r.model = "caf";
  r.transport = "caf";
  r.variant = variant_names[variant - 1];
  r.local = local;
  r.halo_bytes = static_cast<long>(halo_bytes);
  r.calls = static_cast<long>(calls);
  r.syncs = static_cast<long>(syncs);
  r.iteration_us.assign(iteration_us, iteration_us + repeats);
  r.exchange_us.assign(exchange_us, exchange_us + repeats);
  r.filter_us.assign(filter_us, filter_us + repeats);
  for (const double us : r.exchange_us) {
    r.bandwidth_mbs.push_back(us > 0.0 ? static_cast<double>(halo_bytes) / us : 0.0);
  }
  state().records.push_back(std::move(r));
}

/// One line on stderr: a variant failed validation (exit 4 follows).
void asyncsolve_caf_validation_failed(int variant, int local, int images, int repeat,
                                      long long total, long long gx, long long gy, long long size_x,
                                      long long size_y, double got, double expected,
                                      long long wrong) {
  print_error(fmt::format(
      "bench stencil2d: {} failed validation (local {}, radius {}, {} images, repeat {}, after "
      "{} iterations): first wrong point (x, y) = ({}, {}) of the {}x{} domain, got {:.17g}, "
      "expected {:.17g} ({} point{} wrong)",
      run_name(variant), local, state().config.radius, images, repeat, total, gx, gy, size_x,
      size_y, got, expected, wrong, wrong == 1 ? "" : "s"));
}

/// Prints the table and writes the document (if --json). Returns 0, or 4
/// when the document could not be written (one line on stderr). Local:
/// image 1 calls it.
int asyncsolve_caf_finish(int images) {
  const State& s = state();
  const std::string table = asyncsolve::kernels::stencil2d_table(
      s.records, static_cast<long>(s.config.iterations), static_cast<long>(s.config.warmup),
      "image", /*with_syncs=*/true);
  std::fputs(table.c_str(), stdout);
  std::fflush(stdout);
  if (s.json_path.empty()) return 0;
  try {
    asyncsolve::core::write_file_atomic(s.json_path,
                                        asyncsolve::core::document_text(make_document(s, images)));
    std::printf("  %-10s %s\n", "json", s.json_path.c_str());
    std::fflush(stdout);
  } catch (const std::exception& e) {
    print_error(e.what());
    return 4;
  }
  return 0;
}

}  // extern "C"
