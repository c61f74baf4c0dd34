// The vectorized expression evaluator, compiled once per Highway target (see expr.cc).
//
// A register VM over the program of ew_internal/program.hpp, as numexpr: each thread's
// piece of the output range is cut into blocks (expr_block_elements), and each instruction
// runs as one vector loop over the whole block, from its operands' registers (one block
// each, in the thread's own register file, so intermediates stay in L1) into its own.
// Inputs are read from memory where they are (LoadU: any element alignment); params,
// constants and whatever depends on them alone are computed once per call by the scalar
// reference (a "uniform") and broadcast with Set inside the loops. An output is stored by
// the step that computes it when nothing reads it afterwards, else after the block's last
// step, so an output that is also an input is only written once the block has read it.
// The head that aligns output 0 (for streaming and aligned stores) and a piece's last
// partial vector first copy their inputs into padded buffers: no masked or partial loads,
// which Highway 1.0.3 lacks (LoadN) or makes fault on misaligned pointers (MaskedLoad on
// SSSE3/SSE4).
//
// Every operation rounds as element_eval.hpp does: the kit of math_kit-inl.h (fma is one
// rounding everywhere, lane by lane through std::fma where the target has no FMA), the
// library's exp, log, tanh, sigmoid, min, max and round on that kit, and exact conversions
// (Highway's emulated f64 -> f32 DemoteTo clamps to +-FLT_MAX, so those targets convert
// lane by lane as static_cast does).
//
// 16-bit data (f16, bf16) is computed in f32 (program.hpp): an input is widened once per
// block into its register by a step of its own, a cast to a 16-bit type rounds in f32
// registers, and a 16-bit output is rounded as it is stored, all with the vector
// conversions of float16-inl.h (the ones the fixed ops and ew::convert use).

// Per-target include guard, as Highway's skeleton-inl.h.
#if defined(EW_HIGHWAY_EXPR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EW_HIGHWAY_EXPR_INL_H_
#undef EW_HIGHWAY_EXPR_INL_H_
#else
#define EW_HIGHWAY_EXPR_INL_H_
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/element_eval.hpp"
#include "ew_internal/program.hpp"
#include "expr.hpp"
#include "float16-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "math_kit-inl.h"
#include "team.hpp"

HWY_BEFORE_NAMESPACE();
namespace ew::detail::highway {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

namespace expr {

// Padded copies of the last partial vector of each input: as many elements as f32 lanes
// (a multiple of the f64 lanes), of either dtype.
constexpr std::size_t kStageBytes = HWY_MAX_BYTES / sizeof(float) * sizeof(double);

// Where an instruction's value is: an input in memory, a register of the block, or one
// value for every element.
// Trivial, so that a Plan's arrays cost nothing until written; Source{} is a uniform zero.
struct Source {
  enum Kind : std::uint8_t { kUniform, kInput, kRegister };
  Kind kind;
  std::uint16_t index;  // input slot or register
  Value value;          // kUniform, in the instruction's compute dtype
};

// One block as the steps see it.
struct Block {
  const char* in[max_expr_inputs];  // the block's first element of each input read
  char* registers;                  // the thread's register file
  std::size_t register_bytes;       // of one register: the plan's block of doubles
  std::size_t count;                // elements to compute, a multiple of every lane count
  bool staged;                      // padded copies of a partial vector: outputs go through registers
  char* out[max_expr_outputs];      // the block's first element of each output
  bool stream[max_expr_outputs];    // whether its stores there may be non-temporal (vector-aligned)
  DType storage[max_expr_outputs];  // each output's dtype: a 16-bit one is rounded as stored
};

struct Step;
using StepFunction = void (*)(const Step&, const Block&);

// One instruction that is not uniform. Operands past the arity are uniform zeros.
struct Step {
  StepFunction run;
  std::uint16_t dst;     // register
  std::int8_t output;    // the output it stores straight to memory in whole-vector blocks, or -1
  bool can_store_output; // a step of one dtype (RunSameType)
  Source src[3];
};

struct Output {
  DType dtype;  // storage: a 16-bit output's source holds f32 values, rounded as stored
  Source src;
  char* data;
  bool stream;  // non-temporal stores where the block's address is vector-aligned
  bool direct;  // its instruction's step stores it (Step::output), except in padded blocks
};

// Built per call on the caller's stack; programs of up to kInline instructions need no
// allocation (a call on 16 elements costs about as much as its checks).
struct Plan {
  static constexpr std::size_t kInline = 48;
  Source* sources;  // one per instruction
  Step* steps;      // at most one per instruction, and a copy per output
  int step_count = 0;
  Source inline_sources[kInline];
  Step inline_steps[kInline + max_expr_outputs];
  std::vector<Source> heap_sources;
  std::vector<Step> heap_steps;
  Output out[max_expr_outputs];
  int outputs = 0;
  const char* input_data[max_expr_inputs];
  std::size_t input_bytes[max_expr_inputs];  // element size
  int read_slot[max_expr_inputs];
  int reads = 0;
  int registers = 0;  // the program's plan and the copies of inputs that outputs overwrite
  std::size_t block = 0;  // elements
  bool prefetch = false;  // the inputs are read by more than one step
  bool stream = false;
};

template <class T>
HWY_INLINE T UniformValue(const Source& s) {
  if constexpr (sizeof(T) == 4) return s.value.f;
  else return s.value.d;
}

template <class T>
HWY_INLINE const T* Address(const Source& s, const Block& b) {
  if (s.kind == Source::kInput) return reinterpret_cast<const T*>(b.in[s.index]);
  return reinterpret_cast<const T*>(b.registers + s.index * b.register_bytes);
}

template <class T>
HWY_INLINE T* RegisterAddress(std::uint16_t reg, const Block& b) {
  return reinterpret_cast<T*>(b.registers + reg * b.register_bytes);
}

// An operand inside a step's loop: loaded per vector, or broadcast once.
template <class D, bool kUniform>
struct Operand;
template <class D>
struct Operand<D, true> {
  hn::Vec<D> v;
  HWY_INLINE Operand(D d, const Source& s, const Block&) : v(hn::Set(d, UniformValue<hn::TFromD<D>>(s))) {}
  HWY_INLINE hn::Vec<D> At(D, std::size_t) const { return v; }
};
template <class D>
struct Operand<D, false> {
  const hn::TFromD<D>* p;
  HWY_INLINE Operand(D, const Source& s, const Block& b) : p(Address<hn::TFromD<D>>(s, b)) {}
  HWY_INLINE hn::Vec<D> At(D d, std::size_t i) const { return hn::LoadU(d, p + i); }
};

constexpr int OperandCount(Opcode op) {
  if (op == Opcode::input || op == Opcode::param || op == Opcode::constant) return 0;
  if (op <= Opcode::sigmoid) return 1;
  if (op <= Opcode::ne) return 2;
  return 3;
}

template <class D>
using Kit = HighwayKit<D>;

// The vector twin of apply_instr (element_eval.hpp). A cast within one dtype is a copy.
template <Opcode op, class D, class V>
HWY_INLINE V Apply(D d, V a, [[maybe_unused]] V b, [[maybe_unused]] V c) {
  using K = Kit<D>;
  namespace m = ew::math::HWY_NAMESPACE;
  const auto truth = [d](hn::Mask<D> mask) { return hn::IfThenElseZero(mask, hn::Set(d, hn::TFromD<D>(1))); };
  if constexpr (op == Opcode::cast) return a;
  else if constexpr (op == Opcode::neg) return K::neg(a);
  else if constexpr (op == Opcode::abs) return K::abs(a);
  else if constexpr (op == Opcode::sqrt) return K::sqrt(a);
  else if constexpr (op == Opcode::floor) return K::floor(a);
  else if constexpr (op == Opcode::ceil) return K::ceil(a);
  else if constexpr (op == Opcode::trunc) return K::trunc(a);
  else if constexpr (op == Opcode::round) return m::round<K>(a);
  else if constexpr (op == Opcode::exp) return m::exp<K>(a);
  else if constexpr (op == Opcode::log) return m::log<K>(a);
  else if constexpr (op == Opcode::tanh) return m::tanh<K>(a);
  else if constexpr (op == Opcode::sigmoid) return m::sigmoid<K>(a);
  else if constexpr (op == Opcode::add) return K::add(a, b);
  else if constexpr (op == Opcode::sub) return K::sub(a, b);
  else if constexpr (op == Opcode::mul) return K::mul(a, b);
  else if constexpr (op == Opcode::div) return K::div(a, b);
  else if constexpr (op == Opcode::min) return m::min<K>(a, b);
  else if constexpr (op == Opcode::max) return m::max<K>(a, b);
  else if constexpr (op == Opcode::lt) return truth(K::lt(a, b));
  else if constexpr (op == Opcode::le) return truth(K::le(a, b));
  else if constexpr (op == Opcode::gt) return truth(K::gt(a, b));
  else if constexpr (op == Opcode::ge) return truth(K::ge(a, b));
  else if constexpr (op == Opcode::eq) return truth(K::eq(a, b));
  else if constexpr (op == Opcode::ne) return truth(K::ne(a, b));
  else if constexpr (op == Opcode::fma) return K::fma(a, b, c);
  else return K::select(K::ne(a, hn::Zero(d)), b, c);  // select: a NaN condition is != 0
}

// Stores value(i) for every vector of the block: into the step's register, or straight
// into its output (non-temporal where the block's address allows).
// A step's f32 values rounded to a 16-bit output as it stores them, two vectors to one
// vector of 16-bit lanes (bf16: the rounded upper halves gathered by one ConcatOdd),
// streamed where the block allows; a last single vector as a half one.
template <class T16, class DF, class Value>
HWY_INLINE void StoreRounded(const Step& s, const Block& b, DF df, const Value& value) {
  const std::size_t N = hn::Lanes(df);
  uint16_t* HWY_RESTRICT out = reinterpret_cast<uint16_t*>(b.out[s.output]);
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint16_t> d16;
  const auto pair = [&](std::size_t j) HWY_ATTR {
    const auto lo = value(j), hi = value(j + N);
    if constexpr (std::is_same_v<T16, bfloat16>)
      return hn::ConcatOdd(d16, hn::BitCast(d16, NarrowBF16High(df, hi)), hn::BitCast(d16, NarrowBF16High(df, lo)));
    else
      return hn::Combine(d16, Narrow16<T16>(df, hi), Narrow16<T16>(df, lo));
  };
  if (b.stream[s.output])
    for (; i + 2 * N <= b.count; i += 2 * N) hn::Stream(pair(i), d16, out + i);
  else
    for (; i + 2 * N <= b.count; i += 2 * N) hn::StoreU(pair(i), d16, out + i);
#endif
  const hn::Rebind<uint16_t, DF> dh;
  for (; i < b.count; i += N) hn::StoreU(Narrow16<T16>(df, value(i)), dh, out + i);
}

template <class D, class Value>
HWY_INLINE void StoreValues(const Step& s, const Block& b, D d, const Value& value) {
  using T = hn::TFromD<D>;
  const std::size_t N = hn::Lanes(d);
  if constexpr (sizeof(T) == 4) {  // a 16-bit output computes in f32
    if (s.output >= 0 && !b.staged && is_storage16(b.storage[s.output])) {
      if (b.storage[s.output] == DType::f16) StoreRounded<half>(s, b, d, value);
      else StoreRounded<bfloat16>(s, b, d, value);
      return;
    }
  }
  if (s.output >= 0 && !b.staged) {
    T* HWY_RESTRICT out = reinterpret_cast<T*>(b.out[s.output]);
    if (b.stream[s.output])
      for (std::size_t i = 0; i < b.count; i += N) hn::Stream(value(i), d, out + i);
    else
      for (std::size_t i = 0; i < b.count; i += N) hn::StoreU(value(i), d, out + i);
  } else {
    T* HWY_RESTRICT out = RegisterAddress<T>(s.dst, b);
    for (std::size_t i = 0; i < b.count; i += N) hn::Store(value(i), d, out + i);
  }
}

// An instruction whose operands all have its dtype (select's condition included).
// Bit k of kUniform: operand k is broadcast.
template <Opcode op, class D, unsigned kUniform>
void RunSameType(const Step& s, const Block& b) {
  const D d;
  const Operand<D, (kUniform & 1) != 0> x(d, s.src[0], b);
  const Operand<D, (kUniform & 2) != 0> y(d, s.src[1], b);
  const Operand<D, (kUniform & 4) != 0> z(d, s.src[2], b);
  StoreValues(s, b, d, [&](std::size_t i) HWY_ATTR { return Apply<op>(d, x.At(d, i), y.At(d, i), z.At(d, i)); });
}

// min or max with one broadcast operand that is not NaN (a clamp, a relu): the result is
// still one of the operands, picked by one comparison instead of min's and max's four
// masks, with the same bits (a NaN lane of the other operand fails every comparison and
// is kept; equal operands give the first).
template <Opcode op, class D, unsigned kUniform>
void RunMinMaxWithNumber(const Step& s, const Block& b) {
  const D d;
  const Operand<D, kUniform == 5> x(d, s.src[0], b);
  const Operand<D, kUniform == 6> y(d, s.src[1], b);
  StoreValues(s, b, d, [&](std::size_t i) HWY_ATTR {
    const auto a = x.At(d, i), c = y.At(d, i);
    if constexpr (op == Opcode::min && kUniform == 6) return hn::IfThenElse(hn::Lt(c, a), c, a);
    else if constexpr (op == Opcode::min) return hn::IfThenElse(hn::Not(hn::Ge(c, a)), c, a);
    else if constexpr (kUniform == 6) return hn::IfThenElse(hn::Gt(c, a), c, a);
    else return hn::IfThenElse(hn::Not(hn::Le(c, a)), c, a);
  });
}

template <class D>
StepFunction MinMaxWithNumberStep(Opcode op, unsigned uniform) {
  if (op == Opcode::min) return uniform == 5 ? &RunMinMaxWithNumber<Opcode::min, D, 5> : &RunMinMaxWithNumber<Opcode::min, D, 6>;
  return uniform == 5 ? &RunMinMaxWithNumber<Opcode::max, D, 5> : &RunMinMaxWithNumber<Opcode::max, D, 6>;
}

// f64 -> f32 to nearest even, as static_cast<float>.
template <class DF, class V>
HWY_INLINE hn::Vec<DF> DemoteExactly(DF df, V v) {
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
  // Highway's emulated DemoteTo clamps to +-FLT_MAX (infinities included).
  const hn::Rebind<double, DF> dd;
  HWY_ALIGN double wide[hn::MaxLanes(dd)];
  HWY_ALIGN float narrow[hn::MaxLanes(df)];
  hn::Store(v, dd, wide);
  for (std::size_t i = 0; i < hn::Lanes(df); ++i) narrow[i] = static_cast<float>(wide[i]);
  return hn::Load(df, narrow);
#else
  return hn::DemoteTo(df, v);
#endif
}

// Mixed dtypes run over the f64 lanes, the f32 side as half vectors (Rebind).
template <bool kToF32>
void RunConvert(const Step& s, const Block& b) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t N = hn::Lanes(dd);
  if constexpr (kToF32) {
    const double* a = Address<double>(s.src[0], b);
    float* HWY_RESTRICT out = RegisterAddress<float>(s.dst, b);
    for (std::size_t i = 0; i < b.count; i += N) hn::Store(DemoteExactly(df, hn::LoadU(dd, a + i)), df, out + i);
  } else {
    const float* a = Address<float>(s.src[0], b);
    double* HWY_RESTRICT out = RegisterAddress<double>(s.dst, b);
    for (std::size_t i = 0; i < b.count; i += N) hn::Store(hn::PromoteTo(dd, hn::LoadU(df, a + i)), dd, out + i);
  }
}

// A 16-bit input's block widened into its register (exact; a NaN made quiet).
template <class T16>
void RunWiden(const Step& s, const Block& b) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const std::size_t N = hn::Lanes(df);
  const uint16_t* a = reinterpret_cast<const uint16_t*>(b.in[s.src[0].index]);
  float* HWY_RESTRICT out = RegisterAddress<float>(s.dst, b);
  for (std::size_t i = 0; i < b.count; i += N) hn::Store(Widen16<T16>(df, hn::LoadU(d16, a + i)), df, out + i);
}

// A float rounded to bf16 and widened again: the rounded bits (high half) with the low
// half cleared, one And after the rounding instead of a narrowing and a widening.
template <class DF>
HWY_INLINE hn::Vec<DF> RoundToBF16(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  return hn::BitCast(df, hn::And(NarrowBF16High(df, v), hn::Set(du, 0xffff0000u)));
}

// A cast to a 16-bit type: f32 values rounded once to it, kept as the f32 values they are.
template <class T16>
void RunRound16(const Step& s, const Block& b) {
  const hn::ScalableTag<float> df;
  const std::size_t N = hn::Lanes(df);
  const float* a = Address<float>(s.src[0], b);
  float* HWY_RESTRICT out = RegisterAddress<float>(s.dst, b);
  for (std::size_t i = 0; i < b.count; i += N) {
    const auto v = hn::LoadU(df, a + i);
    if constexpr (std::is_same_v<T16, bfloat16>) hn::Store(RoundToBF16(df, v), df, out + i);
    else hn::Store(Widen16<T16>(df, Narrow16<T16>(df, v)), df, out + i);
  }
}

// The same from f64: rounded once, straight from the double (through f32 it could round
// twice), lane by lane with the library's own conversion: a cast, not a stream.
template <class T16>
void RunRound16FromF64(const Step& s, const Block& b) {
  const double* a = Address<double>(s.src[0], b);
  float* HWY_RESTRICT out = RegisterAddress<float>(s.dst, b);
  for (std::size_t i = 0; i < b.count; ++i) out[i] = static_cast<float>(T16(a[i]));
}

// select with a condition of the other dtype: only its being != 0 matters, decided in its
// own dtype (a tiny f64 is not zero, though it would demote to 0).
template <class TValue, unsigned kUniform>
void RunMixedSelect(const Step& s, const Block& b) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t N = hn::Lanes(dd);
  TValue* HWY_RESTRICT out = RegisterAddress<TValue>(s.dst, b);
  if constexpr (sizeof(TValue) == 8) {
    const float* cond = Address<float>(s.src[0], b);
    const Operand<decltype(dd), (kUniform & 2) != 0> x(dd, s.src[1], b);
    const Operand<decltype(dd), (kUniform & 4) != 0> y(dd, s.src[2], b);
    for (std::size_t i = 0; i < b.count; i += N) {
      const auto c = hn::PromoteTo(dd, hn::LoadU(df, cond + i));  // exact, NaN stays NaN
      hn::Store(hn::IfThenElse(hn::Not(hn::Eq(c, hn::Zero(dd))), x.At(dd, i), y.At(dd, i)), dd, out + i);
    }
  } else {
    const double* cond = Address<double>(s.src[0], b);
    const Operand<decltype(df), (kUniform & 2) != 0> x(df, s.src[1], b);
    const Operand<decltype(df), (kUniform & 4) != 0> y(df, s.src[2], b);
    for (std::size_t i = 0; i < b.count; i += N) {
      const auto c = hn::LoadU(dd, cond + i);
      // 1 or 0 converts exactly: the mask crosses lane widths as a value.
      const auto truth = hn::DemoteTo(df, hn::IfThenElseZero(hn::Not(hn::Eq(c, hn::Zero(dd))), hn::Set(dd, 1.0)));
      hn::Store(hn::IfThenElse(hn::Eq(truth, hn::Set(df, 1.0f)), x.At(df, i), y.At(df, i)), df, out + i);
    }
  }
}

// The step of `op` for this uniform pattern; only the patterns that can occur are
// instantiated (all-uniform instructions are folded, operands past the arity are uniform).
template <Opcode op, class D>
StepFunction SameTypeStep(unsigned uniform) {
  constexpr int arity = op == Opcode::cast ? 1 : OperandCount(op);
  if constexpr (arity == 1) {
    return &RunSameType<op, D, 6>;
  } else if constexpr (arity == 2) {
    switch (uniform) {
      case 4: return &RunSameType<op, D, 4>;
      case 5: return &RunSameType<op, D, 5>;
      default: return &RunSameType<op, D, 6>;
    }
  } else {
    switch (uniform) {
      case 0: return &RunSameType<op, D, 0>;
      case 1: return &RunSameType<op, D, 1>;
      case 2: return &RunSameType<op, D, 2>;
      case 3: return &RunSameType<op, D, 3>;
      case 4: return &RunSameType<op, D, 4>;
      case 5: return &RunSameType<op, D, 5>;
      default: return &RunSameType<op, D, 6>;
    }
  }
}

template <class D>
StepFunction SameTypeStep(Opcode op, unsigned uniform) {
  switch (op) {
#define EW_STEP_CASE(name) \
  case Opcode::name: return SameTypeStep<Opcode::name, D>(uniform);
    EW_STEP_CASE(cast) EW_STEP_CASE(neg) EW_STEP_CASE(abs) EW_STEP_CASE(sqrt) EW_STEP_CASE(floor)
    EW_STEP_CASE(ceil) EW_STEP_CASE(trunc) EW_STEP_CASE(round) EW_STEP_CASE(exp) EW_STEP_CASE(log)
    EW_STEP_CASE(tanh) EW_STEP_CASE(sigmoid) EW_STEP_CASE(add) EW_STEP_CASE(sub) EW_STEP_CASE(mul)
    EW_STEP_CASE(div) EW_STEP_CASE(min) EW_STEP_CASE(max) EW_STEP_CASE(lt) EW_STEP_CASE(le) EW_STEP_CASE(gt)
    EW_STEP_CASE(ge) EW_STEP_CASE(eq) EW_STEP_CASE(ne) EW_STEP_CASE(fma) EW_STEP_CASE(select)
#undef EW_STEP_CASE
    default: return nullptr;  // leaves never become steps
  }
}

template <class TValue>
StepFunction MixedSelectStep(unsigned uniform) {
  switch (uniform) {  // the condition (bit 0) is not uniform: it would have picked an operand
    case 0: return &RunMixedSelect<TValue, 0>;
    case 2: return &RunMixedSelect<TValue, 2>;
    case 4: return &RunMixedSelect<TValue, 4>;
    default: return &RunMixedSelect<TValue, 6>;
  }
}

// The reference's value of an instruction whose operands are all uniform (eval_element).
inline Value Fold(const Program& p, const Instr& in, const Source* sources) {
  Value r{};
  const int arity = OperandCount(in.op);
  Value v[3]{};
  for (int a = 0; a < arity; ++a) v[a] = sources[in.arg[a]].value;
  if (in.op == Opcode::cast) {
    r = cast_value(in.dtype, p.code[in.arg[0]].dtype, v[0]);
  } else if (in.op == Opcode::select) {
    r = as_double(v[0], p.code[in.arg[0]].dtype) != 0.0 ? v[1] : v[2];
  } else if (in.dtype == DType::f64) {
    r.d = apply_instr<double>(in.op, v[0].d, v[1].d, v[2].d);
  } else {
    r.f = apply_instr<float>(in.op, v[0].f, v[1].f, v[2].f);
  }
  return r;
}

inline Source Uniform(const Instr& in, double value) {
  Source s{};
  s.value = uniform_value(in.dtype, value);
  return s;
}

inline Source Register(std::uint16_t reg) {
  Source s{};
  s.kind = Source::kRegister;
  s.index = reg;
  return s;
}

// A copy of `from` (one dtype) into register `reg`.
inline Step CopyStep(DType dtype, const Source& from, std::uint16_t reg) {
  Step s{};
  s.run = compute_dtype(dtype) == DType::f32 ? SameTypeStep<Opcode::cast, hn::ScalableTag<float>>(6)
                                             : SameTypeStep<Opcode::cast, hn::ScalableTag<double>>(6);
  s.dst = reg;
  s.output = -1;
  s.can_store_output = true;
  s.src[0] = from;
  return s;
}

// Lets the step that computes output k store it to memory itself (saving a pass through
// its register) where nothing reads that register or the output's memory afterwards: no
// other output of the same value, no later step reading the register, and no later step
// or input-copying output reading an input that the output overwrites.
inline void StoreStraight(const ExprCall& call, Plan& plan, int k) {
  Output& o = plan.out[k];
  if (o.src.kind != Source::kRegister) return;
  const std::uint16_t reg = o.src.index;
  int writer = plan.step_count - 1;
  while (writer >= 0 && plan.steps[writer].dst != reg) --writer;
  if (writer < 0 || !plan.steps[writer].can_store_output) return;
  for (int j = 0; j < plan.outputs; ++j) {
    const Source& other = plan.out[j].src;
    if (j != k && other.kind == Source::kRegister && other.index == reg) return;
    if (other.kind == Source::kInput && call.inputs[other.index] == o.data) return;
  }
  for (int later = writer + 1; later < plan.step_count; ++later)
    for (const Source& operand : plan.steps[later].src) {
      if (operand.kind == Source::kRegister && operand.index == reg) return;
      if (operand.kind == Source::kInput && call.inputs[operand.index] == o.data) return;
    }
  plan.steps[writer].output = static_cast<std::int8_t>(k);
  o.direct = true;
}

// The call's program as steps, with this call's params folded in.
inline void Decode(const ExprCall& call, std::size_t streaming_bytes, std::size_t forced_block, Plan& plan) {
  const Program& p = *call.program;
  const std::size_t count = p.code.size();
  if (count <= Plan::kInline) {
    plan.sources = plan.inline_sources;
    plan.steps = plan.inline_steps;
  } else {
    plan.heap_sources.resize(count);
    plan.heap_steps.resize(count + max_expr_outputs);
    plan.sources = plan.heap_sources.data();
    plan.steps = plan.heap_steps.data();
  }
  plan.step_count = 0;
  plan.registers = p.registers;
  Source* src = plan.sources;
  for (std::size_t k = 0; k < count; ++k) {
    const Instr& in = p.code[k];
    Source& s = src[k];
    s = Source{};
    if (in.op == Opcode::input) {
      s.kind = Source::kInput;
      s.index = in.slot;
      if (is_storage16(in.dtype)) {  // widened into its register; steps read that
        Step widen{};
        widen.run = in.dtype == DType::f16 ? &RunWiden<half> : &RunWiden<bfloat16>;
        widen.dst = in.reg;
        widen.output = -1;
        widen.src[0] = s;
        plan.steps[plan.step_count++] = widen;
        s = Register(in.reg);
      }
      continue;
    }
    if (in.op == Opcode::param) {
      s = Uniform(in, call.params[in.slot]);
      continue;
    }
    if (in.op == Opcode::constant) {
      s = Uniform(in, in.value);
      continue;
    }
    const int arity = OperandCount(in.op);
    unsigned uniform = 0;
    for (int a = 0; a < 3; ++a)
      if (a >= arity || src[in.arg[a]].kind == Source::kUniform) uniform |= 1u << a;
    if (uniform == 7) {
      s.value = Fold(p, in, src);
      continue;
    }
    // A uniform condition picks one operand; a cast within one compute dtype is that
    // operand, unless it rounds to 16 bits. An input or a uniform is then used where it
    // is; a register is copied, since the plan frees a register after its own readers,
    // not after those of an alias.
    const DType a_dtype = p.code[in.arg[0]].dtype;
    const bool pick = in.op == Opcode::select && (uniform & 1);
    const bool same = in.op == Opcode::cast && compute_dtype(a_dtype) == compute_dtype(in.dtype) && !is_storage16(in.dtype);
    if (pick || same) {
      const Source& same =
          pick ? src[in.arg[as_double(src[in.arg[0]].value, p.code[in.arg[0]].dtype) != 0.0 ? 1 : 2]] : src[in.arg[0]];
      if (same.kind == Source::kRegister) {
        plan.steps[plan.step_count++] = CopyStep(in.dtype, same, in.reg);
        s = Register(in.reg);
      } else {
        s = same;
      }
      continue;
    }
    Step step{};
    const bool f32 = compute_dtype(in.dtype) == DType::f32;
    const bool mixed_select = in.op == Opcode::select && compute_dtype(a_dtype) != compute_dtype(in.dtype);
    if (in.op == Opcode::cast && is_storage16(in.dtype)) {
      const bool from_f64 = a_dtype == DType::f64;
      if (in.dtype == DType::f16) step.run = from_f64 ? &RunRound16FromF64<half> : &RunRound16<half>;
      else step.run = from_f64 ? &RunRound16FromF64<bfloat16> : &RunRound16<bfloat16>;
    } else if (in.op == Opcode::cast) step.run = f32 ? &RunConvert<true> : &RunConvert<false>;
    else if (mixed_select)
      step.run = f32 ? MixedSelectStep<float>(uniform) : MixedSelectStep<double>(uniform);
    else if ((in.op == Opcode::min || in.op == Opcode::max) && (uniform == 5 || uniform == 6) &&
             !std::isnan(as_double(src[in.arg[uniform == 5 ? 0 : 1]].value, in.dtype)))
      step.run = f32 ? MinMaxWithNumberStep<hn::ScalableTag<float>>(in.op, uniform)
                     : MinMaxWithNumberStep<hn::ScalableTag<double>>(in.op, uniform);
    else
      step.run = f32 ? SameTypeStep<hn::ScalableTag<float>>(in.op, uniform)
                     : SameTypeStep<hn::ScalableTag<double>>(in.op, uniform);
    step.dst = in.reg;
    step.output = -1;
    step.can_store_output = in.op != Opcode::cast && !mixed_select;
    for (int a = 0; a < arity; ++a) step.src[a] = src[in.arg[a]];
    plan.steps[plan.step_count++] = step;
    s = Register(in.reg);
  }

  plan.reads = 0;
  for (int slot = 0; slot < p.input_slots; ++slot) {
    if (!p.input_read[slot]) continue;
    plan.read_slot[plan.reads++] = slot;
    plan.input_data[slot] = static_cast<const char*>(call.inputs[slot]);
    plan.input_bytes[slot] = size_of(p.input_dtype[slot]);
  }
  const auto is_input = [&](const void* data) {
    for (int r = 0; r < plan.reads; ++r)
      if (plan.input_data[plan.read_slot[r]] == data) return true;
    return false;
  };

  plan.outputs = static_cast<int>(p.outputs.size());
  // Outputs counted at their compute dtype's size, as the ops count them (backend.cpp).
  std::size_t output_bytes = 0;
  for (int k = 0; k < plan.outputs; ++k) output_bytes += call.n * size_of(compute_dtype(p.output_dtype(k)));
  plan.stream = output_bytes > streaming_bytes;
  for (int k = 0; k < plan.outputs; ++k) {
    Output& o = plan.out[k];
    o.dtype = p.output_dtype(k);
    o.src = src[p.outputs[k]];
    o.data = static_cast<char*>(call.outputs[k]);
    // An output equal to an input that another output overwrites: stores come after the
    // block's steps, so such an output takes a copy first.
    if (o.src.kind == Source::kInput) {
      bool overwritten = false;
      for (int j = 0; j < plan.outputs; ++j)
        overwritten |= j != k && call.outputs[j] == call.inputs[o.src.index];
      if (overwritten) {
        const auto reg = static_cast<std::uint16_t>(plan.registers++);
        plan.steps[plan.step_count++] = CopyStep(o.dtype, o.src, reg);
        o.src = Register(reg);
      }
    }
    // An output that is also an input is in cache already: streaming would only evict it.
    o.stream = plan.stream && !is_input(o.data);
    o.direct = false;
  }
  for (int k = 0; k < plan.outputs; ++k) StoreStraight(call, plan, k);
  int steps_reading_inputs = 0;
  for (int k = 0; k < plan.step_count; ++k) {
    bool reads_input = false;
    for (const Source& operand : plan.steps[k].src) reads_input |= operand.kind == Source::kInput;
    steps_reading_inputs += reads_input;
  }
  plan.prefetch = steps_reading_inputs > 1;
  std::size_t input_bytes = 0;
  for (int r = 0; r < plan.reads; ++r) input_bytes += plan.input_bytes[plan.read_slot[r]];
  plan.block = forced_block ? forced_block : expr_block_elements(plan.registers, input_bytes, plan.prefetch);
}

// The register files and padded input copies of a call too large for the stack, 64-byte
// aligned: one per thread of the call, all had before any output is written (a call that
// cannot have them throws with nothing written, and an in-place input intact), kept by the
// calling thread for its next calls. Each piece takes one and gives it back.
class Workspaces {
 public:
  ~Workspaces() { Release(); }
  // At least `count` workspaces of `bytes` each; false when the memory cannot be had.
  bool Reserve(std::size_t count, std::size_t bytes) {
    bytes = (bytes + 63) / 64 * 64;  // aligned_alloc wants a multiple of the alignment
    if (bytes > bytes_) Release(), bytes_ = bytes;
    try {
      all_.reserve(count), free_.reserve(count);
    } catch (const std::bad_alloc&) {
      return false;
    }
    while (all_.size() < count) {
      char* p = static_cast<char*>(std::aligned_alloc(64, bytes_));
      if (!p) return false;
      all_.push_back(p), free_.push_back(p);
    }
    return true;
  }
  // Never empty: no more pieces run at once than the call has threads.
  char* Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    char* p = free_.back();
    free_.pop_back();
    return p;
  }
  void Give(char* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(p);  // within the capacity reserved
  }

 private:
  void Release() {
    for (char* p : all_) std::free(p);
    all_.clear(), free_.clear();
  }
  std::mutex mutex_;
  std::vector<char*> all_, free_;
  std::size_t bytes_ = 0;
};

// Registers and padded inputs of one piece: on its thread's stack when they fit (most
// programs), else in a workspace of the call's.
constexpr std::size_t kStackWorkspaceBytes = (std::size_t(32) << 10) + max_expr_inputs * kStageBytes;
inline std::size_t WorkspaceBytes(const Plan& plan) {
  return plan.registers * plan.block * sizeof(double) + plan.reads * kStageBytes;
}

// The bytes of a whole vector of an output's elements (16-bit ones stored as whole vectors
// of uint16_t, two f32 vectors each).
inline std::size_t VectorBytes(DType t) {
  switch (t) {
    case DType::f32: return hn::Lanes(hn::ScalableTag<float>()) * sizeof(float);
    case DType::f64: return hn::Lanes(hn::ScalableTag<double>()) * sizeof(double);
    default: return hn::Lanes(hn::ScalableTag<uint16_t>()) * sizeof(uint16_t);
  }
}

template <class T>
void StoreOutput(const Output& o, const Block& b, std::size_t start, std::size_t len) {
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d);
  T* HWY_RESTRICT dst = reinterpret_cast<T*>(o.data) + start;
  const std::size_t full = len - len % N;
  const bool stream = o.stream && reinterpret_cast<std::uintptr_t>(dst) % (N * sizeof(T)) == 0;
  if (o.src.kind == Source::kUniform) {
    const T value = UniformValue<T>(o.src);
    const auto v = hn::Set(d, value);
    if (stream)
      for (std::size_t i = 0; i < full; i += N) hn::Stream(v, d, dst + i);
    else
      for (std::size_t i = 0; i < full; i += N) hn::StoreU(v, d, dst + i);
    for (std::size_t i = full; i < len; ++i) dst[i] = value;
  } else {
    const T* src = Address<T>(o.src, b);
    if (stream)
      for (std::size_t i = 0; i < full; i += N) hn::Stream(hn::LoadU(d, src + i), d, dst + i);
    else
      for (std::size_t i = 0; i < full; i += N) hn::StoreU(hn::LoadU(d, src + i), d, dst + i);
    if (full < len) std::memcpy(dst + full, src + full, (len - full) * sizeof(T));
  }
}

// A 16-bit output: its f32 values rounded once as they are stored; two f32 vectors make a
// whole vector of 16-bit lanes (streamed where aligned), a last single f32 vector a half
// one, and a padded block's few elements go one by one.
template <class T16>
void StoreOutput16(const Output& o, const Block& b, std::size_t start, std::size_t len) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> dh;
  const std::size_t N = hn::Lanes(df);
  uint16_t* HWY_RESTRICT dst = reinterpret_cast<uint16_t*>(o.data) + start;
  std::size_t i = 0;
  if (o.src.kind == Source::kUniform) {
    const uint16_t bits = T16(UniformValue<float>(o.src)).bits;
#if HWY_TARGET != HWY_SCALAR
    const hn::ScalableTag<uint16_t> d16;
    const bool stream = o.stream && reinterpret_cast<std::uintptr_t>(dst) % VectorBytes(o.dtype) == 0;
    const auto v = hn::Set(d16, bits);
    if (stream)
      for (; i + 2 * N <= len; i += 2 * N) hn::Stream(v, d16, dst + i);
    else
      for (; i + 2 * N <= len; i += 2 * N) hn::StoreU(v, d16, dst + i);
#endif
    for (; i < len; ++i) dst[i] = bits;
    return;
  }
  const float* src = Address<float>(o.src, b);
#if HWY_TARGET != HWY_SCALAR
  const hn::ScalableTag<uint16_t> d16;
  const bool stream = o.stream && reinterpret_cast<std::uintptr_t>(dst) % VectorBytes(o.dtype) == 0;
  // bf16: the rounded bits are the upper halves of the 32-bit lanes, gathered by one
  // ConcatOdd (a narrowing per vector costs a shift and a saturating pack each).
  const auto pair = [&](std::size_t j) HWY_ATTR {
    const auto lo = hn::LoadU(df, src + j), hi = hn::LoadU(df, src + j + N);
    if constexpr (std::is_same_v<T16, bfloat16>)
      return hn::ConcatOdd(d16, hn::BitCast(d16, NarrowBF16High(df, hi)), hn::BitCast(d16, NarrowBF16High(df, lo)));
    else
      return hn::Combine(d16, Narrow16<T16>(df, hi), Narrow16<T16>(df, lo));
  };
  if (stream)
    for (; i + 2 * N <= len; i += 2 * N) hn::Stream(pair(i), d16, dst + i);
  else
    for (; i + 2 * N <= len; i += 2 * N) hn::StoreU(pair(i), d16, dst + i);
#endif
  for (; i + N <= len; i += N) hn::StoreU(Narrow16<T16>(df, hn::LoadU(df, src + i)), dh, dst + i);
  for (; i < len; ++i) dst[i] = T16(src[i]).bits;
}

// Elements [start, start + len): len <= plan.block and a multiple of the f32 lanes (a
// multiple of the f64 lanes too), or len below the f32 lanes, when `staging` takes a padded
// copy of each input read (kStageBytes each).
inline void RunBlock(const Plan& plan, Block& b, char* staging, std::size_t start, std::size_t len) {
  const std::size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  const bool staged = len < lanes;
  b.count = staged ? lanes : len;
  for (int r = 0; r < plan.reads; ++r) {
    const int slot = plan.read_slot[r];
    const std::size_t bytes = plan.input_bytes[slot];
    const char* first = plan.input_data[slot] + start * bytes;
    if (staged) {
      char* copy = staging + r * kStageBytes;
      std::memcpy(copy, first, len * bytes);
      std::memset(copy + len * bytes, 0, (b.count - len) * bytes);
      b.in[slot] = copy;
    } else {
      b.in[slot] = first;
      // The next block of every input, requested now: steps read the inputs one or two
      // at a time, and the streams of the later ones would idle until their turn (from
      // DRAM, c = a*b + c*d went from 0.87x to 0.95x an OpenMP loop, min(max(s*a + b, lo),
      // hi) from 1.06x to 1.3x; see expr_block_elements). A program that reads all its
      // inputs in one step does not need it, and an add ran 5-10 % slower with it.
      if (plan.prefetch)
        for (std::size_t offset = 0; offset < len * bytes; offset += 64) hwy::Prefetch(first + len * bytes + offset);
    }
  }
  b.staged = staged;
  for (int k = 0; k < plan.outputs; ++k) {
    const Output& o = plan.out[k];
    const std::size_t bytes = size_of(o.dtype);
    b.out[k] = o.data + start * bytes;
    b.stream[k] = o.stream && reinterpret_cast<std::uintptr_t>(b.out[k]) % VectorBytes(o.dtype) == 0;
    b.storage[k] = o.dtype;
  }
  for (int k = 0; k < plan.step_count; ++k) plan.steps[k].run(plan.steps[k], b);
  for (int k = 0; k < plan.outputs; ++k) {
    if (plan.out[k].direct && !staged) continue;
    switch (plan.out[k].dtype) {
      case DType::f32: StoreOutput<float>(plan.out[k], b, start, len); break;
      case DType::f64: StoreOutput<double>(plan.out[k], b, start, len); break;
      case DType::f16: StoreOutput16<half>(plan.out[k], b, start, len); break;
      case DType::bf16: StoreOutput16<bfloat16>(plan.out[k], b, start, len); break;
    }
  }
}

// One thread's piece [begin, end): a head up to the first vector-aligned element of
// output 0 when the piece is longer than a block, whole blocks, the rest's whole vectors,
// then its last partial vector.
inline void RunPiece(const Plan& plan, Workspaces& workspaces, std::size_t begin, std::size_t end) {
  alignas(64) char on_stack[kStackWorkspaceBytes];
  const std::size_t register_bytes = plan.block * sizeof(double);
  const bool own = WorkspaceBytes(plan) > sizeof on_stack;
  char* base = own ? workspaces.Take() : on_stack;
  Block b;
  b.registers = base;
  b.register_bytes = register_bytes;
  char* staging = base + plan.registers * register_bytes;
  const std::size_t lanes = hn::Lanes(hn::ScalableTag<float>());
  std::size_t i = begin;
  if (end - begin > plan.block) {
    const std::size_t element = size_of(plan.out[0].dtype), vector_bytes = VectorBytes(plan.out[0].dtype);
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(plan.out[0].data + begin * element) % vector_bytes;
    // Below the f32 lanes, except for a 16-bit output (up to twice that): whole f32
    // vectors first, then the padded rest.
    for (std::size_t head = misalignment ? (vector_bytes - misalignment) / element : 0; head > 0;) {
      const std::size_t part = head >= lanes ? head / lanes * lanes : head;
      RunBlock(plan, b, staging, i, part);
      i += part, head -= part;
    }
  }
  for (; end - i >= plan.block; i += plan.block) RunBlock(plan, b, staging, i, plan.block);
  const std::size_t vectors = (end - i) / lanes * lanes;
  if (vectors) RunBlock(plan, b, staging, i, vectors);
  if (i + vectors < end) RunBlock(plan, b, staging, i + vectors, end - i - vectors);
  if (plan.stream) hwy::FlushStream();  // order the non-temporal stores before the caller's next access
  if (own) workspaces.Give(base);
}

}  // namespace expr

// Exported (expr.cc): the whole call on this target. Returns whether an output was streamed.
inline bool RunExpr(const ExprCall& call, int threads, std::size_t streaming_bytes, std::size_t forced_block) {
  expr::Plan plan;
  expr::Decode(call, streaming_bytes, forced_block, plan);
  thread_local expr::Workspaces calling_threads;
  expr::Workspaces& workspaces = calling_threads;  // a lambda names a thread_local without capturing it
  const std::size_t bytes = expr::WorkspaceBytes(plan), element = size_of(plan.out[0].dtype);
  // One per thread that may run a piece: the call's threads, one where it runs inline.
  const std::size_t count = threads <= 1 || call.n * element < parallel_threshold_bytes() ? 1 : std::size_t(threads);
  if (bytes > expr::kStackWorkspaceBytes && !workspaces.Reserve(count, bytes))
    throw Error(Errc::out_of_memory, "ew::Kernel on the highway backend: no memory for the block registers (" +
                                         std::to_string(count) + " x " + std::to_string(bytes) + " bytes)");
  for_each_piece(threads, call.n, plan.out[0].data, element,
                 [&](std::size_t begin, std::size_t end) { expr::RunPiece(plan, workspaces, begin, end); });
  bool streamed = false;
  for (int k = 0; k < plan.outputs; ++k) streamed |= plan.out[k].stream;
  return streamed;
}

}  // namespace HWY_NAMESPACE
}  // namespace ew::detail::highway
HWY_AFTER_NAMESPACE();

#endif  // include guard
