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

// One instruction's value for one element, in its compute dtype (f for f32 and the
// 16-bit types, d for f64).
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

// A value of dtype d (held in its compute dtype) as a double, exactly.
EW_HOST_DEVICE inline double as_double(const Value& v, DType d) { return d == DType::f64 ? v.d : v.f; }

// An f32 value rounded once to the 16-bit type d, and back: exact, the value a store of
// it would read back.
EW_HOST_DEVICE inline float round_to_16(DType d, float x) {
  return d == DType::f16 ? static_cast<float>(half(x)) : static_cast<float>(bfloat16(x));
}
EW_HOST_DEVICE inline float round_to_16(DType d, double x) {
  return d == DType::f16 ? static_cast<float>(half(x)) : static_cast<float>(bfloat16(x));
}

// cast from `from` to `to` (docs/expressions.md): to f64 exact; to f32 rounds an f64 to
// nearest even, the value itself otherwise; to a 16-bit type rounds once, from f64 straight.
EW_HOST_DEVICE inline Value cast_value(DType to, DType from, const Value& a) {
  Value r;
  const bool wide = from == DType::f64;
  switch (to) {
    case DType::f64: r.d = wide ? a.d : static_cast<double>(a.f); break;
    case DType::f32: r.f = wide ? static_cast<float>(a.d) : a.f; break;
    default: r.f = wide ? round_to_16(to, a.d) : round_to_16(to, a.f);
  }
  return r;
}

// Element i of an array of dtype d, widened exactly to its compute dtype.
EW_HOST_DEVICE inline Value load_value(DType d, const void* array, std::size_t i) {
  Value r;
  switch (d) {
    case DType::f32: r.f = static_cast<const float*>(array)[i]; break;
    case DType::f64: r.d = static_cast<const double*>(array)[i]; break;
    case DType::f16: r.f = static_cast<float>(static_cast<const half*>(array)[i]); break;
    case DType::bf16: r.f = static_cast<float>(static_cast<const bfloat16*>(array)[i]); break;
  }
  return r;
}

// A value stored as element i of an array of dtype d: copied (f32, f64; a signaling NaN
// keeps its bits) or rounded once to the 16-bit type.
EW_HOST_DEVICE inline void store_value(DType d, void* array, std::size_t i, const Value& v) {
  switch (d) {
    case DType::f32: static_cast<float*>(array)[i] = v.f; break;
    case DType::f64: static_cast<double*>(array)[i] = v.d; break;
    case DType::f16: static_cast<half*>(array)[i] = half(v.f); break;
    case DType::bf16: static_cast<bfloat16*>(array)[i] = bfloat16(v.f); break;
  }
}

// A param or a constant of dtype d: its value is already rounded to d (Program), so
// converting it to the compute dtype is exact.
EW_HOST_DEVICE inline Value uniform_value(DType d, double value) {
  Value r;
  if (d == DType::f64) r.d = value;
  else r.f = static_cast<float>(value);
  return r;
}

// Evaluates `code` for element i: reads inputs[slot][i], writes outputs[k][i].
// `regs` holds one Value per instruction.
EW_HOST_DEVICE inline void eval_element(const Instr* code, int count, const std::uint16_t* output_instr,
                                        int output_count, const void* const* inputs, void* const* outputs,
                                        const double* params, std::size_t i, Value* regs) {
  for (int k = 0; k < count; ++k) {
    const Instr& in = code[k];
    Value& r = regs[k];
    switch (in.op) {
      case Opcode::input: r = load_value(in.dtype, inputs[in.slot], i); break;
      case Opcode::param: r = uniform_value(in.dtype, params[in.slot]); break;
      case Opcode::constant: r = uniform_value(in.dtype, in.value); break;
      case Opcode::cast: r = cast_value(in.dtype, code[in.arg[0]].dtype, regs[in.arg[0]]); break;
      case Opcode::select: {
        const bool take = as_double(regs[in.arg[0]], code[in.arg[0]].dtype) != 0.0;  // NaN != 0: true
        r = take ? regs[in.arg[1]] : regs[in.arg[2]];
        break;
      }
      default:
        if (in.dtype == DType::f64) r.d = apply_instr<double>(in.op, regs[in.arg[0]].d, regs[in.arg[1]].d, regs[in.arg[2]].d);
        else r.f = apply_instr<float>(in.op, regs[in.arg[0]].f, regs[in.arg[1]].f, regs[in.arg[2]].f);
    }
  }
  for (int k = 0; k < output_count; ++k)
    store_value(code[output_instr[k]].dtype, outputs[k], i, regs[output_instr[k]]);
}

}  // namespace ew::detail
