#pragma once
/// Model problems: Laplace's equation on the unit cube with Dirichlet data.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "asyncsolve/grid/decomposition.hpp"
#include "asyncsolve/grid/field.hpp"

namespace asyncsolve::grid {

/// A model problem on the unit cube discretised with N interior points per
/// dimension (spacing 1/(N+1)). Global point indices run over 0..N+1 in each
/// dimension, 0 and N+1 being the Dirichlet boundary; interior point with
/// 0-based global index i sits at global point index i + 1. The operator is
/// the 7-point Laplacian (6 on the diagonal, -1 for each interior
/// neighbour) or, where stencil_points() is 27, the 27-point one (26 on the
/// diagonal, -1 for each of the 26 neighbours); b = source() plus the
/// boundary contributions.
class Problem {
 public:
  virtual ~Problem() = default;
  /// Name as given to --problem.
  virtual std::string_view name() const = 0;
  /// u on boundary point `g` (global point index) of a grid with `global` interior points.
  virtual double boundary_value(const Int3& g, const Int3& global) const = 0;
  /// Initial guess in the interior.
  virtual double initial_value() const = 0;
  /// 7 or 27: the stencil of the operator.
  virtual int stencil_points() const { return 7; }
  /// Right-hand side at every interior point, before the boundary
  /// contributions are added.
  virtual double source() const { return 0.0; }
  /// Exact solution of the discrete problem at interior point `g`, if known.
  virtual std::optional<double> exact_value(const Int3& g, const Int3& global) const;
  /// Problem parameters for the result document.
  virtual nlohmann::json parameters() const = 0;
};

/// Parameters shared by the model problems.
struct ProblemOptions {
  /// Added to the boundary values and the initial guess (plume only; paper
  /// 000 §6.1 uses 1 to avoid computing on exact zeros).
  double offset = 0.0;
};

/// The model problems: paper 000's plume, paper 001's ones (both 7-point),
/// hypre's 27-point Laplacian.
enum class ModelProblem { plume, ones, laplace27 };
/// Their names, in ModelProblem's order.
inline constexpr std::array<std::string_view, 3> model_problem_names{"plume", "ones", "laplace27"};

/// Builds `kind`. Throws InputError for an option the problem does not take.
std::unique_ptr<Problem> make_problem(ModelProblem kind, const ProblemOptions& options);

/// Names accepted by make_problem.
std::vector<std::string> problem_names();

/// For embedders: builds the problem named `name` (one of problem_names()).
/// Throws InputError for an unknown name or an option the problem does not take.
std::unique_ptr<Problem> make_problem(std::string_view name, const ProblemOptions& options);

/// Writes the boundary values into the halo layers of `u` that lie on the
/// physical boundary (faces, edges and corners). Local.
void apply_boundary(const Problem& problem, const Decomposition& decomposition, Field& u);

/// Sets the interior of `u` to the initial guess. Local.
void apply_initial_guess(const Problem& problem, Field& u);

}  // namespace asyncsolve::grid
