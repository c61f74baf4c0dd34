// The Highway backend: SIMD kernels chosen per CPU at run time (kernels.cc), spread
// over the cores by the CPU thread team (team.cpp).
#include "backend.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>

#include "ew_internal/backend_impl.hpp"
#include "ew_internal/convert_eval.hpp"
#include "expr.hpp"
#include "kernels.hpp"
#include "reduce.hpp"
#include "team.hpp"

namespace ew::detail {

namespace highway {

namespace {

// Largest cache of cpu0 in sysfs; sysconf where sysfs is missing (some VMs report
// the sum of all L3 slices there, so it comes second); 32 MiB otherwise. Parsing
// never throws: an unexpected sysfs entry is skipped.
std::size_t last_level_cache_bytes() {
  std::size_t best = 0;
  int best_level = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream level_file(dir + "level"), size_file(dir + "size");
    int level = 0;
    unsigned long long bytes = 0;
    char unit = 0;
    if (!(level_file >> level) || !(size_file >> bytes)) continue;
    size_file >> unit;
    if (unit == 'K') bytes <<= 10;
    else if (unit == 'M') bytes <<= 20;
    else if (unit == 'G') bytes <<= 30;
    if (level >= best_level) best_level = level, best = static_cast<std::size_t>(bytes);
  }
  if (best) return best;
#ifdef _SC_LEVEL3_CACHE_SIZE
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0) return static_cast<std::size_t>(l3);
#endif
  return std::size_t(32) << 20;
}

// Streaming stores from an eighth of the last-level cache: that cache is shared by every
// core of the socket (on a VM, with other guests too), and a cold output that size already
// pays a read-for-ownership per line. On a 16-core Xeon VM with a 300 MiB LLC, an add of
// 2^24 floats (64 MiB output) from DRAM ran at 83 GB/s with normal stores, 58 % of the
// ceiling (docs/performance/cpu.md).
Tuning default_tuning() { return {last_level_cache() / 8, default_parallel_threshold_bytes}; }

std::atomic<std::size_t>& streaming_bytes() {
  static std::atomic<std::size_t> bytes{default_tuning().streaming_bytes};
  return bytes;
}
std::atomic<std::size_t> streamed{0};

template <class T>
void run_typed(const OpCall& c, int threads) {
  const T* a = c.a_as<T>();
  const T* b = c.b_as<T>();
  T* out = c.out_as<T>();
  const compute_t<T> s = static_cast<compute_t<T>>(c.s), t = static_cast<compute_t<T>>(c.t);
  // Non-temporal stores save the read-for-ownership of output lines that are not in
  // cache. An output that is also an input (axpy, in-place ops) is read anyway: there
  // they only evict what was just loaded (measured 0.7-0.9x), so they are not used.
  // 16-bit outputs count at f32's size, so they stream from f32's element count: on the
  // 16-core Xeon (300 MiB L3) a 2^24-element f16/bf16 add or triad (32 MiB output) ran
  // 1.3-1.5x faster cold and 1.2-1.6x faster warm with streaming stores (PERFORMANCE.md).
  const bool output_is_read = out == a || out == b;
  const bool stream =
      !output_is_read && c.n * sizeof(compute_t<T>) > streaming_bytes().load(std::memory_order_relaxed);
  if (stream) streamed.fetch_add(1, std::memory_order_relaxed);
  for_each_piece(threads, c.n, out, sizeof(T), [&](std::size_t begin, std::size_t end) {
    run_chunk(c.op, end - begin, a + begin, b ? b + begin : nullptr, out + begin, s, t, stream);
  });
}

}  // namespace

std::size_t last_level_cache() {
  // Read once, on first use: loading the library touches no sysfs.
  static const std::size_t bytes = last_level_cache_bytes();
  return bytes;
}

Tuning tuning() { return {streaming_bytes().load(), parallel_threshold_bytes()}; }

void set_tuning(const Tuning& t) {
  streaming_bytes().store(t.streaming_bytes);
  set_parallel_threshold_bytes(t.parallel_bytes);
}

void reset_tuning() { set_tuning(default_tuning()); }

std::size_t streaming_calls() { return streamed.load(); }

}  // namespace highway

namespace {

int hardware_threads() { return std::max(1, omp_get_num_procs()); }

class HighwayBackend final : public BackendImpl {
 public:
  explicit HighwayBackend(int threads) : threads_(threads > 0 ? threads : hardware_threads()) {}

  void run(const OpCall& call) override {
    dispatch_dtype(call.dtype, [&](auto tag) { highway::run_typed<decltype(tag)>(call, threads_); });
  }
  bool supports(DType) const override { return true; }
  void run_convert(const ConvertCall& c) override {
    const std::size_t in_bytes = size_of(c.from), out_bytes = size_of(c.to);
    highway::for_each_piece(threads_, c.n, c.out, out_bytes, [&](std::size_t begin, std::size_t end) {
      highway::convert_chunk(c.from, c.to, end - begin, static_cast<const char*>(c.in) + begin * in_bytes,
                             static_cast<char*>(c.out) + begin * out_bytes);
    });
  }
  void run_expr(const ExprCall& call) override { highway::run_expr(call, threads_); }
  ReduceResult run_reduce(const ReduceCall& call) override { return highway::run_reduce(call, threads_); }
  void synchronize() override {}
  bool accepts(MemorySpace space) const override { return space != MemorySpace::device; }

 private:
  int threads_;
};

Probe probe() {
  return {true, "",
          "targets: " + highway::compiled_targets() + "; chosen: " + highway::chosen_target() +
              "; threads: " + std::to_string(hardware_threads())};
}

std::unique_ptr<BackendImpl> create(const ContextOptions& options) {
  reject_device_options(options, "highway");
  highway::spin_window_microseconds();
  return std::make_unique<HighwayBackend>(options.threads);
}

}  // namespace

const BackendDescriptor& highway_backend() {
  static const BackendDescriptor d{Backend::highway, &probe, &create, nullptr, nullptr, nullptr};
  return d;
}

}  // namespace ew::detail
