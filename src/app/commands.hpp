#pragma once
// The subcommands of `asyncsolve`.
#include <string>
#include <vector>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/comm.hpp"
#include "asyncsolve/par/environment.hpp"
#include "cli.hpp"

namespace asyncsolve::app {

/// Collective over `world`: runs `asyncsolve solve`. Prints the summary and
/// writes the result document on rank 0. Throws core::InputError (identically
/// on every rank) for bad input.
core::ExitCode run_solve(const SolveConfig& config, const par::Comm& world,
                         const par::Environment& env, const std::vector<std::string>& command);

/// Collective over `world`: runs `asyncsolve solve --method lanczos
/// --problem tfim` (paper 004's SPIN benchmark; called by run_solve). Prints
/// the summary and writes the result document on rank 0. Throws
/// core::InputError (identically on every rank) for a rank count that is not
/// a power of two, too many ranks or sites for memory, or a transport that
/// cannot run.
core::ExitCode run_lanczos(const SolveConfig& config, const par::Comm& world,
                           const par::Environment& env, const std::vector<std::string>& command);

/// Collective over `world`: runs `asyncsolve solve` on a general sparse
/// system: --matrix FILE.mtx (read on rank 0 and distributed), or a model
/// problem assembled as a CSR matrix (--assemble). Called by run_solve.
/// Throws core::InputError (identically on every rank) for bad input.
core::ExitCode run_sparse_solve(const SolveConfig& config, const par::Comm& world,
                                const par::Environment& env,
                                const std::vector<std::string>& command);

/// Collective over `world`: runs `asyncsolve bench allreduce` (latency,
/// overlap and noise modes). Prints the tables and writes the result document
/// (schema asyncsolve.bench.allreduce/1) on rank 0. Throws core::InputError
/// (identically on every rank) for bad input, before any measurement.
core::ExitCode run_bench_allreduce(const BenchAllreduceConfig& config, const par::Comm& world,
                                   const par::Environment& env,
                                   const std::vector<std::string>& command);

/// Collective over `world`: runs `asyncsolve bench stencil2d` (paper 004).
/// Every measurement is validated against the serial filter first; a failed
/// validation is reported by rank 0 (one line) and returns runtime_failure on
/// every rank. Prints the table and writes the document (schema
/// asyncsolve.bench.stencil2d/1) on rank 0. OpenSHMEM must be started by
/// the caller when config.uses_shmem().
core::ExitCode run_bench_stencil2d(const BenchStencil2dConfig& config, const par::Comm& world,
                                   const par::Environment& env,
                                   const std::vector<std::string>& command);

/// Collective over `world`: runs `asyncsolve model hybrid` (paper 002 §7.2).
/// Rank 0 computes, prints and writes the document (schema
/// asyncsolve.model.hybrid/1); the other ranks only learn its verdict. Throws
/// core::InputError (identically on every rank) for bad input, including a
/// bad --fit file, before printing anything.
core::ExitCode run_model_hybrid(const ModelHybridConfig& config, const par::Comm& world,
                                const std::vector<std::string>& command);

/// Collective over `world`: runs `asyncsolve info`, printing on rank 0.
core::ExitCode run_info(const InfoConfig& config, const par::Comm& world,
                        const par::Environment& env);

}  // namespace asyncsolve::app
