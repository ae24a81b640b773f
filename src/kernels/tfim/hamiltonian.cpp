#include "asyncsolve/kernels/tfim.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace asyncsolve::kernels {

SpinLattice make_chain(int sites) {
  if (sites < 2)
    throw std::invalid_argument(fmt::format("a chain needs >= 2 sites, got {}", sites));
  SpinLattice l;
  l.name = "chain";
  l.sites = sites;
  l.length = sites;
  l.width = 1;
  for (int i = 0; i < sites; ++i) l.bonds.emplace_back(i, (i + 1) % sites);
  return l;
}

SpinLattice make_square(int length, int width) {
  if (length < 2 || width < 2) {
    throw std::invalid_argument(
        fmt::format("a square lattice needs sides >= 2, got {}x{}", length, width));
  }
  SpinLattice l;
  l.name = fmt::format("square:{}x{}", length, width);
  l.sites = length * width;
  l.length = length;
  l.width = width;
  for (int y = 0; y < width; ++y) {
    for (int x = 0; x < length; ++x) {
      const int i = x + length * y;
      l.bonds.emplace_back(i, (x + 1) % length + length * y);
      l.bonds.emplace_back(i, x + length * ((y + 1) % width));
    }
  }
  return l;
}

TfimHamiltonian::TfimHamiltonian(const SpinLattice& lattice, double coupling, double field)
    : sites_(lattice.sites), coupling_(coupling), field_(field), bond_count_(lattice.bonds.size()) {
  if (sites_ < 1 || sites_ > 62) throw std::invalid_argument("TfimHamiltonian: bad site count");
  // Group the bonds by distance; a pair that is already in a group (a
  // doubled bond) opens a new group of the same distance.
  for (auto [i, j] : lattice.bonds) {
    if (i > j) std::swap(i, j);
    if (i == j || i < 0 || j >= sites_) throw std::invalid_argument("TfimHamiltonian: bad bond");
    const std::uint64_t bit = std::uint64_t{1} << i;
    bool placed = false;
    for (Shift& s : shifts_) {
      if (s.distance == j - i && (s.mask & bit) == 0) {
        s.mask |= bit;
        placed = true;
        break;
      }
    }
    if (!placed) shifts_.push_back(Shift{j - i, bit});
  }
}

void TfimHamiltonian::apply_local(std::span<const double> x, std::span<double> y,
                                  std::uint64_t first_state, int local_bits) const {
  const std::size_t n = std::size_t{1} << local_bits;
  if (x.size() < n || y.size() < n) throw std::invalid_argument("apply_local: short vectors");
  const double g = field_;
  const double* xp = x.data();
  double* yp = y.data();
  // Tiles of y small enough to stay in L1/L2 while every flip is added: the
  // flips inside the tile read x from cache, those of higher bits stream
  // through one other tile of x at a time. Each y_i still gets its terms in
  // increasing k, as apply_ref adds them: the same bits.
  const std::size_t tile = std::min<std::size_t>(n, std::size_t{1} << 11);
  for (std::size_t t = 0; t < n; t += tile) {
    double* yt = yp + t;
    const double* xt = xp + t;
    // y_i = D_ii x_i
    for (std::size_t i = 0; i < tile; ++i) yt[i] = diagonal(first_state + t + i) * xt[i];
    // y_i += Gamma x_{i ^ 2^k}, k = 0 .. local_bits - 1
    for (int k = 0; k < local_bits; ++k) {
      const std::size_t bit = std::size_t{1} << k;
      if (bit >= tile) {
        const double* xf = xp + (t ^ bit);  // the whole tile flips to another tile
        for (std::size_t i = 0; i < tile; ++i) yt[i] += g * xf[i];
      } else {
        for (std::size_t i = 0; i < tile; ++i) yt[i] += g * xt[i ^ bit];
      }
    }
  }
}

void TfimHamiltonian::apply_ref(std::span<const double> x, std::span<double> y) const {
  const std::size_t n = std::size_t{1} << sites_;
  if (x.size() != n || y.size() != n) throw std::invalid_argument("apply_ref: vectors of 2^n");
  for (std::size_t s = 0; s < n; ++s) {
    double acc = diagonal(s) * x[s];
    for (int k = 0; k < sites_; ++k) acc += field_ * x[s ^ (std::size_t{1} << k)];
    y[s] = acc;
  }
}

std::vector<double> TfimHamiltonian::dense() const {
  if (sites_ > 14) throw std::invalid_argument("dense: at most 14 sites");
  const std::size_t n = std::size_t{1} << sites_;
  std::vector<double> h(n * n, 0.0);
  for (std::size_t s = 0; s < n; ++s) {
    h[s + n * s] = diagonal(s);
    for (int k = 0; k < sites_; ++k) h[(s ^ (std::size_t{1} << k)) + n * s] += field_;
  }
  return h;
}

double tfim_chain_ground_energy(int sites, double coupling, double field) {
  if (sites < 2 || sites % 2 != 0) {
    throw std::invalid_argument(
        fmt::format("free-fermion energy: even n >= 2 expected, got {}", sites));
  }
  const double j = std::abs(coupling);
  const double g = std::abs(field);
  double e = 0.0;
  for (int q = 0; q < sites; ++q) {
    const double k = (2.0 * q + 1.0) * std::numbers::pi / sites;
    e -= std::sqrt(std::max(0.0, j * j + g * g - 2.0 * j * g * std::cos(k)));
  }
  return e;
}

double tfim_start_value(std::uint64_t s) noexcept {
  // splitmix64 finaliser of the state index.
  std::uint64_t z = s + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  // 53 random bits -> [0, 1) -> [-1, 1)
  return static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
}

}  // namespace asyncsolve::kernels
