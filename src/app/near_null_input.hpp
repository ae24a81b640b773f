#pragma once
// The near-null space of a matrix file's system (--block-size, the file's
// block-size comment, --coordinates), distributed like its rows.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/precond/near_null_space.hpp"
#include "asyncsolve/precond/preconditioner.hpp"
#include "schwarz_options.hpp"

namespace asyncsolve::app {

/// A block size declared by a Matrix Market file's comment.
struct BlockSizeComment {
  int size = 0;       ///< 0: none
  std::string where;  ///< "file:line: '% block-size: N'", for messages
};

/// Local: the block size a Matrix Market file declares in a comment line
/// `% block-size: N` before its size line (spaces optional, N from 1 to 16),
/// or size 0 if none. Throws core::InputError for such a line with another
/// value, or for two such lines that disagree (file:line).
BlockSizeComment block_size_comment(const std::filesystem::path& path);

/// Collective: the near-null space of this rank's rows (`file_rows`: each
/// local row's row in the file, whose node is file_row / block_size and
/// whose component file_row % block_size), with the coordinates of
/// `coordinates` (empty: none) read on rank 0 and broadcast. Throws
/// core::InputError on every rank for a block size that does not divide the
/// rows, coordinates with a block size other than 2 or 3, a coordinates
/// file that is not nodes x block_size, or one that cannot be read.
/// `origin` names where the block size came from in those messages.
std::shared_ptr<const precond::NearNullSpace> load_near_null_space(
    const par::Comm& comm, int block_size, std::string_view origin,
    const std::filesystem::path& coordinates, std::int64_t global_rows,
    std::span<const std::int64_t> file_rows);

/// Collective: sets pc.block_size (`given.block_size`, else the `% block-size: N`
/// comment of `matrix` read on rank 0, else 1) and, for a block size above 1
/// or with coordinates, pc.near_null (load_near_null_space). Throws
/// core::InputError on every rank for a bad comment or coordinates file.
void add_near_null_space(const par::Comm& comm, const SchwarzConfig& given,
                         const std::filesystem::path& matrix, std::int64_t global_rows,
                         std::span<const std::int64_t> file_rows, precond::PcSettings& pc);

}  // namespace asyncsolve::app
