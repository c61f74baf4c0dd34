#pragma once
// Expressions on the GPU, step 1: a Program (ew_internal/program.hpp) becomes the CUDA
// C++ source of one kernel, compiled at run time by NVRTC (nvrtc.hpp). Plain C++: no
// CUDA header, so the generator is tested on machines without a GPU.
//
// The kernel has the skeleton of the hand-written ones (kernels.cuh): 256-thread blocks,
// each thread keeps `unroll` groups of 16-byte vectors per input in flight before the
// first use, groups a whole grid apart, 64-bit indices; elements before output 0's first
// 16-byte boundary (the head) and after the last whole group (the tail) are done one at
// a time. A group is one 16-byte move of the narrowest operand: 8 elements when any
// operand is 16-bit (one uint4 of halves, two float4, four double2), else 4 when any is
// float, else 2 (one double2). Every node rounds as the scalar reference does
// (element_eval.hpp): the arithmetic goes through the CUDA kit of ew/detail/scalar_kit.hpp
// (round-to-nearest intrinsics that are never contracted) and ew/detail/math.hpp, pasted
// in as text; 16-bit data is widened when read and rounded when stored (or cast) by the
// conversions of ew/detail/float16_bits.hpp, pasted in too, and computed in float.
#include <cstddef>
#include <cstdint>
#include <string>

#include "ew_internal/program.hpp"

namespace ew::detail::cuda {

inline constexpr int kExprThreads = 256;
inline constexpr const char* kExprKernelName = "ew_expr_kernel";
inline constexpr const char* kExprBulkKernelName = "ew_expr_bulk_kernel";  // aligned case only

// The kernel's one parameter, laid out identically here and in the generated source
// (which declares the same struct and checks its size). Pointers are
// element-typed there. The scalars come first, so that every kernel's first reads (the
// range, the first inputs) lie in the first 64 bytes of the parameters: with them last, a
// kernel read three lines of constant memory where the fixed ops read one or two, and ran
// 3-4 % longer at 2^19 doubles (H100, ncu, 2026-11-26).
struct ExprKernelArgs {
  std::uint64_t head;             // elements before output 0's first 16-byte boundary
  std::uint64_t groups;           // whole groups after the head
  std::uint64_t tail;             // elements after the last whole group
  std::uint32_t vector_ok;        // bit k (inputs) / 16 + k (outputs): operand k is 16-byte aligned at the head
  const void* in[max_expr_inputs];
  void* out[max_expr_outputs];
  double param[max_expr_params];  // already the params' dtypes' values
};

// Alignment cases: `aligned`: every operand is 16-byte aligned at the head, all loads and
// stores are vectors; `any`: each operand is read or written as vectors where its bit in
// vector_ok says so, else element by element over the same grid.
enum class ExprAlignment { aligned, any };

struct ExprKernelSource {
  std::string text;
  int group = 4;   // elements per group
  int unroll = 4;  // groups in flight per thread
  // The aligned case of a program that reads an input also has the bulk-copy kernel
  // (sm_90+: kExprBulkKernelName(Args, int tile), tile groups per block, tile * group *
  // bulk_bytes_per_element bytes of dynamic shared memory).
  bool has_bulk = false;
  int bulk_bytes_per_element = 0;
};

// Elements per group and groups in flight for `p` (also written into the source).
int expr_group(const Program& p);
int expr_unroll(const Program& p);

ExprKernelSource generate_expr_kernel(const Program& p, ExprAlignment alignment);

// Reductions over an expression (ew/expr_reduce.hpp), fused: one kernel reads the inputs,
// evaluates the program's one output per element (rounded to its dtype, as the
// elementwise kernel stores it), widens it exactly to double and adds it into the plan's
// lanes (ew_internal/reduce_plan.hpp): a warp per aligned power-of-two run of plan blocks,
// a lane per plan lane, the lane tree by shuffles and the run's binary counter one level
// per lane, as the cuda reduction kernel (reduce.cu) with one lane per thread. Each run's
// node goes to partials[run]; the host combines them by the plan's tree. The inputs are
// read element by element (a warp reads a row of 32 consecutive elements), so there is no
// alignment case.
inline constexpr const char* kExprReduceKernelName = "ew_expr_reduce_kernel";

// The reduction kernel's second parameter (after ExprKernelArgs), as declared in the source.
struct ExprReduceKernelArgs {
  std::uint64_t n;           // elements
  std::uint64_t blocks;      // plan blocks
  std::uint64_t run_blocks;  // plan blocks per run (a power of two)
  std::uint64_t runs;
  double* partials;          // runs nodes
  std::uint32_t magnitude;   // 1: asum's terms |v|, 0: sum's v
};

struct ExprReduceKernelSource {
  std::string text;
  int rows = 0;  // rows of a plan block each thread has in flight (loaded before their use)
};

// The program must have exactly one output.
ExprReduceKernelSource generate_expr_reduce_kernel(const Program& p);

// Head, groups, tail and vector_ok of a call with n elements (n > 0) over these pointers.
// sizes: bytes per element of each operand (0 for an unread input).
void split_expr_range(std::size_t n, int group, const void* const* in, const int* in_size, int inputs,
                      void* const* out, const int* out_size, int outputs, ExprKernelArgs& args);

}  // namespace ew::detail::cuda
