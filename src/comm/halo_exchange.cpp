#include "asyncsolve/comm/halo_exchange.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <stdexcept>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "halo_strategies.hpp"

namespace asyncsolve::comm {

namespace {

/// In the order of HaloStrategy.
constexpr std::array<std::string_view, 5> kStrategyNames{"waitall", "alltoallv", "ialltoallv",
                                                         "neighbor", "persistent"};

}  // namespace

std::vector<std::string> halo_exchange_names() {
  return {kStrategyNames.begin(), kStrategyNames.end()};
}

std::string_view halo_strategy_name(HaloStrategy strategy) noexcept {
  return core::enum_name(kStrategyNames, strategy);
}

HaloStrategy parse_halo_strategy(std::string_view name) {
  if (const auto strategy = core::enum_parse<HaloStrategy>(kStrategyNames, name)) return *strategy;
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
