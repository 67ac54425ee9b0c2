// Output forms on the host: index columns, a gathered table, and the aggregate.
#include "join/match_list.hpp"

#include <omp.h>

#include <cstring>

namespace joinery::detail {

namespace {

column int64_column(std::vector<std::int64_t> const& v) {
  column c(type_id::int64, static_cast<size_type>(v.size()));
  if (!v.empty()) { std::memcpy(c.data(), v.data(), v.size() * sizeof(std::int64_t)); }
  return c;
}

/// out[i] = src[rows[i]]; rows[i] < 0 leaves a null (needs a nullable output).
column gather(column_view const& src, std::vector<std::int64_t> const& rows, bool may_be_null) {
  auto const n = static_cast<size_type>(rows.size());
  column out(src.type(), n);
  std::uint8_t* mask = may_be_null ? out.make_nullable() : nullptr;
  size_type nulls = 0;
  dispatch_type(src.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto const* s = static_cast<T const*>(src.data());
    auto* d = static_cast<T*>(out.data());
#pragma omp parallel for schedule(static) reduction(+ : nulls)
    for (size_type i = 0; i < n; ++i) {
      auto const r = rows[static_cast<std::size_t>(i)];
      if (r < 0) {
        d[i] = T{};
        ++nulls;
      } else {
        d[i] = s[r];
      }
    }
  });
  if (mask != nullptr) {
    // Bits are cleared serially per byte to avoid sharing bytes between threads.
    for (size_type i = 0; i < n; ++i) {
      if (rows[static_cast<std::size_t>(i)] < 0) {
        mask[i >> 3] &= static_cast<std::uint8_t>(~(1u << (i & 7)));
      }
    }
    out.set_null_count(nulls);
  }
  return out;
}

/// Wrapping sum of src[rows[i]] over all i (rows < 0 add nothing).
std::uint64_t gathered_sum(column_view const& src, std::vector<std::int64_t> const& rows) {
  return dispatch_type(src.type(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      JOINERY_FAIL("floating-point join payloads are not supported");
    } else {
      auto const* s = static_cast<T const*>(src.data());
      std::uint64_t sum = 0;
      auto const n = static_cast<size_type>(rows.size());
#pragma omp parallel for schedule(static) reduction(+ : sum)
      for (size_type i = 0; i < n; ++i) {
        auto const r = rows[static_cast<std::size_t>(i)];
        if (r >= 0) { sum += checksum_value(s[r]); }
      }
      return sum;
    }
  });
}

}  // namespace

join_result assemble_host_result(match_list&& m, table_view const& build,
                                 table_view const& probe, size_type probe_key,
                                 join_options const& options) {
  join_result r;
  r.form = options.output;
  bool const probe_only =
    options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;
  r.aggregate.count = m.probe.size();
  // The checksum covers what the table form holds: key, build payloads, probe payloads.
  std::uint64_t sum = gathered_sum(probe.column(probe_key), m.probe);
  if (!probe_only) {
    for (auto c : options.build_payloads) { sum += gathered_sum(build.column(c), m.build); }
  }
  for (auto c : options.probe_payloads) { sum += gathered_sum(probe.column(c), m.probe); }
  r.aggregate.checksum = sum;

  switch (options.output) {
    case output_form::index:
      if (!probe_only) { r.build_rows = int64_column(m.build); }
      r.probe_rows = int64_column(m.probe);
      break;
    case output_form::table: {
      std::vector<column> cols;
      cols.push_back(gather(probe.column(probe_key), m.probe, false));
      if (!probe_only) {
        bool const outer = options.kind == join_kind::left_outer;
        for (auto c : options.build_payloads) { cols.push_back(gather(build.column(c), m.build, outer)); }
      }
      for (auto c : options.probe_payloads) { cols.push_back(gather(probe.column(c), m.probe, false)); }
      r.columns = table(std::move(cols));
      break;
    }
    case output_form::aggregate: break;
  }
  return r;
}

}  // namespace joinery::detail
