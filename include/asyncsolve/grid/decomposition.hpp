#pragma once
/// Block decomposition of a 3D grid over a non-periodic Cartesian process grid.
#include <array>
#include <optional>

#include "asyncsolve/core/triple.hpp"
#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::grid {

using core::Int3;

/// A contiguous block [begin, begin + count) of one dimension.
struct Range {
  int begin = 0;
  int count = 0;
};

/// Block `index` of `n` points split into `parts` blocks whose sizes differ by
/// at most one (the first n % parts blocks get the extra point).
Range block_range(int n, int parts, int index);

/// The six faces of a box, in the order x-, x+, y-, y+, z-, z+.
enum class Face { x_lo = 0, x_hi, y_lo, y_hi, z_lo, z_hi };
inline constexpr std::array<Face, 6> all_faces{Face::x_lo, Face::x_hi, Face::y_lo,
                                               Face::y_hi, Face::z_lo, Face::z_hi};
constexpr int axis(Face f) noexcept { return static_cast<int>(f) / 2; }
constexpr bool is_high(Face f) noexcept { return static_cast<int>(f) % 2 == 1; }
constexpr Face opposite(Face f) noexcept { return static_cast<Face>(static_cast<int>(f) ^ 1); }

/// What the user asked for: either a global grid or a per-rank size (weak
/// scaling), and optionally a forced process grid. Sizes count interior
/// (unknown) points; the Dirichlet boundary lies outside them.
struct DecompositionSpec {
  std::optional<Int3> global;
  std::optional<Int3> local;
  std::optional<Int3> dims;
};

/// The process grid and global size a spec resolves to on `ranks` ranks.
struct DecompositionPlan {
  Int3 dims{};
  Int3 global{};
};

/// Resolves a spec without communicating (MPI_Dims_create is local). Throws
/// InputError, identically on every rank, when the spec cannot be honoured.
/// Dimension 0 is x: MPI_Dims_create's non-increasing dims grow the grid in
/// x first, then y, then z, as ranks double (paper 000's weak scaling).
DecompositionPlan plan_decomposition(int ranks, const DecompositionSpec& spec);

/// This rank's block of the grid, its place in the process grid and its
/// neighbours (MPI_PROC_NULL at the physical boundary). Owns the Cartesian
/// communicator. Move-only.
class Decomposition {
 public:
  /// Collective over `comm`: plans (throwing InputError on bad specs) and
  /// creates the non-periodic Cartesian communicator (MPI_Cart_create,
  /// without reordering, so ranks keep their numbers).
  static Decomposition create(const par::Comm& comm, const DecompositionSpec& spec);

  const par::Comm& comm() const noexcept { return cart_; }
  int rank() const noexcept { return rank_; }
  int ranks() const noexcept { return ranks_; }
  const Int3& dims() const noexcept { return dims_; }
  const Int3& coords() const noexcept { return coords_; }
  const Int3& global() const noexcept { return global_; }
  /// Interior points owned by this rank.
  const Int3& local() const noexcept { return local_; }
  /// Global index (0-based over interior points) of this rank's first point.
  const Int3& offset() const noexcept { return offset_; }
  /// Rank across `face`, or MPI_PROC_NULL on the physical boundary.
  int neighbour(Face face) const noexcept { return neighbours_[static_cast<int>(face)]; }
  bool is_physical_boundary(Face face) const noexcept;
  /// Rank in direction `dir` in {-1,0,1}^3 (faces, edges and corners), or
  /// MPI_PROC_NULL outside the process grid. dir = {0,0,0} is this rank.
  int neighbour(const Int3& dir) const noexcept {
    return all_neighbours_[(dir[0] + 1) + 3 * (dir[1] + 1) + 9 * (dir[2] + 1)];
  }

  /// Collective: frees the Cartesian communicator.
  void free() { cart_.free(); }

 private:
  Decomposition() = default;
  par::Comm cart_;
  int rank_ = 0;
  int ranks_ = 1;
  Int3 dims_{};
  Int3 coords_{};
  Int3 global_{};
  Int3 local_{};
  Int3 offset_{};
  std::array<int, 6> neighbours_{};
  std::array<int, 27> all_neighbours_{};
};

}  // namespace asyncsolve::grid
