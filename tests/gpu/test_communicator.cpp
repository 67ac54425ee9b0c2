// The communicator's collectives on ranks of one process (three on GPU 0, and
// every GPU where there are several): all_gather, an all-to-all of uneven and
// empty buckets checked byte for byte, a failing rank releasing the others; and
// the refusals of a group of processes (an existing rendezvous file is refused
// and kept, a rank that waits in vain times out); everywhere: a group on a GPU
// that is not present is refused.
#include "core/communicator.hpp"
#include "core/rank_agreement.hpp"

#include <joinery/distributed.hpp>
#include <joinery/error.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace joinery::test {
namespace {

namespace fs = std::filesystem;

TEST(Communicator, AGroupOnAGpuNotPresentIsRefused) {
  // Without a GPU (or without CUDA) every device is missing; with GPUs, the one past the last.
  auto const missing = device_count();
  auto const refused = [&](auto&& make) {
    try {
      make();
      ADD_FAILURE() << "a group on GPU " << missing << " was made";
    } catch (logic_error const& e) {
      // With GPUs present the refusal names the missing one (else: no CUDA or no GPU at all).
      if (missing > 0) {
        EXPECT_NE(std::string(e.what()).find("no GPU with id"), std::string::npos) << e.what();
      }
    }
  };
  refused([&] { (void)rank_group::in_process({missing}); });
  refused([&] {
    (void)rank_group::joined(0, 1, missing, (fs::temp_directory_path() / "joinery-no-gpu").string());
  });
}

#if defined(JOINERY_HAS_CUDA)

class GpuCommunicator : public ::testing::Test {
 protected:
  void SetUp() override {
    if (device_count() == 0) {
      GTEST_SKIP() << "no GPU present: run on a lent GPU via scripts/device-check.sh";
    }
  }
  /// Three ranks on GPU 0, and one rank per GPU when there are several.
  static std::vector<std::pair<std::vector<int>, exchange_method>> layouts() {
    std::vector<std::pair<std::vector<int>, exchange_method>> v{
      {{0, 0, 0}, exchange_method::peer_copy}};
    if (device_count() > 1) {
      std::vector<int> every;
      for (int d = 0; d < device_count(); ++d) { every.push_back(d); }
      v.emplace_back(every, exchange_method::peer_copy);
      std::string why;
      if (detail::nccl_available(&why)) { v.emplace_back(every, exchange_method::nccl); }
    }
    return v;
  }
};

TEST_F(GpuCommunicator, AllGatherConcatenatesInRankOrder) {
  for (auto const& [devices, method] : layouts()) {
    detail::communicator const comm(devices, method);
    auto const n = static_cast<std::uint64_t>(comm.size());
    std::vector<std::vector<std::uint64_t>> got(devices.size());
    comm.for_each_rank([&](int r) {
      for (int round = 0; round < 3; ++round) {  // slots reused call after call
        auto const u = static_cast<std::uint64_t>(r);
        got[u] = comm.all_gather(r, {u * 10 + static_cast<std::uint64_t>(round), ~u});
        for (std::uint64_t s = 0; s < n; ++s) {
          if (got[u][2 * s] != s * 10 + static_cast<std::uint64_t>(round) ||
              got[u][2 * s + 1] != ~s) {
            throw std::runtime_error("rank " + std::to_string(r) + " got a wrong value");
          }
        }
      }
    });
    for (auto const& g : got) { EXPECT_EQ(g.size(), 2 * n); }
  }
}

TEST_F(GpuCommunicator, AllToAllMovesUnevenAndEmptyBuckets) {
  for (auto const& [devices, method] : layouts()) {
    SCOPED_TRACE(std::string(to_string(method)) + " over " + std::to_string(devices.size()) +
                 " ranks");
    detail::communicator const comm(devices, method);
    auto const n = static_cast<std::size_t>(comm.size());
    // Two rounds of different sizes, issued together. Round 0: rank s sends
    // (s * 7 + d * 3) % 5 * 1000 + d bytes to rank d (some buckets empty, none
    // alike); round 1: (d * 5 + s) % 4 * 777 + s bytes. Byte i of the bucket from
    // s to d in round k is (k * 101 + s * 31 + d * 17 + i) % 251.
    constexpr std::size_t rounds = 2;
    auto const size = [](std::size_t k, std::size_t s, std::size_t d) -> std::size_t {
      if (k == 0) { return (s * 7 + d * 3) % 5 == 0 ? 0 : (s * 7 + d * 3) % 5 * 1000 + d; }
      return (d * 5 + s) % 4 == 0 ? 0 : (d * 5 + s) % 4 * 777 + s;
    };
    auto const value = [](std::size_t k, std::size_t s, std::size_t d, std::size_t i) {
      return static_cast<unsigned char>((k * 101 + s * 31 + d * 17 + i) % 251);
    };
    std::vector<std::vector<std::vector<std::size_t>>> bytes(
      rounds, std::vector<std::vector<std::size_t>>(n, std::vector<std::size_t>(n)));
    for (std::size_t k = 0; k < rounds; ++k) {
      for (std::size_t s = 0; s < n; ++s) {
        for (std::size_t d = 0; d < n; ++d) { bytes[k][s][d] = size(k, s, d); }
      }
    }
    // received[k][d]: what rank d got in round k.
    std::vector<std::vector<std::vector<unsigned char>>> received(
      rounds, std::vector<std::vector<unsigned char>>(n));
    comm.for_each_rank([&](int r) {
      auto const me = static_cast<std::size_t>(r);
      auto const s = comm.stream_of(r);
      std::vector<buffer> sends;
      std::vector<buffer> recvs;
      std::vector<detail::communicator::round> issued;
      for (std::size_t k = 0; k < rounds; ++k) {
        std::vector<unsigned char> out;
        for (std::size_t d = 0; d < n; ++d) {
          for (std::size_t i = 0; i < bytes[k][me][d]; ++i) { out.push_back(value(k, me, d, i)); }
        }
        std::size_t incoming = 0;
        for (std::size_t from = 0; from < n; ++from) { incoming += bytes[k][from][me]; }
        sends.emplace_back(out.size() + 1, device_resource(), s);
        recvs.emplace_back(incoming + 1, device_resource(), s);
        copy_bytes(sends.back().data(), memory_space::device, out.data(), memory_space::host,
                   out.size(), s);
        received[k][me].resize(incoming);
        detail::communicator::round round;
        round.send = sends.back().data();
        round.recv = recvs.back().data();
        round.bytes = bytes[k];
        issued.push_back(std::move(round));
      }
      s.synchronize();
      comm.all_to_all(r, issued);
      for (std::size_t k = 0; k < rounds; ++k) {
        copy_bytes(received[k][me].data(), memory_space::host, recvs[k].data(),
                   memory_space::device, received[k][me].size(), s);
      }
      s.synchronize();
    });
    for (std::size_t k = 0; k < rounds; ++k) {
      for (std::size_t d = 0; d < n; ++d) {
        std::size_t at = 0;
        for (std::size_t from = 0; from < n; ++from) {
          for (std::size_t i = 0; i < bytes[k][from][d]; ++i, ++at) {
            ASSERT_EQ(received[k][d][at], value(k, from, d, i))
              << "round " << k << ", rank " << d << ", byte " << i << " from rank " << from;
          }
        }
        EXPECT_EQ(at, received[k][d].size());
      }
    }
  }
}

TEST_F(GpuCommunicator, AFailingRankReleasesTheOthersAndItsErrorIsRethrown) {
  detail::communicator const comm({0, 0, 0}, exchange_method::peer_copy);
  std::atomic<int> released{0};
  try {
    comm.for_each_rank([&](int r) {
      if (r == 1) { throw std::out_of_range("rank 1 failed on purpose"); }
      try {
        (void)comm.all_gather(r, {1});
      } catch (...) {
        ++released;
        throw;
      }
    });
    FAIL() << "for_each_rank returned although a rank failed";
  } catch (std::out_of_range const& e) {
    EXPECT_NE(std::string(e.what()).find("on purpose"), std::string::npos);
  }
  EXPECT_EQ(released.load(), 2);
  // The communicator serves again afterwards.
  comm.for_each_rank([&](int r) { EXPECT_EQ(comm.all_gather(r, {7}).size(), 3U); });
}

TEST_F(GpuCommunicator, RanksAgreeOrAllStop) {
  detail::communicator const comm({0, 0, 0}, exchange_method::peer_copy);
  std::vector<column> owned;
  owned.push_back(column(type_id::int32, 5, device_resource()));
  table_view const part({owned.front().view()});
  // Rank r holds r + 1 rows: where each rank's rows lie in the group.
  comm.for_each_rank([&](int r) {
    table_view const mine({column_view(type_id::int32, owned.front().view().data(),
                                       static_cast<size_type>(r + 1), memory_space::device)});
    auto const at = detail::agree_on_parts(comm, r, "", {mine}, 42, "test");
    EXPECT_EQ(at.first[0], static_cast<std::uint64_t>(r * (r + 1) / 2));
    EXPECT_EQ(at.total[0], 6U);
  });
  auto const all_stop = [&](auto&& why_of, auto&& request_of, char const* words) {
    std::atomic<int> stopped{0};
    try {
      comm.for_each_rank([&](int r) {
        try {
          (void)detail::agree_on_parts(comm, r, why_of(r), {part}, request_of(r), "test");
        } catch (logic_error const&) {
          ++stopped;
          throw;
        }
      });
      ADD_FAILURE() << "the ranks went on: " << words;
    } catch (logic_error const& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(stopped.load(), 3) << words;  // every rank, not only the one that differs
  };
  all_stop([](int r) { return r == 2 ? std::string("rank 2 cannot") : std::string(); },
           [](int) { return 42; }, "rank 2");
  all_stop([](int) { return std::string(); }, [](int r) { return r == 1 ? 7 : 42; },
           "same test");
}

TEST_F(GpuCommunicator, AProcessGroupRefusesBadRanksAnExistingFileAndTimesOut) {
  std::string why;
  if (!detail::nccl_available(&why)) { GTEST_SKIP() << "NCCL is not available: " << why; }
  auto const dir = fs::temp_directory_path() / ("joinery-rendezvous-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto const file = (dir / "id").string();
  EXPECT_THROW((void)rank_group::joined(2, 2, 0, file), logic_error);
  EXPECT_THROW((void)rank_group::joined(-1, 2, 0, file), logic_error);
  EXPECT_THROW((void)rank_group::joined(0, 2, device_count(), file), logic_error);
  {
    std::ofstream(file) << "a user's file";
  }
  try {
    (void)rank_group::joined(0, 2, 0, file);
    FAIL() << "an existing rendezvous file was taken";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("exists"), std::string::npos) << e.what();
  }
  std::string kept;
  std::getline(std::ifstream(file), kept);
  EXPECT_EQ(kept, "a user's file");  // neither replaced nor removed
  fs::remove(file);
  try {
    (void)rank_group::joined(1, 2, 0, file, 0.2);
    FAIL() << "rank 1 joined a group whose rank 0 never came";
  } catch (logic_error const& e) {
    EXPECT_NE(std::string(e.what()).find("waited"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

#endif

}  // namespace
}  // namespace joinery::test
