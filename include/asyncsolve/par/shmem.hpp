#pragma once
/// OpenSHMEM start-up, after MPI. Optional: a build without OpenSHMEM
/// (ASYNCSOLVE_SHMEM=OFF, or no OSHMEM found) has shmem_available() false and
/// a Shmem constructor that throws.
namespace asyncsolve::par {

/// True if this build links OpenSHMEM.
bool shmem_available() noexcept;

/// True between a Shmem's construction and its finalize() (on this PE).
bool shmem_initialized() noexcept;

/// Owns OpenSHMEM initialisation. Construct at most one, after
/// par::Environment (MPI_Init_thread), on every process; call finalize()
/// before Environment::finalize(). With Open MPI's OSHMEM, shmem_finalize
/// also finalizes MPI, and Environment::finalize() then skips MPI_Finalize.
/// Needs OMPI_MCA_osc=ucx in the environment with Debian's Open MPI 4.1, or
/// shmem_finalize crashes. Not copyable or movable.
class Shmem {
 public:
  /// shmem_init; throws std::runtime_error if OpenSHMEM is not in this build.
  Shmem();
  ~Shmem();
  Shmem(const Shmem&) = delete;
  Shmem& operator=(const Shmem&) = delete;

  /// Collective over all PEs: shmem_finalize. Idempotent.
  void finalize();

  /// This PE's number and the number of PEs.
  int my_pe() const noexcept;
  int n_pes() const noexcept;

 private:
  bool finalized_ = false;
};

}  // namespace asyncsolve::par
