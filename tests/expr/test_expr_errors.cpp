// Bad input to the expression API, counted. One table lists every kind of bad
// expression or call, the ew::Errc it must raise and a phrase of its message (which
// names the operand); each kind runs on every backend that can run expressions here.
// Operands live in guarded host arrays (random inputs, poisoned outputs, guards on both
// sides), and after every rejected call not one byte of them may have changed.
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "expr_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t n = 64;      // elements of each operand
constexpr std::size_t room = n;    // elements before and after each operand: room for every overlap layout

template <class T>
struct Arrays {
  std::vector<T> a = random_vector<T>(n + 2 * room), b = random_vector<T>(n + 2 * room);
  std::vector<T> out = std::vector<T>(n + 2 * room, poison<T>()), out2 = std::vector<T>(n + 2 * room, poison<T>());

  Span<const T> A(std::size_t len = n) const { return {a.data() + room, len}; }
  Span<const T> B(std::size_t len = n) const { return {b.data() + room, len}; }
  Span<T> Out(std::size_t len = n) { return {out.data() + room, len}; }
  Span<T> Out2(std::size_t len = n) { return {out2.data() + room, len}; }
  // The output array seen `shift` elements from the output, as an input or an output.
  Span<const T> OutAsInput(std::ptrdiff_t shift) { return {out.data() + room + shift, n}; }
  Span<T> OutShifted(std::ptrdiff_t shift) { return {out.data() + room + shift, n}; }
};

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  return std::vector<unsigned char>(p, p + v.size() * sizeof(T));
}

struct Arena {
  Arrays<float> f;
  Arrays<double> d;
  std::vector<std::vector<unsigned char>> snapshot = all();
  std::vector<std::vector<unsigned char>> all() const {
    return {bytes_of(f.a), bytes_of(f.b), bytes_of(f.out), bytes_of(f.out2),
            bytes_of(d.a), bytes_of(d.b), bytes_of(d.out), bytes_of(d.out2)};
  }
  bool unchanged() const { return snapshot == all(); }
};

// A misaligned view of `p`, `bytes` bytes on.
template <class T>
T* shifted(const T* p, int bytes) {
  return reinterpret_cast<T*>(const_cast<char*>(reinterpret_cast<const char*>(p) + bytes));
}

// `count` floats from near the top of the address space run past its end; never read.
const float* near_the_top(std::size_t count) {
  const std::uintptr_t top = std::numeric_limits<std::uintptr_t>::max() / 4 * 4;
  return reinterpret_cast<const float*>(top - (count / 2) * sizeof(float));
}

// An input or output of `size` elements at `p`, bypassing the Span's own length.
InputArray raw_input(const void* p, std::size_t size, DType t) {
  InputArray x;
  x.data = p, x.size = size, x.dtype = t, x.space = MemorySpace::host;
  return x;
}
OutputArray raw_output(void* p, std::size_t size, DType t) {
  OutputArray x;
  x.data = p, x.size = size, x.dtype = t, x.space = MemorySpace::host;
  return x;
}

struct Kind {
  std::string name;
  Errc code;
  std::string phrase;
  bool host_only;  // device memory is foreign to host backends only
  std::function<void(Backend, Arena&)> call;
};

// The kernels the calls use.
const Expr A = input<float>(0), B = input<float>(1), S = param<float>(0);
Kernel one_output() { return compile({A * B + S}); }               // f32 a, b; s; one f32 output
Kernel two_outputs() { return compile({A + B, A * B}); }           // f32 a, b; two f32 outputs
Kernel widening() { return compile({A + input<double>(1)}); }      // f32 a, f64 b; one f64 output

std::vector<Kind> kinds() {
  using I = std::initializer_list<InputArray>;
  using O = std::initializer_list<OutputArray>;
  const std::size_t two62 = std::size_t(1) << 62;
  std::vector<Kind> k;
  auto expression = [&k](std::string name, std::string phrase, std::function<void()> f) {
    k.push_back({std::move(name), Errc::invalid_argument, std::move(phrase), false, [f](Backend, Arena&) { f(); }});
  };
  // Expressions that cannot be built or compiled.
  expression("empty Expr in a binary operator", "operator+: an operand is an empty ew::Expr", [] { (void)(Expr() + A); });
  expression("empty Expr in a comparison", "operator>=: an operand is an empty ew::Expr", [] { (void)(A >= Expr()); });
  expression("empty Expr negated", "operator-: an operand is an empty ew::Expr", [] { (void)(-Expr()); });
  expression("empty Expr in a function", "ew::exp: an operand is an empty ew::Expr", [] { (void)ew::exp(Expr()); });
  expression("empty Expr in fma", "ew::fma: an operand is an empty ew::Expr", [] { (void)ew::fma(A, Expr(), B); });
  expression("empty Expr as select's condition", "ew::select: an operand is an empty ew::Expr",
             [] { (void)ew::select(Expr(), A, B); });
  expression("empty Expr cast", "ew::cast: an operand is an empty ew::Expr", [] { (void)cast<double>(Expr()); });
  expression("dtype of an empty Expr", "ew::Expr::dtype: an operand is an empty ew::Expr", [] { (void)Expr().dtype(); });
  expression("empty Expr compiled", "ew::compile: output 1 is an empty ew::Expr", [] { (void)compile({A, Expr()}); });
  expression("nothing to compile", "ew::compile: no outputs", [] { (void)compile({}); });
  expression("input index past the last", "ew::input index 16 is outside 0..15", [] { (void)input<float>(16); });
  expression("input index negative", "ew::input index -1 is outside 0..15", [] { (void)input<double>(-1); });
  expression("param index past the last", "ew::param index 8 is outside 0..7", [] { (void)param<float>(8); });
  expression("param index negative", "ew::param index -3 is outside 0..7", [] { (void)param<double>(-3); });
  expression("input slot read as f32 and f64", "ew::compile: input 0 is read as f32 and as f64",
             [] { (void)compile({A + input<double>(0)}); });
  expression("input slot read with two dtypes by two outputs", "ew::compile: input 5 is read as f64 and as f32",
             [] { (void)compile({input<double>(5) * 2, ew::sqrt(input<float>(5))}); });
  expression("param read as f32 and f64", "ew::compile: param 0 is read as f32 and as f64",
             [] { (void)compile({ew::fma(S, A, param<double>(0))}); });
  expression("more distinct nodes than the limit", "more than 1024 distinct nodes", [] {
    Expr e = A;
    for (int i = 0; i < 600; ++i) e = e + Expr(i + 0.5);  // 1 + 2 * 600 distinct nodes
    (void)compile({e});
  });
  expression("more outputs than the limit", "ew::compile: 9 outputs, at most 8",
             [] { (void)compile(std::vector<Expr>(9, A + 1)); });
  expression("output_dtype of an output it does not have", "ew::Kernel::output_dtype: no output 1",
             [] { (void)one_output().output_dtype(1); });

  auto call = [&k](std::string name, Errc code, std::string phrase, std::function<void(Context&, Arena&)> f,
                   bool host_only = false) {
    k.push_back({std::move(name), code, std::move(phrase), host_only, [f](Backend b, Arena& x) {
                   Context c(b);
                   f(c, x);
                   c.synchronize();
                 }});
  };
  // Counts of operands.
  call("one input for two slots", Errc::invalid_argument, "ew::Kernel: 1 inputs given, the expression reads inputs 0..1",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A()}, O{x.f.Out()}, {2.0}); });
  call("three inputs for two slots", Errc::invalid_argument, "ew::Kernel: 3 inputs given",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), x.f.B(), x.f.A()}, O{x.f.Out()}, {2.0}); });
  call("one output for two", Errc::invalid_argument, "ew::Kernel: 1 outputs given, the kernel has 2",
       [](Context& c, Arena& x) { two_outputs()(c, I{x.f.A(), x.f.B()}, O{x.f.Out()}); });
  call("two outputs for one", Errc::invalid_argument, "ew::Kernel: 2 outputs given, the kernel has 1",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), x.f.B()}, O{x.f.Out(), x.f.Out2()}, {2.0}); });
  call("a param missing", Errc::invalid_argument, "ew::Kernel: 0 params given, the expression reads 1",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), x.f.B()}, O{x.f.Out()}); });
  call("a param too many", Errc::invalid_argument, "ew::Kernel: 2 params given",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), x.f.B()}, O{x.f.Out()}, {2.0, 3.0}); });
  // Dtypes.
  call("f64 array for an f32 input", Errc::invalid_argument, "ew::Kernel: input 1 is f64, the expression reads it as f32",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), x.d.B()}, O{x.f.Out()}, {2.0}); });
  call("f32 array for an f64 output", Errc::invalid_argument, "ew::Kernel: output 0 is f32, the expression computes f64",
       [](Context& c, Arena& x) { widening()(c, I{x.f.A(), x.d.B()}, O{x.f.Out()}); });
  // Sizes.
  call("an input shorter than the outputs", Errc::size_mismatch, "ew::Kernel: input 0 has 63 elements, the outputs 64",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(n - 1), x.f.B()}, O{x.f.Out()}, {2.0}); });
  call("an input longer than the outputs", Errc::size_mismatch, "ew::Kernel: input 1 has 65 elements",
       [](Context& c, Arena& x) { widening()(c, I{x.f.A(), x.d.B(n + 1)}, O{x.d.Out()}); });
  call("a second output of another length", Errc::size_mismatch, "ew::Kernel: output 1 has 65 elements, output 0 64",
       [](Context& c, Arena& x) { two_outputs()(c, I{x.f.A(), x.f.B()}, O{x.f.Out(), x.f.Out2(n + 1)}); });
  call("a slot the expression reads left unbound", Errc::size_mismatch, "ew::Kernel: input 1 has 0 elements",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), InputArray()}, O{x.f.Out()}, {2.0}); });
  // Null and misaligned operands.
  call("a null input", Errc::null_pointer, "ew::Kernel: input 1 is null with n = 64",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), Span<const float>(nullptr, n)}, O{x.f.Out()}, {2.0}); });
  call("a null output", Errc::null_pointer, "ew::Kernel: output 1 is null with n = 64",
       [](Context& c, Arena& x) { two_outputs()(c, I{x.f.A(), x.f.B()}, O{x.f.Out(), Span<float>(nullptr, n)}); });
  // The pointer form's arrays themselves: null with a count, refused before an entry is read.
  call("a null array of inputs", Errc::null_pointer, "ew::Kernel: inputs is null, with a count of 2",
       [](Context& c, Arena& x) {
         const OutputArray out[] = {x.f.Out()};
         const double two = 2.0;
         one_output().run(c, nullptr, 2, out, 1, &two, 1);
       });
  call("a null array of outputs", Errc::null_pointer, "ew::Kernel: outputs is null, with a count of 1",
       [](Context& c, Arena& x) {
         const InputArray in[] = {x.f.A(), x.f.B()};
         const double two = 2.0;
         one_output().run(c, in, 2, nullptr, 1, &two, 1);
       });
  call("a null array of params", Errc::null_pointer, "ew::Kernel: params is null, with a count of 1",
       [](Context& c, Arena& x) {
         const InputArray in[] = {x.f.A(), x.f.B()};
         const OutputArray out[] = {x.f.Out()};
         one_output().run(c, in, 2, out, 1, nullptr, 1);
       });
  call("a misaligned input", Errc::misaligned, "ew::Kernel: input 0 (0x", [](Context& c, Arena& x) {
    one_output()(c, I{Span<const float>(shifted(x.f.A().data, 2), n), x.f.B()}, O{x.f.Out()}, {2.0});
  });
  call("a misaligned f64 output (aligned for an f32)", Errc::misaligned, "ew::Kernel: output 0 (0x",
       [](Context& c, Arena& x) { widening()(c, I{x.f.A(), x.d.B()}, O{Span<double>(shifted(x.d.Out().data, 4), n)}); });
  // Overlap: exact aliasing is in place; anything else partial is refused.
  call("an input starting before the output", Errc::overlap,
       "ew::Kernel: input 0 partially overlaps the output output 0",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.OutAsInput(-4), x.f.B()}, O{x.f.Out()}, {2.0}); });
  call("an input starting after the output", Errc::overlap, "ew::Kernel: input 1 partially overlaps the output output 0",
       [](Context& c, Arena& x) { one_output()(c, I{x.f.A(), x.f.OutAsInput(4)}, O{x.f.Out()}, {2.0}); });
  call("an input overlapping the second output", Errc::overlap, "ew::Kernel: input 0 partially overlaps the output output 1",
       [](Context& c, Arena& x) {
         two_outputs()(c, I{Span<const float>(x.f.out2.data() + room + n - 1, n), x.f.B()}, O{x.f.Out(), x.f.Out2()});
       });
  call("an f32 input over the first half of an f64 output", Errc::overlap,
       "ew::Kernel: input 0 partially overlaps the output output 0", [](Context& c, Arena& x) {
         widening()(c, I{Span<const float>(reinterpret_cast<const float*>(x.d.Out().data), n), x.d.B()}, O{x.d.Out()});
       });
  call("two outputs on one array", Errc::overlap, "ew::Kernel: output 1 overlaps output 0",
       [](Context& c, Arena& x) { two_outputs()(c, I{x.f.A(), x.f.B()}, O{x.f.Out(), x.f.Out()}); });
  call("two outputs overlapping partially", Errc::overlap, "ew::Kernel: output 1 overlaps output 0",
       [](Context& c, Arena& x) { two_outputs()(c, I{x.f.A(), x.f.B()}, O{x.f.Out(), x.f.OutShifted(3)}); });
  // Memory the backend cannot reach.
  call("an input tagged device memory", Errc::foreign_memory, "ew::Kernel: input 1 lives in device memory",
       [](Context& c, Arena& x) {
         one_output()(c, I{x.f.A(), Span<const float>(x.f.B().data, n, MemorySpace::device)}, O{x.f.Out()}, {2.0});
       }, true);
  call("an output tagged device memory", Errc::foreign_memory, "ew::Kernel: output 0 lives in device memory",
       [](Context& c, Arena& x) {
         widening()(c, I{x.f.A(), x.d.B()}, O{Span<double>(x.d.Out().data, n, MemorySpace::device)});
       }, true);
  // Sizes whose bytes overflow, over small real arrays.
  call("2^62 f32 elements", Errc::size_overflow, "ew::Kernel: output 0 has 4611686018427387904 elements of 4 bytes",
       [two62](Context& c, Arena& x) {
         one_output()(c, I{raw_input(x.f.A().data, two62, DType::f32), raw_input(x.f.B().data, two62, DType::f32)},
                      O{raw_output(x.f.Out().data, two62, DType::f32)}, {2.0});
       });
  call("2^62 f64 elements", Errc::size_overflow, "ew::Kernel: output 0 has 4611686018427387904 elements of 8 bytes",
       [two62](Context& c, Arena& x) {
         widening()(c, I{raw_input(x.f.A().data, two62, DType::f32), raw_input(x.d.B().data, two62, DType::f64)},
                    O{raw_output(x.d.Out().data, two62, DType::f64)});
       });
  call("an input running past the end of memory", Errc::size_overflow, "ew::Kernel: input 0: 64 elements of 4 bytes from 0x",
       [](Context& c, Arena& x) {
         one_output()(c, I{Span<const float>(near_the_top(n), n), x.f.B()}, O{x.f.Out()}, {2.0});
       });
  // Handles that hold nothing.
  call("a moved-from Kernel", Errc::invalid_argument, "ew::Kernel: an empty kernel", [](Context& c, Arena& x) {
    Kernel k = one_output();
    Kernel taker = std::move(k);
    k(c, I{x.f.A(), x.f.B()}, O{x.f.Out()}, {2.0});  // NOLINT(bugprone-use-after-move): the point of the test
  });
  call("a default-constructed Kernel", Errc::invalid_argument, "ew::Kernel: an empty kernel",
       [](Context& c, Arena& x) { Kernel()(c, I{x.f.A()}, O{x.f.Out()}); });
  call("a moved-from Context", Errc::invalid_argument, "ew::Kernel: moved-from context", [](Context& c, Arena& x) {
    Context taker(std::move(c));
    one_output()(c, I{x.f.A(), x.f.B()}, O{x.f.Out()}, {2.0});  // NOLINT(bugprone-use-after-move)
  });
  return k;
}

class ExprBadInput : public testing::TestWithParam<Backend> {};

TEST_P(ExprBadInput, EveryKindIsAnErrorAndWritesNothing) {
  const Backend backend = GetParam();
  EW_EXPR_SKIP_IF_UNUSABLE(backend);
  Context probe(backend);
  const bool host = Buffer<float>(probe, 1).space() == MemorySpace::host;
  int checked = 0;
  for (const Kind& kind : kinds()) {
    if (kind.host_only && !host) continue;
    SCOPED_TRACE(kind.name);
    Arena arena;
    expect_error(kind.code, [&] { kind.call(backend, arena); }, kind.phrase.c_str());
    EXPECT_TRUE(arena.unchanged()) << kind.name << ": a rejected call changed an operand or a guard";
    ++checked;
  }
  std::printf("%s: %d kinds of bad expression input, each an ew::Error with its code, nothing written\n",
              to_string(backend), checked);
  EXPECT_GE(checked, 40);
}

INSTANTIATE_TEST_SUITE_P(scalar, ExprBadInput, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, ExprBadInput, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, ExprBadInput, testing::Values(Backend::kokkos));
INSTANTIATE_TEST_SUITE_P(cuda, ExprBadInput, testing::Values(Backend::cuda));

// A DType value outside the enum (a cast integer, a corrupt value) is not silently read
// as f64: placeholders and casts refuse it.
TEST(ExprBadInput, DtypeOutsideTheEnum) {
  const DType bogus = static_cast<DType>(7);
  expect_error(Errc::invalid_argument, [&] { (void)input(0, bogus); }, "ew::input");
  expect_error(Errc::invalid_argument, [&] { (void)param(0, bogus); }, "ew::param");
  expect_error(Errc::invalid_argument, [&] { (void)cast(A, bogus); }, "ew::cast");
}

// The same kernel still works on the same arrays after every kind of rejection: a
// rejected call leaves neither the Kernel nor the Context unusable.
TEST(ExprBadInput, KernelAndContextStillWork) {
  Context ctx(Backend::scalar);
  Arena x;
  const Kernel k = one_output();
  for (int t = 0; t < 3; ++t) EXPECT_THROW(k(ctx, {x.f.A(), x.f.OutAsInput(1)}, {x.f.Out()}, {2.0}), Error);
  k(ctx, {x.f.A(), x.f.B()}, {x.f.Out()}, {2.0});
  for (std::size_t i = 0; i < n; ++i) {
    volatile float product = x.f.A()[i] * x.f.B()[i];  // rounded on its own, never contracted into an fma
    ASSERT_TRUE(same_bits(x.f.Out()[i], product + 2.0f)) << i;
  }
}

}  // namespace
}  // namespace ew::test
