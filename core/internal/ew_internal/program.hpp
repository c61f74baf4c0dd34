#pragma once
// The one representation of an expression that every backend reads: a flat program of
// typed instructions in evaluation order (each operand an earlier instruction), common
// subexpressions merged, with a register plan for evaluators that work block by block.
// The scalar reference walks it per element (element_eval.hpp); the CPU backends run it
// over L1-sized blocks; a code generator can emit one C++ statement per instruction.
// Instructions are plain data so that device code can read them from a copied array.
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
  constant,  // value, already rounded to dtype
  // one operand
  cast, neg, abs, sqrt, floor, ceil, trunc, round, exp, log, tanh, sigmoid,
  // two operands
  add, sub, mul, div, min, max, lt, le, gt, ge, eq, ne,
  // three operands
  fma,     // a*b + c, one rounding
  select,  // a != 0 ? b : c
};
inline constexpr int opcode_count = static_cast<int>(Opcode::select) + 1;

const char* to_string(Opcode op) noexcept;
int arity(Opcode op) noexcept;  // operands read: 0..3

struct Instr {
  Opcode op;
  DType dtype;                 // of the result; operands of arithmetic share it, except cast's
                               // operand and the condition of select, which keep their own
  std::uint16_t arg[3];        // earlier instructions
  std::uint16_t slot;          // input or param index of a leaf
  std::uint16_t reg;           // block evaluators' register (inputs and outputs read/write memory)
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
