/* NAME
 *     petsc_cg - asyncsolve's model problems solved by PETSc's KSPCG or KSPPIPECG
 *
 * PURPOSE
 *     The PETSc peer of asyncsolve's cg, pcg1 and pipecg: the same matrix, the
 *     same right-hand side, x0 = 0, the same stopping test (||b - Ax||_2 <=
 *     rtol ||b||_2 on the recursively updated residual), timed around
 *     KSPSolve only, so that asyncsolve's time per iteration can be set beside
 *     a widely used library's on the same machine in the same run.
 *
 *     The matrix is an MPIAIJ (CSR) matrix from a 3-D DMDA: DMDA_STENCIL_STAR
 *     for the 7-point ones problem, DMDA_STENCIL_BOX for the 27-point
 *     laplace27, stencil width 1, no ghost boundary (Dirichlet points are
 *     eliminated, so a boundary row simply has fewer entries). The process
 *     grid and the ownership ranges are asyncsolve's (MPI_Dims_create, dims[0]
 *     along x, blocks differing by at most one point, the longer ones first),
 *     given to DMDACreate3d explicitly; PETSc numbers its ranks x fastest
 *     where asyncsolve's Cartesian communicator numbers them z fastest, so
 *     the boxes are the same but may sit on other ranks.
 *
 *     Stopping test (KSPConvergedDefault): with a zero initial guess the
 *     reference norm rnorm0 is the norm of the initial residual r0 = b in the
 *     KSP's norm type; it stops at the first iteration n with
 *     rnorm_n <= max(rtol * rnorm0, atol); here atol = 0 and the divergence
 *     tolerance is 1e30 (never reached). KSP_NORM_UNPRECONDITIONED makes
 *     rnorm_n = ||r_n||_2 of the recursively updated residual (KSPCG: its own
 *     VecNorm, one reduction more per iteration than the natural norm;
 *     KSPPIPECG: fused into the pipelined reduction, and the test of r_n comes
 *     one PC application and one product after r_n was formed). --norm
 *     natural tests sqrt(r'Br) / sqrt(b'Bb) instead, which on these
 *     constant-diagonal matrices (B = I or I/diag) is the same ratio.
 *
 * USAGE
 *     mpiexec -n P petsc_cg --problem ones --global 128,128,128 --ksp cg --pc none
 *     mpiexec -n P petsc_cg --problem laplace27 --local 60,60,60 --ksp cg --pc jacobi
 *     mpiexec -n P petsc_cg --problem ones --global 128,128,128 --ksp cg --pc gamg|hypre
 *         (gamg: PCGAMG with PETSc's defaults; hypre: PCHYPRE BoomerAMG with PETSc's
 *         default hypre options; both set up inside KSPSetUp, so in setup_s)
 *         [--rtol 1e-6] [--max-it 10000] [--warmup 0] [--norm unpreconditioned]
 *         [--repeat-solve N]
 *     PETSc's own options come only from PETSC_OPTIONS (e.g. PETSC_OPTIONS=-log_view);
 *     KSPSetFromOptions runs after the settings above, so they can override them.
 *
 * OUTPUT
 *     One JSON object on stdout from rank 0 (see README.md). time_s: the
 *     timed KSPSolve, maximum over ranks, after KSPSetUp (which builds the
 *     Jacobi diagonal and the work vectors) and --warmup untimed solves.
 *     --repeat-solve N: N timed solves after the one setup, each from x0 = 0,
 *     listed in repeat_solves (time_s and iterations are the first's).
 *     residual: ||b - Ax||_2 / ||b||_2 recomputed after the (last) solve.
 *     Exit codes: 0 converged, 2 bad input, 3 not converged, 4 PETSc error.
 */
#include <petscdmda.h>
#include <petscksp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_common.h"
#include "peer_petsc.h"

/* A = the problem's stencil matrix, b its right-hand side, both on da. */
static PetscErrorCode assemble(DM da, const PeerOptions* o, Mat* A, Vec* b) {
  PetscInt xs, ys, zs, xm, ym, zm;
  PetscScalar*** bb;
  MatStencil row, cols[27];
  PetscScalar vals[27];
  int off[26][3];
  double nval[26];

  PetscFunctionBeginUser;
  PetscCall(DMCreateMatrix(da, A));
  PetscCall(DMCreateGlobalVector(da, b));
  PetscCall(DMDAGetCorners(da, &xs, &ys, &zs, &xm, &ym, &zm));
  PetscCall(DMDAVecGetArray(da, *b, &bb));
  for (PetscInt k = zs; k < zs + zm; ++k)
    for (PetscInt j = ys; j < ys + ym; ++j)
      for (PetscInt i = xs; i < xs + xm; ++i) {
        double diag;
        const int n = peer_stencil_row(o, (int)i, (int)j, (int)k, &diag, off, nval);
        row.i = i;
        row.j = j;
        row.k = k;
        row.c = 0;
        cols[0] = row;
        vals[0] = diag;
        for (int e = 0; e < n; ++e) {
          cols[e + 1].i = i + off[e][0];
          cols[e + 1].j = j + off[e][1];
          cols[e + 1].k = k + off[e][2];
          cols[e + 1].c = 0;
          vals[e + 1] = nval[e];
        }
        PetscCall(MatSetValuesStencil(*A, 1, &row, n + 1, cols, vals, INSERT_VALUES));
        bb[k][j][i] = peer_rhs(o, (int)i, (int)j, (int)k);
      }
  PetscCall(DMDAVecRestoreArray(da, *b, &bb));
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(const PeerOptions* o, int ranks, int* exit_code) {
  DM da;
  Mat A;
  Vec b, x, r;
  KSP ksp;
  PC pc;
  PetscInt* l[3];
  MatInfo info;
  KSPType ksp_type;
  KSPNormType norm_type;
  KSPConvergedReason reason;
  PetscInt its;
  PetscReal bnorm, rnorm, err_inf = NAN;
  char version[128];
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCall(PetscGetVersion(version, sizeof version));

  /* Ownership ranges: asyncsolve's block partition along each axis. */
  for (int a = 0; a < 3; ++a) {
    PetscCall(PetscMalloc1(o->dims[a], &l[a]));
    for (int p = 0; p < o->dims[a]; ++p)
      l[a][p] = peer_block_range(o->global[a], o->dims[a], p).count;
  }

  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double setup_t0 = MPI_Wtime();
  PetscCall(DMDACreate3d(PETSC_COMM_WORLD, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE, DM_BOUNDARY_NONE,
                         o->problem == PEER_PROBLEM_ONES ? DMDA_STENCIL_STAR : DMDA_STENCIL_BOX,
                         o->global[0], o->global[1], o->global[2], o->dims[0], o->dims[1],
                         o->dims[2], 1, 1, l[0], l[1], l[2], &da));
  PetscCall(DMSetUp(da));
  PetscCall(assemble(da, o, &A, &b));
  PetscCall(VecDuplicate(b, &x));
  PetscCall(VecDuplicate(b, &r));

  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, A, A));
  PetscCall(KSPSetType(ksp, strcmp(o->ksp, "pipecg") == 0 ? KSPPIPECG : KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  if (strcmp(o->pc, "gamg") == 0) {
    PetscCall(PCSetType(pc, PCGAMG)); /* PETSc's defaults (smoothed aggregation) */
  } else if (strcmp(o->pc, "hypre") == 0) {
    PetscCall(PCSetType(pc, PCHYPRE)); /* BoomerAMG with PETSc's default hypre options */
    PetscCall(PCHYPRESetType(pc, "boomeramg"));
  } else {
    PetscCall(PCSetType(pc, strcmp(o->pc, "jacobi") == 0 ? PCJACOBI : PCNONE));
  }
  PetscCall(KSPSetNormType(
      ksp, strcmp(o->norm, "natural") == 0 ? KSP_NORM_NATURAL : KSP_NORM_UNPRECONDITIONED));
  /* rtol relative to the initial residual norm (= ||b|| in that norm, x0 = 0),
     no absolute floor, no divergence test in practice. */
  PetscCall(KSPSetTolerances(ksp, o->rtol, 0.0, 1e30, o->max_it));
  PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
  PetscCall(KSPSetFromOptions(ksp));
  PetscCall(KSPSetUp(ksp));
  const double setup_s = peer_max_over_ranks(MPI_Wtime() - setup_t0, PETSC_COMM_WORLD);

  for (int w = 0; w < o->warmup; ++w) PetscCall(KSPSolve(ksp, b, x));

  /* The timed solves (--repeat-solve, after the one KSPSetUp): x0 = 0 each
     time (KSPSolve zeroes x, the guess being zero); the preconditioner is not
     set up again, the operator being unchanged. time_s is the first. */
  double* solve_time_s;
  int* solve_its;
  int all_converged = 1;
  peer_alloc_solves(o->repeat_solve, &solve_time_s, &solve_its);
  PetscCall(peer_ksp_timed_solves(ksp, b, x, o->repeat_solve, solve_time_s, solve_its,
                                  &all_converged, &reason));
  const double time_s = solve_time_s[0];
  its = solve_its[0];
  PetscCall(KSPGetType(ksp, &ksp_type));
  PetscCall(KSPGetNormType(ksp, &norm_type));

  /* True residual ||b - Ax|| / ||b||, and for ones the error against u = 1. */
  PetscCall(MatMult(A, x, r));
  PetscCall(VecAYPX(r, -1.0, b));
  PetscCall(VecNorm(r, NORM_2, &rnorm));
  PetscCall(VecNorm(b, NORM_2, &bnorm));
  if (o->problem == PEER_PROBLEM_ONES) {
    PetscCall(VecShift(x, -1.0));
    PetscCall(VecNorm(x, NORM_INFINITY, &err_inf));
  }
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));

  PeerResult res;
  memset(&res, 0, sizeof res);
  res.peer = "petsc";
  res.version = version;
  res.ksp = ksp_type;
  res.pc = o->pc;
  res.norm = KSPNormTypes[norm_type];
  res.reason = KSPConvergedReasons[reason];
  res.ranks = ranks;
  res.rows = (long long)o->global[0] * o->global[1] * o->global[2];
  res.nonzeros = (long long)info.nz_used;
  res.iterations = (int)its;
  res.time_s = time_s;
  res.setup_s = setup_s;
  res.residual = bnorm > 0 ? rnorm / bnorm : NAN;
  res.error_inf = err_inf;
  res.converged = all_converged;
  res.solves = o->repeat_solve;
  res.solve_time_s = solve_time_s;
  res.solve_iterations = solve_its;
  if (rank == 0) peer_print_json(o, &res);
  free(solve_time_s);
  free(solve_its);
  *exit_code = res.converged ? PEER_EXIT_OK : PEER_EXIT_NOT_CONVERGED;

  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&b));
  PetscCall(MatDestroy(&A));
  PetscCall(DMDestroy(&da));
  for (int a = 0; a < 3; ++a) PetscCall(PetscFree(l[a]));
  PetscFunctionReturn(0);
}

int main(int argc, char** argv) {
  PeerOptions o;
  char err[512] = "";
  int rank = 0, ranks = 1, exit_code = PEER_EXIT_FAILURE;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  /* Same argv on every rank, so every rank reaches the same verdict. */
  if (peer_parse_options("petsc", argc, argv, &o, err, sizeof err) != 0 ||
      (!o.help && peer_plan(&o, ranks, err, sizeof err) != 0)) {
    if (rank == 0) fprintf(stderr, "petsc_cg: %s\n", err);
    MPI_Finalize();
    return PEER_EXIT_BAD_INPUT;
  }
  if (o.help) {
    if (rank == 0) peer_print_usage("petsc");
    MPI_Finalize();
    return PEER_EXIT_OK;
  }

  /* PETSc sees none of our arguments: its options come from PETSC_OPTIONS. */
  int petsc_argc = 1;
  char* petsc_args[2] = {argv[0], NULL};
  char** petsc_argv = petsc_args;
  if (PetscInitialize(&petsc_argc, &petsc_argv, NULL, NULL) != 0) {
    MPI_Abort(MPI_COMM_WORLD, PEER_EXIT_FAILURE);
  }
  if (run(&o, ranks, &exit_code) != 0) {
    /* PETSc has printed the error; a rank may be left inside a collective. */
    MPI_Abort(MPI_COMM_WORLD, PEER_EXIT_FAILURE);
  }
  PetscFinalize();
  MPI_Finalize();
  return exit_code;
}
