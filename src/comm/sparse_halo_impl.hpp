#pragma once
// Internal: what the sparse halo-exchange strategies share: the plan, the
// packed send buffer (one block per destination, in plan order), the
// in-flight bookkeeping, and the strategies' constructors.
#include <memory>
#include <vector>

#include "asyncsolve/comm/sparse_halo.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {

/// Tag of the point-to-point sparse strategies on the matrix's
/// communicator (apart from the channels', which use tags 0 to 3).
inline constexpr int kSparseHaloTag = 100;

class SparseHaloBase : public SparseHaloExchange {
 public:
  SparseHaloBase(const sparse::NeighbourPlan& plan, const par::Comm& comm, std::string_view name);
  std::string_view name() const override { return name_; }
  int messages_per_exchange() const override { return static_cast<int>(plan_.sends.size()); }
  std::size_t bytes_per_exchange() const override { return bytes_; }

 protected:
  /// Copies the owned entries every destination needs into the send buffer.
  void pack(const grid::Field& x);
  const sparse::NeighbourPlan& plan() const noexcept { return plan_; }
  MPI_Comm comm() const noexcept { return comm_; }
  /// Offset of destination i's block in the send buffer (i < sends.size()).
  int send_offset(std::size_t i) const noexcept { return send_offsets_[i]; }
  double* send_data() noexcept { return send_buffer_.data(); }
  void begin() {
    require_idle(in_flight_, name_);
    in_flight_ = true;
  }
  void end() {
    require_in_flight(in_flight_, name_);
    in_flight_ = false;
  }
  bool in_flight() const noexcept { return in_flight_; }

 private:
  const sparse::NeighbourPlan& plan_;
  MPI_Comm comm_;
  std::string_view name_;
  std::vector<int> send_offsets_;
  std::vector<double> send_buffer_;
  std::size_t bytes_ = 0;
  bool in_flight_ = false;
};

std::unique_ptr<SparseHaloExchange> make_sparse_waitall(const sparse::NeighbourPlan& plan,
                                                        const par::Comm& comm);
std::unique_ptr<SparseHaloExchange> make_sparse_persistent(const sparse::NeighbourPlan& plan,
                                                           const par::Comm& comm);
std::unique_ptr<SparseHaloExchange> make_sparse_alltoallv(const sparse::NeighbourPlan& plan,
                                                          const par::Comm& comm, bool nonblocking);
std::unique_ptr<SparseHaloExchange> make_sparse_neighbor(const sparse::NeighbourPlan& plan,
                                                         const par::Comm& comm);

}  // namespace asyncsolve::comm
