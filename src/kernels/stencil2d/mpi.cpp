// Stencil2D over MPI two-sided (paper 004's MPI versions): trivial, sendrecv
// and halo. Every halo block is sent and received in place with an
// MPI_Type_create_subarray of V (no packing by hand). A message to the
// neighbour in direction d carries tag d; it lands in that neighbour's halo
// opposite(d), so the receive into halo e is from neighbour(e) with tag
// opposite(e) — unambiguous when one rank is the neighbour in several
// directions (or is this rank itself, on a 1-wide process grid).
//
// Per iteration and rank: trivial and sendrecv send 8 messages (4 of n r, 4
// of r^2 doubles); halo sends 4 (2 of n r, 2 of (n + 2r) r doubles).
#include <mpi.h>

#include <array>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/timer.hpp"
#include "asyncsolve/par/check.hpp"
#include "stencil2d_impl.hpp"

namespace asyncsolve::kernels::detail {
namespace {

using par::check_mpi;

using MpiVariant = Stencil2dVariant;  // trivial, sendrecv or halo

/// A committed subarray type of V for `rect`.
MPI_Datatype rect_type(const Stencil2dLayout& layout, const Rect2d& rect) {
  const int sizes[2] = {static_cast<int>(layout.stride), static_cast<int>(layout.stride)};
  const int sub[2] = {rect.h, rect.w};
  const int starts[2] = {rect.y0 + layout.r, rect.x0 + layout.r};
  MPI_Datatype t = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &t),
            "MPI_Type_create_subarray");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit");
  return t;
}

class Stencil2dMpi final : public Stencil2dBlock {
 public:
  Stencil2dMpi(MpiVariant variant, const par::Comm& comm, const Stencil2dGrid& grid,
               const Stencil2dSpec& spec)
      : Stencil2dBlock(grid, spec),
        variant_(variant),
        storage_(static_cast<std::size_t>(layout_.doubles()), 0.0) {
    v_ = storage_.data();
    check_mpi(MPI_Comm_dup(comm.get(), &comm_), "MPI_Comm_dup");
    check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    send_.fill(MPI_DATATYPE_NULL);
    recv_.fill(MPI_DATATYPE_NULL);
    send_wide_.fill(MPI_DATATYPE_NULL);
    recv_wide_.fill(MPI_DATATYPE_NULL);
    for (int d = 0; d < stencil2d_directions; ++d) {
      send_[d] = rect_type(layout_, layout_.border(d));
      recv_[d] = rect_type(layout_, layout_.halo(d));
    }
    // halo: y faces carry the halo columns too (x from -r to n + r).
    for (const int d : {2, 3}) {
      Rect2d b = layout_.border(d);
      Rect2d h = layout_.halo(d);
      b.x0 = h.x0 = -layout_.r;
      b.w = h.w = layout_.n + 2 * layout_.r;
      send_wide_[d - 2] = rect_type(layout_, b);
      recv_wide_[d - 2] = rect_type(layout_, h);
    }
  }
  // The datatypes are local and freed here if free() was not called; the
  // duplicated communicator is freed only by free() (collective).
  ~Stencil2dMpi() override {
    if (freed_) return;
    for (auto* set : {&send_, &recv_})
      for (MPI_Datatype& t : *set)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    for (auto* set : {&send_wide_, &recv_wide_})
      for (MPI_Datatype& t : *set)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
  }

  std::string transport() const override { return "mpi"; }
  std::string variant() const override {
    return std::string(core::enum_name(stencil2d_variant_table, variant_));
  }
  long messages_per_iteration() const override { return variant_ == MpiVariant::halo ? 4 : 8; }

  Stencil2dTiming run(long iterations) override {
    Stencil2dTiming t;
    t.iterations = iterations;
    filter_s_ = 0.0;
    const double t0 = core::now_s();
    for (long it = 0; it < iterations; ++it) {
      copy_in();  // V(interior) = dom
      switch (variant_) {
        case MpiVariant::trivial:
          exchange_trivial();
          break;
        case MpiVariant::sendrecv:
          exchange_sendrecv();
          break;
        case MpiVariant::halo:
          exchange_halo();
          break;
        case MpiVariant::put:  // one-sided: not made here (make_stencil2d_mpi)
        case MpiVariant::get:
        case MpiVariant::get0:
        case MpiVariant::get1:
          break;
      }
      halo_complete();
      filter_all();  // dom = filter(V)
    }
    t.total_s = core::now_s() - t0;
    t.filter_s = filter_s_;
    return t;
  }

  void free() override {
    if (freed_) return;
    freed_ = true;
    for (auto* set : {&send_, &recv_})
      for (MPI_Datatype& t : *set)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    for (auto* set : {&send_wide_, &recv_wide_})
      for (MPI_Datatype& t : *set)
        if (t != MPI_DATATYPE_NULL) MPI_Type_free(&t);
    check_mpi(MPI_Comm_free(&comm_), "MPI_Comm_free");
  }

 private:
  // All 8 receives and sends posted at once, one Waitall.
  void exchange_trivial() {
    std::array<MPI_Request, 2 * std::size_t{stencil2d_directions}> requests{};
    for (int d = 0; d < stencil2d_directions; ++d) {
      check_mpi(
          MPI_Irecv(v_, 1, recv_[d], grid_.neighbour[d], dir2d_opposite(d), comm_, &requests[d]),
          "MPI_Irecv");
    }
    for (int d = 0; d < stencil2d_directions; ++d) {
      check_mpi(MPI_Isend(v_, 1, send_[d], grid_.neighbour[d], d, comm_,
                          &requests[stencil2d_directions + d]),
                "MPI_Isend");
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall");
  }

  // One MPI_Sendrecv per direction: send border(d) to neighbour(d), receive
  // halo(opposite(d)) from neighbour(opposite(d)).
  void exchange_sendrecv() {
    for (int d = 0; d < stencil2d_directions; ++d) {
      const int o = dir2d_opposite(d);
      check_mpi(MPI_Sendrecv(v_, 1, send_[d], grid_.neighbour[d], d, v_, 1, recv_[o],
                             grid_.neighbour[o], d, comm_, MPI_STATUS_IGNORE),
                "MPI_Sendrecv");
    }
  }

  // x faces first (e, w), then y faces (n, s) widened by the halo columns
  // just received: the corners travel in two hops.
  void exchange_halo() {
    std::array<MPI_Request, 4> requests{};
    for (int phase = 0; phase < 2; ++phase) {
      const int a = phase == 0 ? 0 : 2;  // e or n
      const int b = a + 1;               // w or s
      MPI_Datatype* send = phase == 0 ? &send_[a] : &send_wide_[0];
      MPI_Datatype* recv = phase == 0 ? &recv_[a] : &recv_wide_[0];
      check_mpi(MPI_Irecv(v_, 1, recv[0], grid_.neighbour[a], b, comm_, &requests[0]), "MPI_Irecv");
      check_mpi(MPI_Irecv(v_, 1, recv[1], grid_.neighbour[b], a, comm_, &requests[1]), "MPI_Irecv");
      check_mpi(MPI_Isend(v_, 1, send[0], grid_.neighbour[a], a, comm_, &requests[2]), "MPI_Isend");
      check_mpi(MPI_Isend(v_, 1, send[1], grid_.neighbour[b], b, comm_, &requests[3]), "MPI_Isend");
      check_mpi(MPI_Waitall(4, requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    }
  }

  MpiVariant variant_;
  MPI_Comm comm_ = MPI_COMM_NULL;  ///< a duplicate, so the tags never meet other traffic
  std::vector<double> storage_;
  std::array<MPI_Datatype, stencil2d_directions> send_{}, recv_{};
  std::array<MPI_Datatype, 2> send_wide_{}, recv_wide_{};  ///< n, s with the halo columns
  bool freed_ = false;
};

}  // namespace

std::unique_ptr<Stencil2d> make_stencil2d_mpi(Stencil2dVariant variant, const par::Comm& comm,
                                              const Stencil2dGrid& grid,
                                              const Stencil2dSpec& spec) {
  if (!is_stencil2d_variant(Stencil2dTransport::mpi, variant)) {
    throw std::invalid_argument(fmt::format("stencil2d: no mpi variant '{}'",
                                            core::enum_name(stencil2d_variant_table, variant)));
  }
  return std::make_unique<Stencil2dMpi>(variant, comm, grid, spec);
}

}  // namespace asyncsolve::kernels::detail
