#include "near_null_input.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"
#include "asyncsolve/par/stats.hpp"
#include "asyncsolve/sparse/matrix_market.hpp"

namespace asyncsolve::app {

BlockSizeComment block_size_comment(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);  // the banner
  constexpr std::string_view key = "block-size:";
  long number = 1;
  BlockSizeComment found;
  bool after_size = false;  // past the size line: only the comments just after it are read
  while (std::getline(in, line)) {
    ++number;
    if (line.empty() || line[0] != '%') {
      if (after_size || line.empty()) break;
      after_size = true;  // the size line ends the comments
      continue;
    }
    std::size_t at = 1;
    while (at < line.size() && std::isspace(static_cast<unsigned char>(line[at]))) ++at;
    if (line.compare(at, key.size(), key) != 0) continue;
    if (after_size) {
      // The reader skips comments among the entries, so the block size
      // would be dropped without a word.
      throw core::InputError(fmt::format(
          "{}:{}: comment '{}' after the size line: expected '% block-size: N' before the "
          "size line (or --block-size)",
          path.string(), number, line));
    }
    const std::string value = line.substr(at + key.size());
    int n = 0;
    std::size_t used = 0;
    try {
      n = std::stoi(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    while (used < value.size() && std::isspace(static_cast<unsigned char>(value[used]))) ++used;
    if (used == 0 || used != value.size() || n < 1 || n > 16) {
      throw core::InputError(
          fmt::format("{}:{}: comment '{}': expected '% block-size: N' with N "
                      "from 1 to 16",
                      path.string(), number, line));
    }
    // A second comment that disagrees leaves the block size in doubt.
    if (found.size > 0 && found.size != n) {
      throw core::InputError(
          fmt::format("{}:{}: comment '{}' after {}: two block sizes, expected one "
                      "'% block-size: N' comment (or --block-size)",
                      path.string(), number, line, found.where));
    }
    if (found.size == 0) found = {n, fmt::format("{}:{}: '{}'", path.string(), number, line)};
  }
  return found;
}

std::shared_ptr<const precond::NearNullSpace> load_near_null_space(
    const par::Comm& comm, int block_size, std::string_view origin,
    const std::filesystem::path& coordinates, std::int64_t global_rows,
    std::span<const std::int64_t> file_rows) {
  auto space = std::make_shared<precond::NearNullSpace>();
  space->block_size = block_size;
  if (global_rows % block_size != 0) {
    throw core::InputError(
        fmt::format("{}: the matrix has {} rows, expected a block size that divides them", origin,
                    global_rows));
  }
  if (!coordinates.empty() && block_size != 2 && block_size != 3) {
    throw core::InputError(fmt::format(
        "--coordinates {}: coordinates need a block size of 2 or 3 (one unknown per dimension "
        "at each node), and the block size is {} ({}): expected --block-size equal to the "
        "coordinates' dimension (the file's columns, 2 or 3)",
        coordinates.string(), block_size, origin));
  }
  for (const std::int64_t f : file_rows)
    space->component.push_back(static_cast<int>(f % block_size));
  if (coordinates.empty()) return space;
  const std::int64_t nodes = global_rows / block_size;
  std::string error;
  std::vector<double> dense;
  int dimension = 0;
  if (comm.is_root()) {
    try {
      sparse::MatrixMarketFile file;
      try {
        file = sparse::read_matrix_market(coordinates);
      } catch (const core::InputError& e) {
        // the option named, as --rhs and --x0 do
        throw core::InputError(fmt::format("--coordinates {}", e.what()));
      }
      const sparse::CsrMatrix& c = file.matrix;
      if (c.rows != nodes || c.cols != block_size) {
        throw core::InputError(fmt::format(
            "--coordinates {}: {} x {} values, expected {} x {} (one row per node of {} "
            "unknowns, one column per dimension, dimension 2 or 3)",
            coordinates.string(), c.rows, c.cols, nodes, block_size, block_size));
      }
      dimension = static_cast<int>(c.cols);
      dense.assign(static_cast<std::size_t>(nodes) * dimension, 0.0);
      for (std::int64_t i = 0; i < c.rows; ++i)
        for (std::int64_t k = c.row_ptr[i]; k < c.row_ptr[i + 1]; ++k)
          dense[static_cast<std::size_t>(i) * dimension + c.col[k]] = c.val[k];
    } catch (const core::InputError& e) {
      error = e.what();
    }
  }
  error = par::broadcast_from_root(comm, std::move(error));
  if (!error.empty()) throw core::InputError(error);
  par::check_mpi(MPI_Bcast(&dimension, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
  dense.resize(static_cast<std::size_t>(nodes) * dimension);
  par::check_mpi(MPI_Bcast(dense.data(), static_cast<int>(dense.size()), MPI_DOUBLE, 0, comm.get()),
                 "MPI_Bcast");
  space->dimension = dimension;
  for (const std::int64_t f : file_rows) {
    const std::int64_t node = f / block_size;
    for (int d = 0; d < dimension; ++d)
      space->coordinates.push_back(dense[static_cast<std::size_t>(node) * dimension + d]);
  }
  return space;
}

void add_near_null_space(const par::Comm& comm, const SchwarzConfig& given,
                         const std::filesystem::path& matrix, std::int64_t global_rows,
                         std::span<const std::int64_t> file_rows, precond::PcSettings& pc) {
  int block_size = given.block_size;
  // Where the block size comes from, for messages: the option, the file's
  // comment (file:line), or the default.
  std::string origin = fmt::format("--block-size {}", block_size);
  if (block_size == 0) {
    std::string error;
    BlockSizeComment comment;
    if (comm.is_root()) {
      try {
        comment = block_size_comment(matrix);
      } catch (const core::InputError& e) {
        error = e.what();
      }
    }
    error = par::broadcast_from_root(comm, std::move(error));
    if (!error.empty()) throw core::InputError(error);
    block_size = comment.size;
    par::check_mpi(MPI_Bcast(&block_size, 1, MPI_INT, 0, comm.get()), "MPI_Bcast");
    origin = block_size > 0 ? par::broadcast_from_root(comm, std::move(comment.where))
                            : std::string("the default, no --block-size given");
  }
  pc.block_size = std::max(block_size, 1);
  if (pc.block_size > 1 || !given.coordinates.empty()) {
    pc.near_null = load_near_null_space(comm, pc.block_size, origin, given.coordinates, global_rows,
                                        file_rows);
  }
}

}  // namespace asyncsolve::app
