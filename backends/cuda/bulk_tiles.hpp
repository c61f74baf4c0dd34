#pragma once
// How much the generated expression kernel's bulk-copy tiles ask for at once (expr.cpp), in
// plain C++ so that the backend, the benchmarks and the tests without a GPU share the one
// rule. The fixed ops' bulk_kernel (kernels.cuh) keeps cub's 48 KiB: on an H200 this rule
// gains on the expressions but was within -2..+1 % for add and copy-like ones at
// 2^24..2^28, and ew-cuda-bench's "bulk rule pdl" measures it on the fixed ops.
#include <algorithm>
#include <cmath>
#include <cstddef>

namespace ew::detail::cuda {

// The bytes of input tiles each SM keeps in flight on a GPU whose memory peaks at
// `peak_bytes_per_second` over `sm_count` SMs. By Little's law the bytes an SM must keep in
// flight grow with the bandwidth it must sustain: 48 KiB (cub::DeviceTransform's sm_90
// target) at an H100's 3352 GB/s over 132 SMs, where it measured best, scaled by this GPU's
// peak per SM (an H200's 4814 GB/s: 69 KiB), to the nearest KiB, and kept within 48..96 KiB;
// 48 KiB when the peak is not known (0). To the nearest, not up: an H100 reports 2619 MHz x
// 5120 bits (3352.3 GB/s), and rounding up gave it 49 KiB, which took the two-input f32 ops
// from 3 to 4 elements a thread and cost 0.1-0.6 % at 2^24..2^28 on the hand-written kernel
// (docs/PERFORMANCE.md, "Bytes in flight of the generated bulk kernel", has the sweeps of
// both GPUs).
inline std::size_t default_bulk_bytes_in_flight(double peak_bytes_per_second, int sm_count) {
  constexpr double reference_per_sm = 3352e9 / 132;  // an H100 SXM's peak over its SMs
  constexpr std::size_t floor = std::size_t(48) << 10, ceiling = std::size_t(96) << 10;
  if (!(peak_bytes_per_second > 0) || sm_count < 1) return floor;
  const double scaled = double(floor) * (peak_bytes_per_second / sm_count) / reference_per_sm;
  if (!(scaled < double(ceiling))) return ceiling;
  const std::size_t kib = static_cast<std::size_t>(std::lround(scaled / 1024));
  return std::max(floor, kib << 10);
}

}  // namespace ew::detail::cuda
