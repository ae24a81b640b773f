// boomeramg: one cycle (by default) of hypre's BoomerAMG as M^-1, set up
// once from the operator's rows through hypre's IJ interface into ParCSR.
// Defaults (what a hypre user expects of BoomerAMG as a CG preconditioner):
// HMIS coarsening, extended+i interpolation (at most 4 elements per row),
// l1-scaled hybrid symmetric Gauss-Seidel (plain hybrid symmetric GS,
// relax=sym-gs, is Jacobi between ranks and can make M^-1 indefinite on
// strongly coupled partitions: pyamg's local_disc_galerkin_diffusion on 8
// ranks breaks down), one sweep down and up, one V-cycle, tol 0
// (no residual norm, so no inner product inside an apply), every one
// settable with --pc-option (pc_options.cpp). Under a nonsymmetric method
// (GMRES, BiCGStab: M need not be symmetric) the smoother defaults to l1-scaled
// hybrid forward Gauss-Seidel (relax=l1-gs, hypre's 13; use_nonsymmetric_defaults),
// which follows an upwind convection's flow in the matrix's order.
//
// Per apply: the cycle's own halo exchanges on every level (hypre's, not
// overlapped), no global reduction; r is copied into hypre's vector and the
// result out of it.
#include <HYPRE.h>
#include <HYPRE_IJ_mv.h>
#include <HYPRE_parcsr_ls.h>
#include <HYPRE_utilities.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "pc_option_specs.hpp"
#include "precond_impl.hpp"

namespace asyncsolve::precond {

bool boomeramg_available() { return true; }

namespace detail {

namespace {

// hypre's numbers for the choices, indexed by the enums' values.
constexpr std::array<int, 5> coarsen_codes{10, 8, 6, 0, 3};  // hmis pmis falgout cljp rs
constexpr std::array<int, 5> interp_codes{6, 14, 8, 0, 3};   // ext+i ext standard classical direct
// l1-sym-gs sym-gs jacobi l1-jacobi chebyshev gs l1-gs
constexpr std::array<int, 7> relax_codes{8, 6, 0, 18, 16, 3, 13};
constexpr std::array<int, 2> cycle_codes{1, 2};  // v w

template <std::size_t N, class E>
int code(const std::array<int, N>& codes, E value) {
  return codes.at(static_cast<std::size_t>(value));
}

class BoomerAmg final : public Preconditioner {
 public:
  BoomerAmg(const PcSettings& settings, PcOperator& op) : op_(op) {
    const double t0 = core::now_s();
    report_.name = "boomeramg";
    static const bool initialised = [] {
      HYPRE_Init();
      return true;
    }();
    (void)initialised;
    const AssembledRows rows = op.assemble();
    if (rows.global_rows > INT_MAX) {
      throw core::InputError(fmt::format(
          "--pc boomeramg: {} rows, and this hypre numbers rows with 32-bit integers: expected "
          "at most {}",
          rows.global_rows, INT_MAX));
    }
    MPI_Comm comm = op.comm().get();
    n_ = rows.rows();
    const int lower = static_cast<int>(rows.first_row);
    const int upper = lower + n_ - 1;
    std::vector<int> ncols(static_cast<std::size_t>(n_));
    std::vector<int> row_ids(static_cast<std::size_t>(n_));
    std::vector<int> cols(rows.col.size());
    for (int i = 0; i < n_; ++i) {
      ncols[i] = static_cast<int>(rows.row_ptr[i + 1] - rows.row_ptr[i]);
      row_ids[i] = lower + i;
    }
    for (std::size_t e = 0; e < rows.col.size(); ++e) cols[e] = static_cast<int>(rows.col[e]);
    indices_ = row_ids;
    values_.resize(static_cast<std::size_t>(n_));

    int error = HYPRE_IJMatrixCreate(comm, lower, upper, lower, upper, &ij_a_);
    error |= HYPRE_IJMatrixSetObjectType(ij_a_, HYPRE_PARCSR);
    error |= HYPRE_IJMatrixSetRowSizes(ij_a_, ncols.data());
    error |= HYPRE_IJMatrixInitialize(ij_a_);
    error |= HYPRE_IJMatrixSetValues(ij_a_, n_, ncols.data(), row_ids.data(), cols.data(),
                                     rows.val.data());
    error |= HYPRE_IJMatrixAssemble(ij_a_);
    void* object = nullptr;
    error |= HYPRE_IJMatrixGetObject(ij_a_, &object);
    a_ = static_cast<HYPRE_ParCSRMatrix>(object);
    for (HYPRE_IJVector* v : {&ij_b_, &ij_x_}) {
      error |= HYPRE_IJVectorCreate(comm, lower, upper, v);
      error |= HYPRE_IJVectorSetObjectType(*v, HYPRE_PARCSR);
      error |= HYPRE_IJVectorInitialize(*v);
      error |= HYPRE_IJVectorAssemble(*v);
    }
    error |= HYPRE_IJVectorGetObject(ij_b_, &object);
    b_ = static_cast<HYPRE_ParVector>(object);
    error |= HYPRE_IJVectorGetObject(ij_x_, &object);
    x_ = static_cast<HYPRE_ParVector>(object);
    check(error, "assembling the matrix (HYPRE_IJMatrixAssemble)");

    const BoomerAmgSettings& amg = settings.boomeramg;
    error = HYPRE_BoomerAMGCreate(&solver_);
    created_ = true;
    error |= HYPRE_BoomerAMGSetCoarsenType(solver_, code(coarsen_codes, amg.coarsen));
    error |= HYPRE_BoomerAMGSetInterpType(solver_, code(interp_codes, amg.interp));
    error |= HYPRE_BoomerAMGSetRelaxType(solver_, code(relax_codes, amg.relax));
    error |= HYPRE_BoomerAMGSetCycleType(solver_, code(cycle_codes, amg.cycle));
    error |= HYPRE_BoomerAMGSetMaxIter(solver_, amg.cycles);
    error |= HYPRE_BoomerAMGSetNumSweeps(solver_, amg.sweeps);
    error |= HYPRE_BoomerAMGSetStrongThreshold(solver_, amg.strong_threshold);
    error |= HYPRE_BoomerAMGSetAggNumLevels(solver_, amg.agg_levels);
    error |= HYPRE_BoomerAMGSetMaxLevels(solver_, amg.max_levels);
    error |= HYPRE_BoomerAMGSetPMaxElmts(solver_, amg.pmax);
    error |= HYPRE_BoomerAMGSetTol(solver_, 0.0);
    error |= HYPRE_BoomerAMGSetPrintLevel(solver_, 0);
    if (settings.block_size > 1) {
      // The systems version: coarsening and interpolation within each
      // function (unknown of the node). Rows are not interleaved node by
      // node once partitioned and renumbered, so each row's function is
      // given (hypre takes the array and frees it with the solver).
      error |= HYPRE_BoomerAMGSetNumFunctions(solver_, settings.block_size);
      const NearNullSpace* space = settings.near_null.get();
      if (space != nullptr && static_cast<int>(space->component.size()) == n_) {
        auto* dof_func = static_cast<HYPRE_Int*>(std::malloc(sizeof(HYPRE_Int) * std::max(n_, 1)));
        if (dof_func == nullptr) throw std::bad_alloc();
        for (int i = 0; i < n_; ++i) dof_func[i] = space->component[i];
        // hypre owns the array from here and frees it with the solver.
        // NOLINTNEXTLINE(clang-analyzer-unix.Malloc)
        error |= HYPRE_BoomerAMGSetDofFunc(solver_, dof_func);
      }
    }
    check(error, "configuring BoomerAMG");
    error = HYPRE_BoomerAMGSetup(solver_, a_, b_, x_);
    check(error, "HYPRE_BoomerAMGSetup");
    report_.numbers = {{"global_rows", static_cast<double>(rows.global_rows)},
                       {"num_functions", static_cast<double>(settings.block_size)}};
    for (const PcOptionSpec& spec : pc_option_specs(PcKind::boomeramg))
      report_.settings.emplace_back(std::string(spec.name), pc_option_value(spec, settings));
    report_.setup_s = core::now_s() - t0;
  }

  BoomerAmg(const BoomerAmg&) = delete;
  BoomerAmg& operator=(const BoomerAmg&) = delete;

  // z = one BoomerAMG cycle (from zero) on A z = r.
  void apply(grid::Field& r, grid::Field& z) override {
    op_.gather(r, values_);
    int error = HYPRE_IJVectorSetValues(ij_b_, n_, indices_.data(), values_.data());
    error |= HYPRE_ParVectorSetConstantValues(x_, 0.0);
    error |= HYPRE_BoomerAMGSolve(solver_, a_, b_, x_);
    error |= HYPRE_IJVectorGetValues(ij_x_, n_, indices_.data(), values_.data());
    if (error != 0) {
      // a cycle that did not converge reports HYPRE_ERROR_CONV: one cycle
      // never does, and that is not a failure here
      HYPRE_ClearAllErrors();
    }
    op_.scatter(values_, z);
    ++report_.applies;
  }

  const PcReport& report() const override { return report_; }

  // Collective (hypre's destroy calls free communicators).
  void free() override {
    if (created_) HYPRE_BoomerAMGDestroy(solver_);
    created_ = false;
    if (ij_a_ != nullptr) HYPRE_IJMatrixDestroy(ij_a_);
    if (ij_b_ != nullptr) HYPRE_IJVectorDestroy(ij_b_);
    if (ij_x_ != nullptr) HYPRE_IJVectorDestroy(ij_x_);
    ij_a_ = nullptr;
    ij_b_ = nullptr;
    ij_x_ = nullptr;
  }

 private:
  /// Collective: throws CollectiveFailure on every rank when any rank's
  /// hypre calls returned an error.
  void check(int error, std::string_view what) {
    int code = error;
    MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_BOR, op_.comm().get());
    if (code == 0) return;
    char text[256] = "";
    HYPRE_DescribeError(code, text);
    HYPRE_ClearAllErrors();
    free();
    throw core::CollectiveFailure(
        fmt::format("--pc boomeramg: hypre failed {}: error code {} ({})", what, code, text));
  }

  PcOperator& op_;
  int n_ = 0;
  std::vector<int> indices_;
  std::vector<double> values_;
  HYPRE_IJMatrix ij_a_ = nullptr;
  HYPRE_IJVector ij_b_ = nullptr;
  HYPRE_IJVector ij_x_ = nullptr;
  HYPRE_ParCSRMatrix a_ = nullptr;
  HYPRE_ParVector b_ = nullptr;
  HYPRE_ParVector x_ = nullptr;
  HYPRE_Solver solver_ = nullptr;
  bool created_ = false;
  PcReport report_;
};

}  // namespace

std::unique_ptr<Preconditioner> make_boomeramg(const PcSettings& settings, PcOperator& op) {
  return std::make_unique<BoomerAmg>(settings, op);
}

}  // namespace detail
}  // namespace asyncsolve::precond
