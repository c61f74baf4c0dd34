// Eight application threads using the library at once, each with its own contexts, as
// the interface allows (a context belongs to one thread at a time; different contexts
// may run concurrently). Built and run under ThreadSanitizer in CI (.ci/run), where any
// data race in the library's shared state fails the test:
// - the backend registry: every thread's first act is available_backends() or
//   backend_status(), so the probes run while all threads ask;
// - Kokkos initialization: the first context of every even thread is a kokkos one, all
//   created at the same moment, so that Kokkos is initialized while the others wait;
// - the highway CPU team, one per process: the first call of every odd thread is a
//   highway call above the team's parallel threshold, so that the team is created while
//   the others ask for it; later such calls are offered to it from several threads at
//   once (one runs there, the others inline);
// - contexts created and destroyed concurrently, buffers outliving their context, and
//   one compiled ew::Kernel called from every thread on its own context.
// Every call's output is compared with a reference written here (std::fma for the fused
// ops), bit for bit. ew::finalize() runs after every thread has joined: it races nothing.
//
// OpenMP under ThreadSanitizer: libgomp is not instrumented, so TSan cannot see the
// synchronization inside OpenMP parallel regions and reports false races there. The
// library runs no OpenMP regions: the highway team is its own std::threads (team.cpp),
// and libgomp only answers omp_get_num_procs/omp_get_num_places. So this build needs
// neither suppressions nor a team of one: the contexts keep their default team (every
// hardware thread, ContextOptions::threads drawn from 0..4 here), and TSan sees the
// team's own atomics, mutexes and worker threads. Should an OpenMP region come back,
// its false reports would fail this test: run such a backend with a team of one
// (ContextOptions::threads = 1) here rather than suppress reports.
#include <gtest/gtest.h>

#include <ew/ew.hpp>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int thread_count = 8;
constexpr int contexts_per_thread = 12;
constexpr int calls_per_context = 24;

// The documented formulas (ew/ops.hpp), written out.
template <class T>
T reference(ew::Op op, T a, T b, T y, T s, T t) {
  switch (op) {
    case ew::Op::copy: return a;
    case ew::Op::scale: return s * a;
    case ew::Op::add: return a + b;
    case ew::Op::mul: return a * b;
    case ew::Op::triad: return std::fma(s, b, a);
    case ew::Op::axpy: return std::fma(s, a, y);
    case ew::Op::axpby: return std::fma(s, a, t * y);
  }
  return T(0);
}

template <class T>
bool same_bits(T x, T y) {
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// All threads start together, so that first uses of shared state coincide.
class StartLine {
 public:
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

struct Shared {
  StartLine start;
  const ew::Kernel* fma_kernel = nullptr;  // fma(p0, x0, x1) in f32, compiled before the threads start
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  std::atomic<long> calls{0}, team_sized_calls{0};
  std::atomic<long> per_backend[5] = {};

  void fail(const std::string& what) {
    std::lock_guard<std::mutex> lock(failures_mutex);
    if (failures.size() < 20) failures.push_back(what);
  }
};

class Worker {
 public:
  Worker(Shared& shared, int index, std::uint64_t seed) : shared_(shared), index_(index), rng_(seed) {}

  void operator()() {
    shared_.start.wait();
    try {
      run();
    } catch (const std::exception& e) {
      shared_.fail("thread " + std::to_string(index_) + ": " + e.what());
    }
  }

 private:
  void run() {
    // The registry, raced: half the threads list every backend, half ask for one.
    std::vector<ew::Backend> usable;
    if (index_ % 2 == 0) {
      for (const ew::BackendStatus& s : ew::available_backends())
        if (s.usable && s.backend != ew::Backend::cuda) usable.push_back(s.backend);
    } else {
      for (ew::Backend b : {ew::Backend::scalar, ew::Backend::highway, ew::Backend::kokkos})
        if (ew::backend_status(b).usable) usable.push_back(b);
    }
    for (int c = 0; c < contexts_per_thread; ++c) {
      ew::Backend backend = usable[pick(usable.size())];
      // First uses, raced: Kokkos initialization (even threads), the highway team (odd).
      const bool first_team_call = c == 0 && index_ % 2 == 1 && ew::backend_status(ew::Backend::highway).usable;
      if (c == 0 && index_ % 2 == 0 && ew::backend_status(ew::Backend::kokkos).usable) backend = ew::Backend::kokkos;
      if (first_team_call) backend = ew::Backend::highway;
      ew::ContextOptions options;  // highway: a team of 0 (all hardware threads) to 4 threads
      if (backend == ew::Backend::highway && !first_team_call) options.threads = static_cast<int>(pick(5));
      std::unique_ptr<ew::Buffer<double>> kept;  // outlives its context
      {
        ew::Context ctx(backend, options);
        for (int k = 0; k < calls_per_context; ++k) {
          const bool team_sized = first_team_call && k == 0;
          if (team_sized || pick(2)) one_call<float>(ctx, team_sized);
          else one_call<double>(ctx);
          if (pick(4) == 0) kernel_call(ctx);
        }
        kept = std::make_unique<ew::Buffer<double>>(ctx, 1000);
        std::vector<double> x = values<double>(1000), y = values<double>(1000);
        ew::Buffer<double> bx(ctx, 1000);
        kept->upload(y.data(), y.size());
        bx.upload(x.data(), x.size());
        ew::axpy<double>(ctx, 0.75, bx.span(), kept->span());
        ctx.synchronize();
        std::vector<double> want(1000);
        for (std::size_t i = 0; i < 1000; ++i) want[i] = std::fma(0.75, x[i], y[i]);
        check(ctx, "axpy on buffers", want, *kept);
      }  // the context goes; the buffer keeps its backend alive
      std::vector<double> back(kept->size());
      kept->download(back.data(), back.size());
      kept.reset();
    }
  }

  std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  template <class T>
  std::vector<T> values(std::size_t n) {
    std::uniform_real_distribution<T> mantissa(T(-2), T(2));
    std::uniform_int_distribution<int> exponent(-10, 10);
    std::vector<T> v(n);
    for (T& x : v) x = std::ldexp(mantissa(rng_), exponent(rng_));
    return v;
  }

  // Mostly small; a quarter above the highway team's parallel threshold (64 KiB of output).
  std::size_t size() {
    if (pick(4) == 0) return 20000 + pick(20000);
    return pick(3000);
  }

  template <class T, class Got>
  void check(ew::Context& ctx, const std::string& what, const std::vector<T>& want, const Got& got) {
    for (std::size_t i = 0; i < want.size(); ++i)
      if (!same_bits(got.data()[i], want[i])) {
        char text[128];
        std::snprintf(text, sizeof text, ": element %zu of %zu is %.17g, expected %.17g", i, want.size(),
                      static_cast<double>(got.data()[i]), static_cast<double>(want[i]));
        shared_.fail("thread " + std::to_string(index_) + " " + ctx.backend_name() + " " + what + text);
        return;
      }
  }

  template <class T>
  void one_call(ew::Context& ctx, bool team_sized = false) {
    const ew::Op op = static_cast<ew::Op>(pick(ew::op_count));
    const ew::OpInfo& oi = ew::info(op);
    const std::size_t n = team_sized ? 40000 : size();
    const std::vector<T> a = values<T>(n), b = values<T>(n);
    const T s = values<T>(1)[0], t = values<T>(1)[0];
    std::vector<T> out = oi.in_place ? values<T>(n) : std::vector<T>(n, std::numeric_limits<T>::quiet_NaN());
    std::vector<T> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = reference<T>(op, a[i], b[i], out[i], s, t);
    ew::Operands<T> args;
    args.a = ew::Span<const T>(a.data(), n);
    if (oi.input_streams == 2) args.b = ew::Span<const T>(b.data(), n);
    args.out = ew::Span<T>(out.data(), n);
    args.s = s, args.t = t;
    ew::run<T>(ctx, op, args);
    ctx.synchronize();
    check(ctx, std::string(oi.name) + " " + ew::to_string(ew::dtype_v<T>), want, out);
    ++shared_.calls;
    ++shared_.per_backend[static_cast<int>(ctx.backend())];
    if (n * sizeof(T) >= (std::size_t(64) << 10)) ++shared_.team_sized_calls;
  }

  void kernel_call(ew::Context& ctx) {
    const std::size_t n = size();
    const std::vector<float> x = values<float>(n), y = values<float>(n);
    std::vector<float> out(n, std::numeric_limits<float>::quiet_NaN()), want(n);
    const float s = values<float>(1)[0];
    for (std::size_t i = 0; i < n; ++i) want[i] = std::fma(s, x[i], y[i]);
    (*shared_.fma_kernel)(ctx, {x, y}, {out}, {static_cast<double>(s)});
    ctx.synchronize();
    check(ctx, "kernel fma(p0, x0, x1)", want, out);
    ++shared_.calls;
  }

  Shared& shared_;
  int index_;
  std::mt19937_64 rng_;
};

TEST(Threads, EightThreadsEachWithItsOwnContexts) {
  const char* fixed = std::getenv("EW_TEST_SEED");
  const std::uint64_t seed = fixed && *fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
  std::fprintf(stderr, "EW_TEST_SEED=%llu\n", static_cast<unsigned long long>(seed));

  Shared shared;
  // Compiling touches no backend: the registry's first use stays with the threads.
  const ew::Kernel fma_kernel =
      ew::compile({ew::fma(ew::param<float>(0), ew::input<float>(0), ew::input<float>(1))});
  shared.fma_kernel = &fma_kernel;

  std::vector<std::thread> threads;
  for (int i = 0; i < thread_count; ++i) threads.emplace_back(Worker(shared, i, seed + static_cast<std::uint64_t>(i)));
  shared.start.open();
  for (std::thread& t : threads) t.join();
  ew::finalize();

  for (const std::string& f : shared.failures) ADD_FAILURE() << f;
  std::printf("threads: %d threads, %ld calls checked (%ld above the highway team's threshold); scalar %ld, highway %ld, kokkos %ld\n",
              thread_count, shared.calls.load(), shared.team_sized_calls.load(),
              shared.per_backend[static_cast<int>(ew::Backend::scalar)].load(),
              shared.per_backend[static_cast<int>(ew::Backend::highway)].load(),
              shared.per_backend[static_cast<int>(ew::Backend::kokkos)].load());
  EXPECT_GT(shared.calls.load(), thread_count * contexts_per_thread * calls_per_context / 2);
  EXPECT_GT(shared.team_sized_calls.load(), 0);
}

}  // namespace
