// libFuzzer target for the Matrix Market reader (tests/fuzz/run.sh builds it
// with clang, -fsanitize=fuzzer,address,undefined, and runs it on the seed
// corpus beside it). Every input must either read into a well-formed CSR
// matrix or be refused with core::InputError: any other exception, crash,
// hang or sanitizer report is a bug. Half of the inputs go through the
// stream reader (fmemopen), half through the in-memory one.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"

using namespace asyncsolve;

namespace {

void check(const sparse::MatrixMarketFile& f) {
  const sparse::CsrMatrix& a = f.matrix;
  if (a.rows != f.info.rows || a.cols != f.info.cols) std::abort();
  if (static_cast<std::int64_t>(a.row_ptr.size()) != a.rows + 1 || a.row_ptr[0] != 0) std::abort();
  if (a.col.size() != a.val.size() || static_cast<std::int64_t>(a.col.size()) != a.nnz())
    std::abort();
  for (std::int64_t i = 0; i < a.rows; ++i) {
    if (a.row_ptr[i + 1] < a.row_ptr[i]) std::abort();
    for (std::int64_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      if (a.col[k] < 0 || a.col[k] >= a.cols) std::abort();
      if (k > a.row_ptr[i] && a.col[k] <= a.col[k - 1]) std::abort();
      // Sums of finite values can overflow to infinity; NaN never appears.
      if (std::isnan(a.val[k])) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sparse::ReadLimits limits;
  limits.max_bytes = 64.0 * 1024 * 1024;  // keep the fuzzer's allocations small
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    if (size % 2 == 0 || size == 0) {
      check(sparse::parse_matrix_market(text, "fuzz.mtx", limits));
    } else {
      std::FILE* in = fmemopen(const_cast<std::uint8_t*>(data), size, "rb");
      if (in == nullptr) return 0;
      try {
        check(sparse::read_matrix_market(in, "fuzz.mtx", limits));
      } catch (...) {
        std::fclose(in);
        throw;
      }
      std::fclose(in);
    }
  } catch (const core::InputError&) {
    // refused with a message: fine
  }
  return 0;
}
