// The near-null vectors: per-component constants, or the rigid-body modes
// of linear elasticity. For a node at x (relative to the centre) the
// rotation about axis a moves it by e_a x x; in 3-D (columns t_x, t_y,
// t_z, r_xy, r_yz, r_zx):
//   r_xy = (-y,  x,  0),  r_yz = (0, -z,  y),  r_zx = ( z, 0, -x);
// in 2-D the one rotation (-y, x).
#include "asyncsolve/precond/near_null_space.hpp"

#include <stdexcept>

namespace asyncsolve::precond {

int near_null_count(const NearNullSpace& space) {
  const int d = space.block_size;
  if (space.dimension > 0 && space.dimension == d && d >= 2) return d + d * (d - 1) / 2;
  return d;
}

std::vector<double> near_null_vectors(const NearNullSpace& space, int rows,
                                      std::span<const double> centre, int& count) {
  count = near_null_count(space);
  const int d = space.block_size;
  std::vector<double> z(static_cast<std::size_t>(rows) * count, 0.0);
  const auto component = [&](int i) {
    return space.component.empty() ? 0 : space.component[static_cast<std::size_t>(i)];
  };
  for (int i = 0; i < rows; ++i) z[static_cast<std::size_t>(component(i)) * rows + i] = 1.0;
  if (count == d) return z;
  if (static_cast<int>(space.coordinates.size()) < rows * space.dimension ||
      static_cast<int>(centre.size()) < d) {
    throw std::invalid_argument("near_null_vectors: coordinates of every row are needed");
  }
  for (int i = 0; i < rows; ++i) {
    const double* x = &space.coordinates[static_cast<std::size_t>(i) * space.dimension];
    const int c = component(i);
    const double px = x[0] - centre[0];
    const double py = x[1] - centre[1];
    const auto at = [&](int mode) -> double& {
      return z[static_cast<std::size_t>(d + mode) * rows + i];
    };
    if (d == 2) {
      at(0) = c == 0 ? -py : px;
      continue;
    }
    const double pz = x[2] - centre[2];
    at(0) = c == 0 ? -py : (c == 1 ? px : 0.0);
    at(1) = c == 0 ? 0.0 : (c == 1 ? -pz : py);
    at(2) = c == 0 ? pz : (c == 1 ? 0.0 : -px);
  }
  return z;
}

}  // namespace asyncsolve::precond
