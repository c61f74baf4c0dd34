// Reductions over an expression on the cuda backend (expr_reduce.hpp). A chunk is an
// aligned power-of-two run of plan blocks, so its node is a node of the one tree
// (reduce_plan.hpp) and the nodes combined by the canonical tree give the root: the bits of
// ew::sum over the whole evaluated array, on every GPU and for every chunk size. The chunk
// size only decides what stays in L2: the inputs are read from memory once, the output is
// written to L2 and read back from it.
#include "expr_reduce.hpp"

#include <mutex>
#include <string>

#include "cuda_error.hpp"
#include "ew_internal/program.hpp"

namespace ew::detail::cuda {

namespace {

constexpr std::size_t min_chunk_elements = std::size_t(1) << 20;
constexpr std::size_t max_chunk_elements = std::size_t(1) << 22;
constexpr std::size_t max_forced_blocks = std::size_t(1) << 20;

std::mutex forced_mutex;
std::size_t forced_blocks = 0;

std::size_t chunk_blocks(DType out, std::size_t l2_bytes) {
  const std::lock_guard<std::mutex> lock(forced_mutex);
  return forced_blocks ? forced_blocks : default_expr_reduce_chunk_blocks(out, l2_bytes);
}

}  // namespace

std::size_t default_expr_reduce_chunk_blocks(DType out, std::size_t l2_bytes) {
  std::size_t elements = min_chunk_elements;
  while (elements < max_chunk_elements && 2 * elements * size_of(out) <= l2_bytes / 3) elements *= 2;
  return elements / plan::block_elements;
}

void set_expr_reduce_chunk_blocks(std::size_t blocks) {
  if (blocks != 0 && (blocks > max_forced_blocks || (blocks & (blocks - 1)) != 0))
    throw Error(Errc::invalid_argument, "expression reduction chunk: " + std::to_string(blocks) +
                                            " plan blocks is not a power of two in 1..2^20");
  const std::lock_guard<std::mutex> lock(forced_mutex);
  forced_blocks = blocks;
}

ExprReducer::~ExprReducer() {
  if (scratch_) cudaFree(scratch_);
  if (nodes_) cudaFree(nodes_);
  if (host_nodes_) cudaFreeHost(host_nodes_);
}

double ExprReducer::run(const ExprCall& values, const char* call, plan::Kind kind, ExprRunner& expr, Reducer& reducer,
                        cudaStream_t stream, int sm_count) {
  const Program& p = *values.program;
  const DType out = p.output_dtype(0);
  const std::size_t chunk = chunk_blocks(out, l2_bytes_) * plan::block_elements;
  const std::size_t chunks = (values.n + chunk - 1) / chunk;
  const std::size_t scratch_bytes = (values.n < chunk ? values.n : chunk) * size_of(out);
  // Buffers grow only when the stream is idle: earlier calls' kernels may still use them.
  if (scratch_bytes > scratch_bytes_ || chunks > node_capacity_) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize before growing the expression reduction's buffers");
    if (scratch_bytes > scratch_bytes_) {
      if (scratch_) cudaFree(scratch_), scratch_ = nullptr, scratch_bytes_ = 0;
      check(cudaMalloc(&scratch_, scratch_bytes), "cudaMalloc of the expression reduction's scratch");
      scratch_bytes_ = scratch_bytes;
    }
    if (chunks > node_capacity_) {
      if (nodes_) cudaFree(nodes_), nodes_ = nullptr;
      if (host_nodes_) cudaFreeHost(host_nodes_), host_nodes_ = nullptr;
      node_capacity_ = 0;
      const std::size_t capacity = chunks < 64 ? 64 : 2 * chunks;
      check(cudaMalloc(&nodes_, capacity * sizeof(double)), "cudaMalloc of the expression reduction's nodes");
      check(cudaMallocHost(&host_nodes_, capacity * sizeof(double)), "cudaMallocHost of the expression reduction's nodes");
      node_capacity_ = capacity;
    }
  }

  for (std::size_t i = 0; i < chunks; ++i) {
    const std::size_t begin = i * chunk;
    const std::size_t count = values.n - begin < chunk ? values.n - begin : chunk;
    ExprCall part = values;
    part.n = count;
    for (int k = 0; k < p.input_slots; ++k)
      if (p.input_read[k])
        part.inputs[k] = static_cast<const char*>(values.inputs[k]) + begin * size_of(p.input_dtype[k]);
    part.outputs[0] = scratch_;
    part.output_space[0] = MemorySpace::device;
    expr.run(part, stream);

    ReduceCall r{};
    r.call = call;
    r.kind = kind;
    r.dtype = out;
    r.n = count;
    r.x = scratch_;
    r.x_space = MemorySpace::device;
    r.result = nodes_ + i;  // the node, as a double, written by the kernel: no wait here
    r.result_space = MemorySpace::device;
    r.node = true;
    reducer.run(r, stream, sm_count);
  }
  check(cudaMemcpyAsync(host_nodes_, nodes_, chunks * sizeof(double), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync of the expression reduction's nodes");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after an expression reduction");
  return plan::pair_tree(host_nodes_, chunks);
}

}  // namespace ew::detail::cuda
