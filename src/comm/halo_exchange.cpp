#include "asyncsolve/comm/halo_exchange.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/error.hpp"
#include "alltoallv_halo.hpp"
#include "neighbor_halo.hpp"
#include "persistent_halo.hpp"
#include "waitall_halo.hpp"

namespace asyncsolve::comm {

std::vector<std::string> halo_exchange_names() {
  return {"waitall", "alltoallv", "ialltoallv", "neighbor", "persistent"};
}

std::unique_ptr<HaloExchange> make_halo_exchange(std::string_view name,
                                                 const grid::Decomposition& decomposition,
                                                 const grid::Field& shape,
                                                 Neighbourhood neighbourhood) {
  if (name == "waitall") return std::make_unique<WaitallHalo>(decomposition, shape, neighbourhood);
  if (name == "alltoallv")
    return std::make_unique<AlltoallvHalo>(decomposition, shape, neighbourhood, false);
  if (name == "ialltoallv")
    return std::make_unique<AlltoallvHalo>(decomposition, shape, neighbourhood, true);
  if (name == "neighbor") return std::make_unique<NeighborHalo>(decomposition, shape, neighbourhood);
  if (name == "persistent")
    return std::make_unique<PersistentHalo>(decomposition, shape, neighbourhood);
  throw core::InputError(fmt::format("--halo '{}': expected one of {}", name,
                                     fmt::join(halo_exchange_names(), ", ")));
}

}  // namespace asyncsolve::comm
