#pragma once
// Internal, host-only (CUDA builds): one host thread that runs a GPU operation's uploads of host
// data in order (staged copies of pageable memory take host threads of their own), kept for a
// whole join or group-by.
#include "core/cuda_try.hpp"
#include "core/transfer.hpp"  // upload_segments

#include <joinery/table.hpp>

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>
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
  /// Runs f on the worker; its result or exception arrives through the future (a device the
  /// worker could not make current fails every task with a clear error).
  template <class F>
  auto submit(F&& f) {
    std::packaged_task<std::invoke_result_t<F>()> task(
      [this, g = std::forward<F>(f)]() mutable {
        if (device_error_ != cudaSuccess) {
          throw cuda_error(std::string("the upload thread could not make its GPU current: ") +
                           cudaGetErrorString(device_error_));
        }
        return g();
      });
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
    device_error_ = cudaSetDevice(device);
    if (device_error_ != cudaSuccess) { (void)cudaGetLastError(); }
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) { return; }
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();  // exceptions travel to the future
    }
  }

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  cudaError_t device_error_ = cudaSuccess;  // written before the first task is taken
  std::thread thread_;  // last: started once the members above exist
};

/// A table's rows on the device chunk after chunk: chunk i + 1 is uploaded by a worker thread
/// on its own stream into one of two slots while the caller reads chunk i from the other.
/// Columns listed in `read` that are device-resident are views (nothing crosses); the others
/// are copied (pageable ones staged through pinned buffers); columns not read stay as given.
class chunk_uploader {
 public:
  chunk_uploader(table_view const& t, std::vector<size_type> read, size_type chunk_rows,
                 memory_resource* dev, stream_ref stream)
      : table_(t), read_(std::move(read)), chunk_rows_(std::max<size_type>(chunk_rows, 1)) {
    bool all_on_device = true;
    for (auto c : read_) { all_on_device = all_on_device && t.column(c).space() == memory_space::device; }
    if (all_on_device) { return; }
    for (auto& slot : slots_) {
      slot.resize(static_cast<std::size_t>(t.num_columns()));
      for (auto c : read_) {
        if (t.column(c).space() != memory_space::device) {
          slot[static_cast<std::size_t>(c)] = column(t.column(c).type(), chunk_rows_, dev, stream);
        }
      }
    }
    stream.synchronize();  // the slots exist before the worker writes them
    int device = 0;
    JOINERY_CUDA_TRY(cudaGetDevice(&device));
    worker_ = std::make_unique<upload_worker>(device);
  }
  chunk_uploader(chunk_uploader const&) = delete;
  chunk_uploader& operator=(chunk_uploader const&) = delete;
  ~chunk_uploader() {
    if (next_.valid()) { next_.wait(); }  // it writes a slot
  }

  [[nodiscard]] size_type chunks() const {
    auto const rows = table_.num_rows();
    return rows == 0 ? 0 : (rows + chunk_rows_ - 1) / chunk_rows_;
  }
  [[nodiscard]] size_type begin_of(size_type i) const { return i * chunk_rows_; }
  [[nodiscard]] size_type rows_of(size_type i) const {
    return std::min(chunk_rows_, table_.num_rows() - begin_of(i));
  }
  /// Starts chunk i's upload; the slot it takes (i mod 2) must no longer be read.
  void start(size_type i) {
    auto const begin = begin_of(i);
    auto const n = rows_of(i);
    if (worker_ == nullptr) {
      std::promise<std::vector<column_view>> ready;
      ready.set_value(views(nullptr, begin, n));
      next_ = ready.get_future();
      return;
    }
    auto* slot = &slots_[static_cast<std::size_t>(i % 2)];
    next_ = worker_->submit([this, slot, begin, n] { return views(slot, begin, n); });
  }
  /// The columns of the chunk last started (the table's columns, those read on the device).
  std::vector<column_view> take() { return next_.get(); }

 private:
  std::vector<column_view> views(std::vector<column>* slot, size_type begin, size_type n) {
    std::vector<column_view> cols(table_.columns());
    std::vector<copy_segment> pageable, pinned;
    for (auto c : read_) {
      auto const& col = table_.column(c);
      auto const w = size_of(col.type());
      auto const* src = static_cast<unsigned char const*>(col.data()) + static_cast<std::size_t>(begin) * w;
      auto& v = cols[static_cast<std::size_t>(c)];
      if (col.space() == memory_space::device) {
        v = column_view(col.type(), n == 0 ? nullptr : src, n, memory_space::device);
        continue;
      }
      auto& dst = (*slot)[static_cast<std::size_t>(c)];
      if (n > 0) {
        (col.space() == memory_space::host ? pageable : pinned)
          .push_back({dst.data(), src, static_cast<std::size_t>(n) * w});
      }
      v = column_view(col.type(), n == 0 ? nullptr : dst.data(), n, memory_space::device);
    }
    if (!pinned.empty()) { upload_segments(pinned, memory_space::pinned_host, copy_stream_.ref()); }
    if (!pageable.empty()) { upload_segments(pageable, memory_space::host, copy_stream_.ref()); }
    return cols;
  }

  table_view table_;
  std::vector<size_type> read_;
  size_type chunk_rows_;
  std::vector<column> slots_[2];
  cuda_stream copy_stream_;
  std::unique_ptr<upload_worker> worker_;
  std::future<std::vector<column_view>> next_;
};

}  // namespace joinery::detail::gpu
