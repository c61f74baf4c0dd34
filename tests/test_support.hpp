#pragma once
// What every test shares: fresh random data, poisoned outputs with guard zones, a
// bit-exact comparison, and the backends to run on (unusable ones are skipped with
// their reason, so a CPU-only machine shows the GPU cases as skipped).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "ew/ew.hpp"

namespace ew {
// Readable parameters in test names and failure messages.
inline void PrintTo(Op op, std::ostream* os) { *os << to_string(op); }
inline void PrintTo(DType d, std::ostream* os) { *os << to_string(d); }
inline void PrintTo(Backend b, std::ostream* os) { *os << to_string(b); }
}  // namespace ew

namespace ew::test {

// The scalar reference: the op table's formula, element by element.
template <class T>
void reference(Op op, std::size_t n, const T* a, const T* b, T* out, compute_t<T> s, compute_t<T> t) {
  dispatch_op(op, [&](auto o) {
    for (std::size_t i = 0; i < n; ++i) out[i] = apply<decltype(o)::value>(a[i], b ? b[i] : T(0), s, t);
  });
}

// A fresh seed per process, printed so that a failure can be replayed with EW_TEST_SEED.
inline std::mt19937_64& rng() {
  static std::mt19937_64 engine([] {
    const char* fixed = std::getenv("EW_TEST_SEED");
    const unsigned long long seed = fixed && *fixed ? std::strtoull(fixed, nullptr, 10) : std::random_device{}();
    std::fprintf(stderr, "EW_TEST_SEED=%llu\n", seed);
    return seed;
  }());
  return engine;
}

// Values of both signs over several binades, so that rounding differences show. The
// 16-bit types take random floats rounded to them.
template <class T>
std::vector<T> random_vector(std::size_t n) {
  if constexpr (is_storage16_v<T>) {
    std::vector<T> v(n);
    const std::vector<float> f = random_vector<float>(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = T(f[i]);
    return v;
  } else {
    std::uniform_real_distribution<T> mantissa(T(-2), T(2));
    std::uniform_int_distribution<int> exponent(-8, 8);
    std::vector<T> v(n);
    for (auto& x : v) x = std::ldexp(mantissa(rng()), exponent(rng()));
    return v;
  }
}

template <class T>
T random_scalar() {
  return random_vector<T>(1)[0];
}

template <class T>
bool is_nan(T x) {
  if constexpr (is_storage16_v<T>) return std::isnan(static_cast<float>(x));
  else return std::isnan(x);
}

// A value to print in a message.
template <class T>
double printable(T x) {
  return static_cast<double>(x);
}

// A quiet NaN with a payload no op produces: an element still holding it was not written.
// For the 16-bit types a signaling NaN: every 16-bit result is rounded, which quiets NaNs.
template <class T>
T poison() {
  if constexpr (std::is_same_v<T, half>) {
    return half::from_bits(0x7d5a);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bfloat16::from_bits(0x7f9a);
  } else if constexpr (sizeof(T) == 4) {
    std::uint32_t bits = 0x7fc0dead;
    T v;
    std::memcpy(&v, &bits, 4);
    return v;
  } else {
    std::uint64_t bits = 0x7ff80000deaddeadull;
    T v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
}

template <class T>
bool same_bits(T x, T y) {
  if (is_nan(x) && is_nan(y)) return true;  // payloads may differ between ISAs
  return std::memcmp(&x, &y, sizeof(T)) == 0;
}

template <class T>
bool is_poison(T x) {
  T p = poison<T>();
  return std::memcmp(&x, &p, sizeof(T)) == 0;
}

// Index of the first mismatch, or -1. An element still holding the poison was never
// written, even where the expected value is some other NaN.
template <class T>
long long first_mismatch(const std::vector<T>& got, const std::vector<T>& want) {
  for (std::size_t i = 0; i < want.size(); ++i)
    if (!same_bits(got[i], want[i]) || is_poison(got[i]) != is_poison(want[i])) return static_cast<long long>(i);
  return -1;
}

// Sets (or, with null, unsets) an environment variable and restores it when the test ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_, old_.c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  bool had_;
  std::string old_;
};

// f() must throw ew::Error with `code`, whose message names the code and contains `needle`.
template <class F>
void expect_error(Errc code, F&& f, const char* needle = nullptr) {
  try {
    f();
    ADD_FAILURE() << "expected ew::Error [" << to_string(code) << "], nothing was thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(to_string(code)), std::string::npos) << e.what();
    if (needle) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
}

inline std::string skip_reason(Backend b) {
  BackendStatus s = backend_status(b);
  return s.usable ? std::string() : "backend " + s.name + " unusable here: " + s.reason;
}

#define EW_SKIP_IF_UNUSABLE(backend)                               \
  do {                                                             \
    std::string ew_reason_ = ::ew::test::skip_reason(backend);     \
    if (!ew_reason_.empty()) GTEST_SKIP() << ew_reason_;           \
  } while (0)

}  // namespace ew::test

namespace ew::test {

// Offsets (in elements) of a, b and out from a 64-byte aligned allocation: all
// aligned, all shifted alike, and shifted differently so no two agree mod 16 bytes.
inline constexpr std::size_t offset_sets[][3] = {{0, 0, 0}, {1, 1, 1}, {1, 2, 3}};
inline constexpr int offset_set_count = 3;

// One random case of an op: host arrays of n + 8 elements, so that every offset set
// leaves guard elements on both sides; the output poisoned (random y at its offset for
// in-place ops); and the output the scalar reference expects.
template <class T>
struct Case {
  Op op;
  std::size_t n;
  std::size_t off[3];
  std::vector<T> a, b, out_init, want;
  compute_t<T> s, t;

  std::size_t total() const { return n + 8; }

  // The operands over arrays laid out like a, b and out_init, starting at the bases.
  Operands<T> operands(const T* a_base, const T* b_base, T* out_base, MemorySpace sa = MemorySpace::unknown,
                       MemorySpace sb = MemorySpace::unknown, MemorySpace so = MemorySpace::unknown) const {
    Operands<T> args;
    args.a = Span<const T>(a_base + off[0], n, sa);
    if (info(op).input_streams == 2) args.b = Span<const T>(b_base + off[1], n, sb);
    args.out = Span<T>(out_base + off[2], n, so);
    args.s = s;
    args.t = t;
    return args;
  }

  // Empty when `got` (the whole output array, guards included) is what the reference
  // expects; otherwise the first difference, said so that it can be found.
  std::string mismatch(const std::vector<T>& got) const {
    const long long bad = first_mismatch(got, want);
    if (bad < 0) return {};
    const std::size_t i = static_cast<std::size_t>(bad);
    const bool guard = i < off[2] || i >= off[2] + n;
    std::ostringstream m;
    m.precision(17);
    m << to_string(op) << " " << to_string(dtype_v<T>) << " n=" << n << " offsets {" << off[0] << "," << off[1]
      << "," << off[2] << "}: " << (guard ? "guard element " : "element ") << i << " is " << printable(got[i])
      << ", expected " << printable(want[i]) << (is_poison(got[i]) ? " (never written)" : "");
    return m.str();
  }
};

// `special_a`, when given, is copied to the start of a and, reversed, to the end of b.
template <class T>
Case<T> make_case(Op op, std::size_t n, const std::size_t (&off)[3], const std::vector<T>* special_a = nullptr) {
  const OpInfo& oi = info(op);
  Case<T> c{op, n, {off[0], off[1], off[2]}, {}, {}, {}, {}, random_scalar<compute_t<T>>(),
            random_scalar<compute_t<T>>()};
  c.a = random_vector<T>(c.total());
  c.b = random_vector<T>(c.total());
  if (special_a)
    for (std::size_t i = 0; i < n && i < special_a->size(); ++i)
      c.a[off[0] + i] = (*special_a)[i], c.b[off[1] + n - 1 - i] = (*special_a)[i];
  c.out_init.assign(c.total(), poison<T>());
  if (oi.in_place) {
    std::vector<T> y = random_vector<T>(n);
    std::copy(y.begin(), y.end(), c.out_init.begin() + off[2]);
  }
  c.want = c.out_init;
  const T* ref_b = oi.in_place ? c.out_init.data() + off[2] : (oi.input_streams == 2 ? c.b.data() + off[1] : nullptr);
  reference(op, n, c.a.data() + off[0], ref_b, c.want.data() + off[2], c.s, c.t);
  return c;
}

// Runs a random case of `op` on `ctx` over buffers in the backend's own memory space
// and compares every element, guards included, with the scalar reference bit for bit.
template <class T>
void expect_matches_reference(Context& ctx, Op op, std::size_t n, const std::size_t (&off)[3],
                              const std::vector<T>* special_a = nullptr) {
  const Case<T> c = make_case<T>(op, n, off, special_a);
  Buffer<T> da(ctx, c.total()), db(ctx, c.total()), dout(ctx, c.total());
  da.upload(c.a.data(), c.total());
  db.upload(c.b.data(), c.total());
  dout.upload(c.out_init.data(), c.total());
  run(ctx, op, c.operands(da.data(), db.data(), dout.data(), da.space(), db.space(), dout.space()));
  ctx.synchronize();
  std::vector<T> got(c.total());
  dout.download(got.data(), c.total());
  const std::string m = c.mismatch(got);
  if (!m.empty()) FAIL() << ctx.backend_name() << " " << m;
}

}  // namespace ew::test
