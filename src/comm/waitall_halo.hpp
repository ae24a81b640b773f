#pragma once
// Internal: halo exchange by MPI_Isend/MPI_Irecv and one MPI_Waitall.
#include "asyncsolve/par/request.hpp"
#include "halo_bases.hpp"

namespace asyncsolve::comm {

/// Paper 000 §3.1.1: post a receive and a send per neighbour, then one
/// MPI_Waitall. Buffers are allocated once and reused.
class WaitallHalo final : public LinkedHalo {
 public:
  WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
              Neighbourhood neighbourhood);
  ~WaitallHalo() override;
  std::string_view name() const override { return "waitall"; }
  void start(grid::Field& field) override;
  void finish(grid::Field& field) override;

 protected:
  bool do_test() override { return requests_.test_all(); }

 private:
  MPI_Comm comm_;
  par::RequestSet requests_;
};

}  // namespace asyncsolve::comm
