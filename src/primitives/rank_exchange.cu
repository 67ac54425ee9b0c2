// The phases every multi-GPU operation shares (rank_exchange.hpp). Host code:
// the kernels it starts are the split primitive's and rank_kernels.cu's.
#include "primitives/rank_exchange.hpp"

#include "core/cuda_try.hpp"

#include <joinery/primitives/partition.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <utility>

namespace joinery::detail::multi_gpu {

namespace {

/// The GPU holding a device-resident buffer.
int device_holding(void const* p) {
  cudaPointerAttributes a{};
  JOINERY_CUDA_TRY(cudaPointerGetAttributes(&a, p));
  return a.device;
}

}  // namespace

void take_share(rank_side& rs, table_view const& t, std::vector<size_type> const& carried,
                row_range range, bool with_row_ids, size_type first_id, int device,
                stream_ref stream) {
  auto const rows = range.last - range.first;
  for (auto ci : carried) {
    auto const& c = t.column(ci);
    auto const width = static_cast<size_type>(size_of(c.type()));
    auto const* src =
      rows == 0 ? nullptr : static_cast<unsigned char const*>(c.data()) + range.first * width;
    if (rows == 0 || (c.space() == memory_space::device && device_holding(c.data()) == device)) {
      rs.share.emplace_back(c.type(), src, rows, memory_space::device);
      continue;
    }
    rs.owned.emplace_back(c.type(), rows, device_resource(), stream);
    copy_bytes(rs.owned.back().data(), memory_space::device, src, c.space(),
               static_cast<std::size_t>(rows * width), stream);
    rs.share.push_back(rs.owned.back().view());
  }
  if (with_row_ids) {
    rs.owned.push_back(row_id_sequence(rows, first_id, stream, device_resource()));
    rs.share.push_back(rs.owned.back().view());
  }
}

rank_rule rule_by_key_range(int rank, std::vector<column_view> const& keys,
                            communicator const& comm) {
  rank_rule rule;
  rule.ranks = comm.size();
  rule.by_range = true;
  code_range mine;
  for (auto const& k : keys) {
    auto const c = key_code_range(k, comm.stream_of(rank));
    mine.min = std::min(mine.min, c.min);
    mine.max = std::max(mine.max, c.max);
  }
  auto const ranges = comm.all_gather(rank, {mine.min, mine.max});
  code_range all;
  for (std::size_t r = 0; r < ranges.size(); r += 2) {
    all.min = std::min(all.min, ranges[r]);
    all.max = std::max(all.max, ranges[r + 1]);
  }
  rule.bins = bins_over(all.min, all.max);
  std::vector<std::uint64_t> hist(rule.bins.count, 0);
  for (auto const& k : keys) {
    auto const part = key_bin_histogram(k, rule.bins, comm.stream_of(rank));
    for (std::size_t b = 0; b < part.size(); ++b) { hist[b] += part[b]; }
  }
  auto const every = comm.all_gather(rank, hist);
  std::vector<std::uint64_t> total(rule.bins.count, 0);
  for (std::size_t i = 0; i < every.size(); ++i) { total[i % total.size()] += every[i]; }
  rule.rank_of_bin = ranks_of_bins(total, comm.size());
  return rule;
}

void split_by_rank(rank_side& rs, rank_rule const& rule, stream_ref stream) {
  auto const rows = rs.share.front().size();
  rs.counts.assign(static_cast<std::size_t>(rule.ranks), 0);
  if (rows == 0) {
    for (auto const& c : rs.share) { rs.sent.emplace_back(c.type(), 0, device_resource(), stream); }
  } else {
    auto const ids = ranks_of_rows(rs.share.front(), rule, stream, device_resource());
    auto parts = split(ids.view(), rule.ranks, rs.share, stream, device_resource());
    std::vector<std::int64_t> offsets(static_cast<std::size_t>(rule.ranks) + 1);
    copy_bytes(offsets.data(), memory_space::host, parts.offsets.data(), memory_space::device,
               offsets.size() * sizeof(std::int64_t), stream);
    for (std::size_t d = 0; d < rs.counts.size(); ++d) {
      rs.counts[d] = offsets[d + 1] - offsets[d];
    }
    rs.sent = std::move(parts.columns);
  }
  rs.share.clear();
  rs.owned.clear();
  stream.synchronize();
}

void exchange_sides(int rank, std::vector<rank_side*> const& sides, communicator const& comm) {
  auto const n = static_cast<std::size_t>(comm.size());
  auto const me = static_cast<std::size_t>(rank);
  auto const s = comm.stream_of(rank);
  // Every rank's counts for every destination, side after side.
  std::vector<std::uint64_t> mine;
  for (auto* side : sides) {
    for (auto c : side->counts) { mine.push_back(static_cast<std::uint64_t>(c)); }
  }
  auto const every = comm.all_gather(rank, mine);
  auto const count = [&](std::size_t side, std::size_t from, std::size_t to) {
    return every[from * sides.size() * n + side * n + to];
  };
  std::vector<communicator::round> rounds;
  for (std::size_t i = 0; i < sides.size(); ++i) {
    auto& rs = *sides[i];
    size_type incoming = 0;
    for (std::size_t from = 0; from < n; ++from) {
      incoming += static_cast<size_type>(count(i, from, me));
    }
    for (auto const& c : rs.sent) { rs.received.emplace_back(c.type(), incoming, device_resource(), s); }
    for (std::size_t c = 0; c < rs.sent.size(); ++c) {
      communicator::round r;
      r.send = rs.sent[c].data();
      r.recv = rs.received[c].data();
      auto const width = size_of(rs.sent[c].type());
      r.bytes.assign(n, std::vector<std::size_t>(n));
      for (std::size_t from = 0; from < n; ++from) {
        for (std::size_t to = 0; to < n; ++to) {
          r.bytes[from][to] = static_cast<std::size_t>(count(i, from, to)) * width;
        }
      }
      rounds.push_back(std::move(r));
    }
  }
  s.synchronize();  // the buffers exist before another rank's copy lands
  comm.all_to_all(rank, rounds);
  for (auto* side : sides) {
    side->sent.clear();
    for (auto const& c : side->received) { side->rows.push_back(c.view()); }
  }
  s.synchronize();
}

std::vector<std::uint64_t> gather_values(int rank, std::uint64_t value, communicator const& comm) {
  return comm.all_gather(rank, {value});
}

column gather_pieces(std::vector<column const*> const& pieces, std::vector<size_type> const& at,
                     communicator const& comm, stream_ref stream, memory_resource* mr) {
  column out(pieces.front()->type(), at.back(), mr, stream);
  stream.synchronize();  // allocated before the ranks write into it
  auto const width = size_of(out.type());
  comm.for_each_rank([&](int r) {
    auto const& p = *pieces[static_cast<std::size_t>(r)];
    if (p.size() == 0) { return; }
    copy_bytes(static_cast<unsigned char*>(out.data()) + at[static_cast<std::size_t>(r)] * width,
               out.space(), p.view().data(), memory_space::device,
               static_cast<std::size_t>(p.size()) * width, comm.stream_of(r));
    comm.stream_of(r).synchronize();
  });
  bool const nullable =
    std::any_of(pieces.begin(), pieces.end(), [](column const* p) { return p->view().nullable(); });
  if (!nullable) { return out; }
  std::vector<std::uint8_t> mask(null_mask_bytes(out.size()), 0xff);
  size_type nulls = 0;
  for (std::size_t r = 0; r < pieces.size(); ++r) {
    auto const v = pieces[r]->view();
    if (!v.nullable() || v.size() == 0) { continue; }
    std::vector<std::uint8_t> part(null_mask_bytes(v.size()));
    copy_bytes(part.data(), memory_space::host, v.null_mask(), memory_space::device, part.size(),
               comm.stream_of(static_cast<int>(r)));
    for (size_type i = 0; i < v.size(); ++i) {
      if (((part[static_cast<std::size_t>(i >> 3)] >> (i & 7)) & 1U) == 0) {
        auto const o = at[r] + i;
        mask[static_cast<std::size_t>(o >> 3)] &= static_cast<std::uint8_t>(~(1U << (o & 7)));
        ++nulls;
      }
    }
  }
  auto* dst = out.make_nullable();
  copy_bytes(dst, out.space(), mask.data(), memory_space::host, mask.size(), stream);
  stream.synchronize();
  out.set_null_count(nulls);
  return out;
}

}  // namespace joinery::detail::multi_gpu
