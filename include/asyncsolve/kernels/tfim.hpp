#pragma once
/// The transverse-field Ising model (TFIM) of paper 004's SPIN benchmark:
///
///   H = J sum_<ij> Z_i Z_j + Gamma sum_i X_i
///
/// with Z and X the Pauli matrices (eigenvalues +-1, not spin-1/2's +-1/2):
/// the diagonal element of state s is J times the sum over bonds of z_i z_j,
/// z_i = +1 where bit i of s is 0 and -1 where it is 1, and every single bit
/// flip s -> s ^ (1 << i) has the matrix element Gamma (the paper's code
/// adds `gamma * v1[flip_state(s, k)]`). Spin-1/2 operators S = sigma/2 give
/// the same eigenvectors at J/4 and Gamma/2.
///
/// Lattices: `chain` (periodic, n bonds i -- i+1 mod n) and `square:LxW`
/// (periodic, site x + L y, bonds to x+1 mod L and y+1 mod W; 2 L W bonds).
/// Bonds are counted as the sum over sites gives them: a chain of 2 sites,
/// or a side of length 2, has each of its pairs twice.
///
/// Distribution over 2^m ranks: rank r holds the states whose m high bits
/// are r, i.e. the block [r 2^(n-m), (r+1) 2^(n-m)). Flips of the n - m low
/// bits stay in the block (the local part); a flip of high bit n - m + k
/// maps local index i of rank r to local index i of rank r ^ (1 << k), so
/// the remote part adds Gamma times that rank's whole block.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace asyncsolve::kernels {

/// Largest number of sites: 2^34 states are 128 GiB per vector.
inline constexpr int tfim_max_sites = 34;

/// A lattice of n sites and its bonds.
struct SpinLattice {
  std::string name;  ///< "chain" or "square:LxW"
  int sites = 0;
  int length = 0;  ///< square: L (x); chain: n
  int width = 1;   ///< square: W (y); chain: 1
  /// Bonds (i, j), each pair as often as the sum over sites has it.
  std::vector<std::pair<int, int>> bonds;
};

/// A periodic chain of `sites` sites (sites >= 2).
SpinLattice make_chain(int sites);

/// A periodic L x W square lattice (L, W >= 2).
SpinLattice make_square(int length, int width);

/// The Hamiltonian on one lattice, with the diagonal computed by bit
/// operations (the paper's "operator has integer operations").
class TfimHamiltonian {
 public:
  TfimHamiltonian(const SpinLattice& lattice, double coupling, double field);

  int sites() const noexcept { return sites_; }
  double coupling() const noexcept { return coupling_; }
  double field() const noexcept { return field_; }
  std::size_t bonds() const noexcept { return bond_count_; }

  /// J sum_<ij> z_i z_j for state `s`.
  double diagonal(std::uint64_t s) const noexcept {
    int anti = 0;  // antiparallel bonds
    for (const Shift& b : shifts_) anti += __builtin_popcountll((s ^ (s >> b.distance)) & b.mask);
    return coupling_ * static_cast<double>(static_cast<long long>(bond_count_) - 2LL * anti);
  }

  /// Local part of y = H x on the rank whose block starts at state
  /// `first_state` and spans 2^`local_bits` states: y = D x + Gamma sum over
  /// the local_bits low flips, flips added in increasing bit order. x and y
  /// must not overlap.
  void apply_local(std::span<const double> x, std::span<double> y, std::uint64_t first_state,
                   int local_bits) const;

  /// Reference: y = H x on all 2^n states, serially; the same operation
  /// order per element as apply_local followed by the remote contributions
  /// of increasing high bit.
  void apply_ref(std::span<const double> x, std::span<double> y) const;

  /// The dense 2^n x 2^n matrix, column-major (tests; n <= 14).
  std::vector<double> dense() const;

 private:
  struct Shift {
    int distance;        ///< j - i of the bonds in this group
    std::uint64_t mask;  ///< bit i set for every bond (i, i + distance) of the group
  };
  int sites_;
  double coupling_;
  double field_;
  std::size_t bond_count_;
  std::vector<Shift> shifts_;
};

/// The ground-state energy of the periodic chain of even `sites` from its
/// free-fermion solution (Jordan-Wigner; Pfeuty 1970): with the Pauli
/// convention above,
///   E0 = - sum_{q = 0}^{n-1} sqrt(J^2 + Gamma^2 - 2 |J Gamma| cos k_q),
///   k_q = (2 q + 1) pi / n   (the antiperiodic, even-parity sector).
/// For even n the signs of J and Gamma do not change the spectrum (rotate
/// every other spin about x, or all about z). Throws std::invalid_argument
/// for odd n (frustrated for J > 0, and a different sector).
double tfim_chain_ground_energy(int sites, double coupling, double field);

/// Deterministic start vector entry for global state `s`: a hash of s
/// mapped to [-1, 1), the same on any rank count.
double tfim_start_value(std::uint64_t s) noexcept;

}  // namespace asyncsolve::kernels
