#pragma once
// Serial references for the nonsymmetric Krylov methods: the test matrices
// (upwind convection-diffusion on 2-D and 3-D grids, a non-normal Grcar
// matrix, a skew-symmetric one) as whole CSR matrices, and textbook
// right-preconditioned GMRES(m) and BiCGStab on them with PETSc's
// conventions (iteration counting, classical Gram-Schmidt with a second pass
// when needed, the stopping test), written with plain loops, independently
// of the library's fields, kernels and reductions.
#include <cstdint>
#include <string>
#include <vector>

namespace asyncsolve::reference {

/// A whole square matrix in CSR, columns ascending in each row.
struct SerialCsr {
  std::int64_t n = 0;
  std::vector<std::int64_t> ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  std::string name;
};

/// -Laplace(u) + w . grad(u) on the unit square (nz = 0) or cube, n points per
/// side, Dirichlet boundary eliminated, first-order upwind convection, scaled
/// by h^2: w = peclet (1, 1/2, 1/4) (its first 2 or 3 components).
SerialCsr convection_diffusion(int n, int dims, double peclet);
/// The Grcar matrix (Trefethen and Embree): 1 on the diagonal, -1 below it, 1
/// on the three diagonals above: far from normal.
SerialCsr grcar(int n);
/// A skew-symmetric tridiagonal matrix (0 diagonal, 1 above, -1 below; n
/// even, so it is nonsingular): x^T A x = 0 for every x.
SerialCsr skew(int n);

/// y = A x.
std::vector<double> multiply(const SerialCsr& a, const std::vector<double>& x);

struct SerialKrylov {
  std::vector<double> x;
  std::vector<double> history;  ///< ||r|| / ||b|| after each iteration (0: the start)
  long iterations = 0;
  bool converged = false;
};

/// GMRES(m) from x = 0, right preconditioned by M = diag(A) (jacobi) or I,
/// classical Gram-Schmidt with a second pass when ||w|| < ||h|| (PETSc's
/// REFINE_IFNEEDED), Givens rotations; the true residual at each restart;
/// stops when the residual (estimate) / ||b|| < tol.
SerialKrylov serial_gmres(const SerialCsr& a, const std::vector<double>& b, int restart,
                          bool jacobi, double tol, long max_iters);

/// BiCGStab from x = 0 as PETSc's KSPBCGS with right preconditioning (M =
/// diag(A) or I): an iteration is the pair of mat-vecs.
SerialKrylov serial_bicgstab(const SerialCsr& a, const std::vector<double>& b, bool jacobi,
                             double tol, long max_iters);

}  // namespace asyncsolve::reference
