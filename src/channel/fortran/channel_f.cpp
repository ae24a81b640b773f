// The C side of the Fortran module asyncsolve_channel
// (src/channel/fortran/asyncsolve_channel.f90).
//
// Fortran holds a communicator as a Fortran handle (an INTEGER, or the
// MPI_VAL of mpi_f08's type(MPI_Comm)), not as C's MPI_Comm. The module's
// configuration type therefore mirrors as_channel_config with an MPI_Fint in
// place of the MPI_Comm, and these three entry points convert it with
// MPI_Comm_f2c (MPI_Comm_c2f for the default) before calling the C API. Every
// other function of channel.h takes no communicator and is bound directly.
//
// The layout of as_f_channel_config must stay identical to the bind(C) type
// as_channel_config of the module: same members, same order.
#include <mpi.h>

#include <cstddef>
#include <new>
#include <vector>

#include "asyncsolve/channel.h"

extern "C" {

/// as_channel_config with the communicator as a Fortran handle.
struct as_f_channel_config {
  int transport;
  MPI_Fint comm;
  int peer;
  int tag;
  std::size_t message_size;
  void* sendbuf;
  void* recvbuf;
  int max_in_flight;
  int mode;
};

/// as_channel_config_init for Fortran: the same defaults, comm = the Fortran
/// handle of MPI_COMM_NULL. Local.
void as_f_channel_config_init(as_f_channel_config* config);
/// as_channel_create with a Fortran communicator handle.
int as_f_channel_create(as_channel** channel, const as_f_channel_config* config);
/// as_channels_create with Fortran communicator handles.
int as_f_channels_create(int count, as_channel** channels, const as_f_channel_config* configs);

}  // extern "C"

namespace {

as_channel_config to_c(const as_f_channel_config& f) {
  as_channel_config c;
  as_channel_config_init(&c);
  c.transport = f.transport;
  c.comm = MPI_Comm_f2c(f.comm);
  c.peer = f.peer;
  c.tag = f.tag;
  c.message_size = f.message_size;
  c.sendbuf = f.sendbuf;
  c.recvbuf = f.recvbuf;
  c.max_in_flight = f.max_in_flight;
  c.mode = f.mode;
  return c;
}

}  // namespace

extern "C" {

void as_f_channel_config_init(as_f_channel_config* config) {
  if (config == nullptr) return;
  as_channel_config c;
  as_channel_config_init(&c);
  config->transport = c.transport;
  config->comm = MPI_Comm_c2f(MPI_COMM_NULL);
  config->peer = c.peer;
  config->tag = c.tag;
  config->message_size = c.message_size;
  config->sendbuf = c.sendbuf;
  config->recvbuf = c.recvbuf;
  config->max_in_flight = c.max_in_flight;
  config->mode = c.mode;
}

int as_f_channel_create(as_channel** channel, const as_f_channel_config* config) {
  if (config == nullptr) return as_channel_create(channel, nullptr);
  const as_channel_config c = to_c(*config);
  return as_channel_create(channel, &c);
}

int as_f_channels_create(int count, as_channel** channels, const as_f_channel_config* configs) {
  if (count <= 0 || configs == nullptr) return as_channels_create(count, channels, nullptr);
  try {
    std::vector<as_channel_config> c;
    c.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) c.push_back(to_c(configs[i]));
    return as_channels_create(count, channels, c.data());
  } catch (const std::bad_alloc&) {
    for (int i = 0; channels != nullptr && i < count; ++i) channels[i] = nullptr;
    return AS_ERR_NOMEM;
  }
}

}  // extern "C"
