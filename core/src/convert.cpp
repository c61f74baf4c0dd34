// Argument checking for ew::convert, as for the fixed ops: sizes, null, alignment,
// overlap and memory spaces, before any backend writes a byte.
#include <string>

#include "ew/api.hpp"
#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/check.hpp"

namespace ew {

namespace detail {

void BackendImpl::run_convert(const ConvertCall& call) {
  throw Error(Errc::unsupported, std::string("ew::convert: the ") + call.backend + " backend has no conversions yet");
}

}  // namespace detail

namespace {

bool known(DType d) {
  for (DType k : {DType::f32, DType::f64, DType::f16, DType::bf16})
    if (d == k) return true;
  return false;
}

}  // namespace

void convert(Context& ctx, DType from, const void* in, std::size_t in_size, MemorySpace in_space, DType to,
             void* out, std::size_t out_size, MemorySpace out_space, int in_device, int out_device) {
  const char* call = "ew::convert";
  detail::BackendImpl& backend = detail::checked_backend(ctx, call);
  for (DType d : {from, to})
    if (!known(d))
      throw Error(Errc::invalid_argument, std::string(call) + ": DType value " + std::to_string(static_cast<int>(d)) +
                                              " is not a dtype");
  detail::check_dtype(ctx, backend, call, from);
  detail::check_dtype(ctx, backend, call, to);
  detail::check_size(call, "in", in_size, "the output", out_size);
  const std::size_t n = out_size;
  if (n == 0) return;
  const detail::ByteRange in_range = detail::check_operand(call, "in", in, n, size_of(from));
  const detail::ByteRange out_range = detail::check_operand(call, "out", out, n, size_of(to));
  detail::check_overlap(call, "in", in_range, "out", out_range);

  detail::ConvertCall c{};
  c.from = from;
  c.to = to;
  c.n = n;
  c.in = in;
  c.out = out;
  c.in_space = detail::check_memory_space(ctx, call, "in", in, in_space, in_device);
  c.out_space = detail::check_memory_space(ctx, call, "out", out, out_space, out_device);
  c.backend = ctx.backend_name();
  backend.run_convert(c);
}

void convert(Context& ctx, DType from, const void* in, std::size_t in_size, MemorySpace in_space, DType to,
             void* out, std::size_t out_size, MemorySpace out_space) {
  convert(ctx, from, in, in_size, in_space, to, out, out_size, out_space, -1, -1);
}

}  // namespace ew
