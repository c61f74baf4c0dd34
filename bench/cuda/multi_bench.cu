// ew-cuda-multi-bench: add and triad f32 on ew::ShardedBuffer over 1, 2 and 4 GPUs (as many
// as the machine has) in one run: at 2^28 elements per device (weak scaling) and at 2^31
// elements in all (strong scaling), with each rate's ratio to one GPU of the same run.
// Public API only: the one-GPU figure is the same library on a context over device 0.
// A sample is 5 calls back to back, then Context::synchronize() (every device), on the
// host clock; the best of the samples is reported, and the median beside it. Each
// configuration checks a few elements of every shard against the host's result.
//   ew-cuda-multi-bench [--quick] [--csv file]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <ew/ew.hpp>

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "ew-cuda-multi-bench: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr int kCallsPerSample = 5;

// Every shard filled with one byte pattern on its own device and stream.
void fill(ew::Context& ctx, ew::ShardedBuffer<float>& x, unsigned char byte) {
  const std::vector<int> devices = ctx.devices();
  for (int k = 0; k < x.shard_count(); ++k) {
    ew::Context shard = ctx.shard(k);
    check(cudaSetDevice(devices[static_cast<std::size_t>(k)]), "cudaSetDevice");
    check(cudaMemsetAsync(x.shard(k).data, byte, x.shard(k).bytes(), static_cast<cudaStream_t>(shard.native_stream())),
          "cudaMemsetAsync");
  }
  ctx.synchronize();
}

float pattern(unsigned char byte) {
  unsigned bits = byte * 0x01010101u;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// The first, middle and last element of every shard must be the host's result.
bool verify(ew::ShardedBuffer<float>& c, float expected) {
  for (int k = 0; k < c.shard_count(); ++k) {
    const ew::Span<float> s = c.shard(k);
    for (std::size_t i : {std::size_t(0), s.size / 2, s.size - 1}) {
      if (s.size == 0) continue;
      float got = 0;
      check(cudaMemcpy(&got, s.data + i, sizeof got, cudaMemcpyDefault), "cudaMemcpy");
      if (std::memcmp(&got, &expected, sizeof got) != 0) {
        std::fprintf(stderr, "shard %d element %zu: %a, expected %a\n", k, i, got, expected);
        return false;
      }
    }
  }
  return true;
}

struct Row {
  std::string op, size;
  int gpus;
  std::size_t n;
  double best_ms, median_ms, gbps;
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  const char* csv = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) quick = true;
    else if (!std::strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    else {
      std::fprintf(stderr, "usage: ew-cuda-multi-bench [--quick] [--csv file]\n");
      return 2;
    }
  }
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("ew-cuda-multi-bench: %d x %s; f32, %d calls per sample, best (median) of %d samples\n", count,
              prop.name, kCallsPerSample, quick ? 5 : 20);
  const int samples = quick ? 5 : 20;
  std::vector<int> configs;
  for (int g : {1, 2, 4})
    if (g <= count) configs.push_back(g);

  std::vector<Row> rows;
  std::map<std::string, double> one_gpu;  // op + size -> GB/s on one GPU
  bool ok = true;
  std::printf("%-6s %-16s %4s %12s %10s %10s %9s %8s\n", "op", "size", "gpus", "n", "best ms", "median ms", "GB/s",
              "vs 1 GPU");
  for (int g : configs) {
    ew::ContextOptions o;
    for (int d = 0; d < g; ++d) o.devices.push_back(d);
    ew::Context ctx(ew::Backend::cuda, o);
    const std::pair<const char*, std::size_t> sizes[] = {{"2^28 per device", (std::size_t(1) << 28) * g},
                                                         {"2^31 in all", std::size_t(1) << 31}};
    for (const auto& [label, n] : sizes) {
      ew::ShardedBuffer<float> a(ctx, n), b(ctx, n), c(ctx, n);
      fill(ctx, a, 0x3f);
      fill(ctx, b, 0x40);
      for (const char* op : {"add", "triad"}) {
        const bool is_add = !std::strcmp(op, "add");
        const auto call = [&] {
          if (is_add)
            ew::add<float>(ctx, a, b, c);
          else
            ew::triad<float>(ctx, a, 0.5f, b, c);
        };
        fill(ctx, c, 0xff);  // NaN: the check below sees only what the op wrote
        call();
        ctx.synchronize();
        const float expected = is_add ? pattern(0x3f) + pattern(0x40) : std::fma(0.5f, pattern(0x40), pattern(0x3f));
        if (!verify(c, expected)) {
          std::fprintf(stderr, "%s on %d GPU(s), %s: WRONG RESULT\n", op, g, label);
          ok = false;
        }
        std::vector<double> ms;
        for (int s = 0; s < samples; ++s) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int r = 0; r < kCallsPerSample; ++r) call();
          ctx.synchronize();
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                       kCallsPerSample);
        }
        std::sort(ms.begin(), ms.end());
        const double gbps = 12.0 * static_cast<double>(n) / (ms.front() * 1e-3) / 1e9;
        const std::string key = std::string(op) + label;
        if (g == 1) one_gpu[key] = gbps;
        const double ratio = one_gpu.count(key) ? gbps / one_gpu[key] : 0.0;
        rows.push_back({op, label, g, n, ms.front(), ms[ms.size() / 2], gbps});
        std::printf("%-6s %-16s %4d %12zu %10.3f %10.3f %9.1f %7.3fx\n", op, label, g, n, ms.front(), ms[ms.size() / 2],
                    gbps, ratio);
        std::fflush(stdout);
      }
    }
  }
  if (csv) {
    if (FILE* f = std::fopen(csv, "w")) {
      std::fprintf(f, "op,size,gpus,n,best_ms,median_ms,gbps,ratio_to_1gpu\n");
      for (const Row& r : rows)
        std::fprintf(f, "%s,%s,%d,%zu,%.4f,%.4f,%.1f,%.4f\n", r.op.c_str(), r.size.c_str(), r.gpus, r.n, r.best_ms,
                     r.median_ms, r.gbps, r.gbps / one_gpu[r.op + r.size]);
      std::fclose(f);
    }
  }
  return ok ? 0 : 1;
}
