#pragma once
// The calling thread's CUDA context, given back exactly as the application left it. Both GPU
// backends (cuda, and kokkos on Cuda) run each call with their context current (their GPU's
// primary context; on cuda, a borrowed stream's own) and then make current again the context
// the thread had: the same one, or none.
//
// Why contexts and not devices (cudaGetDevice / cudaSetDevice): since CUDA 12, cudaSetDevice
// creates the primary context of the GPU it names, and a thread that has not used CUDA yet
// reports GPU 0 as its device. Giving such a thread "its" GPU 0 back made a context there
// (about half a GiB) in every process whose GPU is not 0: every MPI rank but one on a node.
// It also replaced a context the application made itself (driver API) with a primary one.
// A context made current through the driver is what every runtime call of the thread uses
// (the runtime's "Interactions with the CUDA Driver API"), so nothing else needs to change.
//
// Header-only, so that the kokkos backend, built with or without the cuda backend, shares it.
#include <cuda.h>  // the driver's types only: its functions come from cudaGetDriverEntryPoint*
#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "ew/error.hpp"

namespace ew::detail::cuda {

// A driver function by its name, as of the CUDA 12.0 ABI, from the runtime (the library does
// not link libcuda, which a machine without a driver lacks); null where the runtime cannot
// hand it out.
inline void* driver_function(const char* name) noexcept {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t e = cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t e = cudaGetDriverEntryPoint(name, &f, cudaEnableDefault, &found);
#endif
  if (e != cudaSuccess) cudaGetLastError();  // only an error of this query: never the application's
  return e == cudaSuccess && found == cudaDriverEntryPointSuccess ? f : nullptr;
}

// The driver's context calls. `missing` names the first one the runtime could not hand out.
struct DriverContextCalls {
  CUresult(CUDAAPI* get_current)(CUcontext*) = nullptr;
  CUresult(CUDAAPI* set_current)(CUcontext) = nullptr;
  CUresult(CUDAAPI* push_current)(CUcontext) = nullptr;
  CUresult(CUDAAPI* pop_current)(CUcontext*) = nullptr;
  CUresult(CUDAAPI* device_get)(CUdevice*, int) = nullptr;
  CUresult(CUDAAPI* primary_retain)(CUcontext*, CUdevice) = nullptr;
  CUresult(CUDAAPI* primary_release)(CUdevice) = nullptr;
  CUresult(CUDAAPI* primary_state)(CUdevice, unsigned int*, int*) = nullptr;
  CUresult(CUDAAPI* stream_context)(CUstream, CUcontext*) = nullptr;
  const char* missing = nullptr;
};

inline const DriverContextCalls& driver_context_calls() noexcept {
  static const DriverContextCalls calls = [] {
    DriverContextCalls c;
    const auto take = [&c](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(driver_function(name));
      if (!fn && !c.missing) c.missing = name;
    };
    take(c.get_current, "cuCtxGetCurrent");
    take(c.set_current, "cuCtxSetCurrent");
    take(c.push_current, "cuCtxPushCurrent");
    take(c.pop_current, "cuCtxPopCurrent");
    take(c.device_get, "cuDeviceGet");
    take(c.primary_retain, "cuDevicePrimaryCtxRetain");
    take(c.primary_release, "cuDevicePrimaryCtxRelease");
    take(c.primary_state, "cuDevicePrimaryCtxGetState");
    take(c.stream_context, "cuStreamGetCtx");
    return c;
  }();
  return calls;
}

// The table, or Error(backend_unavailable) naming the call a too old driver lacks. `who` is
// the backend's name, for the message.
inline const DriverContextCalls& require_driver_context_calls(const char* who) {
  const DriverContextCalls& calls = driver_context_calls();
  if (calls.missing)
    throw Error(Errc::backend_unavailable, std::string(who) + ": the CUDA driver does not provide " + calls.missing +
                                               ", which keeps the calling thread's context as it was");
  return calls;
}

[[noreturn]] inline void driver_failed(CUresult r, const char* who, const char* call) {
  throw Error(Errc::device_error, std::string(who) + ": " + call + " failed (CUresult " + std::to_string(int(r)) + ")");
}
// The message is built only on failure: check_driver runs on every call of a backend.
inline void check_driver(CUresult r, const char* who, const char* call) {
  if (r != CUDA_SUCCESS) driver_failed(r, who, call);
}

// GPU `device`'s handle, where its primary context exists (created and not reset); false where
// it does not or the driver cannot tell.
inline bool device_with_primary_context(int device, CUdevice* handle) noexcept {
  const DriverContextCalls& calls = driver_context_calls();
  unsigned int flags = 0;
  int active = 0;
  return !calls.missing && calls.device_get(handle, device) == CUDA_SUCCESS &&
         calls.primary_state(*handle, &flags, &active) == CUDA_SUCCESS && active != 0;
}

// Whether GPU `device`'s primary context exists. False where the driver cannot tell.
inline bool primary_context_active(int device) noexcept {
  CUdevice handle = 0;
  return device_with_primary_context(device, &handle);
}

// GPU `device`'s primary context, null where it does not exist (retaining it would create it,
// and the release right after destroy it: the handle would name a context that is gone) or
// cannot be had. Not held: for contexts the runtime already holds (a GPU that Kokkos runs on).
inline CUcontext primary_context_of(int device) noexcept {
  CUdevice handle = 0;
  CUcontext context = nullptr;
  if (!device_with_primary_context(device, &handle) ||
      driver_context_calls().primary_retain(&context, handle) != CUDA_SUCCESS)
    return nullptr;
  driver_context_calls().primary_release(handle);
  return context;
}

// The legacy and per-thread default streams: handles with no context of their own (the driver
// answers with the thread's current one, or none).
inline bool is_default_stream_handle(void* stream) noexcept {
  return stream == static_cast<void*>(cudaStreamLegacy) || stream == static_cast<void*>(cudaStreamPerThread);
}

// The context a stream was made in; null for the default streams' handles, or where the driver
// cannot tell.
inline CUcontext context_of_stream(void* stream) noexcept {
  const DriverContextCalls& calls = driver_context_calls();
  CUcontext context = nullptr;
  if (!stream || is_default_stream_handle(stream) || calls.missing ||
      calls.stream_context(static_cast<CUstream>(stream), &context) != CUDA_SUCCESS)
    return nullptr;
  return context;
}

// The context a backend's calls run in: a borrowed stream's own (an application's stream
// belongs to the context it was made in, a GPU's primary one or one of the application's; not
// held: the stream, and so its context, must outlive the backend), else GPU `device`'s primary
// context, the one the runtime uses for it, held while the backend lives.
class GpuContext {
 public:
  GpuContext(int device, void* borrowed_stream, const char* who) : calls_(&require_driver_context_calls(who)) {
    context_ = context_of_stream(borrowed_stream);
    if (context_) return;
#if CUDART_VERSION >= 12000
    // Initialized by the runtime too (without making it current), so the runtime holds it
    // until the process ends, as it did when the backends made the GPU current by device.
    if (const cudaError_t e = cudaInitDevice(device, 0, 0); e != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::device_error, std::string(who) + ": cudaInitDevice(" + std::to_string(device) +
                                          ") failed: " + cudaGetErrorString(e));
    }
#endif
    check_driver(calls_->device_get(&device_, device), who, "cuDeviceGet");
    check_driver(calls_->primary_retain(&context_, device_), who, "cuDevicePrimaryCtxRetain");
    retained_ = true;
  }
  ~GpuContext() {
    if (retained_) calls_->primary_release(device_);
  }
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  CUcontext get() const { return context_; }

 private:
  const DriverContextCalls* calls_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool retained_ = false;
};

// A call's scope: makes `context` (never null) current, pushed on the thread's context stack,
// and gives the thread back the context it had (none, if it had none): entries pushed over it
// are popped, and one that replaced it is replaced back. A scope that finds its context current
// pushes nothing and reads nothing at its end (one driver call a call, where a thread keeps
// using the same GPU): within a call, what runs makes only that context current (Kokkos'
// launches set their device, whose primary context is the kokkos backend's context). What
// pushes contexts it never pops (Kokkos' instances as they start) runs in a ContextStackScope.
class ContextScope {
 public:
  // Throws Error: a call cannot run where its context could not be made current.
  ContextScope(CUcontext context, const char* who) : calls_(&require_driver_context_calls(who)) {
    check_driver(calls_->get_current(&previous_), who, "cuCtxGetCurrent");
    give_back_ = context != previous_;
    if (give_back_) check_driver(calls_->push_current(context), who, "cuCtxPushCurrent");
  }
  // For destructors and other paths that cannot throw: where the driver fails (at exit, once it
  // is torn down), the thread's context stays as it is.
  explicit ContextScope(CUcontext context) noexcept {
    const DriverContextCalls& calls = driver_context_calls();
    if (calls.missing || calls.get_current(&previous_) != CUDA_SUCCESS) return;
    calls_ = &calls;
    give_back_ = context != previous_ && calls.push_current(context) == CUDA_SUCCESS;
  }
  ~ContextScope() {
    if (!give_back_) return;
    CUcontext now = nullptr, popped = nullptr;
    for (int k = 0; k < max_pops && calls_->get_current(&now) == CUDA_SUCCESS && now != previous_; ++k)
      if (calls_->pop_current(&popped) != CUDA_SUCCESS) break;
    if (calls_->get_current(&now) == CUDA_SUCCESS && now != previous_) calls_->set_current(previous_);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  static constexpr int max_pops = 16;
  const DriverContextCalls* calls_ = nullptr;
  CUcontext previous_ = nullptr;
  bool give_back_ = false;  // pushed: the thread had another context (or none)
};

// The thread's whole context stack kept for a scope: its entries are taken off (the scope runs
// with `context` alone current, or none where it is null) and put back at the end, whatever the
// scope pushed, popped or replaced; and the device the runtime falls back on where no context
// is current (cudaSetDevice changes it) is given back where that GPU has a context already
// (making it current by device would create one). For Kokkos' initialization, its instances'
// start (a push never popped) and its finalization; a call of a backend needs only a
// ContextScope. A stack deeper than max_depth is left as it is: the scope then does nothing.
class ContextStackScope {
 public:
  explicit ContextStackScope(CUcontext context) noexcept {
    const DriverContextCalls& calls = driver_context_calls();
    if (calls.missing) return;
    CUcontext top = nullptr;
    while (calls.get_current(&top) == CUDA_SUCCESS && top) {
      if (depth_ == max_depth || calls.pop_current(&top) != CUDA_SUCCESS) {
        push_kept_back(calls);
        return;
      }
      kept_[depth_++] = top;
    }
    calls_ = &calls;
    if (cudaGetDevice(&fallback_) != cudaSuccess) fallback_ = -1, cudaGetLastError();
    if (context) calls.push_current(context);
  }
  ~ContextStackScope() {
    if (!calls_) return;
    CUcontext top = nullptr;
    for (int k = 0; k < max_depth && calls_->get_current(&top) == CUDA_SUCCESS && top; ++k)
      if (calls_->pop_current(&top) != CUDA_SUCCESS) break;
    int now = fallback_;
    if (fallback_ >= 0 && cudaGetDevice(&now) == cudaSuccess && now != fallback_ && primary_context_active(fallback_)) {
      if (cudaSetDevice(fallback_) != cudaSuccess) cudaGetLastError();
      calls_->pop_current(&top);  // cudaSetDevice also made that GPU's primary context current
    }
    push_kept_back(*calls_);
  }
  ContextStackScope(const ContextStackScope&) = delete;
  ContextStackScope& operator=(const ContextStackScope&) = delete;

 private:
  void push_kept_back(const DriverContextCalls& calls) noexcept {
    while (depth_ > 0) calls.push_current(kept_[--depth_]);
  }
  static constexpr int max_depth = 64;
  const DriverContextCalls* calls_ = nullptr;  // null: nothing to give back
  CUcontext kept_[max_depth] = {};             // the thread's stack, top first
  int depth_ = 0;
  int fallback_ = -1;
};

}  // namespace ew::detail::cuda
