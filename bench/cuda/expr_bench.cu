// ew-cuda-expr-bench: expressions on the cuda backend (kernels generated and compiled at run
// time by NVRTC) against
//   - cub::DeviceTransform with the same formula written as a functor and compiled ahead
//     of time by nvcc (the hand-written fused kernel; the functor calls the same
//     ew/detail/math.hpp, so both give the same bits, which the benchmark checks),
//   - the unfused chain of fixed ops (chain3: add, scale, add through a temporary),
//   - the fixed op itself for an expression equal to one (add),
// at 2^10..2^28 elements, device memory, one stream; then the first-compile time, the
// disk-cache hit time (each in a fresh process) and the per-call cost of a cached
// expression against the same fixed op.
// Last, the cost of an untagged operand (MemorySpace::unknown, which the backend classifies
// with the driver on every call) against one tagged device, on ew::add and on the expression
// a+b at 2^10, with the raw cost of the driver's and the runtime's pointer queries beside it,
// and the cost of the scope that keeps the calling thread's CUDA context through every call.
// --variants: the launch tunings of the generated kernel (backends/cuda/expr_launch_tuning.hpp:
// the vector kernel or the bulk-copy kernel, and the bulk tiles' bytes in flight per SM) for
// add and ew-roofline's five expressions at 2^20..2^28 (--sizes, from 2^20), each next to
// cub with the same functor in the same run, every result checked against cub's bits.
// Usage: ew-cuda-expr-bench [--sizes FIRST:LAST] [--reps N] [--csv FILE]
//        ew-cuda-expr-bench --call-cost   (only the call costs: per call, host side)
//        ew-cuda-expr-bench --variants|--all-variants [--sizes FIRST:LAST] [--csv FILE]
//        ew-cuda-expr-bench --versus-add [--sizes FIRST:LAST] [--reps N] [--csv FILE]
#include <filesystem>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_transform.cuh>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "event_timer.hpp"
#include "thread_context.hpp"  // the scope every call runs in, timed alone
#include "ew/ew.hpp"
#include "expr_functors.cuh"
#include "expr_launch_tuning.hpp"  // backends/cuda: the launch hook (internal, not public API)

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// The formulas as functors (expr_functors.cuh, shared with ew-roofline's GPU expression
// peer), through the kit every backend uses (no contraction).
using ew::bench::check;
using ew::bench::EventTimer;
using ew::bench::functors::Add;
using ew::bench::functors::Chain3;
using ew::bench::functors::Clamp;
using ew::bench::functors::Dot4;
using ew::bench::functors::Relu;
using ew::bench::functors::Silu;

// Best of `rounds` rounds of `reps` back-to-back calls, in microseconds a call.
struct Timer {
  cudaStream_t stream;
  EventTimer events;
  explicit Timer(cudaStream_t s) : stream(s), events(s) {}
  template <class F>
  double time(F&& f, int reps, int rounds = 5) {
    f();
    check(cudaStreamSynchronize(stream), "warm-up");
    double best = 1e300;
    for (int r = 0; r < rounds; ++r) best = std::min(best, 1e6 * events.seconds_per_call(f, reps));
    return best;
  }
};

template <class T>
void fill_random(ew::Context& ctx, ew::Buffer<T>& b, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-8, 8);
  std::vector<T> h(b.size());
  for (T& v : h) v = static_cast<T>(d(rng));
  b.upload(h.data(), h.size());
  (void)ctx;
}

template <class T>
bool same_bits(ew::Buffer<T>& x, ew::Buffer<T>& y) {
  std::vector<T> a(x.size()), b(y.size());
  x.download(a.data(), a.size());
  y.download(b.data(), b.size());
  return std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

FILE* csv = nullptr;

void row(const char* expr, const char* dtype, int log2n, const char* method, double us, double bytes, double ref_us) {
  const double gbs = bytes / (us * 1e3);
  std::printf("  %-7s %-4s 2^%-2d %-22s %10.2f us %8.1f GB/s  %.3fx\n", expr, dtype, log2n, method, us, gbs, ref_us / us);
  if (csv) std::fprintf(csv, "%s,%s,%d,%s,%.4f,%.2f,%.4f\n", expr, dtype, log2n, method, us, gbs, ref_us / us);
}

template <class T>
void sweep(ew::Context& gpu, cudaStream_t stream, int first, int last, int reps) {
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";
  Timer timer(stream);
  const T s = T(0.75);
  const ew::Kernel add = ew::compile(std::vector<ew::Expr>{ew::input<T>(0) + ew::input<T>(1)});
  const ew::Kernel silu = ew::compile(std::vector<ew::Expr>{ew::input<T>(0) * ew::sigmoid(ew::input<T>(0))});
  const ew::Kernel chain3 = ew::compile(std::vector<ew::Expr>{ew::param<T>(0) * (ew::input<T>(0) + ew::input<T>(1)) + ew::input<T>(2)});
  for (int e = first; e <= last; e += 2) {
    const std::size_t n = std::size_t(1) << e;
    const int r = std::max(3, std::min(reps, int((std::size_t(reps) << 20) / n)));
    ew::Buffer<T> a(gpu, n), b(gpu, n), c(gpu, n), y(gpu, n), z(gpu, n), t(gpu, n);
    fill_random(gpu, a, 1), fill_random(gpu, b, 2), fill_random(gpu, c, 3);
    const double esz = sizeof(T);
    bool same = true;

    // add: the expression against ew::add and cub.
    const double op_add = timer.time([&] { ew::add<T>(gpu, a.span(), b.span(), y.span()); }, r);
    const double ex_add = timer.time([&] { add(gpu, {a.span(), b.span()}, {z.span()}); }, r);
    same = same && same_bits(y, z);
    const double cub_add = timer.time([&] {
      check(cub::DeviceTransform::Transform(::cuda::std::make_tuple(a.data(), b.data()), t.data(), n, Add<T>{}, stream),
            "cub add");
    }, r);
    same = same && same_bits(y, t);
    row("add", dt, e, "ew::add (fixed op)", op_add, 3 * n * esz, op_add);
    row("add", dt, e, "expression a+b", ex_add, 3 * n * esz, op_add);
    row("add", dt, e, "cub::DeviceTransform", cub_add, 3 * n * esz, op_add);

    // silu: the expression against cub with the same functor.
    const double cub_silu = timer.time([&] {
      check(cub::DeviceTransform::Transform(a.data(), y.data(), n, Silu<T>{}, stream), "cub silu");
    }, r);
    const double ex_silu = timer.time([&] { silu(gpu, {a.span()}, {z.span()}); }, r);
    same = same && same_bits(y, z);
    row("silu", dt, e, "cub::DeviceTransform", cub_silu, 2 * n * esz, cub_silu);
    row("silu", dt, e, "expression", ex_silu, 2 * n * esz, cub_silu);

    // chain3: fused expression, cub with the same functor, the unfused fixed ops.
    const double cub_chain = timer.time([&] {
      check(cub::DeviceTransform::Transform(::cuda::std::make_tuple(a.data(), b.data(), c.data()), y.data(), n,
                                            Chain3<T>{s}, stream),
            "cub chain3");
    }, r);
    const double ex_chain = timer.time([&] { chain3(gpu, {a.span(), b.span(), c.span()}, {z.span()}, {double(s)}); }, r);
    same = same && same_bits(y, z);
    const double unfused = timer.time([&] {
      ew::add<T>(gpu, a.span(), b.span(), t.span());
      ew::scale<T>(gpu, s, t.span(), t.span());
      ew::add<T>(gpu, t.span(), c.span(), t.span());
    }, r);
    same = same && same_bits(y, t);
    row("chain3", dt, e, "cub::DeviceTransform", cub_chain, 4 * n * esz, cub_chain);
    row("chain3", dt, e, "expression", ex_chain, 4 * n * esz, cub_chain);
    row("chain3", dt, e, "unfused add,scale,add", unfused, 4 * n * esz, cub_chain);
    if (!same) throw std::runtime_error(std::string("results differ in bits at 2^") + std::to_string(e) + " " + dt);
  }
}

// --versus-add: the expression a+b against ew::add, every size from 2^first to 2^last, f32
// and f64, for the goal "within 2 % of the fixed op". A batch is `reps` calls back to back
// between two events (fewer for large n); the two alternate batch by batch over `rounds`
// rounds, the first of each pair swapping every round, so that a drift of the clock or of
// the machine falls on both alike. Printed: each one's median time per call, the ratio of the
// medians (ew::add over the expression: above 1, the expression is faster) and the range
// of the paired ratios.
constexpr int versus_add_rounds = 21;

template <class T>
void versus_add(ew::Context& gpu, cudaStream_t stream, int first, int last, int reps) {
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";
  constexpr int rounds = versus_add_rounds;
  Timer timer(stream);
  const ew::Kernel add = ew::compile(std::vector<ew::Expr>{ew::input<T>(0) + ew::input<T>(1)});
  for (int e = first; e <= last; ++e) {
    const std::size_t n = std::size_t(1) << e;
    const int r = std::max(5, std::min(reps, int((std::size_t(reps) << 20) / n)));
    ew::Buffer<T> a(gpu, n), b(gpu, n), y(gpu, n), z(gpu, n);
    fill_random(gpu, a, 1), fill_random(gpu, b, 2);
    // Both write y, so that only the call differs (the two kernels' machine code is the same
    // but for the parameters' offsets); z takes the expression's result for the bit check.
    const auto op = [&] { ew::add<T>(gpu, a.span(), b.span(), y.span()); };
    const auto ex = [&] { add(gpu, {a.span(), b.span()}, {y.span()}); };
    std::vector<double> op_us, ex_us, paired;
    for (int round = 0; round < rounds; ++round) {
      double o, x;
      if (round % 2 == 0) o = timer.time(op, r, 1), x = timer.time(ex, r, 1);
      else x = timer.time(ex, r, 1), o = timer.time(op, r, 1);
      op_us.push_back(o), ex_us.push_back(x), paired.push_back(o / x);
    }
    op();
    add(gpu, {a.span(), b.span()}, {z.span()});
    if (!same_bits(y, z)) throw std::runtime_error(std::string("a+b differs from ew::add in bits at 2^") + std::to_string(e));
    const auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::sort(paired.begin(), paired.end());
    const double mo = median(op_us), mx = median(ex_us);
    std::printf("  add  %-4s 2^%-2d ew::add %10.3f us  expression a+b %10.3f us  ratio %.3fx (paired %.3f..%.3f, %d x %d calls)\n",
                dt, e, mo, mx, mo / mx, paired.front(), paired.back(), rounds, r);
    if (csv) std::fprintf(csv, "add,%s,%d,versus-add,%.4f,%.4f,%.4f\n", dt, e, mo, mx, mo / mx);
  }
}

// The generated kernel under each launch tuning against cub with the same functor, every
// size stepping by one; the ratio column is cub's time over the variant's.
template <class T>
void variants(ew::Context& gpu, cudaStream_t stream, int first, int last, int reps, bool every) {
  namespace tune = ew::detail::cuda;
  struct Variant {
    const char* name;
    tune::ExprLaunchTuning tuning;
  };
  // The vector kernel (ahead only on silu f32 on the H200), 32 and 128 KiB lost to the
  // default on both GPUs (2026-11-23, docs/PERFORMANCE.md); --all-variants measures them again.
  std::vector<Variant> all = {{"default", {}},
                              {"bulk 48 KiB/SM", {1, 48 << 10}},
                              {"bulk 64 KiB/SM", {1, 64 << 10}},
                              {"bulk 80 KiB/SM", {1, 80 << 10}},
                              {"bulk 96 KiB/SM", {1, 96 << 10}}};
  if (every)
    all.insert(all.end(),
               {{"vector kernel", {-1, 0}}, {"bulk 32 KiB/SM", {1, 32 << 10}}, {"bulk 128 KiB/SM", {1, 128 << 10}}});
  const char* dt = sizeof(T) == 4 ? "f32" : "f64";
  Timer timer(stream);
  const T s = T(0.75), lo = T(-0.5), hi = T(0.5);
  const auto a_ = ew::input<T>(0), b_ = ew::input<T>(1), c_ = ew::input<T>(2), d_ = ew::input<T>(3);
  const auto compile = [](ew::Expr e) { return ew::compile(std::vector<ew::Expr>{e}); };
  const ew::Kernel add = compile(a_ + b_), relu = compile(ew::max(a_, ew::Expr(0.0))),
                   silu = compile(a_ * ew::sigmoid(a_)), dot4 = compile(a_ * b_ + c_ * d_),
                   clamp = compile(ew::min(ew::max(ew::param<T>(0) * a_ + b_, ew::param<T>(1)), ew::param<T>(2))),
                   chain3 = compile(ew::param<T>(0) * (a_ + b_) + c_);
  for (int e = first; e <= last; ++e) {
    const std::size_t n = std::size_t(1) << e;
    const int r = std::max(3, std::min(reps, int((std::size_t(reps) << 20) / n)));
    ew::Buffer<T> a(gpu, n), b(gpu, n), c(gpu, n), d(gpu, n), y(gpu, n), z(gpu, n);
    fill_random(gpu, a, 1), fill_random(gpu, b, 2), fill_random(gpu, c, 3), fill_random(gpu, d, 4);
    using ::cuda::std::make_tuple;
    using cub::DeviceTransform;
    struct Case {
      const char* name;
      double bytes;
      std::function<cudaError_t()> peer;
      std::function<void()> fused;
    };
    const double z_ = double(n) * sizeof(T);
    const Case cases[] = {
        {"add", 3 * z_,
         [&] { return DeviceTransform::Transform(make_tuple(a.data(), b.data()), y.data(), n, Add<T>{}, stream); },
         [&] { add(gpu, {a.span(), b.span()}, {z.span()}); }},
        {"relu", 2 * z_, [&] { return DeviceTransform::Transform(a.data(), y.data(), n, Relu<T>{}, stream); },
         [&] { relu(gpu, {a.span()}, {z.span()}); }},
        {"silu", 2 * z_, [&] { return DeviceTransform::Transform(a.data(), y.data(), n, Silu<T>{}, stream); },
         [&] { silu(gpu, {a.span()}, {z.span()}); }},
        {"dot4", 5 * z_,
         [&] {
           return DeviceTransform::Transform(make_tuple(a.data(), b.data(), c.data(), d.data()), y.data(), n,
                                             Dot4<T>{}, stream);
         },
         [&] { dot4(gpu, {a.span(), b.span(), c.span(), d.span()}, {z.span()}); }},
        {"clamp", 3 * z_,
         [&] {
           return DeviceTransform::Transform(make_tuple(a.data(), b.data()), y.data(), n, Clamp<T>{s, lo, hi}, stream);
         },
         [&] { clamp(gpu, {a.span(), b.span()}, {z.span()}, {double(s), double(lo), double(hi)}); }},
        {"chain3", 4 * z_,
         [&] {
           return DeviceTransform::Transform(make_tuple(a.data(), b.data(), c.data()), y.data(), n, Chain3<T>{s}, stream);
         },
         [&] { chain3(gpu, {a.span(), b.span(), c.span()}, {z.span()}, {double(s)}); }},
    };
    for (const Case& c : cases) {
      const double peer = timer.time([&] { check(c.peer(), c.name); }, r);
      row(c.name, dt, e, "cub::DeviceTransform", peer, c.bytes, peer);
      for (const Variant& v : all) {
        tune::set_expr_launch_tuning(v.tuning);
        check(cudaMemsetAsync(z.data(), 0xff, n * sizeof(T), stream), "poison");
        const double us = timer.time(c.fused, r);
        tune::set_expr_launch_tuning({});
        if (!same_bits(y, z)) throw std::runtime_error(std::string(c.name) + " " + v.name + ": bits differ from cub's");
        row(c.name, dt, e, v.name, us, c.bytes, peer);
      }
    }
  }
}

// Child mode: the time of the first call of a new expression in this process (after
// a warm-up expression that loads NVRTC and the CUDA context's modules).
int first_call_child(const char* constant) {
  ew::Context gpu(ew::Backend::cuda);
  ew::Buffer<float> x(gpu, 1024), y(gpu, 1024);
  fill_random(gpu, x, 4);
  ew::compile({ew::input<float>(0) * 2.0f})(gpu, {x.span()}, {y.span()});
  gpu.synchronize();
  const ew::Kernel k = ew::compile({ew::input<float>(0) * ew::sigmoid(ew::input<float>(0)) + ew::Expr(std::atof(constant))});
  const Clock::time_point t = Clock::now();
  k(gpu, {x.span()}, {y.span()});
  gpu.synchronize();
  std::printf("%.3f\n", ms_since(t));
  return 0;
}

double run_child(const std::string& self, const std::string& dir, const std::string& constant) {
  const std::string cmd = "EW_CACHE_DIR='" + dir + "' '" + self + "' --first-call " + constant;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) throw std::runtime_error("popen failed");
  double ms = -1;
  if (std::fscanf(p, "%lf", &ms) != 1) ms = -1;
  if (pclose(p) != 0 || ms < 0) throw std::runtime_error("the child process failed: " + cmd);
  return ms;
}

// Microseconds a call, the best of `rounds` rounds of `calls` back-to-back calls, timed
// through the wait that follows them (`through_wait`: the slower of host and GPU) or up to
// the last enqueue (the host's own time: back-to-back calls of 2^10 elements keep the GPU as
// busy as the host, and a few hundred fit the launch queue, so this is the part a pointer
// query adds to).
struct Timing {
  int calls, rounds;
  bool through_wait;
};
constexpr Timing waited{20000, 7, true}, host_only{256, 21, false};

template <class F>
double per_call_us(ew::Context& gpu, F&& f, Timing how) {
  f();
  gpu.synchronize();
  double best = 1e30;
  for (int round = 0; round < how.rounds; ++round) {
    const Clock::time_point t = Clock::now();
    for (int k = 0; k < how.calls; ++k) f();
    if (how.through_wait) gpu.synchronize();
    best = std::min(best, ms_since(t) * 1000 / how.calls);
    gpu.synchronize();
  }
  return best;
}

// The extra cost of untagged operands, measured in the same run: every variant in turn,
// three times over, the best of each kept.
void pointer_check_cost(ew::Context& gpu) {
  const std::size_t n = 1024;
  ew::Buffer<float> a(gpu, n), b(gpu, n), c(gpu, n);
  fill_random(gpu, a, 5), fill_random(gpu, b, 6);
  const ew::Span<const float> ta = a.span(), tb = b.span();
  const ew::Span<float> tc = c.span();
  const ew::Span<const float> ua(a.data(), n), ub(b.data(), n);  // MemorySpace::unknown
  const ew::Span<float> uc(c.data(), n);
  const ew::Kernel add = ew::compile({ew::input<float>(0) + ew::input<float>(1)});

  using Query = CUresult(CUDAAPI*)(unsigned int, CUpointer_attribute*, void**, CUdeviceptr);
  const auto driver_query = reinterpret_cast<Query>(ew::detail::cuda::driver_function("cuPointerGetAttributes"));
  const void* const pointers[3] = {a.data(), b.data(), c.data()};
  volatile unsigned sink = 0;
  // The library's query (memory.cpp) asks for the type and the managed flag, and for the
  // device ordinal that tells another GPU's memory only where the process sees several GPUs.
  auto driver_queries = [&](unsigned count) {
    for (const void* p : pointers) {
      unsigned long long type = 0, managed = 0;
      int ordinal = -1;
      CUpointer_attribute attributes[3] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                           CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
      void* data[3] = {&type, &managed, &ordinal};
      if (driver_query) driver_query(count, attributes, data, reinterpret_cast<CUdeviceptr>(p));
      sink = sink + unsigned(type + managed) + unsigned(ordinal);
    }
  };
  auto three_runtime_queries = [&] {
    for (const void* p : pointers) {
      cudaPointerAttributes attr{};
      cudaPointerGetAttributes(&attr, p);
      sink = sink + unsigned(attr.type);
    }
  };

  // The scope every call of a GPU backend runs in (thread_context.hpp), alone: where the thread
  // has the backend's context current (two cuCtxGetCurrent), and where it has none (a push and
  // pops besides; timed between two cuCtxSetCurrent, which are timed alone to be subtracted);
  // beside it the cudaGetDevice that the device scope of 0.2.1 and before cost where the
  // context's GPU was current.
  namespace cuda = ew::detail::cuda;
  const cuda::DriverContextCalls& driver = cuda::require_driver_context_calls("ew-cuda-expr-bench");
  const cuda::GpuContext held(gpu.device(), nullptr, "ew-cuda-expr-bench");
  const CUcontext mine = held.get();
  auto unset_and_set = [&] {
    driver.set_current(nullptr);
    driver.set_current(mine);
  };

  struct Variant {
    const char* what;
    std::function<void()> call;
    double best = 1e30, host = 1e30;
  };
  std::vector<Variant> variants = {
      {"ew::add (device spans)", [&] { ew::add<float>(gpu, ta, tb, tc); }},
      {"ew::add (unknown spans)", [&] { ew::add<float>(gpu, ua, ub, uc); }},
      {"expression a+b (device spans)", [&] { add(gpu, {ta, tb}, {tc}); }},
      {"expression a+b (unknown spans)", [&] { add(gpu, {ua, ub}, {uc}); }},
      {"3 x cuPointerGetAttributes (2 attributes)", [&] { driver_queries(2); }},
      {"3 x cuPointerGetAttributes (3 attributes)", [&] { driver_queries(3); }},
      {"3 x cudaPointerGetAttributes", three_runtime_queries},
      {"context scope, its context current", [&] { const cuda::ContextScope scope(mine, "bench"); }},
      {"context scope from none, + 2 cuCtxSetCurrent",
       [&] {
         driver.set_current(nullptr);
         { const cuda::ContextScope scope(mine, "bench"); }
         driver.set_current(mine);
       }},
      {"2 cuCtxSetCurrent", unset_and_set},
      {"cudaGetDevice (0.2.1's scope)", [&] {
         int device = -1;
         cudaGetDevice(&device);
         sink = sink + unsigned(device);
       }},
  };
  for (int pass = 0; pass < 3; ++pass)
    for (Variant& v : variants) {
      v.best = std::min(v.best, per_call_us(gpu, v.call, waited));
      v.host = std::min(v.host, per_call_us(gpu, v.call, host_only));
    }
  std::printf("\nper call, 2^10 floats (best of 3 x 7 rounds of 20000 back-to-back calls and the wait: the slower of host and GPU):\n");
  for (const Variant& v : variants) std::printf("  %-44s %8.3f us\n", v.what, v.best);
  std::printf("  unknown - device: ew::add %+.3f us, expression %+.3f us (goal: under +0.150 us)%s\n",
              variants[1].best - variants[0].best, variants[3].best - variants[2].best,
              driver_query ? "" : "  (cuPointerGetAttributes unavailable: the runtime's query is used)");
  std::printf("\nthe host's own time a call (best of 3 x 21 rounds of 256 calls, timed to the last enqueue):\n");
  for (const Variant& v : variants) std::printf("  %-44s %8.3f us\n", v.what, v.host);
  std::printf("  unknown - device: ew::add %+.3f us, expression %+.3f us (goal: under +0.150 us)\n",
              variants[1].host - variants[0].host, variants[3].host - variants[2].host);
  if (csv) {
    for (const Variant& v : variants) std::fprintf(csv, "call_cost,f32,10,%s,%.4f,,\n", v.what, v.best);
    for (const Variant& v : variants) std::fprintf(csv, "call_cost_host,f32,10,%s,%.4f,,\n", v.what, v.host);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc == 3 && std::string(argv[1]) == "--first-call") return first_call_child(argv[2]);
    if (argc == 2 && std::string(argv[1]) == "--call-cost") {
      ew::Context gpu(ew::Backend::cuda);
      pointer_check_cost(gpu);
      return 0;
    }
    int first = 10, last = 28, reps = 200;
    bool only_variants = false, every_variant = false, only_versus_add = false;
    std::string csv_path;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--sizes" && i + 1 < argc) std::sscanf(argv[++i], "%d:%d", &first, &last);
      else if (a == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
      else if (a == "--csv" && i + 1 < argc) csv_path = argv[++i];
      else if (a == "--variants") only_variants = true;
      else if (a == "--all-variants") only_variants = every_variant = true;
      else if (a == "--versus-add") only_versus_add = true;
      else {
        std::fprintf(stderr,
                     "usage: ew-cuda-expr-bench [--sizes FIRST:LAST] [--reps N] [--csv FILE] "
                     "[--variants | --all-variants | --versus-add] | --call-cost\n");
        return 2;
      }
    }
    cudaStream_t stream;
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    ew::ContextOptions o;
    o.stream = stream;
    ew::Context gpu(ew::Backend::cuda, o);
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, gpu.device()), "cudaGetDeviceProperties");
    std::printf("ew-cuda-expr-bench on %s (sm_%d%d); ratio: against the first row of each group\n", prop.name,
                prop.major, prop.minor);
    if (!csv_path.empty()) {
      csv = std::fopen(csv_path.c_str(), "w");
      if (!csv) throw std::runtime_error("cannot write " + csv_path);
      std::fprintf(csv, "expression,dtype,log2n,method,us,GBps,ratio\n");
    }
    if (only_versus_add) {
      std::printf("a+b against ew::add: medians of %d alternating batches (csv: us of ew::add, us of a+b, ratio)\n", versus_add_rounds);
      versus_add<float>(gpu, stream, first, last, reps);
      versus_add<double>(gpu, stream, first, last, reps);
      if (csv) std::fclose(csv);
      return 0;
    }
    if (only_variants) {
      variants<float>(gpu, stream, std::max(first, 20), last, reps, every_variant);
      variants<double>(gpu, stream, std::max(first, 20), last, reps, every_variant);
      if (csv) std::fclose(csv);
      return 0;
    }
    sweep<float>(gpu, stream, first, last, reps);
    sweep<double>(gpu, stream, first, last, reps);

    // Compile and cache times, each first call in a fresh process.
    char self[4096] = {};
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) throw std::runtime_error("readlink /proc/self/exe");
    char dir[] = "/tmp/ew_expr_bench_cache.XXXXXX";
    if (!mkdtemp(dir)) throw std::runtime_error("mkdtemp");
    std::random_device seed;
    std::vector<double> compile_ms, disk_ms;
    for (int k = 0; k < 3; ++k) {
      const std::string constant = std::to_string(1.0 + (seed() % 1000000) * 1e-7);
      compile_ms.push_back(run_child(self, dir, constant));
      disk_ms.push_back(run_child(self, dir, constant));
    }
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
    std::sort(compile_ms.begin(), compile_ms.end());
    std::sort(disk_ms.begin(), disk_ms.end());
    std::printf("\nfirst call of a new expression (x*sigmoid(x)+c, 2^10 floats), 3 processes each, median:\n"
                "  compiled by NVRTC: %.1f ms (%.1f..%.1f)\n  from the disk cache: %.2f ms (%.2f..%.2f)\n",
                compile_ms[1], compile_ms[0], compile_ms[2], disk_ms[1], disk_ms[0], disk_ms[2]);
    if (csv) {
      std::fprintf(csv, "first_compile,f32,10,ms,%.3f,,\n", compile_ms[1]);
      std::fprintf(csv, "disk_cache_hit,f32,10,ms,%.3f,,\n", disk_ms[1]);
    }

    // Per-call cost, host side, back to back at 2^10: cached expression vs fixed op.
    const std::size_t n = 1024;
    ew::Buffer<float> a(gpu, n), b(gpu, n), c(gpu, n);
    const ew::Kernel add = ew::compile({ew::input<float>(0) + ew::input<float>(1)});
    add(gpu, {a.span(), b.span()}, {c.span()});
    gpu.synchronize();
    const int calls = 20000;
    double op = 1e30, ex = 1e30;
    for (int round = 0; round < 7; ++round) {
      Clock::time_point t = Clock::now();
      for (int k = 0; k < calls; ++k) ew::add<float>(gpu, a.span(), b.span(), c.span());
      gpu.synchronize();
      op = std::min(op, ms_since(t) * 1000 / calls);
      t = Clock::now();
      for (int k = 0; k < calls; ++k) add(gpu, {a.span(), b.span()}, {c.span()});
      gpu.synchronize();
      ex = std::min(ex, ms_since(t) * 1000 / calls);
    }
    std::printf("per call, 2^10 floats back to back (best of 7 x %d): ew::add %.3f us, expression a+b %.3f us (%+.3f us)\n",
                calls, op, ex, ex - op);
    if (csv) {
      std::fprintf(csv, "call_cost,f32,10,ew::add,%.4f,,\n", op);
      std::fprintf(csv, "call_cost,f32,10,expression,%.4f,,\n", ex);
    }
    pointer_check_cost(gpu);
    if (csv) std::fclose(csv);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ew-cuda-expr-bench: %s\n", e.what());
    return 1;
  }
}
