#pragma once
/// The Stencil2D halo-exchange benchmark of paper 004 as a library: a square
/// n x n block per rank on a 2-D periodic process grid (MPI_Dims_create),
/// halos of width r exchanged with all 8 neighbours (faces and corners), then
/// the (2r+1) x (2r+1) filter of kernels::Filter2d over the block.
///
/// One iteration:  V(interior) = dom;  exchange V's halos;  dom = filter(V).
/// Halo bytes per rank and iteration: 8 (4 n r + 4 r^2) received (and sent).
///
/// Variants, by transport (make_stencil2d):
///   mpi   trivial   all 8 MPI_Irecv + MPI_Isend, MPI_Waitall, filter
///         sendrecv  8 MPI_Sendrecv (one per direction), filter
///         halo      x faces (Isend/Irecv pairs, Waitall), then y faces with
///                   the halo columns included, which carries the corners
///   rma   put       puts of the 8 border blocks into the neighbours' halos,
///   shmem           filter of the inner region meanwhile, pairwise flags,
///                   filter of the border
///         get       each rank publishes its block (flag), then gets the 8
///                   halo blocks in bulk (one call per block), filter
///         get0      all ranks filter the inner region first, then fine-grain
///                   gets (one per halo row) and the border
///         get1      ranks with even cx + cy as get0; the others get the halo
///                   and filter the border first, then the inner region
/// The one-sided variants synchronise only pairwise, through monotonic
/// counters in the window (see src/comm/stencil2d_onesided.cpp); there is no
/// global synchronisation inside the loop.
#include <array>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::kernels {

/// The 8 directions, and their number.
enum class Dir2d : int { e = 0, w, n, s, ne, nw, se, sw };
inline constexpr int stencil2d_directions = 8;
/// Unit steps (dx, dy) of direction d, and its opposite.
int dir2d_dx(int d) noexcept;
int dir2d_dy(int d) noexcept;
int dir2d_opposite(int d) noexcept;

/// The periodic 2-D process grid: dims from MPI_Dims_create, rank = cx * py
/// + cy (MPI's row-major Cartesian order), the 8 neighbours. Not collective.
struct Stencil2dGrid {
  int px = 1, py = 1;  ///< ranks along x and y
  int cx = 0, cy = 0;  ///< this rank's coordinates
  int rank = 0;
  std::array<int, stencil2d_directions> neighbour{};  ///< rank in direction d

  static Stencil2dGrid create(int rank, int size);
  int rank_of(int x, int y) const noexcept;
};

/// What a Stencil2d runs.
struct Stencil2dSpec {
  int local = 64;  ///< n: the block is n x n
  int radius = 1;  ///< r: 1 <= r < n
  /// Test hook: the last rank adds 1 to the first point of its north-east
  /// halo corner every time its halo is complete, so validation must fail.
  bool corrupt_corner = false;
};

/// One rank's times of one run() (seconds).
struct Stencil2dTiming {
  long iterations = 0;
  double total_s = 0.0;   ///< the whole loop
  double filter_s = 0.0;  ///< of it, in the filter (inner + border)
  double exchange_s() const noexcept { return total_s - filter_s; }
};

/// One variant on one transport. Created collectively by make_stencil2d;
/// free() is collective and must be called, by every rank, before MPI (and
/// OpenSHMEM) finalize; the destructor never communicates. Not copyable.
class Stencil2d {
 public:
  virtual ~Stencil2d() = default;
  Stencil2d(const Stencil2d&) = delete;
  Stencil2d& operator=(const Stencil2d&) = delete;

  /// "mpi", "rma" or "shmem"; the variant's name.
  virtual std::string transport() const = 0;
  virtual std::string variant() const = 0;
  /// Messages (or one-sided calls) per rank per iteration for the halo data.
  virtual long messages_per_iteration() const = 0;

  /// Local: sets the block to the initial field (kernels::stencil2d_initial).
  void reset();
  /// Collective: `iterations` iterations; returns this rank's times. May be
  /// called again (after reset() or not): pairwise counters keep counting.
  virtual Stencil2dTiming run(long iterations) = 0;
  /// Collective: releases windows, symmetric memory, datatypes and the
  /// duplicated communicator. Idempotent.
  virtual void free() = 0;

  /// This rank's n x n block, row-major (y rows).
  std::span<const double> field() const noexcept { return dom_; }
  const Stencil2dGrid& grid() const noexcept { return grid_; }
  const Stencil2dSpec& spec() const noexcept { return spec_; }
  /// Halo bytes this rank receives per iteration: 8 (4 n r + 4 r^2).
  long halo_bytes() const noexcept;

 protected:
  Stencil2d(const Stencil2dGrid& grid, const Stencil2dSpec& spec);
  Stencil2dGrid grid_;
  Stencil2dSpec spec_;
  std::vector<double> dom_;
};

/// The transports (see above).
enum class Stencil2dTransport { mpi, rma, shmem };
/// Their names, in Stencil2dTransport's order.
inline constexpr std::array<std::string_view, 3> stencil2d_transport_table{"mpi", "rma", "shmem"};

/// The variants (see above): trivial, sendrecv and halo over mpi; put, get,
/// get0 and get1 over rma and shmem.
enum class Stencil2dVariant { trivial, sendrecv, halo, put, get, get0, get1 };
/// Their names, in Stencil2dVariant's order.
inline constexpr std::array<std::string_view, 7> stencil2d_variant_table{
    "trivial", "sendrecv", "halo", "put", "get", "get0", "get1"};

/// The --variant value of the Stencil2D drivers that runs every variant.
inline constexpr std::string_view stencil2d_every_variant = "all";

/// True if `variant` exists for `transport`.
bool is_stencil2d_variant(Stencil2dTransport transport, Stencil2dVariant variant) noexcept;

/// Collective over `comm`: creates `variant` over `transport`. shmem needs
/// OpenSHMEM started (par::Shmem) and `comm` spanning the SHMEM world with
/// rank == PE. Throws std::invalid_argument for a variant the transport
/// lacks or a bad spec (the same on every rank), core::RuntimeFailure if
/// OpenSHMEM is missing.
std::unique_ptr<Stencil2d> make_stencil2d(Stencil2dTransport transport, Stencil2dVariant variant,
                                          const par::Comm& comm, const Stencil2dSpec& spec);

/// For embedders, by name: the transports (mpi, rma, shmem).
std::vector<std::string> stencil2d_transport_names();
/// The variants of `transport` (empty for an unknown one).
std::vector<std::string> stencil2d_variant_names(std::string_view transport);
/// True if `variant` exists for `transport`.
bool is_stencil2d_variant(std::string_view transport, std::string_view variant);
/// make_stencil2d by name (std::invalid_argument for unknown names).
std::unique_ptr<Stencil2d> make_stencil2d(std::string_view transport, std::string_view variant,
                                          const par::Comm& comm, const Stencil2dSpec& spec);

/// The first point of a block that differs from the reference.
struct Stencil2dCheck {
  bool ok = true;
  long gx = -1, gy = -1;  ///< global coordinates of the first wrong point (row-major order)
  double got = 0.0, expected = 0.0;
  long wrong_points = 0;  ///< over all ranks
};

/// Collective over `comm`: rank 0 runs kernels::filter2d_serial on the global
/// (px n) x (py n) domain for `iterations` iterations and scatters it; each
/// rank gets its n x n block (row-major).
std::vector<double> stencil2d_reference(const par::Comm& comm, const Stencil2dGrid& grid,
                                        const Stencil2dSpec& spec, long iterations);

/// Collective over `comm`: compares each rank's `field` with its block of the
/// reference (relative tolerance `tol`); every rank gets the same verdict.
Stencil2dCheck stencil2d_compare(const par::Comm& comm, const Stencil2dGrid& grid,
                                 const Stencil2dSpec& spec, std::span<const double> field,
                                 std::span<const double> reference, double tol = 1e-12);

}  // namespace asyncsolve::kernels
