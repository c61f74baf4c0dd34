#pragma once
// Expressions on a Kokkos device space (Cuda), where no code is generated: one
// parallel_for whose body walks the program per element. The program is translated on the
// host into DeviceInstr (parameters resolved to their values, every value given a
// register by a linear scan over its live range), so that the walk reads plain data and
// keeps only the values still live: a short register file per thread.
//
// Two shapes, chosen per call:
//   inline   up to `inline_instructions` instructions and `inline_registers` registers
//            (every expression of a few dozen nodes): the program travels inside the
//            functor (kernel parameters on Cuda), the register file is a small array of the
//            thread's own, indexed by register number.
//   general  anything larger (up to max_expr_nodes instructions, any number of live
//            values): the program in a View of the space, the register file a View of
//            `registers` rows by a fixed number of threads that stride over the elements.
//            Allocates per call and fences: the exception, not the rule.
// Every element goes through the operations of element_eval.hpp (the scalar reference),
// the four arithmetic operators through the kit's round-to-nearest forms, which nvcc never
// contracts into an fma: the bits are the scalar backend's.
//
// Written for Kokkos 3.4 (Serial; the CPU tests run the walk there through
// run_expr_per_element) and 4.x/5.x with Cuda.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/element_eval.hpp"

namespace ew::detail::kokkos {

// One instruction with register operands. Leaves: input reads inputs[slot][i]; param and
// constant become `value` (a param is converted to its dtype exactly as the reference does).
struct DeviceInstr {
  Opcode op;
  DType dtype;
  DType arg_dtype;  // of operand a: cast's source, select's condition
  std::uint8_t unused = 0;
  std::uint16_t dst, a, b, c;  // registers; a is the slot of an input
  double value;
};

struct DevicePlan {
  std::vector<DeviceInstr> code;
  std::uint16_t out_reg[max_expr_outputs] = {};
  DType out_dtype[max_expr_outputs] = {};
  int outputs = 0;
  int registers = 0;
};

// Registers by live range: an instruction's register is free again after its last use
// (outputs live to the end). The destination never shares a register with an operand.
inline DevicePlan plan_for_device(const ExprCall& call) {
  const Program& p = *call.program;
  const int count = static_cast<int>(p.code.size());
  std::vector<int> last_use(count, -1);
  for (int k = 0; k < count; ++k) {
    const Instr& in = p.code[k];
    if (in.op == Opcode::input || in.op == Opcode::param || in.op == Opcode::constant) continue;
    for (int j = 0; j < arity(in.op); ++j) last_use[in.arg[j]] = k;
  }
  for (std::uint16_t o : p.outputs) last_use[o] = count;
  DevicePlan plan;
  plan.code.resize(count);
  std::vector<std::uint16_t> reg(count), free_regs;
  for (int k = 0; k < count; ++k) {
    const Instr& in = p.code[k];
    DeviceInstr& d = plan.code[k];
    d.op = in.op, d.dtype = in.dtype, d.arg_dtype = in.dtype, d.value = in.value;
    d.a = d.b = d.c = 0;
    if (in.op == Opcode::input) {
      d.a = in.slot;
    } else if (in.op == Opcode::param) {
      d.op = Opcode::constant, d.value = call.params[in.slot];
    } else if (in.op != Opcode::constant) {
      const int n = arity(in.op);
      d.arg_dtype = p.code[in.arg[0]].dtype;
      d.a = reg[in.arg[0]];
      d.b = n > 1 ? reg[in.arg[1]] : d.a;
      d.c = n > 2 ? reg[in.arg[2]] : d.a;
    }
    if (free_regs.empty()) {
      reg[k] = static_cast<std::uint16_t>(plan.registers++);
    } else {
      reg[k] = free_regs.back();
      free_regs.pop_back();
    }
    d.dst = reg[k];
    if (in.op != Opcode::input && in.op != Opcode::param && in.op != Opcode::constant)
      for (int j = 0; j < arity(in.op); ++j) {
        const std::uint16_t a = in.arg[j];
        bool seen = false;  // an operand named twice (x*x) is freed once
        for (int i = 0; i < j; ++i) seen = seen || in.arg[i] == a;
        if (!seen && last_use[a] == k) free_regs.push_back(reg[a]);
      }
    if (last_use[k] < 0) free_regs.push_back(reg[k]);  // read by nothing (an unused leaf)
  }
  plan.outputs = static_cast<int>(p.outputs.size());
  for (int k = 0; k < plan.outputs; ++k) {
    plan.out_reg[k] = reg[p.outputs[k]];
    plan.out_dtype[k] = p.code[p.outputs[k]].dtype;
  }
  return plan;
}

namespace device_eval {

template <class T>
KOKKOS_INLINE_FUNCTION T arithmetic(Opcode op, T a, T b, T c) {
  using K = math::ScalarKit<T>;
  switch (op) {
    case Opcode::add: return K::add(a, b);
    case Opcode::sub: return K::sub(a, b);
    case Opcode::mul: return K::mul(a, b);
    case Opcode::div: return K::div(a, b);
    default: return apply_instr<T>(op, a, b, c);
  }
}

// Element i through the program; `r(k)` is register k of this thread.
template <class Registers>
KOKKOS_INLINE_FUNCTION void walk(const DeviceInstr* code, int count, const std::uint16_t* out_reg,
                                 const DType* out_dtype, int outputs, const void* const* inputs,
                                 void* const* out, std::size_t i, Registers r) {
  for (int k = 0; k < count; ++k) {
    const DeviceInstr& in = code[k];
    const bool f32 = in.dtype == DType::f32;
    Value& d = r(in.dst);
    switch (in.op) {
      case Opcode::input:
        if (f32) d.f = static_cast<const float*>(inputs[in.a])[i];
        else d.d = static_cast<const double*>(inputs[in.a])[i];
        break;
      case Opcode::constant:
        if (f32) d.f = static_cast<float>(in.value);
        else d.d = in.value;
        break;
      case Opcode::cast: {
        const Value a = r(in.a);
        const bool from_f32 = in.arg_dtype == DType::f32;
        if (f32) d.f = from_f32 ? a.f : static_cast<float>(a.d);
        else d.d = from_f32 ? static_cast<double>(a.f) : a.d;
        break;
      }
      case Opcode::select: {
        const bool take = as_double(r(in.a), in.arg_dtype) != 0.0;  // NaN != 0: true
        d = take ? r(in.b) : r(in.c);
        break;
      }
      default:
        if (f32) d.f = arithmetic<float>(in.op, r(in.a).f, r(in.b).f, r(in.c).f);
        else d.d = arithmetic<double>(in.op, r(in.a).d, r(in.b).d, r(in.c).d);
    }
  }
  // Stores last: every value of this element is computed, so an output written in place
  // over an input of another output cannot change what that output reads.
  for (int k = 0; k < outputs; ++k) {
    if (out_dtype[k] == DType::f32) static_cast<float*>(out[k])[i] = r(out_reg[k]).f;
    else static_cast<double*>(out[k])[i] = r(out_reg[k]).d;
  }
}

struct LocalRegisters {
  Value* file;
  KOKKOS_INLINE_FUNCTION Value& operator()(int k) const { return file[k]; }
};

// Row k of a register View, column t: the threads of a warp touch consecutive Values.
struct StridedRegisters {
  Value* file;
  std::int64_t thread, threads;
  KOKKOS_INLINE_FUNCTION Value& operator()(int k) const { return file[k * threads + thread]; }
};

}  // namespace device_eval

inline constexpr int inline_instructions = 64;
inline constexpr int inline_registers = 16;

// The inline shape: everything the walk needs, by value.
struct InlineExpr {
  DeviceInstr code[inline_instructions];
  std::uint16_t out_reg[max_expr_outputs];
  DType out_dtype[max_expr_outputs];
  const void* inputs[max_expr_inputs];
  void* out[max_expr_outputs];
  int count, outputs;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t i) const {
    Value file[inline_registers];
    device_eval::walk(code, count, out_reg, out_dtype, outputs, inputs, out, static_cast<std::size_t>(i),
                      device_eval::LocalRegisters{file});
  }
};

template <class MemorySpace>
struct GeneralExpr {
  Kokkos::View<const DeviceInstr*, MemorySpace> code;
  Kokkos::View<Value*, MemorySpace> file;
  std::uint16_t out_reg[max_expr_outputs];
  DType out_dtype[max_expr_outputs];
  const void* inputs[max_expr_inputs];
  void* out[max_expr_outputs];
  int count, outputs;
  std::int64_t n, threads;

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
    const device_eval::StridedRegisters r{file.data(), t, threads};
    for (std::int64_t i = t; i < n; i += threads)
      device_eval::walk(code.data(), count, out_reg, out_dtype, outputs, inputs, out, static_cast<std::size_t>(i), r);
  }
};

// Runs the call on `exec` by walking the program per element. Asynchronous on a device
// space in the inline shape; the general shape fences before it returns (its Views).
template <class Exec>
void run_expr_per_element(const Exec& exec, const ExprCall& call, bool force_general = false) {
  if (call.n == 0) return;
  const DevicePlan plan = plan_for_device(call);
  const int count = static_cast<int>(plan.code.size());
  if (!force_general && count <= inline_instructions && plan.registers <= inline_registers) {
    InlineExpr f{};
    std::copy(plan.code.begin(), plan.code.end(), f.code);
    std::copy(plan.out_reg, plan.out_reg + plan.outputs, f.out_reg);
    std::copy(plan.out_dtype, plan.out_dtype + plan.outputs, f.out_dtype);
    std::copy(call.inputs, call.inputs + max_expr_inputs, f.inputs);
    std::copy(call.outputs, call.outputs + max_expr_outputs, f.out);
    f.count = count, f.outputs = plan.outputs;
    Kokkos::parallel_for("ew::expr (per element)",
                         Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, static_cast<std::int64_t>(call.n)), f);
    return;
  }
  using Space = typename Exec::memory_space;
  GeneralExpr<Space> f{};
  f.n = static_cast<std::int64_t>(call.n);
  // Enough threads to fill a GPU, few enough that the register rows stay small.
  f.threads = std::min<std::int64_t>(f.n, std::int64_t(1) << 16);
  Kokkos::View<DeviceInstr*, Space> code(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ew::expr code"), count);
  auto host_code = Kokkos::create_mirror_view(code);
  for (int k = 0; k < count; ++k) host_code(k) = plan.code[k];
  Kokkos::deep_copy(exec, code, host_code);
  f.code = code;
  f.file = Kokkos::View<Value*, Space>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ew::expr registers"),
                                       static_cast<std::size_t>(std::max(plan.registers, 1)) * f.threads);
  std::copy(plan.out_reg, plan.out_reg + plan.outputs, f.out_reg);
  std::copy(plan.out_dtype, plan.out_dtype + plan.outputs, f.out_dtype);
  std::copy(call.inputs, call.inputs + max_expr_inputs, f.inputs);
  std::copy(call.outputs, call.outputs + max_expr_outputs, f.out);
  f.count = count, f.outputs = plan.outputs;
  Kokkos::parallel_for("ew::expr (per element, general)",
                       Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, f.threads), f);
  exec.fence();  // the Views (and the host copy of the program) go when this returns
}

}  // namespace ew::detail::kokkos
