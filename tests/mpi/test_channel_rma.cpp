// Channels over MPI one-sided communication (the rma transport): the
// semantics tests of tests/support/collective_channel_tests.cpp, run on rma.
#include "asyncsolve/channel.h"
#include "collective_channel_tests.hpp"

extern const int kTransportUnderTest = AS_TRANSPORT_RMA;
