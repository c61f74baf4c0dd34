// f16 and bf16 on every backend (cuda where a GPU is usable: those cases carry the ctest
// label gpu), and on every Highway target this CPU has (forced one by one): ew::convert of all 65,536 patterns of each 16-bit type and of the rounding
// edges (ties, one unit either side, overflow, subnormal results, NaN) from f32 and f64,
// bit for bit against a reference written here from the IEEE definition (exact values in
// double, the nearest representable value found by search, ties to the even pattern);
// the seven ops on 16-bit data against float arithmetic rounded once by that reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ew/ew.hpp"
#include "test_support.hpp"

#ifdef EW_TEST_HIGHWAY_TARGETS
#include "hwy/targets.h"
#endif

namespace ew::test {
namespace {

// ---- The reference: binary formats from their definition.
struct Format {
  int exp_bits, mant_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  std::uint64_t inf() const { return ((std::uint64_t(1) << exp_bits) - 1) << mant_bits; }
  std::uint64_t sign() const { return std::uint64_t(1) << (exp_bits + mant_bits); }
};
constexpr Format f16_format{5, 10}, bf16_format{8, 7}, f32_format{8, 23}, f64_format{11, 52};

// The exact value of a non-negative finite pattern (or of the inf pattern: the value one
// unit past the largest finite number, where rounding to nearest starts giving inf).
long double value_of(std::uint64_t p, Format f) {
  const std::uint64_t e = p >> f.mant_bits, m = p & ((std::uint64_t(1) << f.mant_bits) - 1);
  if (e == 0) return std::ldexp(static_cast<long double>(m), 1 - f.bias() - f.mant_bits);
  return std::ldexp(static_cast<long double>(m + (std::uint64_t(1) << f.mant_bits)),
                    static_cast<int>(e) - f.bias() - f.mant_bits);
}

// x (finite, its exact value) rounded to nearest, ties to the even pattern, in format f.
std::uint64_t round_ref(long double x, Format f) {
  const bool negative = std::signbit(x);
  const long double a = std::fabs(x);
  // The largest pattern whose value is <= a, searched among [0, inf].
  std::uint64_t lo = 0, hi = f.inf();
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo + 1) / 2;
    if (value_of(mid, f) <= a) lo = mid;
    else hi = mid - 1;
  }
  std::uint64_t r = lo;
  if (lo < f.inf() && value_of(lo, f) != a) {
    const long double midpoint = (value_of(lo, f) + value_of(lo + 1, f)) / 2;  // exact: few bits
    if (a > midpoint || (a == midpoint && (lo & 1))) r = lo + 1;
  }
  return (negative ? f.sign() : 0) | r;
}

// A source given by its sign, fraction and value: NaN (sign, quiet, the fraction's top
// bits), ±inf, or the finite value rounded.
struct Source {
  bool nan, inf, negative;
  std::uint64_t fraction;  // the source's fraction bits
  int fraction_bits;
  long double value;
};

std::uint64_t narrow_ref(const Source& s, Format f) {
  const std::uint64_t sign = s.negative ? f.sign() : 0;
  if (s.nan) {
    const std::uint64_t top = s.fraction >> (s.fraction_bits - f.mant_bits);
    return sign | f.inf() | (std::uint64_t(1) << (f.mant_bits - 1)) | top;
  }
  if (s.inf) return sign | f.inf();
  return round_ref(s.value, f);
}

template <class U>
Source source_of(U bits, Format f) {
  const std::uint64_t b = bits;
  const std::uint64_t magnitude = b & (f.sign() - 1), fraction = b & ((std::uint64_t(1) << f.mant_bits) - 1);
  Source s{magnitude > f.inf(), magnitude == f.inf(), (b & f.sign()) != 0, fraction, f.mant_bits, 0};
  if (!s.nan && !s.inf) s.value = (s.negative ? -1 : 1) * value_of(magnitude, f);
  return s;
}

template <class T> constexpr Format format_of();
template <> constexpr Format format_of<half>() { return f16_format; }
template <> constexpr Format format_of<bfloat16>() { return bf16_format; }
template <> constexpr Format format_of<float>() { return f32_format; }
template <> constexpr Format format_of<double>() { return f64_format; }

template <class T>
std::uint64_t bits_of(T x) {
  if constexpr (sizeof(T) == 2) { std::uint16_t b; std::memcpy(&b, &x, 2); return b; }
  else if constexpr (sizeof(T) == 4) { std::uint32_t b; std::memcpy(&b, &x, 4); return b; }
  else { std::uint64_t b; std::memcpy(&b, &x, 8); return b; }
}
template <class T>
T from_bits(std::uint64_t b) {
  T x;
  if constexpr (sizeof(T) == 2) { const auto v = static_cast<std::uint16_t>(b); std::memcpy(&x, &v, 2); }
  else if constexpr (sizeof(T) == 4) { const auto v = static_cast<std::uint32_t>(b); std::memcpy(&x, &v, 4); }
  else std::memcpy(&x, &b, 8);
  return x;
}

// What ew::convert<From, To> must give, from the rules: widening exact (a NaN made
// quiet, its payload kept), narrowing rounded once from the source, the same type copied.
template <class From, class To>
std::uint64_t convert_ref(From x) {
  constexpr Format from = format_of<From>(), to = format_of<To>();
  if constexpr (std::is_same_v<From, To>) {
    return bits_of(x);
  } else if constexpr (is_storage16_v<From> && is_storage16_v<To>) {
    // Through float: exact (a NaN quieted), then rounded once.
    return narrow_ref(source_of(convert_ref<From, float>(x), f32_format), to);
  } else if constexpr (sizeof(To) > sizeof(From)) {
    const Source s = source_of(bits_of(x), from);
    const std::uint64_t sign = s.negative ? to.sign() : 0;
    if (s.nan)
      return sign | to.inf() | (std::uint64_t(1) << (to.mant_bits - 1)) | (s.fraction << (to.mant_bits - from.mant_bits));
    if (s.inf) return sign | to.inf();
    return round_ref(s.value, to);  // exact: the value is representable
  } else {
    return narrow_ref(source_of(bits_of(x), from), to);
  }
}

// ---- Backends: scalar, kokkos, cuda, and highway once per target this CPU has.
struct Where {
  Backend backend;
  std::int64_t target;  // a Highway target to force, or 0
  std::string name;
};

void PrintTo(const Where& w, std::ostream* os) { *os << w.name; }

std::vector<Where> places() {
  std::vector<Where> w{{Backend::scalar, 0, "scalar"}, {Backend::kokkos, 0, "kokkos"}, {Backend::cuda, 0, "cuda"}};
#ifdef EW_TEST_HIGHWAY_TARGETS
  for (std::int64_t t : hwy::SupportedAndGeneratedTargets())
    w.push_back({Backend::highway, t, std::string("highway_") + hwy::TargetName(t)});
#else
  w.push_back({Backend::highway, 0, "highway"});
#endif
  return w;
}

class Float16 : public testing::TestWithParam<Where> {
 protected:
  void SetUp() override {
#ifdef EW_TEST_HIGHWAY_TARGETS
    if (GetParam().target) hwy::SetSupportedTargetsForTest(GetParam().target);
#endif
  }
  void TearDown() override {
#ifdef EW_TEST_HIGHWAY_TARGETS
    if (GetParam().target) hwy::SetSupportedTargetsForTest(0);
#endif
  }
};

// Converts `in` on the backend at element offsets 0 and 1 (misaligned for vectors) into
// a poisoned output with 4 guard elements each side, and compares every element, guards
// included, with the reference bit for bit (NaN payloads too: the rules fix them).
template <class From, class To>
void expect_convert(Context& ctx, const std::vector<From>& in) {
  const std::size_t n = in.size();
  const To poison_value = from_bits<To>(sizeof(To) == 2 ? 0x7d5a : sizeof(To) == 4 ? 0x7fc0dead : 0x7ff80000deaddeadull);
  for (std::size_t offset : {0, 1}) {
    Buffer<From> din(ctx, n + offset);
    Buffer<To> dout(ctx, n + 8);
    std::vector<From> host_in(n + offset, From{});
    std::copy(in.begin(), in.end(), host_in.begin() + offset);
    din.upload(host_in.data(), n + offset);
    std::vector<To> out(n + 8, poison_value);
    dout.upload(out.data(), n + 8);
    convert<From, To>(ctx, Span<const From>(din.data() + offset, n, din.space()),
                      Span<To>(dout.data() + 4 - offset, n, dout.space()));
    ctx.synchronize();
    dout.download(out.data(), n + 8);
    for (std::size_t i = 0; i < n + 8; ++i) {
      const bool inside = i >= 4 - offset && i < 4 - offset + n;
      const std::uint64_t want = inside ? convert_ref<From, To>(in[i - (4 - offset)]) : bits_of(poison_value);
      if (bits_of(out[i]) != want) {
        FAIL() << ctx.backend_name() << " " << to_string(dtype_v<From>) << " -> " << to_string(dtype_v<To>)
               << " offset " << offset << ": element " << i << (inside ? "" : " (guard)") << " input bits 0x" << std::hex
               << (inside ? bits_of(in[i - (4 - offset)]) : 0) << " gave 0x" << bits_of(out[i]) << ", expected 0x" << want;
      }
    }
  }
}

template <class T>
std::vector<T> all_patterns() {
  std::vector<T> v(65536);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = from_bits<T>(i);
  return v;
}

// The edges of rounding to format f in a source type S: for every non-negative finite
// pattern (both signs), its value, the midpoint to the next pattern (a tie) and the
// source's neighbours of both (one unit of S either side), where S can hold them.
template <class S>
std::vector<S> rounding_edges(Format f, std::size_t stride = 1) {
  std::vector<S> v;
  for (std::uint64_t p = 0; p < f.inf(); p += stride) {
    const long double lo = value_of(p, f), mid = (lo + value_of(p + 1, f)) / 2;
    for (long double x : {lo, mid}) {
      const S s = static_cast<S>(x);
      if (static_cast<long double>(s) != x || std::isinf(s)) continue;  // not exact in S
      for (S y : {s, std::nextafter(s, S(0)), std::nextafter(s, std::numeric_limits<S>::infinity())})
        v.push_back(y), v.push_back(-y);
    }
  }
  using L = std::numeric_limits<S>;
  for (S y : {L::infinity(), L::quiet_NaN(), L::max(), L::denorm_min(), L::min(), S(0)}) v.push_back(y), v.push_back(-y);
  v.push_back(from_bits<S>(sizeof(S) == 4 ? 0x7f800001u : 0x7ff0000000000001ull));   // signaling NaN
  v.push_back(from_bits<S>(sizeof(S) == 4 ? 0xffa5a5a5u : 0xfff5a5a5a5a5a5a5ull));   // negative, payload
  std::mt19937_64& r = rng();
  for (int i = 0; i < 100000; ++i) v.push_back(from_bits<S>(r()));
  return v;
}

TEST_P(Float16, AllPatternsWiden) {
  EW_SKIP_IF_UNUSABLE(GetParam().backend);
  Context ctx(GetParam().backend);
  const auto h = all_patterns<half>();
  const auto b = all_patterns<bfloat16>();
  expect_convert<half, float>(ctx, h);
  expect_convert<half, double>(ctx, h);
  expect_convert<half, bfloat16>(ctx, h);
  expect_convert<half, half>(ctx, h);
  expect_convert<bfloat16, float>(ctx, b);
  expect_convert<bfloat16, double>(ctx, b);
  expect_convert<bfloat16, half>(ctx, b);
  expect_convert<bfloat16, bfloat16>(ctx, b);
}

TEST_P(Float16, RoundingEdgesFromFloat) {
  EW_SKIP_IF_UNUSABLE(GetParam().backend);
  Context ctx(GetParam().backend);
  expect_convert<float, half>(ctx, rounding_edges<float>(f16_format));
  expect_convert<float, bfloat16>(ctx, rounding_edges<float>(bf16_format));
}

TEST_P(Float16, RoundingEdgesFromDouble) {
  EW_SKIP_IF_UNUSABLE(GetParam().backend);
  Context ctx(GetParam().backend);
  // One unit of double either side of a tie: through float it would become the tie.
  expect_convert<double, half>(ctx, rounding_edges<double>(f16_format));
  expect_convert<double, bfloat16>(ctx, rounding_edges<double>(bf16_format));
  expect_convert<double, float>(ctx, rounding_edges<double>(f32_format, 40009));
  expect_convert<float, double>(ctx, rounding_edges<float>(f16_format));
}

// The ops on 16-bit data: float arithmetic on the exact values (the f32 op's own
// formula), rounded once by the reference above. `inputs(n)` gives the input arrays.
// A NaN result of copy (no arithmetic) must have the reference's bits; of the other ops
// any NaN will do (their payloads are unspecified, docs/ops.md).
template <class T, class Inputs>
void expect_ops_on(Context& ctx, const std::vector<std::size_t>& sizes, Inputs inputs) {
  for (const OpInfo& oi : op_table)
    for (std::size_t n : sizes)
      for (std::size_t off : {0, 1}) {
        std::vector<T> a = inputs(n + 8), b = inputs(n + 8), out(n + 8, poison<T>());
        std::rotate(b.begin(), b.begin() + static_cast<std::ptrdiff_t>((n + 8) / 3), b.end());  // other pairs than a's
        if (oi.in_place) std::copy(b.begin(), b.end(), out.begin());
        const float s = random_scalar<float>(), t = random_scalar<float>();
        auto wide = [](T x) { return from_bits<float>(convert_ref<T, float>(x)); };
        std::vector<std::uint64_t> want(n + 8);
        for (std::size_t i = 0; i < n + 8; ++i) {
          if (i < 4 || i >= 4 + n) {  // outside the output: untouched
            want[i] = bits_of(out[i]);
            continue;
          }
          const std::size_t j = i - 4 + off;  // input element
          const float y = oi.in_place ? wide(out[i]) : oi.input_streams == 2 ? wide(b[j]) : 0.0f;
          float r = 0;
          dispatch_op(oi.op, [&](auto o) { r = apply<decltype(o)::value>(wide(a[j]), y, s, t); });
          want[i] = convert_ref<float, T>(r);
        }
        Buffer<T> da(ctx, n + 8), db(ctx, n + 8), dout(ctx, n + 8);
        da.upload(a.data(), n + 8), db.upload(b.data(), n + 8), dout.upload(out.data(), n + 8);
        Operands<T> args;
        args.a = Span<const T>(da.data() + off, n, da.space());
        if (oi.input_streams == 2) args.b = Span<const T>(db.data() + off, n, db.space());
        args.out = Span<T>(dout.data() + 4, n, dout.space());
        args.s = s, args.t = t;
        run(ctx, oi.op, args);
        ctx.synchronize();
        dout.download(out.data(), n + 8);
        for (std::size_t i = 0; i < n + 8; ++i) {
          // Guards, and copy's results, bit for bit; every result written (the poison is a
          // signalling NaN, which no op returns).
          const bool loose = oi.op != Op::copy && i >= 4 && i < 4 + n;
          const bool ok = loose ? same_bits(out[i], from_bits<T>(want[i])) && !is_poison(out[i]) : bits_of(out[i]) == want[i];
          if (!ok) {
            FAIL() << ctx.backend_name() << " " << oi.name << " " << to_string(dtype_v<T>) << " n=" << n << " off=" << off
                   << ": element " << i << " is 0x" << std::hex << bits_of(out[i]) << ", expected 0x" << want[i];
          }
        }
      }
}

template <class T>
void expect_ops(Context& ctx) {
  expect_ops_on<T>(ctx, {1, 37, 1000, 70001}, [](std::size_t n) { return random_vector<T>(n); });
}

TEST_P(Float16, OpsRoundOnceFromFloatArithmetic) {
  EW_SKIP_IF_UNUSABLE(GetParam().backend);
  Context ctx(GetParam().backend);
  expect_ops<half>(ctx);
  expect_ops<bfloat16>(ctx);
}

// Every pattern as an input of every op (subnormals, infinities, NaNs, the largest
// values): inputs widened exactly, results rounded once. copy keeps every pattern but
// quiets NaNs, bit for bit (it is widening then narrowing).
template <class T>
std::vector<T> patterns_then_random(std::size_t n) {
  std::vector<T> v = all_patterns<T>();
  v.resize(n);
  for (std::size_t i = 65536; i < n; ++i) v[i] = from_bits<T>(rng()() & 0xffff);
  return v;
}

TEST_P(Float16, AllPatternsThroughOps) {
  EW_SKIP_IF_UNUSABLE(GetParam().backend);
  Context ctx(GetParam().backend);
  expect_ops_on<half>(ctx, {65536 + 13}, patterns_then_random<half>);
  expect_ops_on<bfloat16>(ctx, {65536 + 13}, patterns_then_random<bfloat16>);
}

// f16 <-> bf16 in place (the same bytes: allowed when the element sizes match).
TEST_P(Float16, ConvertInPlaceBetween16BitTypes) {
  EW_SKIP_IF_UNUSABLE(GetParam().backend);
  Context ctx(GetParam().backend);
  const std::vector<half> h = patterns_then_random<half>(65536 + 1003);
  const std::size_t n = h.size();
  Buffer<half> d(ctx, n);
  d.upload(h.data(), n);
  convert<half, bfloat16>(ctx, d.span(), Span<bfloat16>(reinterpret_cast<bfloat16*>(d.data()), n, d.space()));
  ctx.synchronize();
  std::vector<bfloat16> got(n);
  std::vector<half> raw(n);
  d.download(raw.data(), n);
  std::memcpy(got.data(), raw.data(), n * 2);
  for (std::size_t i = 0; i < n; ++i)
    ASSERT_EQ(bits_of(got[i]), (convert_ref<half, bfloat16>(h[i]))) << ctx.backend_name() << " element " << i;
}

INSTANTIATE_TEST_SUITE_P(Backends, Float16, testing::ValuesIn(places()),
                         [](const testing::TestParamInfo<Where>& i) { return i.param.name; });

// ---- cuda's memory spaces: ew::convert reads and writes device, managed and pinned
// memory where it is and refuses pageable memory (nothing written); the ops take
// pageable and pinned 16-bit operands through the transfer pipeline.
TEST(Float16Cuda, ConvertMemorySpaces) {
  EW_SKIP_IF_UNUSABLE(Backend::cuda);
  Context ctx(Backend::cuda);
  const std::size_t n = 100003;
  const std::vector<float> f = rounding_edges<float>(bf16_format, 977);
  const std::size_t m = std::min(n, f.size());
  for (MemorySpace space : {MemorySpace::pinned, MemorySpace::managed}) {
    Buffer<float> in(ctx, m, space);
    Buffer<bfloat16> out(ctx, m + 1, space);
    std::copy(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(m), in.data());
    std::fill(out.data(), out.data() + m + 1, poison<bfloat16>());
    convert<float, bfloat16>(ctx, in.span(), Span<bfloat16>(out.data() + 1, m, space));  // out at an odd offset
    ctx.synchronize();
    ASSERT_TRUE(is_poison(out.data()[0])) << to_string(space);
    for (std::size_t i = 0; i < m; ++i)
      ASSERT_EQ(bits_of(out.data()[i + 1]), (convert_ref<float, bfloat16>(f[i]))) << to_string(space) << " element " << i;
  }
  std::vector<half> h(n, poison<half>());
  std::vector<float> g(n, 1.0f);
  Buffer<half> device(ctx, n);
  expect_error(Errc::foreign_memory, [&] { convert<float, half>(ctx, Span<const float>(g.data(), n), device.span()); },
               "in is pageable host memory");
  expect_error(Errc::foreign_memory, [&] { convert<half, half>(ctx, device.span(), Span<half>(h.data(), n)); },
               "out is pageable host memory");
  ctx.synchronize();
  for (const half& x : h) ASSERT_EQ(x.bits, poison<half>().bits);
}

template <class T>
void expect_host_resident_ops(Context& gpu, Context& reference) {
  const std::size_t n = (std::size_t(1) << 20) + 5;
  for (const OpInfo& oi : op_table) {
    std::vector<T> a = random_vector<T>(n), b = random_vector<T>(n), want(n, poison<T>());
    const float s = random_scalar<float>(), t = random_scalar<float>();
    auto call = [&](Context& ctx, Span<const T> x, Span<const T> y, Span<T> out) {
      Operands<T> args;
      args.a = x;
      if (oi.input_streams == 2) args.b = y;
      args.out = out;
      args.s = s, args.t = t;
      run(ctx, oi.op, args);
      ctx.synchronize();
    };
    if (oi.in_place) want = b;
    call(reference, a, b, want);
    // pageable
    std::vector<T> got(n, poison<T>());
    if (oi.in_place) got = b;
    call(gpu, a, b, got);
    EXPECT_EQ(first_mismatch(got, want), -1) << oi.name << " " << to_string(dtype_v<T>) << " pageable";
    // pinned
    Buffer<T> pa(gpu, n, MemorySpace::pinned), pb(gpu, n, MemorySpace::pinned), pout(gpu, n, MemorySpace::pinned);
    std::copy(a.begin(), a.end(), pa.data());
    std::copy(b.begin(), b.end(), pb.data());
    if (oi.in_place) std::copy(b.begin(), b.end(), pout.data());
    else std::fill(pout.data(), pout.data() + n, poison<T>());
    call(gpu, pa.span(), pb.span(), pout.span());
    got.assign(pout.data(), pout.data() + n);
    EXPECT_EQ(first_mismatch(got, want), -1) << oi.name << " " << to_string(dtype_v<T>) << " pinned";
  }
}

// 2^20 vectors and more take the bulk-copy kernel on sm_90+ (aligned operands), the
// per-thread vector kernel elsewhere and at an odd offset: both give the scalar bits.
template <class T>
void expect_large_device_ops(Context& gpu, Context& reference) {
  const std::size_t n = (std::size_t(1) << 23) + 4099;
  const std::vector<T> a = random_vector<T>(n + 1), b = random_vector<T>(n + 1);
  Buffer<T> da(gpu, n + 1), db(gpu, n + 1), dout(gpu, n);
  da.upload(a.data(), n + 1), db.upload(b.data(), n + 1);
  for (std::size_t off : {0, 1})
    for (const OpInfo& oi : op_table) {
      std::vector<T> want(n, poison<T>()), got(n);
      if (oi.in_place) std::copy(b.begin() + off, b.begin() + off + n, want.begin());
      dout.upload(want.data(), n);  // the y of in-place ops
      const float s = random_scalar<float>(), t = random_scalar<float>();
      Operands<T> host, dev;
      host.a = Span<const T>(a.data() + off, n), dev.a = Span<const T>(da.data() + off, n, da.space());
      if (oi.input_streams == 2)
        host.b = Span<const T>(b.data() + off, n), dev.b = Span<const T>(db.data() + off, n, db.space());
      host.out = Span<T>(want.data(), n), dev.out = Span<T>(dout.data(), n, dout.space());  // off 1: inputs misaligned
      host.s = dev.s = s, host.t = dev.t = t;
      run(reference, oi.op, host);
      run(gpu, oi.op, dev);
      gpu.synchronize();
      dout.download(got.data(), n);
      EXPECT_EQ(first_mismatch(got, want), -1) << oi.name << " " << to_string(dtype_v<T>) << " offset " << off;
    }
}

TEST(Float16Cuda, LargeArraysBitForBit) {
  EW_SKIP_IF_UNUSABLE(Backend::cuda);
  Context gpu(Backend::cuda), reference(Backend::scalar);
  expect_large_device_ops<half>(gpu, reference);
  expect_large_device_ops<bfloat16>(gpu, reference);
}

TEST(Float16Cuda, OpsOnHostResidentData) {
  EW_SKIP_IF_UNUSABLE(Backend::cuda);
  Context gpu(Backend::cuda), reference(Backend::scalar);
  expect_host_resident_ops<half>(gpu, reference);
  expect_host_resident_ops<bfloat16>(gpu, reference);
}

// ---- The reference itself, on values whose roundings are known by hand.
TEST(Float16Reference, KnownRoundings) {
  EXPECT_EQ(round_ref(65504.0L, f16_format), 0x7bffu);
  EXPECT_EQ(round_ref(65519.99L, f16_format), 0x7bffu);
  EXPECT_EQ(round_ref(65520.0L, f16_format), 0x7c00u);              // tie to even: inf
  EXPECT_EQ(round_ref(std::ldexp(1.0L, -25), f16_format), 0x0000u);  // tie between 0 and 2^-24: 0
  EXPECT_EQ(round_ref(std::ldexp(3.0L, -25), f16_format), 0x0002u);  // tie between 1 and 2 units: 2
  EXPECT_EQ(round_ref(-1.0L, f16_format), 0xbc00u);
  EXPECT_EQ(round_ref(1.0L + std::ldexp(1.0L, -8), bf16_format), 0x3f80u);  // tie: even
  EXPECT_EQ(round_ref(1.0L + std::ldexp(3.0L, -8), bf16_format), 0x3f82u);
  // The library's header agrees on the same values (and on NaN).
  EXPECT_EQ(half(65520.0f).bits, 0x7c00u);
  EXPECT_EQ(half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)).bits, 0x3c01u);  // float would tie to 1.0
  EXPECT_EQ(bfloat16(std::numeric_limits<float>::quiet_NaN()).bits & 0x7fc0u, 0x7fc0u);
}

// Integers round once, like any other value: above 2^53 a plain conversion to double first
// rounds them itself, and bf16 of 2^62 + 2^54 + 1 came out a unit low.
TEST(Float16Reference, IntegersRoundOnce) {
  if (std::numeric_limits<long double>::digits < 64) GTEST_SKIP() << "long double does not hold every 64-bit integer";
  std::vector<unsigned long long> magnitudes = {0, 1, 3, 255, 257, 65504, 65519, 65520, (1ull << 53) + 1,
                                                (1ull << 62) + (1ull << 54) + 1, (1ull << 63) + (1ull << 55) + 1,
                                                (1ull << 63) + (1ull << 55), ~0ull};
  std::mt19937_64 random(7);
  for (int k = 0; k < 20000; ++k) {
    const int top = static_cast<int>(random() % 64);
    unsigned long long m = (random() >> (63 - top)) | (1ull << top);
    if (k % 2 && top > 9) m = (m >> (top - 7) << (top - 7)) | (1ull << (top - 8)) | (random() % 2);  // a bf16 tie, or just past
    magnitudes.push_back(m);
  }
  int wrong = 0;
  for (unsigned long long m : magnitudes) {
    const long double exact = static_cast<long double>(m);
    wrong += bfloat16(m).bits != round_ref(exact, bf16_format);
    wrong += half(m).bits != round_ref(exact, f16_format);
    if (m > 0 && m <= (1ull << 63)) {  // (an integer 0 has no sign)
      const long long negative = m == (1ull << 63) ? std::numeric_limits<long long>::min() : -static_cast<long long>(m);
      wrong += bfloat16(negative).bits != round_ref(-exact, bf16_format);
      wrong += half(negative).bits != round_ref(-exact, f16_format);
    }
    if (m < (1ull << 63)) wrong += bfloat16(static_cast<long long>(m)).bits != round_ref(exact, bf16_format);
    if (m <= 0xffffffffull) wrong += bfloat16(static_cast<unsigned>(m)).bits != round_ref(exact, bf16_format);
  }
  EXPECT_EQ(wrong, 0) << "of " << magnitudes.size() << " magnitudes";
  EXPECT_EQ(bfloat16((1ll << 62) + (1ll << 54) + 1).bits, 0x5e81u);
}

// ---- Errors: checked before anything is written.
TEST(Float16Errors, ConvertChecksItsOperands) {
  Context ctx(Backend::scalar);
  std::vector<float> f(64, 1.0f);
  std::vector<half> h(64, half::from_bits(0x7d5a));
  expect_error(Errc::size_mismatch, [&] { convert<float, half>(ctx, Span<const float>(f.data(), 63), h); });
  // f32 input and f16 output over the same bytes: partial overlap.
  expect_error(Errc::overlap, [&] {
    convert<float, half>(ctx, Span<const float>(f.data(), 32), Span<half>(reinterpret_cast<half*>(f.data()), 32));
  });
  expect_error(Errc::misaligned, [&] {
    convert<half, float>(ctx, Span<const half>(reinterpret_cast<const half*>(reinterpret_cast<const char*>(h.data()) + 1), 8),
                         Span<float>(f.data(), 8));
  });
  expect_error(Errc::null_pointer, [&] { convert<float, half>(ctx, Span<const float>(nullptr, 4), Span<half>(h.data(), 4)); });
  expect_error(Errc::invalid_argument, [&] {
    convert(ctx, static_cast<DType>(9), f.data(), 4, MemorySpace::unknown, DType::f16, h.data(), 4, MemorySpace::unknown);
  });
  for (const half& x : h) EXPECT_EQ(x.bits, 0x7d5au);
  for (float x : f) EXPECT_EQ(x, 1.0f);
}

TEST(Float16Types, StorageLayout) {
  static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);
  EXPECT_EQ(size_of(DType::f16), 2u);
  EXPECT_EQ(size_of(DType::bf16), 2u);
  EXPECT_STREQ(to_string(DType::f16), "f16");
  EXPECT_STREQ(to_string(DType::bf16), "bf16");
  EXPECT_EQ(dtype_v<half>, DType::f16);
  EXPECT_EQ(dtype_v<bfloat16>, DType::bf16);
  // _Float16 is this layout (GCC on x86-64).
#if defined(__FLT16_MAX__)
  const _Float16 x = static_cast<_Float16>(0.333251953125f);
  half y;
  std::memcpy(&y, &x, 2);
  EXPECT_EQ(static_cast<float>(y), 0.333251953125f);
#endif
}

}  // namespace
}  // namespace ew::test
