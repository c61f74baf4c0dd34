// Argument checking for expression calls, done once here as for the fixed ops: counts,
// dtypes, sizes, null, alignment, overlap and memory spaces of every operand, before
// any backend writes a byte.
#include <cstdint>
#include <string>

#include "ew/error.hpp"
#include "ew/expr.hpp"
#include "ew_internal/check.hpp"
#include "ew_internal/program.hpp"
#include "ew_internal/backend_impl.hpp"

namespace ew {

namespace detail {

void BackendImpl::run_expr(const ExprCall&) {
  throw Error(Errc::backend_unavailable, "this backend cannot evaluate expressions");
}

}  // namespace detail

namespace {

constexpr const char* call_name = "ew::Kernel";
constexpr const auto& input_names = detail::expr_input_names;
constexpr const char* output_names[] = {"output 0", "output 1", "output 2", "output 3",
                                        "output 4", "output 5", "output 6", "output 7"};
static_assert(sizeof(output_names) / sizeof(*output_names) == max_expr_outputs);

std::string input_name(std::size_t k) { return std::string(call_name) + ": " + input_names[k]; }
std::string output_name(std::size_t k) { return std::string(call_name) + ": " + output_names[k]; }

bool share_a_byte(detail::ByteRange x, detail::ByteRange y) { return x.begin < y.end && y.begin < x.end; }

}  // namespace

void Kernel::run(Context& ctx, const InputArray* inputs, std::size_t input_count, const OutputArray* outputs,
                 std::size_t output_count, const double* params, std::size_t param_count) const {
  detail::BackendImpl& backend = detail::checked_backend(ctx, call_name);
  const detail::Program& p = program();
  const std::size_t want_inputs = static_cast<std::size_t>(p.input_slots);
  const std::size_t want_params = static_cast<std::size_t>(p.param_slots);
  if (input_count != want_inputs)
    throw Error(Errc::invalid_argument, "ew::Kernel: " + std::to_string(input_count) + " inputs given, the expression reads inputs 0.." +
                                            std::to_string(static_cast<long>(want_inputs) - 1) + " (" +
                                            std::to_string(want_inputs) + " slots)");
  if (output_count != p.outputs.size())
    throw Error(Errc::invalid_argument, "ew::Kernel: " + std::to_string(output_count) + " outputs given, the kernel has " +
                                            std::to_string(p.outputs.size()));
  if (param_count != want_params)
    throw Error(Errc::invalid_argument, "ew::Kernel: " + std::to_string(param_count) + " params given, the expression reads " +
                                            std::to_string(want_params) + " (params 0.." +
                                            std::to_string(static_cast<long>(want_params) - 1) + ")");
  detail::check_array_of_operands(call_name, "inputs", inputs, input_count);
  detail::check_array_of_operands(call_name, "outputs", outputs, output_count);
  detail::check_array_of_operands(call_name, "params", params, param_count);

  const std::size_t n = outputs[0].size;
  for (std::size_t k = 0; k < output_count; ++k) {
    if (outputs[k].dtype != p.output_dtype(static_cast<int>(k)))
      throw Error(Errc::invalid_argument, output_name(k) + " is " + to_string(outputs[k].dtype) + ", the expression computes " +
                                              to_string(p.output_dtype(static_cast<int>(k))) + " (wrap it in ew::cast)");
    detail::check_dtype(ctx, backend, call_name, outputs[k].dtype);
    if (outputs[k].size != n)
      throw Error(Errc::size_mismatch, output_name(k) + " has " + std::to_string(outputs[k].size) + " elements, output 0 " +
                                           std::to_string(n));
  }
  for (std::size_t k = 0; k < input_count; ++k) {
    if (!p.input_read[k]) continue;
    if (inputs[k].dtype != p.input_dtype[k])
      throw Error(Errc::invalid_argument, input_name(k) + " is " + to_string(inputs[k].dtype) + ", the expression reads it as " +
                                              to_string(p.input_dtype[k]));
    detail::check_dtype(ctx, backend, call_name, inputs[k].dtype);
    if (inputs[k].size != n)
      throw Error(Errc::size_mismatch, input_name(k) + " has " + std::to_string(inputs[k].size) + " elements, the outputs " +
                                           std::to_string(n));
  }
  if (n == 0) return;

  detail::ExprCall call{};
  call.program = &p;
  call.n = n;
  detail::ByteRange out_range[max_expr_outputs];
  for (std::size_t k = 0; k < output_count; ++k) {
    out_range[k] = detail::check_operand(call_name, output_names[k], outputs[k].data, n, size_of(outputs[k].dtype));
    for (std::size_t j = 0; j < k; ++j)
      if (share_a_byte(out_range[j], out_range[k]))
        throw Error(Errc::overlap, output_name(k) + " overlaps output " + std::to_string(j) +
                                       " (outputs must be distinct arrays)");
  }
  for (std::size_t k = 0; k < input_count; ++k) {
    if (!p.input_read[k]) continue;
    const auto r = detail::check_operand(call_name, input_names[k], inputs[k].data, n, size_of(inputs[k].dtype));
    for (std::size_t j = 0; j < output_count; ++j)
      detail::check_overlap(call_name, input_names[k], r, output_names[j], out_range[j]);
  }
  for (std::size_t k = 0; k < output_count; ++k) {
    call.outputs[k] = outputs[k].data;
    call.output_space[k] = detail::check_memory_space(ctx, call_name, output_names[k], outputs[k].data, outputs[k].space,
                                                         outputs[k].device);
  }
  for (std::size_t k = 0; k < input_count; ++k) {
    if (!p.input_read[k]) continue;
    call.inputs[k] = inputs[k].data;
    call.input_space[k] = detail::check_memory_space(ctx, call_name, input_names[k], inputs[k].data, inputs[k].space,
                                                        inputs[k].device);
  }
  // Each param rounded once to its dtype (f64 -> f16 straight, not through f32).
  for (std::size_t k = 0; k < param_count; ++k) call.params[k] = detail::round_to_storage(p.param_dtype[k], params[k]);
  try {
    backend.run_expr(call);
  } catch (const Error& e) {
    if (e.code() != Errc::backend_unavailable) throw;
    throw Error(e.code(), std::string("ew::Kernel on the ") + ctx.backend_name() + " backend: " + e.what());
  }
}

}  // namespace ew
