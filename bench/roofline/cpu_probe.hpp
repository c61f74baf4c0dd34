#pragma once
// The CPU side of the roofline: what this CPU is, its measured ceilings, the
// intensity probe, and host memory for the measurements.
#include <cstddef>
#include <vector>

#include "roofline.hpp"

namespace ew::roofline::cpu {

void describe(Machine& m);  // model, logical CPUs, L2 and last-level cache sizes

// Memory bandwidth (read-only, copy and triad, with and without streaming stores,
// over arrays far larger than the last-level cache), per-core L2 bandwidth, FMA rate.
Ceilings measure_ceilings(const Machine& m, bool quick, int reps);

// y = f(x) with k FMAs per element, all threads, over n elements (cold: n >> LLC).
std::vector<IntensityPoint> intensity(DType dtype, const std::vector<int>& ks, std::size_t n, int reps);

// Page-aligned host memory, first touched by the threads that later use it.
void* host_alloc(std::size_t bytes);
void host_free(void* p) noexcept;
// Values in [1, 2) from a hash of (seed, index): finite, normal, never zero.
void host_fill(void* p, std::size_t n, DType dtype, unsigned seed);

const char* isa();  // the level the kernels run at ("x86-64-v3", ...)

}  // namespace ew::roofline::cpu
