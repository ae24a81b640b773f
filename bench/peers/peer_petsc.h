/* What the PETSc drivers (petsc_cg.c, petsc_mtx.c) share beyond
 * peer_common.h: the timed solves after the one KSPSetUp. Header only, so
 * that peer_common stays free of PETSc (hypre_pcg links it too). */
#ifndef ASYNCSOLVE_PEER_PETSC_H
#define ASYNCSOLVE_PEER_PETSC_H

#include <petscksp.h>

#include "peer_common.h"

/* --repeat-solve: `n` timed KSPSolves of A x = b after the one KSPSetUp (the
 * preconditioner is not set up again), x = 0 before each (KSPSolve zeroes
 * x, the guess being zero). time_s[s] is solve s's time, maximum over the
 * ranks; its[s] its iterations; *all_converged whether every solve
 * converged; *last_reason the last solve's reason. Collective. */
static inline PetscErrorCode peer_ksp_timed_solves(KSP ksp, Vec b, Vec x, int n, double* time_s,
                                                   int* its, int* all_converged,
                                                   KSPConvergedReason* last_reason) {
  PetscFunctionBeginUser;
  *all_converged = 1;
  for (int s = 0; s < n; ++s) {
    PetscInt iterations = 0;
    PetscCall(VecSet(x, 0.0));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    const double t0 = MPI_Wtime();
    PetscCall(KSPSolve(ksp, b, x));
    time_s[s] = peer_max_over_ranks(MPI_Wtime() - t0, PETSC_COMM_WORLD);
    PetscCall(KSPGetIterationNumber(ksp, &iterations));
    PetscCall(KSPGetConvergedReason(ksp, last_reason));
    its[s] = (int)iterations;
    if (*last_reason <= 0) *all_converged = 0;
  }
  PetscFunctionReturn(0);
}

#endif
