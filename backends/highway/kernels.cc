// Highway's per-target compilation: foreach_target.h re-includes this file once per
// target in HWY_TARGETS, kernels-inl.h supplies the code, and HWY_EXPORT builds the
// table that HWY_DYNAMIC_DISPATCH indexes by the target chosen on this CPU.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels-inl.h"

#if HWY_ONCE
#include <cstdint>

#include "kernels.hpp"

namespace ew::detail::highway {

// HWY_EXPORT takes plain functions: one name per dtype.
HWY_EXPORT(RunChunkF32);
HWY_EXPORT(RunChunkF64);
HWY_EXPORT(RunChunkF16);
HWY_EXPORT(RunChunkBF16);
HWY_EXPORT(ConvertChunk);
HWY_EXPORT(CurrentTarget);

void run_chunk(Op op, std::size_t n, const float* a, const float* b, float* out, float s, float t, bool stream) {
  HWY_DYNAMIC_DISPATCH(RunChunkF32)(op, n, a, b, out, s, t, stream);
}

void run_chunk(Op op, std::size_t n, const double* a, const double* b, double* out, double s, double t,
               bool stream) {
  HWY_DYNAMIC_DISPATCH(RunChunkF64)(op, n, a, b, out, s, t, stream);
}

void run_chunk(Op op, std::size_t n, const half* a, const half* b, half* out, float s, float t, bool stream) {
  HWY_DYNAMIC_DISPATCH(RunChunkF16)(op, n, a, b, out, s, t, stream);
}

void run_chunk(Op op, std::size_t n, const bfloat16* a, const bfloat16* b, bfloat16* out, float s, float t,
               bool stream) {
  HWY_DYNAMIC_DISPATCH(RunChunkBF16)(op, n, a, b, out, s, t, stream);
}

void convert_chunk(DType from, DType to, std::size_t n, const void* in, void* out) {
  HWY_DYNAMIC_DISPATCH(ConvertChunk)(from, to, n, in, out);
}

const char* chosen_target() { return hwy::TargetName(HWY_DYNAMIC_DISPATCH(CurrentTarget)()); }

std::string compiled_targets() {
  std::string names;
  // Lower bits are better targets; HWY_TARGETS is what this file was compiled for.
  for (std::int64_t rest = HWY_TARGETS; rest != 0; rest &= rest - 1) {
    if (!names.empty()) names += ' ';
    names += hwy::TargetName(rest & -rest);
  }
  return names;
}

}  // namespace ew::detail::highway
#endif  // HWY_ONCE
