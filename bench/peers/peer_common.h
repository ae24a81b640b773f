/* peer_common.h - what the PETSc and hypre peer drivers share.
 *
 * Both drivers solve asyncsolve's model problems with another library's
 * Krylov solver, so they share the command line, the process grid, the block
 * partition of the global grid, the stencils and right-hand sides, and the
 * one-line JSON result. The partition is asyncsolve's own (grid/decomposition):
 * MPI_Dims_create picks the process grid, dims[0] along x, and an axis of n
 * points is cut into blocks whose sizes differ by at most one, the first
 * n % parts blocks one point longer.
 *
 * Global grid points are numbered 0..N-1 along each axis; a neighbour outside
 * 0..N-1 is a Dirichlet point, eliminated from the matrix.
 *
 * Plain C (C99), no library beyond MPI: the drivers link it with PETSc or
 * hypre, never both.
 */
#ifndef ASYNCSOLVE_BENCH_PEER_COMMON_H
#define ASYNCSOLVE_BENCH_PEER_COMMON_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit codes, asyncsolve's (DESIGN.md): success, bad input, did not converge,
 * runtime failure. */
enum {
  PEER_EXIT_OK = 0,
  PEER_EXIT_BAD_INPUT = 2,
  PEER_EXIT_NOT_CONVERGED = 3,
  PEER_EXIT_FAILURE = 4
};

typedef enum { PEER_PROBLEM_ONES, PEER_PROBLEM_LAPLACE27 } PeerProblem;

/* The command line, parsed identically on every rank (same argv). */
typedef struct {
  PeerProblem problem;
  int have_global, have_local; /* exactly one of --global, --local */
  int global[3];               /* interior points of the whole grid */
  int local[3];                /* --local as given (per rank); 0 with --global */
  int dims[3];                 /* process grid (MPI_Dims_create) */
  char ksp[16];                /* petsc: cg | pipecg; hypre: pcg */
  char pc[16];                 /* petsc: none|jacobi|gamg|hypre; hypre: none|diagscale|boomeramg */
  char norm[24];               /* petsc: unpreconditioned | natural */
  double rtol;                 /* relative tolerance on ||r||_2 / ||b||_2 */
  int max_it;                  /* iteration limit */
  int warmup;                  /* untimed solves before the timed one */
  int repeat_solve;            /* timed solves after the one setup (1 to 1e6), x = 0 before each */
  int help;                    /* --help was given */
} PeerOptions;

/* One block of an axis: points begin .. begin+count-1. */
typedef struct {
  int begin, count;
} PeerRange;

/* Block `index` of `n` points cut into `parts` blocks (asyncsolve's
 * block_range). */
PeerRange peer_block_range(int n, int parts, int index);

/* The block (0..parts-1) that holds point g of an axis of n points. */
int peer_block_of(int n, int parts, int g);

/* Parses argv (argv[0] is skipped). `peer` names the driver ("petsc" or
 * "hypre"); it sets the defaults and which --ksp/--pc values are valid.
 * Returns 0, or -1 with a one-line message in err. Not collective. */
int peer_parse_options(const char* peer, int argc, char** argv, PeerOptions* o, char* err,
                       size_t err_size);

/* The usage text of driver `peer`. */
void peer_print_usage(const char* peer);

/* Picks the process grid for `ranks` and fills o->global from --local.
 * Returns 0, or -1 with a message in err (a grid axis shorter than its number
 * of ranks, or a global grid too large). Not collective; same answer on
 * every rank. */
int peer_plan(PeerOptions* o, int ranks, char* err, size_t err_size);

/* This rank's box of the global grid: coords (row-major over dims, as
 * MPI_Cart_coords numbers them: z fastest) and the box's range per axis. */
void peer_rank_box(const PeerOptions* o, int rank, int coords[3], PeerRange box[3]);

/* The stencil row of global point (i,j,k): diagonal value in *diag, and the
 * in-grid neighbours' offsets and values (at most 26) in off and val.
 * Returns the number of in-grid neighbours. */
int peer_stencil_row(const PeerOptions* o, int i, int j, int k, double* diag, int off[][3],
                     double* val);

/* The right-hand side at global point (i,j,k): for ones, the number of the
 * point's six face neighbours outside the grid (boundary value 1 each); for
 * laplace27, 1. */
double peer_rhs(const PeerOptions* o, int i, int j, int k);

/* The problem's name as on the command line. */
const char* peer_problem_name(PeerProblem p);

/* What a driver reports. NaN doubles are written as null. */
typedef struct {
  const char* peer;    /* "petsc" | "hypre" */
  const char* version; /* library version string */
  const char* ksp;     /* solver name recorded */
  const char* pc;      /* preconditioner recorded */
  const char* norm;    /* norm the stopping test uses, in words */
  const char* reason;  /* library's reason for stopping */
  int ranks;
  long long rows, nonzeros;
  int iterations;
  double time_s;               /* timed solve(s): max over ranks */
  double setup_s;              /* assembly + solver setup, max over ranks (untimed in time_s) */
  double residual;             /* ||b - Ax||_2 / ||b||_2, recomputed after the solve */
  double error_inf;            /* max |x - 1| for ones; NaN otherwise */
  int converged;               /* every timed solve converged */
  int solves;                  /* timed solves run (--repeat-solve; 0: no repeat_solves object) */
  const double* solve_time_s;  /* each timed solve, max over ranks (solves values) */
  const int* solve_iterations; /* each timed solve's iterations (solves values) */
} PeerResult;

/* Prints `"repeat_solves":{"count":N,"time_s":[...],"iterations":[...],
 * "total_time_s":T},` (the shape of asyncsolve's result.repeat_solves).
 * Call on rank 0 only. */
void peer_print_solves(int solves, const double* time_s, const int* iterations);

/* Prints the one-line JSON result on stdout. Call on rank 0 only. */
void peer_print_json(const PeerOptions* o, const PeerResult* r);

/* Allocates the timed solves' records: `n` times and `n` iteration counts
 * (free() both); aborts the job when memory runs out. */
void peer_alloc_solves(int n, double** time_s, int** iterations);

/* Elapsed seconds of a phase, as the maximum over the ranks of comm.
 * Collective. */
double peer_max_over_ranks(double local_s, MPI_Comm comm);

#ifdef __cplusplus
}
#endif

#endif
