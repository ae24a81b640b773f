// asm: additive Schwarz, one or two levels (schwarz.hpp), and its adapter
// to the Preconditioner interface (the operator's rows assembled into a
// DistMatrix at setup).
//
// Per apply (basic, two levels):
//   rs = R_i r                the owned values, then the overlap's (one
//                             exchange over the overlap plan: overlap rows
//                             values in, as many out)
//   ys = A_i^-1 rs            one local solve
//   z  = ys on the owned rows, plus what the neighbours' overlaps hold of
//        them (one exchange over the reversed plan, added on arrival)
//   z += Z E^+ Z^T r          the coarse correction (one MPI_Allgather)
// restricted: z = ys on the owned rows, no reverse exchange.
#include "asyncsolve/precond/schwarz.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "precond_impl.hpp"

namespace asyncsolve::precond {
namespace {

/// The coarse vectors of this rank's owned rows.
std::vector<double> coarse_vectors(const sparse::DistMatrix& m, const NearNullSpace* space,
                                   int& count) {
  const NearNullSpace scalar;
  const NearNullSpace& s = space != nullptr ? *space : scalar;
  const int n = m.local_rows();
  // The rotations about this subdomain's centroid (their span is the same
  // about any point; centred, they are far from parallel to the translations).
  std::vector<double> centre(static_cast<std::size_t>(std::max(s.dimension, 1)), 0.0);
  if (s.dimension > 0 && n > 0) {
    for (int i = 0; i < n; ++i)
      for (int d = 0; d < s.dimension; ++d)
        centre[d] += s.coordinates[static_cast<std::size_t>(i) * s.dimension + d];
    for (double& c : centre) c /= n;
  }
  return near_null_vectors(s, n, centre, count);
}

}  // namespace

Schwarz::Schwarz(const sparse::DistMatrix& matrix, const SchwarzSettings& settings,
                 const NearNullSpace* near_null, comm::HaloStrategy strategy)
    : matrix_(matrix), settings_(settings) {
  const par::Comm& comm = matrix.comm();
  sub_ = sparse::grow_subdomain(matrix, settings.overlap);
  reverse_ = sub_.reverse_plan();
  report_.subdomains = sub_.metrics;
  require_local_solver(settings.local_solver);  // the same on every rank
  std::string failure;
  try {
    solver_ = make_local_solver(settings.local_solver, sub_.matrix);
  } catch (const FactorisationError& e) {
    failure = fmt::format("rank {}'s subdomain ({} rows, overlap {}): {}", comm.rank(),
                          sub_.rows_count(), settings.overlap, e.what());
  }
  // Every rank stops alike, with the first failing rank's message.
  failure = sparse::first_error(comm, failure);
  if (!failure.empty()) throw core::CollectiveBreakdown(failure);
  report_.local = solver_->report();
  double maxima[3] = {report_.local.factor_s, report_.local.memory_bytes, report_.local.fill()};
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, maxima, 3, MPI_DOUBLE, MPI_MAX, comm.get()),
                 "MPI_Allreduce");
  report_.max_factor_s = maxima[0];
  report_.max_memory_bytes = maxima[1];
  report_.max_fill = maxima[2];
  double total = report_.local.memory_bytes;
  par::check_mpi(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_SUM, comm.get()),
                 "MPI_Allreduce");
  report_.total_memory_bytes = total;

  if (settings.coarse == CoarseKind::nicolaides) {
    int count = 0;
    std::vector<double> z = coarse_vectors(matrix, near_null, count);
    coarse_ = std::make_unique<CoarseSpace>(matrix, std::move(z), count);
    report_.coarse_dimension = coarse_->dimension();
    report_.coarse_dropped = coarse_->dropped();
    report_.coarse_setup_s = coarse_->setup_s();
  }
  forward_ = comm::make_sparse_halo_exchange(strategy, sub_.overlap_plan, comm);
  if (settings.type == SchwarzType::basic)
    backward_ = comm::make_sparse_halo_exchange(strategy, reverse_, comm);
  rs_ = grid::Field({sub_.rows_count(), 1, 1}, 0);
  ys_ = grid::Field({sub_.rows_count(), 1, 1}, 0);
  rs_.fill(0.0);
  ys_.fill(0.0);
}

void Schwarz::fetch_overlap() {
  const int m = sub_.overlap_rows();
  forward_->start(rs_);
  forward_->finish(rs_);
  if (m > 0) {
    std::memcpy(rs_.origin() + sub_.owned, forward_->ghosts().data(),
                static_cast<std::size_t>(m) * sizeof(double));
  }
}

void Schwarz::restrict_to_subdomain(std::span<const double> v, std::span<double> out) {
  std::memcpy(rs_.origin(), v.data(), static_cast<std::size_t>(sub_.owned) * sizeof(double));
  fetch_overlap();
  std::memcpy(out.data(), rs_.origin(),
              static_cast<std::size_t>(sub_.rows_count()) * sizeof(double));
}

void Schwarz::apply(std::span<const double> r, std::span<double> z) {
  const int n = sub_.owned;
  const int m = sub_.overlap_rows();
  double* rs = rs_.origin();
  double* ys = ys_.origin();
  // rs = R_i r: the owned values, then the overlap rows' from their owners
  std::memcpy(rs, r.data(), static_cast<std::size_t>(n) * sizeof(double));
  fetch_overlap();
  // ys = A_i^-1 rs
  solver_->solve({rs, static_cast<std::size_t>(n + m)}, {ys, static_cast<std::size_t>(n + m)});
  // z = R~_i^T ys (restricted) or sum_j R_j^T ys_j (basic)
  std::memcpy(z.data(), ys, static_cast<std::size_t>(n) * sizeof(double));
  if (backward_) {
    backward_->start(ys_);
    backward_->finish(ys_);
    const std::span<const double> back = backward_->ghosts();
    // reverse_.recvs[l] is the reverse of overlap_plan.sends[l]
    for (std::size_t l = 0; l < reverse_.recvs.size(); ++l) {
      const sparse::RecvLink& link = reverse_.recvs[l];
      const std::vector<int>& sent = sub_.overlap_plan.sends[l].indices;
      for (int k = 0; k < link.count; ++k) z[sent[k]] += back[link.offset + k];
    }
  }
  // z += Z E^+ Z^T r
  if (coarse_) coarse_->apply_add(matrix_.comm(), r, z);
}

void Schwarz::describe(PcReport& out, int block_size) const {
  const SchwarzReport& s = report_;
  const sparse::SubdomainMetrics& m = s.subdomains;
  out.numbers = {{"overlap", m.overlap},
                 {"block_size", block_size},
                 {"overlap_rows", static_cast<double>(m.overlap_rows)},
                 {"max_overlap_rows", static_cast<double>(m.max_overlap_rows)},
                 {"max_subdomain_rows", static_cast<double>(m.max_rows)},
                 {"max_subdomain_nnz", static_cast<double>(m.max_nnz)},
                 {"overlap_volume", static_cast<double>(m.overlap_volume)},
                 {"halo_volume", static_cast<double>(m.halo_volume)},
                 {"halo_messages", static_cast<double>(m.halo_messages)},
                 {"max_halo_volume", static_cast<double>(m.max_halo_volume)},
                 {"factor_s_max", s.max_factor_s},
                 {"factor_memory_bytes_max", s.max_memory_bytes},
                 {"factor_memory_bytes_total", s.total_memory_bytes},
                 {"fill_max", s.max_fill},
                 {"coarse_dimension", s.coarse_dimension},
                 {"coarse_dropped", s.coarse_dropped},
                 {"coarse_setup_s", s.coarse_setup_s}};
  out.settings = {{"type", std::string(core::enum_name(schwarz_type_names, settings_.type))},
                  {"overlap", fmt::format("{}", settings_.overlap)},
                  {"local_solver", std::string(local_solver_name(settings_.local_solver))},
                  {"local_solver_used", s.local.name},
                  {"coarse", std::string(coarse_name(settings_.coarse))}};
}

void Schwarz::close() {
  if (closed_) return;
  closed_ = true;
  if (forward_) forward_->close();
  if (backward_) backward_->close();
}

namespace detail {
namespace {

/// The Preconditioner over any operator: its rows as a DistMatrix.
class SchwarzPc final : public Preconditioner {
 public:
  SchwarzPc(const PcSettings& settings, PcOperator& op) : op_(op) {
    const double t0 = core::now_s();
    report_.name = "asm";
    const AssembledRows rows = op.assemble();
    matrix_ = sparse::DistMatrix::from_rows(op.comm(), rows.global_rows,
                                            {rows.row_ptr, rows.col, rows.val});
    schwarz_ = std::make_unique<Schwarz>(matrix_, settings.schwarz, settings.near_null.get());
    r_.assign(static_cast<std::size_t>(matrix_.local_rows()), 0.0);
    z_.assign(r_.size(), 0.0);
    const NearNullSpace* space = settings.near_null.get();
    schwarz_->describe(report_, space != nullptr ? space->block_size : 1);
    report_.setup_s = core::now_s() - t0;
  }

  void apply(grid::Field& r, grid::Field& z) override {
    op_.gather(r, r_);
    schwarz_->apply(r_, z_);
    op_.scatter(z_, z);
    ++report_.applies;
  }

  const PcReport& report() const override { return report_; }

  void free() override {
    if (!schwarz_) return;
    schwarz_->close();
    schwarz_.reset();
    matrix_.free();
  }

 private:
  PcOperator& op_;
  sparse::DistMatrix matrix_;
  std::unique_ptr<Schwarz> schwarz_;
  std::vector<double> r_;
  std::vector<double> z_;
  PcReport report_;
};

}  // namespace

std::unique_ptr<Preconditioner> make_schwarz(const PcSettings& settings, PcOperator& op) {
  return std::make_unique<SchwarzPc>(settings, op);
}

}  // namespace detail
}  // namespace asyncsolve::precond
