#include "asyncsolve/sparse/row_names.hpp"

#include <fmt/format.h>

namespace asyncsolve::sparse {

std::string RowNames::name(std::int64_t row) const {
  switch (origin) {
    case RowOrigin::file:
      return fmt::format("file row {}", row + 1);
    case RowOrigin::array:
      return fmt::format("row {} of A", row);
    case RowOrigin::distributed:
      break;
  }
  return fmt::format("global row {}", row);
}

}  // namespace asyncsolve::sparse
