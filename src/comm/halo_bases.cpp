#include "halo_bases.hpp"

#include <cassert>
#include <stdexcept>
#include <string>

#include "asyncsolve/par/check.hpp"

namespace asyncsolve::comm {

StagedHalo::~StagedHalo() {
  assert(!in_flight_ && "halo exchange destroyed with an exchange in flight");
}

void StagedHalo::start(grid::Field& field) {
  require_idle(in_flight_, name());
  if (closed_) throw std::logic_error(std::string(name()) + " halo: start() after close()");
  pack(field);
  post();
  in_flight_ = true;
}

void StagedHalo::finish(grid::Field& field) {
  require_in_flight(in_flight_, name());
  complete();
  in_flight_ = false;
  unpack(field);
}

void StagedHalo::close() {
  if (in_flight_)
    throw std::logic_error(std::string(name()) + " halo: close() with an exchange in flight");
  release();
  closed_ = true;
}

LinkedHalo::LinkedHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                       Neighbourhood neighbourhood) {
  const std::vector<HaloLink> links = halo_links(decomposition, shape, neighbourhood);
  links_.reserve(links.size());
  for (const HaloLink& l : links) {
    links_.push_back({l, std::vector<double>(static_cast<std::size_t>(l.send_count)),
                      std::vector<double>(static_cast<std::size_t>(l.recv_count))});
  }
  bytes_ = send_bytes(links);
}

void LinkedHalo::pack(const grid::Field& field) {
  for (Link& l : links_) grid::pack(field, l.link.send_box, l.send_buffer.data());
}

void LinkedHalo::unpack(grid::Field& field) const {
  for (const Link& l : links_) grid::unpack(field, l.link.recv_box, l.recv_buffer.data());
}

PackedHaloBase::~PackedHaloBase() {
  // A collective request cannot be cancelled or dropped while MPI reads the
  // buffers: complete it (this waits for the other ranks to take part).
  if (request_ != MPI_REQUEST_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }
}

bool PackedHaloBase::do_test() {
  if (request_ == MPI_REQUEST_NULL) return true;  // blocking, or already completed
  int done = 0;
  par::check_mpi(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  return done != 0;
}

void PackedHaloBase::complete() {
  if (request_ != MPI_REQUEST_NULL)
    par::check_mpi(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
}

}  // namespace asyncsolve::comm
