#pragma once
// Reductions over an expression on the cuda backend (ew/expr_reduce.hpp). Inputs in device
// or managed memory: one generated kernel (codegen.hpp, generate_expr_reduce_kernel)
// evaluates the kernel's one output and reduces it in the same pass, a warp per run of plan
// blocks, into a device array of run nodes, on the context's stream. Pinned inputs: the
// output evaluated chunk by chunk by the expression kernel (expr.hpp, which stages them and
// waits for each chunk) into device scratch that stays in L2, each chunk reduced there by
// the cuda reduction (reduce.hpp) in node mode into the array of nodes. Then one copy of
// the nodes to the host, one wait, and the plan's tree over them.
#include <cuda_runtime.h>

#include <cstddef>

#include "ew_internal/backend_impl.hpp"
#include "expr.hpp"
#include "expr_reduce_tuning.hpp"
#include "reduce.hpp"

namespace ew::detail::cuda {

// Per context: the chunk's scratch, the device nodes and their pinned host copy, grown on
// demand. Must be created and destroyed with the context's device current.
class ExprReducer {
 public:
  explicit ExprReducer(std::size_t l2_bytes) : l2_bytes_(l2_bytes) {}
  ~ExprReducer();
  ExprReducer(const ExprReducer&) = delete;
  ExprReducer& operator=(const ExprReducer&) = delete;

  // The tree's root over the values of values.program's output (values.n > 0; inputs in
  // device, managed or pinned memory), before the finish. Returns when it is known.
  double run(const ExprCall& values, const char* call, plan::Kind kind, ExprRunner& expr, Reducer& reducer,
             cudaStream_t stream, const LaunchShape& shape);

 private:
  void reserve_nodes(std::size_t count, cudaStream_t stream);
  double root_of_nodes(std::size_t count, cudaStream_t stream);  // copy, wait, the tree
  std::size_t l2_bytes_;
  void* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  double* nodes_ = nullptr;
  double* host_nodes_ = nullptr;
  std::size_t node_capacity_ = 0;
};

}  // namespace ew::detail::cuda
