// The reductions section (reductions.hpp). Each point: the operands in the backend's
// own memory (device memory for cuda), a warm-up call, then `reps` timed batches of calls
// back to back (enough calls per batch to last about a millisecond at small sizes); the
// median batch over its calls is the time per call. Then the reductions over an expression
// of two arrays (ew/expr_reduce.hpp: sum((a-b)^2), asum(a*b)): the library's fused call
// next to the same backend's unfused form (the kernel evaluated into a temporary array, then
// ew::sum: the same bits) and to one OpenMP loop or cub TransformReduce computing the
// expression per element; bytes are the two inputs read once.
#include "reductions.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <random>
#include <cstring>

#include "ew/ew.hpp"
#include "reduce_peers.hpp"
#include "report.hpp"

namespace ew::roofline {

namespace {

using bench::ExprReduction;
using bench::Reduction;

struct Runner {
  std::string name;
  bool peer;
  Place place;
  std::function<double(Reduction, DType, std::size_t, const void*, const void*)> run;
  std::function<bool(Reduction, DType, std::size_t)> supports;
};

template <class T>
double call(Context& ctx, Reduction r, std::size_t n, const void* x, const void* y, MemorySpace space) {
  const Span<const T> xs(static_cast<const T*>(x), n, space), ys(static_cast<const T*>(y), n, space);
  if (r == Reduction::sum) return ew::sum<T>(ctx, xs);
  if (r == Reduction::dot) return ew::dot<T>(ctx, xs, ys);
  return ew::norm2<T>(ctx, xs);
}

double library(Context& ctx, Reduction r, DType d, std::size_t n, const void* x, const void* y, MemorySpace space) {
  switch (d) {
    case DType::f32: return call<float>(ctx, r, n, x, y, space);
    case DType::f16: return call<half>(ctx, r, n, x, y, space);
    case DType::bf16: return call<bfloat16>(ctx, r, n, x, y, space);
    default: return call<double>(ctx, r, n, x, y, space);
  }
}

// Operands of one dtype for one place: the largest size, random values in [-1, 1) (the
// same numbers rounded to each dtype), in host memory or in a device buffer of the first
// device context.
template <class T>
struct Typed {
  std::vector<T> x, y;
  std::unique_ptr<Buffer<T>> dx, dy;
  void fill(const std::vector<double>& xd, const std::vector<double>& yd, Context* device_ctx) {
    x.resize(xd.size()), y.resize(yd.size());
    for (std::size_t i = 0; i < xd.size(); ++i) x[i] = static_cast<T>(xd[i]), y[i] = static_cast<T>(yd[i]);
    if (!device_ctx) return;
    dx = std::make_unique<Buffer<T>>(*device_ctx, x.size()), dy = std::make_unique<Buffer<T>>(*device_ctx, y.size());
    dx->upload(x.data(), x.size()), dy->upload(y.data(), y.size());
  }
  const void* at(bool second, Place p) const {
    if (p == Place::device) return second ? dy->data() : dx->data();
    return second ? y.data() : x.data();
  }
};

struct Operands {
  Typed<float> f32;
  Typed<double> f64;
  Typed<half> f16;
  Typed<bfloat16> bf16;
  void fill(DType d, const std::vector<double>& xd, const std::vector<double>& yd, Context* device_ctx) {
    switch (d) {
      case DType::f32: return f32.fill(xd, yd, device_ctx);
      case DType::f16: return f16.fill(xd, yd, device_ctx);
      case DType::bf16: return bf16.fill(xd, yd, device_ctx);
      default: return f64.fill(xd, yd, device_ctx);
    }
  }
  const void* at(DType d, bool second, Place p) const {
    switch (d) {
      case DType::f32: return f32.at(second, p);
      case DType::f16: return f16.at(second, p);
      case DType::bf16: return bf16.at(second, p);
      default: return f64.at(second, p);
    }
  }
  const void* x(DType d, Place p) const { return at(d, false, p); }
  const void* y(DType d, Place p) const { return at(d, true, p); }
};

// The expression reductions, over two inputs of dtype T.
template <class T>
Kernel expr_kernel_of(ExprReduction r) {
  const Expr a = input<T>(0), b = input<T>(1);
  return r == ExprReduction::sum_sq_diff ? compile({(a - b) * (a - b)}) : compile({a * b});
}
Kernel expr_kernel(ExprReduction r, DType d) {
  switch (d) {
    case DType::f32: return expr_kernel_of<float>(r);
    case DType::f16: return expr_kernel_of<half>(r);
    case DType::bf16: return expr_kernel_of<bfloat16>(r);
    default: return expr_kernel_of<double>(r);
  }
}

template <class T>
std::vector<InputArray> two_of(std::size_t n, const void* a, const void* b, MemorySpace space) {
  return {Span<const T>(static_cast<const T*>(a), n, space), Span<const T>(static_cast<const T*>(b), n, space)};
}
std::vector<InputArray> two(DType d, std::size_t n, const void* a, const void* b, MemorySpace space) {
  switch (d) {
    case DType::f32: return two_of<float>(n, a, b, space);
    case DType::f16: return two_of<half>(n, a, b, space);
    case DType::bf16: return two_of<bfloat16>(n, a, b, space);
    default: return two_of<double>(n, a, b, space);
  }
}

double fused(Context& ctx, ExprReduction r, const Kernel& k, DType d, std::size_t n, const void* a, const void* b,
             MemorySpace space) {
  const std::vector<InputArray> in = two(d, n, a, b, space);
  return r == ExprReduction::sum_sq_diff ? ew::sum(ctx, k, in.data(), in.size(), nullptr, 0)
                                         : ew::asum(ctx, k, in.data(), in.size(), nullptr, 0);
}

// The unfused form: the kernel into a temporary array of the context (kept between calls),
// then ew::sum or ew::asum of it.
struct Unfused {
  std::unique_ptr<Buffer<double>> temp;
  double run(Context& ctx, ExprReduction r, const Kernel& k, DType d, std::size_t n, const void* a, const void* b,
             MemorySpace space) {
    const DType out = k.output_dtype(0);
    const std::size_t words = (n * size_of(out) + 7) / 8;
    if (!temp || temp->size() < words) temp.reset(), temp = std::make_unique<Buffer<double>>(ctx, words);
    const std::vector<InputArray> in = two(d, n, a, b, space);
    OutputArray values;
    values.data = temp->data(), values.size = n, values.dtype = out, values.space = temp->space();
    k.run(ctx, in.data(), in.size(), &values, 1, nullptr, 0);
    const auto reduce = [&](auto tag) -> double {
      using T = decltype(tag);
      const Span<const T> x(reinterpret_cast<const T*>(temp->data()), n, temp->space());
      return static_cast<double>(r == ExprReduction::sum_sq_diff ? ew::sum<T>(ctx, x) : ew::asum<T>(ctx, x));
    };
    switch (out) {
      case DType::f32: return reduce(0.0f);
      case DType::f16: return reduce(half{});
      case DType::bf16: return reduce(bfloat16{});
      default: return reduce(0.0);
    }
  }
};

struct ExprTarget {
  std::string name;
  bool peer;
  Place place;
  std::function<double(ExprReduction, const Kernel&, DType, std::size_t, const void*, const void*)> run;
  std::function<bool(ExprReduction, DType, std::size_t)> supports;
};

Stats time_calls(const std::function<double()>& f, std::size_t n, int reps, double& value) {
  value = f();  // warm-up
  const int batch = static_cast<int>(std::clamp<std::size_t>((std::size_t(1) << 20) / std::max<std::size_t>(n, 1), 1, 256));
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < batch; ++k) value = f();
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / batch);
  }
  return summarize(seconds);
}

}  // namespace

std::vector<ReductionResult> measure_reductions(const ReductionPlan& plan, Progress& progress) {
  std::vector<Backend> wanted = plan.backends;
  if (wanted.empty())
    for (const BackendStatus& s : available_backends())
      if (s.usable && !(plan.quick && s.backend == Backend::scalar)) wanted.push_back(s.backend);

  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<Runner> runners;
  std::vector<ExprTarget> expr_targets;
  Context* device_ctx = nullptr;
  for (Backend b : wanted) {
    if (!backend_status(b).usable) continue;
    contexts.push_back(std::make_unique<Context>(b));
    Context* ctx = contexts.back().get();
    const bool on_device = b == Backend::cuda || Buffer<float>(*ctx, 1).space() == MemorySpace::device;
    if (on_device && !device_ctx) device_ctx = ctx;
    const MemorySpace space = on_device ? MemorySpace::device : MemorySpace::host;
    runners.push_back({to_string(b), false, on_device ? Place::device : Place::host,
                       [ctx, space](Reduction r, DType d, std::size_t n, const void* x, const void* y) {
                         return library(*ctx, r, d, n, x, y, space);
                       },
                       [](Reduction, DType, std::size_t) { return true; }});
    if (on_device && b != Backend::cuda) continue;  // kokkos on a GPU: its reductions over expressions not measured here
    const Place place = on_device ? Place::device : Place::host;
    const auto always = [](ExprReduction, DType, std::size_t) { return true; };
    expr_targets.push_back({to_string(b), false, place,
                            [ctx, space](ExprReduction r, const Kernel& k, DType d, std::size_t n, const void* a,
                                         const void* b2) { return fused(*ctx, r, k, d, n, a, b2, space); },
                            always});
    auto temp = std::make_shared<Unfused>();
    expr_targets.push_back({std::string(to_string(b)) + " unfused", true, place,
                            [ctx, space, temp](ExprReduction r, const Kernel& k, DType d, std::size_t n, const void* a,
                                               const void* b2) { return temp->run(*ctx, r, k, d, n, a, b2, space); },
                            always});
  }
  bool host = false;
  for (const Runner& r : runners) host = host || r.place == Place::host;
  if (plan.peers) {
#if defined(EW_ROOFLINE_CPU_PEERS)
    if (host)
      for (const bench::ReducePeer& p : bench::cpu_reduce_peers())
        runners.push_back({p.name, true, Place::host, [p](Reduction r, DType d, std::size_t n, const void* x, const void* y) {
                             return p.run(r, d, n, x, y, nullptr);
                           }, p.supports});
    if (host)
      for (const bench::ExprReducePeer& p : bench::cpu_expr_reduce_peers())
        expr_targets.push_back({p.name, true, Place::host,
                                [p](ExprReduction r, const Kernel&, DType d, std::size_t n, const void* a,
                                    const void* b) { return p.run(r, d, n, a, b, nullptr); },
                                p.supports});
#endif
#if defined(EW_ROOFLINE_CUDA_PEERS)
    if (device_ctx)
      for (const bench::ReducePeer& p : bench::cuda_reduce_peers()) {
        void* stream = device_ctx->native_stream();
        runners.push_back({p.name, true, Place::device,
                           [p, stream](Reduction r, DType d, std::size_t n, const void* x, const void* y) {
                             return p.run(r, d, n, x, y, stream);
                           }, p.supports});
      }
    if (device_ctx)
      for (const bench::ExprReducePeer& p : bench::cuda_expr_reduce_peers()) {
        void* stream = device_ctx->native_stream();
        expr_targets.push_back({p.name, true, Place::device,
                                [p, stream](ExprReduction r, const Kernel&, DType d, std::size_t n, const void* a,
                                            const void* b) { return p.run(r, d, n, a, b, stream); },
                                p.supports});
      }
#endif
  }

  std::vector<ReductionResult> results;
  Context reference(Backend::scalar);
  // Each library result of one point against the fastest peer of the point.
  const auto rank = [&results](std::size_t first) {
    for (std::size_t i = first; i < results.size(); ++i) {
      if (results[i].peer) continue;
      for (std::size_t j = first; j < results.size(); ++j)
        if (results[j].peer && results[i].gbps / results[j].gbps < (results[i].ratio_to_best_peer < 0 ? 1e300 : results[i].ratio_to_best_peer))
          results[i].ratio_to_best_peer = results[i].gbps / results[j].gbps, results[i].best_peer = results[j].target;
    }
  };
  for (Place place : {Place::host, Place::device}) {
    const std::vector<int>& sizes = place == Place::host ? plan.host_log2 : plan.device_log2;
    if (sizes.empty() || std::none_of(runners.begin(), runners.end(), [&](const Runner& r) { return r.place == place && !r.peer; }))
      continue;
    const std::size_t max_n = std::size_t(1) << *std::max_element(sizes.begin(), sizes.end());
    Operands ops;
    {
      std::mt19937_64 rng(16);
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      std::vector<double> xd(max_n), yd(max_n);
      for (std::size_t i = 0; i < max_n; ++i) xd[i] = u(rng), yd[i] = u(rng);
      for (DType d : plan.dtypes) ops.fill(d, xd, yd, place == Place::device ? device_ctx : nullptr);
    }
    const double ceiling = place == Place::host ? plan.host_gbps : plan.device_gbps;
    for (DType d : plan.dtypes)
      for (int e : sizes) {
        const std::size_t n = std::size_t(1) << e;
        for (Reduction red : bench::all_reductions) {
          const double want = library(reference, red, d, n, ops.x(d, Place::host), ops.y(d, Place::host), MemorySpace::host);
          const std::size_t first = results.size();
          for (const Runner& run : runners) {
            if (run.place != place || !run.supports(red, d, n)) continue;
            progress.step(std::string("reductions: ") + run.name + " " + bench::to_string(red) + " " + to_string(d) + " " +
                          pretty_n(n));
            ReductionResult x;
            x.reduction = bench::to_string(red), x.target = run.name, x.peer = run.peer, x.reproducible = !run.peer;
            x.place = place, x.dtype = d, x.n = n;
            x.bytes_per_element = static_cast<int>(size_of(d)) * (red == Reduction::dot ? 2 : 1);
            double value = 0;
            const void* xp = ops.x(d, place);
            const void* yp = ops.y(d, place);
            x.seconds = time_calls([&] { return run.run(red, d, n, xp, yp); }, n, plan.reps, value);
            x.gbps = double(x.bytes_per_element) * double(n) / x.seconds.median / 1e9;
            // Peers accumulate 16-bit data in float (what a user writes), f32 in f32.
            const double tolerance = d == DType::f64 ? 1e-9 : is_storage16(d) ? 1e-2 : 1e-3;
            x.verified = run.peer ? std::fabs(value - want) <= tolerance * std::max(1.0, std::fabs(want))
                                  : std::memcmp(&value, &want, sizeof value) == 0;
            if (ceiling > 0) x.pct_of_measured_ceiling = 100.0 * x.gbps / ceiling;
            results.push_back(x);
          }
          rank(first);
        }
        for (ExprReduction red : bench::all_expr_reductions) {
          const Kernel k = expr_kernel(red, d);
          const double want = fused(reference, red, k, d, n, ops.x(d, Place::host), ops.y(d, Place::host), MemorySpace::host);
          const std::size_t first = results.size();
          for (const ExprTarget& t : expr_targets) {
            if (t.place != place || !t.supports(red, d, n)) continue;
            progress.step(std::string("reductions: ") + t.name + " " + bench::to_string(red) + " " + to_string(d) + " " +
                          pretty_n(n));
            ReductionResult x;
            x.reduction = bench::to_string(red), x.target = t.name, x.peer = t.peer;
            // The unfused form is the library's too: the same bits (checked below).
            x.reproducible = !t.peer || t.name.find(" unfused") != std::string::npos;
            x.place = place, x.dtype = d, x.n = n;
            x.bytes_per_element = 2 * static_cast<int>(size_of(d));
            double value = 0;
            const void* a = ops.x(d, place);
            const void* b = ops.y(d, place);
            x.seconds = time_calls([&] { return t.run(red, k, d, n, a, b); }, n, plan.reps, value);
            x.gbps = double(x.bytes_per_element) * double(n) / x.seconds.median / 1e9;
            const double tolerance = d == DType::f64 ? 1e-9 : is_storage16(d) ? 1e-2 : 1e-3;
            x.verified = x.reproducible ? std::memcmp(&value, &want, sizeof value) == 0
                                        : std::fabs(value - want) <= tolerance * std::max(1.0, std::fabs(want));
            if (ceiling > 0) x.pct_of_measured_ceiling = 100.0 * x.gbps / ceiling;
            results.push_back(x);
          }
          rank(first);
        }
      }
  }
  return results;
}

void print_reductions(const Report& r, std::FILE* out) {
  if (r.reductions.empty()) return;
  std::fprintf(out,
               "\nreductions: sum, dot, norm2, and sum((a-b)^2), asum(a*b) over an expression in one pass (peers: the\n"
               "same backend's unfused form, the kernel into a temporary then ew::sum, and a loop computing the\n"
               "expression), with the value on the host after each call; the library's bits are the same on every\n"
               "backend (checked against scalar), the other peers' are not. GB/s count each input read once;\n"
               "'vs peer' is over the fastest peer of the point.\n");
  std::fprintf(out, "\n%-6s %-5s %-5s %-12s %-26s %11s %9s %6s %9s %s\n", "device", "dtype", "n", "op", "target", "time",
               "GB/s", "%ceil", "vs peer", "");
  int unverified = 0;
  for (const ReductionResult& x : r.reductions) {
    if (!x.verified) ++unverified;
    char time[32];
    std::snprintf(time, sizeof time, "%.2f us", x.seconds.median * 1e6);
    char pct[16] = "-", ratio[16] = "";
    if (x.pct_of_measured_ceiling >= 0) std::snprintf(pct, sizeof pct, "%.1f", x.pct_of_measured_ceiling);
    if (x.ratio_to_best_peer > 0) std::snprintf(ratio, sizeof ratio, "%.2fx", x.ratio_to_best_peer);
    std::fprintf(out, "%-6s %-5s %-5s %-12s %-26s %11s %9.1f %6s %9s %s%s\n", to_string(x.place), to_string(x.dtype),
                 pretty_n(x.n).c_str(), x.reduction.c_str(), x.target.c_str(), time, x.gbps, pct, ratio,
                 x.verified ? "" : "NOT VERIFIED", x.seconds.unsteady() ? " unsteady" : "");
  }
  if (unverified) std::fprintf(out, "%d reduction results NOT VERIFIED\n", unverified);
}

}  // namespace ew::roofline
