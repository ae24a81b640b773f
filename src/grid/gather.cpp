#include "asyncsolve/grid/gather.hpp"

#include <mpi.h>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::grid {

std::vector<double> gather_to_root(const Decomposition& decomposition, const Field& field) {
  const par::Comm& comm = decomposition.comm();
  const int ranks = comm.size();
  const bool root = comm.is_root();

  // Each rank's block (offset, extent) and its packed interior.
  const int mine[6] = {decomposition.offset()[0], decomposition.offset()[1],
                       decomposition.offset()[2], decomposition.local()[0],
                       decomposition.local()[1],  decomposition.local()[2]};
  std::vector<int> blocks(root ? 6 * static_cast<std::size_t>(ranks) : 0);
  par::check_mpi(MPI_Gather(mine, 6, MPI_INT, blocks.data(), 6, MPI_INT, 0, comm.get()),
                 "MPI_Gather");
  std::vector<double> packed(static_cast<std::size_t>(core::product(field.interior())));
  pack(field, field.interior_box(), packed.data());

  std::vector<int> counts(root ? static_cast<std::size_t>(ranks) : 0);
  std::vector<int> displs(counts.size());
  std::vector<double> all;
  if (root) {
    long long total = 0;
    for (int r = 0; r < ranks; ++r) {
      const int* b = &blocks[6 * static_cast<std::size_t>(r)];
      counts[r] = b[3] * b[4] * b[5];
      displs[r] = static_cast<int>(total);
      total += counts[r];
    }
    all.resize(static_cast<std::size_t>(total));
  }
  par::check_mpi(MPI_Gatherv(packed.data(), static_cast<int>(packed.size()), MPI_DOUBLE, all.data(),
                             counts.data(), displs.data(), MPI_DOUBLE, 0, comm.get()),
                 "MPI_Gatherv");
  if (!root) return {};

  const Int3& g = decomposition.global();
  std::vector<double> out(static_cast<std::size_t>(core::product(g)));
  for (int r = 0; r < ranks; ++r) {
    const int* b = &blocks[6 * static_cast<std::size_t>(r)];
    std::size_t n = static_cast<std::size_t>(displs[r]);
    for (int k = 0; k < b[5]; ++k)
      for (int j = 0; j < b[4]; ++j)
        for (int i = 0; i < b[3]; ++i) {
          const std::size_t gi =
              static_cast<std::size_t>(b[0] + i) +
              static_cast<std::size_t>(g[0]) *
                  (static_cast<std::size_t>(b[1] + j) +
                   static_cast<std::size_t>(g[1]) * static_cast<std::size_t>(b[2] + k));
          out[gi] = all[n++];
        }
  }
  return out;
}

}  // namespace asyncsolve::grid
