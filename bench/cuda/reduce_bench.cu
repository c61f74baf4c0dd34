// ew-cuda-reduce-bench: the cuda backend's reductions (ew/reduce.hpp) next to
// cub::DeviceReduce (Sum; TransformReduce for dot and the sum of squares) and cuBLAS
// (cublasSdot/Ddot, cublasSnrm2/Dnrm2), on device memory, every call ending with its
// result on the host (the library's calls do; cub's result is copied back, cuBLAS's
// host pointer mode waits for it), and the library once more with its value copied back
// after the kernel instead of written by it into mapped pinned memory. GB/s counts every
// input read once. Each figure is the
// median of --reps calls after a warm-up, each method's calls back to back. The ratio
// columns are the library over cub and over cuBLAS. cub's and cuBLAS's sums are not
// reproducible (their trees depend on the GPU and the version); the library's are.
//
// --device-result: every method writes its value into device memory instead (the library's
// result-span form, cub into its output pointer, cuBLAS in device pointer mode, and the
// non-reproducible "atomic" variant of bench/reduce_peers.hpp) and nothing waits between
// calls: each figure is the median over --reps batches of 20 calls back to back, timed
// with CUDA events on the stream, divided by 20. That is the form a solver uses between
// kernels, and the fair one at small sizes, where bringing the value to the host costs
// each method the same ~20 us and hides the kernels. The library runs as it is
// (programmatic dependent launch on sm_90+), with plain launches, and with each of its two
// sum kernels forced (the register kernel; the staged one with rings of 2 and 3 pieces, and
// with units of 8 and 32 plan blocks; with a ring of one piece, as two CUDA blocks an SM and
// as one, the f32 sum's default where the memory is fast an SM).
//
// --sweep: the cuda kernel's tunings (backends/cuda/reduce.hpp: lanes per thread, loads
// in flight, run size, grid cap), in the device-result form, for f32/f64 sum and dot at
// 2^20, 2^24 and 2^28 (or --sizes), next to cub, cuBLAS and the atomic variant in the same
// run; every tuning's value must have the default's bits (exit 1 otherwise).
//
// --cold (with --device-result): each call of a batch reads other copies of the arrays than the
// calls just before it, at least three L2 sizes away, so that no method finds its operands in
// L2 from an earlier call (back to back on one array, what stays in L2 depends on each
// method's reading order once the arrays are near the L2's size, 2^24..2^25 of f32).
//
// --extrema: min_element and max_element (value and index to the host after every call, as the
// library returns them) next to cub::DeviceReduce::ArgMin / ArgMax, f32 and f64 (f16 and bf16:
// the library's backends alone; the peer here is built for f32 and f64); GB/s counts the array
// read once. Each size has its single extremes far into the array: every method must return
// their indices, and the library's backends the data's bits there as the value (exit 1
// otherwise; the data hold no NaN, where the rules differ). Where the library has kokkos on
// this GPU (a Kokkos built for Cuda), kokkos is timed beside.
// --only LIST: the reductions (sum, dot, norm2) and dtypes (f32, f64) named in the comma-separated
// LIST (a kind of name left out: all of that kind), e.g. --only sum,f32 for a profiler's run.
// --timeline: the bench kernels of reduce_peers.cu (grid-stride and staged, atomic and ordered
// finishes) in timed forms, each warp and CUDA block writing the GPU's %globaltimer at fixed
// points of 40 calls back to back: when the reads end, SM by SM, and how long the finish takes
// after them (sum and dot at 2^24..2^26 by default; bench/reduce_peers.hpp, Timeline).
//   ew-cuda-reduce-bench [--sizes 20..28] [--reps 30] [--csv FILE] [--only LIST] [--device-result [--cold] | --sweep | --extrema | --timeline]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include <cstring>

#include "event_timer.hpp"
#include "ew/ew.hpp"
#include "reduce.hpp"  // backends/cuda: the tuning hook (internal, not public API)
#include "reduce_peers.hpp"

namespace {

using ew::bench::check;
using ew::bench::EventTimer;
using ew::bench::Reduction;
using What = Reduction;
const char* name(What w) { return ew::bench::to_string(w); }

struct Row {
  std::string method;
  double seconds, value;
};

template <class T>
void run(ew::Context& ctx, What w, std::size_t n, int reps, const T* x, const T* y, FILE* csv) {
  const ew::Span<const T> xs(x, n, ew::MemorySpace::device), ys(y, n, ew::MemorySpace::device);
  std::vector<std::pair<std::string, std::function<double()>>> methods;
  methods.emplace_back("ew cuda", [&] {
    return w == What::sum ? ew::sum<T>(ctx, xs) : w == What::dot ? ew::dot<T>(ctx, xs, ys) : ew::norm2<T>(ctx, xs);
  });
  for (const ew::bench::ReducePeer& p : ew::bench::cuda_reduce_peers())
    if (p.supports(w, ew::dtype_v<T>, n))
      methods.emplace_back(p.name, [&ctx, p, w, n, x, y] { return p.run(w, ew::dtype_v<T>, n, x, y, ctx.native_stream()); });
  // The library with its value copied back after the kernel (as before the kernel wrote it into
  // mapped pinned memory): what that copy costs a call, in the same run.
  methods.emplace_back("ew cuda (copied back)", [&] {
    ew::detail::cuda::ReduceTuning copied;
    copied.mapped_result = -1;
    ew::detail::cuda::set_reduce_tuning(copied);
    const double v = methods[0].second();
    ew::detail::cuda::set_reduce_tuning({});
    return v;
  });
  std::vector<Row> rows;
  for (auto& [label, call] : methods) {
    double value = call();
    std::vector<double> seconds;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      value = call();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    rows.push_back({label, seconds[seconds.size() / 2], value});
  }
  const double bytes = static_cast<double>(n) * sizeof(T) * (w == What::dot ? 2 : 1);
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  double cub = 0, cublas = 0;
  for (const Row& r : rows) {
    if (r.method == "cub::DeviceReduce") cub = r.seconds;
    if (r.method == "cublas dot/nrm2") cublas = r.seconds;
  }
  for (const Row& r : rows) {
    std::printf("%-5s %s 2^%-2d %-21s %9.1f GB/s %9.2f us  %5.2fx cub", name(w), dtype, __builtin_ctzll(n),
                r.method.c_str(), bytes / r.seconds / 1e9, r.seconds * 1e6, cub / r.seconds);
    if (cublas > 0) std::printf("  %5.2fx cublas", cublas / r.seconds);
    std::printf("  value %.9g\n", r.value);
    if (csv)
      std::fprintf(csv, "%s,%s,%zu,%s,host-result,%.6e,%.3f,%.17g,\n", name(w), dtype, n, r.method.c_str(), r.seconds,
                   bytes / r.seconds / 1e9, r.value);
  }
  std::fflush(stdout);
}

constexpr int batch = 20;

// Median seconds per call of `enqueue` (which queues one call on `stream`), batches of 20
// back to back between two events.
double time_enqueued(const std::function<void()>& enqueue, cudaStream_t stream, int reps) {
  EventTimer timer(stream);
  for (int i = 0; i < 3; ++i) enqueue();  // warm-up: workspaces, cuBLAS, caches
  std::vector<double> seconds;
  for (int r = 0; r < reps; ++r) seconds.push_back(timer.seconds_per_call(enqueue, batch));
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

struct Timed {
  std::string method;
  double seconds;
  double value;
  bool same_bits;  // as the default tuning (tunings only)
  bool tuning;
};

// The library's call in its device-result form.
template <class T>
void ew_enqueue(ew::Context& ctx, What w, const ew::Span<const T>& xs, const ew::Span<const T>& ys, T* result) {
  const ew::Span<T> r(result, 1, ew::MemorySpace::device);
  if (w == What::sum) ew::sum<T>(ctx, xs, r);
  else if (w == What::dot) ew::dot<T>(ctx, xs, ys, r);
  else ew::norm2<T>(ctx, xs, r);
}

template <class T>
T read_result(const T* result, cudaStream_t stream) {
  T v{};
  check(cudaMemcpyAsync(&v, result, sizeof(T), cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return v;
}

void print_timed(const std::vector<Timed>& rows, What w, const char* dtype, std::size_t n, double bytes, FILE* csv,
                 const char* form) {
  double cub = 0, cublas = 0, ours = rows.front().seconds;
  for (const Timed& r : rows) {
    if (r.method == "cub::DeviceReduce") cub = r.seconds;
    if (r.method == "cublas dot/nrm2") cublas = r.seconds;
  }
  for (const Timed& r : rows) {
    std::printf("%-5s %s 2^%-2d %-34s %9.1f GB/s %9.2f us  %5.2fx cub", name(w), dtype, __builtin_ctzll(n),
                r.method.c_str(), bytes / r.seconds / 1e9, r.seconds * 1e6, cub > 0 ? cub / r.seconds : 0.0);
    if (cublas > 0) std::printf("  %5.2fx cublas", cublas / r.seconds);
    std::printf("  %5.2fx default", ours / r.seconds);
    std::printf("  value %.17g%s\n", r.value, r.tuning ? (r.same_bits ? "  same bits" : "  DIFFERENT BITS") : "");
    if (csv)
      std::fprintf(csv, "%s,%s,%zu,%s,%s,%.6e,%.3f,%.17g,%s\n", name(w), dtype, n, r.method.c_str(), form, r.seconds,
                   bytes / r.seconds / 1e9, r.value, r.tuning ? (r.same_bits ? "same" : "DIFFERENT") : "");
  }
  std::fflush(stdout);
}

// The library (default tuning, or each of `tunings`) and the device peers, device-result form.
// `copies` copies of x and y lie one after the other, n elements apart; call k reads copy
// k % copies (1: every call reads the same arrays).
template <class T>
bool run_device(ew::Context& ctx, What w, std::size_t n, int reps, const T* x, const T* y, std::size_t copies,
                T* result, FILE* csv, const std::vector<std::pair<std::string, ew::detail::cuda::ReduceTuning>>& tunings,
                const char* form) {
  namespace tune = ew::detail::cuda;
  const auto stream = static_cast<cudaStream_t>(ctx.native_stream());
  std::size_t call = 0;
  const auto next = [&] { return (call++ % copies) * n; };
  std::vector<Timed> rows;
  tune::set_reduce_tuning({});
  const auto ours = [&] {
    const std::size_t at = next();
    ew_enqueue<T>(ctx, w, ew::Span<const T>(x + at, n, ew::MemorySpace::device),
                  ew::Span<const T>(y + at, n, ew::MemorySpace::device), result);
  };
  double seconds = time_enqueued(ours, stream, reps);
  const T reference = read_result(result, stream);
  rows.push_back({"ew cuda (default)", seconds, static_cast<double>(reference), true, true});
  bool same = true;
  for (const auto& [label, t] : tunings) {
    tune::set_reduce_tuning(t);
    seconds = time_enqueued(ours, stream, reps);
    const T v = read_result(result, stream);
    const bool bits = std::memcmp(&v, &reference, sizeof(T)) == 0;
    same &= bits;
    rows.push_back({"ew cuda " + label, seconds, static_cast<double>(v), bits, true});
  }
  tune::set_reduce_tuning({});
  for (const ew::bench::DeviceReducePeer& p : ew::bench::cuda_reduce_device_peers())
    if (p.supports(w, ew::dtype_v<T>, n)) {
      seconds = time_enqueued(
          [&] {
            const std::size_t at = next();
            p.enqueue(w, ew::dtype_v<T>, n, x + at, y + at, result, stream);
          },
          stream, reps);
      rows.push_back({p.name, seconds, static_cast<double>(read_result(result, stream)), false, false});
    }
  const double bytes = static_cast<double>(n) * sizeof(T) * (w == What::dot ? 2 : 1);
  print_timed(rows, w, sizeof(T) == 4 ? "f32" : "f64", n, bytes, csv, form);
  return same;
}

// The tunings the sweep measures, all on the register kernel (its shapes, run sizes and grid
// caps; the staged kernel has its own rows in the device-result form): every built shape on
// the default grid rule, then the default shape with other run sizes and grid caps.
template <class T>
std::vector<std::pair<std::string, ew::detail::cuda::ReduceTuning>> sweep_tunings(What w, std::size_t n, int sm_count) {
  namespace tune = ew::detail::cuda;
  using ew::detail::plan::Kind;
  std::vector<std::pair<std::string, tune::ReduceTuning>> out;
  std::size_t count = 0;
  const tune::ReduceShape* shapes = tune::reduce_shapes(&count);
  // The default shape (the memory's peak, 0 here, moves only the staged kernel, which these tunings leave off).
  const tune::ReduceTuning d = tune::default_reduce_tuning(
      w == What::sum ? Kind::sum : w == What::dot ? Kind::dot : Kind::norm2, ew::dtype_v<T>, n, sm_count, 0.0);
  for (std::size_t i = 0; i < count; ++i) {
    if (shapes[i].lanes_per_thread * sizeof(T) > 16) continue;  // vectors of at most 16 bytes
    tune::ReduceTuning t;
    t.staged = -1;
    t.lanes_per_thread = shapes[i].lanes_per_thread;
    t.loads = shapes[i].loads;
    out.emplace_back(std::to_string(t.lanes_per_thread) + " lanes x " + std::to_string(t.loads) + " loads", t);
  }
  const std::string shape = std::to_string(d.lanes_per_thread) + "x" + std::to_string(d.loads);
  for (int runs : {8, 16, 32, 64}) {
    tune::ReduceTuning t;
    t.staged = -1;
    t.lanes_per_thread = d.lanes_per_thread, t.loads = d.loads, t.runs_per_sm = runs;
    out.emplace_back(shape + " runs/SM " + std::to_string(runs), t);
  }
  for (int ctas : {1, 2, 4}) {
    tune::ReduceTuning t;
    t.staged = -1;
    t.lanes_per_thread = d.lanes_per_thread, t.loads = d.loads, t.ctas_per_sm = ctas;
    out.emplace_back(shape + " grid " + std::to_string(ctas) + " CTA/SM", t);
  }
  return out;
}

// Copies of an n-element array, one after the other, so that the ones read just before a
// call span three L2 sizes (1 when the array alone does).
std::size_t cold_copies(std::size_t bytes, std::size_t l2_bytes) {
  return std::max<std::size_t>(1, (3 * l2_bytes + bytes - 1) / bytes);
}

// The reductions a run measures (--only; every one by default).
struct Only {
  bool sum = true, dot = true, norm2 = true;
  bool has(What w) const { return w == What::sum ? sum : w == What::dot ? dot : norm2; }
};

template <class T>
bool sweep(ew::Context& ctx, const std::vector<int>& exponents, int reps, FILE* csv, bool device_result, bool tunings,
           bool cold, const Only& only) {
  int sm_count = 0, device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute");
  std::size_t pool = 0;
  for (int e : exponents) {
    const std::size_t n = std::size_t(1) << e;
    pool = std::max(pool, n * (cold ? cold_copies(n * sizeof(T), std::size_t(l2)) : 1));
  }
  ew::Buffer<T> x(ctx, pool), y(ctx, pool), result(ctx, 1);
  // The whole pool uploaded (Buffer::upload takes the buffer's size; the cold copies of a
  // smaller size may need more room than the largest size alone).
  std::vector<T> host(pool);
  for (std::size_t i = 0; i < pool; ++i) host[i] = static_cast<T>((i * 2654435761u % 1000) * 0.001 - 0.5);
  x.upload(host.data(), pool);
  for (std::size_t i = 0; i < pool; ++i) host[i] = static_cast<T>((i * 40503u % 1000) * 0.001 - 0.25);
  y.upload(host.data(), pool);
  bool same = true;
  for (int e : exponents) {
    const std::size_t n = std::size_t(1) << e;
    const std::size_t copies = cold ? cold_copies(n * sizeof(T), std::size_t(l2)) : 1;
    for (std::size_t c = 1; c < copies; ++c) {  // every copy holds the first n elements: the same value each call
      check(cudaMemcpy(x.data() + c * n, x.data(), n * sizeof(T), cudaMemcpyDeviceToDevice), "cudaMemcpy");
      check(cudaMemcpy(y.data() + c * n, y.data(), n * sizeof(T), cudaMemcpyDeviceToDevice), "cudaMemcpy");
    }
    for (What w : ew::bench::all_reductions) {
      if ((tunings && w == What::norm2) || !only.has(w)) continue;
      if (tunings) {
        same &= run_device<T>(ctx, w, n, reps, x.data(), y.data(), copies, result.data(), csv,
                              sweep_tunings<T>(w, n, sm_count), "sweep");
      } else if (device_result) {
        // The default's one launch setting beside it: plain launches instead of programmatic
        // dependent ones (what the launch gap between back-to-back calls costs); and both
        // kernels of the sums at every size, the staged one with rings of 1, 2 and 3 pieces.
        ew::detail::cuda::ReduceTuning plain, registers, staged1, staged1_one, staged2, staged3, run1, run4;
        plain.dependent_launch = -1;
        registers.staged = -1;
        staged1.staged = staged1_one.staged = staged2.staged = staged3.staged = run1.staged = run4.staged = 1;
        staged1.stage_slots = staged1_one.stage_slots = 1;
        staged1.stage_ctas_per_sm = -1;  // as many CUDA blocks an SM as fit (two)
        staged1_one.stage_ctas_per_sm = 1;
        staged2.stage_slots = 2;
        staged3.stage_slots = 3;
        run1.stage_run = 1;
        run4.stage_run = 4;
        same &= run_device<T>(ctx, w, n, reps, x.data(), y.data(), copies, result.data(), csv,
                              {{"(plain launches)", plain},
                               {"(register kernel)", registers},
                               {"(staged, 2 slots)", staged2},
                               {"(staged, 3 slots)", staged3},
                               {"(staged, 1 slot)", staged1},
                               {"(staged, 1 slot, 1 block an SM)", staged1_one},
                               {"(staged, units of 8)", run1},
                               {"(staged, units of 32)", run4}},
                              copies > 1 ? "device-result-cold" : "device-result");
      } else {
        run<T>(ctx, w, n, reps, x.data(), y.data(), csv);
      }
    }
  }
  return same;
}

// min_element and max_element against cub's ArgMin / ArgMax, host form (steady_clock per
// call, the median of `reps`). Values in [-0.5, 0.5) repeat; each size's prefix has its own
// single smallest and largest element, far into it (at 7/10 and 6/10 of it: past the half, so
// that the next size's, larger, lie beyond it), whose indices both methods must find. Returns
// false when they do not.
// `kokkos`: a kokkos context on this GPU (a Kokkos built for Cuda), measured beside, or null.
template <class T>
bool extrema(ew::Context& ctx, ew::Context* kokkos, const std::vector<int>& exponents, int reps, FILE* csv) {
  std::size_t max_n = 0;
  for (int e : exponents) max_n = std::max(max_n, std::size_t(1) << e);
  ew::Buffer<T> x(ctx, max_n);
  std::vector<T> host(max_n);
  for (std::size_t i = 0; i < max_n; ++i) host[i] = static_cast<T>((i * 2654435761u % 1000003) * 1e-6 - 0.5);
  const auto lowest_at = [](std::size_t n) { return n / 10 * 7 + 3; };
  const auto highest_at = [](std::size_t n) { return n / 10 * 6 + 1; };
  for (int e : exponents) {  // a larger size's extremes beat every smaller size's
    const std::size_t n = std::size_t(1) << e;
    host[lowest_at(n)] = static_cast<T>(-1 - e / 64.0);
    host[highest_at(n)] = static_cast<T>(1 + e / 64.0);
  }
  x.upload(host.data(), max_n);
  bool agree = true;
  const char* dtype = ew::to_string(ew::dtype_v<T>);
  const bool cub_has_it = sizeof(T) >= 4;  // the peer is built for f32 and f64
  const auto median = [reps](const std::function<void()>& call) {
    call();
    std::vector<double> seconds;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      call();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(seconds.begin(), seconds.end());
    return seconds[seconds.size() / 2];
  };
  for (int e : exponents) {
    const std::size_t n = std::size_t(1) << e;
    const ew::Span<const T> xs(x.data(), n, ew::MemorySpace::device);
    for (bool is_min : {true, false}) {
      ew::Extremum<T> ours{};
      ew::bench::ValueIndex theirs{};
      const double t_ours = median([&] { ours = is_min ? ew::min_element<T>(ctx, xs) : ew::max_element<T>(ctx, xs); });
      const double t_cub = cub_has_it ? median([&] {
        theirs = ew::bench::cub_extremum(is_min, ew::dtype_v<T>, n, x.data(), ctx.native_stream());
      }) : std::nan("");
      ew::Extremum<T> kk{};
      const double t_kk = kokkos ? median([&] {
        kk = is_min ? ew::min_element<T>(*kokkos, xs) : ew::max_element<T>(*kokkos, xs);
      }) : 0.0;
      const char* what = is_min ? "min" : "max";
      const std::size_t want = is_min ? lowest_at(n) : highest_at(n);
      // Every method's index; the library's values bit for bit the data's at that index.
      std::string wrong;
      const auto holds_want = [&](const ew::Extremum<T>& r) {
        return r.index == want && std::memcmp(&r.value, &host[want], sizeof(T)) == 0;
      };
      if (!holds_want(ours))
        wrong += " ew " + std::to_string(ours.index) + " value " + std::to_string(static_cast<double>(ours.value));
      if (cub_has_it && theirs.index != want) wrong += " cub " + std::to_string(theirs.index);
      if (kokkos && !holds_want(kk))
        wrong += " kokkos " + std::to_string(kk.index) + " value " + std::to_string(static_cast<double>(kk.value));
      if (!wrong.empty()) {
        std::printf("%-5s %s 2^%-2d MISMATCH, expected index %zu:%s\n", what, dtype, e, want, wrong.c_str());
        agree = false;
      }
      const double bytes = static_cast<double>(n) * sizeof(T);
      // The time over cub's ("-" where cub has no such data).
      const auto vs_cub = [&](double t) {
        char text[16] = "   -  ";
        if (cub_has_it) std::snprintf(text, sizeof text, "%5.2fx", t_cub / t);
        return std::string(text);
      };
      std::printf("%-5s %-4s 2^%-2d %-34s %9.1f GB/s %9.2f us  %s cub  value %.9g index %zu\n", what, dtype, e,
                  "ew cuda", bytes / t_ours / 1e9, t_ours * 1e6, vs_cub(t_ours).c_str(), static_cast<double>(ours.value),
                  ours.index);
      if (kokkos)
        std::printf("%-5s %-4s 2^%-2d %-34s %9.1f GB/s %9.2f us  %s cub  %5.2fx ew cuda  index %zu\n", what, dtype, e,
                    "ew kokkos", bytes / t_kk / 1e9, t_kk * 1e6, vs_cub(t_kk).c_str(), t_ours / t_kk, kk.index);
      if (cub_has_it)
        std::printf("%-5s %-4s 2^%-2d %-34s %9.1f GB/s %9.2f us  %5.2fx cub  value %.9g index %zu\n", what, dtype, e,
                    "cub::DeviceReduce::ArgMin/ArgMax", bytes / t_cub / 1e9, t_cub * 1e6, 1.0, theirs.value,
                    theirs.index);
      if (csv) {
        std::fprintf(csv, "%s,%s,%zu,ew cuda,host-result,%.6e,%.3f,%.17g,\n", what, dtype, n, t_ours,
                     bytes / t_ours / 1e9, static_cast<double>(ours.value));
        if (cub_has_it)
          std::fprintf(csv, "%s,%s,%zu,cub::DeviceReduce::ArgMin/ArgMax,host-result,%.6e,%.3f,%.17g,\n", what, dtype,
                       n, t_cub, bytes / t_cub / 1e9, theirs.value);
        if (kokkos)
          std::fprintf(csv, "%s,%s,%zu,ew kokkos,host-result,%.6e,%.3f,%.17g,\n", what, dtype, n, t_kk,
                       bytes / t_kk / 1e9, static_cast<double>(kk.value));
      }
      std::fflush(stdout);
    }
  }
  return agree;
}

// --timeline: where a call's time goes, from the timed bench kernels' stamps (Timeline). Per
// call, from the first warp's start t0: when the warps' reads and adds are done (median, 90th
// percentile, last), the SMs' (an SM's last warp) at the 10th percentile and the median, the
// share of SM time idle before the last warp is done, the last warp's adds after its last piece
// landed (staged kernels), then the finish: the last counter answered, the value written, and
// the gap from the call before's value to t0 and the period between values. Medians over the
// calls (the first, whose call before was not timed, left out), in microseconds.
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

template <class T>
void timeline(ew::Context& ctx, const std::vector<int>& exponents, const Only& only, FILE* csv) {
  using ew::bench::Timeline;
  const auto stream = static_cast<cudaStream_t>(ctx.native_stream());
  const std::size_t max_n = std::size_t(1) << *std::max_element(exponents.begin(), exponents.end());
  ew::Buffer<T> x(ctx, max_n), y(ctx, max_n), result(ctx, 1);
  std::vector<T> host(max_n);
  for (std::size_t i = 0; i < max_n; ++i) host[i] = static_cast<T>((i * 2654435761u % 1000) * 0.001 - 0.5);
  x.upload(host.data(), max_n);
  y.upload(host.data(), max_n);
  const char* dtype = sizeof(T) == 4 ? "f32" : "f64";
  constexpr int calls = 40;
  for (int e : exponents)
    for (What w : {What::sum, What::dot}) {
      if (!only.has(w)) continue;
      const std::size_t n = std::size_t(1) << e;
      for (const std::string& kernel : ew::bench::cuda_reduce_timeline_kernels()) {
        Timeline t;
        try {
          t = ew::bench::cuda_reduce_timeline(kernel, w, ew::dtype_v<T>, n, x.data(), y.data(), result.data(), stream,
                                              calls);
        } catch (const std::invalid_argument& refused) {  // a staged kernel on a GPU before sm_90
          std::printf("%-5s %s 2^%-2d %-38s skipped: %s\n", name(w), dtype, e, kernel.c_str(), refused.what());
          continue;
        }
        const auto at = [&](int call, unsigned cta, int slot) {
          return t.stamps[(std::size_t(call) * t.ctas + cta) * Timeline::slots + slot];
        };
        const auto result_of = [&](int call) {
          unsigned long long r = 0;
          for (unsigned b = 0; b < t.ctas; ++b) r = std::max(r, at(call, b, Timeline::result));
          return r;
        };
        std::vector<std::vector<double>> m(11);
        unsigned long long tick = ~0ull;
        for (int c = 1; c < t.calls; ++c) {
          unsigned long long t0 = ~0ull, arrived = 0;
          std::vector<unsigned long long> all;
          std::vector<double> done;
          std::map<unsigned long long, unsigned long long> sm_done;
          unsigned long long last_done = 0, last_landed = 0;
          for (unsigned b = 0; b < t.ctas; ++b) {
            for (int wi = 0; wi < Timeline::warps; ++wi) {
              const unsigned long long s0 = at(c, b, Timeline::warp_start + wi), d = at(c, b, Timeline::warp_done + wi);
              if (!s0 || !d) continue;
              t0 = std::min(t0, s0);
              all.push_back(s0), all.push_back(d);
              auto& sd = sm_done[at(c, b, Timeline::sm)];
              sd = std::max(sd, d);
              if (d > last_done) last_done = d, last_landed = at(c, b, Timeline::warp_landed + wi);
            }
            arrived = std::max(arrived, at(c, b, Timeline::arrived));
          }
          const unsigned long long end = result_of(c), before = result_of(c - 1);
          for (unsigned b = 0; b < t.ctas; ++b)
            for (int wi = 0; wi < Timeline::warps; ++wi)
              if (at(c, b, Timeline::warp_done + wi)) done.push_back(1e-3 * double(at(c, b, Timeline::warp_done + wi) - t0));
          std::vector<double> sms;
          double idle = 0;
          for (const auto& [sm, d] : sm_done) sms.push_back(1e-3 * double(d - t0)), idle += double(last_done - d);
          std::sort(all.begin(), all.end());
          for (std::size_t i = 1; i < all.size(); ++i)
            if (all[i] > all[i - 1]) tick = std::min(tick, all[i] - all[i - 1]);
          const double span = 1e-3 * double(last_done - t0);
          m[0].push_back(percentile(done, 0.5));
          m[1].push_back(percentile(done, 0.9));
          m[2].push_back(span);
          m[3].push_back(percentile(sms, 0.1));
          m[4].push_back(percentile(sms, 0.5));
          m[5].push_back(sms.empty() || span <= 0 ? 0.0 : 1e-3 * idle / (double(sms.size()) * span));
          m[6].push_back(last_landed ? 1e-3 * double(last_done - last_landed) : 0.0);
          m[7].push_back(1e-3 * (double(arrived) - double(last_done)));
          m[8].push_back(1e-3 * (double(end) - double(arrived)));
          m[9].push_back(1e-3 * (double(t0) - double(before)));
          m[10].push_back(1e-3 * double(end - before));
        }
        std::printf("%-5s %s 2^%-2d %-38s grid %4u | done p50 %6.2f p90 %6.2f last %6.2f | SMs p10 %6.2f p50 %6.2f "
                    "idle %4.1f %% | last adds %5.2f | arrived +%5.2f value +%5.2f | gap %5.2f period %6.2f us"
                    " (tick %llu ns)\n",
                    name(w), dtype, e, kernel.c_str(), t.ctas, percentile(m[0], 0.5), percentile(m[1], 0.5),
                    percentile(m[2], 0.5), percentile(m[3], 0.5), percentile(m[4], 0.5), 100 * percentile(m[5], 0.5),
                    percentile(m[6], 0.5), percentile(m[7], 0.5), percentile(m[8], 0.5), percentile(m[9], 0.5),
                    percentile(m[10], 0.5), tick);
        if (csv)
          for (int c = 0; c + 1 < t.calls; ++c) {
            std::fprintf(csv, "%s,%s,%zu,%s,%d", name(w), dtype, n, kernel.c_str(), c + 1);
            for (const auto& v : m) std::fprintf(csv, ",%.4f", v[c]);
            std::fprintf(csv, "\n");
          }
        std::fflush(stdout);
      }
    }
}

// --only LIST into `only`, f32 and f64; false for a name that is none of those.
bool only_list(const std::string& list, Only& only, bool& f32, bool& f64) {
  bool sum = false, dot = false, norm2 = false, f32_named = false, f64_named = false;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    const std::string name = list.substr(at, end - at);
    if (name == "sum") sum = true;
    else if (name == "dot") dot = true;
    else if (name == "norm2") norm2 = true;
    else if (name == "f32") f32_named = true;
    else if (name == "f64") f64_named = true;
    else return false;
    at = end + 1;
  }
  if (sum || dot || norm2) only = {sum, dot, norm2};
  f32 = f32_named || !f64_named;
  f64 = f64_named || !f32_named;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  int lo = 20, hi = 28, reps = 30;
  bool device_result = false, tunings = false, sizes_given = false, cold = false, extremes = false, timed = false;
  bool f32 = true, f64 = true;
  Only only;
  const char* csv_path = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--sizes" && i + 1 < argc && std::sscanf(argv[i + 1], "%d..%d", &lo, &hi) == 2 && lo >= 0 && hi <= 31 && lo <= hi) {
      ++i, sizes_given = true;
    } else if (a == "--reps" && i + 1 < argc && (reps = std::atoi(argv[i + 1])) > 0) {
      ++i;
    } else if (a == "--csv" && i + 1 < argc) {
      csv_path = argv[++i];
    } else if (a == "--device-result") {
      device_result = true;
    } else if (a == "--sweep") {
      tunings = true;
    } else if (a == "--cold") {
      cold = true;
    } else if (a == "--extrema") {
      extremes = true;
    } else if (a == "--timeline") {
      timed = true;
    } else if (a == "--only" && i + 1 < argc && only_list(argv[i + 1], only, f32, f64)) {
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: ew-cuda-reduce-bench [--sizes LO..HI (log2, 0..31)] [--reps N] [--csv FILE] "
                   "[--only sum,dot,norm2,f32,f64] [--device-result [--cold] | --sweep | --extrema | --timeline]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (timed && (tunings || device_result || extremes || cold)) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: --timeline runs alone\n");
    return 2;
  }
  if (extremes && (tunings || device_result)) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: --extrema runs alone\n");
    return 2;
  }
  if (extremes && lo < 4) {  // each size's extremes lie at 6/10 and 7/10 of it
    std::fprintf(stderr, "ew-cuda-reduce-bench: --extrema takes sizes from 2^4\n");
    return 2;
  }
  if (extremes && (!only.sum || !only.dot || !only.norm2 || !f32 || !f64)) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: --extrema measures min and max of every dtype; --only does not apply\n");
    return 2;
  }
  if (tunings && !only.sum && !only.dot) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: --sweep measures sum and dot\n");
    return 2;
  }
  if (cold && (tunings || !device_result)) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: --cold goes with --device-result\n");
    return 2;
  }
  std::vector<int> exponents;
  if (tunings && !sizes_given) exponents = {20, 24, 28};
  else if (timed && !sizes_given) exponents = {24, 25, 26};
  else
    for (int e = lo; e <= hi; ++e) exponents.push_back(e);
  try {
    ew::Context ctx(ew::Backend::cuda);
    std::printf("ew-cuda-reduce-bench: %s\n", ew::backend_status(ew::Backend::cuda).detail.c_str());
    if (extremes) {
      std::printf("form: min_element / max_element, value and index on the host after every call\n");
      FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
      if (csv) std::fprintf(csv, "reduction,dtype,n,method,form,seconds,gbps,value,bits_vs_default\n");
      // Kokkos on this GPU (a Kokkos built for Cuda), measured beside: its contexts read device memory.
      std::unique_ptr<ew::Context> kokkos;
      if (ew::backend_status(ew::Backend::kokkos).usable) {
        kokkos = std::make_unique<ew::Context>(ew::Backend::kokkos);
        if (kokkos->device() != ctx.device()) kokkos.reset();
        else std::printf("kokkos: %s\n", ew::backend_status(ew::Backend::kokkos).detail.c_str());
      }
      bool agree = extrema<float>(ctx, kokkos.get(), exponents, reps, csv);
      agree &= extrema<double>(ctx, kokkos.get(), exponents, reps, csv);
      agree &= extrema<ew::half>(ctx, kokkos.get(), exponents, reps, csv);
      agree &= extrema<ew::bfloat16>(ctx, kokkos.get(), exponents, reps, csv);
      if (csv) std::fclose(csv);
      return agree ? 0 : 1;
    }
    if (timed) {
      std::printf("form: --timeline, 40 calls back to back a kernel, the GPU's %%globaltimer at fixed points\n");
      FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
      if (csv)
        std::fprintf(csv, "reduction,dtype,n,kernel,call,done_p50_us,done_p90_us,done_last_us,sm_p10_us,sm_p50_us,"
                          "sm_idle_share,last_adds_us,arrived_us,value_us,gap_us,period_us\n");
      if (f32) timeline<float>(ctx, exponents, only, csv);
      if (f64) timeline<double>(ctx, exponents, only, csv);
      if (csv) std::fclose(csv);
      return 0;
    }
    std::printf("form: %s\n", tunings ? "sweep of the kernel's tunings, device-resident results, batches of 20 calls"
                              : device_result && cold ? "device-resident results, batches of 20 calls timed with CUDA "
                                                        "events, each call on copies of the arrays away from L2"
                              : device_result ? "device-resident results, batches of 20 calls timed with CUDA events"
                                              : "value on the host after every call, steady_clock per call");
    FILE* csv = csv_path ? std::fopen(csv_path, "w") : nullptr;
    if (csv) std::fprintf(csv, "reduction,dtype,n,method,form,seconds,gbps,value,bits_vs_default\n");
    bool same = !f32 || sweep<float>(ctx, exponents, reps, csv, device_result, tunings, cold, only);
    if (f64) same &= sweep<double>(ctx, exponents, reps, csv, device_result, tunings, cold, only);
    if (csv) std::fclose(csv);
    if (!same) {
      std::fprintf(stderr, "ew-cuda-reduce-bench: a tuning gave other bits than the default\n");
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ew-cuda-reduce-bench: %s\n", e.what());
    return 1;
  }
}
