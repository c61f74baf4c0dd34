#pragma once
// A program evaluated over a block of consecutive elements, one instruction at a time
// (numexpr's shape): every register is a short array that stays in L1, each
// instruction one plain loop the compiler can vectorize, and intermediates never reach
// memory. Each element goes through exactly the operations of element_eval.hpp, so the
// bits are the scalar reference's. For host evaluators without SIMD code of their own
// (Kokkos host spaces); Highway has its own vector evaluator.
#include <cstddef>
#include <cstdint>

#include "ew_internal/element_eval.hpp"

namespace ew::detail {

// Register storage of one thread: `registers` rows of `block` elements of the widest dtype.
template <int block>
struct BlockRegisters {
  static constexpr int max_registers = 32;
  alignas(64) double row[max_registers][block];
  static bool fits(const Program& p) { return p.registers <= max_registers; }
};

namespace block_eval {

template <class T>
inline void fill(T* r, T v, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) r[j] = v;
}

template <class To, class From>
inline void convert(To* r, const From* a, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) r[j] = static_cast<To>(a[j]);
}

// Widening 16-bit storage into a float register, and rounding in place to 16 bits.
template <class T16>
inline void widen(float* r, const T16* a, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) r[j] = static_cast<float>(a[j]);
}
template <class T16, class From>
inline void round_to(float* r, const From* a, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) r[j] = static_cast<float>(T16(a[j]));
}

template <class T, class C>
inline void select(T* r, const C* c, const T* a, const T* b, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) r[j] = c[j] != C(0) ? a[j] : b[j];
}

// One instruction over the block, the opcode a constant: apply_instr's switch folds away
// and the loop body is that one operation (max, exp, ...), which the compiler inlines and
// can vectorize. A switch inside the loop was evaluated per element (kokkos relu
// 3.1 GB/s, silu 0.34 on one core of the 2-core VM).
template <Opcode op, class T>
inline void loop(T* r, const T* a, const T* b, const T* c, std::size_t count) {
  for (std::size_t j = 0; j < count; ++j) r[j] = apply_instr<T>(op, a[j], b[j], c[j]);
}

template <class T>
inline void apply(Opcode op, T* r, const T* a, const T* b, const T* c, std::size_t count) {
  switch (op) {
#define EW_BLOCK_CASE(name) \
  case Opcode::name: return loop<Opcode::name, T>(r, a, b, c, count);
    EW_BLOCK_CASE(neg) EW_BLOCK_CASE(abs) EW_BLOCK_CASE(sqrt) EW_BLOCK_CASE(floor) EW_BLOCK_CASE(ceil)
    EW_BLOCK_CASE(trunc) EW_BLOCK_CASE(round) EW_BLOCK_CASE(exp) EW_BLOCK_CASE(log) EW_BLOCK_CASE(tanh)
    EW_BLOCK_CASE(sigmoid) EW_BLOCK_CASE(add) EW_BLOCK_CASE(sub) EW_BLOCK_CASE(mul) EW_BLOCK_CASE(div)
    EW_BLOCK_CASE(min) EW_BLOCK_CASE(max) EW_BLOCK_CASE(lt) EW_BLOCK_CASE(le) EW_BLOCK_CASE(gt)
    EW_BLOCK_CASE(ge) EW_BLOCK_CASE(eq) EW_BLOCK_CASE(ne) EW_BLOCK_CASE(fma)
#undef EW_BLOCK_CASE
    default: for (std::size_t j = 0; j < count; ++j) r[j] = apply_instr<T>(op, a[j], b[j], c[j]);
  }
}

}  // namespace block_eval

// Evaluates elements [begin, begin + count) of the call, count <= block.
template <int block>
void eval_block(const ExprCall& call, std::size_t begin, std::size_t count, BlockRegisters<block>& regs) {
  const Program& p = *call.program;
  const std::size_t size = p.code.size();
  // Where each instruction's value is: a register row, or the input array itself.
  const void* value[max_expr_nodes];
  for (std::size_t k = 0; k < size; ++k) {
    const Instr& in = p.code[k];
    // Values are held in their compute dtype: float for f32 and the 16-bit types.
    const bool f32 = compute_dtype(in.dtype) == DType::f32;
    if (in.op == Opcode::input) {
      const void* first = static_cast<const char*>(call.inputs[in.slot]) + begin * size_of(in.dtype);
      if (in.dtype == DType::f16) block_eval::widen(reinterpret_cast<float*>(regs.row[in.reg]), static_cast<const half*>(first), count);
      else if (in.dtype == DType::bf16) block_eval::widen(reinterpret_cast<float*>(regs.row[in.reg]), static_cast<const bfloat16*>(first), count);
      value[k] = is_storage16(in.dtype) ? static_cast<const void*>(regs.row[in.reg]) : first;
      continue;
    }
    void* r = regs.row[in.reg];
    value[k] = r;
    const void* a = value[in.arg[0]];
    const void* b = arity(in.op) > 1 ? value[in.arg[1]] : a;
    const void* c = arity(in.op) > 2 ? value[in.arg[2]] : a;
    const DType a_dtype = p.code[in.arg[0]].dtype;
    const bool a_f32 = compute_dtype(a_dtype) == DType::f32;
    switch (in.op) {
      case Opcode::param:
      case Opcode::constant: {
        const double v = in.op == Opcode::param ? call.params[in.slot] : in.value;
        if (f32) block_eval::fill(static_cast<float*>(r), static_cast<float>(v), count);
        else block_eval::fill(static_cast<double*>(r), v, count);
        break;
      }
      case Opcode::cast:
        if (in.dtype == DType::f16 && a_f32) block_eval::round_to<half>(static_cast<float*>(r), static_cast<const float*>(a), count);
        else if (in.dtype == DType::f16) block_eval::round_to<half>(static_cast<float*>(r), static_cast<const double*>(a), count);
        else if (in.dtype == DType::bf16 && a_f32) block_eval::round_to<bfloat16>(static_cast<float*>(r), static_cast<const float*>(a), count);
        else if (in.dtype == DType::bf16) block_eval::round_to<bfloat16>(static_cast<float*>(r), static_cast<const double*>(a), count);
        else if (f32 && !a_f32) block_eval::convert(static_cast<float*>(r), static_cast<const double*>(a), count);
        else if (!f32 && a_f32) block_eval::convert(static_cast<double*>(r), static_cast<const float*>(a), count);
        else if (f32) block_eval::convert(static_cast<float*>(r), static_cast<const float*>(a), count);
        else block_eval::convert(static_cast<double*>(r), static_cast<const double*>(a), count);
        break;
      case Opcode::select:
        if (f32) {
          if (a_f32) block_eval::select(static_cast<float*>(r), static_cast<const float*>(a), static_cast<const float*>(b), static_cast<const float*>(c), count);
          else block_eval::select(static_cast<float*>(r), static_cast<const double*>(a), static_cast<const float*>(b), static_cast<const float*>(c), count);
        } else {
          if (a_f32) block_eval::select(static_cast<double*>(r), static_cast<const float*>(a), static_cast<const double*>(b), static_cast<const double*>(c), count);
          else block_eval::select(static_cast<double*>(r), static_cast<const double*>(a), static_cast<const double*>(b), static_cast<const double*>(c), count);
        }
        break;
      default:
        if (f32) block_eval::apply(in.op, static_cast<float*>(r), static_cast<const float*>(a), static_cast<const float*>(b), static_cast<const float*>(c), count);
        else block_eval::apply(in.op, static_cast<double*>(r), static_cast<const double*>(a), static_cast<const double*>(b), static_cast<const double*>(c), count);
    }
  }
  // Stores last: every computed value has read its inputs completely by now. An output
  // that is an input itself still reads memory, which an earlier output's store may
  // have overwritten in place (outputs {x1, x0} into the arrays of x0 and x1): then each
  // element's values are all read before any is stored.
  // (A 16-bit input is read into its register, so only f32 and f64 ones read memory here.)
  bool reads_memory = false;
  for (std::uint16_t o : p.outputs) reads_memory |= p.code[o].op == Opcode::input && !is_storage16(p.code[o].dtype);
  if (reads_memory) {
    for (std::size_t j = 0; j < count; ++j) {
      Value v[max_expr_outputs];  // copies, not conversions: a signaling NaN keeps its bits
      for (std::size_t k = 0; k < p.outputs.size(); ++k) {
        const std::uint16_t o = p.outputs[k];
        if (p.code[o].dtype == DType::f64) v[k].d = static_cast<const double*>(value[o])[j];
        else v[k].f = static_cast<const float*>(value[o])[j];
      }
      for (std::size_t k = 0; k < p.outputs.size(); ++k)
        store_value(p.code[p.outputs[k]].dtype, call.outputs[k], begin + j, v[k]);
    }
    return;
  }
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    const std::uint16_t o = p.outputs[k];
    if (is_storage16(p.code[o].dtype)) {
      const float* v = static_cast<const float*>(value[o]);
      if (p.code[o].dtype == DType::f16) {
        half* out = static_cast<half*>(call.outputs[k]) + begin;
        for (std::size_t j = 0; j < count; ++j) out[j] = half(v[j]);
      } else {
        bfloat16* out = static_cast<bfloat16*>(call.outputs[k]) + begin;
        for (std::size_t j = 0; j < count; ++j) out[j] = bfloat16(v[j]);
      }
    } else if (p.code[o].dtype == DType::f32) {
      const float* v = static_cast<const float*>(value[o]);
      float* out = static_cast<float*>(call.outputs[k]) + begin;
      for (std::size_t j = 0; j < count; ++j) out[j] = v[j];
    } else {
      const double* v = static_cast<const double*>(value[o]);
      double* out = static_cast<double*>(call.outputs[k]) + begin;
      for (std::size_t j = 0; j < count; ++j) out[j] = v[j];
    }
  }
}

}  // namespace ew::detail
