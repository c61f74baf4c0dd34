#pragma once
// The cuda reductions' tuning and test hooks (reduce.cu), in plain C++ so that tests and benchmarks
// compiled without CUDA headers use the one declaration.
#include <cstddef>

#include "ew/types.hpp"

namespace ew::detail::plan {
enum class Kind;  // ew_internal/reduce_plan.hpp
}  // namespace ew::detail::plan

namespace ew::detail::cuda {

// How the cuda reductions spread the plan's blocks over the GPU. None of it changes the
// bits (the plan's tree decides them); it decides which thread computes which plan block.
// Fields left 0 take the defaults (default_reduce_tuning, reduce.cu: the one place to
// change them).
struct ReduceTuning {
  int lanes_per_thread = 0;    // plan lanes per thread: f32 1, 2 or 4; f64 1 or 2; 16-bit 1 or
                               // 8; read as one vector of that many elements per row (1 where
                               // the operands are not aligned to the vector)
  int loads = 0;               // rows a thread has in flight: the next `loads` rows are loaded
                               // before this `loads` rows are added (not every pair with
                               // lanes_per_thread is built: reduce_shapes())
  int runs_per_sm = 0;         // the run size rule: the smallest run (a power of two of plan
                               // blocks, one warp each) with at most this many runs per SM;
                               // 0: the warps that fit on an SM (one wave), runs of at
                               // most 64 plan blocks (reduce.cu: default_longest_run)
  int ctas_per_sm = 0;         // a cap on the grid (CUDA blocks of 8 warps per SM), warps then
                               // take several runs; -1 = no cap (one warp per run)
  std::size_t run_blocks = 0;  // forces the run size (a power of two, 1..2^20; raised to
                               // lanes_per_thread); for min/max, the plan blocks per CUDA block
                               // (at most 2^19: 2^30 elements)
  int dependent_launch = 0;    // 0: programmatic dependent launch on sm_90+ (the kernel may start
                               // while the one before it on the stream drains); -1: plain launches
  int mapped_result = 0;       // 0: a value returned to the host is written by the kernel into
                               // mapped pinned memory (where the device maps host memory); -1:
                               // copied back after the kernel (the path of devices that cannot)
  int staged = 0;              // which sum kernel, decided apart from the fields above (a
                               // forced shape does not turn the staged kernel off): 0: the
                               // default (by dtype, kind and size); 1: the staged kernel (plan
                               // blocks copied into shared memory, reduce.cu) wherever it
                               // applies (sm_90+, f32/f64, operands 16-byte aligned, the device
                               // allowing its shared memory), else the register kernel; -1: the
                               // register kernel, always
  int stage_slots = 0;         // the staged kernel's ring: 8 KiB pieces in flight a warp, 1, 2 or 3
  int stage_ctas_per_sm = 0;   // the staged kernel's CUDA blocks an SM: at most this many (1..8);
                               // -1: as many as fit (a ring of one piece leaves room for two)
  int stage_run = 0;           // the staged kernel's plan blocks a warp in a unit of 8 warps:
                               // 1, 2, 4 or 8 (raised where a CUDA block's units would not fit
                               // its shared memory); 0: the default (reduce.cu: staged_units)
};

// The (lanes_per_thread, loads) pairs that are built, for benchmarks and tests.
struct ReduceShape {
  int lanes_per_thread, loads;
};
const ReduceShape* reduce_shapes(std::size_t* count);
constexpr int reduce_shape_count = 10;

// The tuning a reduction of `kind` over n elements of `dtype` gets on a GPU of sm_count SMs
// whose memory's peak is memory_bytes_per_second (0: unknown) when nothing is forced, every
// field filled in.
ReduceTuning default_reduce_tuning(plan::Kind kind, DType dtype, std::size_t n, int sm_count,
                                   double memory_bytes_per_second);

// Tests and benchmarks (not public API): every later call uses `tuning` (its non-zero
// fields, and run_blocks as it is; all zero restores the defaults). Any value must give the same bits. Throws
// ew::Error(invalid_argument) for a shape that is not built, a run size that is not a power
// of two, or a staged / stage_slots / stage_ctas_per_sm / stage_run value out of its range.
void set_reduce_tuning(const ReduceTuning& tuning);

// Test hooks (both sum kernels give the same bits, so only these tell which one ran): the
// sum kernel of the calling thread's last sum, asum, dot or 2-norm through the cuda backend's
// reducer (its fused expression reductions aside), none once read; and whether GPU `device`
// runs the staged kernel with a ring of `slots` pieces (sm_90+, this build's kernels compiled
// for sm_90+, and that much shared memory).
enum class SumKernel { none, registers, staged };
SumKernel take_last_sum_kernel();
bool staged_kernel_supported(int device, int slots);

}  // namespace ew::detail::cuda
