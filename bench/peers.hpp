#pragma once
// Peers: the best existing implementations, measured beside the library in the same
// run on the same data. Ratios to them are the only speed claims this project makes.
#include <cstddef>
#include <vector>

#include "ew/ops.hpp"

namespace ew::bench {

struct Peer {
  const char* name;  // "openmp loop", "std::transform", "cub::DeviceTransform", "cublas axpy", ...
  bool on_device;    // operands in CUDA device memory (true) or host memory
  bool (*supports)(Op op, DType dtype);
  // Runs op over n elements with the op table's semantics (for in-place ops b == out).
  // Device peers enqueue on `stream` (a cudaStream_t) and return; host peers block.
  void (*run)(Op op, DType dtype, std::size_t n, const void* a, const void* b, void* out, double s, double t,
              void* stream);
};

std::vector<Peer> cpu_peers();   // bench/cpu/peers.cpp   (target ew_peers_cpu)
std::vector<Peer> cuda_peers();  // bench/cuda/peers.cu   (target ew_peers_cuda)

}  // namespace ew::bench
