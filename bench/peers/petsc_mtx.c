/* NAME
 *     petsc_mtx - a Matrix Market matrix solved by a PETSc KSP, or its MatMult timed
 *
 * PURPOSE
 *     The PETSc peer of `asyncsolve solve --matrix FILE.mtx` and of
 *     bench/spmv on the same file: the matrix is read with MatLoad from the
 *     PETSc binary file that bench/mtx2petsc writes from the Matrix Market
 *     file through asyncsolve's own reader (so both sides hold the very same
 *     matrix), as an MPIAIJ matrix with PETSc's default row distribution
 *     (contiguous blocks, the first rows % P ranks one row more: asyncsolve's
 *     --partition block). b = A * 1 and x0 = 0, as asyncsolve without --rhs.
 *
 *     --ksp cg: KSPCG with --pc none, jacobi, gamg (PCGAMG, PETSc defaults) or hypre
 *     (PCHYPRE BoomerAMG, PETSc defaults; both set up in KSPSetUp, so in
 *     setup_s, which also holds MatLoad), the unpreconditioned norm,
 *     ||r_n||_2 <= rtol ||b||_2 (as petsc_cg.c; see README.md), timed around
 *     KSPSolve only.
 *     --pc asm: PCASM, one subdomain per rank (the rank's rows) grown by --overlap D
 *     layers (MatIncreaseOverlap), --asm-type basic|restrict, exact subdomain solves
 *     (-sub_ksp_type preonly -sub_pc_type lu), asyncsolve's --pc asm.
 *     --ksp richardson: KSPRICHARDSON (damping 1) with the same preconditioner: with
 *     --pc asm --asm-type restrict the synchronous RAS iteration.
 *     --block-size N: the matrix's block size (PCHYPRE then passes num_functions N).
 *     --coordinates FILE.mtx: the nodes' coordinates (a Matrix Market array, one row
 *     per node, one column per dimension equal to --block-size, 2 or 3, as
 *     asyncsolve's --coordinates): the rigid-body modes (MatNullSpaceCreateRigidBody)
 *     become the matrix's near-null space, which PCGAMG interpolates exactly.
 *     --ksp gmres, fgmres, pgmres, bcgs, pipebcgs: KSPGMRES, KSPFGMRES,
 *     KSPPGMRES, KSPBCGS, KSPPIPEBCGS with right preconditioning and the
 *     unpreconditioned norm (asyncsolve's --method gmres, fgmres, pgmres,
 *     bicgstab, pipebicgstab), --restart for the GMRES family,
 *     --cgs-refinement for gmres and fgmres (PETSc's default is never;
 *     asyncsolve's ifneeded), and --pc ilu too: PCBJACOBI with ILU(0) on each
 *     rank's block, PETSc's default and asyncsolve's --pc ilu0.
 *     --ksp spmv: --iterations MatMult calls y = A x, x_i = 1 + i mod 7 (the
 *     global index), after --warmup untimed ones; time per MatMult.
 *
 * USAGE
 *     mpiexec -n P petsc_mtx --matrix FILE.petsc
 *         [--ksp cg|gmres|fgmres|pgmres|bcgs|pipebcgs|richardson|spmv]
 *         [--pc none|jacobi|gamg|hypre|ilu|asm] [--restart 30]
 *         [--cgs-refinement never|ifneeded|always] [--overlap 1] [--asm-type basic|restrict]
 *         [--block-size 1] [--coordinates FILE.mtx]
 *         [--rtol 1e-6] [--max-it 10000] [--iterations 100] [--warmup 5]
 *         [--repeat-solve N]  (cg: N timed KSPSolves after the one KSPSetUp, each from
 *         x0 = 0, listed in repeat_solves; time_s and iterations are the first's)
 *     PETSc's own options come only from PETSC_OPTIONS.
 *
 * OUTPUT
 *     One JSON object on stdout from rank 0, with the fields run_peers.py
 *     reads of every peer: iterations (KSP iterations, or MatMult calls),
 *     time_s (max over ranks), time_per_iteration_s, converged, residual
 *     (||b - Ax|| / ||b|| after the solve; spmv: 0), version, reason, norm,
 *     setup_s, rows, nonzeros. Exit codes: 0 converged, 2 bad input, 3 not
 *     converged, 4 PETSc error.
 */
#include <petscksp.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_common.h"
#include "peer_petsc.h"

enum { EXIT_BAD_INPUT = 2, EXIT_NOT_CONVERGED = 3, EXIT_PETSC = 4 };

typedef struct {
  const char* matrix;
  char ksp[16];
  char pc[16];
  double rtol;
  int max_it;
  int iterations;
  int warmup;
  int repeat_solve;
  int restart;
  char refinement[16];
  int overlap;
  char asm_type[16];
  int block_size;
  const char* coordinates;
} Options;

/* The KSP types --ksp names besides cg and spmv, with PETSc's names. */
static const char* const nonsymmetric_ksp[][2] = {{"gmres", KSPGMRES},
                                                  {"fgmres", KSPFGMRES},
                                                  {"pgmres", KSPPGMRES},
                                                  {"bcgs", KSPBCGS},
                                                  {"pipebcgs", KSPPIPEBCGS}};

/* PETSc's KSPType of --ksp `name`, or NULL for cg and spmv. */
static const char* nonsymmetric_type(const char* name) {
  for (size_t i = 0; i < sizeof nonsymmetric_ksp / sizeof nonsymmetric_ksp[0]; ++i)
    if (strcmp(name, nonsymmetric_ksp[i][0]) == 0) return nonsymmetric_ksp[i][1];
  return NULL;
}

static int parse(int argc, char** argv, Options* o, char* err, size_t n) {
  o->matrix = NULL;
  strcpy(o->ksp, "cg");
  strcpy(o->pc, "none");
  o->rtol = 1e-6;
  o->max_it = 10000;
  o->iterations = 100;
  o->warmup = 5;
  o->repeat_solve = 1;
  o->restart = 30;
  strcpy(o->refinement, "ifneeded");
  o->overlap = 1;
  strcpy(o->asm_type, "basic");
  o->block_size = 1;
  o->coordinates = NULL;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (v == NULL) {
      snprintf(err, n, "%s: expected a value", a);
      return 1;
    }
    if (strcmp(a, "--matrix") == 0) {
      o->matrix = v;
    } else if (strcmp(a, "--ksp") == 0 &&
               (strcmp(v, "cg") == 0 || strcmp(v, "spmv") == 0 || strcmp(v, "richardson") == 0 ||
                nonsymmetric_type(v) != NULL)) {
      snprintf(o->ksp, sizeof o->ksp, "%s", v);
    } else if (strcmp(a, "--pc") == 0 &&
               (strcmp(v, "none") == 0 || strcmp(v, "jacobi") == 0 || strcmp(v, "gamg") == 0 ||
                strcmp(v, "hypre") == 0 || strcmp(v, "ilu") == 0 || strcmp(v, "asm") == 0)) {
      snprintf(o->pc, sizeof o->pc, "%s", v);
    } else if (strcmp(a, "--restart") == 0) {
      o->restart = atoi(v);
    } else if (strcmp(a, "--cgs-refinement") == 0 &&
               (strcmp(v, "never") == 0 || strcmp(v, "ifneeded") == 0 ||
                strcmp(v, "always") == 0)) {
      snprintf(o->refinement, sizeof o->refinement, "%s", v);
    } else if (strcmp(a, "--overlap") == 0) {
      o->overlap = atoi(v);
    } else if (strcmp(a, "--asm-type") == 0 &&
               (strcmp(v, "basic") == 0 || strcmp(v, "restrict") == 0)) {
      snprintf(o->asm_type, sizeof o->asm_type, "%s", v);
    } else if (strcmp(a, "--block-size") == 0) {
      o->block_size = atoi(v);
    } else if (strcmp(a, "--coordinates") == 0) {
      o->coordinates = v;
    } else if (strcmp(a, "--rtol") == 0) {
      o->rtol = atof(v);
    } else if (strcmp(a, "--max-it") == 0) {
      o->max_it = atoi(v);
    } else if (strcmp(a, "--iterations") == 0) {
      o->iterations = atoi(v);
    } else if (strcmp(a, "--warmup") == 0) {
      o->warmup = atoi(v);
    } else if (strcmp(a, "--repeat-solve") == 0) {
      o->repeat_solve = atoi(v);
    } else {
      snprintf(err, n, "%s %s: unknown option or value (see the header of petsc_mtx.c)", a, v);
      return 1;
    }
    ++i;
  }
  if (o->matrix == NULL) {
    snprintf(err, n, "expected --matrix FILE.petsc (bench/mtx2petsc writes one)");
    return 1;
  }
  if (!(o->rtol > 0 && o->rtol < 1) || o->max_it < 1 || o->iterations < 1 || o->warmup < 0 ||
      o->repeat_solve < 1 || o->repeat_solve > 1000000 || o->restart < 1 || o->overlap < 0 ||
      o->overlap > 8 || o->block_size < 1 || o->block_size > 16) {
    snprintf(err, n,
             "--rtol in (0, 1), --max-it, --iterations and --restart >= 1, --warmup >= 0, "
             "--repeat-solve 1 to 1000000, --overlap 0 to 8, --block-size 1 to 16");
    return 1;
  }
  if (o->coordinates != NULL && o->block_size != 2 && o->block_size != 3) {
    snprintf(err, n, "--coordinates needs --block-size 2 or 3 (the coordinates' dimension)");
    return 1;
  }
  return 0;
}

/* Reads the Matrix Market array `path` (nodes x dim, column-major) and sets the
   rigid-body modes of the nodes' coordinates as A's near-null space; rows
   [lo, hi) of A are this rank's, node by node (lo and hi multiples of dim). */
static PetscErrorCode set_rigid_body_modes(Mat A, const char* path, int dim) {
  PetscInt lo, hi, rows, cols;
  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  PetscCall(MatGetSize(A, &rows, &cols));
  FILE* f = fopen(path, "r");
  if (f == NULL) SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot open --coordinates file");
  char line[1024];
  long nodes = -1, columns = -1;
  while (fgets(line, sizeof line, f) != NULL) {
    if (line[0] == '%' || line[0] == '\n') continue;
    if (sscanf(line, "%ld %ld", &nodes, &columns) != 2) nodes = -1;
    break;
  }
  if (nodes * dim != (long)rows || columns != dim) {
    fclose(f);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
            "--coordinates: expected one row per node and --block-size columns");
  }
  double* xyz = malloc(sizeof(double) * (size_t)(nodes * dim));
  for (long k = 0; k < nodes * dim; ++k) {
    if (fscanf(f, "%lf", &xyz[k]) != 1) {
      free(xyz);
      fclose(f);
      SETERRQ(PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "--coordinates: too few values");
    }
  }
  fclose(f);
  Vec coords;
  PetscCall(VecCreate(PetscObjectComm((PetscObject)A), &coords));
  PetscCall(VecSetSizes(coords, hi - lo, rows));
  PetscCall(VecSetBlockSize(coords, dim));
  PetscCall(VecSetFromOptions(coords));
  PetscScalar* c;
  PetscCall(VecGetArray(coords, &c));
  for (PetscInt i = lo; i < hi; ++i) c[i - lo] = xyz[(i % dim) * nodes + i / dim];
  PetscCall(VecRestoreArray(coords, &c));
  free(xyz);
  MatNullSpace space;
  PetscCall(MatNullSpaceCreateRigidBody(coords, &space));
  PetscCall(MatSetNearNullSpace(A, space));
  PetscCall(MatNullSpaceDestroy(&space));
  PetscCall(VecDestroy(&coords));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(const Options* o, int* exit_code) {
  Mat A;
  Vec x, b, r;
  PetscViewer viewer;
  PetscInt rows, cols, lo, hi, its = 0;
  MatInfo info;
  char version[128];
  PetscMPIInt rank, ranks;
  double time_s = 0, residual = 0;
  int converged = 1;
  const char* reason = "spmv";
  const char* norm = "none";

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &ranks));
  PetscCall(PetscGetVersion(version, sizeof version));
  PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
  const double setup_t0 = MPI_Wtime();
  PetscCall(PetscViewerBinaryOpen(PETSC_COMM_WORLD, o->matrix, FILE_MODE_READ, &viewer));
  PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
  PetscCall(MatSetType(A, MATAIJ));
  if (o->block_size > 1) PetscCall(MatSetBlockSize(A, o->block_size));
  PetscCall(MatLoad(A, viewer));
  PetscCall(PetscViewerDestroy(&viewer));
  PetscCall(MatGetSize(A, &rows, &cols));
  PetscCall(MatCreateVecs(A, &x, &b));
  PetscCall(VecDuplicate(b, &r));
  PetscCall(MatGetInfo(A, MAT_GLOBAL_SUM, &info));
  if (o->coordinates != NULL) PetscCall(set_rigid_body_modes(A, o->coordinates, o->block_size));

  if (strcmp(o->ksp, "spmv") == 0) {
    /* x_i = 1 + i mod 7, as bench/spmv */
    PetscScalar* xx;
    PetscCall(VecGetOwnershipRange(x, &lo, &hi));
    PetscCall(VecGetArray(x, &xx));
    for (PetscInt i = lo; i < hi; ++i) xx[i - lo] = 1.0 + (double)(i % 7);
    PetscCall(VecRestoreArray(x, &xx));
    const double setup_s = peer_max_over_ranks(MPI_Wtime() - setup_t0, PETSC_COMM_WORLD);
    for (int w = 0; w < o->warmup; ++w) PetscCall(MatMult(A, x, b));
    PetscCallMPI(MPI_Barrier(PETSC_COMM_WORLD));
    const double t0 = MPI_Wtime();
    for (int it = 0; it < o->iterations; ++it) PetscCall(MatMult(A, x, b));
    time_s = peer_max_over_ranks(MPI_Wtime() - t0, PETSC_COMM_WORLD);
    its = o->iterations;
    if (rank == 0) {
      printf(
          "{\"peer\": \"petsc\", \"version\": \"%s\", \"ksp\": \"spmv\", \"pc\": \"none\", "
          "\"ranks\": %d, \"rows\": %lld, \"nonzeros\": %lld, \"iterations\": %d, "
          "\"time_s\": %.9g, \"time_per_iteration_s\": %.9g, \"setup_s\": %.9g, "
          "\"converged\": true, \"residual\": 0, \"reason\": \"%s\", \"norm\": \"%s\"}\n",
          version, ranks, (long long)rows, (long long)info.nz_used, (int)its, time_s,
          time_s / (double)its, setup_s, reason, norm);
    }
  } else {
    KSP ksp;
    PC pc;
    KSPConvergedReason why;
    PetscReal rnorm, bnorm;
    PetscCall(VecSet(x, 1.0));
    PetscCall(MatMult(A, x, b)); /* b = A * 1 */
    PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    const char* type = nonsymmetric_type(o->ksp);
    PetscCall(KSPSetType(ksp, type != NULL                        ? type
                              : strcmp(o->ksp, "richardson") == 0 ? KSPRICHARDSON
                                                                  : KSPCG));
    if (type != NULL) {
      /* right preconditioning: the residual tested is b - A x itself */
      PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
      if (strstr(type, "gmres") != NULL) PetscCall(KSPGMRESSetRestart(ksp, o->restart));
      if (strcmp(type, KSPGMRES) == 0 || strcmp(type, KSPFGMRES) == 0) {
        PetscCall(KSPGMRESSetCGSRefinementType(
            ksp, strcmp(o->refinement, "never") == 0    ? KSP_GMRES_CGS_REFINE_NEVER
                 : strcmp(o->refinement, "always") == 0 ? KSP_GMRES_CGS_REFINE_ALWAYS
                                                        : KSP_GMRES_CGS_REFINE_IFNEEDED));
      }
    }
    PetscCall(KSPGetPC(ksp, &pc));
    if (strcmp(o->pc, "ilu") == 0) {
      /* block Jacobi, ILU(0) on each rank's block (PETSc's default) */
      PetscCall(PCSetType(pc, PCBJACOBI));
    } else if (strcmp(o->pc, "gamg") == 0) {
      PetscCall(PCSetType(pc, PCGAMG)); /* PETSc's defaults */
    } else if (strcmp(o->pc, "hypre") == 0) {
      PetscCall(PCSetType(pc, PCHYPRE)); /* BoomerAMG, PETSc's default hypre options */
      PetscCall(PCHYPRESetType(pc, "boomeramg"));
    } else if (strcmp(o->pc, "asm") == 0) {
      /* one subdomain per rank, exact local solves */
      PetscCall(PCSetType(pc, PCASM));
      PetscCall(PCASMSetOverlap(pc, o->overlap));
      PetscCall(
          PCASMSetType(pc, strcmp(o->asm_type, "basic") == 0 ? PC_ASM_BASIC : PC_ASM_RESTRICT));
      PetscCall(PetscOptionsSetValue(NULL, "-sub_ksp_type", "preonly"));
      PetscCall(PetscOptionsSetValue(NULL, "-sub_pc_type", "lu"));
    } else {
      PetscCall(PCSetType(pc, strcmp(o->pc, "jacobi") == 0 ? PCJACOBI : PCNONE));
    }
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPSetTolerances(ksp, o->rtol, 0.0, 1e30, o->max_it));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
    PetscCall(KSPSetFromOptions(ksp));
    PetscCall(KSPSetUp(ksp));
    const double setup_s = peer_max_over_ranks(MPI_Wtime() - setup_t0, PETSC_COMM_WORLD);
    /* The timed solves (--repeat-solve, after the one KSPSetUp; the
       preconditioner is not set up again): x0 = 0 each time. */
    double* solve_time_s;
    int* solve_its;
    peer_alloc_solves(o->repeat_solve, &solve_time_s, &solve_its);
    PetscCall(peer_ksp_timed_solves(ksp, b, x, o->repeat_solve, solve_time_s, solve_its, &converged,
                                    &why));
    time_s = solve_time_s[0];
    its = solve_its[0];
    PetscCall(MatMult(A, x, r));
    PetscCall(VecAYPX(r, -1.0, b));
    PetscCall(VecNorm(r, NORM_2, &rnorm));
    PetscCall(VecNorm(b, NORM_2, &bnorm));
    residual = bnorm > 0 ? rnorm / bnorm : NAN;
    if (rank == 0) {
      printf(
          "{\"peer\": \"petsc\", \"version\": \"%s\", \"ksp\": \"%s\", \"pc\": \"%s\", "
          "\"restart\": %d, \"cgs_refinement\": \"%s\", "
          "\"overlap\": %d, \"asm_type\": \"%s\", \"block_size\": %d, "
          "\"ranks\": %d, \"rows\": %lld, \"nonzeros\": %lld, \"iterations\": %d, "
          "\"time_s\": %.9g, \"time_per_iteration_s\": %.9g, \"setup_s\": %.9g, "
          "\"residual\": %.9g, \"reason\": \"%s\", \"norm\": \"unpreconditioned\", "
          "\"repeat_solve\": %d, \"rigid_body_modes\": %s, ",
          version, o->ksp, o->pc, o->restart, o->refinement, o->overlap, o->asm_type, o->block_size,
          ranks, (long long)rows, (long long)info.nz_used, (int)its, time_s,
          its > 0 ? time_s / (double)its : 0.0, setup_s, residual, KSPConvergedReasons[why],
          o->repeat_solve, o->coordinates != NULL ? "true" : "false");
      peer_print_solves(o->repeat_solve, solve_time_s, solve_its);
      printf("\"converged\": %s}\n", converged ? "true" : "false");
    }
    free(solve_time_s);
    free(solve_its);
    PetscCall(KSPDestroy(&ksp));
  }
  fflush(stdout);
  *exit_code = converged ? 0 : EXIT_NOT_CONVERGED;
  PetscCall(VecDestroy(&r));
  PetscCall(VecDestroy(&b));
  PetscCall(VecDestroy(&x));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char** argv) {
  Options o;
  char err[512] = "";
  int rank = 0, exit_code = EXIT_PETSC;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (parse(argc, argv, &o, err, sizeof err) != 0) {
    if (rank == 0) fprintf(stderr, "petsc_mtx: %s\n", err);
    MPI_Finalize();
    return EXIT_BAD_INPUT;
  }
  int petsc_argc = 1;
  char* petsc_args[2] = {argv[0], NULL};
  char** petsc_argv = petsc_args;
  if (PetscInitialize(&petsc_argc, &petsc_argv, NULL, NULL) != 0) MPI_Abort(MPI_COMM_WORLD, 4);
  if (run(&o, &exit_code) != 0) MPI_Abort(MPI_COMM_WORLD, EXIT_PETSC);
  PetscFinalize();
  MPI_Finalize();
  return exit_code;
}
