#pragma once
// The reference semantics of every instruction of a program, one element at a time:
// the scalar backend runs this, and every other evaluator (vector blocks, generated
// CUDA) must give its bits. Plain data in, no allocation, host and device alike, so a
// device evaluator (Kokkos on a GPU) can walk a copied program with it.
#include <cstddef>
#include <cstdint>

#include "ew/detail/math.hpp"
#include "ew/detail/scalar_kit.hpp"
#include "ew/ops.hpp"
#include "ew_internal/program.hpp"

namespace ew::detail {

// One instruction's value for one element, in its dtype.
union Value {
  float f;
  double d;
};

// The operation of `op` on values of type T: the single definition for both dtypes.
template <class T>
EW_HOST_DEVICE inline T apply_instr(Opcode op, T a, T b, T c) {
  using K = math::ScalarKit<T>;
  switch (op) {
    case Opcode::neg: return -a;
    case Opcode::abs: return K::abs(a);
    case Opcode::sqrt: return K::sqrt(a);
    case Opcode::floor: return K::floor(a);
    case Opcode::ceil: return K::ceil(a);
    case Opcode::trunc: return K::trunc(a);
    case Opcode::round: return math::round<K>(a);
    case Opcode::exp: return math::exp<K>(a);
    case Opcode::log: return math::log<K>(a);
    case Opcode::tanh: return math::tanh<K>(a);
    case Opcode::sigmoid: return math::sigmoid<K>(a);
    case Opcode::add: return a + b;
    case Opcode::sub: return a - b;
    case Opcode::mul: return a * b;
    case Opcode::div: return a / b;
    case Opcode::min: return math::min<K>(a, b);
    case Opcode::max: return math::max<K>(a, b);
    case Opcode::lt: return a < b ? T(1) : T(0);
    case Opcode::le: return a <= b ? T(1) : T(0);
    case Opcode::gt: return a > b ? T(1) : T(0);
    case Opcode::ge: return a >= b ? T(1) : T(0);
    case Opcode::eq: return a == b ? T(1) : T(0);
    case Opcode::ne: return a != b ? T(1) : T(0);
    case Opcode::fma: return fused_multiply_add(a, b, c);
    default: return a;  // leaves, cast and select are handled by the caller
  }
}

EW_HOST_DEVICE inline double as_double(const Value& v, DType d) { return d == DType::f32 ? v.f : v.d; }

// Evaluates `code` for element i: reads inputs[slot][i], writes outputs[k][i].
// `regs` holds one Value per instruction.
EW_HOST_DEVICE inline void eval_element(const Instr* code, int count, const std::uint16_t* output_instr,
                                        int output_count, const void* const* inputs, void* const* outputs,
                                        const double* params, std::size_t i, Value* regs) {
  for (int k = 0; k < count; ++k) {
    const Instr& in = code[k];
    Value& r = regs[k];
    const bool f32 = in.dtype == DType::f32;
    switch (in.op) {
      case Opcode::input:
        if (f32) r.f = static_cast<const float*>(inputs[in.slot])[i];
        else r.d = static_cast<const double*>(inputs[in.slot])[i];
        break;
      case Opcode::param:
        if (f32) r.f = static_cast<float>(params[in.slot]);
        else r.d = params[in.slot];
        break;
      case Opcode::constant:
        if (f32) r.f = static_cast<float>(in.value);
        else r.d = in.value;
        break;
      case Opcode::cast: {
        // f32 -> f64 is exact; f64 -> f32 rounds to nearest even.
        const Value& a = regs[in.arg[0]];
        const DType from = code[in.arg[0]].dtype;
        if (f32) r.f = from == DType::f32 ? a.f : static_cast<float>(a.d);
        else r.d = from == DType::f64 ? a.d : static_cast<double>(a.f);
        break;
      }
      case Opcode::select: {
        const bool take = as_double(regs[in.arg[0]], code[in.arg[0]].dtype) != 0.0;  // NaN != 0: true
        r = take ? regs[in.arg[1]] : regs[in.arg[2]];
        break;
      }
      default:
        if (f32) r.f = apply_instr<float>(in.op, regs[in.arg[0]].f, regs[in.arg[1]].f, regs[in.arg[2]].f);
        else r.d = apply_instr<double>(in.op, regs[in.arg[0]].d, regs[in.arg[1]].d, regs[in.arg[2]].d);
    }
  }
  for (int k = 0; k < output_count; ++k) {
    const Instr& in = code[output_instr[k]];
    if (in.dtype == DType::f32) static_cast<float*>(outputs[k])[i] = regs[output_instr[k]].f;
    else static_cast<double*>(outputs[k])[i] = regs[output_instr[k]].d;
  }
}

}  // namespace ew::detail
