#pragma once
/// Preconditioners behind one interface, for the Krylov solvers (pcg1, pcg2,
/// pcg-overlap, pipecg and the nonsymmetric methods through `--pc`):
///
/// - `none`: M = I;
/// - `jacobi`: M = diag(A) (the solvers fuse it into their vector kernels);
/// - `chebyshev[:DEGREE]`: z = p(D^-1 A) D^-1 r, p the Chebyshev polynomial
///   of degree DEGREE (default 3) approximating 1/t on [lambda_min,
///   lambda_max] of D^-1 A; the bounds are estimated once at setup by a few
///   Jacobi-preconditioned CG (Lanczos) steps. An apply makes DEGREE
///   mat-vecs and no inner product, so no global reduction;
/// - `boomeramg`: one cycle of hypre's BoomerAMG (optional at build time,
///   boomeramg_available()), set up from the operator's rows; with a block
///   size > 1 the systems version (num_functions, each row's function);
/// - `ilu0`: block-Jacobi ILU(0): each rank's diagonal block factorised
///   incompletely on its own pattern; an apply is a forward and a backward
///   substitution on the owned rows, no communication;
/// - `asm`: additive Schwarz (schwarz.hpp): subdomains grown by an overlap,
///   each factorised once by a local solver (local_solver.hpp), optionally
///   with a coarse space (coarse.hpp).
///
/// A preconditioner sees the operator through PcOperator, which the solvers
/// layer implements for the structured stencils and for the distributed CSR
/// matrix: the mat-vec (with its halo exchange in flight while the interior
/// is computed), the diagonal, and the owned rows in a global numbering.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/grid/field.hpp"
#include "asyncsolve/ops/vector.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/precond/local_solver.hpp"
#include "asyncsolve/precond/near_null_space.hpp"
#include "asyncsolve/sparse/row_names.hpp"

namespace asyncsolve::precond {

/// The preconditioners (see above).
enum class PcKind { none, jacobi, chebyshev, boomeramg, ilu0, additive_schwarz };

/// The names of the preconditioners, in PcKind's order (--pc, documents).
inline constexpr std::array<std::string_view, 6> pc_kind_names{"none",      "jacobi", "chebyshev",
                                                               "boomeramg", "ilu0",   "asm"};

/// "none", "jacobi", "chebyshev", "boomeramg", "ilu0" or "asm".
std::string_view pc_kind_name(PcKind kind);

/// How additive Schwarz adds the subdomains' solutions: basic, z = sum
/// R_i^T A_i^-1 R_i r (symmetric: ASM for CG), or restricted, z = sum
/// R~_i^T A_i^-1 R_i r with R~_i the owned rows only (RAS: no reverse
/// exchange, not symmetric; for the nonsymmetric Krylov methods).
enum class SchwarzType { basic, restricted };

/// The names of the Schwarz types, in SchwarzType's order (--pc-option type=).
inline constexpr std::array<std::string_view, 2> schwarz_type_names{"basic", "restricted"};

/// --coarse: none (one level) or nicolaides (one coarse vector per
/// subdomain and near-null vector: the partition of unity of the owned rows,
/// or the rigid-body modes with --coordinates).
enum class CoarseKind { none, nicolaides };

/// The names of the coarse spaces, in CoarseKind's order (--coarse).
inline constexpr std::array<std::string_view, 2> coarse_names{"none", "nicolaides"};

/// "none" or "nicolaides".
std::string_view coarse_name(CoarseKind kind);

/// The Schwarz settings (--overlap, --local-solver, --coarse).
struct SchwarzSettings {
  int overlap = 1;
  LocalSolverKind local_solver = LocalSolverKind::automatic;
  CoarseKind coarse = CoarseKind::none;
  SchwarzType type = SchwarzType::basic;
};

/// chebyshev's --pc-option settings.
struct ChebyshevSettings {
  int lanczos_steps = 10;          ///< CG (Lanczos) steps estimating the eigenvalue bounds, 2-200
  double lambda_max_factor = 1.1;  ///< safety factor on the largest eigenvalue estimate, 1-10
};

/// boomeramg's --pc-option settings (hypre's codes for the choices are
/// boomeramg.cpp's). The values of each choice are in the order of their
/// names in pc_option_summary.
struct BoomerAmgSettings {
  enum class Coarsen { hmis, pmis, falgout, cljp, rs };
  enum class Interp { ext_i, ext, standard, classical, direct };
  enum class Relax { l1_sym_gs, sym_gs, jacobi, l1_jacobi, chebyshev, gs, l1_gs };
  enum class Cycle { v, w };
  Coarsen coarsen = Coarsen::hmis;
  Interp interp = Interp::ext_i;
  Relax relax = Relax::l1_sym_gs;
  Cycle cycle = Cycle::v;
  int cycles = 1;                  ///< cycles per apply, 1-10
  int sweeps = 1;                  ///< smoothing sweeps down and up, 1-10
  double strong_threshold = 0.25;  ///< 0-1
  int agg_levels = 0;              ///< levels of aggressive coarsening, 0-10
  int max_levels = 25;             ///< 2-50
  int pmax = 4;                    ///< interpolation elements per row, 0 (no limit)-20
};

/// `--pc` and `--pc-option`, parsed and validated (plain values, identical
/// on every rank), with what the run adds (the near-null space).
struct PcSettings {
  PcKind kind = PcKind::none;
  int degree = 3;               ///< chebyshev: the polynomial's degree (mat-vecs per apply)
  ChebyshevSettings chebyshev;  ///< kind chebyshev: its options (defaults unless given)
  BoomerAmgSettings boomeramg;  ///< kind boomeramg: its options (defaults unless given)
  /// --pc-option name=value pairs as given, validated and in canonical
  /// spelling, in the order given (a name given twice keeps its last
  /// value): what the result document records. The typed settings above
  /// hold their values.
  std::vector<std::pair<std::string, std::string>> options;
  SchwarzSettings schwarz;  ///< asm
  int block_size = 1;       ///< --block-size (boomeramg: num_functions)
  /// This rank's rows' block structure and coordinates (set by the command
  /// once the rows are known; null: block size 1 in the operator's global
  /// row order, no coordinates).
  std::shared_ptr<const NearNullSpace> near_null;
  /// This rank's rows as the user numbers them, for messages that name a
  /// row (ilu0's zero pivot); unnamed: the distributed numbering. A view,
  /// valid while the preconditioner is set up.
  sparse::RowNames row_names;
};

/// The value of `--pc` as the command line spells it: "chebyshev:5" for a
/// non-default degree, else the kind's name.
std::string pc_text(const PcSettings& settings);

/// Parses `--pc TEXT` (none, jacobi, chebyshev, chebyshev:DEGREE with
/// DEGREE from 1 to 100, boomeramg, ilu0, asm) into settings.kind and settings.degree.
/// Throws core::InputError naming the value and what was expected.
void parse_pc(std::string_view text, PcSettings& settings);

/// Parses `--pc-option` text: name=value pairs separated by commas or
/// newlines (the option may be given several times), each name one that
/// settings.kind takes (pc_option_summary) and each value in its range,
/// into settings.options and the typed settings (settings.chebyshev and
/// settings.boomeramg, first reset to their defaults; asm's type into
/// settings.schwarz.type).
/// Throws core::InputError for a pair without '=', an unknown name or a
/// value out of range, and for any option with `none`, `jacobi` or `ilu0`.
void parse_pc_options(std::string_view text, PcSettings& settings);

/// For a nonsymmetric method (GMRES, BiCGStab: M need not be symmetric):
/// the options not given take their nonsymmetric defaults (boomeramg:
/// relax=l1-gs, forward hybrid Gauss-Seidel; asm: type=restricted, PETSc's
/// PCASM default). Call after parse_pc_options.
void use_nonsymmetric_defaults(PcSettings& settings);

/// "name=value,name=value" of settings.options (empty: none given).
std::string pc_options_text(const PcSettings& settings);

/// The --pc-option names `kind` takes, with their defaults and ranges, as
/// one line of text for --help and messages.
std::string pc_option_summary(PcKind kind);

/// True when this build has hypre's BoomerAMG (ASYNCSOLVE_HYPRE).
bool boomeramg_available();

/// This rank's rows of the operator in a global numbering where each rank's
/// rows follow those of the ranks before it (the numbering hypre needs),
/// columns global. Vector entries are in the same order as PcOperator's
/// gather/scatter.
struct AssembledRows {
  std::int64_t first_row = 0;    ///< global index of this rank's first row
  std::int64_t global_rows = 0;  ///< rows over all ranks
  std::vector<std::int64_t> row_ptr{0};
  std::vector<std::int64_t> col;
  std::vector<double> val;
  int rows() const noexcept { return static_cast<int>(row_ptr.size()) - 1; }
};

/// This rank's diagonal block A_rr (block-Jacobi ILU(0)): its rows in
/// AssembledRows' order with only the columns of its own rows, as local
/// indices 0 to rows - 1, ascending in each row, repeated columns summed.
struct DiagonalBlock {
  std::int64_t first_row = 0;    ///< global index of this rank's first row
  std::int64_t global_rows = 0;  ///< rows over all ranks
  std::vector<std::int64_t> row_ptr{0};
  std::vector<int> col;
  std::vector<double> val;
  int rows() const noexcept { return static_cast<int>(row_ptr.size()) - 1; }
};

/// The diagonal block of `rows.size() - 1` rows whose entry e has column
/// col[e] - first and value val[e]: a column outside [0, rows) is another
/// rank's and dropped. Local; rows already ascending are copied as they are.
DiagonalBlock make_diagonal_block(std::span<const std::int64_t> row_ptr,
                                  std::span<const std::int64_t> col, std::span<const double> val,
                                  std::int64_t first);
DiagonalBlock make_diagonal_block(std::span<const std::int64_t> row_ptr,
                                  std::span<const std::int32_t> col, std::span<const double> val,
                                  std::int64_t first);

/// The operator as a preconditioner sees it (implemented by the solvers
/// layer for stencils and distributed CSR matrices).
class PcOperator {
 public:
  virtual ~PcOperator() = default;
  /// The communicator of the operator's ranks.
  virtual const par::Comm& comm() const = 0;
  /// A zero vector laid out for the operator.
  virtual grid::Field make_vector() const = 0;
  /// Collective: out = A in (the halo exchange of `in` in flight while the
  /// interior is computed). Counts toward the preconditioner's time, not
  /// the solver's mat-vec phases.
  virtual void apply(grid::Field& in, grid::Field& out) = 0;
  /// D^-1 for D = diag(A) (a constant for the stencils, per row otherwise).
  virtual ops::Scaling inverse_diagonal() const = 0;
  /// Collective: this rank's rows (for an algebraic setup: BoomerAMG).
  virtual AssembledRows assemble() = 0;
  /// Collective where assemble() is: this rank's diagonal block. The
  /// default takes it from assemble(); an operator that holds its rows with
  /// local column indices takes it from them, without assembling a copy.
  virtual DiagonalBlock diagonal_block();
  /// Whether assemble() is in fact local (no communication), so that a
  /// rank whose assemble() fails may skip it without the others waiting.
  virtual bool assembles_locally() const { return false; }
  /// Local: the owned entries of `v` in row order (AssembledRows' order).
  virtual void gather(const grid::Field& v, std::span<double> out) const = 0;
  /// Local: writes `in` (row order) into the owned entries of `v`.
  virtual void scatter(std::span<const double> in, grid::Field& v) const = 0;
  /// Collective: max over the rows of sum_j |a_ij| / |a_ii|, the same on
  /// every rank: no eigenvalue of D^-1 A exceeds it (Gershgorin: each lies
  /// in a disc about 1 of radius sum_{j != i} |a_ij / a_ii|). The default
  /// goes through assemble(); an operator that knows its rows computes it
  /// from them.
  virtual double gershgorin_bound();
};

/// Bad input found at a preconditioner's setup: the operator is not
/// positive definite (chebyshev's Lanczos steps met p^T A p <= 0 or an
/// eigenvalue estimate <= 0), which the preconditioner and the CG methods
/// need. Thrown identically on every rank (from reduced values), so that
/// the command can add what to use instead.
class NotPositiveDefinite : public core::InputError {
 public:
  using core::InputError::InputError;
};

/// What a preconditioner's setup found and what it was set up with, for the
/// result document ("method.pc_setup").
struct PcReport {
  std::string name;    ///< pc_kind_name
  double setup_s = 0;  ///< this rank's setup time
  long matvecs = 0;    ///< mat-vecs made by the applies (chebyshev)
  long applies = 0;    ///< applies made
  /// Numbers setup found (chebyshev: lambda_min, lambda_max, the Lanczos
  /// steps; boomeramg: levels), identical on every rank.
  std::vector<std::pair<std::string, double>> numbers;
  /// The settings it ran with, defaults included (boomeramg: coarsen=hmis, ...).
  std::vector<std::pair<std::string, std::string>> settings;
};

/// A preconditioner set up on one operator. Borrows the operator, which
/// must outlive it.
class Preconditioner {
 public:
  virtual ~Preconditioner() = default;
  /// Collective over the operator's communicator: z = M^-1 r on the owned
  /// rows (`r` is not changed; its halo may be).
  virtual void apply(grid::Field& r, grid::Field& z) = 0;
  /// What setup found, and the counts so far.
  virtual const PcReport& report() const = 0;
  /// Collective: frees what setup made (hypre's objects). Call once, at a
  /// point every rank reaches; apply is not allowed after it.
  virtual void free() {}
};

/// Collective over op.comm(): sets up settings.kind on `op` (timed into the
/// report's setup_s). Throws core::InputError for boomeramg in a build
/// without hypre, and core::CollectiveFailure (on every rank) when hypre's
/// setup fails, with hypre's error code in one line; core::InputError on
/// every rank for ilu0 with a zero pivot.
std::unique_ptr<Preconditioner> make_preconditioner(const PcSettings& settings, PcOperator& op);

}  // namespace asyncsolve::precond
