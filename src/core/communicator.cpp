// Ranks, their threads and streams, the rendezvous of a group of processes,
// and the collectives over host memory, CUDA peer copies or NCCL.
#include "core/communicator.hpp"

#include <joinery/error.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
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
    load(get_unique_id, "ncclGetUniqueId");
    load(comm_init_rank, "ncclCommInitRank");
    load(comm_destroy, "ncclCommDestroy");
    load(all_gather, "ncclAllGather");
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
struct cached_comms {
  std::vector<ncclComm_t> comms;
  // One operation at a time over all cached communicators: two device lists may share GPUs,
  // and NCCL operations of two communicators on one GPU at once may deadlock.
  std::shared_ptr<std::mutex> in_use;
};
cached_comms const& nccl_comms_for(std::vector<int> const& devices) {
  static std::mutex m;
  static auto* cache = new std::map<std::vector<int>, cached_comms>;
  std::lock_guard lock(m);
  auto it = cache->find(devices);
  if (it != cache->end()) { return it->second; }
  static auto const one_lock = std::make_shared<std::mutex>();
  cached_comms c;
  c.in_use = one_lock;
  c.comms.resize(devices.size());
  nccl_try(nccl().comm_init_all(c.comms.data(), static_cast<int>(devices.size()), devices.data()),
           "ncclCommInitAll");
  return cache->emplace(devices, std::move(c)).first->second;
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
  std::vector<ncclComm_t> comms;  // per local rank
  bool owned = false;             // made for this group of processes: destroyed with it
  // Cached communicators are shared: one operation at a time may use them.
  std::shared_ptr<std::mutex> in_use;
#endif
};

namespace {

/// What a rank throws when another rank's failure breaks the collective it waits in.
class released_by_failure : public std::runtime_error {
 public:
  released_by_failure() : std::runtime_error("another rank of the multi-GPU operation failed") {}
};

}  // namespace

/// What the ranks of this process share while they run: a barrier that a failing
/// rank can break, and a slot per rank for all_gather.
struct communicator::meeting {
  std::mutex m;
  std::condition_variable cv;
  std::size_t arrived = 0;
  std::uint64_t generation = 0;
  bool broken = false;
  std::mutex running;  // held by for_each_rank: one operation at a time on a communicator
  std::vector<std::vector<std::uint64_t>> slots;

  void reset(std::size_t ranks) {
    std::lock_guard lock(m);
    arrived = 0;
    broken = false;
    slots.assign(ranks, {});
  }
  void wait(std::size_t ranks) {
    std::unique_lock lock(m);
    if (broken) { throw_broken(); }
    auto const gen = generation;
    if (++arrived == ranks) {
      arrived = 0;
      ++generation;
      cv.notify_all();
      return;
    }
    cv.wait(lock, [&] { return generation != gen || broken; });
    if (generation == gen) { throw_broken(); }
  }
  void breaks() {
    std::lock_guard lock(m);
    broken = true;
    cv.notify_all();
  }
  [[noreturn]] static void throw_broken() { throw released_by_failure(); }
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

int gpus_present() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();
    count = 0;
  }
  return count;
}

void expect_device(int d) {
  auto const count = gpus_present();
  JOINERY_EXPECTS(d >= 0 && d < count,
                  "no GPU with id " + std::to_string(d) + " (" + std::to_string(count) + " present)");
}

cudaStream_t new_stream(int device) {
  int current = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&current));
  JOINERY_CUDA_TRY(cudaSetDevice(device));
  cudaStream_t s{};
  auto const err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  (void)cudaSetDevice(current);
  JOINERY_CUDA_TRY(err);
  return s;
}

#if defined(JOINERY_HAS_NCCL_HEADER)
/// Rank 0's half of the rendezvous: the unique id into a file that did not
/// exist (written beside it, then linked to its name, so that no rank reads half
/// a file and no existing file is replaced).
void publish_unique_id(std::string const& path, ncclUniqueId const& id) {
  auto const tmp = path + ".joinery-" + std::to_string(::getpid());
  int const fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  JOINERY_EXPECTS(fd >= 0, "cannot create the rendezvous file's temporary " + tmp + ": " +
                             std::strerror(errno));
  auto const wrote = ::write(fd, &id, sizeof(id));
  ::close(fd);
  if (wrote != static_cast<ssize_t>(sizeof(id))) {
    ::unlink(tmp.c_str());
    JOINERY_FAIL("cannot write the rendezvous file's temporary " + tmp);
  }
  auto const linked = ::link(tmp.c_str(), path.c_str());
  auto const err = errno;
  ::unlink(tmp.c_str());
  JOINERY_EXPECTS(linked == 0,
                  "cannot create the rendezvous file " + path + ": " + std::strerror(err) +
                    (err == EEXIST ? " (an earlier group may have left it: remove it if no "
                                     "group is starting with it, or name another file)"
                                   : ""));
}

/// The other ranks' half: wait for rank 0's file and read the id.
ncclUniqueId await_unique_id(std::string const& path, int rank, double timeout_seconds) {
  auto const until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                       std::chrono::duration<double>(timeout_seconds));
  ncclUniqueId id{};
  for (;;) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && st.st_size == static_cast<off_t>(sizeof(id))) {
      int const fd = ::open(path.c_str(), O_RDONLY);
      if (fd >= 0) {
        auto const got = ::read(fd, &id, sizeof(id));
        ::close(fd);
        if (got == static_cast<ssize_t>(sizeof(id))) { return id; }
      }
    }
    JOINERY_EXPECTS(std::chrono::steady_clock::now() < until,
                    "rank " + std::to_string(rank) + " waited " + std::to_string(timeout_seconds) +
                      " s for rank 0 to create the rendezvous file " + path);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
#endif

}  // namespace
#endif

communicator::communicator(std::vector<int> devices, exchange_method method)
    : devices_(std::move(devices)), meeting_(std::make_unique<meeting>()) {
#if defined(JOINERY_HAS_CUDA)
  JOINERY_EXPECTS(!devices_.empty(), "a multi-GPU operation needs at least one device");
  for (int d : devices_) { expect_device(d); }
  world_ = static_cast<int>(devices_.size());
  for (int r = 0; r < world_; ++r) { local_.push_back(r); }
  std::set<int> const distinct(devices_.begin(), devices_.end());
  bool const repeated = distinct.size() != devices_.size();
  std::string why;
  // Peer copies measured as fast as NCCL's send / receive for the bucket exchange on NVLink, or
  // faster (BENCHMARKS.md, "multi-gpu"); NCCL serves where it is asked for.
  if (method == exchange_method::automatic) { method = exchange_method::peer_copy; }
  if (method == exchange_method::nccl) {
    JOINERY_EXPECTS(!repeated,
                    "the nccl exchange needs one rank per GPU, but a device is "
                    "listed twice; use the peer_copy exchange");
    JOINERY_EXPECTS(nccl_available(&why),
                    "the nccl exchange is not available: " + why + "; use the peer_copy exchange");
  }
  method_ = method;
  try {
    for (int d : devices_) { streams_.push_back(new_stream(d)); }
    if (distinct.size() > 1) { enable_peer_access(devices_); }
#if defined(JOINERY_HAS_NCCL_HEADER)
    if (method_ == exchange_method::nccl) {
      nccl_ = std::make_unique<nccl_state>();
      auto const& cached = nccl_comms_for(devices_);
      nccl_->comms = cached.comms;
      nccl_->in_use = cached.in_use;
    }
#endif
  } catch (...) {
    for (auto* s : streams_) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(s)); }
    throw;
  }
#else
  (void)method;
  JOINERY_FAIL(
    "multi-GPU operations need the GPU backend, but joinery was "
    "built without CUDA");
#endif
}

communicator::communicator(process_rank const& me) : meeting_(std::make_unique<meeting>()) {
#if defined(JOINERY_HAS_NCCL_HEADER)
  JOINERY_EXPECTS(me.world >= 1 && me.rank >= 0 && me.rank < me.world,
                  "a process group needs 0 <= rank < world, got rank " + std::to_string(me.rank) +
                    " of " + std::to_string(me.world));
  JOINERY_EXPECTS(!me.rendezvous_file.empty(), "a process group needs a rendezvous file");
  JOINERY_EXPECTS(me.timeout_seconds > 0, "the rendezvous timeout must be positive");
  expect_device(me.device);
  std::string why;
  JOINERY_EXPECTS(nccl_available(&why),
                  "a group of processes exchanges through NCCL, which is not available: " + why);
  world_ = me.world;
  local_ = {me.rank};
  devices_ = {me.device};
  method_ = exchange_method::nccl;
  auto const& api = nccl();
  ncclUniqueId id{};
  if (me.rank == 0) {
    nccl_try(api.get_unique_id(&id), "ncclGetUniqueId");
    publish_unique_id(me.rendezvous_file, id);
  } else {
    id = await_unique_id(me.rendezvous_file, me.rank, me.timeout_seconds);
  }
  int current = 0;
  JOINERY_CUDA_TRY(cudaGetDevice(&current));
  nccl_ = std::make_unique<nccl_state>();
  nccl_->comms.resize(1);
  JOINERY_CUDA_TRY(cudaSetDevice(me.device));
  auto const made = api.comm_init_rank(&nccl_->comms[0], me.world, id, me.rank);
  (void)cudaSetDevice(current);
  // Every rank has read the id once all have joined (or the group failed): the
  // file is rank 0's, removed either way.
  if (me.rank == 0) { ::unlink(me.rendezvous_file.c_str()); }
  nccl_try(made, "ncclCommInitRank");
  nccl_->owned = true;
  streams_.push_back(new_stream(me.device));
#else
  (void)me;
  JOINERY_FAIL(
    "a group of processes needs the GPU backend and NCCL's header, but joinery was built "
    "without them");
#endif
}

communicator::~communicator() {
#if defined(JOINERY_HAS_CUDA)
  for (auto* s : streams_) { (void)cudaStreamDestroy(static_cast<cudaStream_t>(s)); }
#if defined(JOINERY_HAS_NCCL_HEADER)
  if (nccl_ && nccl_->owned) {
    for (auto c : nccl_->comms) { (void)nccl().comm_destroy(c); }
  }
#endif
#endif
}

std::size_t communicator::local_index(int rank) const {
  auto const it = std::find(local_.begin(), local_.end(), rank);
  JOINERY_EXPECTS(it != local_.end(),
                  "rank " + std::to_string(rank) + " is not driven by this process");
  return static_cast<std::size_t>(it - local_.begin());
}

int communicator::device_of(int rank) const { return devices_[local_index(rank)]; }

stream_ref communicator::stream_of(int rank) const {
  return stream_ref{streams_[local_index(rank)]};
}

void communicator::wait_for_all(int rank) const {
  (void)rank;
  if (local_.size() > 1) { meeting_->wait(local_.size()); }
}

namespace {
thread_local bool inside_a_rank = false;  // set on the threads for_each_rank starts
}  // namespace

void communicator::for_each_rank(std::function<void(int)> const& fn) const {
  // A rank that started another multi-GPU operation would wait for locks its own
  // operation holds.
  JOINERY_EXPECTS(!inside_a_rank,
                  "a multi-GPU operation cannot run inside a rank of another one");
  std::lock_guard one_at_a_time(meeting_->running);
  std::unique_lock<std::mutex> shared_comms;
#if defined(JOINERY_HAS_NCCL_HEADER)
  if (nccl_ && nccl_->in_use) { shared_comms = std::unique_lock(*nccl_->in_use); }
#endif
  meeting_->reset(local_.size());
  std::vector<std::exception_ptr> errors(local_.size());
  std::vector<std::thread> threads;
  threads.reserve(local_.size());
  for (std::size_t i = 0; i < local_.size(); ++i) {
    threads.emplace_back([&, i] {
      inside_a_rank = true;
      try {
#if defined(JOINERY_HAS_CUDA)
        JOINERY_CUDA_TRY(cudaSetDevice(devices_[i]));
#endif
        fn(local_[i]);
      } catch (...) {
        errors[i] = std::current_exception();
        meeting_->breaks();
      }
    });
  }
  for (auto& t : threads) { t.join(); }
  // The first failure itself, not a rank it released from a collective.
  std::exception_ptr first;
  for (auto const& e : errors) {
    if (!e) { continue; }
    try {
      std::rethrow_exception(e);
    } catch (released_by_failure const&) {
      if (!first) { first = e; }
    } catch (...) { std::rethrow_exception(e); }
  }
  if (first) { std::rethrow_exception(first); }
}

std::vector<std::uint64_t> communicator::all_gather(int rank,
                                                    std::vector<std::uint64_t> const& mine) const {
  auto const n = static_cast<std::size_t>(world_);
  std::vector<std::uint64_t> all(n * mine.size());
  if (!spans_processes()) {
    auto const i = local_index(rank);
    meeting_->slots[i] = mine;
    wait_for_all(rank);
    for (std::size_t r = 0; r < n; ++r) {
      JOINERY_EXPECTS(meeting_->slots[r].size() == mine.size(),
                      "all_gather: every rank must give as many values");
      std::copy(meeting_->slots[r].begin(), meeting_->slots[r].end(),
                all.begin() + static_cast<std::ptrdiff_t>(r * mine.size()));
    }
    wait_for_all(rank);  // every rank has read the slots before any writes again
    return all;
  }
#if defined(JOINERY_HAS_NCCL_HEADER)
  if (mine.empty()) { return all; }
  auto const s = stream_of(rank);
  auto const bytes = mine.size() * sizeof(std::uint64_t);
  buffer dev(bytes * (n + 1), device_resource(), s);
  auto* send = static_cast<unsigned char*>(dev.data()) + bytes * n;
  copy_bytes(send, memory_space::device, mine.data(), memory_space::host, bytes, s);
  nccl_try(nccl().all_gather(send, dev.data(), mine.size(), ncclUint64,
                             nccl_->comms[local_index(rank)],
                             static_cast<cudaStream_t>(s.handle())),
           "ncclAllGather");
  copy_bytes(all.data(), memory_space::host, dev.data(), memory_space::device, bytes * n, s);
  s.synchronize();
#endif
  return all;
}

void communicator::all_to_all(int rank, std::vector<round> const& rounds) const {
#if defined(JOINERY_HAS_CUDA)
  auto const n = static_cast<std::size_t>(world_);
  auto const me = static_cast<std::size_t>(rank);
  // Offsets of bucket d in this rank's send buffer, of this rank's bucket in
  // receiver d's buffer, and of sender s's bucket in this rank's.
  struct offsets {
    std::vector<std::size_t> send_at, remote_at, recv_at;
  };
  std::vector<offsets> at(rounds.size());
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    auto const& b = rounds[i].bytes;
    JOINERY_EXPECTS(b.size() == n, "all_to_all needs a row of sizes per rank");
    for (auto const& row : b) { JOINERY_EXPECTS(row.size() == n, "all_to_all: n sizes a row"); }
    at[i].send_at.assign(n + 1, 0);
    at[i].remote_at.assign(n, 0);
    at[i].recv_at.assign(n + 1, 0);
    for (std::size_t d = 0; d < n; ++d) {
      at[i].send_at[d + 1] = at[i].send_at[d] + b[me][d];
      at[i].recv_at[d + 1] = at[i].recv_at[d] + b[d][me];
      for (std::size_t s = 0; s < me; ++s) { at[i].remote_at[d] += b[s][d]; }
    }
  }
  auto const s = static_cast<cudaStream_t>(stream_of(rank).handle());
  if (method_ == exchange_method::peer_copy) {
    std::vector<std::uint64_t> mine;
    for (auto const& r : rounds) { mine.push_back(reinterpret_cast<std::uintptr_t>(r.recv)); }
    auto const recv_of = all_gather(rank, mine);  // every receive buffer exists by now
    auto const dev = devices_[local_index(rank)];
    // Step k sends to rank + k: the ranks start on different receivers.
    auto const issue = [&] {
      for (std::size_t k = 0; k < n; ++k) {
        auto const d = (me + k) % n;
        for (std::size_t i = 0; i < rounds.size(); ++i) {
          auto const bytes = rounds[i].bytes[me][d];
          if (bytes == 0) { continue; }
          auto* dst = reinterpret_cast<unsigned char*>(
                        static_cast<std::uintptr_t>(recv_of[d * rounds.size() + i])) +
                      at[i].remote_at[d];
          JOINERY_CUDA_TRY(cudaMemcpyPeerAsync(
            dst, devices_[d], static_cast<unsigned char const*>(rounds[i].send) + at[i].send_at[d],
            dev, bytes, s));
        }
      }
    };
    try {
      issue();
    } catch (...) {
      // No copy stays in flight into buffers their ranks may free once released.
      (void)cudaStreamSynchronize(s);
      throw;
    }
    JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
    wait_for_all(rank);  // every bucket for this rank has landed
    return;
  }
#if defined(JOINERY_HAS_NCCL_HEADER)
  // In one process, no rank issues NCCL calls until all have come this far: a rank
  // that failed before would leave the others waiting on the device forever.
  wait_for_all(rank);
  auto const& api = nccl();
  auto const comm = nccl_->comms[local_index(rank)];
  nccl_try(api.group_start(), "ncclGroupStart");
  for (std::size_t i = 0; i < rounds.size(); ++i) {
    auto const& b = rounds[i].bytes;
    for (std::size_t k = 0; k < n; ++k) {
      auto const to = (me + k) % n;
      auto const from = (me + n - k) % n;
      if (b[me][to] != 0) {
        nccl_try(api.send(static_cast<unsigned char const*>(rounds[i].send) + at[i].send_at[to],
                          b[me][to], ncclUint8, static_cast<int>(to), comm, s),
                 "ncclSend");
      }
      if (b[from][me] != 0) {
        nccl_try(api.recv(static_cast<unsigned char*>(rounds[i].recv) + at[i].recv_at[from],
                          b[from][me], ncclUint8, static_cast<int>(from), comm, s),
                 "ncclRecv");
      }
    }
  }
  nccl_try(api.group_end(), "ncclGroupEnd");
  JOINERY_CUDA_TRY(cudaStreamSynchronize(s));
#endif
#else
  (void)rank;
  (void)rounds;
#endif
}

}  // namespace joinery::detail
