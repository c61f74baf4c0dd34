#pragma once
// The calling thread's CUDA context, given back exactly as the application left it. Both GPU
// backends (cuda, and kokkos on Cuda) run each call with their GPU's primary context current
// and then make current again the context the thread had: the same one, or none.
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
  if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || !f) {
    cudaGetLastError();
    return nullptr;
  }
  return f;
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

inline void check_driver(CUresult r, const std::string& what) {
  if (r != CUDA_SUCCESS) throw Error(Errc::device_error, what + " failed (CUresult " + std::to_string(int(r)) + ")");
}

// A hold on GPU `device`'s primary context, the one the runtime itself uses for that GPU, for
// as long as a backend context lives.
class PrimaryContext {
 public:
  PrimaryContext(int device, const char* who) : calls_(&require_driver_context_calls(who)) {
#if CUDART_VERSION >= 12000
    // Initialized by the runtime too (without making it current), so the runtime holds it
    // until the process ends, as it did when the backends made the GPU current by device.
    if (const cudaError_t e = cudaInitDevice(device, 0, 0); e != cudaSuccess) {
      cudaGetLastError();
      throw Error(Errc::device_error, std::string(who) + ": cudaInitDevice(" + std::to_string(device) +
                                          ") failed: " + cudaGetErrorString(e));
    }
#endif
    check_driver(calls_->device_get(&device_, device), std::string(who) + ": cuDeviceGet");
    check_driver(calls_->primary_retain(&context_, device_), std::string(who) + ": cuDevicePrimaryCtxRetain");
  }
  ~PrimaryContext() { calls_->primary_release(device_); }
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  CUcontext get() const { return context_; }

 private:
  const DriverContextCalls* calls_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
};

// Makes `context` current for a scope (pushed on the thread's context stack) and gives the
// thread back the context it had (none, if it had none), whoever changed it meanwhile: entries
// pushed over it are popped (Kokkos pushes its instance's context as the instance starts and
// never pops it), and one that replaced it is replaced back. A null `context` changes nothing
// and only gives back. A scope that found its context current pushes nothing and reads nothing
// at its end (one driver call a call, where a thread keeps using the same GPU): what runs in it
// makes only that context current (Kokkos' launches set their device, the same context), and
// Kokkos' instances start in scopes of their own, which do check (the context's creation).
class ContextScope {
 public:
  // Throws Error: a call cannot run where its context could not be made current.
  ContextScope(CUcontext context, const char* who) : calls_(&require_driver_context_calls(who)) {
    check_driver(calls_->get_current(&previous_), std::string(who) + ": cuCtxGetCurrent");
    give_back_ = !context || context != previous_;
    if (context && give_back_) check_driver(calls_->push_current(context), std::string(who) + ": cuCtxPushCurrent");
  }
  // For destructors and other paths that cannot throw: where the driver fails (at exit, once it
  // is torn down), the thread's context stays as it is.
  explicit ContextScope(CUcontext context) noexcept {
    const DriverContextCalls& calls = driver_context_calls();
    if (calls.missing || calls.get_current(&previous_) != CUDA_SUCCESS) return;
    calls_ = &calls;
    give_back_ = !context || context != previous_;
    if (context && give_back_) calls.push_current(context);
  }
  ~ContextScope() {
    if (!calls_ || !give_back_) return;
    CUcontext now = nullptr, popped = nullptr;
    for (int k = 0; k < max_pops && calls_->get_current(&now) == CUDA_SUCCESS && now != previous_; ++k)
      if (calls_->pop_current(&popped) != CUDA_SUCCESS) break;
    if (calls_->get_current(&now) == CUDA_SUCCESS && now != previous_) calls_->set_current(previous_);
  }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  static constexpr int max_pops = 16;  // ours, and one for each Kokkos instance started meanwhile
  const DriverContextCalls* calls_ = nullptr;
  CUcontext previous_ = nullptr;
  bool give_back_ = false;  // the thread had another context (or the scope was asked only to give back)
};

}  // namespace ew::detail::cuda
