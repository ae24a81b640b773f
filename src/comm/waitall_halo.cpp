#include "waitall_halo.hpp"

#include <cassert>

namespace asyncsolve::comm {

WaitallHalo::WaitallHalo(const grid::Decomposition& decomposition, const grid::Field& shape,
                         Neighbourhood neighbourhood)
    : comm_(decomposition.comm().get()),
      links_(buffered_halo_links(decomposition, shape, neighbourhood)),
      bytes_(send_bytes(links_)) {}

WaitallHalo::~WaitallHalo() {
  // A started exchange must be finished before destruction; tell debug builds.
  assert(!in_flight_ && requests_.active() == 0 &&
         "WaitallHalo destroyed with an exchange in flight");
}

void WaitallHalo::start(grid::Field& field) {
  require_idle(in_flight_, name());
  for (BufferedLink& l : links_) l.post_receive(comm_, requests_.add());
  for (BufferedLink& l : links_) l.post_send(field, comm_, requests_.add());
  in_flight_ = true;
}

void WaitallHalo::finish(grid::Field& field) {
  require_in_flight(in_flight_, name());
  requests_.wait_all();
  in_flight_ = false;
  for (const BufferedLink& l : links_) l.unpack(field);
}

}  // namespace asyncsolve::comm
