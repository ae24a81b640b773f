#include "asyncsolve/comm/halo_exchange.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <stdexcept>

#include "alltoallv_halo.hpp"
#include "asyncsolve/core/error.hpp"
#include "neighbor_halo.hpp"
#include "persistent_halo.hpp"
#include "waitall_halo.hpp"

namespace asyncsolve::comm {

namespace {

constexpr std::array kStrategies{HaloStrategy::waitall, HaloStrategy::alltoallv,
                                 HaloStrategy::ialltoallv, HaloStrategy::neighbor,
                                 HaloStrategy::persistent};

}  // namespace

std::vector<std::string> halo_exchange_names() {
  std::vector<std::string> names;
  for (const HaloStrategy s : kStrategies) names.emplace_back(halo_strategy_name(s));
  return names;
}

std::string_view halo_strategy_name(HaloStrategy strategy) noexcept {
  switch (strategy) {
    case HaloStrategy::waitall:
      return "waitall";
    case HaloStrategy::alltoallv:
      return "alltoallv";
    case HaloStrategy::ialltoallv:
      return "ialltoallv";
    case HaloStrategy::neighbor:
      return "neighbor";
    case HaloStrategy::persistent:
      return "persistent";
  }
  return "?";
}

HaloStrategy parse_halo_strategy(std::string_view name) {
  for (const HaloStrategy s : kStrategies)
    if (halo_strategy_name(s) == name) return s;
  throw core::InputError(
      fmt::format("--halo '{}': expected one of {}", name, fmt::join(halo_exchange_names(), ", ")));
}

std::unique_ptr<HaloExchange> make_halo_exchange(std::string_view name,
                                                 const grid::Decomposition& decomposition,
                                                 const grid::Field& shape,
                                                 Neighbourhood neighbourhood) {
  return make_halo_exchange(parse_halo_strategy(name), decomposition, shape, neighbourhood);
}

std::unique_ptr<HaloExchange> make_halo_exchange(HaloStrategy strategy,
                                                 const grid::Decomposition& decomposition,
                                                 const grid::Field& shape,
                                                 Neighbourhood neighbourhood) {
  switch (strategy) {
    case HaloStrategy::waitall:
      return std::make_unique<WaitallHalo>(decomposition, shape, neighbourhood);
    case HaloStrategy::alltoallv:
      return std::make_unique<AlltoallvHalo>(decomposition, shape, neighbourhood, false);
    case HaloStrategy::ialltoallv:
      return std::make_unique<AlltoallvHalo>(decomposition, shape, neighbourhood, true);
    case HaloStrategy::neighbor:
      return std::make_unique<NeighborHalo>(decomposition, shape, neighbourhood);
    case HaloStrategy::persistent:
      return std::make_unique<PersistentHalo>(decomposition, shape, neighbourhood);
  }
  throw std::logic_error("make_halo_exchange: unhandled strategy");
}

}  // namespace asyncsolve::comm
