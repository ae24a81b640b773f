#include "asyncsolve/grid/decomposition.hpp"

#include <mpi.h>

#include <fmt/format.h>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::grid {
namespace {

constexpr const char* axis_name[3] = {"x", "y", "z"};

}  // namespace

Range block_range(int n, int parts, int index) {
  const int base = n / parts;
  const int extra = n % parts;
  return Range{index * base + (index < extra ? index : extra), base + (index < extra ? 1 : 0)};
}

DecompositionPlan plan_decomposition(int ranks, const DecompositionSpec& spec) {
  using core::InputError;
  if (spec.global && spec.local) {
    throw InputError(
        "--global and --local both given: expected one of them (a global grid, or "
        "a per-rank size for weak scaling)");
  }
  DecompositionPlan plan;
  if (spec.dims) {
    const Int3& d = *spec.dims;
    if (core::product(d) != ranks) {
      throw InputError(fmt::format("--dims {}: multiplies to {}, expected the number of ranks ({})",
                                   core::format_triple(d), core::product(d), ranks));
    }
    plan.dims = d;
  } else {
    int dims[3] = {0, 0, 0};
    par::check_mpi(MPI_Dims_create(ranks, 3, dims), "MPI_Dims_create");
    plan.dims = {dims[0], dims[1], dims[2]};
  }
  if (spec.global) {
    plan.global = *spec.global;
    for (int a = 0; a < 3; ++a) {
      if (plan.global[a] < plan.dims[a]) {
        throw InputError(fmt::format(
            "--global {}: {} points along {} cannot be split over {} ranks (process grid {}); "
            "expected at least one point per rank in every dimension",
            core::format_triple(plan.global), plan.global[a], axis_name[a], plan.dims[a],
            core::format_triple(plan.dims)));
      }
    }
  } else {
    const Int3 local = spec.local.value_or(Int3{50, 50, 50});
    for (int a = 0; a < 3; ++a) {
      const long long n = static_cast<long long>(local[a]) * plan.dims[a];
      if (n > (1LL << 30)) {
        throw InputError(
            fmt::format("--local {}: the global grid would have {} points along {}, "
                        "expected at most 2^30",
                        core::format_triple(local), n, axis_name[a]));
      }
      plan.global[a] = static_cast<int>(n);
    }
  }
  return plan;
}

Decomposition Decomposition::create(const par::Comm& comm, const DecompositionSpec& spec) {
  Decomposition d;
  d.ranks_ = comm.size();
  const DecompositionPlan plan = plan_decomposition(d.ranks_, spec);
  d.dims_ = plan.dims;
  d.global_ = plan.global;

  const int periods[3] = {0, 0, 0};
  MPI_Comm cart = MPI_COMM_NULL;
  par::check_mpi(MPI_Cart_create(comm.get(), 3, d.dims_.data(), periods, /*reorder=*/0, &cart),
                 "MPI_Cart_create");
  d.cart_ = par::Comm::adopt(cart);
  par::check_mpi(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  d.rank_ = d.cart_.rank();
  par::check_mpi(MPI_Cart_coords(cart, d.rank_, 3, d.coords_.data()), "MPI_Cart_coords");
  for (int a = 0; a < 3; ++a) {
    const Range r = block_range(d.global_[a], d.dims_[a], d.coords_[a]);
    d.offset_[a] = r.begin;
    d.local_[a] = r.count;
    par::check_mpi(MPI_Cart_shift(cart, a, 1, &d.neighbours_[2 * a], &d.neighbours_[2 * a + 1]),
                   "MPI_Cart_shift");
  }
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        const Int3 dir{dx, dy, dz};
        Int3 c = d.coords_;
        bool inside = true;
        for (int a = 0; a < 3; ++a) {
          c[a] += dir[a];
          inside = inside && c[a] >= 0 && c[a] < d.dims_[a];
        }
        int r = MPI_PROC_NULL;
        if (inside) par::check_mpi(MPI_Cart_rank(cart, c.data(), &r), "MPI_Cart_rank");
        d.all_neighbours_[(dx + 1) + 3 * (dy + 1) + 9 * (dz + 1)] = r;
      }
  return d;
}

bool Decomposition::is_physical_boundary(Face face) const noexcept {
  return neighbours_[static_cast<int>(face)] == MPI_PROC_NULL;
}

}  // namespace asyncsolve::grid
