#include "asyncsolve/par/progress.hpp"

#include <mpi.h>

#include <algorithm>
#include <utility>

#include "asyncsolve/core/error.hpp"
#include "asyncsolve/par/check.hpp"

namespace asyncsolve::par {

ProgressThread::ProgressThread(const Comm& comm, std::chrono::microseconds interval)
    : interval_(interval) {
  int provided = MPI_THREAD_SINGLE;
  check_mpi(MPI_Query_thread(&provided), "MPI_Query_thread");
  if (provided != MPI_THREAD_MULTIPLE) {
    throw core::RuntimeFailure(
        "a progress thread needs MPI_THREAD_MULTIPLE, which MPI did not provide");
  }
  comm_ = comm.dup();
  thread_ = std::thread([this] { run(); });
  // Return once the thread has turned the engine once: a short solve then
  // never runs without its progress thread. Without this wait, a launcher
  // whose ranks spin (MPICH's ch4 polls without yielding) can leave the new
  // thread unscheduled until the solve has ended.
  while (passes_.load(std::memory_order_acquire) == 0) std::this_thread::yield();
}

ProgressThread::~ProgressThread() {
  running_.store(false, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

int ProgressThread::add(std::function<void()> poll) {
  const std::lock_guard lock(mutex_);
  polls_.emplace_back(next_id_, std::move(poll));
  return next_id_++;
}

void ProgressThread::remove(int id) {
  const std::lock_guard lock(mutex_);
  polls_.erase(
      std::remove_if(polls_.begin(), polls_.end(), [id](const auto& p) { return p.first == id; }),
      polls_.end());
}

void ProgressThread::stop() {
  running_.store(false, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
  comm_.free();
}

void ProgressThread::run() {
  const MPI_Comm comm = comm_.get();
  while (running_.load(std::memory_order_acquire)) {
    {
      const std::lock_guard lock(mutex_);
      for (auto& [id, poll] : polls_) poll();
    }
    // Any MPI call turns the library's progress engine; a probe on a private
    // communicator matches nothing and costs little.
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE);
    passes_.fetch_add(1, std::memory_order_release);
    if (interval_.count() > 0) {
      std::this_thread::sleep_for(interval_);
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace asyncsolve::par
