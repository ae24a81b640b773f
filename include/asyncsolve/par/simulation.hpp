#pragma once
/// The simulation build (SimGrid SMPI, `make sim`): which clock asyncsolve
/// reads and how computation is charged to a simulated host. One
/// implementation file per build: src/par/simulation_smpi.cpp (compiled with
/// smpicxx, ASYNCSOLVE_SIM=ON) and src/par/simulation_none.cpp (every other
/// build). See sim/README.md.

namespace asyncsolve::par {

/// True in the simulation build: times are simulated seconds (MPI_Wtime under
/// SMPI), kernels are charged to the simulated host by the bytes they stream.
bool is_simulated() noexcept;

/// Installs the simulation's process clock (core::set_clock) and kernel
/// cost meter (core::set_cost_meter); nothing in other builds. Called by
/// Environment right after MPI_Init_thread; local.
void install_simulation_hooks() noexcept;

/// Occupies this rank for `seconds` of its own time, as a slow node or an OS
/// interruption would: a busy wait on the real clock, or simulated compute
/// time under SMPI. Local.
void occupy_for(double seconds) noexcept;

}  // namespace asyncsolve::par
