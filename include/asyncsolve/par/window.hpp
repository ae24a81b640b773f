#pragma once
/// The size to ask MPI_Win_allocate for.
#include <mpi.h>

namespace asyncsolve::par {

/// `bytes` rounded up to whole 64-byte cache lines: what every asyncsolve
/// window asks MPI_Win_allocate for. MPICH 4.0 (ch4) lays the windows of a
/// node end to end in one shared segment, and its MPI_Put into a rank whose
/// window starts 8 bytes past a 16-byte boundary lands 8 bytes early, in the
/// previous rank's window, while its MPI_Fetch_and_op reaches the right
/// place: over rma channels the flags arrived and the data did not (a 2x2
/// halo of 45 and 54 doubles hung, channel-tree sums were wrong, Stencil2D's
/// rma variants failed validation). Padding every window keeps every start
/// aligned; it is legal for any MPI, and Open MPI's osc/sm pads its own
/// shared windows to 64 bytes likewise.
constexpr MPI_Aint padded_window_bytes(MPI_Aint bytes) {
  constexpr MPI_Aint line = 64;
  return (bytes + line - 1) / line * line;
}

}  // namespace asyncsolve::par
