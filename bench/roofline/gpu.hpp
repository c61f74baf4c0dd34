#pragma once
// The GPU side of the roofline behind a plain C++ interface (gpu.cu with CUDA,
// gpu_none.cpp without): device description, memory, CUDA-event timing on one
// stream, measured ceilings and the intensity probe.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "roofline.hpp"

namespace ew::roofline::gpu {

struct Info {
  bool usable = false;
  std::string why;  // when not usable
  std::string name;
  int sms = 0;
  std::size_t memory_bytes = 0, l2_bytes = 0;
  std::string driver, runtime;  // CUDA versions, "13.0"
  int memory_clock_khz = 0, bus_width_bits = 0;
  double spec_gbps = 0;  // memory clock x bus width x 2 (double data rate)
};

const Info& query();  // device 0 (or EW_DEVICE), probed once

void* allocate(std::size_t bytes);  // throws std::bad_alloc
void release(void* p) noexcept;
// Values in [1, 2), the same hash as cpu::host_fill.
void fill(void* p, std::size_t n, DType dtype, unsigned seed);
void to_host(void* dst, const void* src, std::size_t bytes);
void to_device(void* dst, const void* src, std::size_t bytes);

// The stream every GPU measurement runs on (borrowed by the library's contexts and
// handed to the peers), so that events around a batch time exactly that batch.
void* stream();
void synchronize();
// One pass reading `count` (1 to max_read_arrays) device arrays at the same offsets, on
// stream(), nothing written: bytes_each rounded up to whole 16-byte vectors, which the arrays
// must hold. How fast reading as many bytes as a call moves runs at that size, for reference
// (expressions.cpp, --read-pass).
constexpr int max_read_arrays = 6;
void read_pass(const void* const* arrays, int count, std::size_t bytes_each);
// Seconds between events recorded on stream() before and after body().
double time_on_stream(const std::function<void()>& body);

Ceilings measure_ceilings(bool quick, int reps);
std::vector<IntensityPoint> intensity(DType dtype, const std::vector<int>& ks, std::size_t n, int reps);

}  // namespace ew::roofline::gpu
