#include "asyncsolve/grid/problem.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"

namespace asyncsolve::grid {
namespace {

/// Paper 000 §3: zero Dirichlet data except a Gaussian on a circular region of
/// the bottom plane z = 0. The paper does not give the radius; asyncsolve uses
/// the circle inscribed in the unit square, (x-0.5)^2 + (y-0.5)^2 < 0.25.
class Plume final : public Problem {
 public:
  explicit Plume(double offset) : offset_(offset) {}
  std::string_view name() const override { return "plume"; }
  double boundary_value(const Int3& g, const Int3& global) const override {
    if (g[2] != 0) return offset_;
    const double x = static_cast<double>(g[0]) / (global[0] + 1);
    const double y = static_cast<double>(g[1]) / (global[1] + 1);
    const double r2 = (0.5 - x) * (0.5 - x) + (0.5 - y) * (0.5 - y);
    return r2 < 0.25 ? std::exp(-r2) + offset_ : offset_;
  }
  double initial_value() const override { return offset_; }
  nlohmann::json parameters() const override {
    return {{"offset", offset_}, {"source_radius", 0.5}};
  }

 private:
  double offset_;
};

/// Paper 001 §3.1: -Δu = 0 with u = 1 on the boundary, starting from 0; the
/// discrete solution is u ≡ 1.
class Ones final : public Problem {
 public:
  std::string_view name() const override { return "ones"; }
  double boundary_value(const Int3&, const Int3&) const override { return 1.0; }
  double initial_value() const override { return 0.0; }
  std::optional<double> exact_value(const Int3&, const Int3&) const override { return 1.0; }
  nlohmann::json parameters() const override { return nlohmann::json::object(); }
};

/// Paper 003's test matrix, as hypre's `ij -laplacian -27pt` builds it: 26
/// on the diagonal, -1 for each of the 26 neighbours, zero Dirichlet data
/// (boundary points eliminated), b = 1, x0 = 0.
class Laplace27 final : public Problem {
 public:
  std::string_view name() const override { return "laplace27"; }
  int stencil_points() const override { return 27; }
  double source() const override { return 1.0; }
  double boundary_value(const Int3&, const Int3&) const override { return 0.0; }
  double initial_value() const override { return 0.0; }
  nlohmann::json parameters() const override { return {{"stencil", 27}}; }
};

}  // namespace

std::optional<double> Problem::exact_value(const Int3&, const Int3&) const { return std::nullopt; }

std::vector<std::string> problem_names() {
  return {model_problem_names.begin(), model_problem_names.end()};
}

std::unique_ptr<Problem> make_problem(ModelProblem kind, const ProblemOptions& options) {
  if (!std::isfinite(options.offset)) {
    throw core::InputError(fmt::format("--offset {}: expected a finite number", options.offset));
  }
  if (kind != ModelProblem::plume && options.offset != 0.0) {
    throw core::InputError(fmt::format(
        "--offset {}: the {} problem takes no offset, expected 0 (offset applies to plume)",
        options.offset, core::enum_name(model_problem_names, kind)));
  }
  switch (kind) {
    case ModelProblem::plume:
      return std::make_unique<Plume>(options.offset);
    case ModelProblem::ones:
      return std::make_unique<Ones>();
    case ModelProblem::laplace27:
      return std::make_unique<Laplace27>();
  }
  throw std::invalid_argument("make_problem: not a ModelProblem");
}

std::unique_ptr<Problem> make_problem(std::string_view name, const ProblemOptions& options) {
  const auto kind = core::enum_parse<ModelProblem>(model_problem_names, name);
  if (!kind) {
    throw core::InputError(
        fmt::format("--problem '{}': expected one of {}", name, fmt::join(problem_names(), ", ")));
  }
  return make_problem(*kind, options);
}

void apply_boundary(const Problem& problem, const Decomposition& decomposition, Field& u) {
  const Int3& n = u.interior();
  const int w = u.halo();
  const Int3& global = decomposition.global();
  const Int3& offset = decomposition.offset();
  for (const Face face : all_faces) {
    if (!decomposition.is_physical_boundary(face)) continue;
    const int a = axis(face);
    Box box{{-w, -w, -w}, {n[0] + w, n[1] + w, n[2] + w}};
    // The single layer of halo just outside this face is the boundary plane.
    box.lo[a] = is_high(face) ? n[a] : -1;
    box.hi[a] = box.lo[a] + 1;
    for (int k = box.lo[2]; k < box.hi[2]; ++k)
      for (int j = box.lo[1]; j < box.hi[1]; ++j)
        for (int i = box.lo[0]; i < box.hi[0]; ++i) {
          Int3 g{offset[0] + i + 1, offset[1] + j + 1, offset[2] + k + 1};
          bool on_domain = true;
          for (int b = 0; b < 3; ++b) on_domain = on_domain && g[b] >= 0 && g[b] <= global[b] + 1;
          if (on_domain) u(i, j, k) = problem.boundary_value(g, global);
        }
  }
}

void apply_initial_guess(const Problem& problem, Field& u) {
  u.fill_interior(problem.initial_value());
}

}  // namespace asyncsolve::grid
