// Reductions over an expression (ew/expr_reduce.hpp). The kernel's output is evaluated
// chunk by chunk into a small array that stays in cache, and each chunk is reduced there by
// the backend's own reduction, which returns the chunk's node of the plan's tree (the tree
// before its finish). A chunk is an aligned power-of-two run of plan blocks, so its node is
// a node of the one tree (reduce_plan.hpp), and the nodes combined by the canonical tree give
// the root: the bits of ew::sum over the whole evaluated array, with the inputs read from
// memory once and the output never written to memory. A backend whose calls are
// asynchronous (cuda) does it itself (BackendImpl::run_expr_reduce: one fused kernel, or its
// own chunks for pinned inputs) and hands back the root.
#include "ew/expr_reduce.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "ew/error.hpp"
#include "ew/float16.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/check.hpp"
#include "ew_internal/program.hpp"
#include "ew_internal/reduce_plan.hpp"

namespace ew {

namespace {

// 32 plan blocks (65536 elements): the chunk of output (256 KiB of f32) stays in L2 between
// its evaluation and its reduction, and is long enough for the backends' threads to share.
constexpr std::size_t chunk_blocks = 32;
static_assert((chunk_blocks & (chunk_blocks - 1)) == 0, "a chunk must be a node of the tree");

constexpr const auto& input_names = detail::expr_input_names;

// The chunk's output array, in the backend's own memory, freed on every path.
struct Scratch {
  detail::BackendImpl& backend;
  MemorySpace space;
  void* data;
  Scratch(detail::BackendImpl& b, std::size_t bytes) : backend(b), space(b.native_space()), data(b.allocate(bytes, space)) {}
  ~Scratch() { backend.deallocate(data, space); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

double reduce(Context& ctx, detail::plan::Kind kind, const Kernel& kernel, const InputArray* inputs,
              std::size_t input_count, const double* params, std::size_t param_count) {
  namespace plan = detail::plan;
  const char* call = kind == plan::Kind::sum ? "ew::sum over an ew::Kernel" : "ew::asum over an ew::Kernel";
  const std::string prefix = std::string(call) + ": ";
  detail::BackendImpl& backend = detail::checked_backend(ctx, call);
  if (kernel.empty()) throw Error(Errc::invalid_argument, prefix + "the kernel is empty");
  const detail::Program& p = kernel.program();
  if (p.outputs.size() != 1)
    throw Error(Errc::invalid_argument, prefix + "the kernel has " + std::to_string(p.outputs.size()) +
                                            " outputs; a reduction takes a kernel of one output");
  const std::size_t want_inputs = static_cast<std::size_t>(p.input_slots);
  const std::size_t want_params = static_cast<std::size_t>(p.param_slots);
  if (input_count != want_inputs)
    throw Error(Errc::invalid_argument, prefix + std::to_string(input_count) +
                                            " inputs given, the expression reads " + std::to_string(want_inputs) +
                                            " input slots");
  if (param_count != want_params)
    throw Error(Errc::invalid_argument, prefix + std::to_string(param_count) +
                                            " params given, the expression reads " + std::to_string(want_params));
  detail::check_array_of_operands(call, "inputs", inputs, input_count);
  detail::check_array_of_operands(call, "params", params, param_count);
  std::size_t first = want_inputs;
  for (std::size_t k = 0; k < want_inputs && first == want_inputs; ++k)
    if (p.input_read[k]) first = k;
  if (first == want_inputs)
    throw Error(Errc::invalid_argument, prefix + "the expression reads no input, so there is no length to reduce over");
  const std::size_t n = inputs[first].size;
  detail::check_dtype(ctx, backend, call, p.output_dtype(0));
  detail::refuse_reduction_on_several_devices(ctx, backend, call, kind, p.output_dtype(0));
  MemorySpace space[max_expr_inputs] = {};
  for (std::size_t k = 0; k < want_inputs; ++k) {
    if (!p.input_read[k]) continue;
    const std::string name = prefix + input_names[k];
    if (inputs[k].dtype != p.input_dtype[k])
      throw Error(Errc::invalid_argument, name + " is " + to_string(inputs[k].dtype) + ", the expression reads it as " +
                                              to_string(p.input_dtype[k]));
    detail::check_dtype(ctx, backend, call, inputs[k].dtype);
    if (inputs[k].size != n)
      throw Error(Errc::size_mismatch, name + " has " + std::to_string(inputs[k].size) + " elements, " +
                                           input_names[first] + " " + std::to_string(n));
    detail::check_operand(call, input_names[k], inputs[k].data, n, size_of(inputs[k].dtype));
    // Empty inputs hold no memory (as every other call, ew::sum over a span included, has it).
    if (n > 0)
      space[k] = detail::check_memory_space(ctx, call, input_names[k], inputs[k].data, inputs[k].space, inputs[k].device);
  }
  const DType out = p.output_dtype(0);
  if (n == 0) return 0.0;

  // A backend that drives the chunks itself (cuda: no wait per chunk) gets the call whole.
  detail::ExprCall whole{};
  whole.program = &p;
  whole.n = n;
  for (std::size_t k = 0; k < want_inputs; ++k)
    if (p.input_read[k]) whole.inputs[k] = inputs[k].data, whole.input_space[k] = space[k];
  for (std::size_t k = 0; k < param_count; ++k) whole.params[k] = detail::round_to_storage(p.param_dtype[k], params[k]);
  double root = 0.0;
  bool done = false;
  try {
    done = backend.run_expr_reduce(whole, call, kind, &root);
  } catch (const Error& e) {
    if (e.code() != Errc::backend_unavailable) throw;
    throw Error(e.code(), prefix + "on the " + ctx.backend_name() + " backend: " + e.what());
  }
  if (done) {
    const double acc[3] = {root, 0.0, 0.0};
    return plan::finish(kind, out == DType::f64, acc);
  }

  const std::size_t chunk = chunk_blocks * plan::block_elements;
  Scratch scratch(backend, std::min(n, chunk) * size_of(out));
  std::vector<double> nodes;
  nodes.reserve((n + chunk - 1) / chunk);
  InputArray part[max_expr_inputs];
  for (std::size_t begin = 0; begin < n; begin += chunk) {
    const std::size_t count = std::min(chunk, n - begin);
    for (std::size_t k = 0; k < want_inputs; ++k) {
      part[k] = inputs[k];
      if (!p.input_read[k]) continue;
      part[k].data = static_cast<const char*>(inputs[k].data) + begin * size_of(inputs[k].dtype);
      part[k].size = count;
    }
    OutputArray values;
    values.data = scratch.data;
    values.size = count;
    values.dtype = out;
    values.space = scratch.space;
    kernel.run(ctx, part, want_inputs, &values, 1, params, param_count);
    detail::ReduceCall c{};
    c.call = call;
    c.kind = kind;
    c.dtype = out;
    c.n = count;
    c.x = scratch.data;
    c.x_space = scratch.space;
    c.node = true;
    nodes.push_back(backend.run_reduce(c).value);
  }
  const double acc[3] = {plan::pair_tree(nodes.data(), nodes.size()), 0.0, 0.0};
  return plan::finish(kind, out == DType::f64, acc);
}

}  // namespace

double sum(Context& ctx, const Kernel& kernel, const InputArray* inputs, std::size_t input_count, const double* params,
           std::size_t param_count) {
  return reduce(ctx, detail::plan::Kind::sum, kernel, inputs, input_count, params, param_count);
}
double asum(Context& ctx, const Kernel& kernel, const InputArray* inputs, std::size_t input_count,
            const double* params, std::size_t param_count) {
  return reduce(ctx, detail::plan::Kind::asum, kernel, inputs, input_count, params, param_count);
}

}  // namespace ew
