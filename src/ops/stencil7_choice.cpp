#include "stencil7_choice.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "asyncsolve/core/timer.hpp"

// Which variant of the 7-point stencil's fast kernels runs: the one forced
// (--kernel), or the fastest for each field shape, measured once per process
// at its first use, the way FFTW's planner measures its candidate plans.

namespace asyncsolve::ops {

using grid::Field;

namespace {

/// The variant set by stencil7_set_kernel (automatic: measure).
std::atomic<Stencil7Kernel> forced{Stencil7Kernel::automatic};

/// Bit k: variant k has run (stencil7_kernels_used).
std::atomic<unsigned> used_bits{0};

/// `kernel`, noted as run.
Stencil7Kernel note_used(Stencil7Kernel kernel) noexcept {
  const unsigned bit = 1U << static_cast<unsigned>(kernel);
  if ((used_bits.load(std::memory_order_relaxed) & bit) == 0) {
    used_bits.fetch_or(bit, std::memory_order_relaxed);
  }
  return kernel;
}

/// A field shape and the variant measured fastest for it.
struct Choice {
  grid::Int3 interior;
  int halo;
  Stencil7Kernel kernel;
};

/// The choices measured so far in this process, behind their mutex.
std::mutex choices_mutex;
std::vector<Choice> choices;

/// The fastest built variant for fields of u's shape: every variant's fused
/// sweep on two scratch fields of that shape, at most 128 MiB each (constant values: no
/// subnormals), in interleaved rounds, each variant's least time of a round
/// wins. Rounds of at least about 0.5M points (a few milliseconds: the
/// measurement is part of the first solve's time), so that small fields are
/// timed over several calls; three rounds, so that one interrupted round
/// does not decide. The default variant where the scratch fields cannot be had.
Stencil7Kernel measure(const Field& u) noexcept {
  try {
    // u's rows and planes, but at most scratch_bytes of planes a field: the
    // walk's behaviour is set by the plane, and beyond any cache by then,
    // while a block of gigabytes must not have its memory tripled.
    constexpr double scratch_bytes = 128.0 * 1024 * 1024;
    const auto n = u.interior();
    const double plane_bytes = 8.0 * (n[0] + 2.0 * u.halo()) * (n[1] + 2.0 * u.halo());
    const int nz = static_cast<int>(
        std::clamp(scratch_bytes / std::max(plane_bytes, 1.0), 1.0, static_cast<double>(n[2])));
    Field a({n[0], n[1], nz}, u.halo());
    Field b({n[0], n[1], nz}, u.halo());
    a.fill(1.0);
    b.fill(1.0);
    std::vector<Stencil7Kernel> candidates = stencil7_kernels();
    candidates.erase(candidates.begin());  // automatic
    const double points = static_cast<double>(n[0]) * n[1] * nz;
    const int calls = static_cast<int>(std::clamp(5.0e5 / std::max(points, 1.0), 1.0, 16.0));
    std::vector<double> best(candidates.size(), std::numeric_limits<double>::infinity());
    for (int round = 0; round < 3; ++round) {
      for (std::size_t v = 0; v < candidates.size(); ++v) {
        stencil7_detail::sweep_residual_with(candidates[v], a, b, 0, nz);  // warm
        a.swap(b);
        const double t0 = core::now_s();
        for (int call = 0; call < calls; ++call) {
          stencil7_detail::sweep_residual_with(candidates[v], a, b, 0, nz);
          a.swap(b);
        }
        best[v] = std::min(best[v], core::now_s() - t0);
      }
    }
    const auto fastest = std::min_element(best.begin(), best.end()) - best.begin();
    return candidates[static_cast<std::size_t>(fastest)];
  } catch (...) {
    return stencil7_detail::default_kernel();
  }
}

bool same_shape(const Choice& c, const Field& u) noexcept {
  return c.interior == u.interior() && c.halo == u.halo();
}

}  // namespace

std::string_view stencil7_kernel_name(Stencil7Kernel kernel) noexcept {
  return stencil7_kernel_names[static_cast<std::size_t>(kernel)];
}

std::vector<Stencil7Kernel> stencil7_kernels() {
  std::vector<Stencil7Kernel> out;
  for (const Stencil7Kernel k : {Stencil7Kernel::automatic, Stencil7Kernel::portable,
                                 Stencil7Kernel::stream, Stencil7Kernel::avx512}) {
    if (stencil7_detail::kernel_built(k)) out.push_back(k);
  }
  return out;
}

void stencil7_set_kernel(Stencil7Kernel kernel) {
  if (!stencil7_detail::kernel_built(kernel)) {
    throw std::invalid_argument("stencil7 kernel '" + std::string(stencil7_kernel_name(kernel)) +
                                "' is not in this build");
  }
  forced.store(kernel, std::memory_order_relaxed);
}

Stencil7Kernel stencil7_kernel(const Field& u) noexcept {
  const Stencil7Kernel set = forced.load(std::memory_order_relaxed);
  if (set != Stencil7Kernel::automatic) return note_used(set);
  // The last shape this thread asked about, without the lock.
  thread_local Choice last{{-1, -1, -1}, -1, Stencil7Kernel::automatic};
  if (same_shape(last, u)) return note_used(last.kernel);
  try {
    const std::lock_guard<std::mutex> lock(choices_mutex);
    auto found = std::find_if(choices.begin(), choices.end(),
                              [&](const Choice& c) { return same_shape(c, u); });
    if (found == choices.end()) {
      choices.push_back({u.interior(), u.halo(), measure(u)});
      found = choices.end() - 1;
    }
    last = *found;
    return note_used(last.kernel);
  } catch (...) {
    return note_used(stencil7_detail::default_kernel());
  }
}

std::vector<Stencil7Kernel> stencil7_kernels_used() {
  std::vector<Stencil7Kernel> out;
  const unsigned bits = used_bits.load(std::memory_order_relaxed);
  for (const Stencil7Kernel k : stencil7_kernels()) {
    if ((bits & (1U << static_cast<unsigned>(k))) != 0) out.push_back(k);
  }
  return out;
}

}  // namespace asyncsolve::ops
