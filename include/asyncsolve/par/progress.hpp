#pragma once
/// A thread reserved for communication (paper 002's reserved communication
/// thread): while the owner computes, it keeps MPI's progress engine turning
/// (Open MPI moves messages and advances non-blocking collectives only
/// inside MPI calls) and calls the progress functions registered with it.
///
/// Needs MPI_THREAD_MULTIPLE (the constructor checks MPI_Query_thread).
/// Thread safety contract: a registered function is called by the progress
/// thread with mutex() held; the owner must hold mutex() too whenever it
/// touches the object that function progresses (e.g. around test()/wait() of
/// a reduction). Objects progressed only through MPI itself (MPI_Iallreduce,
/// MPI_Ialltoallv, MPI_Isend/MPI_Irecv) need no registration: the thread's
/// MPI_Iprobe calls progress them.
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "asyncsolve/par/comm.hpp"

namespace asyncsolve::par {

class ProgressThread {
 public:
  /// Collective over `comm` (duplicated for the thread's probes). Starts the
  /// thread, which loops: call every registered function, MPI_Iprobe on its
  /// communicator, then sleep `interval` (0: yield only). Throws
  /// core::RuntimeFailure without MPI_THREAD_MULTIPLE.
  explicit ProgressThread(const Comm& comm,
                          std::chrono::microseconds interval = std::chrono::microseconds{0});
  ~ProgressThread();
  ProgressThread(const ProgressThread&) = delete;
  ProgressThread& operator=(const ProgressThread&) = delete;

  /// Registers `poll`; returns its id for remove(). Takes mutex().
  int add(std::function<void()> poll);
  /// Unregisters; after it returns the thread no longer calls that function.
  void remove(int id);
  /// The lock the thread holds while it calls registered functions.
  std::mutex& mutex() noexcept { return mutex_; }
  /// Passes of the thread's loop so far.
  long passes() const noexcept { return passes_.load(std::memory_order_relaxed); }
  /// Collective: stops and joins the thread, frees its communicator.
  /// Idempotent; the destructor stops the thread (not collectively) if
  /// stop() was not called.
  void stop();

 private:
  void run();

  Comm comm_;
  std::chrono::microseconds interval_;
  std::mutex mutex_;
  std::vector<std::pair<int, std::function<void()>>> polls_;
  int next_id_ = 0;
  std::atomic<bool> running_{true};
  std::atomic<long> passes_{0};
  std::thread thread_;
};

}  // namespace asyncsolve::par
