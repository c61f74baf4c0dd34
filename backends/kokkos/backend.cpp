// The Kokkos backend: every op on Kokkos' default execution space, whatever the
// user's Kokkos was built for. Host spaces (Serial, OpenMP, Threads) run synchronously
// on host memory; Cuda runs asynchronously on the context's stream, on device or
// managed memory. Other device spaces (HIP, SYCL) are reported as unsupported.
#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>

#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "expr.hpp"
#include "kernels.hpp"
#include "reduce.hpp"
#include "runtime.hpp"

namespace ew::detail {

namespace kokkos {

namespace {

using Exec = Kokkos::DefaultExecutionSpace;
constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, Exec::memory_space>::accessible;
#ifdef KOKKOS_ENABLE_CUDA
constexpr bool on_cuda = std::is_same_v<Exec, Kokkos::Cuda>;
#else
constexpr bool on_cuda = false;
#endif

std::string space_name() { return Exec::name(); }

// Kokkos reports failures (a failed launch, a sticky CUDA error found by a fence) as
// std::exception; the library reports Error.
template <class F>
void guarded(const char* what, F&& f) {
  try {
    f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(Errc::device_error, std::string("kokkos backend: ") + what + ": " + e.what());
  }
}

#ifdef KOKKOS_ENABLE_CUDA
// The context's stream: the caller's, or one the context creates and destroys.
class Stream {
 public:
  Stream(const ContextOptions& options, CUcontext kokkos_gpu)
      : stream_(static_cast<cudaStream_t>(options.stream)), kokkos_gpu_(kokkos_gpu) {
    if (stream_) return;
    const KokkosDeviceScope on_kokkos_gpu(kokkos_gpu, "kokkos backend");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    owned_ = true;
  }
  ~Stream() {
    if (!owned_) return;
    const KokkosDeviceScope on_kokkos_gpu(kokkos_gpu_);  // also where the backend's constructor failed
    cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_;
  CUcontext kokkos_gpu_;
  bool owned_ = false;
};

PointerLocation classify(const void* p) {
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, p) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  switch (attributes.type) {
    case cudaMemoryTypeDevice: return {MemorySpace::device, attributes.device};
    case cudaMemoryTypeManaged: return {MemorySpace::managed, -1};
    case cudaMemoryTypeHost: return {MemorySpace::pinned, -1};
    default: return {};
  }
}
#endif

// Options that the running Kokkos cannot honour (its threads and GPU are fixed when it starts).
void check_options(const ContextOptions& options) {
  const int threads = Exec().concurrency();
  if (on_host && options.threads > 0 && options.threads != threads)
    throw Error(Errc::invalid_argument, "ContextOptions::threads = " + std::to_string(options.threads) + ", but Kokkos " +
                                            space_name() + " already runs " + std::to_string(threads) +
                                            " threads (its thread count is fixed when Kokkos is initialized)");
#ifdef KOKKOS_ENABLE_CUDA
  const int wanted = requested_device(options);
  const int device = Kokkos::Cuda().cuda_device();
  if (on_cuda && wanted >= 0 && wanted != device)
    throw Error(Errc::invalid_argument, "device " + std::to_string(wanted) + " requested, but Kokkos runs on device " +
                                            std::to_string(device) + " (fixed when Kokkos is initialized)");
  if (on_cuda) check_borrowed_stream(options.stream, device);
#endif
}

ContextOptions initialization_options(ContextOptions options) {
#ifdef KOKKOS_ENABLE_CUDA
  options.device = requested_device(options);
#endif
  return options;
}

class KokkosBackend final : public BackendImpl {
 public:
  explicit KokkosBackend([[maybe_unused]] const ContextOptions& options)
      :
#ifdef KOKKOS_ENABLE_CUDA
        gpu_(Kokkos::Cuda().cuda_device(), nullptr, "kokkos backend"),
        stream_(options, gpu_.get()),
#endif
        exec_(make_exec())
#ifdef KOKKOS_ENABLE_CUDA
        ,
        queue_(gpu_.get(), stream_.get())
#endif
  {
  }

#ifdef KOKKOS_ENABLE_CUDA
  ~KokkosBackend() override { destruction_.emplace(gpu_.get()); }
#endif

  void run(const OpCall& c) override {
    on_device("an op's kernel", [&] {
      dispatch_dtype(c.dtype, [&](auto tag) { kokkos::run<decltype(tag)>(exec_, c); });
    });
  }
  bool supports(DType) const override { return true; }
  void run_convert(const ConvertCall& c) override {
    on_device("a conversion's kernel", [&] { kokkos::convert(exec_, c); });
  }

  void run_expr(const ExprCall& call) override {
#ifdef KOKKOS_ENABLE_CUDA
    on_device("an expression's kernel", [&] { kokkos::run_expr(exec_, call, queue_.counters()); });
#else
    on_device("an expression's kernel", [&] { kokkos::run_expr(exec_, call); });
#endif
  }

  ReduceResult run_reduce(const ReduceCall& call) override {
    ReduceResult r;
    on_device("a reduction", [&] { r = kokkos::run_reduce(exec_, call, reduce_scratch_); });
    return r;
  }

  void synchronize() override {
    on_device("fence", [&] {
      exec_.fence();
#ifdef KOKKOS_ENABLE_CUDA
      check_cuda(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize");
#endif
    });
  }

  bool accepts(MemorySpace space) const override {
    if (on_host) return space != MemorySpace::device;
    return space == MemorySpace::device || space == MemorySpace::managed;
  }

  MemorySpace native_space() const override { return on_host ? MemorySpace::host : MemorySpace::device; }

#ifdef KOKKOS_ENABLE_CUDA
  void* allocate(std::size_t bytes, MemorySpace space) override {
    if (on_host) return BackendImpl::allocate(bytes, space);
    if (bytes == 0) return nullptr;
    void* p = nullptr;
    const KokkosDeviceScope on_kokkos_gpu(gpu_.get(), "kokkos backend");
    cudaError_t e = space == MemorySpace::managed ? cudaMallocManaged(&p, bytes) : cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::out_of_memory, std::string("kokkos backend: allocation of ") + std::to_string(bytes) + " bytes of " +
                                           to_string(space) + " memory: " + cudaGetErrorString(e));
    }
    return p;
  }

  void deallocate(void* p, MemorySpace space) noexcept override {
    if (on_host) return BackendImpl::deallocate(p, space);
    const KokkosDeviceScope on_kokkos_gpu(gpu_.get());
    if (p && cudaFree(p) != cudaSuccess) cudaGetLastError();
  }

  void copy_bytes(void* dst, const void* src, std::size_t bytes) override {
    if (on_host) return BackendImpl::copy_bytes(dst, src, bytes);
    if (!bytes) return;
    const KokkosDeviceScope on_kokkos_gpu(gpu_.get(), "kokkos backend");
    check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_.get()), "cudaMemcpyAsync");
    check_cuda(cudaStreamSynchronize(stream_.get()), "cudaStreamSynchronize");
  }

  int device() const override { return on_cuda ? exec_.cuda_device() : -1; }
  void* native_stream() const override { return on_cuda ? static_cast<void*>(stream_.get()) : nullptr; }
#endif

 private:
  // Runs f on the context's GPU (on Cuda), the calling thread's own context current again after.
  // Kokkos' launches return no status: one that failed (its kernel never ran, its output
  // unwritten) is reported here, from the library runtime's last error (check_launches).
  template <class F>
  void on_device(const char* what, F&& f) {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (on_cuda) {
      const KokkosDeviceScope on_kokkos_gpu(gpu_.get(), "kokkos backend");
      const cudaError_t pending = cudaPeekAtLastError();
      guarded(what, f);
      check_launches(pending, what);
      return;
    }
#endif
    guarded(what, f);
  }

  Exec make_exec() const {
#ifdef KOKKOS_ENABLE_CUDA
    if constexpr (on_cuda) {
      // With Kokkos' GPU current: an instance starts in its stream's context (cuStreamGetCtx),
      // which for the default streams' handles is the thread's current one, and create() runs
      // with none. The context Kokkos pushes and never pops goes with the scope.
      const KokkosDeviceScope on_kokkos_gpu(gpu_.get(), "kokkos backend");
      return Kokkos::Cuda(stream_.get());  // one instance per context, reused
    }
#endif
    return Exec();
  }

#ifdef KOKKOS_ENABLE_CUDA
  // Declared first, so destroyed last: Kokkos' GPU's primary context, held while the context
  // lives, and made current while the members below are destroyed (they free memory and
  // destroy the stream and the instance, which sets Kokkos' GPU current); the thread's own
  // context and device are given back after.
  GpuContext gpu_;
  std::optional<KokkosDeviceScope> destruction_;
  Stream stream_;  // declared before exec_: the instance goes first, then the stream
#endif
  Exec exec_;
#ifdef KOKKOS_ENABLE_CUDA
  WalkQueue queue_;  // after exec_, whose device it is made on; used on the context's stream alone
#endif
  kokkos::ReduceScratch reduce_scratch_;  // the reductions' (on Cuda), used on the context's stream alone
};

Probe probe() {
  const std::string what = version() + ", " + space_name();
  if (!on_host && !on_cuda)
    return {false, what + ": this backend runs Kokkos' host spaces and Cuda, not " + space_name(), ""};
#ifdef KOKKOS_ENABLE_CUDA
  if (on_cuda) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return {false, what + ": no usable GPU (" + cudaGetErrorString(e) + ")", ""};
    }
    if (count == 0) return {false, what + ": no GPU", ""};
    return {true, "", what + ", " + std::to_string(count) + " GPU(s)"};
  }
#endif
  return {true, "", what};
}

std::unique_ptr<BackendImpl> create(const ContextOptions& options) {
  // Refused before Kokkos is initialized: initializing fixes its thread count for the process.
  if (on_host) reject_device_options(options, "kokkos");
#ifdef KOKKOS_ENABLE_CUDA
  // Kokkos' initialization and its instance's start set Kokkos' GPU current and push its
  // context without popping it.
  std::optional<ContextStackScope> thread_context;
  if constexpr (on_cuda) thread_context.emplace(nullptr);
#endif
  acquire(initialization_options(options));
  check_options(options);
  std::unique_ptr<BackendImpl> impl;
  guarded("context", [&] { impl = std::make_unique<KokkosBackend>(options); });
  return impl;
}

}  // namespace

}  // namespace kokkos

const BackendDescriptor& kokkos_backend() {
#ifdef KOKKOS_ENABLE_CUDA
  constexpr auto classify = kokkos::on_cuda ? &kokkos::classify : nullptr;
#else
  constexpr PointerLocation (*classify)(const void*) = nullptr;
#endif
  static const BackendDescriptor d{Backend::kokkos, &kokkos::probe, &kokkos::create, classify, &kokkos::release,
                                   &kokkos::lost};
  return d;
}

}  // namespace ew::detail
