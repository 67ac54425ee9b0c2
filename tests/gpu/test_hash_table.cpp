// GPU hash tables: the open-addressing multimap (insert, count, retrieve_all, contains, find) and
// the perfect-hash array, against std::unordered_multimap / std::map references on random data
// (joinery::gen), m:n keys, a hot key, extreme key values, sizes at block and tile edges, load
// factors 0.25 / 0.5 / 0.9, both hash functions and both slot layouts. The hash functions
// themselves are checked on the host (they are constexpr and shared with the device).
// GPU tests skip with a message when no GPU is present; the refusal without CUDA runs everywhere.
#include "core/hash.hpp"

#include <joinery/gen.hpp>
#include <joinery/primitives/hash_table.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace joinery::test {
namespace {

// ---- hash functions (host; the same constexpr code runs on the device) ------------------------

static_assert(detail::fmix32(0) == 0 && detail::fmix64(0) == 0);
static_assert(detail::multiply_shift32(1, 32) == detail::multiply_shift_a32);
static_assert(detail::multiply_shift64(1, 64) == detail::multiply_shift_a64);
static_assert(detail::multiply_shift64(12345, 0) == 0 && detail::multiply_shift32(12345, 0) == 0);
static_assert(detail::fast_range64(~0ULL, 1000) == 999 && detail::fast_range64(0, 1000) == 0);

TEST(Hash, MurmurFinalisersMatchReferenceValues) {
  // Reference values of MurmurHash3's fmix32 / fmix64 (computed independently with Python).
  EXPECT_EQ(detail::fmix32(1), 0x514e28b7U);
  EXPECT_EQ(detail::fmix32(0xffffffffU), 0x81f16f39U);
  EXPECT_EQ(detail::fmix64(1), 0xb456bcfc34c2cb2cULL);
  EXPECT_EQ(detail::fmix64(~0ULL), 0x64b5720b4b825f21ULL);
}

TEST(Hash, FinalisersAreInjectiveOnASampleAndSpreadHighBits) {
  std::unordered_set<std::uint32_t> seen32;
  std::unordered_set<std::uint64_t> seen64;
  std::vector<int> buckets(1024, 0);
  for (std::uint32_t i = 0; i < 200000; ++i) {
    EXPECT_TRUE(seen32.insert(detail::fmix32(i)).second);
    EXPECT_TRUE(seen64.insert(detail::fmix64(i)).second);
    ++buckets[detail::fast_range64(detail::fmix64(i), buckets.size())];
  }
  // Dense keys spread evenly over 1024 buckets (expected ~195 each).
  auto const [lo, hi] = std::minmax_element(buckets.begin(), buckets.end());
  EXPECT_GT(*lo, 100);
  EXPECT_LT(*hi, 300);
}

TEST(Hash, MultiplyShiftTakesTheTopBitsOfTheProduct) {
  for (std::uint64_t x : {1ULL, 2ULL, 12345ULL, ~0ULL, 0x8000000000000000ULL}) {
    for (unsigned bits : {1U, 7U, 31U, 64U}) {
      EXPECT_EQ(detail::multiply_shift64(x, bits), (detail::multiply_shift_a64 * x) >> (64 - bits));
    }
    auto const x32 = static_cast<std::uint32_t>(x);
    for (unsigned bits : {1U, 13U, 32U}) {
      EXPECT_EQ(detail::multiply_shift32(x32, bits),
                static_cast<std::uint32_t>(detail::multiply_shift_a32 * x32) >> (32 - bits));
      EXPECT_LT(detail::multiply_shift32(x32, bits), std::uint64_t{1} << bits);
    }
  }
}

// Only a CPU-only build has this refusal; a CUDA build runs the real tests instead.
#if !defined(JOINERY_HAS_CUDA)
TEST(HashTableWithoutGpu, RefusesClearlyWhenBuiltWithoutCuda) {
  try {
    hash_table t(type_id::int32, 10);
    FAIL() << "hash_table was constructed without the GPU backend";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("needs the GPU backend, built without CUDA"),
              std::string::npos)
        << e.what();
  }
  std::vector<std::int64_t> k{1, 2, 3};
  EXPECT_THROW(perfect_hash_array(column_view::of(k)), logic_error);
}
#endif

// ---- GPU ---------------------------------------------------------------------------------------

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  cuda_stream stream_;
};

template <class T>
column to_device(std::vector<T> const& v, stream_ref s) {
  return column::from_host(v, device_resource(), s);
}

template <class T>
std::vector<T> to_host(column const& c, stream_ref s) {
  EXPECT_EQ(c.type(), type_to_id_v<T>);
  std::vector<T> out(static_cast<std::size_t>(c.size()));
  copy_bytes(out.data(), memory_space::host, c.view().data(), c.space(), out.size() * sizeof(T), s);
  return out;
}

template <class K>
std::vector<K> keys_of(gen::relation_spec spec) {
  spec.key_type = type_to_id_v<K>;
  auto const t = gen::generate(spec);
  auto const* p = t.view().column(0).template data_as<K>();
  return std::vector<K>(p, p + t.num_rows());
}

/// Extreme and special key values of K: min, max, 0, -1 (max for unsigned), their neighbours, and
/// the all-ones bit pattern of the empty slot's key field.
template <class K>
std::vector<K> extreme_keys() {
  using L = std::numeric_limits<K>;
  return {L::min(), static_cast<K>(L::min() + 1), L::max(), static_cast<K>(L::max() - 1), K{0},
          static_cast<K>(-1), K{1}, static_cast<K>(L::max() / 2), static_cast<K>(~K{0} - 2)};
}

using pair_list = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// The reference: build key -> rows; every (build row, probe row) match, sorted.
template <class K>
struct reference {
  std::unordered_multimap<K, std::int64_t> map;
  explicit reference(std::vector<K> const& build) {
    for (std::size_t i = 0; i < build.size(); ++i) {
      map.emplace(build[i], static_cast<std::int64_t>(i));
    }
  }
  [[nodiscard]] pair_list pairs(std::vector<K> const& probe) const {
    pair_list out;
    for (std::size_t j = 0; j < probe.size(); ++j) {
      auto const [lo, hi] = map.equal_range(probe[j]);
      for (auto it = lo; it != hi; ++it) { out.emplace_back(it->second, static_cast<std::int64_t>(j)); }
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

std::string describe(hash_table_options const& o, std::size_t build, std::size_t probe) {
  return "load_factor " + std::to_string(o.load_factor) + ", hash " +
         (o.hash == hash_function::murmur ? "murmur" : "multiply_shift") + ", layout " +
         std::to_string(static_cast<int>(o.layout)) + ", build " + std::to_string(build) +
         " rows, probe " + std::to_string(probe) + " rows";
}

/// Builds a table over `build` (in two batches when asked) and checks every bulk operation on
/// `probe` against the reference: count, retrieve_all (in full, as sorted pairs, and each
/// probe's pairs contiguous in probe order), contains, find (the row's key is the probe key; for
/// unique build keys, exactly the reference row).
template <class K>
void check_table(std::vector<K> const& build, std::vector<K> const& probe,
                 hash_table_options const& options, stream_ref s, bool two_batches = false) {
  SCOPED_TRACE(describe(options, build.size(), probe.size()));
  reference<K> const ref(build);
  auto const n = static_cast<size_type>(build.size());
  hash_table table(type_to_id_v<K>, n, options, s);
  ASSERT_EQ(table.capacity(), n);
  ASSERT_GT(table.num_slots(), n);
  ASSERT_GE(static_cast<double>(table.num_slots()), static_cast<double>(n) / options.load_factor - 1);
  if (options.layout != slot_layout::automatic) { ASSERT_EQ(table.layout(), options.layout); }
  if (two_batches && n >= 2) {
    std::vector<K> const first(build.begin(), build.begin() + n / 2);
    std::vector<K> const second(build.begin() + n / 2, build.end());
    auto const d1 = to_device(first, s);
    auto const d2 = to_device(second, s);
    table.insert(d1.view(), s);
    ASSERT_EQ(table.size(), n / 2);
    table.insert(d2.view(), s);  // row ids continue at n / 2
  } else {
    auto const d = to_device(build, s);
    table.insert(d.view(), s);
  }
  ASSERT_EQ(table.size(), n);

  auto const dprobe = to_device(probe, s);
  auto const expected = ref.pairs(probe);

  EXPECT_EQ(table.count(dprobe.view(), s), static_cast<size_type>(expected.size()));

  auto const result = table.retrieve_all(dprobe.view(), s);
  ASSERT_EQ(result.build_rows.size(), result.probe_rows.size());
  auto const b = to_host<std::int64_t>(result.build_rows, s);
  auto const p = to_host<std::int64_t>(result.probe_rows, s);
  EXPECT_TRUE(std::is_sorted(p.begin(), p.end())) << "pairs are grouped by probe row in order";
  pair_list got(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) { got[i] = {b[i], p[i]}; }
  std::sort(got.begin(), got.end());
  ASSERT_EQ(got.size(), expected.size());
  EXPECT_TRUE(got == expected) << "retrieve_all differs from the reference";

  auto const contains = to_host<std::uint8_t>(table.contains(dprobe.view(), s), s);
  auto const found = to_host<std::int64_t>(table.find(dprobe.view(), s), s);
  ASSERT_EQ(contains.size(), probe.size());
  ASSERT_EQ(found.size(), probe.size());
  std::size_t bad_contains = 0;
  std::size_t bad_find = 0;
  for (std::size_t j = 0; j < probe.size(); ++j) {
    auto const [lo, hi] = ref.map.equal_range(probe[j]);
    bool const present = lo != hi;
    bad_contains += contains[j] != (present ? 1 : 0);
    if (!present) {
      bad_find += found[j] != -1;
    } else if (std::next(lo) == hi) {
      bad_find += found[j] != lo->second;
    } else {
      bad_find += found[j] < 0 || found[j] >= n ||
                  build[static_cast<std::size_t>(found[j])] != probe[j];
    }
  }
  EXPECT_EQ(bad_contains, 0u);
  EXPECT_EQ(bad_find, 0u);
}

std::vector<hash_table_options> option_grid(bool four_byte_keys) {
  std::vector<hash_table_options> out;
  for (double lf : {0.25, 0.5, 0.9}) {
    for (auto h : {hash_function::murmur, hash_function::multiply_shift}) {
      for (auto l : {slot_layout::automatic, slot_layout::wide}) {
        if (!four_byte_keys && l == slot_layout::wide) { continue; }  // automatic is wide
        out.push_back({lf, h, l});
      }
    }
  }
  return out;
}

template <class K>
class GpuHashTable : public Gpu {};
using key_types = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t>;
TYPED_TEST_SUITE(GpuHashTable, key_types);

TYPED_TEST(GpuHashTable, UniqueKeysAtBlockEdgesEveryLoadFactorHashAndLayout) {
  using K = TypeParam;
  // 256 threads per block, 1024 keys per tile: sizes around both.
  for (size_type rows : {1, 31, 255, 256, 257, 1023, 1024, 1025, 4097, 70001}) {
    gen::relation_spec b;
    b.rows = rows;
    b.kind = gen::key_kind::primary;
    b.key_offset = std::is_signed_v<K> ? -rows / 2 : 7;  // negatives for signed keys
    b.seed = 11 + static_cast<std::uint64_t>(rows);
    gen::relation_spec p = b;
    p.kind = gen::key_kind::foreign;
    p.rows = rows + 3;
    p.domain = 2 * rows;  // about half the probes match
    p.seed = 5 + static_cast<std::uint64_t>(rows);
    auto const build = keys_of<K>(b);
    auto probe = keys_of<K>(p);
    for (K e : extreme_keys<K>()) { probe.push_back(e); }
    for (auto const& o : option_grid(sizeof(K) == 4)) {
      check_table(build, probe, o, this->stream_, /*two_batches=*/rows % 2 == 1);
      if (this->HasFatalFailure()) { return; }
    }
  }
}

TYPED_TEST(GpuHashTable, ManyToManyWithFewDistinctKeys) {
  using K = TypeParam;
  for (size_type distinct : {1, 3, 17, 250}) {
    gen::relation_spec b;
    b.rows = 3000;
    b.kind = gen::key_kind::foreign;
    b.domain = distinct;
    b.key_offset = std::is_signed_v<K> ? -5 : 1000;
    b.seed = 3;
    gen::relation_spec p = b;
    p.rows = 2001;
    p.domain = distinct + 2;  // two keys of the probe side miss
    p.seed = 4;
    auto const build = keys_of<K>(b);
    auto const probe = keys_of<K>(p);
    for (double lf : {0.25, 0.5, 0.9}) {
      for (auto h : {hash_function::murmur, hash_function::multiply_shift}) {
        check_table(build, probe, {lf, h, slot_layout::automatic}, this->stream_, true);
        if (this->HasFatalFailure()) { return; }
      }
    }
  }
}

TYPED_TEST(GpuHashTable, OneHotKeyWithHalfTheRows) {
  using K = TypeParam;
  gen::relation_spec b;
  b.rows = 4000;
  b.kind = gen::key_kind::foreign;
  b.domain = 4000;
  b.hot_key_fraction = 0.5;
  b.key_offset = 1;
  b.seed = 21;
  gen::relation_spec p = b;
  p.rows = 3001;
  p.seed = 22;
  auto const build = keys_of<K>(b);
  auto const probe = keys_of<K>(p);
  for (double lf : {0.25, 0.5, 0.9}) {
    check_table(build, probe, {lf, hash_function::murmur, slot_layout::automatic}, this->stream_);
    check_table(build, probe, {lf, hash_function::multiply_shift, slot_layout::wide},
                this->stream_);
    if (this->HasFatalFailure()) { return; }
  }
}

TYPED_TEST(GpuHashTable, ExtremeKeyValuesEachStoredSeveralTimes) {
  using K = TypeParam;
  // Every extreme value 1..4 times (the all-ones pattern of the empty slot's key field included),
  // shuffled, at a high load factor so that clusters form and wrap around the table's end.
  std::vector<K> build;
  auto const ext = extreme_keys<K>();
  for (std::size_t i = 0; i < ext.size(); ++i) {
    for (std::size_t r = 0; r <= i % 4; ++r) { build.push_back(ext[i]); }
  }
  std::mt19937_64 rng(99);
  std::shuffle(build.begin(), build.end(), rng);
  auto probe = ext;
  probe.push_back(static_cast<K>(12345));  // absent
  probe.push_back(static_cast<K>(std::numeric_limits<K>::max() - 7));  // absent
  probe.insert(probe.end(), ext.begin(), ext.end());
  for (auto const& o : option_grid(sizeof(K) == 4)) {
    check_table(build, probe, o, this->stream_);
    if (this->HasFatalFailure()) { return; }
  }
}

TYPED_TEST(GpuHashTable, EmptyTableAndEmptyProbe) {
  using K = TypeParam;
  auto const s = this->stream_.ref();
  hash_table empty(type_to_id_v<K>, 0, {}, s);
  EXPECT_EQ(empty.size(), 0);
  EXPECT_GE(empty.num_slots(), 1);
  auto const probe = to_device(extreme_keys<K>(), s);
  EXPECT_EQ(empty.count(probe.view(), s), 0);
  auto const r = empty.retrieve_all(probe.view(), s);
  EXPECT_EQ(r.build_rows.size(), 0);
  EXPECT_EQ(r.probe_rows.size(), 0);
  EXPECT_EQ(r.build_rows.type(), type_id::int64);
  for (auto v : to_host<std::uint8_t>(empty.contains(probe.view(), s), s)) { EXPECT_EQ(v, 0); }
  for (auto v : to_host<std::int64_t>(empty.find(probe.view(), s), s)) { EXPECT_EQ(v, -1); }

  hash_table t(type_to_id_v<K>, 10, {}, s);
  auto const keys = to_device(std::vector<K>{1, 2, 3}, s);
  t.insert(keys.view(), s);
  auto const none = to_device(std::vector<K>{}, s);
  t.insert(none.view(), s);
  EXPECT_EQ(t.size(), 3);
  EXPECT_EQ(t.count(none.view(), s), 0);
  EXPECT_EQ(t.retrieve_all(none.view(), s).build_rows.size(), 0);
  EXPECT_EQ(t.contains(none.view(), s).size(), 0);
  EXPECT_EQ(t.find(none.view(), s).size(), 0);
}

TYPED_TEST(GpuHashTable, RefusesBadArguments) {
  using K = TypeParam;
  auto const s = this->stream_.ref();
  auto const other = sizeof(K) == 4 ? type_id::int64 : type_id::int32;
  EXPECT_THROW(hash_table(type_id::float64, 4, {}, s), logic_error);
  EXPECT_THROW(hash_table(type_to_id_v<K>, -1, {}, s), logic_error);
  EXPECT_THROW(hash_table(type_to_id_v<K>, 4, {0.0}, s), logic_error);
  EXPECT_THROW(hash_table(type_to_id_v<K>, 4, {1.0}, s), logic_error);
  EXPECT_THROW(hash_table(type_to_id_v<K>, 4, {-0.5}, s), logic_error);
  EXPECT_THROW(hash_table(type_to_id_v<K>, 4, {0.5, hash_function::murmur, slot_layout::wide}, s,
                          host_resource()),
               logic_error);
  if constexpr (sizeof(K) == 8) {
    EXPECT_THROW(hash_table(type_to_id_v<K>, 4, {0.5, hash_function::murmur, slot_layout::packed},
                            s),
                 logic_error);
  } else {
    // Packed slots hold at most 2^32 - 1 rows (row id 2^32 - 1 marks empty).
    EXPECT_THROW(hash_table(type_to_id_v<K>, size_type{1} << 32,
                            {0.5, hash_function::murmur, slot_layout::packed}, s),
                 logic_error);
  }
  hash_table t(type_to_id_v<K>, 3, {}, s);
  auto const four = to_device(std::vector<K>{1, 2, 3, 4}, s);
  EXPECT_THROW(t.insert(four.view(), s), logic_error) << "beyond the capacity";
  std::vector<K> host_keys{1, 2};
  EXPECT_THROW(t.insert(column_view::of(host_keys), s), logic_error) << "pageable host keys";
  auto const wrong = column::copy_of(column_view(other, four.view().data(), 1, memory_space::device),
                                     device_resource(), s);
  EXPECT_THROW(t.insert(wrong.view(), s), logic_error) << "mismatched key type";
  EXPECT_THROW((void)t.count(wrong.view(), s), logic_error);
  EXPECT_THROW((void)t.retrieve_all(wrong.view(), s), logic_error);
  EXPECT_THROW((void)t.contains(wrong.view(), s), logic_error);
  EXPECT_THROW((void)t.find(wrong.view(), s), logic_error);
  auto const three = to_device(std::vector<K>{1, 2, 3}, s);
  t.insert(three.view(), s);  // exactly the capacity
  EXPECT_EQ(t.count(three.view(), s), 3);
  auto const one = to_device(std::vector<K>{9}, s);
  EXPECT_THROW(t.insert(one.view(), s), logic_error) << "full";
  hash_table moved = std::move(t);
  EXPECT_EQ(moved.count(three.view(), s), 3);
  EXPECT_THROW((void)t.count(three.view(), s), logic_error);  // NOLINT: use after move is refused
}

// ---- perfect-hash array ------------------------------------------------------------------------

template <class K>
long double key_span(K lo, K hi) {
  return static_cast<long double>(hi) - static_cast<long double>(lo);
}

/// a + d with wrap-around (no signed overflow).
template <class K>
K wrap_add(K a, std::int64_t d) {
  using U = std::make_unsigned_t<K>;
  return static_cast<K>(static_cast<U>(static_cast<U>(a) + static_cast<U>(d)));
}

template <class K>
void check_perfect(std::vector<K> const& build, std::vector<K> const& probe, double slack,
                   stream_ref s) {
  SCOPED_TRACE("perfect hash: build " + std::to_string(build.size()) + " keys, slack " +
               std::to_string(slack));
  std::map<K, std::int64_t> ref;
  for (std::size_t i = 0; i < build.size(); ++i) { ref[build[i]] = static_cast<std::int64_t>(i); }
  ASSERT_EQ(ref.size(), build.size()) << "test data must be unique";
  auto const d = to_device(build, s);
  perfect_hash_array const a(d.view(), slack, s);
  EXPECT_EQ(a.size(), static_cast<size_type>(build.size()));
  if (!build.empty()) {
    auto const span = static_cast<long double>(key_span(ref.begin()->first, ref.rbegin()->first));
    EXPECT_EQ(static_cast<long double>(a.range()), span + 1);
  }
  auto const dp = to_device(probe, s);
  auto const found = to_host<std::int64_t>(a.find(dp.view(), s), s);
  auto const contains = to_host<std::uint8_t>(a.contains(dp.view(), s), s);
  ASSERT_EQ(found.size(), probe.size());
  std::size_t bad = 0;
  for (std::size_t j = 0; j < probe.size(); ++j) {
    auto const it = ref.find(probe[j]);
    std::int64_t const want = it == ref.end() ? -1 : it->second;
    bad += found[j] != want;
    bad += contains[j] != (want >= 0 ? 1 : 0);
  }
  EXPECT_EQ(bad, 0u);
}

template <class K>
class GpuPerfectHash : public Gpu {};
TYPED_TEST_SUITE(GpuPerfectHash, key_types);

TYPED_TEST(GpuPerfectHash, DenseRandomAndExtremeRanges) {
  using K = TypeParam;
  using L = std::numeric_limits<K>;
  auto const s = this->stream_.ref();
  std::mt19937_64 rng(7);
  for (std::size_t n : {1UL, 255UL, 256UL, 257UL, 1025UL, 50000UL}) {
    // Three placements of a dense range: starting at the type's minimum, ending at its maximum,
    // and around zero (around the middle for unsigned keys).
    std::vector<K> const firsts{L::min(), wrap_add(L::max(), -static_cast<std::int64_t>(n - 1)),
                                std::is_signed_v<K> ? wrap_add(K{0}, -static_cast<std::int64_t>(n / 2))
                                                    : static_cast<K>(L::max() / 2)};
    auto const sn = static_cast<std::int64_t>(n);
    for (K first : firsts) {
      std::vector<K> keys(n);
      for (std::size_t i = 0; i < n; ++i) { keys[i] = wrap_add(first, static_cast<std::int64_t>(i)); }
      std::shuffle(keys.begin(), keys.end(), rng);
      // Probes: every key, both neighbours of the range (wrapping at the type's ends), the
      // type's extremes, 0, -1.
      std::vector<K> probe = keys;
      probe.push_back(wrap_add(first, -1));
      probe.push_back(wrap_add(first, sn));
      for (K e : extreme_keys<K>()) { probe.push_back(e); }
      check_perfect(keys, probe, 1.0, s);  // exactly dense
      // A random half of a dense range of 2n values (gaps), slack 2: it spans at most 2n values.
      std::vector<K> wide(2 * n);
      K const first2 = first == L::min() ? first : wrap_add(first, -sn);
      for (std::size_t i = 0; i < 2 * n; ++i) { wide[i] = wrap_add(first2, static_cast<std::int64_t>(i)); }
      std::shuffle(wide.begin(), wide.end(), rng);
      std::vector<K> const half(wide.begin(), wide.begin() + static_cast<std::ptrdiff_t>(n));
      if (this->HasFatalFailure()) { return; }
      check_perfect(half, wide, 2.0, s);
      if (this->HasFatalFailure()) { return; }
    }
  }
}

TYPED_TEST(GpuPerfectHash, GeneratedPrimaryKeysAndRefusals) {
  using K = TypeParam;
  using L = std::numeric_limits<K>;
  auto const s = this->stream_.ref();
  gen::relation_spec b;
  b.rows = 100003;
  b.kind = gen::key_kind::primary;
  b.key_offset = std::is_signed_v<K> ? -40000 : 3;
  auto const build = keys_of<K>(b);
  gen::relation_spec p = b;
  p.kind = gen::key_kind::foreign;
  p.domain = 150000;
  p.key_offset = b.key_offset - 20000;
  if constexpr (!std::is_signed_v<K>) { p.key_offset = 0; }
  check_perfect(build, keys_of<K>(p), 1.0, s);

  // Not unique: refused by the constructor, nullopt from try_build.
  auto const dup = to_device(std::vector<K>{5, 6, 7, 6}, s);
  EXPECT_THROW(perfect_hash_array(dup.view(), 2.0, s), logic_error);
  EXPECT_FALSE(perfect_hash_array::try_build(dup.view(), 2.0, s).has_value());
  // Too sparse: {min, max} spans the whole type.
  auto const sparse = to_device(std::vector<K>{L::min(), L::max()}, s);
  EXPECT_THROW(perfect_hash_array(sparse.view(), 1000.0, s), logic_error);
  EXPECT_FALSE(perfect_hash_array::try_build(sparse.view(), 1000.0, s).has_value());
  auto const gappy = to_device(std::vector<K>{10, 12, 14}, s);  // span 5 > 3 * 1.5
  EXPECT_FALSE(perfect_hash_array::try_build(gappy.view(), 1.5, s).has_value());
  auto const ok = perfect_hash_array::try_build(gappy.view(), 2.0, s);  // 5 <= 6
  ASSERT_TRUE(ok.has_value());
  EXPECT_EQ(ok->range(), 5);
  EXPECT_THROW(perfect_hash_array(gappy.view(), 0.5, s), logic_error) << "slack below 1";
  // Empty build: every probe misses.
  auto const none = to_device(std::vector<K>{}, s);
  perfect_hash_array const empty(none.view(), 2.0, s);
  EXPECT_EQ(empty.range(), 0);
  auto const probe = to_device(extreme_keys<K>(), s);
  for (auto v : to_host<std::int64_t>(empty.find(probe.view(), s), s)) { EXPECT_EQ(v, -1); }
  // Mismatched probe type.
  auto const other = column::copy_of(
      column_view(sizeof(K) == 4 ? type_id::int64 : type_id::int32, probe.view().data(), 1,
                  memory_space::device),
      device_resource(), s);
  EXPECT_THROW((void)ok->find(other.view(), s), logic_error);
}

}  // namespace
}  // namespace joinery::test
