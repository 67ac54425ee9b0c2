// No-partitioning hash join: one shared open-addressing table (linear probing, load at most
// join_options::hash_load_factor, 50% by default) of the distinct build keys, each owning a
// contiguous run of build rows, built in parallel with atomics.
// Heavy hitters and many-to-many keys cost one probe per probe row, however many rows share a key.
#include "core/hash.hpp"
#include "cpu/cpu_join.hpp"

#include <atomic>
#include <bit>
#include <cmath>
#include <memory>
#include <new>
#include <sstream>
#include <string>

namespace joinery::detail::cpu {

namespace {

using joinery::detail::mix64;

enum : std::uint32_t { slot_empty = 0, slot_writing = 1, slot_ready = 2 };

/// One cache-friendly slot: a probe reads key, state and the run of rows from one line. A key
/// with a single row keeps that row in `begin` itself, so a PK-FK probe touches one line only.
template <class Key>
struct slot {
  Key key;
  std::uint32_t state;
  std::int64_t count;
  std::int64_t begin;  // offset into the row array, or the row itself when count == 1
};

/// Slots for n keys at most `load_factor` full: a power of two, at least 16. A tiny factor is
/// refused before the count overflows (the probes would never end in a table it wrapped to).
inline std::uint64_t key_table_slots(size_type n, double load_factor) {
  long double const want = std::ceil(static_cast<long double>(n) / load_factor);
  std::ostringstream factor;
  factor << load_factor;
  JOINERY_EXPECTS(want <= static_cast<long double>(std::uint64_t{1} << 40),
                  "the no_partition_hash table for " + std::to_string(n) +
                    " build rows at load factor " + factor.str() +
                    " needs more than 2^40 slots: too large; use a larger join_options::hash_load_factor");
  return std::bit_ceil(std::max<std::uint64_t>(static_cast<std::uint64_t>(want), 16));
}

template <class Key>
slot<Key>* allocate_slots(std::uint64_t n) {
  try {
    return new slot<Key>[n];
  } catch (std::bad_alloc const&) {
    throw out_of_memory("the no_partition_hash table of " + std::to_string(n) + " slots (" +
                        std::to_string(n * sizeof(slot<Key>)) +
                        " bytes) could not be allocated in host memory");
  }
}

template <class Key>
class key_table {
 public:
  key_table(size_type n, double load_factor)
      : capacity_(key_table_slots(n, load_factor)),
        mask_(capacity_ - 1),
        slots_(allocate_slots<Key>(capacity_)) {
    auto const cap = static_cast<std::int64_t>(capacity_);
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < cap; ++s) {
      slots_[s].state = slot_empty;
      slots_[s].count = 0;
    }
  }

  /// Slot of `k`, inserting it if absent; thread-safe.
  std::uint64_t insert(Key k) {
    for (auto s = mix64(static_cast<std::uint64_t>(k)) & mask_;; s = (s + 1) & mask_) {
      std::atomic_ref<std::uint32_t> state(slots_[s].state);
      auto st = state.load(std::memory_order_acquire);
      if (st == slot_empty) {
        std::uint32_t expected = slot_empty;
        if (state.compare_exchange_strong(expected, slot_writing, std::memory_order_acq_rel)) {
          slots_[s].key = k;
          state.store(slot_ready, std::memory_order_release);
          return s;
        }
        st = expected;
      }
      while (st == slot_writing) { st = state.load(std::memory_order_acquire); }
      if (slots_[s].key == k) { return s; }
    }
  }

  /// The slot of `k`, or nullptr; only after the build.
  [[nodiscard]] slot<Key> const* find(Key k) const noexcept {
    for (auto s = mix64(static_cast<std::uint64_t>(k)) & mask_;; s = (s + 1) & mask_) {
      auto const& sl = slots_[s];
      if (sl.state == slot_empty) { return nullptr; }
      if (sl.key == k) { return &sl; }
    }
  }

  void build(Key const* keys, size_type n) {
    std::unique_ptr<std::uint64_t[]> slot_of(new std::uint64_t[static_cast<std::size_t>(n)]);
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      auto const s = insert(keys[i]);
      slot_of[i] = s;
      std::atomic_ref<std::int64_t>(slots_[s].count).fetch_add(1, std::memory_order_relaxed);
    }
    // Exclusive prefix sum of the counts (serial: one streaming pass, cheap next to the inserts).
    std::int64_t running = 0;
    for (std::uint64_t s = 0; s < capacity_; ++s) {
      slots_[s].begin = running;
      running += slots_[s].count;
    }
    rows_.reset(new std::int64_t[static_cast<std::size_t>(std::max<size_type>(n, 1))]);
    // `begin` serves as the fill cursor, then is wound back by the count.
#pragma omp parallel for schedule(static)
    for (size_type i = 0; i < n; ++i) {
      auto const at = std::atomic_ref<std::int64_t>(slots_[slot_of[i]].begin)
                        .fetch_add(1, std::memory_order_relaxed);
      rows_[at] = i;
    }
    auto const cap = static_cast<std::int64_t>(capacity_);
#pragma omp parallel for schedule(static)
    for (std::int64_t s = 0; s < cap; ++s) {
      auto& sl = slots_[s];
      sl.begin -= sl.count;
      if (sl.count == 1) { sl.begin = rows_[sl.begin]; }
    }
  }

  [[nodiscard]] std::int64_t const* rows(slot<Key> const& sl) const noexcept {
    return rows_.get() + sl.begin;
  }

 private:
  std::uint64_t capacity_;
  std::uint64_t mask_;
  std::unique_ptr<slot<Key>[]> slots_;
  std::unique_ptr<std::int64_t[]> rows_;
};

}  // namespace

template <class Key, class Sink>
void no_partition_hash_join(join_input<Key> const& in, std::vector<Sink>& sinks) {
  key_table<Key> t(in.build_rows, in.load_factor);
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
      auto const* sl = t.find(in.probe[i]);
      std::int64_t const c = sl == nullptr ? 0 : sl->count;
      emit_matches(
        in.kind, i, c,
        [&](auto&& f) {
          if (c <= 1) {
            if (c == 1) { f(sl->begin); }
            return;
          }
          auto const* r = t.rows(*sl);
          for (std::int64_t j = 0; j < c; ++j) { f(r[j]); }
        },
        out);
    }
  }
}

JOINERY_CPU_JOIN_INSTANTIATE(no_partition_hash_join)

}  // namespace joinery::detail::cpu
