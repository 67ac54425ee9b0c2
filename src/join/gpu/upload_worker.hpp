#pragma once
// Internal, host-only: one host thread that runs a GPU join's uploads of host data in order
// (staged copies of pageable memory take host threads of their own), kept for a whole join.
#include "core/cuda_try.hpp"

#include <cuda_runtime.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>

namespace joinery::detail::gpu {

/// Runs submitted tasks in order on its own thread with the caller's device current: a thread
/// per chunk would also start a fresh OpenMP team for each staged copy.
class upload_worker {
 public:
  explicit upload_worker(int device) : thread_([this, device] { loop(device); }) {}
  upload_worker(upload_worker const&) = delete;
  upload_worker& operator=(upload_worker const&) = delete;
  ~upload_worker() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_one();
    thread_.join();
  }
  template <class F>
  auto submit(F&& f) {
    std::packaged_task<std::invoke_result_t<F>()> task(std::forward<F>(f));
    auto result = task.get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace_back([t = std::make_shared<decltype(task)>(std::move(task))] { (*t)(); });
    }
    ready_.notify_one();
    return result;
  }

 private:
  void loop(int device) {
    bool const device_set = cudaSetDevice(device) == cudaSuccess;
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) { return; }
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      if (!device_set) { (void)cudaGetLastError(); }
      task();  // exceptions travel to the future
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the members above exist
};

}  // namespace joinery::detail::gpu
