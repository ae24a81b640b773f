#pragma once
/// Paper 000's restarting asynchronous tree reduction carried by channels, so
/// that it runs over the same transport as the halos (mpi, rma or shmem).
#include <memory>
#include <string_view>

#include "asyncsolve/collectives/allreduce.hpp"
#include "asyncsolve/collectives/nonblocking_allreduce.hpp"

namespace asyncsolve::collectives {

/// Collective over `comm` (duplicated): a NonblockingAllreduce named "tree"
/// whose partial sums travel up and totals down a binary tree (parent
/// (r-1)/2, children 2r+1, 2r+2) through one channel per tree edge
/// (async mode, one message in flight) of transport `transport`
/// (enum as_transport). Own, then child 2r+1, then child 2r+2 are added in
/// that order and the root's total is forwarded unchanged, so every rank gets
/// a bit-identical result. A round completes on a rank once it has received
/// everything of that round, so after the last round only messages already
/// taken remain; free() (collective) destroys the channels.
std::unique_ptr<collectives::NonblockingAllreduce> make_channel_tree_allreduce(
    const par::Comm& comm, std::size_t size, int transport);

/// Collective over `comm`: the non-blocking reduction `algorithm` for a
/// solver whose halos travel over `transport`: tree runs over the same
/// transport (channels) unless that is mpi, where the point-to-point tree of
/// collectives::make_nonblocking_allreduce is used; any other algorithm is
/// make_nonblocking_allreduce's, whatever the transport.
std::unique_ptr<collectives::NonblockingAllreduce> make_convergence_allreduce(
    const AllreduceAlgorithm& algorithm, const par::Comm& comm, std::size_t size, int transport);

/// The same for the algorithm `name` (parse_allreduce; core::InputError for
/// a bad name).
std::unique_ptr<collectives::NonblockingAllreduce> make_convergence_allreduce(std::string_view name,
                                                                              const par::Comm& comm,
                                                                              std::size_t size,
                                                                              int transport);

}  // namespace asyncsolve::collectives
