// The CPU thread team (backends/highway/team.hpp): every index is run exactly once, piece
// bounds fall on output cache lines, and the team stays correct with callers on several
// application threads and calls from inside a piece.
#include <gtest/gtest.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "address_space_limit.hpp"
#include "ew/ew.hpp"
#include "team.hpp"
#include "test_support.hpp"

namespace hw = ew::detail::highway;

namespace {

struct LowThreshold {
  LowThreshold() : saved(hw::parallel_threshold_bytes()) { hw::set_parallel_threshold_bytes(0); }
  ~LowThreshold() { hw::set_parallel_threshold_bytes(saved); }
  std::size_t saved;
};

// Runs for_each_piece over n elements of `element` bytes at `offset` bytes past a line and
// checks coverage and bounds; returns how many pieces ran.
std::size_t check_once(int threads, std::size_t n, std::size_t element, std::size_t offset) {
  alignas(64) static unsigned char storage[64];
  const auto base = reinterpret_cast<std::uintptr_t>(storage);
  const void* out = reinterpret_cast<const void*>(base + offset);  // never dereferenced
  std::vector<std::atomic<int>> hits(n);
  for (auto& h : hits) h.store(0);
  std::atomic<std::size_t> pieces{0}, bad_bounds{0};
  hw::for_each_piece(threads, n, out, element, [&](std::size_t begin, std::size_t end) {
    pieces.fetch_add(1);
    for (std::size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    auto on_line = [&](std::size_t i) { return i == 0 || i == n || (base + offset + i * element) % 64 == 0; };
    if (!on_line(begin) || !on_line(end) || begin >= end) bad_bounds.fetch_add(1);
  });
  std::size_t wrong = 0;
  for (auto& h : hits) wrong += h.load() != 1;
  EXPECT_EQ(wrong, 0u) << "threads=" << threads << " n=" << n << " element=" << element << " offset=" << offset;
  EXPECT_EQ(bad_bounds.load(), 0u) << "threads=" << threads << " n=" << n << " element=" << element
                                   << " offset=" << offset;
  return pieces.load();
}

TEST(Team, EveryIndexOnceAndBoundsOnLines) {
  LowThreshold low;
  std::mt19937 random(42);
  std::size_t most_pieces = 0;
  for (int threads : {1, 2, 3, 8})
    for (std::size_t element : {4, 8})
      for (int trial = 0; trial < 12; ++trial) {
        const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 300000)(random);
        const std::size_t offset = element * std::uniform_int_distribution<std::size_t>(0, 64 / element - 1)(random);
        most_pieces = std::max(most_pieces, check_once(threads, n, element, offset));
      }
  EXPECT_GT(most_pieces, 8u);  // the dynamic pieces were exercised, not one inline call
}

TEST(Team, BelowTheThresholdRunsInlineOnTheCaller) {
  const std::size_t n = hw::parallel_threshold_bytes() / 4 - 1;
  const auto caller = std::this_thread::get_id();
  int calls = 0;
  bool elsewhere = false;
  hw::for_each_piece(4, n, nullptr, 4, [&](std::size_t begin, std::size_t end) {
    ++calls;
    elsewhere |= std::this_thread::get_id() != caller || begin != 0 || end != n;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(elsewhere);
}

TEST(Team, ConcurrentCallersAndNestedCalls) {
  LowThreshold low;
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 50; ++round) {
        const std::size_t n = 20000 + 977 * static_cast<std::size_t>(c * 50 + round);
        std::vector<std::atomic<int>> hits(n);
        for (auto& h : hits) h.store(0);
        hw::for_each_piece(3, n, nullptr, 4, [&](std::size_t begin, std::size_t end) {
          // A call from inside a piece must not wait for the team it runs on.
          hw::for_each_piece(3, end - begin, nullptr, 4, [&](std::size_t b, std::size_t e) {
            for (std::size_t i = begin + b; i < begin + e; ++i) hits[i].fetch_add(1);
          });
        });
        for (auto& h : hits) failures += h.load() != 1;
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

int cpus_of_this_thread() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
}

// Under OMP_PROC_BIND (ctest runs this suite once more with it set) libgomp binds the main
// thread to one core at load; the team's workers must not inherit that single core.
TEST(Team, WorkersRunOnEveryCpuOfTheProcess) {
  if (omp_get_num_procs() < 2) GTEST_SKIP() << "one CPU";
  LowThreshold low;
  const auto caller = std::this_thread::get_id();
  std::atomic<int> worker_cpus{0};
  for (int attempt = 0; attempt < 1000 && worker_cpus.load() == 0; ++attempt)
    hw::for_each_piece(2, 1 << 20, nullptr, 4, [&](std::size_t, std::size_t) {
      if (std::this_thread::get_id() != caller)
        worker_cpus.store(cpus_of_this_thread());
      else
        std::this_thread::sleep_for(std::chrono::microseconds(200));  // leaves the worker pieces to take
    });
  ASSERT_GT(worker_cpus.load(), 0) << "no worker ran a piece in 1000 calls";
  EXPECT_GE(worker_cpus.load(), 2) << "the workers share one CPU (the caller's: " << cpus_of_this_thread() << ")";
}

// A group's claim word holds the call number's low 32 bits: the 2^32-nd call once found no
// word of its own and waited forever. Calls across the wrap must each run every index once.
// Returns 0 when they do; in a child process with an alarm, so that a hang fails the test.
int calls_across_the_call_tags_wrap() {
  alarm(60);
  LowThreshold low;
  int wrong = 0;
  std::atomic<std::size_t> pieces{0};
  for (std::uint64_t start : {(std::uint64_t(1) << 32) - 3, (std::uint64_t(1) << 33) - 2}) {
    hw::set_team_call_count(start);
    for (int call = 0; call < 6; ++call) {
      const std::size_t n = 200000 + 4099 * static_cast<std::size_t>(call);
      std::vector<std::atomic<int>> hits(n);
      for (auto& h : hits) h.store(0);
      hw::for_each_piece(3, n, nullptr, 4, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) hits[i].fetch_add(1);
        pieces.fetch_add(1);
      });
      for (auto& h : hits) wrong += h.load() != 1;
    }
  }
  if (wrong) return 1;
  return pieces.load() > 12 ? 0 : 2;  // 2: every call ran inline, not on the team
}

TEST(Team, CallsAcrossTheCallTagsWrap) {
  EXPECT_EXIT(std::_Exit(calls_across_the_call_tags_wrap()), ::testing::ExitedWithCode(0), "");
}

// A worker thread that cannot be started (here: the address space limited, so that no new
// thread gets its stack) fails the call with ew::Error(out_of_memory) before anything is
// written; a call on the threads already started still runs. Returns 0 when all of that
// holds, else what failed. Runs in a child process: the limit is the process's.
int add_with_no_room_for_threads(const std::vector<float>& a, const std::vector<float>& b,
                                 const std::vector<float>& want) {
  const std::size_t n = a.size();
  std::vector<float> out(n, ew::test::poison<float>());
  ew::ContextOptions many;
  many.threads = 256;
  ew::Context wide(ew::Backend::highway, many);
  if (!ew::test::limit_address_space_to_current_plus(std::size_t(64) << 20)) return 4;  // 255 stacks do not fit
  try {
    ew::add<float>(wide, a, b, out);
    return 5;  // no error
  } catch (const ew::Error& e) {
    if (e.code() != ew::Errc::out_of_memory || std::string(e.what()).find("worker thread") == std::string::npos) {
      std::fprintf(stderr, "wrong error: %s\n", e.what());
      return 6;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!ew::test::is_poison(out[i])) return 7;  // written although refused
  ew::ContextOptions two;
  two.threads = 2;
  ew::Context narrow(ew::Backend::highway, two);
  ew::add<float>(narrow, a, b, out);
  return std::memcmp(out.data(), want.data(), n * sizeof(float)) == 0 ? 0 : 8;
}

TEST(Team, AThreadThatCannotStartIsAnErrorAndNothingIsWritten) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's own allocations need the address space this test takes away";
#else
  const std::size_t n = std::size_t(1) << 20;
  const std::vector<float> a = ew::test::random_vector<float>(n), b = ew::test::random_vector<float>(n);
  std::vector<float> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
  EXPECT_EXIT(std::_Exit(add_with_no_room_for_threads(a, b, want)), ::testing::ExitedWithCode(0), "");
#endif
}

// EW_SPIN_US is decimal digits from 0 to 1000000 (docs/environment.md), refused otherwise when
// a highway context is made. Read once per process: each value in a fresh one.
int context_with_spin_window(const char* text) {
  setenv("EW_SPIN_US", text, 1);
  try {
    ew::Context ctx(ew::Backend::highway);
  } catch (const ew::Error& e) {
    return e.code() == ew::Errc::invalid_argument && std::strstr(e.what(), "EW_SPIN_US") ? 10 : 11;
  }
  return 0;
}

TEST(Team, SpinWindowFromTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a new process, in which nothing read it yet
  for (const char* good : {"0", "200", "1000000"})
    EXPECT_EXIT(std::_Exit(context_with_spin_window(good)), ::testing::ExitedWithCode(0), "") << "'" << good << "'";
  for (const char* bad : {"abc", "-1", "-0", "+5", " 5", "5 ", "\n7", "1000001", "99999999", "0x10"})
    EXPECT_EXIT(std::_Exit(context_with_spin_window(bad)), ::testing::ExitedWithCode(10), "") << "'" << bad << "'";
}

}  // namespace
