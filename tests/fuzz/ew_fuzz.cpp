// ew_fuzz: a differential fuzzer of the public API against a reference of its own.
//
// Each call draws a backend (every usable one), a dtype (f32, f64, f16, bf16), an op kind, a size skewed
// small (up to 2^20), an element offset for every operand, an aliasing pattern the API
// allows (exact aliasing of the output, any overlap between inputs), scalars and inputs
// that mix ordinary values with NaN, +-inf, +-0, subnormals and the extremes, and elements
// that make a fused multiply-add differ from a multiply then an add. Every operand lies
// between guard elements: poison (a NaN no op produces) around an output of its own,
// random numbers around inputs. After the call, every element of every array is compared:
// the output's elements with the reference (NaN equals NaN, since payloads differ between
// ISAs; all else bit for bit; the poison is never right), everything else with what it
// held before, bit for bit.
//
// The reference is written here from the documented formulas (ew/ops.hpp's op table)
// with std::fma. It deliberately uses neither ew::apply nor any backend, so that a wrong
// formula in the library's own reference is caught too. 16-bit data (f16, bf16) follows the
// documented storage rule: the formula in float on the widened elements, with float
// scalars (a 16-bit param's rounded to its type first), rounded once to 16 bits (the
// library's conversions, which tests/float16 checks against IEEE 754).
//
// Extending it: an op kind, an op or an expression, is one entry of kinds<T>() (a
// generator, a reference, a call); a new element type is one more line in dtype_runners. Each call draws from its
// own generator seeded by (seed, call index), so `--seed S --replay I` runs call I alone.
//
// On cuda (when usable), arrays live in device memory (ew::Buffer), pinned, managed or
// pageable host memory, drawn per array.
#include <ew/ew.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// ---------------------------------------------------------------- random numbers

// splitmix64: fast, and a call's whole draw follows from one 64-bit state.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
  bool percent(unsigned p) { return below(100) < p; }
};

Rng call_rng(std::uint64_t seed, std::uint64_t call) {
  Rng mixer{seed ^ (call * 0xd1b54a32d192ed03ull)};
  mixer.next();
  return Rng{mixer.next()};
}

// ---------------------------------------------------------------- values

template <class T> struct BitsOf;
template <> struct BitsOf<float> { using type = std::uint32_t; static constexpr int mantissa_bits = 23; };
template <> struct BitsOf<double> { using type = std::uint64_t; static constexpr int mantissa_bits = 52; };
template <> struct BitsOf<ew::half> { using type = std::uint16_t; static constexpr int mantissa_bits = 10; };
template <> struct BitsOf<ew::bfloat16> { using type = std::uint16_t; static constexpr int mantissa_bits = 7; };
template <class T> using Bits = typename BitsOf<T>::type;

// The type T's arithmetic and scalars are in: float for the 16-bit storage types.
template <class T> using C = ew::compute_t<T>;
template <class T> C<T> to_compute(T v) { return static_cast<C<T>>(v); }
template <class T> T from_compute(C<T> v) { return T(v); }
template <class T> bool is_nan(T v) { return std::isnan(to_compute(v)); }

template <class T>
T from_bits(Bits<T> b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}
template <class T>
Bits<T> to_bits(T v) {
  Bits<T> b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// A quiet NaN with a payload that no input carries and no op produces: an output
// element still holding it was never written. For the 16-bit types a signaling NaN: every
// 16-bit result is rounded, which quiets NaNs.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, ew::half>) return from_bits<T>(0x7d5a);
  else if constexpr (std::is_same_v<T, ew::bfloat16>) return from_bits<T>(0x7f9a);
  else if constexpr (sizeof(T) == 4) return from_bits<T>(0x7fc0deadu);
  else return from_bits<T>(0x7ff80000deaddeadull);
}
template <class T>
bool is_poison(T v) { return to_bits(v) == to_bits(poison<T>()); }

// Equal bits, except that any NaN equals any NaN.
template <class T>
bool same_value(T got, T want) {
  if (is_nan(got) && is_nan(want)) return true;
  return to_bits(got) == to_bits(want);
}

template <class T>
T with_sign(Rng& r, T v) { return r.below(2) ? -v : v; }

// A random NaN of either sign, quiet or signalling, that is not the poison and does not
// become it when an op quiets it (a signalling 0x7f80dead comes out as 0x7fc0dead).
template <class T>
T random_nan(Rng& r) {
  using B = Bits<T>;
  constexpr int m = BitsOf<T>::mantissa_bits;
  const B exponent = ((B(1) << (sizeof(T) * 8 - 1 - m)) - 1) << m;
  const B quiet = B(1) << (m - 1);
  B payload = B(r.next()) & ((B(1) << m) - 1);
  if (payload == 0) payload = 1;  // not infinity
  if (is_poison(from_bits<T>(exponent | payload | quiet))) payload = quiet;
  return with_sign(r, from_bits<T>(exponent | payload));
}

// Full-precision mantissa, exponent within `spread` binades of 1.
template <class T>
T ordinary(Rng& r, int spread) {
  const T mantissa = T(1) + static_cast<T>(r.next() >> 11) * static_cast<T>(0x1p-53);
  const int exponent = static_cast<int>(r.below(2 * spread + 1)) - spread;
  return with_sign(r, std::ldexp(mantissa, exponent));
}

template <class T>
T special(Rng& r) {
  using L = std::numeric_limits<T>;
  switch (r.below(13)) {
    case 0: return with_sign(r, T(0));
    case 1: return with_sign(r, L::infinity());
    case 2: return random_nan<T>(r);
    case 3: return with_sign(r, L::denorm_min());
    case 4: return with_sign(r, from_bits<T>(Bits<T>(r.next()) & ((Bits<T>(1) << BitsOf<T>::mantissa_bits) - 1)));  // subnormal or 0
    case 5: return with_sign(r, L::min());
    case 6: return with_sign(r, L::max());
    case 7: return with_sign(r, std::nextafter(L::max(), T(0)));
    case 8: return with_sign(r, T(1));
    case 9: return with_sign(r, L::epsilon());
    case 10: return ordinary<T>(r, L::max_exponent - 1);        // anywhere in the normal range
    case 11: return with_sign(r, std::ldexp(ordinary<T>(r, 2), L::max_exponent - 3));  // products overflow
    default: return with_sign(r, std::ldexp(ordinary<T>(r, 2), L::min_exponent + 1));  // products underflow
  }
}

// One input element: `special_percent` of them special, the rest ordinary. A 16-bit
// special is any bit pattern (NaN payloads, subnormals, infinities), half the time, else
// a float special rounded to it; an ordinary one a float rounded to it.
template <class T>
T value(Rng& r, unsigned special_percent) {
  if constexpr (ew::is_storage16_v<T>) {
    if (!r.percent(special_percent)) return from_compute<T>(ordinary<float>(r, 12));
    return r.below(2) ? from_bits<T>(static_cast<std::uint16_t>(r.next())) : from_compute<T>(special<float>(r));
  } else {
    return r.percent(special_percent) ? special<T>(r) : ordinary<T>(r, 12);
  }
}

// A scalar: special a fifth of the time (in the compute type: float for 16-bit data).
template <class T>
C<T> scalar(Rng& r) { return value<C<T>>(r, 20); }

// An addend that cancels the product x*y up to its rounding error (or a nudge of one
// unit in the last place): there a fused multiply-add keeps the error term that a
// multiply then an add rounds away.
template <class T>
T cancelling(Rng& r, T x, T y) {
  T v = -(x * y);
  switch (r.below(4)) {
    case 0: return std::nextafter(v, std::numeric_limits<T>::infinity());
    case 1: return std::nextafter(v, -std::numeric_limits<T>::infinity());
    default: return v;
  }
}

// ---------------------------------------------------------------- op kinds

// One drawn call, as the generator leaves it: the operands' elements in host memory
// (null where the kind has no such operand; aliased operands point at the same
// elements) and the scalars.
template <class T>
struct Draw {
  std::size_t n = 0;
  T* a = nullptr;  // first input (x of axpy/axpby)
  T* b = nullptr;  // second input
  T* y = nullptr;  // the output's old value, for kinds that read it
  C<T> s = C<T>(1), t = C<T>(1);
  unsigned cancel_percent = 0;  // elements the generator should make fma-sensitive
};

// cancelling() for element types of any width: the addend computed in the compute type,
// then stored (rounded, for 16-bit data: the cancellation is then only near).
template <class T>
T cancel(Rng& r, C<T> x, T y) { return from_compute<T>(cancelling<C<T>>(r, x, to_compute(y))); }

template <class T>
struct OpKind {
  const char* name;
  int inputs;     // input arrays besides the output: 1 (a) or 2 (a, b)
  bool in_place;  // the output's old value is read (y)
  // Draws the scalars and adjusts elements (cancellation). Inputs are already random.
  void (*generate)(Rng& r, Draw<T>& d);
  // The documented formula for one element, in the compute type (the elements widened;
  // the result is then rounded once to T).
  C<T> (*reference)(C<T> a, C<T> b, C<T> y, C<T> s, C<T> t);
  // The public call.
  void (*call)(ew::Context& ctx, ew::Span<const T> a, ew::Span<const T> b, ew::Span<T> out, C<T> s, C<T> t);
  // An expression (ew::Kernel): a backend that does not evaluate expressions yet answers
  // Error(backend_unavailable), counted as unsupported, not as a mismatch.
  bool expression = false;
};

template <class T>
void no_scalars(Rng&, Draw<T>&) {}
template <class T>
void one_scalar(Rng& r, Draw<T>& d) { d.s = scalar<T>(r); }
template <class T>
void two_scalars(Rng& r, Draw<T>& d) { d.s = scalar<T>(r), d.t = scalar<T>(r); }
// A scalar passed as an ew::param<T>: a value of T (the reference computes with it), handed
// to the call nudged by less than half a unit of T (param_value), which the call's rounding
// to T must take away (a no-op for f64).
template <class T>
void one_param(Rng& r, Draw<T>& d) { d.s = to_compute(from_compute<T>(scalar<T>(r))); }
template <class T>
double param_value(C<T> s) {
  constexpr double nudge = ew::is_storage16_v<T> ? 0x1p-13 : std::is_same_v<T, float> ? 0x1p-30 : 0.0;
  return static_cast<double>(s) * (1 + nudge);
}

template <class T>
const std::vector<OpKind<T>>& kinds() {
  using S = ew::Span<const T>;
  using O = ew::Span<T>;
  using K = C<T>;
  static const std::vector<OpKind<T>> table = {
      {"copy", 1, false, no_scalars<T>,  //
       [](K a, K, K, K, K) { return a; },
       [](ew::Context& c, S a, S, O out, K, K) { ew::copy<T>(c, a, out); }},
      {"scale", 1, false, one_scalar<T>,  //
       [](K a, K, K, K s, K) { return s * a; },
       [](ew::Context& c, S a, S, O out, K s, K) { ew::scale<T>(c, s, a, out); }},
      {"add", 2, false, no_scalars<T>,  //
       [](K a, K b, K, K, K) { return a + b; },
       [](ew::Context& c, S a, S b, O out, K, K) { ew::add<T>(c, a, b, out); }},
      {"mul", 2, false, no_scalars<T>,  //
       [](K a, K b, K, K, K) { return a * b; },
       [](ew::Context& c, S a, S b, O out, K, K) { ew::mul<T>(c, a, b, out); }},
      {"triad", 2, false,  // c = fma(s, b, a)
       [](Rng& r, Draw<T>& d) {
         d.s = scalar<T>(r);
         for (std::size_t i = 0; i < d.n; ++i)
           if (r.percent(d.cancel_percent)) d.a[i] = cancel(r, d.s, d.b[i]);
       },
       [](K a, K b, K, K s, K) { return std::fma(s, b, a); },
       [](ew::Context& c, S a, S b, O out, K s, K) { ew::triad<T>(c, a, s, b, out); }},
      {"axpy", 1, true,  // y = fma(s, x, y)
       [](Rng& r, Draw<T>& d) {
         d.s = scalar<T>(r);
         for (std::size_t i = 0; i < d.n; ++i)
           if (d.y != d.a && r.percent(d.cancel_percent)) d.y[i] = cancel(r, d.s, d.a[i]);
       },
       [](K x, K, K y, K s, K) { return std::fma(s, x, y); },
       [](ew::Context& c, S x, S, O y, K s, K) { ew::axpy<T>(c, s, x, y); }},
      {"axpby", 1, true,  // y = fma(s, x, t*y), t*y rounded first
       [](Rng& r, Draw<T>& d) {
         two_scalars(r, d);
         for (std::size_t i = 0; i < d.n; ++i)
           if (d.y != d.a && d.t != K(0) && std::isfinite(d.t) && r.percent(d.cancel_percent))
             d.y[i] = from_compute<T>(to_compute(cancel(r, d.s, d.a[i])) / d.t);
       },
       [](K x, K, K y, K s, K t) { return std::fma(s, x, t * y); },
       [](ew::Context& c, S x, S, O y, K s, K t) { ew::axpby<T>(c, s, x, t, y); }},

      // Expressions (docs/expressions.md): every node rounds once, as written; 16-bit
      // nodes compute in f32 and round only where stored or cast.
      {"expr fma(p0, x0, x1)", 2, false,  // an f32 param on 16-bit data: an f32 node, cast once
       [](Rng& r, Draw<T>& d) {
         d.s = scalar<T>(r);
         for (std::size_t i = 0; i < d.n; ++i)
           if (d.b != d.a && r.percent(d.cancel_percent)) d.b[i] = cancel(r, d.s, d.a[i]);
       },
       [](K a, K b, K, K s, K) { return std::fma(s, a, b); },
       [](ew::Context& c, S a, S b, O out, K s, K) {
         static const ew::Kernel k =
             ew::compile({ew::cast<T>(ew::fma(ew::param<K>(0), ew::input<T>(0), ew::input<T>(1)))});
         k(c, {a, b}, {out}, {static_cast<double>(s)});
       },
       true},
      {"expr min(x0, x1) * p0 + max(x0, x1)", 2, false, one_param<T>,  // a param of T itself
       [](K a, K b, K, K s, K) {
         // NaN if either is NaN (the first one's); else the smaller/larger, the first where equal.
         const K lo = std::isnan(a) ? a : std::isnan(b) ? b : b < a ? b : a;
         const K hi = std::isnan(a) ? a : std::isnan(b) ? b : b > a ? b : a;
         const K scaled = lo * s;
         return scaled + hi;
       },
       [](ew::Context& c, S a, S b, O out, K s, K) {
         const ew::Expr x0 = ew::input<T>(0), x1 = ew::input<T>(1);
         static const ew::Kernel k = ew::compile({ew::min(x0, x1) * ew::param<T>(0) + ew::max(x0, x1)});
         k(c, {a, b}, {out}, {param_value<T>(s)});
       },
       true},
      {"expr select(x0 < x1, sqrt(abs(x0)), x1 / p0)", 2, false, one_param<T>,
       [](K a, K b, K, K s, K) { return a < b ? std::sqrt(std::fabs(a)) : b / s; },
       [](ew::Context& c, S a, S b, O out, K s, K) {
         const ew::Expr x0 = ew::input<T>(0), x1 = ew::input<T>(1);
         static const ew::Kernel k = ew::compile({ew::select(x0 < x1, ew::sqrt(ew::abs(x0)), x1 / ew::param<T>(0))});
         k(c, {a, b}, {out}, {param_value<T>(s)});
       },
       true},
  };
  return table;
}

// ---------------------------------------------------------------- memory

enum class Memory { pageable, device, pinned, managed };
const char* to_string(Memory m) {
  switch (m) {
    case Memory::pageable: return "pageable";
    case Memory::device: return "device";
    case Memory::pinned: return "pinned";
    case Memory::managed: return "managed";
  }
  return "?";
}

constexpr std::size_t guard = 16;       // poisoned elements before and after every operand's room
constexpr std::size_t max_offset = 32;  // operand offsets from a 64-byte boundary, in elements

// One allocation that operands point into: pageable host memory (64-byte aligned, reused
// from call to call), or an ew::Buffer in another memory space. `image` is its content
// seen from the host.
template <class T>
class Slot {
 public:
  void prepare(ew::Context& ctx, Memory memory, std::size_t length) {
    memory_ = memory;
    length_ = length;
    image.assign(length, poison<T>());
    buffer_.reset();
    if (memory == Memory::pageable) {
      if (host_capacity_ < length) {
        host_.reset(static_cast<T*>(std::aligned_alloc(64, (length * sizeof(T) + 63) / 64 * 64)));
        if (!host_) throw std::bad_alloc();
        host_capacity_ = length;
      }
    } else {
      const ew::MemorySpace space = memory == Memory::device   ? ew::MemorySpace::device
                                    : memory == Memory::pinned ? ew::MemorySpace::pinned
                                                               : ew::MemorySpace::managed;
      buffer_ = std::make_unique<ew::Buffer<T>>(ctx, length, space);
    }
  }
  T* data() const { return buffer_ ? buffer_->data() : host_.get(); }
  ew::MemorySpace space() const { return buffer_ ? buffer_->space() : ew::MemorySpace::unknown; }
  Memory memory() const { return memory_; }
  void upload() {
    if (buffer_) buffer_->upload(image.data(), length_);
    else std::memcpy(host_.get(), image.data(), length_ * sizeof(T));
  }
  void download(std::vector<T>& out) const {
    out.resize(length_);
    if (buffer_) buffer_->download(out.data(), length_);
    else std::memcpy(out.data(), host_.get(), length_ * sizeof(T));
  }

  std::vector<T> image;

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  Memory memory_ = Memory::pageable;
  std::size_t length_ = 0;
  std::unique_ptr<T, Free> host_;
  std::size_t host_capacity_ = 0;
  std::unique_ptr<ew::Buffer<T>> buffer_;
};

// The slots a call's operands live in, kept from call to call.
template <class T>
struct Arena {
  Slot<T> slots[3];
  std::vector<T> after;
};
template <class T>
Arena<T>& arena() {
  static Arena<T> a;
  return a;
}

// ---------------------------------------------------------------- one call

// How operands share memory. The API allows an output to be exactly an input (same
// first element and length) and inputs to overlap each other in any way.
enum class Aliasing { distinct, out_is_a, out_is_b, a_is_b, all_one, b_overlaps_a };
const char* to_string(Aliasing a) {
  switch (a) {
    case Aliasing::distinct: return "distinct";
    case Aliasing::out_is_a: return "out==a";
    case Aliasing::out_is_b: return "out==b";
    case Aliasing::a_is_b: return "a==b";
    case Aliasing::all_one: return "out==a==b";
    case Aliasing::b_overlaps_a: return "b-overlaps-a";
  }
  return "?";
}

// Exponent e drawn with weight 2^(-e/2), then n in (2^(e-1), 2^e]: about 1000 elements a
// call on average, 0 and 1 often, 2^20 a few hundred times in a million calls.
std::size_t draw_size(Rng& r) {
  constexpr int max_exponent = 20;
  static const std::vector<double> cumulative = [] {
    std::vector<double> c;
    double sum = 0;
    for (int e = 0; e <= max_exponent; ++e) c.push_back(sum += std::exp2(-e / 2.0));
    for (double& x : c) x /= sum;
    return c;
  }();
  const double u = static_cast<double>(r.next() >> 11) * 0x1p-53;
  const int e = static_cast<int>(std::lower_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
  if (e == 0) return r.below(2);
  const std::size_t low = std::size_t(1) << (e - 1);
  return low + 1 + r.below(low);
}

struct BackendRun {
  ew::Backend backend;
  std::unique_ptr<ew::Context> context;
  unsigned long long calls = 0, mismatches = 0, unsupported = 0;
};

struct Outcome {
  bool ok = true;
  std::string what;  // the call, then the first difference
};

template <class T>
std::string show(T v) {
  char text[64];
  if constexpr (ew::is_storage16_v<T>)
    std::snprintf(text, sizeof text, "%.9g (%a, bits 0x%04x)", static_cast<double>(v), static_cast<double>(v),
                  static_cast<unsigned>(to_bits(v)));
  else
    std::snprintf(text, sizeof text, "%.*g (%a)", std::numeric_limits<T>::max_digits10, static_cast<double>(v),
                  static_cast<double>(v));
  return text;
}

template <class T>
Outcome run_call(Rng& r, BackendRun& backend, bool verbose) {
  Slot<T>* slots = arena<T>().slots;
  std::vector<T>& after = arena<T>().after;
  ew::Context& ctx = *backend.context;
  const auto& table = kinds<T>();
  const OpKind<T>& kind = table[r.below(table.size())];
  const std::size_t n = draw_size(r);

  std::vector<Aliasing> allowed = {Aliasing::distinct, Aliasing::out_is_a};
  if (kind.inputs == 2)
    allowed.insert(allowed.end(), {Aliasing::out_is_b, Aliasing::a_is_b, Aliasing::all_one, Aliasing::b_overlaps_a});
  const Aliasing aliasing = r.percent(50) ? Aliasing::distinct : allowed[r.below(allowed.size())];

  // Slots: a in 0; b in 1, or in 0 where it shares a's memory; out in 2, or in its input's.
  const bool b_in_a = aliasing == Aliasing::a_is_b || aliasing == Aliasing::all_one || aliasing == Aliasing::b_overlaps_a;
  const int a_slot = 0;
  const int b_slot = kind.inputs < 2 ? -1 : b_in_a ? 0 : 1;
  const int out_slot = aliasing == Aliasing::out_is_a || aliasing == Aliasing::all_one ? 0
                       : aliasing == Aliasing::out_is_b                                ? b_slot
                                                                                       : 2;
  // Element offsets from a 64-byte boundary: the same for all a third of the time (so
  // that backends take their aligned vector paths), else each its own.
  std::size_t off_a = r.below(16), off_b = r.below(16), off_out = r.below(16);
  if (r.percent(33)) off_b = off_out = off_a;
  if (aliasing == Aliasing::a_is_b || aliasing == Aliasing::all_one) off_b = off_a;
  if (aliasing == Aliasing::b_overlaps_a) off_b = r.below(max_offset);
  if (aliasing == Aliasing::out_is_a || aliasing == Aliasing::all_one) off_out = off_a;
  if (aliasing == Aliasing::out_is_b) off_out = off_b;

  const bool on_gpu = backend.backend == ew::Backend::cuda;
  const std::size_t length = 2 * guard + max_offset + n;
  bool used[3] = {true, b_slot == 1, out_slot == 2};
  for (int k = 0; k < 3; ++k)
    if (used[k]) {
      Memory memory = Memory::pageable;
      if (on_gpu) memory = static_cast<Memory>(r.below(4));
      slots[k].prepare(ctx, memory, length);
    }

  // An output slot of its own is poisoned, guards included, and y random where it is read.
  // Slots holding an input are random throughout: an element read or written past an
  // operand's end then computes a number, which shows in the output's guard (poison
  // read from an input's guard would compute the poison again, and hide the write).
  for (int k = 0; k < 2; ++k)
    if (used[k])
      for (T& v : slots[k].image) v = value<T>(r, 0);
  static constexpr unsigned special_percents[] = {0, 1, 10, 50};
  const unsigned special_percent = special_percents[r.below(4)];
  auto fill = [&](int slot, std::size_t off) {
    T* p = slots[slot].image.data() + guard + off;
    for (std::size_t i = 0; i < n; ++i) p[i] = value<T>(r, special_percent);
  };
  fill(a_slot, off_a);
  if (b_slot >= 0) fill(b_slot, off_b);
  if (out_slot == 2 && kind.in_place) fill(out_slot, off_out);

  Draw<T> d;
  d.n = n;
  d.a = slots[a_slot].image.data() + guard + off_a;
  d.b = b_slot >= 0 ? slots[b_slot].image.data() + guard + off_b : nullptr;
  d.y = kind.in_place ? slots[out_slot].image.data() + guard + off_out : nullptr;
  static constexpr unsigned cancel_percents[] = {0, 5, 50};
  d.cancel_percent = cancel_percents[r.below(3)];
  kind.generate(r, d);

  // Expected: every slot as it is now, the output's elements as the reference says.
  std::vector<T> expected[3];
  for (int k = 0; k < 3; ++k)
    if (used[k]) expected[k] = slots[k].image;
  {
    const T* a = slots[a_slot].image.data() + guard + off_a;
    const T* b = b_slot >= 0 ? slots[b_slot].image.data() + guard + off_b : nullptr;
    const T* y = slots[out_slot].image.data() + guard + off_out;
    T* want = expected[out_slot].data() + guard + off_out;
    for (std::size_t i = 0; i < n; ++i)
      want[i] = from_compute<T>(
          kind.reference(to_compute(a[i]), b ? to_compute(b[i]) : C<T>(0), to_compute(y[i]), d.s, d.t));
  }

  for (int k = 0; k < 3; ++k)
    if (used[k]) slots[k].upload();

  char description[512];
  std::snprintf(description, sizeof description,
                "%s %s %s n=%zu offsets a=%zu b=%zu out=%zu %s memory a=%s b=%s out=%s s=%s t=%s", ctx.backend_name(),
                kind.name, ew::to_string(ew::dtype_v<T>), n, off_a, b_slot >= 0 ? off_b : 0, off_out,
                to_string(aliasing), to_string(slots[a_slot].memory()),
                b_slot >= 0 ? to_string(slots[b_slot].memory()) : "-", to_string(slots[out_slot].memory()),
                show(d.s).c_str(), show(d.t).c_str());
  if (verbose) std::printf("call: %s\n", description);

  const ew::Span<const T> a(slots[a_slot].data() + guard + off_a, n, slots[a_slot].space());
  const ew::Span<const T> b = b_slot >= 0 ? ew::Span<const T>(slots[b_slot].data() + guard + off_b, n, slots[b_slot].space())
                                          : ew::Span<const T>();
  const ew::Span<T> out(slots[out_slot].data() + guard + off_out, n, slots[out_slot].space());
  try {
    kind.call(ctx, a, b, out, d.s, d.t);
    ctx.synchronize();
  } catch (const ew::Error& e) {
    // A backend without expressions here, or the cuda backend without its 16-bit ops yet:
    // counted, not a mismatch (a CPU backend refusing is one).
    const bool no_16bit_op_yet = !kind.expression && ew::is_storage16_v<T> && e.code() == ew::Errc::unsupported &&
                                 backend.backend == ew::Backend::cuda;
    if ((kind.expression && e.code() == ew::Errc::backend_unavailable) || no_16bit_op_yet) {
      ++backend.unsupported;
      return {};
    }
    return {false, std::string(description) + ": threw " + e.what()};
  } catch (const std::exception& e) {
    return {false, std::string(description) + ": threw " + e.what()};
  }

  for (int k = 0; k < 3; ++k) {
    if (!used[k]) continue;
    slots[k].download(after);
    const bool output = k == out_slot;
    const std::size_t first = guard + off_out;
    for (std::size_t i = 0; i < length; ++i) {
      const bool computed = output && i >= first && i < first + n;
      const T got = after[i], want = expected[k][i];
      const bool ok = computed ? same_value(got, want) && !is_poison(got) : to_bits(got) == to_bits(want);
      if (ok) continue;
      std::string where;
      if (computed) {
        const std::size_t e = i - first;
        const T* a_before = slots[a_slot].image.data() + guard + off_a;
        const T* b_before = b_slot >= 0 ? slots[b_slot].image.data() + guard + off_b : nullptr;
        where = "element " + std::to_string(e) + " of out: got " + show(got) + (is_poison(got) ? " (never written)" : "") +
                ", expected " + show(want) + " from a=" + show(a_before[e]) +
                (b_before ? ", b=" + show(b_before[e]) : std::string()) +
                (kind.in_place ? ", y=" + show(slots[out_slot].image[i]) : std::string());
      } else {
        std::string holds;
        if (k == a_slot) holds += " a";
        if (k == b_slot) holds += " b";
        if (k == out_slot) holds += " out";
        where = "element " + std::to_string(i) + " of the array holding" + holds + " (offsets counted from element " +
                std::to_string(guard) + "), outside the output, changed: " + show(want) + " became " + show(got);
      }
      return {false, std::string(description) + ": " + where};
    }
  }
  return {};
}

using Runner = Outcome (*)(Rng&, BackendRun&, bool);
struct DTypeRunner {
  const char* name;
  Runner run;
};
// A new element type is one more line here, with its kinds<T>() table.
const DTypeRunner dtype_runners[] = {{"f32", run_call<float>},
                                     {"f64", run_call<double>},
                                     {"f16", run_call<ew::half>},
                                     {"bf16", run_call<ew::bfloat16>}};

// ---------------------------------------------------------------- driver

volatile std::sig_atomic_t crashed_call_low = 0, crashed_call_high = 0;
unsigned long long current_seed = 0;

void write_number(unsigned long long v) {
  char digits[24];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + v % 10);
  while (v /= 10);
  while (k) {
    const char c = digits[--k];
    if (write(2, &c, 1) < 0) return;
  }
}

void write_text(const char* s) {
  if (write(2, s, std::strlen(s)) < 0) return;
}

// A crash leaves no mismatch report: say which call it was, with what only
// async-signal-safe calls can print, then die of the same signal.
void on_crash(int sig) {
  const unsigned long long call = static_cast<unsigned long long>(static_cast<std::uint32_t>(crashed_call_high)) << 32 |
                                  static_cast<std::uint32_t>(crashed_call_low);
  write_text("\new_fuzz: crashed in call ");
  write_number(call);
  write_text("; replay: ew_fuzz --seed ");
  write_number(current_seed);
  write_text(" --replay ");
  write_number(call);
  write_text("\n");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: ew_fuzz [--calls N] [--seconds S] [--seed SEED] [--replay I]\n"
               "  --calls N     stop after N calls (default 1000000 unless --seconds alone is given)\n"
               "  --seconds S   stop after S seconds; with --calls, reaching S first is a failure\n"
               "  --seed SEED   the run's seed (default: random, printed)\n"
               "  --replay I    run call I of the run with SEED alone, and describe it\n",
               why);
  std::exit(2);
}

unsigned long long number(const char* option, const char* text) {
  if (!text) usage((std::string(option) + " needs a value").c_str());
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end || errno || text[0] == '-')
    usage((std::string(option) + " '" + text + "' is not a non-negative decimal number").c_str());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long long calls = 0, seconds = 0, seed = std::random_device{}() * 0x100000001ull ^ std::random_device{}();
  long long replay = -1;
  bool calls_given = false, seconds_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string option = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (option == "--calls") calls = number("--calls", next), calls_given = true, ++i;
    else if (option == "--seconds") seconds = number("--seconds", next), seconds_given = true, ++i;
    else if (option == "--seed") seed = number("--seed", next), ++i;
    else if (option == "--replay") replay = static_cast<long long>(number("--replay", next)), ++i;
    else if (option == "--help" || option == "-h") usage("ew_fuzz: a differential fuzzer of the elementwise API");
    else usage(("unknown option '" + option + "'").c_str());
  }
  if (!calls_given && !seconds_given) calls = 1000000, calls_given = true;
  current_seed = seed;

  std::vector<BackendRun> backends;
  std::string not_run;
  for (const ew::BackendStatus& s : ew::available_backends()) {
    if (!s.usable) {
      not_run += "; " + s.name + " not run: " + s.reason;
      continue;
    }
    backends.push_back({s.backend, std::make_unique<ew::Context>(s.backend)});
  }
  std::printf("ew_fuzz: seed %llu, backends:", seed);
  for (const BackendRun& b : backends) std::printf(" %s", ew::to_string(b.backend));
  std::printf("%s\n", not_run.c_str());
  std::fflush(stdout);

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)  // sanitizers report crashes themselves
  std::signal(SIGSEGV, on_crash);
  std::signal(SIGBUS, on_crash);
  std::signal(SIGFPE, on_crash);
  std::signal(SIGABRT, on_crash);
#endif

  auto one = [&](unsigned long long index, bool verbose) {
    crashed_call_low = static_cast<std::sig_atomic_t>(index & 0xffffffffu);
    crashed_call_high = static_cast<std::sig_atomic_t>(index >> 32);
    Rng r = call_rng(seed, index);
    BackendRun& backend = backends[r.below(backends.size())];
    const DTypeRunner& dtype = dtype_runners[r.below(std::size(dtype_runners))];
    ++backend.calls;
    Outcome o = dtype.run(r, backend, verbose);
    if (!o.ok) {
      ++backend.mismatches;
      std::printf("MISMATCH in call %llu: %s\n  replay: %s --seed %llu --replay %llu\n", index, o.what.c_str(), argv[0],
                  seed, index);
      std::fflush(stdout);
    }
    return o.ok;
  };

  auto release = [&] {  // buffers before their contexts, contexts before ew::finalize()
    arena<float>() = {};
    arena<double>() = {};
    arena<ew::half>() = {};
    arena<ew::bfloat16>() = {};
    backends.clear();
    ew::finalize();
  };
  if (replay >= 0) {
    const bool ok = one(static_cast<unsigned long long>(replay), true);
    std::printf("call %lld: %s\n", replay, ok ? "ok" : "MISMATCH");
    release();
    return ok ? 0 : 1;
  }

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  unsigned long long done = 0, mismatches = 0;
  bool out_of_time = false;
  for (; !calls_given || done < calls; ++done) {
    if (seconds_given && done % 256 == 0 && elapsed() >= static_cast<double>(seconds)) {
      out_of_time = true;
      break;
    }
    if (!one(done, false) && ++mismatches >= 20) {
      std::printf("ew_fuzz: stopping after 20 mismatches\n");
      ++done;
      break;
    }
  }

  std::printf("ew_fuzz: %llu calls, %llu mismatches, %.1f s, seed %llu (", done, mismatches, elapsed(), seed);
  for (std::size_t i = 0; i < backends.size(); ++i) {
    std::printf("%s%s %llu calls %llu mismatches", i ? ", " : "", ew::to_string(backends[i].backend),
                backends[i].calls, backends[i].mismatches);
    if (backends[i].unsupported) std::printf(" (%llu calls unsupported)", backends[i].unsupported);
  }
  std::printf(")%s\n", not_run.c_str());
  release();
  if (mismatches) return 1;
  if (out_of_time && calls_given) {
    std::printf("ew_fuzz: FAILED: the time bound (%llu s) ended the run after %llu of %llu calls\n", seconds, done,
                calls);
    return 3;
  }
  return 0;
}
