// Eight threads, each with its own cuda context, run random ops at once and check every
// result: operands in pageable, pinned, device and managed memory (mostly host-resident,
// so the contexts' transfer pipelines, their pinned staging and their copy teams run side
// by side), one pinned input array that every thread reads at the same time, and
// contexts created and destroyed while the other threads' ops run. Meant to be run
// under compute-sanitizer racecheck as well (bench/cuda/device_check.sh).
#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda_test_support.hpp"

namespace ew::test {
namespace {

class CudaThreads : public NeedsCuda {};

constexpr int kThreads = 8;
constexpr int kRounds = 2;         // contexts per thread, one after the other
constexpr int kOpsPerRound = 10;
constexpr int kMaxLog2N = 16;
constexpr std::size_t kTotal = (std::size_t(1) << kMaxLog2N) + 8;  // room for offsets below 8

class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const unsigned long generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      all_here_.notify_all();
      return;
    }
    all_here_.wait(lock, [&] { return generation != generation_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable all_here_;
  int count_, waiting_ = 0;
  unsigned long generation_ = 0;
};

// The shared suite's value distribution (test_support.hpp), from a thread's own engine:
// the process-wide rng() is not for concurrent use.
template <class T>
std::vector<T> values(std::mt19937_64& engine, std::size_t n) {
  std::uniform_real_distribution<T> mantissa(T(-2), T(2));
  std::uniform_int_distribution<int> exponent(-8, 8);
  std::vector<T> v(n);
  for (auto& x : v) x = std::ldexp(mantissa(engine), exponent(engine));
  return v;
}

// Pinned inputs every thread reads at once; never written.
template <class T>
struct SharedInput {
  std::vector<T> values;
  const T* pinned;
};

// One random op on `ctx`; returns an empty string or what went wrong.
template <class T>
std::string one_op(Context& ctx, std::mt19937_64& engine, const SharedInput<T>& shared) {
  constexpr MemorySpace spaces[] = {MemorySpace::host,   MemorySpace::pinned, MemorySpace::host,
                                    MemorySpace::pinned, MemorySpace::device, MemorySpace::managed};
  const Op op = static_cast<Op>(engine() % op_count);
  const OpInfo& oi = info(op);
  const std::size_t n = 1 + engine() % (std::size_t(1) << (engine() % (kMaxLog2N + 1)));
  const std::size_t off_a = engine() % 8, off_b = engine() % 8, off_out = engine() % 8;
  const bool shared_a = engine() % 3 == 0;
  const MemorySpace sa = shared_a ? MemorySpace::pinned : spaces[engine() % 6];
  const MemorySpace sb = spaces[engine() % 6], so = spaces[engine() % 6];
  const T s = values<T>(engine, 1)[0], t = values<T>(engine, 1)[0];

  const std::vector<T> a = shared_a ? shared.values : values<T>(engine, kTotal);
  const std::vector<T> b = values<T>(engine, kTotal);
  std::vector<T> out_init(kTotal, poison<T>());
  if (oi.in_place) {
    const std::vector<T> y = values<T>(engine, n);
    std::copy(y.begin(), y.end(), out_init.begin() + off_out);
  }
  std::vector<T> want = out_init;
  const T* ref_b = oi.in_place ? out_init.data() + off_out : (oi.input_streams == 2 ? b.data() + off_b : nullptr);
  reference(op, n, a.data() + off_a, ref_b, want.data() + off_out, s, t);

  std::ostringstream what;
  what << to_string(op) << " " << to_string(dtype_v<T>) << " n=" << n << " a: " << (shared_a ? "shared " : "")
       << to_string(sa) << ", b: " << to_string(sb) << ", out: " << to_string(so);
  try {
    std::unique_ptr<Storage<T>> da;
    if (!shared_a) {
      da = std::make_unique<Storage<T>>(ctx, sa, kTotal);
      da->fill(a);
    }
    Storage<T> db(ctx, sb, kTotal), dout(ctx, so, kTotal);
    db.fill(b);
    dout.fill(out_init);
    Operands<T> args;
    args.a = Span<const T>((shared_a ? shared.pinned : da->data()) + off_a, n);
    if (oi.input_streams == 2) args.b = Span<const T>(db.data() + off_b, n);
    args.out = Span<T>(dout.data() + off_out, n);
    args.s = s;
    args.t = t;
    run(ctx, op, args);
    ctx.synchronize();
    const long long bad = first_mismatch(dout.read(), want);
    if (bad >= 0) what << ": element " << bad << " wrong";
    else return {};
  } catch (const std::exception& e) {
    what << ": " << e.what();
  }
  return what.str();
}

TEST_F(CudaThreads, EightContextsRandomOpsSharingAPinnedInput) {
  Context main_ctx(Backend::cuda);
  SharedInput<float> shared_f{random_vector<float>(kTotal), nullptr};
  SharedInput<double> shared_d{random_vector<double>(kTotal), nullptr};
  Buffer<float> pinned_f(main_ctx, kTotal, MemorySpace::pinned);
  Buffer<double> pinned_d(main_ctx, kTotal, MemorySpace::pinned);
  std::memcpy(pinned_f.data(), shared_f.values.data(), kTotal * sizeof(float));
  std::memcpy(pinned_d.data(), shared_d.values.data(), kTotal * sizeof(double));
  shared_f.pinned = pinned_f.data();
  shared_d.pinned = pinned_d.data();

  std::vector<std::uint64_t> seeds(kThreads);
  for (auto& seed : seeds) seed = rng()();
  std::vector<std::vector<std::string>> failures(kThreads);
  std::vector<int> ops_done(kThreads, 0);
  Barrier barrier(kThreads);
  std::vector<std::thread> threads;
  for (int w = 0; w < kThreads; ++w)
    threads.emplace_back([&, w] {
      std::mt19937_64 engine(seeds[w]);
      for (int round = 0; round < kRounds; ++round) {
        barrier.wait();  // contexts are created at the same time
        try {
          ContextOptions o;
          o.staging_bytes = std::size_t(w % 2 ? 64 : 256) << 10;  // many chunks per call
          o.threads = 2;
          Context ctx(Backend::cuda, o);
          for (int i = 0; i < kOpsPerRound; ++i, ++ops_done[w]) {
            std::string f = engine() % 2 ? one_op<float>(ctx, engine, shared_f) : one_op<double>(ctx, engine, shared_d);
            if (!f.empty()) failures[w].push_back(std::move(f));
          }
        } catch (const std::exception& e) {
          failures[w].push_back(std::string("context: ") + e.what());
        }
      }  // each context is destroyed while the others may still run ops
    });
  for (auto& t : threads) t.join();

  int total = 0;
  for (int w = 0; w < kThreads; ++w) {
    total += ops_done[w];
    for (const std::string& f : failures[w]) ADD_FAILURE() << "thread " << w << " (seed " << seeds[w] << "): " << f;
  }
  EXPECT_EQ(total, kThreads * kRounds * kOpsPerRound);
  std::printf("    %d ops on %d threads, %d contexts each\n", total, kThreads, kRounds);
}

}  // namespace
}  // namespace ew::test
