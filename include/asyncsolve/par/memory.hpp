#pragma once
/// Whether an allocation could be made now, asked before a collective call
/// that one rank's failure inside would leave the others waiting in.
#include <cstddef>
#include <cstdlib>

namespace asyncsolve::par {

/// Whether `bytes` more could be allocated now: a block of that size is
/// reserved (untouched, so no page is used) and released. Where allocation
/// can fail (an address-space limit, strict overcommit) this is the test;
/// where it cannot, the kernel's out-of-memory killer acts instead, and
/// nothing here can see it coming.
inline bool can_reserve(double bytes) noexcept {
  if (!(bytes >= 0.0 && bytes < 0x1p62)) return false;
  void* block = std::malloc(static_cast<std::size_t>(bytes));
  // Kept through a volatile, so the compiler cannot drop the pair as unused.
  void* volatile kept = block;
  std::free(kept);
  return block != nullptr;
}

}  // namespace asyncsolve::par
