/* NAME
 *     hypre_pcg - asyncsolve's model problems solved by hypre's ParCSR PCG
 *
 * PURPOSE
 *     The hypre peer of asyncsolve's pcg1 (and cg): hypre's ij driver's
 *     `-laplacian -27pt -n nx ny nz` matrix (diagonal 26, -1 for each of the
 *     26 neighbours inside the grid) with b = 1, or asyncsolve's 7-point ones
 *     problem, solved from x0 = 0 by HYPRE_ParCSRPCG with the two-norm
 *     stopping test and diagonal scaling (HYPRE_ParCSRDiagScale), BoomerAMG
 *     with asyncsolve's --pc boomeramg defaults (one V-cycle per apply; the
 *     settings are listed where it is created) or no preconditioner, timed
 *     around HYPRE_ParCSRPCGSolve only (HYPRE_ParCSRPCGSetup, which runs
 *     BoomerAMG's setup, is in setup_s).
 *
 *     The matrix is assembled through the IJ interface into ParCSR (CSR
 *     storage). Each rank owns one box of the grid, asyncsolve's block
 *     partition over the MPI_Dims_create process grid with ranks numbered as
 *     MPI_Cart_coords numbers them (z fastest), like the ij driver's
 *     -P px py pz boxes; the rows of a box are numbered x fastest, and the
 *     boxes follow one another in rank order.
 *
 *     Stopping test (hypre_PCGSolve with HYPRE_PCGSetTwoNorm(1), relative
 *     tolerance tol, absolute tolerance 0, no rel_change, no residual
 *     recomputation, no convergence-factor test): bi_prod = <b,b>; after
 *     iteration i has updated x and the recursive residual r, it stops when
 *     <r,r> / <b,b> < tol^2, i.e. ||r||_2 < tol ||b||_2 (strict). With the
 *     two-norm that <r,r> is an inner product of its own: three reductions
 *     per iteration (<s,p>, <r,Cr>, <r,r>).
 *
 * USAGE
 *     mpiexec -n P hypre_pcg --problem laplace27 --local 60,60,60 --pc diagscale
 *     mpiexec -n P hypre_pcg --problem laplace27 --local 60,60,60 --pc boomeramg
 *     mpiexec -n P hypre_pcg --problem ones --global 128,128,128 --pc none
 *         [--rtol 1e-6] [--max-it 10000] [--warmup 0] [--repeat-solve N]
 *
 * OUTPUT
 *     One JSON object on stdout from rank 0 (see README.md). time_s: the
 *     timed HYPRE_ParCSRPCGSolve, maximum over ranks, after
 *     HYPRE_ParCSRPCGSetup and --warmup untimed solves. --repeat-solve N: N
 *     timed solves after the one setup, each from x0 = 0, listed in
 *     repeat_solves (time_s and iterations are the first's). residual:
 *     ||b - Ax||_2 / ||b||_2 recomputed after the (last) solve.
 *     Exit codes: 0 converged, 2 bad input, 3 not converged, 4 hypre error.
 */
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_krylov.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_utilities.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peer_common.h"

/* A hypre call that must succeed; on failure every rank that sees it aborts
   the job (the others may be waiting in a collective). */
#define HYPRE_CHECK(call)                                                                        \
  do {                                                                                           \
    if ((call) != 0) {                                                                           \
      char desc_[256] = "";                                                                      \
      HYPRE_DescribeError(HYPRE_GetError(), desc_);                                              \
      fprintf(stderr, "hypre_pcg: %s failed (%s) at %s:%d\n", #call, desc_, __FILE__, __LINE__); \
      MPI_Abort(MPI_COMM_WORLD, PEER_EXIT_FAILURE);                                              \
    }                                                                                            \
  } while (0)

/* Where every box of the grid starts in the global row numbering. */
typedef struct {
  const PeerOptions* o;
  HYPRE_BigInt* first_row; /* per rank */
} RowMap;

static long long box_points(const PeerRange box[3]) {
  return (long long)box[0].count * box[1].count * box[2].count;
}

static RowMap row_map_create(const PeerOptions* o, int ranks) {
  RowMap m;
  m.o = o;
  m.first_row = malloc(sizeof(HYPRE_BigInt) * (size_t)(ranks + 1));
  if (!m.first_row) MPI_Abort(MPI_COMM_WORLD, PEER_EXIT_FAILURE);
  m.first_row[0] = 0;
  for (int r = 0; r < ranks; ++r) {
    int coords[3];
    PeerRange box[3];
    peer_rank_box(o, r, coords, box);
    m.first_row[r + 1] = m.first_row[r] + (HYPRE_BigInt)box_points(box);
  }
  return m;
}

/* The global row of grid point (i,j,k): its box's first row plus its place
   in the box, x fastest. */
static HYPRE_BigInt row_of(const RowMap* m, int i, int j, int k) {
  const PeerOptions* o = m->o;
  const int g[3] = {i, j, k};
  int c[3];
  PeerRange box[3];
  for (int a = 0; a < 3; ++a) {
    c[a] = peer_block_of(o->global[a], o->dims[a], g[a]);
    box[a] = peer_block_range(o->global[a], o->dims[a], c[a]);
  }
  const int owner = (c[0] * o->dims[1] + c[1]) * o->dims[2] + c[2];
  return m->first_row[owner] + (HYPRE_BigInt)(i - box[0].begin) +
         (HYPRE_BigInt)box[0].count *
             ((HYPRE_BigInt)(j - box[1].begin) + (HYPRE_BigInt)box[1].count * (k - box[2].begin));
}

int main(int argc, char** argv) {
  PeerOptions o;
  char err[512] = "";
  int rank = 0, ranks = 1;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  /* Same argv on every rank, so every rank reaches the same verdict. */
  if (peer_parse_options("hypre", argc, argv, &o, err, sizeof err) != 0 ||
      (!o.help && peer_plan(&o, ranks, err, sizeof err) != 0)) {
    if (rank == 0) fprintf(stderr, "hypre_pcg: %s\n", err);
    MPI_Finalize();
    return PEER_EXIT_BAD_INPUT;
  }
  if (o.help) {
    if (rank == 0) peer_print_usage("hypre");
    MPI_Finalize();
    return PEER_EXIT_OK;
  }
  HYPRE_CHECK(HYPRE_Init());

  const MPI_Comm comm = MPI_COMM_WORLD;
  int coords[3];
  PeerRange box[3];
  peer_rank_box(&o, rank, coords, box);
  RowMap map = row_map_create(&o, ranks);
  const HYPRE_BigInt ilower = map.first_row[rank];
  const HYPRE_BigInt iupper = map.first_row[rank + 1] - 1;
  const HYPRE_Int local_rows = (HYPRE_Int)(iupper - ilower + 1);

  MPI_Barrier(comm);
  const double setup_t0 = MPI_Wtime();

  /* A: one row per owned grid point, diagonal first. */
  HYPRE_IJMatrix ij_A;
  HYPRE_CHECK(HYPRE_IJMatrixCreate(comm, ilower, iupper, ilower, iupper, &ij_A));
  HYPRE_CHECK(HYPRE_IJMatrixSetObjectType(ij_A, HYPRE_PARCSR));
  {
    const HYPRE_Int width = o.problem == PEER_PROBLEM_ONES ? 7 : 27;
    HYPRE_Int* sizes = malloc(sizeof(HYPRE_Int) * (size_t)(local_rows > 0 ? local_rows : 1));
    if (!sizes) MPI_Abort(comm, PEER_EXIT_FAILURE);
    for (HYPRE_Int r = 0; r < local_rows; ++r) sizes[r] = width;
    HYPRE_CHECK(HYPRE_IJMatrixSetRowSizes(ij_A, sizes));
    free(sizes);
  }
  HYPRE_CHECK(HYPRE_IJMatrixInitialize(ij_A));

  HYPRE_IJVector ij_b, ij_x;
  HYPRE_CHECK(HYPRE_IJVectorCreate(comm, ilower, iupper, &ij_b));
  HYPRE_CHECK(HYPRE_IJVectorSetObjectType(ij_b, HYPRE_PARCSR));
  HYPRE_CHECK(HYPRE_IJVectorInitialize(ij_b));
  HYPRE_CHECK(HYPRE_IJVectorCreate(comm, ilower, iupper, &ij_x));
  HYPRE_CHECK(HYPRE_IJVectorSetObjectType(ij_x, HYPRE_PARCSR));
  HYPRE_CHECK(HYPRE_IJVectorInitialize(ij_x));

  HYPRE_BigInt* rows = malloc(sizeof(HYPRE_BigInt) * (size_t)(local_rows > 0 ? local_rows : 1));
  double* bvals = malloc(sizeof(double) * (size_t)(local_rows > 0 ? local_rows : 1));
  double* xvals = calloc((size_t)(local_rows > 0 ? local_rows : 1), sizeof(double));
  if (!rows || !bvals || !xvals) MPI_Abort(comm, PEER_EXIT_FAILURE);

  long long local_nonzeros = 0;
  HYPRE_Int n_local = 0;
  for (int k = box[2].begin; k < box[2].begin + box[2].count; ++k)
    for (int j = box[1].begin; j < box[1].begin + box[1].count; ++j)
      for (int i = box[0].begin; i < box[0].begin + box[0].count; ++i) {
        int off[26][3];
        double nval[26], diag;
        HYPRE_BigInt cols[27];
        double vals[27];
        const int n = peer_stencil_row(&o, i, j, k, &diag, off, nval);
        HYPRE_BigInt row = row_of(&map, i, j, k);
        HYPRE_Int ncols = n + 1;
        cols[0] = row;
        vals[0] = diag;
        for (int e = 0; e < n; ++e) {
          cols[e + 1] = row_of(&map, i + off[e][0], j + off[e][1], k + off[e][2]);
          vals[e + 1] = nval[e];
        }
        HYPRE_CHECK(HYPRE_IJMatrixSetValues(ij_A, 1, &ncols, &row, cols, vals));
        local_nonzeros += ncols;
        rows[n_local] = row;
        bvals[n_local] = peer_rhs(&o, i, j, k);
        ++n_local;
      }
  HYPRE_CHECK(HYPRE_IJMatrixAssemble(ij_A));
  HYPRE_CHECK(HYPRE_IJVectorSetValues(ij_b, local_rows, rows, bvals));
  HYPRE_CHECK(HYPRE_IJVectorSetValues(ij_x, local_rows, rows, xvals));
  HYPRE_CHECK(HYPRE_IJVectorAssemble(ij_b));
  HYPRE_CHECK(HYPRE_IJVectorAssemble(ij_x));

  HYPRE_ParCSRMatrix A;
  HYPRE_ParVector b, x;
  HYPRE_CHECK(HYPRE_IJMatrixGetObject(ij_A, (void**)&A));
  HYPRE_CHECK(HYPRE_IJVectorGetObject(ij_b, (void**)&b));
  HYPRE_CHECK(HYPRE_IJVectorGetObject(ij_x, (void**)&x));

  /* PCG: relative two-norm test, nothing else (see the header). */
  HYPRE_Solver solver;
  HYPRE_CHECK(HYPRE_ParCSRPCGCreate(comm, &solver));
  HYPRE_CHECK(HYPRE_PCGSetTol(solver, o.rtol));
  HYPRE_CHECK(HYPRE_PCGSetAbsoluteTol(solver, 0.0));
  HYPRE_CHECK(HYPRE_PCGSetMaxIter(solver, o.max_it));
  HYPRE_CHECK(HYPRE_PCGSetTwoNorm(solver, 1));
  HYPRE_CHECK(HYPRE_PCGSetRelChange(solver, 0));
  HYPRE_CHECK(HYPRE_PCGSetPrintLevel(solver, 0));
  HYPRE_CHECK(HYPRE_PCGSetLogging(solver, 0));
  HYPRE_Solver amg = NULL;
  if (strcmp(o.pc, "diagscale") == 0) {
    /* x = D^{-1} y; the solver argument of DiagScale is unused. */
    HYPRE_CHECK(
        HYPRE_ParCSRPCGSetPrecond(solver, HYPRE_ParCSRDiagScale, HYPRE_ParCSRDiagScaleSetup, NULL));
  } else if (strcmp(o.pc, "boomeramg") == 0) {
    /* asyncsolve's --pc boomeramg defaults (src/precond/boomeramg.cpp), call
       for call: HMIS coarsening (10), extended+i interpolation (6) with at
       most 4 elements per row, l1-scaled hybrid symmetric Gauss-Seidel (8), one sweep
       down and up, one V-cycle (1) from zero per apply, strength threshold
       0.25, no aggressive coarsening, at most 25 levels, tol 0 (no residual
       norm inside the cycle). PCG zeroes the preconditioner's output before
       every apply, as asyncsolve does. */
    HYPRE_CHECK(HYPRE_BoomerAMGCreate(&amg));
    HYPRE_CHECK(HYPRE_BoomerAMGSetCoarsenType(amg, 10));
    HYPRE_CHECK(HYPRE_BoomerAMGSetInterpType(amg, 6));
    HYPRE_CHECK(HYPRE_BoomerAMGSetRelaxType(amg, 8));
    HYPRE_CHECK(HYPRE_BoomerAMGSetCycleType(amg, 1));
    HYPRE_CHECK(HYPRE_BoomerAMGSetMaxIter(amg, 1));
    HYPRE_CHECK(HYPRE_BoomerAMGSetNumSweeps(amg, 1));
    HYPRE_CHECK(HYPRE_BoomerAMGSetStrongThreshold(amg, 0.25));
    HYPRE_CHECK(HYPRE_BoomerAMGSetAggNumLevels(amg, 0));
    HYPRE_CHECK(HYPRE_BoomerAMGSetMaxLevels(amg, 25));
    HYPRE_CHECK(HYPRE_BoomerAMGSetPMaxElmts(amg, 4));
    HYPRE_CHECK(HYPRE_BoomerAMGSetTol(amg, 0.0));
    HYPRE_CHECK(HYPRE_BoomerAMGSetPrintLevel(amg, 0));
    HYPRE_CHECK(HYPRE_ParCSRPCGSetPrecond(solver, HYPRE_BoomerAMGSolve, HYPRE_BoomerAMGSetup, amg));
  }
  HYPRE_CHECK(HYPRE_ParCSRPCGSetup(solver, A, b, x));
  const double setup_s = peer_max_over_ranks(MPI_Wtime() - setup_t0, comm);

  /* Reaching max_iter sets HYPRE_ERROR_CONV: not a failure here, it is
     reported through `converged`. */
  for (int w = 0; w < o.warmup; ++w) {
    HYPRE_CHECK(HYPRE_ParVectorSetConstantValues(x, 0.0));
    HYPRE_ParCSRPCGSolve(solver, A, b, x);
    HYPRE_ClearAllErrors();
  }

  /* The timed solves (--repeat-solve, after the one HYPRE_ParCSRPCGSetup,
     which is not run again): x0 = 0 each time. time_s is the first. */
  double* solve_time_s;
  int* solve_its;
  int all_converged = 1;
  HYPRE_Int its = 0, converged = 0;
  double final_rel = NAN;
  peer_alloc_solves(o.repeat_solve, &solve_time_s, &solve_its);
  for (int s = 0; s < o.repeat_solve; ++s) {
    HYPRE_CHECK(HYPRE_ParVectorSetConstantValues(x, 0.0));
    MPI_Barrier(comm);
    const double t0 = MPI_Wtime();
    const HYPRE_Int solve_flag = HYPRE_ParCSRPCGSolve(solver, A, b, x);
    solve_time_s[s] = peer_max_over_ranks(MPI_Wtime() - t0, comm);
    if ((solve_flag & ~HYPRE_ERROR_CONV) != 0) HYPRE_CHECK(solve_flag);
    HYPRE_ClearAllErrors();
    HYPRE_CHECK(HYPRE_ParCSRPCGGetNumIterations(solver, &its));
    HYPRE_CHECK(HYPRE_PCGGetConverged(solver, &converged));
    HYPRE_CHECK(HYPRE_ParCSRPCGGetFinalRelativeResidualNorm(solver, &final_rel));
    solve_its[s] = (int)its;
    if (!converged) all_converged = 0;
  }
  const double time_s = solve_time_s[0];
  its = solve_its[0];

  /* True residual ||b - Ax|| / ||b||, and for ones the error against u = 1. */
  HYPRE_IJVector ij_r;
  HYPRE_ParVector r;
  HYPRE_CHECK(HYPRE_IJVectorCreate(comm, ilower, iupper, &ij_r));
  HYPRE_CHECK(HYPRE_IJVectorSetObjectType(ij_r, HYPRE_PARCSR));
  HYPRE_CHECK(HYPRE_IJVectorInitialize(ij_r));
  HYPRE_CHECK(HYPRE_IJVectorAssemble(ij_r));
  HYPRE_CHECK(HYPRE_IJVectorGetObject(ij_r, (void**)&r));
  HYPRE_CHECK(HYPRE_ParVectorCopy(b, r));
  HYPRE_CHECK(HYPRE_ParCSRMatrixMatvec(-1.0, A, x, 1.0, r));
  double rr = 0.0, bb = 0.0;
  HYPRE_CHECK(HYPRE_ParVectorInnerProd(r, r, &rr));
  HYPRE_CHECK(HYPRE_ParVectorInnerProd(b, b, &bb));
  double err_inf = NAN;
  if (o.problem == PEER_PROBLEM_ONES) {
    double local_err = 0.0;
    HYPRE_CHECK(HYPRE_IJVectorGetValues(ij_x, local_rows, rows, xvals));
    for (HYPRE_Int e = 0; e < local_rows; ++e) {
      const double d = fabs(xvals[e] - 1.0);
      if (d > local_err || d != d) local_err = d;
    }
    MPI_Allreduce(&local_err, &err_inf, 1, MPI_DOUBLE, MPI_MAX, comm);
  }
  long long nonzeros = 0;
  MPI_Allreduce(&local_nonzeros, &nonzeros, 1, MPI_LONG_LONG, MPI_SUM, comm);

  char reason[96];
  snprintf(reason, sizeof reason, "%s (final relative residual estimate %.3e)",
           converged ? "converged" : "not converged", final_rel);
  PeerResult res;
  memset(&res, 0, sizeof res);
  res.peer = "hypre";
  res.version = HYPRE_RELEASE_VERSION;
  res.ksp = "pcg";
  res.pc = o.pc;
  res.norm = "two-norm";
  res.reason = reason;
  res.ranks = ranks;
  res.rows = (long long)map.first_row[ranks];
  res.nonzeros = nonzeros;
  res.iterations = (int)its;
  res.time_s = time_s;
  res.setup_s = setup_s;
  res.residual = bb > 0 ? sqrt(rr / bb) : NAN;
  res.error_inf = err_inf;
  res.converged = all_converged;
  res.solves = o.repeat_solve;
  res.solve_time_s = solve_time_s;
  res.solve_iterations = solve_its;
  if (rank == 0) peer_print_json(&o, &res);
  free(solve_time_s);
  free(solve_its);

  HYPRE_IJVectorDestroy(ij_r);
  HYPRE_ParCSRPCGDestroy(solver);
  if (amg) HYPRE_BoomerAMGDestroy(amg);
  HYPRE_IJVectorDestroy(ij_x);
  HYPRE_IJVectorDestroy(ij_b);
  HYPRE_IJMatrixDestroy(ij_A);
  free(xvals);
  free(bvals);
  free(rows);
  free(map.first_row);
  HYPRE_Finalize();
  MPI_Finalize();
  return res.converged ? PEER_EXIT_OK : PEER_EXIT_NOT_CONVERGED;
}
