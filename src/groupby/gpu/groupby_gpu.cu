// The GPU group-by backend's host dispatch: compiles the request into accumulators, runs the
// algorithm's grouping (hash_groupby.cu, sort_groupby.cu), orders the
// groups by key when asked (a radix sort of the group keys with their ids), and finalises one
// output column per requested aggregate from the accumulators.
#include "core/average.hpp"
#include "groupby/gpu/detail/accumulate.cuh"
#include "groupby/gpu/detail/common.cuh"
#include "groupby/gpu/gpu_groupby.hpp"
#include "primitives/sort_dispatch.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace joinery::detail::gpu {

namespace gb {

namespace {

int find_acc(agg_plan const& p, acc_op op, size_type column) {
  for (std::size_t a = 0; a < p.accs.size(); ++a) {
    if (p.accs[a].op == op && p.accs[a].column == column) { return static_cast<int>(a); }
  }
  return -1;
}

int find_or_add(agg_plan& p, acc_op op, value_kind in, size_type column) {
  auto const a = find_acc(p, op, column);
  if (a >= 0) { return a; }
  p.accs.push_back({op, in, column});
  return static_cast<int>(p.accs.size() - 1);
}

/// out[i] = the aggregate of group i, whose accumulator entry is index2[index1[i]] (either
/// index may be absent).
__global__ void finalize_kernel(output_desc d, size_type groups, size_type const* __restrict__ index1,
                                size_type const* __restrict__ index2, void* __restrict__ out) {
  size_type const stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < groups;
       i += stride) {
    size_type e = i;
    if (index1 != nullptr) { e = index1[e]; }
    if (index2 != nullptr) { e = index2[e]; }
    auto const v = load_acc(d.op, d.in, d.acc, e);
    switch (d.kind) {
      case aggregation_kind::count_distinct: break;  // composed above (composed_groupby)
      case aggregation_kind::count:
      case aggregation_kind::count_valid:  // the general key path hands over no NULLs
      case aggregation_kind::sum:
        // count, wrapping sums (the low word of an exact one) and double sums: 8 bytes as is.
        static_cast<unsigned long long*>(out)[i] = v.lo;
        break;
      case aggregation_kind::min:
      case aggregation_kind::max: {
        auto const bits = from_ordered(d.in, v.lo);
        if (value_bytes(d.in) == 4) {
          static_cast<unsigned*>(out)[i] = static_cast<unsigned>(bits);
        } else {
          static_cast<unsigned long long*>(out)[i] = bits;
        }
        break;
      }
      case aggregation_kind::avg: {
        auto const c = static_cast<long long>(static_cast<unsigned long long const*>(d.count)[e]);
        double r = 0;
        if (d.op == acc_op::sum_float) {
          r = __longlong_as_double(static_cast<long long>(v.lo)) / static_cast<double>(c);
        } else {
          r = exact_average(v.lo, v.hi, value_signed(d.in), d.op == acc_op::sum_int128, c);
        }
        static_cast<double*>(out)[i] = r;
        break;
      }
    }
  }
}

}  // namespace

agg_plan make_plan(table_view const& input, std::vector<aggregation> const& aggs, size_type rows) {
  agg_plan p;
  // A 64-bit sum of 4-byte integers is exact below 2^32 rows; otherwise avg needs 128 bits.
  auto exact_op = [&](type_id t) {
    return size_of(t) == 4 && rows < (size_type{1} << 32) ? acc_op::sum_int : acc_op::sum_int128;
  };
  for (auto const& a : aggs) {
    if (a.kind != aggregation_kind::avg) { continue; }
    auto const t = input.column(a.column).type();
    find_or_add(p, is_floating(t) ? acc_op::sum_float : exact_op(t), value_kind_of(t), a.column);
    find_or_add(p, acc_op::count, value_kind::u64, -1);
  }
  for (auto const& a : aggs) {
    output_spec o;
    o.kind = a.kind;
    switch (a.kind) {
      case aggregation_kind::count_distinct:
        JOINERY_FAIL("count_distinct reached the GPU group-by plan (composed_groupby runs it)");
      case aggregation_kind::count:
      case aggregation_kind::count_valid:  // the general key path hands over no NULLs
        o.acc = find_or_add(p, acc_op::count, value_kind::u64, -1);
        break;
      case aggregation_kind::sum: {
        auto const t = input.column(a.column).type();
        o.input = t;
        if (is_floating(t)) {
          o.acc = find_or_add(p, acc_op::sum_float, value_kind_of(t), a.column);
        } else {
          o.acc = find_acc(p, exact_op(t), a.column);
          if (o.acc < 0) { o.acc = find_or_add(p, acc_op::sum_int, value_kind_of(t), a.column); }
        }
        break;
      }
      case aggregation_kind::min:
      case aggregation_kind::max: {
        auto const t = input.column(a.column).type();
        o.input = t;
        o.acc = find_or_add(p, a.kind == aggregation_kind::min ? acc_op::min : acc_op::max,
                            value_kind_of(t), a.column);
        break;
      }
      case aggregation_kind::avg: {
        auto const t = input.column(a.column).type();
        o.input = t;
        o.acc = find_acc(p, is_floating(t) ? acc_op::sum_float : exact_op(t), a.column);
        o.count_acc = find_acc(p, acc_op::count, -1);
        break;
      }
    }
    p.outputs.push_back(o);
  }
  return p;
}

namespace {

template <class K>
table finalize(agg_plan const& plan, group_parts&& parts, bool sort_by_key, phase_clock& clock,
               stream_ref stream, memory_resource* mr) {
  auto const s = to_cuda(stream);
  auto const g = parts.groups;
  buffer order;
  std::vector<column> cols;
  if (sort_by_key && !parts.sorted && g > 1) {
    column sorted(type_to_id_v<K>, g, mr, stream);
    order = buffer(static_cast<std::size_t>(g) * sizeof(std::int64_t), mr, stream);
    radix_sort_row_ids<K>(static_cast<K const*>(parts.keys.data()), static_cast<K*>(sorted.data()),
                          static_cast<std::int64_t*>(order.data()), g, stream, mr);
    cols.push_back(std::move(sorted));
    clock.lap("sort groups");
  } else {
    cols.push_back(std::move(parts.keys));
  }
  auto const* index1 = static_cast<size_type const*>(order.data());
  auto const* index2 = static_cast<size_type const*>(parts.index.data());
  int const blocks = g == 0 ? 1 : grid_stride_blocks(g, sort_groupby_policy::finalize_threads,
                                                     current_sm_count());
  for (auto const& o : plan.outputs) {
    column out(aggregation_result_type(o.kind, o.input), g, mr, stream);
    if (g > 0) {
      auto const& acc = plan.accs[static_cast<std::size_t>(o.acc)];
      output_desc d;
      d.kind = o.kind;
      d.op = acc.op;
      d.in = acc.in;
      d.acc = parts.accs[static_cast<std::size_t>(o.acc)].data();
      d.count = o.count_acc >= 0 ? parts.accs[static_cast<std::size_t>(o.count_acc)].data() : nullptr;
      finalize_kernel<<<blocks, sort_groupby_policy::finalize_threads, 0, s>>>(d, g, index1, index2,
                                                                              out.data());
      JOINERY_CHECK_LAUNCH();
    }
    cols.push_back(std::move(out));
  }
  clock.lap("output");
  return table(std::move(cols));
}

}  // namespace

}  // namespace gb

std::vector<groupby_algorithm> groupby_algorithms() {
  return {groupby_algorithm::global_hash, groupby_algorithm::hash, groupby_algorithm::sort,
          groupby_algorithm::sort_transformed, groupby_algorithm::sort_dictionary,
          groupby_algorithm::partition, groupby_algorithm::partition_transformed};
}

table run_groupby(groupby_algorithm algo, table_view const& input, size_type key_column,
                  std::vector<aggregation> const& aggregations, bool sort_by_key,
                  groupby_tuning const& tuning, std::vector<phase_time>* phases,
                  groupby_algorithm* used, stream_ref stream, memory_resource* mr) {
  using namespace gb;
  JOINERY_EXPECTS(mr != nullptr && mr->space() == memory_space::device,
                  "GPU group-by: results need a device memory resource");
  for (auto const& c : input) {
    JOINERY_EXPECTS(c.space() == memory_space::device,
                    "GPU group-by: input columns must be in device memory (the public groupby "
                    "copies host columns over)");
  }
  auto const n = input.num_rows();
  auto const plan = make_plan(input, aggregations, n);
  phase_clock clock(phases, stream);
  return dispatch_key_type(input.column(key_column).type(), [&](auto tag) {
    using K = typename decltype(tag)::type;
    auto const* keys = static_cast<K const*>(input.column(key_column).data());
    group_parts parts;
    auto ran = algo == groupby_algorithm::automatic ? groupby_algorithm::hash : algo;
    if (n == 0) {
      // No rows, no groups: the columns with their types and nothing in them.
      parts.keys = column(type_to_id_v<K>, 0, mr, stream);
      parts.sorted = true;
      for (std::size_t a = 0; a < plan.accs.size(); ++a) { parts.accs.emplace_back(); }
    } else {
      switch (algo) {
        case groupby_algorithm::global_hash:
        case groupby_algorithm::hash:
          parts = hash_groupby<K>(keys, n, input, plan, algo == groupby_algorithm::global_hash,
                                  tuning, clock, stream, mr);
          break;
        case groupby_algorithm::automatic: {
          auto t = tuning;
          t.stop_beyond_first_table = true;
          // Skew past tier 1 stops HGB for PGB-TR below (Zipf 1 at g = 2^16: 25-26 G rows/s on
          // the H200 against tier 2's 14-16 with int32 keys, 22-23 against 14-16 with int64)
          // once PGB-TR would make more than one partition (five sixths of the largest table's
          // groups; below, it would run HGB's tiers again) and takes the accumulators.
          bool const pgb_takes =
            plan.accs.size() <= static_cast<std::size_t>(partition_groupby_policy::max_accumulators);
          if (pgb_takes && t.skew_sort_groups == 0) {
            t.skew_sort_groups = partition_groupby_policy::max_table_slots / 4 * 3 / 6 * 5;
          }
          parts = hash_groupby<K>(keys, n, input, plan, false, t, clock, stream, mr);
          if (!parts.incomplete) { break; }
          // Past HGB where it asks for it: PGB-TR, skewed or not, 4- and 8-byte keys. On the
          // H200 (2^28 rows, spread keys, MAX / SUM of two int32 columns) it ran 27-30 G rows/s
          // at g = 2^20 against SGB-TR's 13-14 (int64 keys: 24-25 against 11-12), 19-20
          // against 13-15 at 2^22-2^24 (int64: 17-18 against 9). Where HGB stopped for the sort
          // (float sums on a hot key), or PGB-TR's partitions overflow at 2^16 of them, the
          // sort group-by follows.
          if (parts.partition_next && pgb_takes) {
            ran = groupby_algorithm::partition_transformed;
            parts = partition_groupby<K>(keys, n, input, plan, true, t, clock, stream, mr);
            if (!parts.incomplete) { break; }
          }
          // 8-byte keys sort as 4-byte codes (SGB-DE-TR): half the radix passes, while the
          // dictionary still pays for itself (Wu et al. 5.2.8: up to about 2^22 groups). Under
          // skew too: with int64 Zipf 1 keys at 2^18..2^20 groups it took 21-24 ms on the H200
          // against 31-32 for SGB-TR (2^28 rows). 4-byte keys gain only from the codes' fewer
          // significant bits, while the dictionary's table stays small (up to about 2^16 groups).
          {
            bool const counts_only =
              std::all_of(plan.accs.begin(), plan.accs.end(),
                          [](acc_spec const& a) { return a.op == acc_op::count; });
            auto const limit =
              tuning.dictionary_automatic_groups > 0 ? tuning.dictionary_automatic_groups
              : sizeof(K) == 8 ? sort_groupby_policy::dictionary_automatic_groups
              : counts_only    ? 0
                               : sort_groupby_policy::dictionary_automatic_groups_narrow;
            // One sample of the keys for the choice and the dictionary's first table.
            auto const groups =
              limit > 0 ? estimate_groups<K>(keys, n, current_sm_count(), stream, mr) : 0;
            if (limit > 0 && groups <= limit) {
              ran = groupby_algorithm::sort_dictionary;
              auto t = tuning;
              if (t.dictionary_initial_groups <= 0) {
                t.dictionary_initial_groups =
                    std::max<std::int64_t>(sort_groupby_policy::dictionary_initial_groups,
                                           2 * static_cast<std::int64_t>(groups));
              }
              parts = dictionary_groupby<K>(keys, n, input, plan, t, clock, stream, mr);
              break;
            }
          }
          ran = groupby_algorithm::sort_transformed;
          parts = sort_groupby<K>(keys, n, input, plan, true, clock, stream, mr);
          break;
        }
        case groupby_algorithm::sort:
        case groupby_algorithm::sort_transformed:
          parts = sort_groupby<K>(keys, n, input, plan, algo == groupby_algorithm::sort_transformed,
                                  clock, stream, mr);
          break;
        case groupby_algorithm::sort_dictionary:
          parts = dictionary_groupby<K>(keys, n, input, plan, tuning, clock, stream, mr);
          break;
        case groupby_algorithm::partition:
        case groupby_algorithm::partition_transformed:
          parts = partition_groupby<K>(keys, n, input, plan,
                                       algo == groupby_algorithm::partition_transformed, tuning,
                                       clock, stream, mr);
          break;
        default:
          JOINERY_FAIL("GPU group-by algorithm '" + std::string(to_string(algo)) +
                       "' is not implemented");
      }
    }
    if (used != nullptr) { *used = ran; }
    auto out = finalize<K>(plan, std::move(parts), sort_by_key, clock, stream, mr);
    clock.finish();
    return out;
  });
}

}  // namespace joinery::detail::gpu
