#pragma once
// Expressions on a Kokkos device space (Cuda), where no code is generated: one
// parallel_for whose body walks the program. The program is translated on the host into
// DeviceInstr (parameters resolved to their values, every value given a register by a
// linear scan over its live range), so that the walk reads plain data and keeps only the
// values still live: a short register file per thread.
//
// Four shapes, chosen per call:
//   lanes    every value of one dtype, f32 or f64, up to `inline_instructions` instructions and
//            `inline_registers` registers (the common case): each thread takes groups of
//            16 bytes per operand (4 floats or 2 doubles) and runs every instruction on
//            all their elements at once, decoded once; inputs loaded first (16-byte
//            loads where every operand is 16-byte aligned at the head), the register
//            file in registers (constant indices through switches), a grid-stride loop
//            with 64-bit indices. The walk is an accumulator machine (LaneInstr, see
//            plan_for_lanes): constants are operands, not instructions, and a value read
//            only by the next instruction never enters the register file. With a file
//            of up to 4 registers the next iteration's inputs load before this one's
//            walk (floats: two groups a thread); larger files prefetch them to L2.
//   tiles    a lanes program with a transcendental step (exp, log, tanh, sigmoid) and a
//            file of one register, on devices fast behind each SM whose SMs hold its
//            blocks (TileExpr; EW_KOKKOS_TILES overrides, tiles_by_default): the file,
//            acc and the step's constant in shared memory, 4 groups a register, so that a
//            step is decoded once for 16 floats or 8 doubles and the exp chains run with
//            more warps beside them than the lanes walk's registers leave.
//   inline   other programs of that size (mixed dtypes, 16-bit data: widened when read,
//            rounded when stored, as element_eval.hpp does): one element per thread, the
//            program in the functor, the register file a small array indexed by register
//            number (local memory on Cuda).
//   general  anything larger (up to max_expr_nodes instructions, any number of live
//            values): the program in a View of the space, the register file a View of
//            `registers` rows by a fixed number of threads that stride over the elements.
//            Allocates per call and fences: the exception, not the rule.
// Every element goes through the operations of element_eval.hpp (the scalar reference),
// the four arithmetic operators through the kit's round-to-nearest forms, which nvcc never
// contracts into an fma: the bits are the scalar backend's.
//
// Written for Kokkos 3.4 (Serial; the CPU tests run every shape there through
// run_expr_per_element) and 4.x/5.x with Cuda.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_check.hpp"
#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/element_eval.hpp"
#include "resident_grid.hpp"

namespace ew::detail::kokkos {

// One instruction with register operands. Leaves: input reads inputs[slot][i]; param and
// constant become `value` (a param is converted to its dtype exactly as the reference does).
struct DeviceInstr {
  Opcode op;
  DType dtype;
  DType arg_dtype;  // of operand a: cast's source, select's condition
  std::uint8_t operands = 0;  // registers read: 0 for leaves
  std::uint16_t dst, a, b, c;  // registers; a is the slot of an input
  double value;
};

struct DevicePlan {
  std::vector<DeviceInstr> code;
  std::uint16_t out_reg[max_expr_outputs] = {};
  DType out_dtype[max_expr_outputs] = {};
  int outputs = 0;
  int registers = 0;
  int leading_inputs = 0;  // with inputs_first: code[0, leading_inputs) are the inputs
};

// A free register, or a new one (counted in `registers`).
inline std::uint16_t take_register(std::vector<std::uint16_t>& free_regs, int& registers) {
  if (free_regs.empty()) return static_cast<std::uint16_t>(registers++);
  const std::uint16_t r = free_regs.back();
  free_regs.pop_back();
  return r;
}

// Registers by live range: an instruction's register is free again after its last use
// (outputs live to the end). The destination never shares a register with an operand.
// `inputs_first`: the input instructions come first in `code`, input j in register j (the
// lane walk loads them all before it computes), then the rest in program order.
inline DevicePlan plan_for_device(const ExprCall& call, bool inputs_first = false) {
  const Program& p = *call.program;
  const int count = static_cast<int>(p.code.size());
  std::vector<int> order;
  for (int k = 0; k < count; ++k)
    if (inputs_first && p.code[k].op == Opcode::input) order.push_back(k);
  const int leading_inputs = static_cast<int>(order.size());
  for (int k = 0; k < count; ++k)
    if (!inputs_first || p.code[k].op != Opcode::input) order.push_back(k);
  std::vector<int> last_use(count, -1);
  for (int k = 0; k < count; ++k) {
    const Instr& in = p.code[k];
    if (in.op == Opcode::input || in.op == Opcode::param || in.op == Opcode::constant) continue;
    for (int j = 0; j < arity(in.op); ++j) last_use[in.arg[j]] = k;
  }
  for (std::uint16_t o : p.outputs) last_use[o] = count;
  DevicePlan plan;
  plan.code.resize(count);
  std::vector<std::uint16_t> reg(count), free_regs, unused_inputs;
  for (int at = 0; at < count; ++at) {
    const int k = order[at];
    if (at == leading_inputs) {  // registers of unread inputs are free once all are loaded
      free_regs.insert(free_regs.end(), unused_inputs.begin(), unused_inputs.end());
      unused_inputs.clear();
    }
    const Instr& in = p.code[k];
    DeviceInstr& d = plan.code[at];
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
      d.operands = static_cast<std::uint8_t>(n);
    }
    reg[k] = take_register(free_regs, plan.registers);
    d.dst = reg[k];
    if (in.op != Opcode::input && in.op != Opcode::param && in.op != Opcode::constant)
      for (int j = 0; j < arity(in.op); ++j) {
        const std::uint16_t a = in.arg[j];
        bool seen = false;  // an operand named twice (x*x) is freed once
        for (int i = 0; i < j; ++i) seen = seen || in.arg[i] == a;
        if (!seen && last_use[a] == k) free_regs.push_back(reg[a]);
      }
    if (last_use[k] < 0) (at < leading_inputs ? unused_inputs : free_regs).push_back(reg[k]);  // read by nothing
  }
  free_regs.insert(free_regs.end(), unused_inputs.begin(), unused_inputs.end());
  plan.leading_inputs = leading_inputs;
  plan.outputs = static_cast<int>(p.outputs.size());
  for (int k = 0; k < plan.outputs; ++k) {
    plan.out_reg[k] = reg[p.outputs[k]];
    plan.out_dtype[k] = p.code[p.outputs[k]].dtype;
  }
  return plan;
}

// The lane walk's form of a plan made with inputs_first. A register-file access costs the
// lane walk a switch (a compare tree, then a move per lane), several times the arithmetic of
// a cheap instruction, and each register of the file holds a whole group of lanes. So it is
// an accumulator machine: `acc` holds the previous instruction's result, constants are
// operands (one value per instruction) instead of instructions, and a result enters the
// file only when an instruction other than the next one, or an output, reads it. Those
// values and the inputs get registers of their own by a linear scan over their reads, so
// the file is small: one register per input for most formulas.
enum class LaneSource : std::uint8_t { acc, reg, value };

struct LaneInstr {
  Opcode op;
  std::uint8_t operands = 0;  // 0: the constant `value`
  LaneSource source[3] = {};
  std::uint16_t reg[3] = {};
  std::uint16_t dst = 0;
  bool keep = false;  // the result goes to register dst too
  double value = 0;   // for the operands whose source is `value`
};

struct LanePlan {
  std::vector<LaneInstr> code;  // after the inputs, which are loaded into registers 0..inputs-1
  std::uint16_t out_reg[max_expr_outputs] = {};
  bool out_acc[max_expr_outputs] = {};  // the last instruction's result: stored from acc
  int outputs = 0;
  int registers = 0;
};

inline LanePlan plan_for_lanes(const DevicePlan& plan) {
  const int count = static_cast<int>(plan.code.size());
  const int inputs = plan.leading_inputs;
  const auto operand_reg = [](const DeviceInstr& in, int j) { return j == 0 ? in.a : j == 1 ? in.b : in.c; };
  const auto same_bits = [](double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0; };
  // The instruction that produced each operand and output: its register's last writer.
  std::vector<int> writer(static_cast<std::size_t>(std::max(plan.registers, 1)), -1);
  std::vector<std::array<int, 3>> producer(count, {-1, -1, -1});
  for (int k = 0; k < count; ++k) {
    const DeviceInstr& in = plan.code[k];
    for (int j = 0; j < in.operands; ++j) producer[k][j] = writer[operand_reg(in, j)];
    writer[in.dst] = k;
  }
  std::vector<int> output_of(plan.outputs);
  for (int k = 0; k < plan.outputs; ++k) output_of[k] = writer[plan.out_reg[k]];
  const auto is_constant = [&](int k) { return k >= 0 && plan.code[k].op == Opcode::constant; };

  // Constants become operands; one still runs as an instruction where a reader already takes
  // another value, or where an output is the constant itself.
  std::vector<LaneInstr> lane(count);
  std::vector<bool> runs(count, false);
  for (int k = inputs; k < count; ++k) {
    const DeviceInstr& in = plan.code[k];
    LaneInstr& l = lane[k];
    l.op = in.op, l.operands = in.operands, l.value = in.value;
    runs[k] = in.op != Opcode::constant;
    bool has_value = false;
    for (int j = 0; j < in.operands; ++j) {
      const int p = producer[k][j];
      l.source[j] = LaneSource::reg;
      if (!is_constant(p)) continue;
      if (!has_value) l.value = plan.code[p].value, has_value = true;
      if (same_bits(l.value, plan.code[p].value)) l.source[j] = LaneSource::value;
      else runs[p] = true;
    }
  }
  for (int p : output_of)
    if (is_constant(p)) runs[p] = true;

  // The previous instruction's result comes from acc; what else is read comes from the file.
  std::vector<int> walk;
  for (int k = inputs; k < count; ++k)
    if (runs[k]) walk.push_back(k);
  const int steps = static_cast<int>(walk.size());
  const int last = steps > 0 ? walk.back() : -1;
  std::vector<int> last_read(count, -1);  // step of the last read from the file; steps: an output
  for (int w = 0; w < steps; ++w) {
    LaneInstr& l = lane[walk[w]];
    for (int j = 0; j < l.operands; ++j) {
      if (l.source[j] == LaneSource::value) continue;
      const int p = producer[walk[w]][j];
      if (w > 0 && p == walk[w - 1]) l.source[j] = LaneSource::acc;
      else last_read[p] = w;
    }
  }
  LanePlan out;
  out.outputs = plan.outputs;
  for (int k = 0; k < plan.outputs; ++k) {
    out.out_acc[k] = output_of[k] == last && last >= 0;
    if (!out.out_acc[k]) last_read[output_of[k]] = steps;
  }

  // Registers: input j in register j, then the kept results, each register free again
  // after its value's last read (a step reads its operands before it writes its result).
  std::vector<std::uint16_t> reg(count, 0), free_regs;
  out.registers = inputs;
  for (int j = inputs - 1; j >= 0; --j) {
    reg[j] = static_cast<std::uint16_t>(j);
    if (last_read[j] < 0) free_regs.push_back(reg[j]);
  }
  for (int w = 0; w < steps; ++w) {
    const int k = walk[w];
    LaneInstr& l = lane[k];
    for (int j = 0; j < l.operands; ++j) {
      if (l.source[j] != LaneSource::reg) continue;
      const int p = producer[k][j];
      l.reg[j] = reg[p];
      bool seen = false;  // an operand named twice (x*x) frees its register once
      for (int i = 0; i < j; ++i) seen = seen || (l.source[i] == LaneSource::reg && producer[k][i] == p);
      if (!seen && last_read[p] == w) free_regs.push_back(reg[p]);
    }
    l.keep = last_read[k] >= 0;
    if (l.keep) l.dst = reg[k] = take_register(free_regs, out.registers);
    out.code.push_back(l);
  }
  for (int k = 0; k < plan.outputs; ++k) out.out_reg[k] = out.out_acc[k] ? 0 : reg[output_of[k]];
  return out;
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
    Value& d = r(in.dst);
    switch (in.op) {
      case Opcode::input: d = load_value(in.dtype, inputs[in.a], i); break;  // 16-bit: widened
      case Opcode::constant: d = uniform_value(in.dtype, in.value); break;
      case Opcode::cast: d = cast_value(in.dtype, in.arg_dtype, r(in.a)); break;
      case Opcode::select: {
        const bool take = as_double(r(in.a), in.arg_dtype) != 0.0;  // NaN != 0: true
        d = take ? r(in.b) : r(in.c);
        break;
      }
      default:  // in the compute dtype: float for f32 and the 16-bit types
        if (in.dtype == DType::f64) d.d = arithmetic<double>(in.op, r(in.a).d, r(in.b).d, r(in.c).d);
        else d.f = arithmetic<float>(in.op, r(in.a).f, r(in.b).f, r(in.c).f);
    }
  }
  // Stores last: every value of this element is computed, so an output written in place
  // over an input of another output cannot change what that output reads. A 16-bit
  // output rounds here.
  for (int k = 0; k < outputs; ++k) store_value(out_dtype[k], out[k], i, r(out_reg[k]));
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

#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
#define EW_KOKKOS_UNROLL _Pragma("unroll")
#else
#define EW_KOKKOS_UNROLL
#endif

// A 16-byte word of shared memory: the staged walk's copies, the tile walk's tiles (on a host
// space, the tests', a word of the thread's own).
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
using TileWord = uint4;
#else
struct alignas(16) TileWord {
  std::uint32_t x, y, z, w;
};
#endif

// The lane walk: programs whose every value has one dtype T, up to inline_instructions
// instructions and inline_registers live values. Each thread takes U groups of G elements
// (16 bytes of each operand per group) and runs the program on all of them in lockstep:
// every instruction is decoded once for U*G elements. The register file is R named
// lane vectors reached through switches over constant indices (get/set), so nvcc keeps
// it in registers; a run-time index into an array would put it in local memory.
namespace lanes {

template <class T, int U>
struct Lanes {
  static constexpr int G = 16 / static_cast<int>(sizeof(T));
  static constexpr int L = G * U;
  T v[L];
};

// Where this thread's groups start and how many of their elements exist (G, fewer at the
// edges of the array, 0 past its end). `whole`: every group is whole and 16-byte aligned,
// the common case, which then costs no per-group test.
template <int U>
struct Groups {
  std::int64_t base[U];
  int valid[U];
  bool whole;
};

// Where the U groups of G elements of the iteration starting at unit `first` are (valid 0
// past the end) for a walk's functor f (LaneExpr, TileExpr) of f.threads threads: unit w <
// f.groups is the whole group at f.head + w*G; unit f.groups is the head (elements before
// output 0's first 16-byte boundary), unit f.groups + 1 the tail (after the last whole group).
// The fields are read from the functor where they are (the kernel's parameters): copied into
// arguments first, they changed the lane walks' machine code.
// `stride`: the units between a thread's groups (f.threads when every thread owns a share of
// the array; 32 when a warp takes a piece of it, TileExpr::take_pieces).
template <int G, int U, class F>
KOKKOS_INLINE_FUNCTION Groups<U> groups_at(const F& f, std::int64_t first, std::int64_t stride) {
  Groups<U> at;
  at.whole = f.vector && first + (U - 1) * stride < f.groups;
  if (at.whole) {
    EW_KOKKOS_UNROLL
    for (int u = 0; u < U; ++u) at.base[u] = f.head + (first + u * stride) * G, at.valid[u] = G;
    return at;
  }
  EW_KOKKOS_UNROLL
  for (int u = 0; u < U; ++u) {
    const std::int64_t w = first + u * stride;
    at.base[u] = w < f.groups ? f.head + w * G : w == f.groups ? 0 : f.head + f.groups * G;
    at.valid[u] = w < f.groups                ? G
                  : w == f.groups             ? static_cast<int>(f.head)
                  : w == f.groups + 1         ? static_cast<int>(f.tail)
                                              : 0;
  }
  return at;
}

// Copies of 16 bytes from global to shared memory that the copy unit completes on its own
// (sm_80+): bytes in flight that hold no register until they are read. `wait<N>`: all but
// the last N committed batches have landed (visible to this thread, which issued them).
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define EW_KOKKOS_ASYNC_COPY 1
KOKKOS_FORCEINLINE_FUNCTION void copy_async(void* shared, const void* global) {
  const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
}
KOKKOS_FORCEINLINE_FUNCTION void commit_copies() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
KOKKOS_FORCEINLINE_FUNCTION void wait_copies() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
#else
#define EW_KOKKOS_ASYNC_COPY 0
#endif

// Group u of x from or to q, as one 16-byte move.
template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION void move_in(Lanes<T, U>& x, int u, const T* q) {
  constexpr int G = Lanes<T, U>::G;
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4) {
    const float4 w = __ldcs(reinterpret_cast<const float4*>(q));
    x.v[u * G] = w.x, x.v[u * G + 1] = w.y, x.v[u * G + 2] = w.z, x.v[u * G + 3] = w.w;
  } else {
    const double2 w = __ldcs(reinterpret_cast<const double2*>(q));
    x.v[u * G] = w.x, x.v[u * G + 1] = w.y;
  }
#else
  for (int g = 0; g < G; ++g) x.v[u * G + g] = q[g];
#endif
}

// Group u of x from a word of shared memory, taken by value: one 16-byte load (memcpy from a
// reference into shared memory was compiled as 16 byte loads).
template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION void word_in(Lanes<T, U>& x, int u, const TileWord w) {
  constexpr int G = Lanes<T, U>::G;
  T v[G];
  std::memcpy(v, &w, sizeof w);
  EW_KOKKOS_UNROLL
  for (int g = 0; g < G; ++g) x.v[u * G + g] = v[g];
}

template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION TileWord word_out(const Lanes<T, U>& x, int u) {
  constexpr int G = Lanes<T, U>::G;
  T v[G];
  EW_KOKKOS_UNROLL
  for (int g = 0; g < G; ++g) v[g] = x.v[u * G + g];
  TileWord w;
  std::memcpy(&w, v, sizeof w);
  return w;
}

template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION void move_out(T* q, const Lanes<T, U>& x, int u) {
  constexpr int G = Lanes<T, U>::G;
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    __stcs(reinterpret_cast<float4*>(q), make_float4(x.v[u * G], x.v[u * G + 1], x.v[u * G + 2], x.v[u * G + 3]));
  else
    __stcs(reinterpret_cast<double2*>(q), make_double2(x.v[u * G], x.v[u * G + 1]));
#else
  for (int g = 0; g < G; ++g) q[g] = x.v[u * G + g];
#endif
}

template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION void load(Lanes<T, U>& x, const T* p, const Groups<U>& at, bool vector) {
  constexpr int G = Lanes<T, U>::G;
  if (at.whole) {
    EW_KOKKOS_UNROLL
    for (int u = 0; u < U; ++u) move_in(x, u, p + at.base[u]);
    return;
  }
  EW_KOKKOS_UNROLL
  for (int u = 0; u < U; ++u) {
    const T* q = p + at.base[u];
    if (vector && at.valid[u] == G) {
      move_in(x, u, q);
    } else {
      EW_KOKKOS_UNROLL
      for (int g = 0; g < G; ++g) x.v[u * G + g] = g < at.valid[u] ? q[g] : T(0);
    }
  }
}

template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION void store(T* p, const Lanes<T, U>& x, const Groups<U>& at, bool vector) {
  constexpr int G = Lanes<T, U>::G;
  if (at.whole) {
    EW_KOKKOS_UNROLL
    for (int u = 0; u < U; ++u) move_out(p + at.base[u], x, u);
    return;
  }
  EW_KOKKOS_UNROLL
  for (int u = 0; u < U; ++u) {
    T* q = p + at.base[u];
    if (vector && at.valid[u] == G) {
      move_out(q, x, u);
    } else {
      EW_KOKKOS_UNROLL
      for (int g = 0; g < G; ++g)
        if (g < at.valid[u]) q[g] = x.v[u * G + g];
    }
  }
}

// A hint that costs no register: the line comes towards L2 while this thread computes.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION void prefetch(const T* p) {
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

#define EW_KOKKOS_FOUR(X) X(0) X(1) X(2) X(3)
#define EW_KOKKOS_EIGHT(X) EW_KOKKOS_FOUR(X) X(4) X(5) X(6) X(7)
#define EW_KOKKOS_SIXTEEN(X) EW_KOKKOS_EIGHT(X) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
static_assert(inline_registers == 16, "get and set name sixteen registers");

template <class T, int U, int R>
struct Registers {
  static_assert(R <= inline_registers, "");
  Lanes<T, U> r[R];

  // By value, through constant indices only: a reference or a run-time index would take
  // the array's address and move it to local memory.
  // Only R cases, so that the switch is a short tree.
  KOKKOS_FORCEINLINE_FUNCTION Lanes<T, U> get(int k) const {
#define EW_KOKKOS_GET(j) \
  case j: return r[(j) % R];
    if constexpr (R <= 4) {
      switch (k) {
        EW_KOKKOS_FOUR(EW_KOKKOS_GET)
        default: return r[0];
      }
    } else if constexpr (R <= 8) {
      switch (k) {
        EW_KOKKOS_EIGHT(EW_KOKKOS_GET)
        default: return r[0];
      }
    } else {
      switch (k) {
        EW_KOKKOS_SIXTEEN(EW_KOKKOS_GET)
        default: return r[0];
      }
    }
#undef EW_KOKKOS_GET
  }
  KOKKOS_FORCEINLINE_FUNCTION void set(int k, const Lanes<T, U>& v) {
#define EW_KOKKOS_SET(j) \
  case j: r[(j) % R] = v; break;
    if constexpr (R <= 4) {
      switch (k) {
        EW_KOKKOS_FOUR(EW_KOKKOS_SET)
        default: break;
      }
    } else if constexpr (R <= 8) {
      switch (k) {
        EW_KOKKOS_EIGHT(EW_KOKKOS_SET)
        default: break;
      }
    } else {
      switch (k) {
        EW_KOKKOS_SIXTEEN(EW_KOKKOS_SET)
        default: break;
      }
    }
#undef EW_KOKKOS_SET
  }
};

template <Opcode O, class T, int U>
KOKKOS_FORCEINLINE_FUNCTION void apply(Lanes<T, U>& d, const Lanes<T, U>& a, const Lanes<T, U>& b,
                                       const Lanes<T, U>& c) {
  EW_KOKKOS_UNROLL
  for (int l = 0; l < Lanes<T, U>::L; ++l) d.v[l] = device_eval::arithmetic<T>(O, a.v[l], b.v[l], c.v[l]);
}

// The constant's lanes are filled here, not by `broadcast` (the same loop, below): calling it
// changed two lane walks' machine code, and silu f64 on the one-register double walk read
// 0.7-1.7 % slower (H100, bench/cuda/results/h100-2026-11-27-walks-operand-ab).
template <class T, int U, int R>
KOKKOS_FORCEINLINE_FUNCTION Lanes<T, U> operand(LaneSource source, std::uint16_t reg, double value,
                                                const Lanes<T, U>& acc, const Registers<T, U, R>& regs) {
  if (source == LaneSource::acc) return acc;
  if (source == LaneSource::reg) return regs.get(reg);
  Lanes<T, U> v;
  const T x = static_cast<T>(value);
  EW_KOKKOS_UNROLL
  for (int l = 0; l < Lanes<T, U>::L; ++l) v.v[l] = x;
  return v;
}

// The unary and binary opcodes a walk's step applies, one list for the lane and the tile walk's
// switches (an opcode missing from one would run as a cast through its `default`).
#define EW_KOKKOS_STEP_OPCODES(UNARY, BINARY)                                                      \
  UNARY(neg) UNARY(abs) UNARY(sqrt) UNARY(floor) UNARY(ceil) UNARY(trunc) UNARY(round) UNARY(exp) \
  UNARY(log) UNARY(tanh) UNARY(sigmoid) BINARY(add) BINARY(sub) BINARY(mul) BINARY(div)           \
  BINARY(min) BINARY(max) BINARY(lt) BINARY(le) BINARY(gt) BINARY(ge) BINARY(eq) BINARY(ne)

// One instruction (not an input: those are loaded before the walk) on every lane; its
// result replaces acc. The opcode is decided first and each case fetches only the operands
// it reads: a shared fetch of three operands would copy a group of lanes for every operand
// an instruction does not have.
template <class T, int U, int R>
KOKKOS_FORCEINLINE_FUNCTION void step(const LaneInstr& in, Lanes<T, U>& acc, Registers<T, U, R>& regs) {
  using V = Lanes<T, U>;
  const auto x = [&](int j) { return operand(in.source[j], in.reg[j], in.value, acc, regs); };
  switch (in.op) {
    case Opcode::constant: acc = operand(LaneSource::value, 0, in.value, acc, regs); break;
    case Opcode::select: {
      const V a = x(0), b = x(1), c = x(2);
      EW_KOKKOS_UNROLL
      for (int l = 0; l < V::L; ++l) acc.v[l] = a.v[l] != T(0) ? b.v[l] : c.v[l];  // NaN != 0: true
      break;
    }
    case Opcode::fma: {
      const V a = x(0), b = x(1), c = x(2);
      apply<Opcode::fma>(acc, a, b, c);
      break;
    }
#define EW_KOKKOS_UNARY(name)       \
  case Opcode::name: {              \
    const V a = x(0);               \
    apply<Opcode::name>(acc, a, a, a); \
    break;                          \
  }
#define EW_KOKKOS_BINARY(name)      \
  case Opcode::name: {              \
    const V a = x(0), b = x(1);     \
    apply<Opcode::name>(acc, a, b, a); \
    break;                          \
  }
      EW_KOKKOS_STEP_OPCODES(EW_KOKKOS_UNARY, EW_KOKKOS_BINARY)
#undef EW_KOKKOS_UNARY
#undef EW_KOKKOS_BINARY
    default: acc = x(0);  // cast: every value has dtype T, so the value itself
  }
  if (in.keep) regs.set(in.dst, acc);
}

}  // namespace lanes

// Float files of two registers on Cuda (sm_80+) can take their inputs through shared memory:
// each thread keeps the inputs of its next `staged_depth - 1` iterations in flight as
// asynchronous copies into slots of its own and reads an iteration's slot into registers
// only when it walks it. In the register path the next iteration's inputs wait in
// registers, which kept clamp at 94 registers and 2 blocks an SM: 32 KiB in flight an SM.
// Staged, the walk takes 70 registers and 3 blocks (32 KiB of shared memory each, with
// Kokkos's own 1 KiB within the 48 KiB a block may have), and pays for it in instructions
// (the slots' reads, the copies' bookkeeping). Which one wins depends on the bandwidth an SM
// must keep fed (kokkos_variants.sh, clamp f32 kokkos/cuda at 2^26): on the H200 (36.5 GB/s
// of spec bandwidth per SM) staged 0.89 against 0.82 in registers (2026-11-24); on the H100
// (25.4 GB/s per SM) 0.85 against 0.89 (2026-11-26). So the walk is staged on devices of at
// least `staged_bandwidth_per_sm` (between the two: two points, not a model). Doubles lost
// staged on the H200 (80 registers and 16 bytes of stack at 3 blocks: clamp f64 0.90 -> 0.86),
// and so did files of one register (relu 0.94 -> 0.88 at depth 4 or 5): both keep the
// register path. EW_KOKKOS_STAGED (kokkos_variants.sh): 0 the register path everywhere, 1
// staged everywhere, 2 (default) by the device's bandwidth per SM.
#ifndef EW_KOKKOS_STAGED
#define EW_KOKKOS_STAGED 2
#endif
#ifndef EW_KOKKOS_STAGED_DEPTH
#define EW_KOKKOS_STAGED_DEPTH 2
#endif
inline constexpr int staged_depth = EW_KOKKOS_STAGED_DEPTH;
inline constexpr int staged_blocks = 3;
inline constexpr double staged_bandwidth_per_sm = 30e9;  // bytes/s
template <class T, int R>
inline constexpr bool stageable = EW_KOKKOS_STAGED != 0 && R == 2 && sizeof(T) == 4;

// The shared memory an SM must have for the tile walk's resident blocks (TileExpr, tile_blocks).
inline constexpr std::size_t tile_shared_per_sm = std::size_t(186) << 10;

// What the walks ask of a Cuda device, asked once per device (two threads asking at once both
// get the same answer; no lock on the call's path): whether it is fast behind each SM (spec
// bandwidth, memory clock x bus width x 2, per SM, at least staged_bandwidth_per_sm; sm_80+,
// which has asynchronous copies) and whether its SMs' shared memory holds the tile walk's
// resident blocks (tile_shared_per_sm).
struct DeviceFacts {
  bool fast_per_sm = false, tiles_fit = false;
};

template <class Exec>
DeviceFacts device_facts(const Exec& exec) {
  DeviceFacts facts;
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
    constexpr int devices = 64;
    static std::atomic<int> known[devices] = {};  // 0: not asked yet, else 1 + the facts' bits
    const int device = exec.cuda_device();
    const bool cached = device >= 0 && device < devices;
    if (cached)
      if (const int k = known[device].load(std::memory_order_relaxed)) return {((k - 1) & 1) != 0, ((k - 1) & 2) != 0};
    int clock_khz = 0, bus_bits = 0, sms = 0, major = 0, shared_per_sm = 0;
    const bool asked = cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
                       cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess;
    const bool asked_shared =
        cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device) == cudaSuccess;
    if (!asked || !asked_shared) (void)cudaGetLastError();
    const double per_sm = asked && sms > 0 ? 1e3 * clock_khz * 2.0 * bus_bits / 8.0 / sms : 0.0;
    facts.fast_per_sm = asked && major >= 8 && per_sm >= staged_bandwidth_per_sm;
    facts.tiles_fit = asked_shared && std::size_t(shared_per_sm) >= tile_shared_per_sm;
    if (cached) known[device].store(1 + (facts.fast_per_sm ? 1 : 0) + (facts.tiles_fit ? 2 : 0), std::memory_order_relaxed);
  }
#endif
  (void)exec;
  return facts;
}

// Whether stageable walks on `exec` are staged: on devices fast behind each SM (before sm_80
// there are no asynchronous copies: such a walk would run the register path at the staged
// walk's 3 blocks, spilling).
template <class Exec>
bool staged_on(const Exec& exec) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>)
    if (EW_KOKKOS_STAGED != 2) return EW_KOKKOS_STAGED == 1;
#endif
  return device_facts(exec).fast_per_sm;
}

// The lane walk's functor: work unit w < groups is the whole group at head + w*G; unit
// `groups` is the head (elements before output 0's first 16-byte boundary), unit
// groups + 1 the tail (after the last whole group). Thread t takes units t, t + threads,
// ... U at a time: a grid-stride loop over a grid sized to what the device holds.
template <class T, int U, int R, bool Staged = false>
struct LaneExpr {
  using value_type = T;
  static constexpr int G = lanes::Lanes<T, U>::G;
  LaneInstr code[inline_instructions];  // after the inputs
  std::uint16_t out_reg[max_expr_outputs];
  bool out_acc[max_expr_outputs];
  const T* in[inline_registers];  // input j goes to register j
  T* out[max_expr_outputs];
  int count, inputs, outputs;
  std::int64_t head, groups, tail, threads;
  bool vector;  // every operand 16-byte aligned at the head: whole groups as 16-byte moves

  KOKKOS_INLINE_FUNCTION lanes::Groups<U> groups_at(std::int64_t first) const {
    return lanes::groups_at<G, U>(*this, first, threads);
  }

  KOKKOS_INLINE_FUNCTION void walk(lanes::Registers<T, U, R>& regs, const lanes::Groups<U>& at) const {
    lanes::Lanes<T, U> acc{};
    for (int k = 0; k < count; ++k) lanes::step(code[k], acc, regs);
    // Stores last: an output written in place over another output's input is read first.
    for (int k = 0; k < outputs; ++k) lanes::store(out[k], out_acc[k] ? acc : regs.get(out_reg[k]), at, vector);
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
    const std::int64_t units = groups + 2, stride = threads * U;
#if EW_KOKKOS_ASYNC_COPY
    if constexpr (Staged) {
      staged(t, units, stride);
      return;
    }
#endif
    if constexpr (R <= 4) {
      // A small file leaves registers for the next iteration's inputs: they are loaded
      // before this iteration's walk, so a warp's loads are in flight while it computes.
      // (Another iteration's groups are other elements: operands are identical or disjoint.)
      lanes::Groups<U> at = groups_at(t);
      lanes::Registers<T, U, R> regs;
      EW_KOKKOS_UNROLL
      for (int j = 0; j < R; ++j)
        if (j < inputs) lanes::load(regs.r[j], in[j], at, vector);
      for (std::int64_t first = t; first < units; first += stride) {
        const lanes::Groups<U> next = groups_at(first + stride);
        lanes::Lanes<T, U> ahead[R];
        EW_KOKKOS_UNROLL
        for (int j = 0; j < R; ++j)
          if (j < inputs) lanes::load(ahead[j], in[j], next, vector);
        walk(regs, at);
        EW_KOKKOS_UNROLL
        for (int j = 0; j < R; ++j) regs.r[j] = ahead[j];
        at = next;
      }
    } else {
      for (std::int64_t first = t; first < units; first += stride) {
        const lanes::Groups<U> at = groups_at(first);
        // The next two iterations' inputs: loads in flight while the walk runs, without registers.
        EW_KOKKOS_UNROLL
        for (int u = 0; u < U; ++u) {
          EW_KOKKOS_UNROLL
          for (int ahead = 1; ahead <= 2; ++ahead) {
            const std::int64_t later = first + u * threads + ahead * stride;
            if (later < groups)
              for (int j = 0; j < inputs; ++j) lanes::prefetch(in[j] + head + later * G);
          }
        }
        lanes::Registers<T, U, R> regs;
        EW_KOKKOS_UNROLL
        for (int j = 0; j < R; ++j)
          if (j < inputs) lanes::load(regs.r[j], in[j], at, vector);
        walk(regs, at);
      }
    }
  }

#if EW_KOKKOS_ASYNC_COPY
  // The walk of iteration k (units t + k*stride) with iterations k+1 .. k+D-1 in flight. A
  // slot holds an iteration's groups, slot-major so that a warp's 16-byte reads of one
  // group are adjacent (no bank conflicts). Iterations that are not whole groups (the array's
  // edges, unaligned operands) read global memory directly, as the register path does.
  // LaunchBounds<256, ...> keeps a block within the ring's 256 threads.
  KOKKOS_FORCEINLINE_FUNCTION void staged(std::int64_t t, std::int64_t units, std::int64_t stride) const {
    constexpr int D = staged_depth, block = 256, per_slot = R * U;
    __shared__ uint4 ring[D * per_slot * block];
    const int me = static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    const auto at_slot = [&](int slot, int j, int u) -> uint4* { return ring + ((slot * R + j) * U + u) * block + me; };
    const auto issue = [&](std::int64_t first, int slot) {
      if (first < units) {
        const lanes::Groups<U> at = groups_at(first);
        if (at.whole) {
          EW_KOKKOS_UNROLL
          for (int j = 0; j < R; ++j) {
            if (j >= inputs) continue;
            EW_KOKKOS_UNROLL
            for (int u = 0; u < U; ++u) lanes::copy_async(at_slot(slot, j, u), in[j] + at.base[u]);
          }
        }
      }
      lanes::commit_copies();  // an empty batch too: every iteration is one batch
    };
    EW_KOKKOS_UNROLL
    for (int k = 0; k < D - 1; ++k) issue(t + k * stride, k);
    int slot = 0;
    for (std::int64_t first = t; first < units; first += stride) {
      issue(first + (D - 1) * stride, (slot + D - 1) % D);
      lanes::wait_copies<D - 1>();
      const lanes::Groups<U> at = groups_at(first);
      lanes::Registers<T, U, R> regs;
      EW_KOKKOS_UNROLL
      for (int j = 0; j < R; ++j) {
        if (j >= inputs) continue;
        if (at.whole) {
          EW_KOKKOS_UNROLL
          for (int u = 0; u < U; ++u) lanes::word_in(regs.r[j], u, *at_slot(slot, j, u));
        } else {
          lanes::load(regs.r[j], in[j], at, vector);
        }
      }
      walk(regs, at);
      slot = (slot + 1) % D;
    }
    lanes::wait_copies<0>();  // nothing of this thread's left in flight when it returns
  }
#endif
};

// The tile walk: programs with transcendental steps (exp, log, tanh, sigmoid) whose file
// holds one or two registers. Where such a formula is bound by instruction issue (silu on an
// H200: cuda's own kernel at 84-87 % of the issue slots), the lane walk's cost a step (the
// instruction's fields, two compare trees, 16 moves of its lanes between registers) weighs
// on every 8 floats, and its 78-80 registers leave a third of the warps to hide the exp
// chains. Here each thread keeps its file, acc and the constants of the step in shared
// memory: `tile_groups` groups of 16 bytes a register (16 floats, 8 doubles), so a step is
// decoded once for those elements and its operands are addresses, not register merges. A
// step reads two groups of each operand into registers, computes them, writes acc's two
// groups, and so on over the tile. No thread reads another's words: no barrier. On a host
// space (tests) the tile is an array of the thread's own.
#ifndef EW_KOKKOS_TILE_GROUPS
#define EW_KOKKOS_TILE_GROUPS 4
#endif
inline constexpr int tile_groups = EW_KOKKOS_TILE_GROUPS;
// How the tile walk's warps share a large array on Cuda (TileExpr<T, R, true>): as they come
// (take_pieces), a piece of 32 threads' U groups (2 KiB of each input) after another,
// `tile_grab` pieces to an atomic (2 the one count measured, not compared with 1 or 4). With
// a fixed share a thread, the warps that an SM's scheduler favours run out of work first and
// leave the rest fewer warps to hide their latencies behind: 26.5 of the 32 resident warps
// active on average and no warp ready in 27 % of the cycles (ncu, silu f32 at 2^26, H200);
// taken as they come, 31.4 and 20 %, and silu 0.80-0.84 -> 0.83-0.93 of cuda in f32 and
// 0.65-0.74 -> 0.72-0.80 in f64 at 2^24..2^28 (bench/cuda/results/h200-2026-11-27-tile-queue).
// Sharing a block's work among its warps alone changed nothing: whole blocks ran out early.
inline constexpr int tile_grab = 2;
// ... from tile_queue_shares fixed shares a thread up. Below, the fixed shares (TileExpr<T, R,
// false>): there the queue's atomics, all on one address, cost more than it balances (silu
// f32 at 2^22, 1.9 shares a thread: 0.54 of cuda against 0.67; at 2^20 0.45 against 0.53; at
// 2^24, 7.8 shares, 0.84 against 0.80). A warp a piece in a grid of several waves, and the
// queue's atomics spread over 8 counters, both read 0.60 at 2^22 and lost at 2^24..2^28 too.
inline constexpr int tile_queue_shares = 4;
inline constexpr int tile_block = 128;  // threads a block (LaunchBounds), the words' stride
// Resident blocks an SM asked for: 8 for floats (64 registers), 7 for doubles (72: at 64 the
// double walk spilled 40 bytes and silu f64 read 0.64 of cuda against 0.71 at 6 blocks; 7
// keeps the 72 registers that 6 compiled to: level at 2^26, 2-4 % faster at 2^24 and 2^28, H200).
// More blocks lost: floats at 9 (56 registers, 8 bytes spilled) level, two groups a register
// with 10-12 float or 8 double blocks 0.59-0.72 (bench/cuda/results/h200-2026-11-27-tile-blocks).
#ifndef EW_KOKKOS_TILE_BLOCKS_F32
#define EW_KOKKOS_TILE_BLOCKS_F32 8
#endif
#ifndef EW_KOKKOS_TILE_BLOCKS_F64
#define EW_KOKKOS_TILE_BLOCKS_F64 7
#endif
// Each block also takes its tiles (TileExpr::words a thread), the kernel's other 1 KiB of
// static shared memory (cuobjdump) and the 1 KiB the hardware reserves a block: at most as
// many blocks as tile_shared_per_sm holds (two registers: 6), which the tile walk checks of
// the device (device_facts; 228 KiB on the H100 and H200). Kokkos finds no block size for a
// walk whose blocks cannot all be resident, and divides by it.
// A thread's words: R registers' tiles, acc's tile, a word for the step's constant (every
// constant operand of a step is its one `value`).
template <int R>
inline constexpr int tile_words = (R + 1) * tile_groups + 1;
inline constexpr std::size_t tile_block_bytes(int words) {
  return std::size_t(words) * sizeof(TileWord) * tile_block + 2048;
}
template <class T, int R>
inline constexpr int tile_blocks =
    std::min<int>(sizeof(T) == 4 ? EW_KOKKOS_TILE_BLOCKS_F32 : EW_KOKKOS_TILE_BLOCKS_F64,
                  static_cast<int>(tile_shared_per_sm / tile_block_bytes(tile_words<R>)));

namespace lanes {

template <class T, int U>
KOKKOS_FORCEINLINE_FUNCTION Lanes<T, U> broadcast(double value) {
  Lanes<T, U> v;
  const T x = static_cast<T>(value);
  EW_KOKKOS_UNROLL
  for (int l = 0; l < Lanes<T, U>::L; ++l) v.v[l] = x;
  return v;
}

// acc's tile = O(operands' tiles), two groups at a time: their loads come before the stores
// (an operand may be acc itself), so the two groups' chains run side by side.
template <Opcode O, int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void tile_apply(TileWord* acc, int stride, const TileWord* const* p, const int* pitch) {
  using V = Lanes<T, 2>;
  static_assert(tile_groups % 2 == 0, "two groups at a time");
  EW_KOKKOS_UNROLL
  for (int u = 0; u < tile_groups; u += 2) {
    V x[N], r;
    EW_KOKKOS_UNROLL
    for (int j = 0; j < N; ++j) {
      word_in(x[j], 0, p[j][u * pitch[j]]);
      word_in(x[j], 1, p[j][(u + 1) * pitch[j]]);
    }
    if constexpr (O == Opcode::select) {
      EW_KOKKOS_UNROLL
      for (int l = 0; l < V::L; ++l) r.v[l] = x[0].v[l] != T(0) ? x[1].v[l] : x[2].v[l];  // NaN != 0: true
    } else if constexpr (O == Opcode::cast) {  // every value has dtype T: the value itself
      r = x[0];
    } else {
      apply<O>(r, x[0], x[N > 1 ? 1 : 0], x[N > 2 ? 2 : 0]);
    }
    acc[u * stride] = word_out(r, 0);
    acc[(u + 1) * stride] = word_out(r, 1);
  }
}

}  // namespace lanes

// The queued kernel's counters (TileExpr<T, R, true>); the fixed-share kernel has none.
template <bool Queue>
struct TileQueue {
  unsigned long long* queue;  // the WalkQueue's counters (Cuda only)
};
template <>
struct TileQueue<false> {};

template <class T, int R, bool Queue>
struct TileExpr : TileQueue<Queue> {
  using value_type = T;
  static constexpr int G = 16 / static_cast<int>(sizeof(T)), U = tile_groups;
  static constexpr int words = tile_words<R>;
  static constexpr bool queued = Queue;
  static_assert(words * sizeof(TileWord) * tile_block <= (48 << 10), "a block's static shared memory is at most 48 KiB");
  static_assert(tile_blocks<T, R> >= 1, "the SM must hold a block of the walk");
  LaneInstr code[inline_instructions];
  std::uint16_t out_reg[max_expr_outputs];
  bool out_acc[max_expr_outputs];
  const T* in[inline_registers];
  T* out[max_expr_outputs];
  int count, inputs, outputs;
  std::int64_t head, groups, tail, threads;
  bool vector;

  KOKKOS_INLINE_FUNCTION lanes::Groups<U> groups_at(std::int64_t first) const {
    return lanes::groups_at<G, U>(*this, first, threads);
  }

  KOKKOS_INLINE_FUNCTION void operator()(std::int64_t t) const {
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
    __shared__ TileWord tiles[words * tile_block];
    const int me = static_cast<int>(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
    TileWord* const base = tiles + me;
    constexpr int stride = tile_block;
#else
    TileWord own[words * 2];  // every other word: a stride as on the device, which tests then check
    TileWord* const base = own;
    constexpr int stride = 2;
#endif
    TileWord* const acc = base + R * U * stride;
    const auto tile = [&](int k) { return base + k * U * stride; };
    const auto walk = [&](const lanes::Groups<U>& at) {
      for (int j = 0; j < inputs; ++j) {
        lanes::Lanes<T, U> x;
        lanes::load(x, in[j], at, vector);
        EW_KOKKOS_UNROLL
        for (int u = 0; u < U; ++u) tile(j)[u * stride] = lanes::word_out(x, u);
      }
      for (int k = 0; k < count; ++k) step(code[k], base, acc, stride);
      // Stores last: an output written in place over another output's input is read first.
      for (int k = 0; k < outputs; ++k) {
        const TileWord* from = out_acc[k] ? acc : tile(out_reg[k]);
        lanes::Lanes<T, U> x;
        EW_KOKKOS_UNROLL
        for (int u = 0; u < U; ++u) lanes::word_in(x, u, from[u * stride]);
        lanes::store(out[k], x, at, vector);
      }
    };
    const std::int64_t units = groups + 2;
#if defined(KOKKOS_ENABLE_CUDA) && defined(__CUDA_ARCH__)
    if constexpr (Queue)
      take_pieces(me % 32, units, walk);
    else
#endif
      for (std::int64_t first = t; first < units; first += threads * U) walk(groups_at(first));
  }

#if defined(KOKKOS_ENABLE_CUDA)
  // Piece c of the array is the units [c*32*U, (c+1)*32*U); lane l walks its groups
  // c*32*U + u*32 + l (a warp's 16-byte loads of group u side by side). A warp takes
  // tile_grab pieces at a time from queue[0] until an atomic finds them gone, then counts
  // itself done in queue[1]; the last warp done sets both to zero for the next call on the
  // stream. The fences order each warp's last atomic on queue[0] before its count, and the
  // last count before the reset.
  template <class Walk>
  __device__ void take_pieces(int lane, std::int64_t units, const Walk& walk) const {
    const unsigned long long pieces = static_cast<unsigned long long>((units + 32 * U - 1) / (32 * U));
    for (;;) {
      unsigned long long first = 0;
      if (lane == 0) first = atomicAdd(&this->queue[0], static_cast<unsigned long long>(tile_grab));
      first = __shfl_sync(0xffffffffu, first, 0);
      if (first >= pieces) break;
      for (unsigned long long c = first; c < first + tile_grab && c < pieces; ++c)
        walk(lanes::groups_at<G, U>(*this, static_cast<std::int64_t>(c) * 32 * U + lane, 32));
    }
    if (lane == 0) {
      __threadfence();
      if (atomicAdd(&this->queue[1], 1ull) == static_cast<unsigned long long>(threads / 32) - 1) {
        __threadfence();
        this->queue[0] = 0, this->queue[1] = 0;
      }
    }
  }
#endif

  KOKKOS_FORCEINLINE_FUNCTION void step(const LaneInstr& instr, TileWord* base, TileWord* acc, int stride) const {
    // Operand j's words and their pitch (0: the constant's one word). Constant indices only
    // (unrolled, then tested): a run-time index would put p and pitch in local memory.
    const TileWord* p[3] = {acc, acc, acc};
    int pitch[3] = {stride, stride, stride};
    TileWord* const constant = base + (R + 1) * U * stride;
    bool constant_written = false;
    EW_KOKKOS_UNROLL
    for (int j = 0; j < 3; ++j) {
      if (j >= instr.operands) break;
      if (instr.source[j] == LaneSource::reg) {
        p[j] = base + instr.reg[j] * U * stride;
      } else if (instr.source[j] == LaneSource::value) {
        if (!constant_written) *constant = lanes::word_out(lanes::broadcast<T, 1>(instr.value), 0), constant_written = true;
        p[j] = constant, pitch[j] = 0;
      }
    }
    switch (instr.op) {
      case Opcode::constant: {
        const TileWord w = lanes::word_out(lanes::broadcast<T, 1>(instr.value), 0);
        EW_KOKKOS_UNROLL
        for (int u = 0; u < U; ++u) acc[u * stride] = w;
        break;
      }
      case Opcode::select: lanes::tile_apply<Opcode::select, 3, T>(acc, stride, p, pitch); break;
      case Opcode::fma: lanes::tile_apply<Opcode::fma, 3, T>(acc, stride, p, pitch); break;
#define EW_KOKKOS_UNARY(name) \
  case Opcode::name: lanes::tile_apply<Opcode::name, 1, T>(acc, stride, p, pitch); break;
#define EW_KOKKOS_BINARY(name) \
  case Opcode::name: lanes::tile_apply<Opcode::name, 2, T>(acc, stride, p, pitch); break;
      EW_KOKKOS_STEP_OPCODES(EW_KOKKOS_UNARY, EW_KOKKOS_BINARY)
#undef EW_KOKKOS_UNARY
#undef EW_KOKKOS_BINARY
      default: lanes::tile_apply<Opcode::cast, 1, T>(acc, stride, p, pitch);
    }
    if (instr.keep) {
      TileWord* to = base + instr.dst * U * stride;
      EW_KOKKOS_UNROLL
      for (int u = 0; u < U; ++u) to[u * stride] = acc[u * stride];
    }
  }
};

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

// The policy with the functor passed as a kernel argument (up to 4 KiB on Cuda). Kokkos
// otherwise puts a functor of over 512 bytes (these carry the program) in constant memory,
// and before each such launch waits on the host until the previous kernel that used that
// buffer has finished: back-to-back calls lose their overlap (an H100, 16 floats: a kernel
// call 14.0 us against 3.7 us for the fixed op add, whose functor is small).
template <class Policy>
auto as_argument(const Policy& policy) {
  return Kokkos::Experimental::require(policy, Kokkos::Experimental::WorkItemProperty::HintLightWeight);
}

// Files of one or two registers (relu and silu: one input, every other value read by the
// next instruction alone; clamp: two inputs) free most of the small file's registers:
// two groups a thread for doubles too and, with one register, 3 blocks per SM, so more
// bytes in flight. The H200's walk was short of them: 16 warps an SM, DRAM 69 % busy and
// the SMs 52 % (ncu, clamp f32). Measured there (kokkos_variants.sh, 2026-11-23), kokkos/cuda
// at 2^26: one register relu 0.83 -> 0.94 (f32), 0.75 -> 0.93 (f64), silu 0.68 -> 0.83,
// 0.49 -> 0.69; two registers clamp 0.81 -> 0.84, 0.65 -> 0.90; 3 blocks with two
// registers spill (80 registers, 40-64 bytes of stack) and lose (clamp 0.68, 0.59) in the
// register path; the staged float walk (above) takes 70 registers and `staged_blocks` (a GPU
// before sm_80, which has no asynchronous copies, then runs the register path at 3 blocks,
// spilling). The overrides are for bench/cuda/kokkos_variants.sh (0 groups: such files take
// the small-file walk).
#ifndef EW_KOKKOS_ONE_REGISTER_GROUPS
#define EW_KOKKOS_ONE_REGISTER_GROUPS 2
#endif
#ifndef EW_KOKKOS_ONE_REGISTER_BLOCKS
#define EW_KOKKOS_ONE_REGISTER_BLOCKS 3
#endif
inline constexpr int one_register_groups = EW_KOKKOS_ONE_REGISTER_GROUPS;
inline constexpr int one_register_blocks = EW_KOKKOS_ONE_REGISTER_BLOCKS;
#ifndef EW_KOKKOS_TWO_REGISTER_GROUPS
#define EW_KOKKOS_TWO_REGISTER_GROUPS 2
#endif
#ifndef EW_KOKKOS_TWO_REGISTER_BLOCKS
#define EW_KOKKOS_TWO_REGISTER_BLOCKS 2
#endif
inline constexpr int two_register_groups = EW_KOKKOS_TWO_REGISTER_GROUPS;
inline constexpr int two_register_blocks = EW_KOKKOS_TWO_REGISTER_BLOCKS;

// Where a walk's elements lie: `head` elements before output 0's first 16-byte boundary, then
// `groups` whole groups of G, then `tail` elements.
struct WalkRange {
  std::int64_t head, groups, tail;
};
template <class T, int G>
WalkRange walk_range(const ExprCall& call) {
  const std::int64_t n = static_cast<std::int64_t>(call.n);
  const std::uintptr_t out0 = reinterpret_cast<std::uintptr_t>(call.outputs[0]);
  const std::int64_t head = std::min<std::int64_t>(n, static_cast<std::int64_t>((16 - out0 % 16) % 16 / sizeof(T)));
  const std::int64_t groups = (n - head) / G;
  return {head, groups, n - head - groups * G};
}

// The program, operands and range of a walk's functor (LaneExpr, TileExpr) for `call`.
template <class F>
void fill_walk(F& f, const ExprCall& call, const DevicePlan& plan, const LanePlan& walk) {
  using T = typename F::value_type;
  std::copy(walk.code.begin(), walk.code.end(), f.code);
  std::copy(walk.out_reg, walk.out_reg + walk.outputs, f.out_reg);
  std::copy(walk.out_acc, walk.out_acc + walk.outputs, f.out_acc);
  for (int j = 0; j < plan.leading_inputs; ++j) f.in[j] = static_cast<const T*>(call.inputs[plan.code[j].a]);
  for (int k = 0; k < plan.outputs; ++k) f.out[k] = static_cast<T*>(call.outputs[k]);
  f.count = static_cast<int>(walk.code.size());
  f.inputs = plan.leading_inputs, f.outputs = plan.outputs;
  const WalkRange range = walk_range<T, F::G>(call);
  f.head = range.head, f.groups = range.groups, f.tail = range.tail;
  const auto aligned = [&](const void* p) {
    return (reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(f.head) * sizeof(T)) % 16 == 0;
  };
  f.vector = true;
  for (int j = 0; j < f.inputs; ++j) f.vector = f.vector && aligned(f.in[j]);
  for (int k = 0; k < f.outputs; ++k) f.vector = f.vector && aligned(f.out[k]);
}

// Runs the call on `exec` by walking the program per element. Asynchronous on a device
// space in the inline shape; the general shape fences before it returns (its Views).
template <class T, int U, int R, bool Staged, class Exec>
void run_lanes(const Exec& exec, const ExprCall& call, const DevicePlan& plan, const LanePlan& walk,
               std::int64_t max_threads) {
  static_assert(!Staged || stageable<T, R>, "only float files of two registers are staged");
  using F = LaneExpr<T, U, R, Staged>;
  F f{};
  fill_walk(f, call, plan, walk);
  // Blocks of 256 threads resident per SM: 2 at up to 128 registers a thread; 3 (at most 85)
  // for the one-group walk on a small file (doubles: a group is two elements), for the
  // one-register file (78-80 registers) and the staged two-register float file (70); the
  // two-register file in registers takes 94-100.
  constexpr int blocks = R == 1                ? one_register_blocks
                         : Staged              ? staged_blocks
                         : R == 2              ? two_register_blocks
                         : U == 1 && R <= 4    ? 3
                                               : 2;
  if (max_threads <= 0) max_threads = resident_threads(exec, blocks, 256);
  const std::int64_t units = f.groups + 2;
  f.threads = std::max<std::int64_t>(1, std::min<std::int64_t>((units + U - 1) / U, max_threads));
  Kokkos::parallel_for(
      "ew::expr (lanes)",
      as_argument(Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>, Kokkos::LaunchBounds<256, blocks>>(
          exec, 0, f.threads)),
      f);
}

template <class T, int R, class Exec>
void run_tiles(const Exec& exec, const ExprCall& call, const DevicePlan& plan, const LanePlan& walk,
               std::int64_t max_threads, [[maybe_unused]] unsigned long long* queue) {
  if (max_threads <= 0) max_threads = resident_threads(exec, tile_blocks<T, R>, tile_block);
  // A thread's share is U of the walk's units (the head, each whole group, the tail).
  using Fixed = TileExpr<T, R, false>;
  const std::int64_t shares = (walk_range<T, Fixed::G>(call).groups + 2 + Fixed::U - 1) / Fixed::U;
  const auto launch = [&](auto f) {
    using F = decltype(f);
    fill_walk(f, call, plan, walk);
    f.threads = std::max<std::int64_t>(1, std::min<std::int64_t>(shares, max_threads));
    if constexpr (F::queued) {
      f.queue = queue;
      f.threads = (f.threads + 31) / 32 * 32;  // whole warps take the pieces
    }
    Kokkos::parallel_for(
        "ew::expr (tiles)",
        as_argument(Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>, Kokkos::LaunchBounds<tile_block, tile_blocks<T, R>>>(
            exec, 0, f.threads)),
        f);
  };
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) {
    if (!queue) throw Error(Errc::internal, "kokkos backend: the tile walk on Cuda needs its context's queue");
    if (shares >= tile_queue_shares * max_threads) return launch(TileExpr<T, R, true>{});
  }
#endif
  launch(Fixed{});
}

#if defined(KOKKOS_ENABLE_CUDA)
// The tile walk's queue (TileExpr::take_pieces): two counters in device memory, zero
// between calls. One a context: its calls are ordered on its stream, so a call finds the
// counters as the last one left them; contexts on other streams run at the same time.
// Zeroed on that stream, before the walks that use it: a context's stream does not wait for
// the legacy default stream, where cudaMemset would go.
class WalkQueue {
 public:
  WalkQueue(CUcontext kokkos_gpu, cudaStream_t stream) {
    const KokkosDeviceScope on_gpu(kokkos_gpu, "kokkos backend");
    cudaError_t e = cudaMalloc(&counters_, 2 * sizeof(unsigned long long));
    if (e == cudaSuccess) e = cudaMemsetAsync(counters_, 0, 2 * sizeof(unsigned long long), stream);
    if (e != cudaSuccess) {
      if (counters_) cudaFree(counters_);
      check_cuda(e, "the tile walk's queue");
    }
  }
  ~WalkQueue() {
    if (cudaFree(counters_) != cudaSuccess) cudaGetLastError();
  }
  WalkQueue(const WalkQueue&) = delete;
  WalkQueue& operator=(const WalkQueue&) = delete;
  unsigned long long* counters() const { return counters_; }
  
 private:
  unsigned long long* counters_ = nullptr;
};
#endif

// Where the tile walk runs by default. Measured on the H200 alone (2026-11-27, kokkos/cuda at
// 2^24..2^28): silu f32 0.80-0.84 against the lane walk's 0.74-0.77, f64 0.69-0.72 against
// 0.65-0.68. So: files of one register with a transcendental step, on Cuda devices fast behind
// each SM (device_facts: at least 30 GB/s of memory an SM, the H200 of the GPUs measured) whose
// SMs hold its blocks. On the H100 the lane walk's silu reads 0.88-0.94 of cuda and neither
// kernel is bound by instruction issue: the lane walk stays. EW_KOKKOS_TILES (for
// kokkos_variants.sh): 0 never by default, 1 files of one or two registers with a
// transcendental step on every Cuda device that holds the blocks, 2 (default) as above.
#ifndef EW_KOKKOS_TILES
#define EW_KOKKOS_TILES 2
#endif

inline bool tiles_by_default(const DeviceFacts& facts, const Program& p, const LanePlan& walk) {
  if (EW_KOKKOS_TILES == 0 || walk.registers > (EW_KOKKOS_TILES == 1 ? 2 : 1)) return false;
  bool transcendental = false;
  for (const Instr& in : p.code)
    transcendental = transcendental || in.op == Opcode::exp || in.op == Opcode::log || in.op == Opcode::tanh ||
                     in.op == Opcode::sigmoid;
  return transcendental && facts.tiles_fit && (EW_KOKKOS_TILES == 1 || facts.fast_per_sm);
}

template <class Exec>
bool tiles_by_default(const Exec& exec, const Program& p, const LanePlan& walk) {
  return tiles_by_default(device_facts(exec), p, walk);  // host spaces: neither fact
}

// Whether the tile walk can run on `exec` when asked for (DeviceShape::tiles): on Cuda only
// where the SMs hold its blocks; host spaces always.
template <class Exec>
bool tiles_run_on(const Exec& exec) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same_v<Exec, Kokkos::Cuda>) return device_facts(exec).tiles_fit;
#endif
  (void)exec;
  return true;
}

// The walk a call took (run_expr_per_element; tests assert it).
enum class Walked { none, tiles, lanes, per_element, general };

// The lane walk (or, for the formulas above, the tile walk) takes the call: every value of one
// dtype, few enough instructions and live values. Returns Walked::none (nothing run) otherwise.
// `tiles`: the tile walk wherever the file fits it (tests).
template <class Exec>
Walked try_lanes(const Exec& exec, const ExprCall& call, std::int64_t max_threads, bool tiles = false,
                 unsigned long long* queue = nullptr) {
  const Program& p = *call.program;
  if (p.code.empty() || p.code.size() > std::size_t(inline_instructions)) return Walked::none;
  const DType t = p.code[0].dtype;
  for (const Instr& in : p.code)
    if (in.dtype != t || (t != DType::f32 && t != DType::f64)) return Walked::none;
  const DevicePlan plan = plan_for_device(call, true);
  if (plan.registers > inline_registers) return Walked::none;
  const LanePlan walk = plan_for_lanes(plan);
  if (walk.registers <= 2 && ((tiles && tiles_run_on(exec)) || tiles_by_default(exec, p, walk))) {
    if (t == DType::f32) {
      if (walk.registers <= 1) run_tiles<float, 1>(exec, call, plan, walk, max_threads, queue);
      else run_tiles<float, 2>(exec, call, plan, walk, max_threads, queue);
    } else {
      if (walk.registers <= 1) run_tiles<double, 1>(exec, call, plan, walk, max_threads, queue);
      else run_tiles<double, 2>(exec, call, plan, walk, max_threads, queue);
    }
    return Walked::tiles;
  }
  // A small file leaves registers for the next iteration's inputs (LaneExpr): floats take two
  // groups per thread, more elements per decoded instruction; doubles one, which keeps them
  // within 3 blocks' 85 registers (two groups with the next inputs would spill). Files of
  // one or two registers take their own shapes (above run_lanes).
  const bool small = walk.registers <= 4;
  if constexpr (one_register_groups > 0)
    if (walk.registers <= 1) {
      if (t == DType::f32) run_lanes<float, one_register_groups, 1, false>(exec, call, plan, walk, max_threads);
      else run_lanes<double, one_register_groups, 1, false>(exec, call, plan, walk, max_threads);
      return Walked::lanes;
    }
  if constexpr (two_register_groups > 0)
    if (walk.registers <= 2) {
      if (t != DType::f32) run_lanes<double, two_register_groups, 2, false>(exec, call, plan, walk, max_threads);
      else if constexpr (stageable<float, 2>) {
        if (staged_on(exec)) run_lanes<float, two_register_groups, 2, true>(exec, call, plan, walk, max_threads);
        else run_lanes<float, two_register_groups, 2, false>(exec, call, plan, walk, max_threads);
      } else {
        run_lanes<float, two_register_groups, 2, false>(exec, call, plan, walk, max_threads);
      }
      return Walked::lanes;
    }
  if (t == DType::f32) {
    if (small) run_lanes<float, 2, 4, false>(exec, call, plan, walk, max_threads);
    else run_lanes<float, 1, 16, false>(exec, call, plan, walk, max_threads);
  } else {
    if (small) run_lanes<double, 1, 4, false>(exec, call, plan, walk, max_threads);
    else run_lanes<double, 1, 16, false>(exec, call, plan, walk, max_threads);
  }
  return Walked::lanes;
}

enum class DeviceShape { chosen, tiles, per_element, general };  // tiles: the tile walk where it can

// `queue`: a WalkQueue's counters, which the tile walk needs on Cuda (ignored on host spaces).
template <class Exec>
Walked run_expr_per_element(const Exec& exec, const ExprCall& call, DeviceShape shape = DeviceShape::chosen,
                            std::int64_t max_threads = 0, unsigned long long* queue = nullptr) {
  if (call.n == 0) return Walked::none;
  if (shape == DeviceShape::chosen || shape == DeviceShape::tiles)
    if (const Walked w = try_lanes(exec, call, max_threads, shape == DeviceShape::tiles, queue); w != Walked::none)
      return w;
  const bool force_general = shape == DeviceShape::general;
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
    Kokkos::parallel_for(
        "ew::expr (per element)",
        as_argument(Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec, 0, static_cast<std::int64_t>(call.n))),
        f);
    return Walked::per_element;
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
  return Walked::general;
}

#undef EW_KOKKOS_STEP_OPCODES

}  // namespace ew::detail::kokkos
