// Reductions over an expression on the cuda backend (expr_reduce.hpp). A run (fused path)
// or a chunk (pinned inputs) is an aligned power-of-two run of plan blocks, so its node is a
// node of the one tree (reduce_plan.hpp) and the nodes combined by the canonical tree give
// the root: the bits of ew::sum over the whole evaluated array, on every GPU and for every
// run or chunk size. Fused, the inputs are read once and nothing is written but the runs'
// nodes; chunked, each chunk's output is written to L2-sized scratch and read back from it.
#include "expr_reduce.hpp"

#include <mutex>
#include <string>

#include "cuda_error.hpp"
#include "ew_internal/program.hpp"

namespace ew::detail::cuda {

namespace {

constexpr std::size_t min_chunk_elements = std::size_t(1) << 20;
constexpr std::size_t max_chunk_elements = std::size_t(1) << 22;
constexpr std::size_t max_forced_blocks = std::size_t(1) << 20;  // also caps the default run (counter depth <= 21)

std::mutex forced_mutex;
std::size_t forced_blocks = 0;

std::size_t forced_chunk_blocks() {
  const std::lock_guard<std::mutex> lock(forced_mutex);
  return forced_blocks;
}

std::size_t chunk_blocks(DType out, std::size_t l2_bytes) {
  const std::size_t forced = forced_chunk_blocks();
  return forced ? forced : default_expr_reduce_chunk_blocks(out, l2_bytes);
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

void ExprReducer::reserve_nodes(std::size_t count, cudaStream_t stream) {
  if (count <= node_capacity_) return;
  // Only when the stream is idle: earlier calls' kernels may still write the old buffer.
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize before growing the expression reduction's nodes");
  if (nodes_) cudaFree(nodes_), nodes_ = nullptr;
  if (host_nodes_) cudaFreeHost(host_nodes_), host_nodes_ = nullptr;
  node_capacity_ = 0;
  const std::size_t capacity = count < 64 ? 64 : 2 * count;
  check(cudaMalloc(&nodes_, capacity * sizeof(double)), "cudaMalloc of the expression reduction's nodes");
  check(cudaMallocHost(&host_nodes_, capacity * sizeof(double)), "cudaMallocHost of the expression reduction's nodes");
  node_capacity_ = capacity;
}

double ExprReducer::root_of_nodes(std::size_t count, cudaStream_t stream) {
  check(cudaMemcpyAsync(host_nodes_, nodes_, count * sizeof(double), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync of the expression reduction's nodes");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after an expression reduction");
  return plan::pair_tree(host_nodes_, count);
}

double ExprReducer::run(const ExprCall& values, const char* call, plan::Kind kind, ExprRunner& expr, Reducer& reducer,
                        cudaStream_t stream, const LaunchShape& shape) {
  const Program& p = *values.program;
  const DType out = p.output_dtype(0);
  bool device_inputs = true;
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k])
      device_inputs &= values.input_space[k] == MemorySpace::device || values.input_space[k] == MemorySpace::managed;
  if (device_inputs) {
    // Fused: runs of plan blocks, one per resident warp by default (a forced chunk size is
    // the run size), each run's node to nodes_, the root on the host.
    const std::size_t blocks = plan::block_count(values.n);
    std::size_t run = forced_chunk_blocks();
    if (!run) {
      const std::size_t warps = expr.reduce_warps(p);
      run = 1;
      while (run < max_forced_blocks && (blocks + run - 1) / run > warps) run *= 2;
    }
    const std::size_t runs = (blocks + run - 1) / run;
    reserve_nodes(runs, stream);
    expr.reduce(values, kind == plan::Kind::asum, run, runs, nodes_, stream);
    return root_of_nodes(runs, stream);
  }

  // Pinned inputs: chunk by chunk through the expression path's staging.
  const std::size_t chunk = chunk_blocks(out, l2_bytes_) * plan::block_elements;
  const std::size_t chunks = (values.n + chunk - 1) / chunk;
  const std::size_t scratch_bytes = (values.n < chunk ? values.n : chunk) * size_of(out);
  // The scratch grows only when the stream is idle: earlier calls' kernels may still use it.
  if (scratch_bytes > scratch_bytes_) {
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize before growing the expression reduction's scratch");
    if (scratch_) cudaFree(scratch_), scratch_ = nullptr, scratch_bytes_ = 0;
    check(cudaMalloc(&scratch_, scratch_bytes), "cudaMalloc of the expression reduction's scratch");
    scratch_bytes_ = scratch_bytes;
  }
  reserve_nodes(chunks, stream);

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
    reducer.run(r, stream, shape);
  }
  return root_of_nodes(chunks, stream);
}

}  // namespace ew::detail::cuda
