#pragma once
// What a GPU backend's calls leave the calling thread (context.hpp: each call gives the thread
// back the CUDA context it had, and no call creates a context on a GPU the application did not
// use). A context of the backend goes through its whole life on a thread of its own whose CUDA
// context the test sets up first, and the thread's current context is read after every step.
// Shared by the cuda and the kokkos tests.
#include <cuda.h>
#include <cuda_runtime.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../backends/cuda/thread_context.hpp"  // the driver's context calls, as the library takes them
#include "test_support.hpp"

namespace ew::test {

inline const std::vector<std::string>& context_steps() {
  static const std::vector<std::string> steps = {"creation", "Buffers",     "uploads",   "add",
                                                 "silu",     "sum",         "synchronize", "downloads",
                                                 "a Buffer's release", "destruction"};
  return steps;
}

// The driver's calls the tests use beyond the library's own.
struct TestDriverCalls {
  // cuCtxCreate as of CUDA 12.0: cuCtxCreate_v3, whose affinity parameters may be none.
  CUresult(CUDAAPI* ctx_create)(CUcontext*, CUexecAffinityParam*, int, unsigned int, CUdevice) = nullptr;
  CUresult(CUDAAPI* ctx_destroy)(CUcontext) = nullptr;
  CUresult(CUDAAPI* pointer_attribute)(void*, CUpointer_attribute, CUdeviceptr) = nullptr;
};
inline const TestDriverCalls& test_driver_calls() {
  static const TestDriverCalls calls = [] {
    TestDriverCalls c;
    c.ctx_create = reinterpret_cast<decltype(c.ctx_create)>(detail::cuda::driver_function("cuCtxCreate"));
    c.ctx_destroy = reinterpret_cast<decltype(c.ctx_destroy)>(detail::cuda::driver_function("cuCtxDestroy"));
    c.pointer_attribute =
        reinterpret_cast<decltype(c.pointer_attribute)>(detail::cuda::driver_function("cuPointerGetAttribute"));
    return c;
  }();
  return calls;
}

// The thread's current context; throws where the driver cannot tell (a null would pass for none).
inline CUcontext current_context() {
  CUcontext c = nullptr;
  if (detail::cuda::driver_context_calls().get_current(&c) != CUDA_SUCCESS) throw std::runtime_error("cuCtxGetCurrent failed");
  return c;
}

// A context of the application's own on GPU 0 (driver API), current to the calling thread.
inline CUcontext create_own_context() {
  CUdevice handle = 0;
  CUcontext mine = nullptr;
  if (!test_driver_calls().ctx_create || detail::cuda::driver_context_calls().device_get(&handle, 0) != CUDA_SUCCESS ||
      test_driver_calls().ctx_create(&mine, nullptr, 0, 0, handle) != CUDA_SUCCESS)
    throw std::runtime_error("cuCtxCreate failed");
  return mine;
}

struct ContextLife {
  CUcontext before = nullptr;         // the thread's context once set up
  std::vector<CUcontext> after;       // the thread's context after each of context_steps()
  std::vector<int> device_after;      // cudaGetDevice after each step (it binds no context)
  std::vector<CUcontext> stack;       // the thread's context stack at the end, top first (popped)
  int device = -1;                    // the backend context's GPU
  CUcontext memory_context = nullptr;  // the context a Buffer's memory belongs to
  CUcontext primary = nullptr;        // the primary context of the backend context's GPU
  long long add_mismatch = -2, silu_mismatch = -2;  // first_mismatch against the scalar backend
  bool sum_matches = false;
  std::string error;  // what went wrong on the thread, if anything did
};

// On a new thread: `set_up(options)` (whatever the test wants current, or nothing; it may borrow
// a stream into the options), then a context of `backend` through its life, each result compared
// with the scalar backend's bits (outputs poisoned first); last, the thread's stack popped.
template <class SetUp>
ContextLife live_a_context(Backend backend, ContextOptions options, SetUp set_up) {
  const std::size_t n = (std::size_t(1) << 20) + 3;
  const std::vector<float> a = random_vector<float>(n), b = random_vector<float>(n);
  Context scalar(Backend::scalar);
  std::vector<float> want_add(n, poison<float>()), want_silu(n, poison<float>());
  add<float>(scalar, Span<const float>(a.data(), n), Span<const float>(b.data(), n), Span<float>(want_add.data(), n));
  const Expr x = input<float>(0);
  const Kernel silu = compile({x * sigmoid(x)});
  silu(scalar, {Span<const float>(a.data(), n)}, {Span<float>(want_silu.data(), n)});
  const float want_sum = sum<float>(scalar, Span<const float>(a.data(), n));

  ContextLife life;
  std::thread([&] {
    try {
      const detail::cuda::DriverContextCalls& d = detail::cuda::driver_context_calls();
      set_up(options);
      life.before = current_context();
      const auto look = [&] {
        int device = -1;
        cudaGetDevice(&device);
        life.after.push_back(current_context());
        life.device_after.push_back(device);
      };
      std::vector<float> got_add(n, poison<float>()), got_silu(n, poison<float>());
      float got_sum = 0;
      {
        Context ctx(backend, options);
        look();
        life.device = ctx.device();
        Buffer<float> da(ctx, n), db(ctx, n), add_out(ctx, n), silu_out(ctx, n);
        // Managed: its release waits for the context's work (a runtime call of its own).
        auto spare = std::make_unique<Buffer<float>>(ctx, n, MemorySpace::managed);
        look();
        da.upload(a.data(), n);
        db.upload(b.data(), n);
        add_out.upload(got_add.data(), n);
        silu_out.upload(got_silu.data(), n);
        look();
        add<float>(ctx, da, db, add_out);
        look();
        silu(ctx, {da.span()}, {silu_out.span()});
        look();
        got_sum = sum<float>(ctx, da.span());
        look();
        ctx.synchronize();
        look();
        add_out.download(got_add.data(), n);
        silu_out.download(got_silu.data(), n);
        look();
        spare.reset();
        look();
        CUdevice handle = 0;
        test_driver_calls().pointer_attribute(&life.memory_context, CU_POINTER_ATTRIBUTE_CONTEXT,
                                              reinterpret_cast<CUdeviceptr>(da.data()));
        if (d.device_get(&handle, life.device) == CUDA_SUCCESS && d.primary_retain(&life.primary, handle) == CUDA_SUCCESS)
          d.primary_release(handle);
      }
      look();
      for (CUcontext top = current_context(), popped = nullptr; top && life.stack.size() < 8; top = current_context()) {
        life.stack.push_back(top);
        d.pop_current(&popped);
      }
      life.add_mismatch = first_mismatch(got_add, want_add);
      life.silu_mismatch = first_mismatch(got_silu, want_silu);
      life.sum_matches = same_bits(got_sum, want_sum);
    } catch (const std::exception& e) {
      life.error = e.what();
    }
  }).join();
  return life;
}

// The checks every test of a ContextLife makes: the thread's context after every step is the
// one it had, and its stack at the end is `stack` (top first: what it had); the context's memory
// belongs to `memory_in` (null: its GPU's primary context); the results are the scalar
// backend's bits.
inline void expect_thread_context_kept(const ContextLife& life, const std::vector<CUcontext>& stack,
                                       CUcontext memory_in = nullptr) {
  const CUcontext expected = stack.empty() ? nullptr : stack.front();
  ASSERT_EQ(life.error, "");
  EXPECT_EQ(life.before, expected);
  ASSERT_EQ(life.after.size(), context_steps().size());
  for (std::size_t s = 0; s < life.after.size(); ++s)
    EXPECT_EQ(life.after[s], expected) << "the thread's CUDA context after: " << context_steps()[s];
  EXPECT_EQ(life.stack, stack) << "the thread's context stack at the end, top first";
  EXPECT_NE(life.memory_context, nullptr);
  EXPECT_EQ(life.memory_context, memory_in ? memory_in : life.primary) << "a Buffer's memory is in another context";
  EXPECT_EQ(life.add_mismatch, -1);
  EXPECT_EQ(life.silu_mismatch, -1);
  EXPECT_TRUE(life.sum_matches);
}

}  // namespace ew::test
