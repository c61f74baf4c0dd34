#pragma once
// The one representation of an expression that every backend reads: a flat program of
// typed instructions in evaluation order (each operand an earlier instruction), common
// subexpressions merged, with a register plan for evaluators that work block by block.
// The scalar reference walks it per element (element_eval.hpp); the CPU backends run it
// over L1-sized blocks; a code generator can emit one C++ statement per instruction.
// Instructions are plain data so that device code can read them from a copied array.
//
// 16-bit storage dtypes (f16, bf16) in a program, as inductor treats half: an
// instruction's dtype is the storage type its value would be stored as; the value itself
// is held and computed in compute_dtype(dtype) (f32 for f16 and bf16), every operation
// rounding in f32 as it does for f32 data. Rounding to 16 bits happens only where the
// program says so:
//   input of a 16-bit dtype   widens exactly (a NaN made quiet, payload kept) when read;
//   cast to a 16-bit dtype    rounds its operand once to the 16-bit type, from f32 or
//                             straight from f64 (even when the operand has that dtype:
//                             its value is an f32 that may not be representable);
//   cast from a 16-bit dtype  to f32 is the f32 value itself, to f64 exact;
//   output of a 16-bit dtype  rounds once when stored;
//   param of a 16-bit dtype   ExprCall::params holds the value already rounded to it;
//   constant of any dtype     `value` is already rounded to its compute dtype.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ew/expr.hpp"
#include "ew/types.hpp"

namespace ew::detail {

enum class Opcode : std::uint8_t {
  // leaves
  input,     // slot: input index
  param,     // slot: param index
  constant,  // value, already rounded to compute_dtype(dtype)
  // one operand
  cast, neg, abs, sqrt, floor, ceil, trunc, round, exp, log, tanh, sigmoid,
  // two operands
  add, sub, mul, div, min, max, lt, le, gt, ge, eq, ne,
  // three operands
  fma,     // a*b + c, one rounding
  select,  // a != 0 ? b : c
};
inline constexpr int opcode_count = static_cast<int>(Opcode::select) + 1;

// The dtype a value of dtype `d` is held and computed in.
constexpr DType compute_dtype(DType d) noexcept { return is_storage16(d) ? DType::f32 : d; }

// A number rounded once to d (an explicit cast, a param at the call): from double straight
// to 16 bits, never through f32.
inline double round_to_storage(DType d, double v) {
  switch (d) {
    case DType::f32: return static_cast<double>(static_cast<float>(v));
    case DType::f16: return static_cast<double>(static_cast<float>(half(v)));
    case DType::bf16: return static_cast<double>(static_cast<float>(bfloat16(v)));
    case DType::f64: break;
  }
  return v;
}

// The names the argument checks give a kernel's inputs.
inline constexpr const char* expr_input_names[] = {"input 0",  "input 1",  "input 2",  "input 3",  "input 4",
                                                   "input 5",  "input 6",  "input 7",  "input 8",  "input 9",
                                                   "input 10", "input 11", "input 12", "input 13", "input 14",
                                                   "input 15"};
static_assert(sizeof(expr_input_names) / sizeof(*expr_input_names) == max_expr_inputs);

const char* to_string(Opcode op) noexcept;
int arity(Opcode op) noexcept;  // operands read: 0..3

struct Instr {
  Opcode op;
  DType dtype;                 // of the result; operands of arithmetic share it, except cast's
                               // operand and the condition of select, which keep their own
  std::uint16_t arg[3];        // earlier instructions
  std::uint16_t slot;          // input or param index of a leaf
  std::uint16_t reg;           // block evaluators' register: none (0xffff) for f32 and f64 inputs, which
                               // they read in memory; a 16-bit input's is its widened block
  double value;                // constant
};

struct Program {
  std::vector<Instr> code;
  std::vector<std::uint16_t> outputs;  // instruction of each output
  int input_slots = 0;                 // 1 + the largest input index read
  int param_slots = 0;                 // 1 + the largest param index read
  std::vector<DType> input_dtype;      // per slot (meaningful where input_read)
  std::vector<bool> input_read;
  std::vector<DType> param_dtype;
  int registers = 0;                   // block registers the plan needs
  std::string canonical;               // one line per instruction: the cache key

  DType output_dtype(int k) const { return code[outputs[k]].dtype; }
};

// Builds the program of the outputs' graph; throws Error naming what is wrong
// (an empty Expr, a slot read with two dtypes, too many nodes).
Program compile_program(const std::vector<Expr>& outputs);

}  // namespace ew::detail
