// Ranks, their threads and streams, and the all-to-all over CUDA peer copies or
// NCCL.
#include "core/communicator.hpp"

#include <joinery/error.hpp>

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <type_traits>
#include <utility>

#if defined(JOINERY_HAS_CUDA)
#include "core/cuda_try.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#if __has_include(<nccl.h>)
#include <nccl.h>
#define JOINERY_HAS_NCCL_HEADER 1
#endif
#endif

namespace joinery::detail {

#if defined(JOINERY_HAS_NCCL_HEADER)
namespace {

/// NCCL's entry points, loaded once from libnccl.so.2: a machine without NCCL
/// still runs the peer-copy exchange and everything else.
struct nccl_api {
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  std::string why_not;

  nccl_api() {
    void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) { lib = dlopen("libnccl.so", RTLD_NOW | RTLD_GLOBAL); }
    if (lib == nullptr) {
      char const* e = dlerror();
      why_not = std::string("libnccl.so.2 could not be loaded") + (e ? std::string(": ") + e : "");
      return;
    }
    auto load = [&](auto& fn, char const* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (fn == nullptr && why_not.empty()) { why_not = std::string("NCCL lacks ") + name; }
    };
    load(comm_init_all, "ncclCommInitAll");
    load(send, "ncclSend");
    load(recv, "ncclRecv");
    load(group_start, "ncclGroupStart");
    load(group_end, "ncclGroupEnd");
    load(error_string, "ncclGetErrorString");
  }
  [[nodiscard]] bool ok() const noexcept { return why_not.empty(); }
};

nccl_api const& nccl() {
  static nccl_api const api;
  return api;
}

void nccl_try(ncclResult_t r, char const* what) {
  if (r != ncclSuccess) {
    throw cuda_error(std::string("NCCL error in ") + what + ": " + nccl().error_string(r));
  }
}

/// Communicators per device list, made once per process: ncclCommInitAll takes
/// hundreds of milliseconds. Never destroyed (tearing NCCL down after CUDA has
/// gone fails).
std::vector<ncclComm_t> const& nccl_comms_for(std::vector<int> const& devices) {
  static std::mutex m;
  static auto* cache = new std::map<std::vector<int>, std::vector<ncclComm_t>>;
  std::lock_guard lock(m);
  auto it = cache->find(devices);
  if (it != cache->end()) { return it->second; }
  std::vector<ncclComm_t> comms(devices.size());
  nccl_try(nccl().comm_init_all(comms.data(), static_cast<int>(devices.size()), devices.data()),
           "ncclCommInitAll");
  return cache->emplace(devices, std::move(comms)).first->second;
}

}  // namespace
#endif

bool nccl_available(std::string* why) {
#if defined(JOINERY_HAS_NCCL_HEADER)
  if (!nccl().ok() && why != nullptr) { *why = nccl().why_not; }
  return nccl().ok();
#else
  if (why != nullptr) { *why = "joinery was built without NCCL's header (nccl.h)"; }
  return false;
#endif
}

struct communicator::nccl_state {
#if defined(JOINERY_HAS_NCCL_HEADER)
  std::vector<ncclComm_t> comms;
#endif
};

#if defined(JOINERY_HAS_CUDA)
namespace {

/// Lets every pair of distinct devices reach each other's memory (NVLink where
/// present), once per process and pair.
void enable_peer_access(std::vector<int> const& devices) {
  static std::mutex m;
  static std::set<std::pair<int, int>> done;
  std::lock_guard lock(m);
  int current = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&current));
  for (int a : devices) {
    for (int b : devices) {
      if (a == b || done.count({a, b}) != 0) { continue; }
      done.insert({a, b});
      int can = 0;
      JOINERY_CUDA_TRY(cudaDeviceCanAccessPeer(&can, a, b));
      if (can == 0) {
        done.erase({a, b});
        (void)cudaSetDevice(current);
        JOINERY_FAIL("GPU " + std::to_string(a) + " cannot reach GPU " + std::to_string(b) +
                     "'s memory (no peer access between them); the multi-GPU algorithms need "
                     "peer access between their GPUs");
      }
      JOINERY_CUDA_TRY(cudaSetDevice(a));
      auto const err = cudaDeviceEnablePeerAccess(b, 0);
      if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
      } else {
        JOINERY_CUDA_TRY(err);
      }
      // Stream-ordered allocations (the device resource's pool) stay private to their GPU even
      // with peer access, unless the pool grants it: without this, copies between pools fail.
      cudaMemPool_t pool{};
      JOINERY_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, b));
      cudaMemAccessDesc access{};
      access.location.type = cudaMemLocationTypeDevice;
      access.location.id = a;
      access.flags = cudaMemAccessFlagsProtReadWrite;
      JOINERY_CUDA_TRY(cudaMemPoolSetAccess(pool, &access, 1));
    }
  }
  JOINERY_CUDA_TRY(cudaSetDevice(current));
}

}  // namespace
#endif

communicator::communicator(std::vector<int> devices, exchange_method method)
    : devices_(std::move(devices)) {
#if defined(JOINERY_HAS_CUDA)
  JOINERY_EXPECTS(!devices_.empty(), "a multi-GPU operation needs at least one device");
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  for (int d : devices_) {
    JOINERY_EXPECTS(d >= 0 && d < count, "no GPU with id " + std::to_string(d) + " (" +
                                           std::to_string(count) + " present)");
  }
  std::set<int> const distinct(devices_.begin(), devices_.end());
  bool const repeated = distinct.size() != devices_.size();
  std::string why;
  // Peer copies measured faster than NCCL's send / receive for the bucket exchange on NVLink
  // (BENCHMARKS.md, "Several GPUs"); NCCL serves where it is asked for.
  if (method == exchange_method::automatic) { method = exchange_method::peer_copy; }
  if (method == exchange_method::nccl) {
    JOINERY_EXPECTS(!repeated,
                    "the nccl exchange needs one rank per GPU, but a device is "
                    "listed twice; use the peer_copy exchange");
    JOINERY_EXPECTS(nccl_available(&why),
                    "the nccl exchange is not available: " + why + "; use the peer_copy exchange");
  }
  method_ = method;
  int current = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&current));
  try {
    for (int d : devices_) {
      JOINERY_CUDA_TRY(cudaSetDevice(d));
      cudaStream_t s{};
      JOINERY_CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      streams_.push_back(s);
    }
    JOINERY_CUDA_TRY(cudaSetDevice(current));
    if (distinct.size() > 1) { enable_peer_access(devices_); }
#if defined(JOINERY_HAS_NCCL_HEADER)
    if (method_ == exchange_method::nccl) {
      nccl_ = std::make_unique<nccl_state>();
      nccl_->comms = nccl_comms_for(devices_);
    }
#endif
  } catch (...) {
    for (auto* s : streams_) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(s)); }
    (void)cudaSetDevice(current);
    throw;
  }
#else
  (void)method;
  JOINERY_FAIL(
    "multi-GPU operations need the GPU backend, but joinery was "
    "built without CUDA");
#endif
}

communicator::~communicator() {
#if defined(JOINERY_HAS_CUDA)
  for (auto* s : streams_) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(s)); }
#endif
}

stream_ref communicator::stream_of(int rank) const {
  return stream_ref{streams_.at(static_cast<std::size_t>(rank))};
}

void communicator::for_each_rank(std::function<void(int)> const& fn) const {
  std::vector<std::exception_ptr> errors(devices_.size());
  std::vector<std::thread> threads;
  threads.reserve(devices_.size());
  for (int r = 0; r < size(); ++r) {
    threads.emplace_back([&, r] {
      try {
#if defined(JOINERY_HAS_CUDA)
        JOINERY_CUDA_TRY(cudaSetDevice(devices_[static_cast<std::size_t>(r)]));
#endif
        fn(r);
      } catch (...) { errors[static_cast<std::size_t>(r)] = std::current_exception(); }
    });
  }
  for (auto& t : threads) { t.join(); }
  for (auto const& e : errors) {
    if (e) { std::rethrow_exception(e); }
  }
}

void communicator::all_to_all(std::vector<buckets> const& rounds) const {
#if defined(JOINERY_HAS_CUDA)
  auto const n = static_cast<std::size_t>(size());
  // Offsets of bucket d in sender s's buffer and of sender s's bucket in receiver d's.
  struct offsets {
    std::vector<std::vector<std::size_t>> send_at, recv_at;
  };
  std::vector<offsets> at(rounds.size());
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    auto const& b = rounds[i];
    JOINERY_EXPECTS(b.send.size() == n && b.recv.size() == n && b.bytes.size() == n,
                    "all_to_all needs one send buffer, receive buffer and row of sizes per rank");
    at[i].send_at.assign(n, std::vector<std::size_t>(n + 1, 0));
    at[i].recv_at.assign(n, std::vector<std::size_t>(n + 1, 0));
    for (std::size_t s = 0; s < n; ++s) {
      JOINERY_EXPECTS(b.bytes[s].size() == n, "all_to_all: a row of sizes per rank");
      for (std::size_t d = 0; d < n; ++d) {
        at[i].send_at[s][d + 1] = at[i].send_at[s][d] + b.bytes[s][d];
        at[i].recv_at[d][s + 1] = at[i].recv_at[d][s] + b.bytes[s][d];
      }
    }
  }
  auto stream = [&](std::size_t r) { return static_cast<cudaStream_t>(streams_[r]); };
  int current = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&current));
  if (method_ == exchange_method::peer_copy) {
    // Step k: every rank sends to rank + k, so no receiver takes two senders at once.
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t s = 0; s < n; ++s) {
        auto const d = (s + k) % n;
        JOINERY_CUDA_TRY(cudaSetDevice(devices_[s]));
        for (std::size_t i = 0; i < rounds.size(); ++i) {
          auto const bytes = rounds[i].bytes[s][d];
          if (bytes == 0) { continue; }
          JOINERY_CUDA_TRY(cudaMemcpyPeerAsync(
            static_cast<unsigned char*>(rounds[i].recv[d]) + at[i].recv_at[d][s], devices_[d],
            static_cast<unsigned char const*>(rounds[i].send[s]) + at[i].send_at[s][d],
            devices_[s], bytes, stream(s)));
        }
      }
    }
  } else {
#if defined(JOINERY_HAS_NCCL_HEADER)
    auto const& api = nccl();
    nccl_try(api.group_start(), "ncclGroupStart");
    for (std::size_t i = 0; i < rounds.size(); ++i) {
      auto const& b = rounds[i];
      for (std::size_t r = 0; r < n; ++r) {
        auto const comm = nccl_->comms[r];
        for (std::size_t k = 0; k < n; ++k) {
          auto const to = (r + k) % n;
          auto const from = (r + n - k) % n;
          if (b.bytes[r][to] != 0) {
            nccl_try(api.send(static_cast<unsigned char const*>(b.send[r]) + at[i].send_at[r][to],
                              b.bytes[r][to], ncclUint8, static_cast<int>(to), comm, stream(r)),
                     "ncclSend");
          }
          if (b.bytes[from][r] != 0) {
            nccl_try(api.recv(static_cast<unsigned char*>(b.recv[r]) + at[i].recv_at[r][from],
                              b.bytes[from][r], ncclUint8, static_cast<int>(from), comm,
                              stream(r)),
                     "ncclRecv");
          }
        }
      }
    }
    nccl_try(api.group_end(), "ncclGroupEnd");
#endif
  }
  for (std::size_t r = 0; r < n; ++r) {
    JOINERY_CUDA_TRY(cudaSetDevice(devices_[r]));
    JOINERY_CUDA_TRY(cudaStreamSynchronize(stream(r)));
  }
  JOINERY_CUDA_TRY(cudaSetDevice(current));
#else
  (void)rounds;
#endif
}

}  // namespace joinery::detail
