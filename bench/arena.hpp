#pragma once
// What the per-backend benchmarks share: cold-cache operand placement and the median.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "ew/ops.hpp"

namespace ew::bench {

// Operands of call j at a position of a large arena that rotates, so that consecutive
// calls touch memory the previous ones left out of the last-level cache. The caller
// owns the memory; `space` tags it for the library.
struct Arena {
  char* base = nullptr;
  std::size_t bytes = 0;
  MemorySpace space = MemorySpace::unknown;
  struct Ptrs {
    void *a, *b, *out;
  };
  Ptrs at(Op op, std::size_t n, DType d, long j) const {
    const std::size_t array = (n * size_of(d) + 255) / 256 * 256;
    const OpInfo& oi = info(op);
    const int arrays = oi.input_streams + 1;
    const std::size_t footprint = arrays * array;
    const std::size_t slots = std::max<std::size_t>(1, bytes / footprint);
    char* p = base + (std::size_t(j) % slots) * footprint;
    if (oi.in_place) return {p, p + array, p + array};
    return {p, oi.input_streams == 2 ? p + array : nullptr, p + (arrays - 1) * array};
  }
};

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace ew::bench
