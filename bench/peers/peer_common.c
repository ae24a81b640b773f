/* peer_common.c - command line, partition, stencils and JSON of the peer
 * drivers (see peer_common.h). */
#include "peer_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PeerRange peer_block_range(int n, int parts, int index) {
  const int base = n / parts;
  const int extra = n % parts;
  PeerRange r;
  r.begin = index * base + (index < extra ? index : extra);
  r.count = base + (index < extra ? 1 : 0);
  return r;
}

int peer_block_of(int n, int parts, int g) {
  const int base = n / parts;
  const int extra = n % parts;
  /* The first `extra` blocks hold base+1 points each. */
  const int long_points = extra * (base + 1);
  if (g < long_points) return g / (base + 1);
  return extra + (g - long_points) / base;
}

const char* peer_problem_name(PeerProblem p) {
  return p == PEER_PROBLEM_ONES ? "ones" : "laplace27";
}

static void set_error(char* err, size_t err_size, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(err, err_size, format, args);
  va_end(args);
}

static int parse_triple(const char* text, int out[3]) {
  int n = 0;
  char tail = 0;
  if (sscanf(text, "%d,%d,%d%n%c", &out[0], &out[1], &out[2], &n, &tail) < 3) return -1;
  if (text[n] != '\0') return -1;
  return (out[0] > 0 && out[1] > 0 && out[2] > 0) ? 0 : -1;
}

static int parse_int(const char* text, int* out) {
  char* end = NULL;
  errno = 0;
  const long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < -2147483647L || v > 2147483647L) return -1;
  *out = (int)v;
  return 0;
}

static int parse_double(const char* text, double* out) {
  char* end = NULL;
  errno = 0;
  const double v = strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(v)) return -1;
  *out = v;
  return 0;
}

static int one_of(const char* value, const char* const* allowed) {
  for (; *allowed; ++allowed)
    if (strcmp(value, *allowed) == 0) return 1;
  return 0;
}

static void copy_name(char* dst, size_t size, const char* src) { snprintf(dst, size, "%s", src); }

void peer_print_usage(const char* peer) {
  const int is_petsc = strcmp(peer, "petsc") == 0;
  printf(
      "usage: %s --problem ones|laplace27 (--global NX,NY,NZ | --local NX,NY,NZ)\n"
      "         [--ksp %s] [--pc %s] [--rtol R] [--max-it K] [--warmup W]\n"
      "         [--repeat-solve N]%s\n"
      "\n"
      "  --problem    ones: 7-point, 6 on the diagonal, -1 per in-grid neighbour,\n"
      "               b = number of out-of-grid neighbours (u = 1 on the boundary),\n"
      "               solution u = 1; laplace27: 27-point, 26 on the diagonal,\n"
      "               -1 per in-grid neighbour, b = 1 (hypre's ij -laplacian -27pt)\n"
      "  --global     interior points of the whole grid\n"
      "  --local      interior points per rank; the grid is local x process grid\n"
      "               (MPI_Dims_create)\n"
      "  --ksp        Krylov method (default %s)\n"
      "  --pc         preconditioner (default none)\n"
      "  --rtol       stop when ||r||_2 <= rtol ||b||_2 (default 1e-6; x0 = 0)\n"
      "  --max-it     iteration limit (default 10000)\n"
      "  --warmup     untimed solves before the timed one (default 0)\n"
      "  --repeat-solve  timed solves after the one setup, each from x0 = 0\n"
      "               (default 1; time_s is the first, repeat_solves lists all)\n"
      "%s"
      "\n"
      "Prints one JSON object on stdout (rank 0). Exit codes: 0 converged,\n"
      "2 bad input, 3 not converged, 4 runtime failure.\n",
      is_petsc ? "petsc_cg" : "hypre_pcg", is_petsc ? "cg|pipecg" : "pcg",
      is_petsc ? "none|jacobi|gamg|hypre" : "none|diagscale|boomeramg",
      is_petsc ? " [--norm unpreconditioned|natural]" : "", is_petsc ? "cg" : "pcg",
      is_petsc ? "  --norm       the norm PETSc's test uses (default unpreconditioned:\n"
                 "               ||b - Ax||_2; natural: sqrt(r'Br), one reduction fewer)\n"
               : "");
}

int peer_parse_options(const char* peer, int argc, char** argv, PeerOptions* o, char* err,
                       size_t err_size) {
  static const char* const petsc_ksp[] = {"cg", "pipecg", NULL};
  static const char* const petsc_pc[] = {"none", "jacobi", "gamg", "hypre", NULL};
  static const char* const hypre_ksp[] = {"pcg", NULL};
  static const char* const hypre_pc[] = {"none", "diagscale", "jacobi", "boomeramg", NULL};
  static const char* const norms[] = {"unpreconditioned", "natural", NULL};
  const int is_petsc = strcmp(peer, "petsc") == 0;
  int have_problem = 0;

  memset(o, 0, sizeof *o);
  copy_name(o->ksp, sizeof o->ksp, is_petsc ? "cg" : "pcg");
  copy_name(o->pc, sizeof o->pc, "none");
  copy_name(o->norm, sizeof o->norm, is_petsc ? "unpreconditioned" : "two-norm");
  o->rtol = 1e-6;
  o->max_it = 10000;
  o->repeat_solve = 1;

  for (int a = 1; a < argc; ++a) {
    const char* name = argv[a];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
      o->help = 1;
      return 0;
    }
    if (a + 1 >= argc) {
      set_error(err, err_size, "%s: expected a value after it (see --help)", name);
      return -1;
    }
    const char* value = argv[++a];
    if (strcmp(name, "--problem") == 0) {
      if (strcmp(value, "ones") == 0)
        o->problem = PEER_PROBLEM_ONES;
      else if (strcmp(value, "laplace27") == 0)
        o->problem = PEER_PROBLEM_LAPLACE27;
      else {
        set_error(err, err_size, "--problem '%s': expected ones or laplace27", value);
        return -1;
      }
      have_problem = 1;
    } else if (strcmp(name, "--global") == 0 || strcmp(name, "--local") == 0) {
      const int is_global = name[2] == 'g';
      if (parse_triple(value, is_global ? o->global : o->local) != 0) {
        set_error(err, err_size, "%s '%s': expected three positive integers NX,NY,NZ", name, value);
        return -1;
      }
      if (is_global)
        o->have_global = 1;
      else
        o->have_local = 1;
    } else if (strcmp(name, "--ksp") == 0) {
      if (!one_of(value, is_petsc ? petsc_ksp : hypre_ksp)) {
        set_error(err, err_size, "--ksp '%s': expected %s", value,
                  is_petsc ? "cg or pipecg" : "pcg");
        return -1;
      }
      copy_name(o->ksp, sizeof o->ksp, value);
    } else if (strcmp(name, "--pc") == 0) {
      if (!one_of(value, is_petsc ? petsc_pc : hypre_pc)) {
        set_error(err, err_size, "--pc '%s': expected %s", value,
                  is_petsc ? "none or jacobi" : "none, diagscale (jacobi: the same) or boomeramg");
        return -1;
      }
      /* hypre's diagonal scaling is Jacobi; record it under hypre's name. */
      copy_name(o->pc, sizeof o->pc,
                (!is_petsc && strcmp(value, "jacobi") == 0) ? "diagscale" : value);
    } else if (strcmp(name, "--norm") == 0 && is_petsc) {
      if (!one_of(value, norms)) {
        set_error(err, err_size, "--norm '%s': expected unpreconditioned or natural", value);
        return -1;
      }
      copy_name(o->norm, sizeof o->norm, value);
    } else if (strcmp(name, "--rtol") == 0) {
      if (parse_double(value, &o->rtol) != 0 || !(o->rtol > 0.0 && o->rtol < 1.0)) {
        set_error(err, err_size, "--rtol '%s': expected a number 0 < rtol < 1", value);
        return -1;
      }
    } else if (strcmp(name, "--max-it") == 0) {
      if (parse_int(value, &o->max_it) != 0 || o->max_it < 1) {
        set_error(err, err_size, "--max-it '%s': expected a positive integer", value);
        return -1;
      }
    } else if (strcmp(name, "--warmup") == 0) {
      if (parse_int(value, &o->warmup) != 0 || o->warmup < 0) {
        set_error(err, err_size, "--warmup '%s': expected an integer >= 0", value);
        return -1;
      }
    } else if (strcmp(name, "--repeat-solve") == 0) {
      if (parse_int(value, &o->repeat_solve) != 0 || o->repeat_solve < 1 ||
          o->repeat_solve > 1000000) {
        set_error(err, err_size, "--repeat-solve '%s': expected an integer from 1 to 1000000",
                  value);
        return -1;
      }
    } else {
      set_error(err, err_size, "%s: unknown option (see --help)", name);
      return -1;
    }
  }
  if (!have_problem) {
    set_error(err, err_size, "--problem missing: expected ones or laplace27");
    return -1;
  }
  if (o->have_global == o->have_local) {
    set_error(err, err_size, "expected exactly one of --global NX,NY,NZ and --local NX,NY,NZ");
    return -1;
  }
  return 0;
}

int peer_plan(PeerOptions* o, int ranks, char* err, size_t err_size) {
  static const char axis[3] = {'x', 'y', 'z'};
  int dims[3] = {0, 0, 0};
  MPI_Dims_create(ranks, 3, dims);
  long long points = 1;
  for (int a = 0; a < 3; ++a) {
    o->dims[a] = dims[a];
    if (o->have_local) {
      const long long n = (long long)o->local[a] * dims[a];
      if (n > (1LL << 30)) {
        set_error(err, err_size, "--local: %lld points along %c, expected at most 2^30", n,
                  axis[a]);
        return -1;
      }
      o->global[a] = (int)n;
    } else if (o->global[a] < dims[a]) {
      set_error(err, err_size,
                "--global %d,%d,%d: %d points along %c cannot be split over %d ranks "
                "(process grid %d,%d,%d)",
                o->global[0], o->global[1], o->global[2], o->global[a], axis[a], dims[a], dims[0],
                dims[1], dims[2]);
      return -1;
    }
    points *= o->global[a];
  }
  /* Both libraries here index rows with 32-bit integers. */
  if (points > 2147483647LL) {
    set_error(err, err_size, "grid of %lld points: expected fewer than 2^31 (32-bit indices)",
              points);
    return -1;
  }
  return 0;
}

void peer_rank_box(const PeerOptions* o, int rank, int coords[3], PeerRange box[3]) {
  /* MPI_Cart_coords order: the last dimension varies fastest. */
  coords[2] = rank % o->dims[2];
  coords[1] = (rank / o->dims[2]) % o->dims[1];
  coords[0] = rank / (o->dims[2] * o->dims[1]);
  for (int a = 0; a < 3; ++a) box[a] = peer_block_range(o->global[a], o->dims[a], coords[a]);
}

static int inside(const PeerOptions* o, int i, int j, int k) {
  return i >= 0 && i < o->global[0] && j >= 0 && j < o->global[1] && k >= 0 && k < o->global[2];
}

int peer_stencil_row(const PeerOptions* o, int i, int j, int k, double* diag, int off[][3],
                     double* val) {
  int n = 0;
  if (o->problem == PEER_PROBLEM_ONES) {
    static const int faces[6][3] = {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0},
                                    {1, 0, 0},  {0, 1, 0},  {0, 0, 1}};
    *diag = 6.0;
    for (int f = 0; f < 6; ++f) {
      if (!inside(o, i + faces[f][0], j + faces[f][1], k + faces[f][2])) continue;
      off[n][0] = faces[f][0];
      off[n][1] = faces[f][1];
      off[n][2] = faces[f][2];
      val[n++] = -1.0;
    }
    return n;
  }
  *diag = 26.0;
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if ((dx | dy | dz) == 0 || !inside(o, i + dx, j + dy, k + dz)) continue;
        off[n][0] = dx;
        off[n][1] = dy;
        off[n][2] = dz;
        val[n++] = -1.0;
      }
  return n;
}

double peer_rhs(const PeerOptions* o, int i, int j, int k) {
  if (o->problem == PEER_PROBLEM_LAPLACE27) return 1.0;
  /* Each face neighbour outside the grid is a boundary point with value 1,
     moved to the right-hand side. */
  int outside = 0;
  outside += (i == 0) + (i == o->global[0] - 1);
  outside += (j == 0) + (j == o->global[1] - 1);
  outside += (k == 0) + (k == o->global[2] - 1);
  return (double)outside;
}

/* v as JSON: the shortest of 15..17 significant digits that reads back
   exactly, or null when not finite. */
static void format_number(double v, char* text, size_t size) {
  if (!isfinite(v)) {
    snprintf(text, size, "null");
    return;
  }
  for (int digits = 15; digits <= 17; ++digits) {
    snprintf(text, size, "%.*g", digits, v);
    if (strtod(text, NULL) == v) break;
  }
}

static void print_number(const char* key, double v, int last) {
  char text[40];
  format_number(v, text, sizeof text);
  printf("\"%s\":%s%s", key, text, last ? "" : ",");
}

static void print_string(const char* key, const char* v) {
  /* Every string written here is a fixed name or a library version: no
     character needs escaping except a quote or backslash, replaced. */
  printf("\"%s\":\"", key);
  for (const char* c = v ? v : ""; *c; ++c) putchar((*c == '"' || *c == '\\') ? '\'' : *c);
  printf("\",");
}

void peer_print_solves(int solves, const double* time_s, const int* iterations) {
  double total_s = 0.0;
  printf("\"repeat_solves\":{\"count\":%d,\"time_s\":[", solves);
  for (int s = 0; s < solves; ++s) {
    char text[40];
    format_number(time_s[s], text, sizeof text);
    printf("%s%s", s > 0 ? "," : "", text);
    total_s += time_s[s];
  }
  printf("],\"iterations\":[");
  for (int s = 0; s < solves; ++s) printf("%s%d", s > 0 ? "," : "", iterations[s]);
  printf("],");
  print_number("total_time_s", total_s, 1);
  printf("},");
}

void peer_alloc_solves(int n, double** time_s, int** iterations) {
  *time_s = malloc(sizeof(double) * (size_t)n);
  *iterations = malloc(sizeof(int) * (size_t)n);
  if (*time_s == NULL || *iterations == NULL) MPI_Abort(MPI_COMM_WORLD, PEER_EXIT_FAILURE);
}

void peer_print_json(const PeerOptions* o, const PeerResult* r) {
  printf("{");
  print_string("peer", r->peer);
  print_string("version", r->version);
  print_string("ksp", r->ksp);
  print_string("pc", r->pc);
  print_string("norm", r->norm);
  print_string("problem", peer_problem_name(o->problem));
  printf("\"global\":[%d,%d,%d],", o->global[0], o->global[1], o->global[2]);
  if (o->have_local)
    printf("\"local\":[%d,%d,%d],", o->local[0], o->local[1], o->local[2]);
  else
    printf("\"local\":null,");
  printf("\"dims\":[%d,%d,%d],", o->dims[0], o->dims[1], o->dims[2]);
  printf("\"ranks\":%d,\"rows\":%lld,\"nonzeros\":%lld,", r->ranks, r->rows, r->nonzeros);
  print_number("rtol", o->rtol, 0);
  printf("\"max_it\":%d,\"warmup\":%d,", o->max_it, o->warmup);
  printf("\"iterations\":%d,", r->iterations);
  print_number("time_s", r->time_s, 0);
  print_number("time_per_iteration_s", r->iterations > 0 ? r->time_s / r->iterations : NAN, 0);
  print_number("setup_s", r->setup_s, 0);
  print_number("residual", r->residual, 0);
  print_number("error_inf", r->error_inf, 0);
  print_string("reason", r->reason);
  printf("\"repeat_solve\":%d,", o->repeat_solve);
  if (r->solves > 0) peer_print_solves(r->solves, r->solve_time_s, r->solve_iterations);
  printf("\"converged\":%s}\n", r->converged ? "true" : "false");
  fflush(stdout);
}

double peer_max_over_ranks(double local_s, MPI_Comm comm) {
  double max_s = 0.0;
  MPI_Allreduce(&local_s, &max_s, 1, MPI_DOUBLE, MPI_MAX, comm);
  return max_s;
}
