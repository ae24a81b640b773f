// NAME
//   mtx2petsc - a Matrix Market file in PETSc's binary matrix format
//
// PURPOSE
//   bench/peers/petsc_mtx reads its matrix with PETSc's MatLoad; this tool
//   writes that file from a Matrix Market one through asyncsolve's own
//   reader, so that both sides of the comparison solve the very same matrix
//   (duplicates summed, symmetric files expanded, the same refusals).
//   PETSc's binary format: big-endian, int32 MAT_FILE_CLASSID (1211216),
//   rows, columns, non-zeros, then each row's length, the column indices
//   (int32) and the values (float64).
//
// USAGE
//   mtx2petsc IN.mtx OUT.petsc
//
// OUTPUT
//   OUT.petsc (written to a temporary name, then renamed); a line with the
//   sizes on stdout. Exit 0, 2 for a file the reader refuses, 4 on a write
//   error.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/json_file.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"

namespace {

void put_int(std::string& out, std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((u >> shift) & 0xff));
}

void put_double(std::string& out, double v) {
  std::uint64_t u = 0;
  static_assert(sizeof u == sizeof v);
  std::memcpy(&u, &v, sizeof v);
  for (int shift = 56; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((u >> shift) & 0xff));
}

}  // namespace

int main(int argc, char** argv) {
  using namespace asyncsolve;
  if (argc != 3) {
    std::fputs("usage: mtx2petsc IN.mtx OUT.petsc\n", stderr);
    return 2;
  }
  try {
    const sparse::MatrixMarketFile f = sparse::read_matrix_market(argv[1]);
    const sparse::CsrMatrix& a = f.matrix;
    if (a.nnz() > INT32_MAX) throw core::InputError("more than 2^31 - 1 non-zeros");
    std::string out;
    out.reserve(16 + 4 * static_cast<std::size_t>(a.rows) + 12 * static_cast<std::size_t>(a.nnz()));
    put_int(out, 1211216);
    put_int(out, static_cast<std::int32_t>(a.rows));
    put_int(out, static_cast<std::int32_t>(a.cols));
    put_int(out, static_cast<std::int32_t>(a.nnz()));
    for (std::int64_t i = 0; i < a.rows; ++i)
      put_int(out, static_cast<std::int32_t>(a.row_ptr[i + 1] - a.row_ptr[i]));
    for (const std::int32_t c : a.col) put_int(out, c);
    for (const double v : a.val) put_double(out, v);
    core::write_file_atomic(argv[2], out);
    std::printf("mtx2petsc: %s: %lld x %lld, %lld non-zeros -> %s\n", argv[1],
                static_cast<long long>(a.rows), static_cast<long long>(a.cols),
                static_cast<long long>(a.nnz()), argv[2]);
  } catch (const core::InputError& e) {
    std::fprintf(stderr, "mtx2petsc: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mtx2petsc: error: %s\n", e.what());
    return 4;
  }
  return 0;
}
