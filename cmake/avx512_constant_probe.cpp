// Configure-time probe (CMakeLists.txt): GCC 12.2 with AVX-512 enabled
// (-march=native on an AVX-512 machine, e.g. x86-64-v4) materialises the
// constant vector {1, 1, 1, 0} as a broadcast of 1.0 into all four lanes
// (SLP vectoriser; -O2 and up). Exits 0 if the compiler gets it right.
#include <cstdio>
#include <vector>

int main() {
  std::vector<double> v{1, 1, 1, 0};
  std::printf("%g %g %g %g\n", v[0], v[1], v[2], v[3]);
  return v[3] == 0.0 ? 0 : 1;
}
