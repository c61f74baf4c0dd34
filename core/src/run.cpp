// Argument checking for every op, done once here so that no backend writes a byte
// for a call that is wrong, and no backend repeats these checks.
#include <cstdint>
#include <string>

#include "ew/api.hpp"
#include "ew/error.hpp"
#include "ew_internal/registry.hpp"

namespace ew {

namespace {

std::string where(Op op, const char* operand) { return std::string(to_string(op)) + ": " + operand; }

template <class T>
void check_pointer(Op op, const char* name, const T* p) {
  if (!p) throw Error(Errc::null_pointer, where(op, name) + " is null with n > 0");
  if (reinterpret_cast<std::uintptr_t>(p) % alignof(T) != 0)
    throw Error(Errc::misaligned, where(op, name) + " is not aligned to its element size (" +
                                      std::to_string(alignof(T)) + " bytes)");
}

// Exact aliasing (same first element, same length) is an in-place op; anything else
// that shares a byte would make the result depend on the order of the writes.
template <class T>
void check_overlap(Op op, const char* name, const T* in, const T* out, std::size_t n) {
  auto i = reinterpret_cast<std::uintptr_t>(in), o = reinterpret_cast<std::uintptr_t>(out);
  std::uintptr_t bytes = n * sizeof(T);
  if (i != o && i < o + bytes && o < i + bytes)
    throw Error(Errc::overlap, where(op, name) + " partially overlaps the output");
}

MemorySpace locate(Context& ctx, Op op, const char* name, const void* p, MemorySpace tagged) {
  MemorySpace space = tagged != MemorySpace::unknown ? tagged : detail::classify(p);
  if (!ctx.impl().accepts(space))
    throw Error(Errc::foreign_memory, where(op, name) + " lives in " + to_string(space) + " memory, which the " +
                                          ctx.backend_name() + " backend cannot access");
  return space;
}

}  // namespace

template <class T>
void run(Context& ctx, Op op, const Operands<T>& args) {
  if (static_cast<unsigned>(op) >= static_cast<unsigned>(op_count))
    throw Error(Errc::invalid_argument, "ew::run: Op value " + std::to_string(static_cast<int>(op)) + " is not in the op table");
  const OpInfo& oi = info(op);
  const std::size_t n = args.out.size;
  const bool second_input = oi.input_streams == 2;
  if (args.a.size != n)
    throw Error(Errc::size_mismatch, where(op, "a") + " has " + std::to_string(args.a.size) +
                                         " elements, the output " + std::to_string(n));
  if (second_input && args.b.size != n)
    throw Error(Errc::size_mismatch, where(op, "b") + " has " + std::to_string(args.b.size) +
                                         " elements, the output " + std::to_string(n));
  if (!second_input && (args.b.data || args.b.size))
    throw Error(Errc::invalid_argument, where(op, "b") + " must be empty: the op reads one input");
  if (n == 0) return;

  check_pointer(op, "a", args.a.data);
  check_pointer(op, "out", args.out.data);
  check_overlap(op, "a", args.a.data, args.out.data, n);
  if (second_input) {
    check_pointer(op, "b", args.b.data);
    check_overlap(op, "b", args.b.data, args.out.data, n);
  }

  detail::OpCall call{};
  call.op = op;
  call.dtype = dtype_v<T>;
  call.n = n;
  call.a = args.a.data;
  call.out = args.out.data;
  call.s = static_cast<double>(args.s);
  call.t = static_cast<double>(args.t);
  call.a_space = locate(ctx, op, "a", args.a.data, args.a.space);
  call.out_space = locate(ctx, op, "out", args.out.data, args.out.space);
  if (second_input) {
    call.b = args.b.data;
    call.b_space = locate(ctx, op, "b", args.b.data, args.b.space);
  } else if (oi.in_place) {
    call.b = args.out.data;
    call.b_space = call.out_space;
  }
  ctx.impl().run(call);
}

template void run<float>(Context&, Op, const Operands<float>&);
template void run<double>(Context&, Op, const Operands<double>&);

}  // namespace ew
