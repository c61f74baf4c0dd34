#pragma once
// Expressions on Kokkos. Host spaces: a parallel_for over L1-sized blocks, each block
// evaluated instruction by instruction (ew_internal/block_eval.hpp), so that the bits
// are the scalar reference's and intermediates stay in cache. Device spaces (Cuda): the
// program walked by every thread over a few 16-byte groups of elements at once, its
// register file in registers or, for transcendental formulas on fast-memory GPUs, in
// shared memory (expr_device.hpp), asynchronous on the context's instance like the ops.
#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

#include "ew/error.hpp"
#include "ew_internal/block_eval.hpp"
#include "expr_device.hpp"

namespace ew::detail::kokkos {

// `queue`: the context's WalkQueue counters on Cuda (null on host spaces).
template <class Exec>
void run_expr(const Exec& exec, const ExprCall& call, unsigned long long* queue = nullptr) {
  constexpr bool on_host = Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename Exec::memory_space>::accessible;
  if constexpr (!on_host) {
    run_expr_per_element(exec, call, DeviceShape::chosen, 0, queue);
  } else {
    constexpr int block = 128;
    const std::int64_t blocks = static_cast<std::int64_t>((call.n + block - 1) / block);
    const bool in_blocks = BlockRegisters<block>::fits(*call.program);
    Kokkos::parallel_for(
        "ew::expr", Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, blocks),
        [&call, in_blocks](std::int64_t b) {
          const std::size_t begin = static_cast<std::size_t>(b) * block;
          const std::size_t count = call.n - begin < block ? call.n - begin : block;
          if (in_blocks) {
            BlockRegisters<block> regs;
            eval_block(call, begin, count, regs);
          } else {  // more live values than the block's registers hold: element by element
            const Program& p = *call.program;
            Value regs[max_expr_nodes];
            for (std::size_t i = begin; i < begin + count; ++i)
              eval_element(p.code.data(), static_cast<int>(p.code.size()), p.outputs.data(),
                           static_cast<int>(p.outputs.size()), call.inputs, call.outputs, call.params, i, regs);
          }
        });
    exec.fence();
  }
}

}  // namespace ew::detail::kokkos
