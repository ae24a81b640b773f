#include "asyncsolve/core/timer.hpp"

#include <utility>

namespace asyncsolve::core {

PhaseTimers::PhaseTimers(std::vector<std::string> names)
    : names_(std::move(names)), seconds_(names_.size(), 0.0) {}

}  // namespace asyncsolve::core
