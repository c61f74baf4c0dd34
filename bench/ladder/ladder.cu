// ew-roofline --ladder: every step timed on the same arrays with CUDA events (device
// steps) or the host clock (host-array steps), verified element by element against
// ew::apply on fresh inputs with a poisoned output, and compared with the step before.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ew/ew.hpp"
#include "gpu.hpp"
#include "kernels.cuh"
#include "ladder.hpp"

namespace ew::roofline::ladder {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("ladder: ") + what + ": " + cudaGetErrorName(e));
}
void check(cublasStatus_t e, const char* what) {
  if (e != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string("ladder: ") + what + ": cuBLAS status " + std::to_string(e));
}

int blocks_for(long long threads, int block) { return int((threads + block - 1) / block); }

// Compares out with ew::apply<op> on (a, b) bit for bit.
template <Op op>
bool matches(const float* a, const float* b, const float* out, std::size_t n, float s) {
  for (std::size_t i = 0; i < n; ++i) {
    float ref = apply<op>(a[i], b[i], s, 1.0f);
    if (std::memcmp(&ref, &out[i], sizeof ref) != 0) return false;
  }
  return true;
}

struct PinnedDeleter {
  void operator()(float* p) const { cudaFreeHost(p); }
};
using Pinned = std::unique_ptr<float, PinnedDeleter>;
Pinned pinned(std::size_t n) {
  void* p = nullptr;
  check(cudaMallocHost(&p, n * sizeof(float)), "cudaMallocHost");
  return Pinned(static_cast<float*>(p));
}

struct DeviceArray {
  float* p = nullptr;
  explicit DeviceArray(std::size_t n) { p = static_cast<float*>(gpu::allocate(n * sizeof(float))); }
  ~DeviceArray() { gpu::release(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
};

class Ladder {
 public:
  explicit Ladder(const Settings& s) : s_(s) {}

  void step(const std::string& group, const std::string& name, std::size_t n, double bytes, Stats t, bool ok,
            double pct, std::string note = "") {
    LadderStep st;
    st.group = group, st.name = name, st.n = n, st.seconds = t, st.verified = ok, st.note = std::move(note);
    st.gbps = bytes / t.median / 1e9;
    st.pct_of_ceiling = pct;
    if (!steps_.empty() && steps_.back().group == group && steps_.back().gbps > 0) st.gain = st.gbps / steps_.back().gbps;
    steps_.push_back(st);
  }
  void announce(const std::string& what) {
    if (s_.progress) s_.progress(what);
  }
  std::vector<LadderStep> take() { return std::move(steps_); }
  const Settings& settings() const { return s_; }

  // Median seconds of one call over the settings' repetitions (after one warm-up).
  template <class F>
  Stats device_time(F launch) {
    gpu::time_on_stream(launch);
    std::vector<double> t;
    for (int r = 0; r < s_.reps; ++r) t.push_back(gpu::time_on_stream(launch));
    return summarize(t);
  }
  template <class F>
  Stats host_time(F run, int reps) {
    run();
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      run();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    return summarize(t);
  }

 private:
  Settings s_;
  std::vector<LadderStep> steps_;
};

std::unique_ptr<Context> library_context(std::string& why) {
  BackendStatus st = backend_status(Backend::cuda);
  if (!st.usable) {
    why = "cuda backend not usable: " + st.reason;
    return nullptr;
  }
  ContextOptions o;
  o.stream = gpu::stream();
  return std::make_unique<Context>(Backend::cuda, o);
}

void device_steps(Ladder& L, Context* lib, const std::string& lib_why) {
  const std::size_t n = std::size_t(1) << (L.settings().quick ? 26 : 28);
  const int ni = int(n);
  const double hbm = L.settings().hbm_ceiling_gbps;
  auto pct = [&](double bytes, const Stats& t) { return hbm > 0 ? 100.0 * bytes / t.median / 1e9 / hbm : -1.0; };
  cudaStream_t st = static_cast<cudaStream_t>(gpu::stream());
  const int sms = gpu::query().sms;

  DeviceArray a(n), b(n), c(n);
  gpu::fill(a.p, n, DType::f32, 21);
  gpu::fill(b.p, n, DType::f32, 22);
  std::vector<float> ha(n), hb(n), hc(n);
  gpu::to_host(ha.data(), a.p, n * 4);
  gpu::to_host(hb.data(), b.p, n * 4);

  // c = a + b: poison c, run once, compare; then time.
  const std::string add = "c = a + b, float, device arrays, n = 2^" + std::to_string(L.settings().quick ? 26 : 28);
  auto add_step = [&](const std::string& name, auto launch, std::string note = "") {
    L.announce(name);
    check(cudaMemsetAsync(c.p, 0xFF, n * 4, st), "poison");
    launch();
    check(cudaGetLastError(), name.c_str());
    gpu::to_host(hc.data(), c.p, n * 4);
    bool ok = matches<Op::add>(ha.data(), hb.data(), hc.data(), n, 1.0f);
    Stats t = L.device_time(launch);
    L.step(add, name, n, 12.0 * n, t, ok, pct(12.0 * n, t), std::move(note));
  };
  for (int block : {64, 128, 256, 512, 1024})
    add_step("one element per thread, int index, block " + std::to_string(block),
             [&, block] { add_int_index<<<blocks_for(n, block), block, 0, st>>>(a.p, b.p, c.p, ni); });
  add_step("const __restrict__ (block 256)",
           [&] { add_restrict<<<blocks_for(n, 256), 256, 0, st>>>(a.p, b.p, c.p, ni); });
  add_step("float4 loads with a scalar tail",
           [&] { add_float4<<<blocks_for(n / 4 + n % 4, 256), 256, 0, st>>>(a.p, b.p, c.p, ni); });
  add_step("float4 grid-stride, 4 blocks of 256 per SM",
           [&] { add_float4_grid_stride<<<4 * sms, 256, 0, st>>>(a.p, b.p, c.p, ni); });
  add_step("8 per thread, contiguous runs (non-coalesced)",
           [&] { add_8_contiguous<<<blocks_for(n / per_thread, 256), 256, 0, st>>>(a.p, b.p, c.p, ni); });
  add_step("8 per thread, strided by the block (coalesced)",
           [&] { add_8_coalesced<<<blocks_for(n / per_thread, 256), 256, 0, st>>>(a.p, b.p, c.p, ni); });
  if (lib) {
    add_step("elementwise cuda backend: ew::add", [&] {
      ew::add<float>(*lib, Span<const float>(a.p, n, MemorySpace::device), Span<const float>(b.p, n, MemorySpace::device),
                     Span<float>(c.p, n, MemorySpace::device));
    });
  } else {
    L.announce(lib_why);
  }

  // y = s*x + y with x = a, y = c, y's starting values kept in b: the timed runs keep
  // updating y, so verification restores it and runs once more.
  const float s = 0.75f;
  const std::string saxpy = "saxpy y = s*x + y, float, device arrays";
  cublasHandle_t handle;
  check(cublasCreate(&handle), "cublasCreate");
  check(cublasSetStream(handle, st), "cublasSetStream");
  auto saxpy_step = [&](const std::string& name, auto launch, std::string note = "") {
    L.announce(name);
    check(cudaMemcpyAsync(c.p, b.p, n * 4, cudaMemcpyDeviceToDevice, st), "reset y");
    Stats t = L.device_time(launch);
    check(cudaMemcpyAsync(c.p, b.p, n * 4, cudaMemcpyDeviceToDevice, st), "reset y");
    launch();
    check(cudaGetLastError(), name.c_str());
    gpu::to_host(hc.data(), c.p, n * 4);
    bool ok = matches<Op::axpy>(ha.data(), hb.data(), hc.data(), n, s);
    L.step(saxpy, name, n, 12.0 * n, t, ok, pct(12.0 * n, t), std::move(note));
  };
  saxpy_step("naive, one element per thread", [&] { saxpy_naive<<<blocks_for(n, 256), 256, 0, st>>>(ni, s, a.p, c.p); },
             "nvcc contracts s*x + y to an FMA by default");
  saxpy_step("grid-stride, 4 blocks of 256 per SM", [&] { saxpy_grid_stride<<<4 * sms, 256, 0, st>>>(ni, s, a.p, c.p); });
  saxpy_step("float4 with a scalar tail",
             [&] { saxpy_float4<<<blocks_for(n / 4 + n % 4, 256), 256, 0, st>>>(ni, s, a.p, c.p); });
  saxpy_step("float4 with explicit __fmaf_rn",
             [&] { saxpy_float4_fma<<<blocks_for(n / 4 + n % 4, 256), 256, 0, st>>>(ni, s, a.p, c.p); });
  saxpy_step("cublasSaxpy", [&] { check(cublasSaxpy_64(handle, int64_t(n), &s, a.p, 1, c.p, 1), "cublasSaxpy"); });
  if (lib)
    saxpy_step("elementwise cuda backend: ew::axpy", [&] {
      ew::axpy<float>(*lib, s, Span<const float>(a.p, n, MemorySpace::device), Span<float>(c.p, n, MemorySpace::device));
    });
  cublasDestroy(handle);
}

// c = a + b on arrays in host memory: transfers dominate, so the ceiling is the
// transfer floor max(8n / H2D rate, 4n / D2H rate) measured here with pinned copies.
void host_steps(Ladder& L, Context* lib) {
  const int log2n = L.settings().quick ? 26 : 27;
  const std::size_t n = std::size_t(1) << log2n, bytes = n * 4;
  const int reps = std::min(L.settings().reps, 3);
  const std::string group = "c = a + b, float, host arrays of " + std::to_string(bytes >> 20) + " MiB each";
  cudaStream_t st = static_cast<cudaStream_t>(gpu::stream());
  DeviceArray da(n), db(n), dc(n);

  Pinned pa = pinned(n), pb = pinned(n), pc = pinned(n);
  std::vector<float> va(n), vb(n), vc(n);
  gpu::fill(da.p, n, DType::f32, 31);
  gpu::fill(db.p, n, DType::f32, 32);
  gpu::to_host(pa.get(), da.p, bytes);
  gpu::to_host(pb.get(), db.p, bytes);
  std::memcpy(va.data(), pa.get(), bytes);
  std::memcpy(vb.data(), pb.get(), bytes);

  L.announce("pinned transfer rates");
  Stats h2d = L.host_time([&] {
    check(cudaMemcpyAsync(da.p, pa.get(), bytes, cudaMemcpyHostToDevice, st), "H2D");
    gpu::synchronize();
  }, reps);
  Stats d2h = L.host_time([&] {
    check(cudaMemcpyAsync(pc.get(), dc.p, bytes, cudaMemcpyDeviceToHost, st), "D2H");
    gpu::synchronize();
  }, reps);
  const double floor_s = std::max(2 * h2d.median, d2h.median);
  const std::string rates = "H2D " + std::to_string(int(bytes / h2d.median / 1e9)) + " GB/s, D2H " +
                            std::to_string(int(bytes / d2h.median / 1e9)) + " GB/s: floor " +
                            std::to_string(floor_s * 1e3).substr(0, 5) + " ms";

  auto host_step = [&](const std::string& name, float* out, auto run, std::string note = "") {
    L.announce(name);
    std::memset(out, 0xFF, bytes);
    run();
    bool ok = matches<Op::add>(va.data(), vb.data(), out, n, 1.0f);
    Stats t = L.host_time(run, reps);
    L.step(group, name, n, 12.0 * n, t, ok, 100.0 * floor_s / t.median, std::move(note));
  };
  auto sequential = [&](const float* a, const float* b, float* c) {
    check(cudaMemcpyAsync(da.p, a, bytes, cudaMemcpyHostToDevice, st), "H2D");
    check(cudaMemcpyAsync(db.p, b, bytes, cudaMemcpyHostToDevice, st), "H2D");
    add_float4_grid_stride<<<4 * gpu::query().sms, 256, 0, st>>>(da.p, db.p, dc.p, int(n));
    check(cudaMemcpyAsync(c, dc.p, bytes, cudaMemcpyDeviceToHost, st), "D2H");
    gpu::synchronize();
  };
  host_step("pageable: copy, kernel, copy", vc.data(), [&] { sequential(va.data(), vb.data(), vc.data()); });
  host_step("pinned: copy, kernel, copy", pc.get(), [&] { sequential(pa.get(), pb.get(), pc.get()); },
            "% of the transfer floor (" + rates + ")");

  const std::size_t chunk = std::size_t(1) << 22;
  for (int count : {2, 4, 8}) {
    std::vector<cudaStream_t> streams(count);
    for (auto& s : streams) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    host_step("pinned, chunks of 2^22 over " + std::to_string(count) + " streams", pc.get(), [&] {
      for (std::size_t off = 0, i = 0; off < n; off += chunk, ++i) {
        cudaStream_t s = streams[i % count];
        std::size_t m = std::min(chunk, n - off);
        check(cudaMemcpyAsync(da.p + off, pa.get() + off, m * 4, cudaMemcpyHostToDevice, s), "H2D");
        check(cudaMemcpyAsync(db.p + off, pb.get() + off, m * 4, cudaMemcpyHostToDevice, s), "H2D");
        add_float4_grid_stride<<<gpu::query().sms, 256, 0, s>>>(da.p + off, db.p + off, dc.p + off, int(m));
        check(cudaMemcpyAsync(pc.get() + off, dc.p + off, m * 4, cudaMemcpyDeviceToHost, s), "D2H");
      }
      for (auto& s : streams) check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    });
    for (auto& s : streams) cudaStreamDestroy(s);
  }
  if (lib) {
    host_step("elementwise cuda backend, pinned arrays", pc.get(), [&] {
      ew::add<float>(*lib, Span<const float>(pa.get(), n), Span<const float>(pb.get(), n), Span<float>(pc.get(), n));
      lib->synchronize();
    });
    host_step("elementwise cuda backend, pageable arrays", vc.data(), [&] {
      ew::add<float>(*lib, Span<const float>(va.data(), n), Span<const float>(vb.data(), n), Span<float>(vc.data(), n));
      lib->synchronize();
    });
  }
}

}  // namespace

std::vector<LadderStep> run(const Settings& s) {
  Ladder L(s);
  std::string why;
  std::unique_ptr<Context> lib = library_context(why);
  device_steps(L, lib.get(), why);
  host_steps(L, lib.get());
  std::vector<LadderStep> steps = L.take();
  if (!lib) {
    LadderStep note;
    note.group = "elementwise cuda backend";
    note.name = why;
    steps.push_back(note);
  }
  return steps;
}

}  // namespace ew::roofline::ladder
