// The sparse halo exchange's shared base and its factory.
#include <cassert>
#include <stdexcept>

#include "sparse_halo_impl.hpp"

namespace asyncsolve::comm {

SparseHaloBase::SparseHaloBase(const sparse::NeighbourPlan& plan, const par::Comm& comm,
                               std::string_view name)
    : SparseHaloExchange(static_cast<std::size_t>(plan.ghosts)),
      plan_(plan),
      comm_(comm.get()),
      name_(name) {
  int offset = 0;
  for (const sparse::SendLink& s : plan_.sends) {
    send_offsets_.push_back(offset);
    offset += static_cast<int>(s.indices.size());
  }
  send_offsets_.push_back(offset);
  send_buffer_.assign(static_cast<std::size_t>(offset) + 1, 0.0);
  bytes_ = static_cast<std::size_t>(offset) * sizeof(double);
}

void SparseHaloBase::pack(const grid::Field& x) {
  const double* __restrict owned = x.origin();
  double* __restrict out = send_buffer_.data();
  for (const sparse::SendLink& s : plan_.sends) {
    const int* __restrict idx = s.indices.data();
    const std::size_t n = s.indices.size();
    for (std::size_t k = 0; k < n; ++k) out[k] = owned[idx[k]];
    out += n;
  }
}

std::unique_ptr<SparseHaloExchange> make_sparse_halo_exchange(HaloStrategy strategy,
                                                              const sparse::DistMatrix& matrix) {
  return make_sparse_halo_exchange(strategy, matrix.plan(), matrix.comm());
}

std::unique_ptr<SparseHaloExchange> make_sparse_halo_exchange(HaloStrategy strategy,
                                                              const sparse::NeighbourPlan& plan,
                                                              const par::Comm& comm) {
  switch (strategy) {
    case HaloStrategy::waitall:
      return make_sparse_waitall(plan, comm);
    case HaloStrategy::alltoallv:
      return make_sparse_alltoallv(plan, comm, false);
    case HaloStrategy::ialltoallv:
      return make_sparse_alltoallv(plan, comm, true);
    case HaloStrategy::neighbor:
      return make_sparse_neighbor(plan, comm);
    case HaloStrategy::persistent:
      return make_sparse_persistent(plan, comm);
  }
  throw std::logic_error("make_sparse_halo_exchange: unhandled strategy");
}

}  // namespace asyncsolve::comm
