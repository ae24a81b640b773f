#pragma once
// Internal: halo exchange by MPI_Isend/MPI_Irecv and one MPI_Waitall.
#include "asyncsolve/comm/halo_exchange.hpp"
#include "asyncsolve/par/request.hpp"
#include "halo_links.hpp"

namespace asyncsolve::comm {

/// Paper 000 §3.1.1: post a receive and a send per neighbour, then one
/// MPI_Waitall. Buffers are allocated once and reused.
class WaitallHalo final : public HaloExchange {
 public:
  WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
              Neighbourhood neighbourhood);
  ~WaitallHalo() override;
  std::string_view name() const override { return "waitall"; }
  void start(grid::Field& field) override;
  void finish(grid::Field& field) override;
  int messages_per_exchange() const override { return static_cast<int>(links_.size()); }
  std::size_t bytes_per_exchange() const override { return bytes_; }

 protected:
  bool do_test() override { return requests_.test_all(); }

 private:
  MPI_Comm comm_;
  std::vector<BufferedLink> links_;
  par::RequestSet requests_;
  std::size_t bytes_ = 0;
  bool in_flight_ = false;  ///< between start() and finish()
};

}  // namespace asyncsolve::comm
