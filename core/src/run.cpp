// Argument checking for every op, done once here so that no backend writes a byte
// for a call that is wrong, and no backend repeats these checks. The per-operand
// checks live in check.cpp, shared with every other front end.
#include <string>

#include "ew/api.hpp"
#include "ew/error.hpp"
#include "ew_internal/check.hpp"
#include "ew_internal/registry.hpp"

namespace ew {

template <class T>
void run(Context& ctx, Op op, const Operands<T>& args) {
  if (static_cast<unsigned>(op) >= static_cast<unsigned>(op_count))
    throw Error(Errc::invalid_argument, "ew::run: Op value " + std::to_string(static_cast<int>(op)) + " is not in the op table");
  const OpInfo& oi = info(op);
  const char* call = oi.name;
  detail::BackendImpl& backend = detail::checked_backend(ctx, call);
  detail::check_dtype(ctx, backend, call, dtype_v<T>);
  const std::size_t n = args.out.size;
  const bool second_input = oi.input_streams == 2;
  detail::check_size(call, "a", args.a.size, "the output", n);
  if (second_input) detail::check_size(call, "b", args.b.size, "the output", n);
  if (!second_input && (args.b.data || args.b.size))
    throw Error(Errc::invalid_argument, std::string(call) + ": b must be empty: the op reads one input");
  if (n == 0) return;

  const detail::ByteRange a = detail::check_operand(call, "a", args.a.data, n, sizeof(T));
  const detail::ByteRange b = second_input ? detail::check_operand(call, "b", args.b.data, n, sizeof(T))
                                           : detail::ByteRange{};
  const detail::ByteRange out = detail::check_operand(call, "out", args.out.data, n, sizeof(T));
  detail::check_overlap(call, "a", a, "out", out);
  if (second_input) detail::check_overlap(call, "b", b, "out", out);

  detail::OpCall c{};
  c.op = op;
  c.dtype = dtype_v<T>;
  c.n = n;
  c.a = args.a.data;
  c.out = args.out.data;
  c.s = static_cast<double>(args.s);
  c.t = static_cast<double>(args.t);
  c.a_space = detail::check_memory_space(ctx, call, "a", args.a.data, args.a.space, args.a.device);
  c.out_space = detail::check_memory_space(ctx, call, "out", args.out.data, args.out.space, args.out.device);
  if (second_input) {
    c.b = args.b.data;
    c.b_space = detail::check_memory_space(ctx, call, "b", args.b.data, args.b.space, args.b.device);
  } else if (oi.in_place) {
    c.b = args.out.data;
    c.b_space = c.out_space;
  }
  backend.run(c);
}

template void run<float>(Context&, Op, const Operands<float>&);
template void run<double>(Context&, Op, const Operands<double>&);
template void run<half>(Context&, Op, const Operands<half>&);
template void run<bfloat16>(Context&, Op, const Operands<bfloat16>&);

}  // namespace ew
