// The cuda backend: a context binds one device and one stream (its own, or the
// caller's); ops are enqueued on that stream and synchronize() waits for them.
// Device-resident operands (device or managed memory) go straight to the kernels;
// any host-resident operand sends the op through the chunked transfer pipeline.
// The CUDA runtime is linked statically, so on a machine without a driver the library
// loads and the probe reports why this backend is unusable.
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <cuda_runtime.h>

#include "architectures.hpp"
#include "cuda_error.hpp"
#include "expr.hpp"
#include "expr_reduce.hpp"
#include "fault_injection.hpp"
#include "ew_internal/backend_impl.hpp"
#include "kernels.hpp"
#include "memory.hpp"
#include "pipeline.hpp"
#include "reduce.hpp"
#include "thread_context.hpp"

namespace ew::detail {

namespace {

using namespace cuda;

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// ContextOptions::device, else EW_DEVICE, else 0; an index outside the machine's
// devices is invalid_argument.
int choose_device(const ContextOptions& o) {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  const int device = std::max(0, requested_device(o));
  if (device >= count)
    throw Error(Errc::invalid_argument, std::string("cuda: ") + (o.device >= 0 ? "ContextOptions::device" : "EW_DEVICE") +
                                            " = " + std::to_string(device) + " but this machine has " +
                                            std::to_string(count) + " CUDA device(s)");
  return device;
}

// The errors that say this build has no kernel code the device can run (any other is the
// device's or the context's, reported as such).
bool no_code_for_device(cudaError_t e) {
  return e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidKernelImage || e == cudaErrorUnsupportedPtxVersion ||
         e == cudaErrorInvalidPtx || e == cudaErrorJitCompilerNotFound || e == cudaErrorJitCompilationDisabled;
}

cudaError_t malloc_device(void** p, std::size_t bytes) { return cudaMalloc(p, bytes); }
cudaError_t malloc_pinned(void** p, std::size_t bytes) { return cudaMallocHost(p, bytes); }
cudaError_t malloc_managed(void** p, std::size_t bytes) { return cudaMallocManaged(p, bytes, cudaMemAttachGlobal); }

class CudaBackend final : public BackendImpl {
 public:
  explicit CudaBackend(const ContextOptions& o)
      : device_pool_(&malloc_device, &cudaFree, "cudaMalloc"),
        pinned_pool_(&malloc_pinned, &cudaFreeHost, "cudaMallocHost"),
        managed_pool_(&malloc_managed, &cudaFree, "cudaMallocManaged") {
    if (o.staging_bytes != 0 && (o.staging_bytes < kMinStagingBytes || o.staging_bytes > kMaxStagingBytes))
      throw Error(Errc::invalid_argument, "ContextOptions::staging_bytes must be 0 (the default, 96 MiB) or " +
                                              std::to_string(kMinStagingBytes) + " to " +
                                              std::to_string(kMaxStagingBytes) + " bytes (1 TiB)");
    staging_bytes_ = o.staging_bytes ? o.staging_bytes : kDefaultStagingBytes;
    copy_threads_ = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
    if (o.stream && !is_default_stream_handle(o.stream)) {
      // A borrowed stream names its device; an explicit device must agree with it.
      check(cudaStreamGetDevice(static_cast<cudaStream_t>(o.stream), &device_), "cudaStreamGetDevice");
      if (o.device >= 0 && o.device != device_)
        throw Error(Errc::invalid_argument, "cuda: ContextOptions::device = " + std::to_string(o.device) +
                                                " but ContextOptions::stream belongs to device " + std::to_string(device_));
    } else {
      device_ = choose_device(o);
    }
    gpu_.emplace(device_, o.stream, "cuda");
    const ContextScope scope(gpu_->get(), "cuda");
    check(cudaDeviceGetAttribute(&shape_.sm_count, cudaDevAttrMultiProcessorCount, device_),
          "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&major_, cudaDevAttrComputeCapabilityMajor, device_), "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&minor_, cudaDevAttrComputeCapabilityMinor, device_), "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&l2_bytes_, cudaDevAttrL2CacheSize, device_), "cudaDeviceGetAttribute");
    int clock_khz = 0, bus_bits = 0;
    check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device_), "cudaDeviceGetAttribute");
    check(cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device_), "cudaDeviceGetAttribute");
    shape_.memory_bytes_per_second = 2.0 * clock_khz * 1e3 * bus_bits / 8;  // two transfers a clock over the bus
    // The product's kernels as the driver loads them for this device: a build without code
    // for it runs an older architecture's, launched as on that architecture.
    int arch = 0;
    const cudaError_t e = kernel_architecture(arch);
    if (no_code_for_device(e))
      throw Error(Errc::backend_unavailable, "cuda: this build has no kernel code that runs on sm_" +
                                                 std::to_string(major_) + std::to_string(minor_) + " (" + describe(e) +
                                                 "); rebuild with CMAKE_CUDA_ARCHITECTURES including " +
                                                 std::to_string(major_) + std::to_string(minor_));
    check(e, "cudaFuncGetAttributes");
    shape_.major = std::min(major_, arch / 10);
    if (o.stream) {
      stream_ = static_cast<cudaStream_t>(o.stream);
    } else {
      check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      owns_stream_ = true;
    }
  }

  ~CudaBackend() override {
    destruction_.emplace(gpu_->get());
    // Errors of its own are cleared, not one the application has yet to read. The runtime keeps
    // one last error: where the application has one pending and a call below fails (a sticky
    // error, a driver shutting down), the application reads that failure instead of its own.
    const bool application_error = cudaPeekAtLastError() != cudaSuccess;
    cudaStreamSynchronize(stream_);
    pipeline_.reset();
    expr_reducer_.reset();
    reducer_.reset();
    expr_.reset();
    device_pool_.release_cached();
    pinned_pool_.release_cached();
    managed_pool_.release_cached();
    if (owns_stream_) cudaStreamDestroy(stream_);
    if (!application_error) cudaGetLastError();
  }

  void run(const OpCall& c) override {
    guarded([&] {
      if (is_host(c.a_space) || (c.b && is_host(c.b_space)) || is_host(c.out_space))
        pipeline().run(c, stream_, shape_);
      else
        check(fault_point(Step::kernel_launch,
                          [&] { return launch(c.op, c.dtype, c.n, c.a, c.b, c.out, c.s, c.t, shape_, stream_); }),
              "kernel launch");
    });
  }

  // f16 and bf16 run through the same kernels (8 elements per 16-byte vector, computed in
  // float, rounded once: storage16.cuh).
  bool supports(DType) const override { return true; }

  // ew::convert: a kernel over device, managed or pinned memory (kernels read pinned
  // memory where it is); the same dtype copies the bytes. Pageable memory is refused, as
  // reductions refuse it: staged through the GPU it would cross the bus twice, while a CPU
  // backend converts it where it is.
  void run_convert(const ConvertCall& c) override {
    const auto refuse = [&](const char* operand) {
      throw Error(Errc::foreign_memory, std::string("ew::convert: ") + operand +
                                            " is pageable host memory; the cuda backend converts device, managed or "
                                            "pinned memory (an ew::Buffer of this context, or MemorySpace::pinned)");
    };
    if (c.in_space == MemorySpace::host) refuse("in");
    if (c.out_space == MemorySpace::host) refuse("out");
    guarded([&] {
      if (c.from == c.to) {
        if (c.in != c.out)
          check(cudaMemcpyAsync(c.out, c.in, c.n * size_of(c.from), cudaMemcpyDefault, stream_),
                "cudaMemcpyAsync (ew::convert)");
        return;
      }
      check(fault_point(Step::kernel_launch,
                        [&] { return launch_convert(c.from, c.to, c.n, c.in, c.out, shape_, stream_); }),
            "kernel launch (ew::convert)");
    });
  }

  // Expressions: a kernel generated, compiled and cached for each program (expr.hpp).
  void run_expr(const ExprCall& c) override {
    guarded([&] { expr_runner().run(c, stream_); });
  }

  // Reductions: one kernel on the plan's tree (reduce.cu); the result comes back to the
  // host. Kernels read device, managed and pinned memory; pageable memory is refused
  // rather than copied (a copy would cost more than the reduction).
  ReduceResult run_reduce(const ReduceCall& c) override {
    const auto refuse = [&](const char* operand) {
      throw Error(Errc::foreign_memory, std::string(c.call) + ": " + operand +
                                            " is pageable host memory; the cuda backend reduces device, managed or "
                                            "pinned memory");
    };
    if (c.x_space == MemorySpace::host) refuse("x");
    if (c.y && c.y_space == MemorySpace::host) refuse("y");
    if (c.result && c.result_space == MemorySpace::host) refuse("result");
    ReduceResult r;
    guarded([&] {
      if (!reducer_) reducer_ = std::make_unique<Reducer>();
      r = reducer_->run(c, stream_, shape_);
    });
    return r;
  }

  // Reductions over an expression (expr_reduce.hpp): one fused generated kernel and one wait
  // for inputs in device or managed memory; pinned inputs chunk by chunk through the
  // expression path's staging (a wait per chunk) into L2-sized scratch, each chunk reduced
  // there. Pageable inputs are refused as run_reduce refuses them.
  bool run_expr_reduce(const ExprCall& c, const char* call, plan::Kind kind, double* root) override {
    for (int k = 0; k < max_expr_inputs; ++k)
      if (c.inputs[k] && c.input_space[k] == MemorySpace::host)
        throw Error(Errc::foreign_memory, std::string(call) + ": input " + std::to_string(k) +
                                              " is pageable host memory; the cuda backend reduces device, managed or "
                                              "pinned memory");
    guarded([&] {
      ExprRunner& expr = expr_runner();
      if (!reducer_) reducer_ = std::make_unique<Reducer>();
      if (!expr_reducer_) expr_reducer_ = std::make_unique<ExprReducer>(static_cast<std::size_t>(l2_bytes_));
      *root = expr_reducer_->run(c, call, kind, expr, *reducer_, stream_, shape_);
    });
    return true;
  }

  void synchronize() override {
    guarded([&] {
      check(fault_point(Step::sync, [&] { return cudaStreamSynchronize(stream_); }), "cudaStreamSynchronize");
    });
  }

  bool accepts(MemorySpace) const override { return true; }
  // Reduction kernels write device, managed or pinned memory, not pageable (run_reduce).
  bool stores_results_in(MemorySpace space) const override { return space != MemorySpace::host; }
  MemorySpace native_space() const override { return MemorySpace::device; }

  void* allocate(std::size_t bytes, MemorySpace space) override {
    void* p = nullptr;
    guarded([&] {
      switch (space) {
        case MemorySpace::device: p = device_pool_.allocate(bytes); break;
        case MemorySpace::pinned: p = pinned_pool_.allocate(bytes); break;
        case MemorySpace::managed: p = managed_pool_.allocate(bytes); break;
        default: p = BackendImpl::allocate(bytes, space);
      }
    });
    return p;
  }

  void deallocate(void* p, MemorySpace space) noexcept override {
    // Pinned and managed blocks go back to the pool only once the context's queued work is
    // done: the next Buffer that takes one may be written by the host directly, while an op
    // (a pinned pipeline, a kernel on managed memory) would still read it. A device block is
    // only touched in the stream's order.
    if (space == MemorySpace::pinned || space == MemorySpace::managed) wait_idle();
    // In this context's GPU: a pool frees a block at once when it has no host memory to
    // cache it by.
    const ContextScope scope(gpu_->get());
    switch (space) {
      case MemorySpace::device: device_pool_.deallocate(p); break;
      case MemorySpace::pinned: pinned_pool_.deallocate(p); break;
      case MemorySpace::managed: managed_pool_.deallocate(p); break;
      default: BackendImpl::deallocate(p, space);
    }
  }

  // A sticky error stays with the device for the next call; any other is cleared, so that
  // the thread's next launch, of any context, does not take it for its own.
  void wait_idle() noexcept override {
    const ContextScope scope(gpu_->get());
    if (cudaStreamSynchronize(stream_) != cudaSuccess) (void)cudaGetLastError();
  }

  void copy_bytes(void* dst, const void* src, std::size_t bytes) override {
    guarded([&] {
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize after a copy");
    });
  }

  // Device, managed or pinned memory (the spaces it stores results in), all in the device's
  // address space: one memset on the stream, no wait.
  void zero_bytes(void* dst, std::size_t bytes) override {
    guarded([&] { check(cudaMemsetAsync(dst, 0, bytes, stream_), "cudaMemsetAsync"); });
  }

  int device() const override { return device_; }
  void* native_stream() const override { return stream_; }

 private:
  static bool is_host(MemorySpace s) { return s == MemorySpace::host || s == MemorySpace::pinned; }

  // Runs f with this context's GPU current (its primary context, or a borrowed stream's own), the
  // thread's own context current again after. A sticky error makes every later call of this context fail at once
  // with the first message.
  template <class F>
  void guarded(F&& f) {
    if (!fatal_.empty()) throw Error(Errc::device_fatal, fatal_);
    const ContextScope scope(gpu_->get(), "cuda");
    try {
      f();
    } catch (const Error& e) {
      if (e.code() == Errc::device_fatal) fatal_ = e.what();
      throw;
    }
  }

  ExprRunner& expr_runner() {
    if (!expr_) {
      // Generated code is compiled for the device's own architecture.
      expr_ = std::make_unique<ExprRunner>(shape_.sm_count, major_, minor_, shape_.memory_bytes_per_second,
                                           staging_bytes_);
    }
    return *expr_;
  }

  HostPipeline& pipeline() {
    if (!pipeline_) pipeline_ = std::make_unique<HostPipeline>(staging_bytes_, copy_threads_);
    return *pipeline_;
  }

  // Declared first, so destroyed last: the context the calls run in, held while the backend
  // lives, and current from the destructor's first line until the members below are gone
  // (whatever they free as they go); the thread's own context is given back after.
  std::optional<GpuContext> gpu_;
  std::optional<ContextScope> destruction_;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  bool owns_stream_ = false;
  LaunchShape shape_;
  int major_ = 0, minor_ = 0;  // the device's compute capability (shape_.major: its kernels')
  int l2_bytes_ = 0;
  std::string fatal_;
  std::size_t staging_bytes_ = 0;
  int copy_threads_ = 1;
  CachingAllocator device_pool_, pinned_pool_, managed_pool_;
  std::unique_ptr<HostPipeline> pipeline_;
  std::unique_ptr<ExprRunner> expr_;
  std::unique_ptr<Reducer> reducer_;
  std::unique_ptr<ExprReducer> expr_reducer_;
};

Probe probe() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    cudaGetLastError();
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    std::string why = e == cudaErrorNoDevice             ? "no CUDA device"
                      : e == cudaErrorInsufficientDriver ? "no CUDA driver, or one older than the CUDA " +
                                                               version_string(runtime) + " runtime"
                                                         : "CUDA cannot start";
    return {false, why + " (cudaGetDeviceCount: " + describe(e) + ")", ""};
  }
  if (count == 0) return {false, "no CUDA device", ""};
  int driver = 0;
  cudaDriverGetVersion(&driver);
  cudaDeviceProp prop{};
  if ((e = cudaGetDeviceProperties(&prop, 0)) != cudaSuccess) {
    cudaGetLastError();
    return {false, "device 0 cannot be queried (cudaGetDeviceProperties: " + describe(e) + ")", ""};
  }
  // Which of the build's code each GPU runs, from the architectures it was compiled for
  // (architectures.hpp: no CUDA context is made, which would cost every process device
  // memory). A build with code for none of them could serve no context: not usable, so that
  // the automatic choice passes it over, though it still tells device memory from host.
  const std::string sm = std::to_string(prop.major) + std::to_string(prop.minor);
  const int arch = architecture_run_on(EW_CUDA_ARCHITECTURES, prop.major, prop.minor);
  bool some_device_runs = arch != 0;
  std::string lacking = "sm_" + sm + " (device 0, " + prop.name + ")";
  for (int d = 1; d < count; ++d) {
    cudaDeviceProp other{};
    if (cudaGetDeviceProperties(&other, d) != cudaSuccess) {
      cudaGetLastError();
      continue;
    }
    if (architecture_run_on(EW_CUDA_ARCHITECTURES, other.major, other.minor) != 0) some_device_runs = true;
    else lacking += ", sm_" + std::to_string(other.major) + std::to_string(other.minor) + " (device " + std::to_string(d) + ")";
  }
  if (!some_device_runs)
    return {false,
            "this build has no kernel code that runs on " + lacking + ": it holds " + EW_CUDA_ARCHITECTURES +
                "; rebuild with CMAKE_CUDA_ARCHITECTURES including " + sm,
            "", true};
  std::string detail = std::string(prop.name) + ", sm_" + sm + ", " + std::to_string(prop.multiProcessorCount) +
                       " SMs, driver " + version_string(driver);
  if (count > 1) detail += " (device 0 of " + std::to_string(count) + ")";
  if (arch > 0) detail += ", kernels as sm_" + std::to_string(arch);
  if (arch > 0 && arch != prop.major * 10 + prop.minor) detail += " (this build has none for sm_" + sm + ")";
  if (arch == 0) detail += ", no kernel code for device 0 in this build";
  return {true, "", detail};
}

std::unique_ptr<BackendImpl> create(const ContextOptions& options) { return std::make_unique<CudaBackend>(options); }

PointerLocation classify(const void* p) { return cuda::locate(p); }  // memory.hpp

}  // namespace

const BackendDescriptor& cuda_backend() {
  static const BackendDescriptor d{Backend::cuda, &probe, &create, &classify, nullptr, nullptr};
  return d;
}

}  // namespace ew::detail
