#include "codegen.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "embedded_text.hpp"
#include "ew/error.hpp"

namespace ew::detail::cuda {

namespace {

// A value's type in the kernel: its compute dtype (float for f32 and the 16-bit types).
const char* type_name(DType d) { return compute_dtype(d) == DType::f32 ? "float" : "double"; }
const char* kit_name(DType d) { return compute_dtype(d) == DType::f32 ? "F" : "D"; }
// An element's type in memory: 16-bit data moves as its bits.
const char* storage_name(DType d) { return is_storage16(d) ? "unsigned short" : type_name(d); }
int bytes_of(DType d) { return static_cast<int>(size_of(d)); }
// The prelude's conversions of one 16-bit type (ew_to_float_f16, ew_from_double_bf16, ...).
std::string conversion(const std::string& what, DType d) { return "ew_" + what + "_" + to_string(d); }

std::string reg(int k) { return "r" + std::to_string(k); }

// The exact bits of a constant: no decimal round trip, NaN payloads and -0 kept.
std::string constant_literal(DType d, double value) {
  char text[64];
  if (compute_dtype(d) == DType::f32) {
    const float f = static_cast<float>(value);  // as element_eval converts it
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    std::snprintf(text, sizeof text, "__int_as_float(0x%08xu)", bits);
  } else {
    std::uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    std::snprintf(text, sizeof text, "__longlong_as_double(0x%016llxull)", static_cast<unsigned long long>(bits));
  }
  return text;
}

bool is_comparison(Opcode op) {
  return op == Opcode::lt || op == Opcode::le || op == Opcode::gt || op == Opcode::ge || op == Opcode::eq ||
         op == Opcode::ne;
}

// A comparison's 0 or 1 as a value of type T. A cast of a comparison is written as the
// comparison in the cast's type, not as a conversion of the comparison's value: ptxas
// 12.9 and 13.0 (NVRTC's, the one in the toolkit alike; not 13.5) miscompiled that
// conversion, f64 0/1 to f32, in one random expression's kernel. Under register pressure
// the 0/1 doubles of neighbouring elements shared the register of their low (zero) word,
// and ptxas took the second element's conversion for a copy of the first's, though the
// high word between them had been written anew: one element in four took its neighbour's
// value (H200, 2026-12-02; bench/cuda/results/h200-2026-12-02-ptxas/). Written this way
// there is no conversion to get wrong, and one instruction less.
std::string comparison(const Instr& in, const std::string& T) {
  const char* op = in.op == Opcode::lt   ? " < "
                   : in.op == Opcode::le ? " <= "
                   : in.op == Opcode::gt ? " > "
                   : in.op == Opcode::ge ? " >= "
                   : in.op == Opcode::eq ? " == "
                                         : " != ";
  return "(" + reg(in.arg[0]) + op + reg(in.arg[1]) + " ? " + T + "(1) : " + T + "(0))";
}

// One statement per instruction, the semantics of element_eval.hpp's eval_element and
// apply_instr, every operation through the kit.
std::string instruction(const Program& p, int k) {
  const Instr& in = p.code[static_cast<std::size_t>(k)];
  const std::string T = type_name(in.dtype), K = kit_name(in.dtype);
  const std::string a = reg(in.arg[0]), b = reg(in.arg[1]), c = reg(in.arg[2]);
  std::string v;
  const bool f32 = compute_dtype(in.dtype) == DType::f32;
  switch (in.op) {
    case Opcode::input:  // 16-bit: widened exactly
      v = is_storage16(in.dtype) ? conversion("to_float", in.dtype) + "(i" + std::to_string(in.slot) + ")"
                                 : "i" + std::to_string(in.slot);
      break;
    case Opcode::param:  // already rounded to its dtype (a 16-bit one's value is a float)
      v = f32 ? "static_cast<float>(p.param[" + std::to_string(in.slot) + "])" : "p.param[" + std::to_string(in.slot) + "]";
      break;
    case Opcode::constant: v = constant_literal(in.dtype, in.value); break;
    case Opcode::cast:
      // To a 16-bit type: rounded once (from f64 straight), kept as the float it is;
      // f64 -> f32 rounds to nearest even; the rest is exact.
      if (is_comparison(p.code[in.arg[0]].op))
        v = comparison(p.code[in.arg[0]], T);  // 0 or 1 in any dtype; see comparison()
      else if (is_storage16(in.dtype))
        v = conversion("to_float", in.dtype) + "(" +
            conversion(std::string("from_") + type_name(p.code[in.arg[0]].dtype), in.dtype) + "(" + a + "))";
      else
        v = "static_cast<" + T + ">(" + a + ")";
      break;
    // The sign bit flipped, as the host's negation does (NaN payload kept).
    case Opcode::neg:
      v = f32 ? "__int_as_float(__float_as_int(" + a + ") ^ int(0x80000000u))"
                                 : "__longlong_as_double(__double_as_longlong(" + a + ") ^ (long long)0x8000000000000000ull)";
      break;
    case Opcode::abs: v = K + "::abs(" + a + ")"; break;
    case Opcode::sqrt: v = K + "::sqrt(" + a + ")"; break;
    case Opcode::floor: v = K + "::floor(" + a + ")"; break;
    case Opcode::ceil: v = K + "::ceil(" + a + ")"; break;
    case Opcode::trunc: v = K + "::trunc(" + a + ")"; break;
    case Opcode::round: v = "ew::math::round<" + K + ">(" + a + ")"; break;
    case Opcode::exp: v = "ew::math::exp<" + K + ">(" + a + ")"; break;
    case Opcode::log: v = "ew::math::log<" + K + ">(" + a + ")"; break;
    case Opcode::tanh: v = "ew::math::tanh<" + K + ">(" + a + ")"; break;
    case Opcode::sigmoid: v = "ew::math::sigmoid<" + K + ">(" + a + ")"; break;
    case Opcode::add: v = K + "::add(" + a + ", " + b + ")"; break;
    case Opcode::sub: v = K + "::sub(" + a + ", " + b + ")"; break;
    case Opcode::mul: v = K + "::mul(" + a + ", " + b + ")"; break;
    case Opcode::div: v = K + "::div(" + a + ", " + b + ")"; break;
    case Opcode::min: v = "ew::math::min<" + K + ">(" + a + ", " + b + ")"; break;
    case Opcode::max: v = "ew::math::max<" + K + ">(" + a + ", " + b + ")"; break;
    case Opcode::lt:
    case Opcode::le:
    case Opcode::gt:
    case Opcode::ge:
    case Opcode::eq:
    case Opcode::ne: v = comparison(in, T); break;
    case Opcode::fma: v = K + "::fma(" + a + ", " + b + ", " + c + ")"; break;
    case Opcode::select: {
      // The condition in its own dtype; NaN != 0 takes the first branch.
      const DType cond = p.code[in.arg[0]].dtype;
      v = "(" + a + " != " + type_name(cond) + "(0) ? " + b + " : " + c + ")";
      break;
    }
  }
  if (v.empty()) throw Error(Errc::internal, std::string("cuda code generator: no code for opcode ") + to_string(in.op));
  return "  const " + T + " " + reg(k) + " = " + v + ";  // " + to_string(in.op) + "\n";
}

// The per-element function: read inputs by value, outputs by reference, both as stored
// (a 16-bit output is rounded once here).
std::string element_function(const Program& p) {
  std::ostringstream s;
  s << "__device__ __forceinline__ void element(const Args& p";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << ", const " << storage_name(p.input_dtype[k]) << " i" << k;
  for (std::size_t k = 0; k < p.outputs.size(); ++k) s << ", " << storage_name(p.output_dtype(int(k))) << "& o" << k;
  s << ") {\n  (void)p;\n";
  for (int k = 0; k < static_cast<int>(p.code.size()); ++k) s << instruction(p, k);
  for (std::size_t k = 0; k < p.outputs.size(); ++k) {
    const DType d = p.output_dtype(int(k));
    if (is_storage16(d)) s << "  o" << k << " = " << conversion("from_float", d) << "(" << reg(p.outputs[k]) << ");\n";
    else s << "  o" << k << " = " << reg(p.outputs[k]) << ";\n";
  }
  s << "}\n";
  return s.str();
}

// What does not depend on the program: the kernel parameter and the 16-byte moves.
const char* skeleton_prelude = R"(
namespace ew_expr {
typedef unsigned long long u64;
typedef ew::math::ScalarKit<float> F;
typedef ew::math::ScalarKit<double> D;

struct Args {
  u64 head, groups, tail;
  unsigned vector_ok;
  const void* in[@INPUTS@];
  void* out[@OUTPUTS@];
  double param[@PARAMS@];
};
static_assert(sizeof(Args) == @ARGS_SIZE@, "Args differs from the host's ExprKernelArgs");

// 16-bit storage with the bits of the library's conversions (ew/detail/float16_bits.hpp,
// pasted above: the CPU backends'). Numbers go through the hardware's converts, which are
// exact when widening and round to nearest even (overflow to inf, subnormal results) when
// narrowing, as those functions do; a NaN is rebuilt from its bits as they build it (quiet,
// its sign and payload kept), since cvt gives its own NaN. With the integer functions,
// tens of instructions per element, 16-bit expressions ran at 0.5-0.8x cub's functor on
// CUDA's converts (H100, 2026-11-23); now 0.8-1.0x, the rest being the NaN rebuild.
// The NaN bits are written out here, as selects, rather than taken from those functions on
// a branch: that branch form lost 10-31 % against cub on relu, silu and clamp in f16 and bf16
// and gained 9-10 % on f16 dot4 and chain3 (H200, 2026-11-24, two runs; raw
// bench/cuda/results/h200-2026-11-24-nan-branch/). tests/expr's cuda/ExprFloat16Backends
// checks these bits against the scalar backend's (those functions) on every 16-bit pattern.
__device__ __forceinline__ float ew_to_float_f16(unsigned short h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  const unsigned nan = (unsigned(h) & 0x8000u) << 16 | 0x7fc00000u | (unsigned(h) & 0x3ffu) << 13;
  return (h & 0x7fffu) > 0x7c00u ? __uint_as_float(nan) : f;
}
__device__ __forceinline__ float ew_to_float_bf16(unsigned short h) { return __uint_as_float(ew::float16_detail::bf16_to_f32_bits(h)); }
__device__ __forceinline__ unsigned short ew_from_float_f16(float x) {
  unsigned short h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
  const unsigned b = __float_as_uint(x);
  const unsigned short nan = (unsigned short)((b >> 16 & 0x8000u) | 0x7e00u | (b >> 13 & 0x3ffu));
  return (b & 0x7fffffffu) > 0x7f800000u ? nan : h;
}
__device__ __forceinline__ unsigned short ew_from_float_bf16(float x) {
#if __CUDA_ARCH__ >= 800
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(x));
  const unsigned b = __float_as_uint(x);
  const unsigned short nan = (unsigned short)((b >> 16 & 0x807fu) | 0x7fc0u);
  return (b & 0x7fffffffu) > 0x7f800000u ? nan : h;
#else
  return ew::float16_detail::narrow_bits<8, 7>(__float_as_uint(x));
#endif
}
__device__ __forceinline__ unsigned short ew_from_double_f16(double x) {
  return ew::float16_detail::narrow_bits<5, 10>(static_cast<unsigned long long>(__double_as_longlong(x)));
}
__device__ __forceinline__ unsigned short ew_from_double_bf16(double x) {
  return ew::float16_detail::narrow_bits<8, 7>(static_cast<unsigned long long>(__double_as_longlong(x)));
}

// G elements from p: 16-byte evict-first loads where `vector` (p 16-byte aligned), else one at a time.
template <int G>
__device__ __forceinline__ void load(float (&x)[G], const float* p, bool vector) {
  if (vector) {
#pragma unroll
    for (int k = 0; k < G; k += 4) {
      const float4 v = __ldcs(reinterpret_cast<const float4*>(p + k));
      x[k] = v.x, x[k + 1] = v.y, x[k + 2] = v.z, x[k + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) x[k] = p[k];
  }
}
template <int G>
__device__ __forceinline__ void load(double (&x)[G], const double* p, bool vector) {
  if (vector) {
#pragma unroll
    for (int k = 0; k < G; k += 2) {
      const double2 v = __ldcs(reinterpret_cast<const double2*>(p + k));
      x[k] = v.x, x[k + 1] = v.y;
    }
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) x[k] = p[k];
  }
}
// 16-bit elements: 8 per 16-byte move (G is a multiple of 8 wherever they occur).
template <int G>
__device__ __forceinline__ void load(unsigned short (&x)[G], const unsigned short* p, bool vector) {
  if (vector) {
#pragma unroll
    for (int k = 0; k < G; k += 8) {
      const uint4 v = __ldcs(reinterpret_cast<const uint4*>(p + k));
      const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) x[k + 2 * j] = static_cast<unsigned short>(w[j]), x[k + 2 * j + 1] = static_cast<unsigned short>(w[j] >> 16);
    }
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) x[k] = p[k];
  }
}
template <int G>
__device__ __forceinline__ void store(unsigned short* p, const unsigned short (&x)[G], bool vector) {
  if (vector) {
#pragma unroll
    for (int k = 0; k < G; k += 8) {
      unsigned w[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) w[j] = unsigned(x[k + 2 * j]) | unsigned(x[k + 2 * j + 1]) << 16;
      __stcs(reinterpret_cast<uint4*>(p + k), make_uint4(w[0], w[1], w[2], w[3]));
    }
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) p[k] = x[k];
  }
}
template <int G>
__device__ __forceinline__ void store(float* p, const float (&x)[G], bool vector) {
  if (vector) {
#pragma unroll
    for (int k = 0; k < G; k += 4) __stcs(reinterpret_cast<float4*>(p + k), make_float4(x[k], x[k + 1], x[k + 2], x[k + 3]));
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) p[k] = x[k];
  }
}
template <int G>
__device__ __forceinline__ void store(double* p, const double (&x)[G], bool vector) {
  if (vector) {
#pragma unroll
    for (int k = 0; k < G; k += 2) __stcs(reinterpret_cast<double2*>(p + k), make_double2(x[k], x[k + 1]));
  } else {
#pragma unroll
    for (int k = 0; k < G; ++k) p[k] = x[k];
  }
}

// Programmatic dependent launch (sm_90+), as the hand-written kernels: nothing global is
// touched before the previous kernel on the stream has finished.
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;");
#endif
}
)";

void replace_all(std::string& s, const std::string& what, const std::string& with) {
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + with.size()))
    s.replace(at, what.size(), with);
}

}  // namespace

// One 16-byte move of the narrowest operand: 8 elements with a 16-bit operand, 4 with a
// float one, 2 when all are double.
int expr_group(const Program& p) {
  int narrowest = 8;
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) narrowest = std::min(narrowest, bytes_of(p.input_dtype[k]));
  for (std::size_t k = 0; k < p.outputs.size(); ++k) narrowest = std::min(narrowest, bytes_of(p.output_dtype(int(k))));
  return 16 / narrowest;
}

// The hand-written kernels keep 4 vector loads per input in flight (8 for two inputs);
// an expression keeps about 8 per thread in all, so that many inputs do not spill.
int expr_unroll(const Program& p) {
  const int group = expr_group(p);
  int loads = 0;
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) loads += group * bytes_of(p.input_dtype[k]) / 16;
  if (loads == 0) return 4;
  const int unroll = 8 / loads;
  return unroll < 1 ? 1 : unroll > 4 ? 4 : unroll;
}

namespace {

// What every kernel of `p` starts with: the expression as a comment, the library's element
// functions, the skeleton and the per-element function, inside namespace ew_expr (left open).
void write_program_prelude(std::ostringstream& s, const Program& p, const std::string& what) {
  s << "// Generated by elementwise for the expression (one line per instruction):\n";
  {
    std::istringstream lines(p.canonical);
    for (std::string line; std::getline(lines, line);) s << "//   " << line << "\n";
  }
  s << "// " << what << "\n";
  s << "#define EW_HOST_DEVICE __device__\n" << float16_bits_text() << "\n" << scalar_kit_text() << "\n" << math_text() << "\n";
  std::string prelude = skeleton_prelude;
  replace_all(prelude, "@INPUTS@", std::to_string(max_expr_inputs));
  replace_all(prelude, "@OUTPUTS@", std::to_string(max_expr_outputs));
  replace_all(prelude, "@PARAMS@", std::to_string(max_expr_params));
  replace_all(prelude, "@ARGS_SIZE@", std::to_string(sizeof(ExprKernelArgs)));
  s << prelude << "\n" << element_function(p) << "\n";
}

}  // namespace

ExprKernelSource generate_expr_kernel(const Program& p, ExprAlignment alignment) {
  ExprKernelSource out;
  out.group = expr_group(p);
  out.unroll = expr_unroll(p);
  const bool aligned = alignment == ExprAlignment::aligned;
  std::ostringstream s;
  write_program_prelude(s, p, std::string("alignment case: ") + (aligned ? "aligned" : "any"));

  const int G = out.group, U = out.unroll;
  const std::size_t outputs = p.outputs.size();
  auto in_vector = [&](int k) { return aligned ? std::string("true") : "((p.vector_ok >> " + std::to_string(k) + ") & 1u) != 0"; };
  auto out_vector = [&](std::size_t k) {
    return aligned ? std::string("true") : "((p.vector_ok >> " + std::to_string(16 + k) + ") & 1u) != 0";
  };

  s << "}  // namespace ew_expr\n\n"
    << "extern \"C\" __global__ void __launch_bounds__(" << kExprThreads << ") " << kExprKernelName
    << "(const ew_expr::Args p) {\n"
    << "  using namespace ew_expr;\n"
    << "  constexpr int G = " << G << ", U = " << U << ";\n"
    << "  const u64 thread = u64(blockIdx.x) * " << kExprThreads << " + threadIdx.x;\n"
    << "  const u64 threads = u64(gridDim.x) * " << kExprThreads << ";\n"
    << "  wait_for_previous_grid();\n";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k])
      s << "  const " << storage_name(p.input_dtype[k]) << "* in" << k << " = static_cast<const "
        << storage_name(p.input_dtype[k]) << "*>(p.in[" << k << "]);\n";
  for (std::size_t k = 0; k < outputs; ++k)
    s << "  " << storage_name(p.output_dtype(int(k))) << "* out" << k << " = static_cast<"
      << storage_name(p.output_dtype(int(k))) << "*>(p.out[" << k << "]);\n";

  // One element at index i, read straight from memory (head and tail).
  std::ostringstream one;
  one << "element(p";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) one << ", in" << k << "[i]";
  for (std::size_t k = 0; k < outputs; ++k) one << ", out" << k << "[i]";
  one << ");";
  s << "  // Head and tail: fewer than G elements each, done by the first threads of the grid.\n"
    << "  if (thread < p.head) { const u64 i = thread; " << one.str() << " }\n"
    << "  if (thread < p.tail) { const u64 i = p.head + p.groups * G + thread; " << one.str() << " }\n";

  // Whole groups: U groups' loads in flight before the first use. Every input of a group
  // is read before any output is written, so an output that is an input is safe.
  s << "  for (u64 first = thread; first < p.groups; first += threads * U) {\n";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << "    " << storage_name(p.input_dtype[k]) << " x" << k << "[U][G];\n";
  s << "#pragma unroll\n"
    << "    for (int u = 0; u < U; ++u) {\n"
    << "      const u64 v = first + u * threads;\n"
    << "      if (v < p.groups) {\n"
    << "        const u64 i = p.head + v * G;\n";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << "        load<G>(x" << k << "[u], in" << k << " + i, " << in_vector(k) << ");\n";
  s << "      }\n    }\n"
    << "#pragma unroll\n"
    << "    for (int u = 0; u < U; ++u) {\n"
    << "      const u64 v = first + u * threads;\n"
    << "      if (v < p.groups) {\n"
    << "        const u64 i = p.head + v * G;\n";
  for (std::size_t k = 0; k < outputs; ++k) s << "        " << storage_name(p.output_dtype(int(k))) << " y" << k << "[G];\n";
  s << "#pragma unroll\n"
    << "        for (int e = 0; e < G; ++e) element(p";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << ", x" << k << "[u][e]";
  for (std::size_t k = 0; k < outputs; ++k) s << ", y" << k << "[e]";
  s << ");\n";
  for (std::size_t k = 0; k < outputs; ++k)
    s << "        store<G>(out" << k << " + i, y" << k << ", " << out_vector(k) << ");\n";
  s << "      }\n    }\n  }\n}\n";

  // The bulk-copy kernel (sm_90+, aligned case, at least one input), the shape of the
  // hand-written bulk_kernel (kernels.cuh): each block takes one tile of `tile` groups;
  // one thread has the SM's copy engine bring every input's tile into shared memory
  // (cp.async.bulk, completing on an mbarrier), then the block computes and stores the
  // tile one element per thread per step (a warp writes contiguous bytes).
  int input_bytes = 0;
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) input_bytes += bytes_of(p.input_dtype[k]);
  out.has_bulk = aligned && input_bytes > 0;
  out.bulk_bytes_per_element = input_bytes;
  if (out.has_bulk) {
    s << "\nextern \"C\" __global__ void __launch_bounds__(" << kExprThreads << ") " << kExprBulkKernelName
      << "(const ew_expr::Args p, const int tile) {\n"
      << "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n"
      << "  using namespace ew_expr;\n"
      << "  constexpr int G = " << G << ";\n"
      << "  extern __shared__ __align__(128) unsigned char shared[];\n"
      << "  __shared__ __align__(8) unsigned long long barrier;\n"
      << "  wait_for_previous_grid();\n";
    for (int k = 0; k < p.input_slots; ++k)
      if (p.input_read[k])
        s << "  const " << storage_name(p.input_dtype[k]) << "* in" << k << " = static_cast<const "
          << storage_name(p.input_dtype[k]) << "*>(p.in[" << k << "]);\n";
    for (std::size_t k = 0; k < outputs; ++k)
      s << "  " << storage_name(p.output_dtype(int(k))) << "* out" << k << " = static_cast<"
        << storage_name(p.output_dtype(int(k))) << "*>(p.out[" << k << "]);\n";
    s << "  {\n    const u64 thread = u64(blockIdx.x) * " << kExprThreads << " + threadIdx.x;\n"
      << "    if (thread < p.head) { const u64 i = thread; " << one.str() << " }\n"
      << "    if (thread < p.tail) { const u64 i = p.head + p.groups * G + thread; " << one.str() << " }\n  }\n"
      << "  const u64 first = u64(blockIdx.x) * tile;\n"
      << "  if (first >= p.groups) return;\n"
      << "  const u64 left = p.groups - first;\n"
      << "  const int count = left < u64(tile) ? int(left) : tile;\n"
      << "  const unsigned elements = unsigned(count) * G;\n"
      << "  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));\n"
      << "  const unsigned base = static_cast<unsigned>(__cvta_generic_to_shared(shared));\n";
    // Input k's tile at the sum of the earlier inputs' tile bytes (multiples of 16).
    int offset_elements_bytes = 0;
    std::ostringstream tiles, loads;
    for (int k = 0; k < p.input_slots; ++k) {
      if (!p.input_read[k]) continue;
      const std::string off = "unsigned(tile) * G * " + std::to_string(offset_elements_bytes);
      tiles << "  const " << storage_name(p.input_dtype[k]) << "* t" << k << " = reinterpret_cast<const "
            << storage_name(p.input_dtype[k]) << "*>(shared + " << off << ");\n";
      loads << "    asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\" "
               ":: \"r\"(base + "
            << off << "), \"l\"(in" << k << " + p.head + first * G), \"r\"(elements * " << bytes_of(p.input_dtype[k])
            << "u), \"r\"(bar) : \"memory\");\n";
      offset_elements_bytes += bytes_of(p.input_dtype[k]);
    }
    s << tiles.str()
      << "  if (threadIdx.x == 0) {\n"
      << "    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(bar) : \"memory\");\n"
      << "    asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\");\n"
      << "    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(bar), \"r\"(elements * "
      << input_bytes << "u) : \"memory\");\n"
      << loads.str() << "  }\n"
      << "  __syncthreads();  // the barrier is initialized before anyone waits on it\n"
      << "  unsigned done = 0;\n"
      << "  do {\n"
      << "    asm volatile(\"{ .reg .pred ready; mbarrier.try_wait.parity.shared::cta.b64 ready, [%1], %2; "
         "selp.u32 %0, 1, 0, ready; }\" : \"=r\"(done) : \"r\"(bar), \"r\"(0u) : \"memory\");\n"
      << "  } while (!done);\n"
      << "  const u64 start = p.head + first * G;\n"
      << "  for (unsigned e = threadIdx.x; e < elements; e += " << kExprThreads << ") {\n"
      << "    const u64 i = start + e;\n"
      << "    element(p";
    for (int k = 0; k < p.input_slots; ++k)
      if (p.input_read[k]) s << ", t" << k << "[e]";
    for (std::size_t k = 0; k < outputs; ++k) s << ", out" << k << "[i]";
    s << ");\n  }\n#endif\n}\n";
  }
  out.text = s.str();
  return out;
}

ExprReduceKernelSource generate_expr_reduce_kernel(const Program& p) {
  if (p.outputs.size() != 1)
    throw Error(Errc::internal, "cuda code generator: a reduction over an expression takes one output");
  ExprReduceKernelSource out;
  // Up to 128 bytes of input rows in flight per thread: 4..16 rows (a divisor of 64), so
  // 128 bytes from 8 bytes a row up, fewer below (16 rows of one float: 64 bytes).
  int bytes = 0;
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) bytes += bytes_of(p.input_dtype[k]);
  out.rows = 16;
  while (out.rows > 4 && out.rows * bytes > 128) out.rows /= 2;
  std::ostringstream s;
  write_program_prelude(s, p, "fused reduction (sum or asum of the output)");
  const DType od = p.output_dtype(0);
  const std::string widened = is_storage16(od) ? "double(" + conversion("to_float", od) + "(y))" : "double(y)";
  s << "struct ReduceArgs {\n"
    << "  u64 n, blocks, run_blocks, runs;\n"
    << "  double* partials;\n"
    << "  unsigned magnitude;\n"
    << "};\n"
    << "static_assert(sizeof(ReduceArgs) == " << sizeof(ExprReduceKernelArgs)
    << ", \"ReduceArgs differs from the host's ExprReduceKernelArgs\");\n\n"
    << "// Element i's term, in double: the output as stored, widened exactly.\n"
    << "__device__ __forceinline__ double term(const Args& p, const ReduceArgs& r";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << ", const " << storage_name(p.input_dtype[k]) << " i" << k;
  s << ") {\n"
    << "  " << storage_name(od) << " y;\n"
    << "  element(p";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << ", i" << k;
  s << ", y);\n"
    << "  const double v = " << widened << ";\n"
    << "  return r.magnitude ? fabs(v) : v;\n"
    << "}\n"
    << "}  // namespace ew_expr\n\n";

  std::ostringstream args_at;  // the inputs of element i, read from memory
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) args_at << ", __ldcs(in" << k << " + i)";
  std::ostringstream args_rows;  // the inputs of row u of a batch
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) args_rows << ", x" << k << "[u]";

  s << "extern \"C\" __global__ void __launch_bounds__(" << kExprThreads << ") " << kExprReduceKernelName
    << "(const ew_expr::Args p, const ew_expr::ReduceArgs r) {\n"
    << "  using namespace ew_expr;\n"
    << "  constexpr int R = " << out.rows << ";              // rows in flight\n"
    << "  constexpr u64 block_elements = 2048, lanes = 32;  // the plan's (reduce_plan.hpp)\n"
    << "  constexpr unsigned all = 0xffffffffu;\n"
    << "  const int lane = int(threadIdx.x % 32);\n"
    << "  const u64 warps = u64(gridDim.x) * " << kExprThreads / 32 << ";\n"
    << "  wait_for_previous_grid();\n";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k])
      s << "  const " << storage_name(p.input_dtype[k]) << "* in" << k << " = static_cast<const "
        << storage_name(p.input_dtype[k]) << "*>(p.in[" << k << "]);\n";
  s << "  for (u64 run = u64(blockIdx.x) * " << kExprThreads / 32 << " + threadIdx.x / 32; run < r.runs; run += warps) {\n"
    << "    const u64 first = run * r.run_blocks;\n"
    << "    const u64 end = r.blocks - first < r.run_blocks ? r.blocks : first + r.run_blocks;\n"
    << "    // The run's binary counter: the pending node of tree level d in lane d.\n"
    << "    double level = 0.0;\n"
    << "    int depth = 0;\n"
    << "    u64 step = 0;\n"
    << "    for (u64 b = first; b < end; ++b, ++step) {\n"
    << "      const u64 begin = b * block_elements;\n"
    << "      double acc = 0.0;  // this lane's elements lane, lane + 32, ... in order\n"
    << "      if (r.n - begin >= block_elements) {\n"
    << "#pragma unroll 1\n"
    << "        for (int r0 = 0; r0 < int(block_elements / lanes); r0 += R) {\n";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << "          " << storage_name(p.input_dtype[k]) << " x" << k << "[R];\n";
  s << "#pragma unroll\n"
    << "          for (int u = 0; u < R; ++u) {\n"
    << "            const u64 i = begin + u64(r0 + u) * lanes + lane;\n";
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) s << "            x" << k << "[u] = __ldcs(in" << k << " + i);\n";
  s << "          }\n"
    << "#pragma unroll\n"
    << "          for (int u = 0; u < R; ++u) acc = __dadd_rn(acc, term(p, r" << args_rows.str() << "));\n"
    << "        }\n"
    << "      } else {\n"
    << "        for (u64 i = begin + lane; i < r.n; i += lanes) acc = __dadd_rn(acc, term(p, r" << args_at.str() << "));\n"
    << "      }\n"
    << "      // The lane tree, then the merges this step closes (one per trailing 1 bit).\n"
    << "      double node = acc;\n"
    << "#pragma unroll\n"
    << "      for (int offset = 1; offset < 32; offset *= 2) {\n"
    << "        const double other = __shfl_down_sync(all, node, offset);\n"
    << "        if ((lane & (2 * offset - 1)) == 0) node = __dadd_rn(node, other);\n"
    << "      }\n"
    << "      for (u64 k = step; k & 1; k >>= 1) {\n"
    << "        --depth;\n"
    << "        node = __dadd_rn(__shfl_sync(all, level, depth), node);\n"
    << "      }\n"
    << "      const double top = __shfl_sync(all, node, 0);\n"
    << "      if (lane == depth) level = top;\n"
    << "      ++depth;\n"
    << "    }\n"
    << "    double root = __shfl_sync(all, level, depth - 1);\n"
    << "    for (int d = depth - 2; d >= 0; --d) root = __dadd_rn(__shfl_sync(all, level, d), root);\n"
    << "    if (lane == 0) r.partials[run] = root;\n"
    << "  }\n"
    << "}\n";
  out.text = s.str();
  return out;
}

void split_expr_range(std::size_t n, int group, const void* const* in, const int* in_size, int inputs,
                      void* const* out, const int* out_size, int outputs, ExprKernelArgs& args) {
  const std::uintptr_t out0 = reinterpret_cast<std::uintptr_t>(out[0]);
  std::uint64_t head = (16 - out0 % 16) % 16 / static_cast<std::uintptr_t>(out_size[0]);
  if (head > n) head = n;
  args.head = head;
  args.groups = (n - head) / static_cast<std::uint64_t>(group);
  args.tail = n - head - args.groups * static_cast<std::uint64_t>(group);
  args.vector_ok = 0;
  for (int k = 0; k < inputs; ++k)
    if (in[k] && (reinterpret_cast<std::uintptr_t>(in[k]) + head * in_size[k]) % 16 == 0) args.vector_ok |= 1u << k;
  for (int k = 0; k < outputs; ++k)
    if ((reinterpret_cast<std::uintptr_t>(out[k]) + head * out_size[k]) % 16 == 0) args.vector_ok |= 1u << (16 + k);
}

}  // namespace ew::detail::cuda
