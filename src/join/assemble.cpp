// Output forms on the host: index columns, a gathered table, and the aggregate.
#include "cpu/match_list.hpp"

#include <omp.h>

#include <cstring>

namespace joinery::detail {

namespace {

/// out[i] = src[rows[i]]; rows[i] < 0 leaves a null (needs a nullable output).
column gather(column_view const& src, column_view const& row_ids, bool may_be_null) {
  auto const n = row_ids.size();
  auto const* rows = row_ids.data_as<std::int64_t>();
  column out(src.type(), n);
  std::uint8_t* mask = may_be_null ? out.make_nullable() : nullptr;
  size_type nulls = 0;
  dispatch_type(src.type(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto const* s = static_cast<T const*>(src.data());
    auto* d = static_cast<T*>(out.data());
#pragma omp parallel for schedule(static) reduction(+ : nulls)
    for (size_type i = 0; i < n; ++i) {
      auto const r = rows[i];
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
      if (rows[i] < 0) {
        mask[i >> 3] &= static_cast<std::uint8_t>(~(1u << (i & 7)));
      }
    }
    out.set_null_count(nulls);
  }
  return out;
}

/// Wrapping sum of src[rows[i]] over all i (rows < 0 add nothing).
std::uint64_t gathered_sum(column_view const& src, column_view const& row_ids) {
  return dispatch_type(src.type(), [&](auto tag) -> std::uint64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      JOINERY_FAIL("floating-point join payloads are not supported");
    } else {
      auto const* s = static_cast<T const*>(src.data());
      std::uint64_t sum = 0;
      auto const n = row_ids.size();
      auto const* rows = row_ids.data_as<std::int64_t>();
#pragma omp parallel for schedule(static) reduction(+ : sum)
      for (size_type i = 0; i < n; ++i) {
        auto const r = rows[i];
        if (r >= 0) { sum += checksum_value(s[r]); }
      }
      return sum;
    }
  });
}

}  // namespace

match_columns concatenate(std::vector<match_list> const& parts) {
  std::vector<std::size_t> first_build(parts.size() + 1, 0);
  std::vector<std::size_t> first_probe(parts.size() + 1, 0);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    first_build[i + 1] = first_build[i] + parts[i].build.size();
    first_probe[i + 1] = first_probe[i] + parts[i].probe.size();
  }
  match_columns out{column(type_id::int64, static_cast<size_type>(first_build.back())),
                    column(type_id::int64, static_cast<size_type>(first_probe.back()))};
  auto* b = out.build_rows.data_as<std::int64_t>();
  auto* p = out.probe_rows.data_as<std::int64_t>();
  auto const n = static_cast<std::int64_t>(parts.size());
#pragma omp parallel for schedule(static, 1)
  for (std::int64_t i = 0; i < n; ++i) {
    auto const& part = parts[static_cast<std::size_t>(i)];
    if (!part.build.empty()) {
      std::memcpy(b + first_build[static_cast<std::size_t>(i)], part.build.data(),
                  part.build.size() * sizeof(std::int64_t));
    }
    if (!part.probe.empty()) {
      std::memcpy(p + first_probe[static_cast<std::size_t>(i)], part.probe.data(),
                  part.probe.size() * sizeof(std::int64_t));
    }
  }
  return out;
}

join_result assemble_host_result(match_columns&& m, table_view const& build,
                                 table_view const& probe, size_type probe_key,
                                 join_options const& options) {
  join_result r;
  r.form = options.output;
  bool const probe_only =
    options.kind == join_kind::left_semi || options.kind == join_kind::left_anti;
  r.aggregate.count = static_cast<std::uint64_t>(m.probe_rows.size());
  // The table form's checksum covers what it holds: key, build payloads, probe payloads. The
  // index form reports the count only (its rows do not depend on payloads, nor does its time).
  if (options.output != output_form::index) {
    std::uint64_t sum = gathered_sum(probe.column(probe_key), m.probe_rows);
    if (!probe_only) {
      for (auto c : options.build_payloads) { sum += gathered_sum(build.column(c), m.build_rows); }
    }
    for (auto c : options.probe_payloads) { sum += gathered_sum(probe.column(c), m.probe_rows); }
    r.aggregate.checksum = sum;
  }

  switch (options.output) {
    case output_form::index:
      if (!probe_only) { r.build_rows = std::move(m.build_rows); }
      r.probe_rows = std::move(m.probe_rows);
      break;
    case output_form::table: {
      std::vector<column> cols;
      cols.push_back(gather(probe.column(probe_key), m.probe_rows, false));
      if (!probe_only) {
        bool const outer = options.kind == join_kind::left_outer;
        for (auto c : options.build_payloads) {
          cols.push_back(gather(build.column(c), m.build_rows, outer));
        }
      }
      for (auto c : options.probe_payloads) {
        cols.push_back(gather(probe.column(c), m.probe_rows, false));
      }
      r.columns = table(std::move(cols));
      break;
    }
    case output_form::aggregate: break;
  }
  return r;
}

}  // namespace joinery::detail
