#pragma once
// Internal: halo exchange by persistent point-to-point requests.
#include <mpi.h>

#include <vector>

#include "halo_bases.hpp"

namespace asyncsolve::comm {

/// The messages of waitall (one per neighbour direction, same tags), set up
/// once: MPI_Recv_init/MPI_Send_init at construction, MPI_Startall in
/// start(), MPI_Testall in test(), MPI_Waitall in finish(). The requests are
/// managed here, not by par::RequestSet, which assumes requests that become
/// MPI_REQUEST_NULL on completion; a completed persistent request stays
/// allocated (inactive) until MPI_Request_free.
///
/// Point-to-point among neighbours. close() frees the requests (finish() must
/// come first: a persistent request is never freed while active); the
/// destructor frees them too if close() was not called and MPI is not
/// finalized.
class PersistentHalo final : public LinkedHalo {
 public:
  PersistentHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                 Neighbourhood neighbourhood);
  ~PersistentHalo() override;
  std::string_view name() const override { return "persistent"; }
  void start(grid::Field& field) override;
  void finish(grid::Field& field) override;
  void close() override;

 protected:
  bool do_test() override;

 private:
  void free_requests() noexcept;

  std::vector<MPI_Request> requests_;  ///< receives, then sends; inactive between exchanges
  bool closed_ = false;
};

}  // namespace asyncsolve::comm
