#pragma once
/// Compute cost accounting for simulation: the fast kernels (ops) report the
/// bytes they stream through memory; a meter installed at start-up turns them
/// into simulated compute time (the simulation build, par/simulation.hpp).
/// Without a meter, charge_bytes does nothing.

namespace asyncsolve::core {

/// Receives the bytes a kernel just streamed.
using CostMeter = void (*)(double bytes) noexcept;

/// Installs the meter (nullptr: none). Set once at start-up, before any
/// kernel runs (par::Environment does in the simulation build).
void set_cost_meter(CostMeter meter) noexcept;

/// Reports `bytes` streamed by a kernel on this rank to the meter, if any.
/// Thread-safe; the reference (`_ref`) kernels do not report.
void charge_bytes(double bytes) noexcept;

}  // namespace asyncsolve::core
