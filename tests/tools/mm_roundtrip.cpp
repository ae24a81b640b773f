// NAME     mm_roundtrip
// PURPOSE  Reads a Matrix Market file with asyncsolve's reader and prints
//          what it read as a `coordinate real general` file with 17
//          significant digits, after one comment line with the reader's
//          counts (tests/python/test_sparse_reader.py compares it with
//          scipy.io.mmread of the original).
// USAGE    mm_roundtrip FILE.mtx
// OUTPUT   The matrix on stdout, exit 0; or the reader's one-line refusal
//          on stderr, exit 2.
#include <cstdio>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"

int main(int argc, char** argv) {
  using namespace asyncsolve;
  if (argc != 2) {
    std::fputs("usage: mm_roundtrip FILE.mtx\n", stderr);
    return 2;
  }
  try {
    const sparse::MatrixMarketFile f = sparse::read_matrix_market(argv[1]);
    const std::string text = sparse::format_matrix(f.matrix);
    // The banner first, then the counts as a comment.
    const std::size_t nl = text.find('\n');
    std::fputs(text.substr(0, nl + 1).c_str(), stdout);
    std::fputs(fmt::format("% duplicates {} mirrored {} zeros_dropped {}\n", f.info.duplicates,
                           f.info.mirrored, f.info.zeros_dropped)
                   .c_str(),
               stdout);
    std::fputs(text.substr(nl + 1).c_str(), stdout);
  } catch (const core::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }
  return 0;
}
