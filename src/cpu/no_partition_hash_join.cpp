// No-partitioning hash join: one shared open-addressing table (linear probing, load <= 50%) of the
// distinct build keys, each owning a contiguous run of build rows, built in parallel with atomics.
// Heavy hitters and many-to-many keys cost one probe per probe row, however many rows share a key.
#include "core/hash.hpp"
#include "cpu/cpu_join.hpp"

#include <atomic>
#include <bit>
#include <memory>

namespace joinery::detail::cpu {

namespace {

using joinery::detail::mix64;

enum : std::uint32_t { slot_empty = 0, slot_writing = 1, slot_ready = 2 };

template <class Key>
class key_table {
 public:
  explicit key_table(size_type n)
      : capacity_(std::bit_ceil(static_cast<std::uint64_t>(std::max<size_type>(2 * n, 16)))),
        mask_(capacity_ - 1),
        keys_(new Key[capacity_]),
        state_(new std::uint32_t[capacity_]),
        count_(new std::int64_t[capacity_]),
        offset_(new std::int64_t[capacity_ + 1]) {
    auto const cap = static_cast<std::int64_t>(capacity_);
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < cap; ++s) {
      state_[s] = slot_empty;
      count_[s] = 0;
    }
  }

  /// Slot of `k`, inserting it if absent; thread-safe.
  std::uint64_t insert(Key k) {
    for (auto s = mix64(static_cast<std::uint64_t>(k)) & mask_;; s = (s + 1) & mask_) {
      std::atomic_ref<std::uint32_t> state(state_[s]);
      auto st = state.load(std::memory_order_acquire);
      if (st == slot_empty) {
        std::uint32_t expected = slot_empty;
        if (state.compare_exchange_strong(expected, slot_writing, std::memory_order_acq_rel)) {
          keys_[s] = k;
          state.store(slot_ready, std::memory_order_release);
          return s;
        }
        st = expected;
      }
      while (st == slot_writing) { st = state.load(std::memory_order_acquire); }
      if (keys_[s] == k) { return s; }
    }
  }

  /// Slot of `k`, or -1; only after the build.
  [[nodiscard]] std::int64_t find(Key k) const noexcept {
    for (auto s = mix64(static_cast<std::uint64_t>(k)) & mask_;; s = (s + 1) & mask_) {
      if (state_[s] == slot_empty) { return -1; }
      if (keys_[s] == k) { return static_cast<std::int64_t>(s); }
    }
  }

  void build(Key const* keys, size_type n) {
    std::unique_ptr<std::uint64_t[]> slot_of(new std::uint64_t[static_cast<std::size_t>(n)]);
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      auto const s = insert(keys[i]);
      slot_of[i] = s;
      std::atomic_ref<std::int64_t>(count_[s]).fetch_add(1, std::memory_order_relaxed);
    }
    // Exclusive prefix sum of the counts: a serial pass, cheap next to the inserts.
    std::int64_t running = 0;
    for (std::uint64_t s = 0; s < capacity_; ++s) {
      offset_[s] = running;
      running += count_[s];
    }
    offset_[capacity_] = running;
    rows_.reset(new std::int64_t[static_cast<std::size_t>(std::max<size_type>(n, 1))]);
    std::unique_ptr<std::int64_t[]> cursor(new std::int64_t[capacity_]);
    std::copy(offset_.get(), offset_.get() + capacity_, cursor.get());
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      auto const at = std::atomic_ref<std::int64_t>(cursor[slot_of[i]]).fetch_add(1, std::memory_order_relaxed);
      rows_[at] = i;
    }
  }

  [[nodiscard]] std::int64_t count(std::int64_t s) const noexcept { return count_[s]; }
  [[nodiscard]] std::int64_t const* rows(std::int64_t s) const noexcept {
    return rows_.get() + offset_[s];
  }

 private:
  std::uint64_t capacity_;
  std::uint64_t mask_;
  std::unique_ptr<Key[]> keys_;
  std::unique_ptr<std::uint32_t[]> state_;
  std::unique_ptr<std::int64_t[]> count_;
  std::unique_ptr<std::int64_t[]> offset_;
  std::unique_ptr<std::int64_t[]> rows_;
};

}  // namespace

template <class Key, class Sink>
void no_partition_hash_join(join_input<Key> const& in, std::vector<Sink>& sinks) {
  key_table<Key> t(in.build_rows);
  {
    phase_timer timer(in.phases, "build");
    t.build(in.build, in.build_rows);
  }
  phase_timer timer(in.phases, "probe");
#pragma omp parallel
  {
    auto& out = sinks[static_cast<std::size_t>(omp_get_thread_num())];
#pragma omp for schedule(static)
    for (size_type i = 0; i < in.probe_rows; ++i) {
      auto const s = t.find(in.probe[i]);
      std::int64_t const c = s < 0 ? 0 : t.count(s);
      emit_matches(
        in.kind, i, c,
        [&](auto&& f) {
          auto const* r = t.rows(s);
          for (std::int64_t j = 0; j < c; ++j) { f(r[j]); }
        },
        out);
    }
  }
}

JOINERY_CPU_JOIN_INSTANTIATE(no_partition_hash_join)

}  // namespace joinery::detail::cpu
