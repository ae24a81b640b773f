// Exact equilibration by powers of two (see equilibrate.hpp).
#include "asyncsolve/sparse/equilibrate.hpp"

#include <mpi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::sparse {
namespace {

/// The exponent e that brings `largest` into [1, 2) (2^e largest); 0 for 0.
int exponent_to_one(double largest) { return largest > 0.0 ? -std::ilogb(largest) : 0; }

}  // namespace

PowerOfTwoScaling scaling_for(int matrix_exponent, double b_max, double x0_max) {
  // The first of (a, c), (a, a), (0, 0) that keeps b and x0 finite.
  PowerOfTwoScaling out;
  for (const PowerOfTwoScaling& s :
       {PowerOfTwoScaling{matrix_exponent, exponent_to_one(b_max)},
        PowerOfTwoScaling{matrix_exponent, matrix_exponent}, PowerOfTwoScaling{}}) {
    out = s;
    if (std::isfinite(std::ldexp(b_max, s.rhs_exponent)) &&
        std::isfinite(std::ldexp(x0_max, s.rhs_exponent - s.matrix_exponent))) {
      break;
    }
  }
  return out;
}

void PowerOfTwoScaling::unscale(std::span<double> y) const {
  for (double& v : y) v = std::ldexp(v, matrix_exponent - rhs_exponent);
}

PowerOfTwoScaling equilibrate(DistMatrix& a, std::span<double> b, std::span<double> x0) {
  // One reduction (max) of: largest |a_ij|, -(smallest non-zero |a_ij|),
  // largest |b_i|, largest |x0_i|.
  double m[4] = {0.0, -DBL_MAX, 0.0, 0.0};
  for (const double v : a.val()) {
    m[0] = std::max(m[0], std::abs(v));
    if (v != 0.0) m[1] = std::max(m[1], -std::abs(v));
  }
  for (const double v : b) m[2] = std::max(m[2], std::abs(v));
  for (const double v : x0) m[3] = std::max(m[3], std::abs(v));
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, m, 4, MPI_DOUBLE, MPI_MAX, a.comm().get()),
                 "MPI_Allreduce");
  // A <- S A S with S = 2^(a/2): a even, so that S is a power of two too.
  const int half = static_cast<int>(std::floor(exponent_to_one(m[0]) / 2.0));
  const bool matrix_ok = m[0] > 0.0 && std::ldexp(-m[1], 2 * half) >= DBL_MIN &&
                         std::isfinite(std::ldexp(m[0], 2 * half));
  const int matrix = matrix_ok ? 2 * half : 0;
  PowerOfTwoScaling out = scaling_for(matrix, m[2], m[3]);
  if (out.matrix_exponent != 0) {
    const std::vector<double> s(static_cast<std::size_t>(a.local_rows()),
                                std::ldexp(1.0, out.matrix_exponent / 2));
    a.scale_symmetric(s);
  }
  for (double& v : b) v = std::ldexp(v, out.rhs_exponent);
  for (double& v : x0) v = std::ldexp(v, out.rhs_exponent - out.matrix_exponent);
  return out;
}

}  // namespace asyncsolve::sparse
