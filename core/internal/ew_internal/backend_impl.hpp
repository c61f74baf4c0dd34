#pragma once
// The contract between the core and a backend. Not installed: backends are compiled
// into the library. The core validates every call before a backend sees it, so a
// backend may assume: sizes agree, n > 0, pointers non-null and element-aligned, the
// output either identical to or disjoint from each input, and every pointer in a
// memory space the backend declared it accepts.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ew/context.hpp"
#include "ew/expr.hpp"
#include "ew/ops.hpp"
#include "ew/types.hpp"
#include "ew_internal/reduce_plan.hpp"

namespace ew::detail {

// One validated operation. For in-place ops (axpy, axpby) b == out.
struct OpCall {
  Op op;
  DType dtype;
  std::size_t n;
  const void* a;
  const void* b;  // null when the op reads one stream
  void* out;
  double s, t;    // exact for float scalars too (float -> double -> float round-trips)
  MemorySpace a_space, b_space, out_space;  // as classified by the core

  template <class T> const T* a_as() const { return static_cast<const T*>(a); }
  template <class T> const T* b_as() const { return static_cast<const T*>(b); }
  template <class T> T* out_as() const { return static_cast<T*>(out); }
};

// One validated conversion (ew::convert): n > 0, both operands checked as an OpCall's;
// `out` is disjoint from `in` or the same bytes (then from == to in size).
struct ConvertCall {
  DType from, to;
  std::size_t n;
  const void* in;
  void* out;
  MemorySpace in_space, out_space;
  const char* backend;  // its name, for messages
};

struct Program;

// One validated expression call: every operand checked as an OpCall's are; inputs the
// program does not read are null; params already converted to their dtypes' values.
struct ExprCall {
  const Program* program;
  std::size_t n;
  const void* inputs[max_expr_inputs];
  void* outputs[max_expr_outputs];
  double params[max_expr_params];
  MemorySpace input_space[max_expr_inputs];
  MemorySpace output_space[max_expr_outputs];
};

// One validated reduction (ew/reduce.hpp): n > 0, x (and y for dot) checked as an
// OpCall's operands are. The backend returns the value already rounded to the data's
// type (held exactly in a double) and, for min/max, the winner's index.
struct ReduceCall {
  const char* call;  // "ew::dot", ..., for messages
  plan::Kind kind;
  DType dtype;
  std::size_t n;
  const void* x;
  const void* y;  // dot only
  MemorySpace x_space, y_space;
  // Where to store the value (one reduce_result_t element: the data's type, float for
  // 16-bit data) instead of returning it,
  // or null. A backend that stores it itself (asynchronously, cuda) says so in `stored`;
  // otherwise the core stores the returned value.
  void* result;
  MemorySpace result_space;
  // Return the tree's root before the finish (no sqrt, no rounding to float) instead of the
  // result: the node of an aligned run of blocks, for the expression reductions
  // (expr_reduce.cpp), which reduce a long array chunk by chunk. Kinds with one accumulator.
  bool node = false;
};
struct ReduceResult {
  double value = 0.0;
  std::uint64_t index = 0;
  bool stored = false;
};

class BackendImpl {
 public:
  virtual ~BackendImpl() = default;
  virtual void run(const OpCall& call) = 0;
  // Whether run() takes data of dtype `d`. Every backend takes all four; the default (f32
  // and f64) is for a backend still without 16-bit kernels, and a context over several
  // devices answers for its shards. The core refuses what is not taken (Errc::unsupported).
  virtual bool supports(DType d) const { return d == DType::f32 || d == DType::f64; }
  // ew::convert between any two dtypes supports() accepts. Without it: Errc::unsupported.
  virtual void run_convert(const ConvertCall& call);
  // Expressions (ew/expr.hpp). A backend that cannot evaluate them here says why.
  virtual void run_expr(const ExprCall& call);
  // Reductions (ew/reduce.hpp), on the tree of reduce_plan.hpp. Returns when the result
  // is known. A backend without them says so (Errc::backend_unavailable).
  virtual ReduceResult run_reduce(const ReduceCall& call);
  // Reductions over an expression (expr_reduce.cpp): the plan tree's root (before the
  // finish) over the values of `values.program`'s one output (outputs unused), kind sum or
  // asum, into *root. A backend that returns false leaves it to the core, which evaluates
  // chunks through run_expr and reduces them with run_reduce's node mode; a backend whose
  // calls are asynchronous (cuda) does it itself and returns when the root is known.
  virtual bool run_expr_reduce(const ExprCall& values, const char* call, plan::Kind kind, double* root) {
    (void)values, (void)call, (void)kind, (void)root;
    return false;
  }
  virtual void synchronize() = 0;
  // Waits for the work queued so far, before memory it may read is handed out again. Never
  // throws: an error it meets is the backend's to keep for its next call (cuda: a sticky
  // one) or to clear (cuda: any other, so that no later call takes it for its own).
  virtual void wait_idle() noexcept {}
  // Whether operands may live in `space` (already classified, never `unknown`).
  virtual bool accepts(MemorySpace space) const = 0;
  // Whether a reduction's result span may live in `space`, checked by the core for every n
  // (n = 0 stores the identity without the backend's kernels).
  virtual bool stores_results_in(MemorySpace space) const { return accepts(space); }
  // The space of a Buffer whose caller passed `unknown`.
  virtual MemorySpace native_space() const { return MemorySpace::host; }
  // Throws Error(out_of_memory) on failure; `space` is never `unknown`.
  virtual void* allocate(std::size_t bytes, MemorySpace space);
  virtual void deallocate(void* p, MemorySpace space) noexcept;
  virtual void copy_bytes(void* dst, const void* src, std::size_t bytes);
  // Zeroes `bytes` at dst (memory a result may live in) in the order of the work queued so
  // far: a sum's identity into its result span for n = 0, which on an asynchronous backend
  // (cuda) is enqueued as the call's kernels would be, without waiting.
  virtual void zero_bytes(void* dst, std::size_t bytes);
  virtual int device() const { return -1; }
  virtual void* native_stream() const { return nullptr; }
  // A context over several devices (multi_device.hpp) holds one backend per device.
  virtual int shard_count() const { return 1; }
  virtual BackendImpl& shard(int) { return *this; }
};

struct Probe {
  bool usable = false;
  std::string reason;  // why not usable
  std::string detail;  // what runs when usable
  // Its classify may be asked though it is not usable: its runtime runs here and tells device
  // memory from host memory, but it cannot serve a context (cuda built without code for the GPU).
  bool classifies = false;
};

// Where a raw pointer lives, as a backend's runtime tells it: the memory space, and for
// device memory the GPU that holds it (-1 where the runtime does not say).
struct PointerLocation {
  MemorySpace space = MemorySpace::host;
  int device = -1;
};

// What each backend folder provides: a static descriptor returned by a function
// named <name>_backend() (see core/src/registry.cpp).
struct BackendDescriptor {
  Backend id;
  Probe (*probe)();  // cheap, no side effects beyond the backend's own lazy init
  std::unique_ptr<BackendImpl> (*create)(const ContextOptions& options);
  // Optional: classifies a pointer no matter which backend runs the call (CUDA tells
  // device memory from host memory, and one GPU's from another's). Null for backends that
  // cannot tell.
  PointerLocation (*classify)(const void* p);
  // Optional: releases process-wide state the backend created (Kokkos it initialized,
  // cached pools). Called by ew::finalize() and at exit; must tolerate repeated calls.
  void (*finalize)();
  // Optional: why a backend that probed usable cannot run any more in this process (Kokkos,
  // once finalized, cannot be initialized again), or empty while it can. The probe is cached;
  // this is asked each time a status is read.
  std::string (*lost)();
};

// The GPU a context asks for: ContextOptions::device when set, else EW_DEVICE, else -1
// (none asked). A malformed EW_DEVICE throws Error(invalid_argument).
int requested_device(const ContextOptions& options);
// The GPUs a context asks for: ContextOptions::devices, else `device`, else EW_DEVICE
// (an index or a comma-separated list of distinct indices); empty when none is asked.
// requested_device() is the single-device form: a list of several is an error there.
std::vector<int> requested_devices(const ContextOptions& options);
// For backends that run on the host threads: a stream or a GPU index they cannot
// honour is an error, not something to ignore.
void reject_device_options(const ContextOptions& options, const char* backend);

const BackendDescriptor& scalar_backend();
const BackendDescriptor& highway_backend();
const BackendDescriptor& kokkos_backend();
const BackendDescriptor& cuda_backend();

}  // namespace ew::detail
