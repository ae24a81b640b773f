// The factory of the TFIM mat-vec's remote part (see spin_exchange.hpp).
#include "asyncsolve/kernels/spin_exchange.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "asyncsolve/core/enum_names.hpp"
#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/shmem.hpp"

namespace asyncsolve::kernels {

std::vector<std::string> spin_exchange_names() {
  return {spin_transport_names.begin(), spin_transport_names.end()};
}

std::size_t spin_exchange_buffer_bytes(const SpinExchangeOptions& options, int partners,
                                       std::size_t block) {
  if (partners == 0) return 0;
  if (options.transport == SpinTransport::mpi) {
    const std::size_t chunk = std::min({options.chunk, block, detail::max_message_doubles});
    return static_cast<std::size_t>(options.buffers) * chunk * sizeof(double);
  }
  // rma and shmem: a slot of a whole block per partner (plus two counters).
  return static_cast<std::size_t>(partners) * (block * sizeof(double) + 16);
}

std::unique_ptr<SpinExchange> make_spin_exchange(const SpinExchangeOptions& options,
                                                 const par::Comm& comm, std::size_t block) {
  const int size = comm.size();
  if (!std::has_single_bit(static_cast<unsigned>(size))) {
    throw core::InputError(
        fmt::format("{} ranks: the TFIM states are split by their high bits, "
                    "expected a power of two",
                    size));
  }
  const int partners = std::countr_zero(static_cast<unsigned>(size));
  switch (options.transport) {
    case SpinTransport::mpi:
      if (options.buffers < 2) {
        throw core::InputError(
            fmt::format("--buffers {}: expected an integer >= 2 (round-robin "
                        "receive buffers)",
                        options.buffers));
      }
      if (options.chunk < 1) {
        throw core::InputError("--chunk 0: expected an integer >= 1 (doubles per message)");
      }
      return detail::make_spin_exchange_mpi(options, comm, partners, block);
    case SpinTransport::rma:
      return detail::make_spin_exchange_rma(comm, partners, block,
                                            options.rma_sync == RmaSync::notify);
    case SpinTransport::shmem:
      if (!par::shmem_available()) {
        throw core::InputError(
            "--transport shmem: this build of asyncsolve has no OpenSHMEM, "
            "expected mpi or rma");
      }
      if (!par::shmem_initialized()) {
        throw core::InputError(
            "--transport shmem: OpenSHMEM is not started, expected a run under "
            "oshrun with --transport shmem");
      }
      return detail::make_spin_exchange_shmem(comm, partners, block);
  }
  throw std::invalid_argument("make_spin_exchange: not a SpinTransport");
}

std::unique_ptr<SpinExchange> make_spin_exchange(std::string_view transport,
                                                 SpinExchangeOptions options, const par::Comm& comm,
                                                 std::size_t block) {
  const auto parsed = core::enum_parse<SpinTransport>(spin_transport_names, transport);
  if (!parsed) {
    throw core::InputError(fmt::format("--transport '{}': expected one of {}", transport,
                                       fmt::join(spin_exchange_names(), ", ")));
  }
  options.transport = *parsed;
  return make_spin_exchange(options, comm, block);
}

}  // namespace asyncsolve::kernels
