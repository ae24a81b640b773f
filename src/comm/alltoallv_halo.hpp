#pragma once
// Internal: halo exchange by one MPI_Alltoallv or MPI_Ialltoallv.
#include <mpi.h>

#include "halo_bases.hpp"

namespace asyncsolve::comm {

/// Paper 001 Listing 4: every send slab packed into one buffer, exchanged by
/// one all-to-all over the decomposition's communicator with a count and
/// displacement per rank (zero for ranks that are not neighbours).
///
/// Blocking ("alltoallv", the else-branch of Listing 4): start() performs the
/// whole exchange, test() is true at once, finish() unpacks.
/// Non-blocking ("ialltoallv", the NBC_Ialltoallv branch; Open MPI's
/// MPI_Ialltoallv is LibNBC itself): start() starts the collective, test() is
/// MPI_Test on its request, finish() is MPI_Wait then unpack.
///
/// Collective over the decomposition's communicator: every rank of it calls
/// start() and finish() the same number of times (in the same order as any
/// other collective on that communicator). Holds no communicator of its own.
class AlltoallvHalo final : public PackedHaloBase {
 public:
  AlltoallvHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                Neighbourhood neighbourhood, bool nonblocking);
  ~AlltoallvHalo() override;
  std::string_view name() const override { return nonblocking_ ? "ialltoallv" : "alltoallv"; }
  void start(grid::Field& field) override;
  void finish(grid::Field& field) override;

 protected:
  bool do_test() override;

 private:
  MPI_Comm comm_;
  bool nonblocking_;
  PackedHalo::DenseCounts counts_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace asyncsolve::comm
