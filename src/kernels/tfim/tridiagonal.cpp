#include "asyncsolve/kernels/tridiagonal.hpp"

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

// LAPACK's Fortran entry points (gfortran calling convention: character
// arguments carry hidden lengths at the end).
extern "C" {
void dstebz_(const char* range, const char* order, const int* n, const double* vl, const double* vu,
             const int* il, const int* iu, const double* abstol, const double* d, const double* e,
             int* m, int* nsplit, double* w, int* iblock, int* isplit, double* work, int* iwork,
             int* info, std::size_t range_len, std::size_t order_len);
void dstein_(const int* n, const double* d, const double* e, const int* m, const double* w,
             const int* iblock, const int* isplit, double* z, const int* ldz, double* work,
             int* iwork, int* ifail, int* info);
void dsyev_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
            double* work, const int* lwork, int* info, std::size_t jobz_len, std::size_t uplo_len);
double dlamch_(const char* cmach, std::size_t cmach_len);
}

namespace asyncsolve::kernels {

LowestEigenpair lowest_eigenpair(std::span<const double> diagonal, std::span<const double> off) {
  const int n = static_cast<int>(diagonal.size());
  if (n < 1 || off.size() + 1 != diagonal.size()) {
    throw std::invalid_argument(
        "lowest_eigenpair: expected j diagonal and j-1 off-diagonal entries");
  }
  if (n == 1) return {diagonal[0], 1.0};
  const std::vector<double> d(diagonal.begin(), diagonal.end());
  std::vector<double> e(off.begin(), off.end());
  e.push_back(0.0);
  const double vl = 0.0;
  const double vu = 0.0;
  const int il = 1;
  const int iu = 1;
  // Twice the underflow threshold: bisection to full accuracy.
  const double abstol = 2.0 * dlamch_("S", 1);
  int m = 0;
  int nsplit = 0;
  double w[1] = {0.0};
  std::vector<int> iblock(static_cast<std::size_t>(n));
  std::vector<int> isplit(static_cast<std::size_t>(n));
  std::vector<double> work(static_cast<std::size_t>(5 * n));
  std::vector<int> iwork(static_cast<std::size_t>(3 * n));
  int info = 0;
  dstebz_("I", "B", &n, &vl, &vu, &il, &iu, &abstol, d.data(), e.data(), &m, &nsplit, w,
          iblock.data(), isplit.data(), work.data(), iwork.data(), &info, 1, 1);
  if (info != 0 || m != 1) {
    throw std::runtime_error("LAPACK dstebz failed (info " + std::to_string(info) + ")");
  }
  std::vector<double> z(static_cast<std::size_t>(n));
  int ifail = 0;
  dstein_(&n, d.data(), e.data(), &m, w, iblock.data(), isplit.data(), z.data(), &n, work.data(),
          iwork.data(), &ifail, &info);
  if (info < 0)
    throw std::runtime_error("LAPACK dstein failed (info " + std::to_string(info) + ")");
  // info > 0: inverse iteration did not converge; the eigenvalue stands, the
  // bound is then reported as unknown (NaN).
  return {w[0], info == 0 ? std::abs(z.back()) : std::nan("")};
}

void symmetric_eigenvalues(std::span<double> a, int n, std::span<double> values) {
  if (n < 1 || a.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n) ||
      values.size() != static_cast<std::size_t>(n)) {
    throw std::invalid_argument("symmetric_eigenvalues: bad sizes");
  }
  int info = 0;
  int lwork = -1;
  double query = 0.0;
  dsyev_("N", "L", &n, a.data(), &n, values.data(), &query, &lwork, &info, 1, 1);
  lwork = static_cast<int>(query);
  std::vector<double> work(static_cast<std::size_t>(lwork));
  dsyev_("N", "L", &n, a.data(), &n, values.data(), work.data(), &lwork, &info, 1, 1);
  if (info != 0)
    throw std::runtime_error("LAPACK dsyev failed (info " + std::to_string(info) + ")");
}

}  // namespace asyncsolve::kernels
