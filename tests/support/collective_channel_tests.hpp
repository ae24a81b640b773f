#pragma once
// The transport (enum as_transport) that collective_channel_tests.cpp tests;
// defined by the test program that links it.
#include <mpi.h>

#include "asyncsolve/channel.h"

extern const int kTransportUnderTest;

/// A placeholder config (peer MPI_PROC_NULL) of the transport under test on
/// `comm`, for a rank with no channel of its own in a collective create.
as_channel_config placeholder(MPI_Comm comm);

/// After a barrier on `comm`, no message may be waiting for this rank.
void expect_no_stray_message(MPI_Comm comm);
