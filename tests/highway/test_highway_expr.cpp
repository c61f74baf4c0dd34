// The Highway expression evaluator's own edges (backends/highway/expr-inl.h), on every
// target this CPU supports (forced one by one), with 1 and 2 threads, with streaming
// stores and the threaded path reached by small arrays (lowered tuning) and not: every
// opcode in f32, f64, f16 and bf16, every pattern of broadcast operands, mixed dtypes (casts, select
// with a condition of the other dtype, 16-bit data widened, rounded by casts and stores), sizes around the vector, block and piece
// boundaries, each operand at its own element offset 0..3 from a 64-byte boundary, in
// place, two outputs, an output that copies an input another output overwrites, uniform
// outputs, and more live values than L1 holds. Each call is compared bit for bit (any
// NaN equals any NaN, as everywhere in the suite) with the scalar backend on the same
// operands, guard zones included. The random-expression suite over all backends is
// tests/expr; this file is the block evaluator's corners.
#include <hwy/targets.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "address_space_limit.hpp"
#include "backend.hpp"
#include "expr.hpp"
#include "kernels.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

namespace hw = ew::detail::highway;

constexpr std::size_t guard = 32;  // elements: keeps offset 0 on a 64-byte boundary in every dtype
// Blocks forced to this size (set_expr_block_elements), so that small arrays cross them.
constexpr std::size_t block = 256;
// Around the vector, forced block and piece edges, and the default blocks' (up to 2048).
constexpr std::size_t sizes[] = {0, 1, 15, 17, block - 1, block, block + 1, 1000, 2047, 2049, 4097, 3 * block + 5};
// Offset of operand k (inputs, then outputs) in each pattern: the same for all, or staggered.
constexpr int patterns = 5;
std::size_t offset_of(int pattern, int k) {
  switch (pattern) {
    case 0: return 0;
    case 1: return 3;
    case 2: return k % 4;
    case 3: return (k + 1) % 4;
    default: return (3 - k % 4 + 4) % 4;
  }
}

// Where an operand's bytes touch a page that faults on any access.
enum class Fence { none, before, after };

// One operand's bytes: 64-byte aligned (Fence::none: guard, offset 0..3, n elements,
// guard), or flush against an inaccessible page before or after them.
struct Array {
  DType dtype = DType::f32;
  std::size_t count = 0;
  std::shared_ptr<unsigned char> bytes;

  Array() = default;
  Array(DType t, std::size_t n, Fence fence = Fence::none) : dtype(t), count(n) {
    const std::size_t used = count * size_of(t);
    if (fence == Fence::none) {
      bytes.reset(static_cast<unsigned char*>(std::aligned_alloc(64, (used + 63) / 64 * 64 + 64)), &std::free);
      return;
    }
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t data = (used + page - 1) / page * page + page, mapped = data + 2 * page;
    void* region = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) throw std::bad_alloc();
    auto* base = static_cast<unsigned char*>(region);
    mprotect(base, page, PROT_NONE);
    mprotect(base + page + data, page, PROT_NONE);
    unsigned char* first = fence == Fence::before ? base + page : base + page + data - used;
    bytes = std::shared_ptr<unsigned char>(first, [base, mapped](unsigned char*) { munmap(base, mapped); });
  }
  Array clone(std::size_t n, Fence fence) const {
    Array a(dtype, n, fence);
    std::memcpy(a.bytes.get(), bytes.get(), n * size_of(dtype));
    return a;
  }
  float* f() const { return reinterpret_cast<float*>(bytes.get()); }
  double* d() const { return reinterpret_cast<double*>(bytes.get()); }
  half* h() const { return reinterpret_cast<half*>(bytes.get()); }
  bfloat16* b() const { return reinterpret_cast<bfloat16*>(bytes.get()); }
  void set(std::size_t i, double v) const {
    switch (dtype) {
      case DType::f32: f()[i] = static_cast<float>(v); break;
      case DType::f64: d()[i] = v; break;
      case DType::f16: h()[i] = half(v); break;
      case DType::bf16: b()[i] = bfloat16(v); break;
    }
  }
  void poison_all() const {
    for (std::size_t i = 0; i < count; ++i) {
      switch (dtype) {
        case DType::f32: f()[i] = poison<float>(); break;
        case DType::f64: d()[i] = poison<double>(); break;
        case DType::f16: h()[i] = poison<half>(); break;
        case DType::bf16: b()[i] = poison<bfloat16>(); break;
      }
    }
  }
  bool same_at(std::size_t i, const Array& o) const {
    switch (dtype) {
      case DType::f32: return same_bits(f()[i], o.f()[i]) && is_poison(f()[i]) == is_poison(o.f()[i]);
      case DType::f64: return same_bits(d()[i], o.d()[i]) && is_poison(d()[i]) == is_poison(o.d()[i]);
      case DType::f16: return same_bits(h()[i], o.h()[i]) && is_poison(h()[i]) == is_poison(o.h()[i]);
      case DType::bf16: break;
    }
    return same_bits(b()[i], o.b()[i]) && is_poison(b()[i]) == is_poison(o.b()[i]);
  }
  double get(std::size_t i) const {
    switch (dtype) {
      case DType::f32: return f()[i];
      case DType::f64: return d()[i];
      case DType::f16: return static_cast<double>(h()[i]);
      case DType::bf16: break;
    }
    return static_cast<double>(b()[i]);
  }
  std::string show(std::size_t i) const {
    char text[64];
    std::snprintf(text, sizeof text, "%a", get(i));
    return text;
  }
};

// Where each operand lies in its array: `lead` elements, its offset, n elements, `trail`.
struct Layout {
  std::size_t lead = guard, trail = guard;
  Fence fence = Fence::none;
};

// Values that take each operation to its edges: NaN, infinities, zeros, subnormals, the
// largest finite values, ties of round and of the f64 -> f32 conversion (1 + 2^-24 to even,
// FLT_MAX + half an ulp to infinity), exp's overflow and underflow.
const std::vector<double>& special_values() {
  static const std::vector<double> v = {
      std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), 0.0, -0.0,
      std::numeric_limits<double>::denorm_min(), -std::numeric_limits<float>::denorm_min(),
      std::numeric_limits<float>::min(), std::numeric_limits<float>::max(), -std::numeric_limits<double>::max(),
      0.5, -0.5, 1.5, -2.5, 1 + 0x1p-24, 1 + 3 * 0x1p-24, 0x1.fffffefp127, 0x1.ffffffp127, 1e39, -1e-46,
      100.0, -100.0, 800.0, -800.0, 1e-300, 20.0, -20.0};
  return v;
}

// Random values over several binades, about one in six replaced by a special value (for
// 16-bit data, half of those any bit pattern: NaN payloads, subnormals).
Array random_array(DType t, std::size_t count) {
  Array a(t, count);
  std::uniform_real_distribution<double> mantissa(-2, 2);
  std::uniform_int_distribution<int> exponent(-8, 8), pick(0, 5);
  std::uniform_int_distribution<std::size_t> special(0, special_values().size() - 1);
  for (std::size_t i = 0; i < count; ++i) {
    if (is_storage16(t) && pick(rng()) == 0) {
      const auto bits = static_cast<std::uint16_t>(rng()());
      if (t == DType::f16) a.h()[i] = half::from_bits(bits);
      else a.b()[i] = bfloat16::from_bits(bits);
      continue;
    }
    a.set(i, pick(rng()) == 0 ? special_values()[special(rng())] : std::ldexp(mantissa(rng()), exponent(rng())));
  }
  return a;
}

struct Case {
  std::string name;
  Kernel kernel;
  std::vector<DType> inputs;  // dtype of each input slot
  std::vector<double> params;
  std::vector<int> in_place;  // per output: the input slot it overwrites, or -1
};

Case make(std::string name, std::vector<Expr> outputs, std::vector<DType> inputs, std::vector<double> params = {},
          std::vector<int> in_place = {}) {
  Case c{std::move(name), compile(outputs), std::move(inputs), std::move(params), std::move(in_place)};
  // As many slots as the kernel takes (it refuses more); unread ones are passed anyway.
  c.inputs.resize(static_cast<std::size_t>(c.kernel.inputs()), DType::f32);
  c.params.resize(static_cast<std::size_t>(c.kernel.params()), 0.0);
  c.in_place.resize(outputs.size(), -1);
  return c;
}

// Every opcode, every broadcast pattern, every dtype mix, the aliasing cases.
std::vector<Case> cases() {
  std::vector<Case> all;
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const std::string T = to_string(t);
    const Expr x = input(0, t), y = input(1, t), z = input(2, t), p = param(0, t), q = param(1, t);
    const std::vector<DType> three(3, t);
    const std::vector<std::pair<const char*, Expr (*)(const Expr&)>> unary = {
        {"neg", [](const Expr& a) { return -a; }},      {"abs", [](const Expr& a) { return ew::abs(a); }},
        {"sqrt", [](const Expr& a) { return ew::sqrt(a); }}, {"floor", [](const Expr& a) { return ew::floor(a); }},
        {"ceil", [](const Expr& a) { return ew::ceil(a); }}, {"trunc", [](const Expr& a) { return ew::trunc(a); }},
        {"round", [](const Expr& a) { return ew::round(a); }}, {"exp", [](const Expr& a) { return ew::exp(a); }},
        {"log", [](const Expr& a) { return ew::log(a); }},   {"tanh", [](const Expr& a) { return ew::tanh(a); }},
        {"sigmoid", [](const Expr& a) { return ew::sigmoid(a); }}};
    for (const auto& [name, f] : unary) all.push_back(make(T + " " + name, {f(x)}, {t}));
    const std::vector<std::pair<const char*, Expr (*)(const Expr&, const Expr&)>> binary = {
        {"add", [](const Expr& a, const Expr& b) { return a + b; }},
        {"sub", [](const Expr& a, const Expr& b) { return a - b; }},
        {"mul", [](const Expr& a, const Expr& b) { return a * b; }},
        {"div", [](const Expr& a, const Expr& b) { return a / b; }},
        {"min", [](const Expr& a, const Expr& b) { return ew::min(a, b); }},
        {"max", [](const Expr& a, const Expr& b) { return ew::max(a, b); }},
        {"lt", [](const Expr& a, const Expr& b) { return a < b; }},
        {"le", [](const Expr& a, const Expr& b) { return a <= b; }},
        {"gt", [](const Expr& a, const Expr& b) { return a > b; }},
        {"ge", [](const Expr& a, const Expr& b) { return a >= b; }},
        {"eq", [](const Expr& a, const Expr& b) { return a == b; }},
        {"ne", [](const Expr& a, const Expr& b) { return a != b; }}};
    for (const auto& [name, f] : binary) {
      all.push_back(make(T + " " + name + "(x, y)", {f(x, y)}, {t, t}));
      all.push_back(make(T + " " + name + "(x, p)", {f(x, p)}, {t}, {0.75}));
      all.push_back(make(T + " " + name + "(p, x)", {f(p, x)}, {t}, {-1.5}));
      all.push_back(make(T + " " + name + "(x, x)", {f(x, x)}, {t}));
    }
    // min and max with a broadcast number take one comparison; with a NaN, the full rule.
    for (double c : {0.0, -0.0, std::numeric_limits<double>::quiet_NaN()}) {
      const std::string v = std::signbit(c) ? "-0" : std::to_string(c);
      all.push_back(make(T + " min(x, p) p=" + v, {ew::min(x, p)}, {t}, {c}));
      all.push_back(make(T + " min(p, x) p=" + v, {ew::min(p, x)}, {t}, {c}));
      all.push_back(make(T + " max(x, p) p=" + v, {ew::max(x, p)}, {t}, {c}));
      all.push_back(make(T + " max(p, x) p=" + v, {ew::max(p, x)}, {t}, {c}));
    }
    // fma: every broadcast pattern but all three (folded once per call).
    all.push_back(make(T + " fma(x, y, z)", {ew::fma(x, y, z)}, three));
    all.push_back(make(T + " fma(p, y, z)", {ew::fma(p, y, z)}, three, {1.25}));
    all.push_back(make(T + " fma(x, p, z)", {ew::fma(x, p, z)}, three, {-3.0}));
    all.push_back(make(T + " fma(p, q, z)", {ew::fma(p, q, z)}, three, {0.1, 0.2}));
    all.push_back(make(T + " fma(x, y, p)", {ew::fma(x, y, p)}, three, {0.3}));
    all.push_back(make(T + " fma(p, y, q)", {ew::fma(p, y, q)}, three, {0.1, -7}));
    all.push_back(make(T + " fma(x, p, q)", {ew::fma(x, p, q)}, three, {3, 1e-3}));
    // select: the condition itself (zeros, NaN), broadcast values, a uniform condition that
    // picks an input or a register (copied), and params folded with math through it.
    all.push_back(make(T + " select(x, y, z)", {select(x, y, z)}, three));
    all.push_back(make(T + " select(x, p, z)", {select(x, p, z)}, three, {2}));
    all.push_back(make(T + " select(x, y, p)", {select(x, y, p)}, three, {2}));
    all.push_back(make(T + " select(x, p, q)", {select(x, p, q)}, three, {2, -0.0}));
    for (double c : {0.0, 1.0, std::numeric_limits<double>::quiet_NaN()}) {
      all.push_back(make(T + " select(p, y, z) p=" + std::to_string(c), {select(p, y, z)}, three, {c}));
      // The picked register's own last reader is the select: the next instruction (z * 2)
      // takes that register, before the product reads the select's value.
      all.push_back(make(T + " select(p, sqrt(y), z) p=" + std::to_string(c),
                         {select(p, ew::sqrt(y), z) * (z * 2 + 1)}, three, {c}));
    }
    all.push_back(make(T + " exp(p) * x + tanh(p + q)", {ew::exp(p) * x + ew::tanh(p + q)}, {t}, {0.7, 2}));
  }
  const Expr f = input<float>(0), d = input<double>(1), f2 = input<float>(2), d2 = input<double>(2);
  const Expr pf = param<float>(0), pd = param<double>(1);
  const std::vector<DType> fdf{DType::f32, DType::f64, DType::f32}, fdd{DType::f32, DType::f64, DType::f64};
  all.push_back(make("cast f32 -> f64", {cast<double>(f)}, {DType::f32}));
  all.push_back(make("cast f64 -> f32", {cast<float>(d)}, fdf));
  all.push_back(make("f32 + f64", {f + d}, fdf));
  all.push_back(make("cast<f32>(f * d) * f", {cast<float>(f * d) * f2}, fdf));
  all.push_back(make("select(f32, f64, f64)", {select(f, d, d2)}, fdd));
  all.push_back(make("select(f32, p, f64)", {select(f, pd, d)}, fdf, {0, 4.5}));
  all.push_back(make("select(f32, f64, p)", {select(f, d, pd)}, fdf, {0, 4.5}));
  all.push_back(make("select(f32, p, p)", {select(f, pd, cast<double>(pf))}, fdf, {-2.5, 4.5}));
  all.push_back(make("select(f64, f32, f32)", {select(d, f, f2)}, fdf));
  all.push_back(make("select(f64, p, f32)", {select(d, pf, f)}, fdf, {1.5}));
  all.push_back(make("select(f64, f32, p)", {select(d, f, pf)}, fdf, {1.5}));
  all.push_back(make("select(f64, p, p)", {select(d, pf, cast<float>(pd))}, fdf, {1.5, 1e-300}));
  all.push_back(make("select(p f64, f32, f32)", {select(pd, f, f2)}, fdf, {0, 1e-300}));
  // Two outputs of two dtypes; an output that is an input; a uniform output; in place.
  all.push_back(make("{d * d2, cast<f32>(d)}", {d * d2, cast<float>(d)}, fdd));
  all.push_back(make("{sigmoid(f), f}", {ew::sigmoid(f), f}, {DType::f32}));
  // An output's value read again after its step, and one value as two outputs.
  all.push_back(make("{d * d2, d * d2 + 1}", {d * d2, d * d2 + 1}, fdd));
  all.push_back(make("{d * d2, d * d2}", {d * d2, d * d2}, fdd));
  all.push_back(make("{p * 2, d}", {pd * 2, d}, fdd, {0, 0.3}));
  all.push_back(make("in place x = x * 2 + y", {input<double>(0) * 2 + input<double>(1)},
                     {DType::f64, DType::f64}, {}, {0}));
  all.push_back(make("in place {x = y * x, x}: the copy of x is taken first",
                     {input<float>(1) * input<float>(0), input<float>(0)}, {DType::f32, DType::f32}, {}, {0, -1}));
  all.push_back(make("in place swap {x, y} = {y, x}", {input<double>(1), input<double>(0)},
                     {DType::f64, DType::f64}, {}, {0, 1}));
  all.push_back(make("in place two outputs {x = x + y, y = x - y}",
                     {input<float>(0) + input<float>(1), input<float>(0) - input<float>(1)},
                     {DType::f32, DType::f32}, {}, {0, 1}));
  // 16-bit data: widened (exactly) into registers, rounded by casts (from f32, from f64
  // straight, from the other 16-bit type) and by stores, uniform 16-bit outputs, mixed
  // storage types, in place.
  {
    const Expr h = input<half>(0), g = input<bfloat16>(1), f32 = input<float>(2), f64 = input<double>(2);
    const Expr h2 = input<half>(1), g0 = input<bfloat16>(0);
    const std::vector<DType> hgf{DType::f16, DType::bf16, DType::f32}, hgd{DType::f16, DType::bf16, DType::f64};
    all.push_back(make("f16 -> f32, bf16 -> f64", {cast<float>(h), cast<double>(g)}, hgf));
    all.push_back(make("f32 -> f16, f32 -> bf16", {cast<half>(f32), cast<bfloat16>(f32)}, hgf));
    all.push_back(make("f64 -> f16, f64 -> bf16 (once)", {cast<half>(f64), cast<bfloat16>(f64)}, hgd));
    all.push_back(make("cast<f32>(cast<f16>(f64))", {cast<float>(cast<half>(f64)) + f64}, hgd));
    all.push_back(make("f16 -> bf16, bf16 -> f16", {cast<bfloat16>(h), cast<half>(g)}, hgf));
    all.push_back(make("f16 * bf16 (f32)", {h * g, cast<half>(h * g)}, hgf));
    all.push_back(make("cast<f16>(h * h) inside", {cast<half>(h * h) + h, h * h + h}, hgf));
    all.push_back(make("f16 + f64", {h + f64}, hgd));
    all.push_back(make("select(f16, f64, f64)", {select(h, f64, f64 * 2)}, hgd));
    all.push_back(make("select(f64, f16, f16)", {select(f64, h, cast<half>(f64))}, hgd));
    all.push_back(make("select(bf16, f32, p)", {select(g, f32, param<float>(0))}, hgf, {3.5}));
    all.push_back(make("{p16 * 2, bf16 p}: uniform 16-bit outputs", {param<half>(0) * 2, param<bfloat16>(1)}, {},
                       {0.1, 65504.0 * 2}));
    all.push_back(make("{x16, max(x16, 0), x16}", {h, ew::max(h, 0), h}, hgf));
    all.push_back(make("in place f16 x = x * 2 + y", {h * 2 + h2}, {DType::f16, DType::f16}, {}, {0}));
    all.push_back(make("in place bf16 swap {x, y} = {y, x}", {input<bfloat16>(1), g0}, {DType::bf16, DType::bf16}, {},
                       {0, 1}));
    all.push_back(make("in place {x = y * x, x} in f16", {h2 * h, h}, {DType::f16, DType::f16}, {}, {0, -1}));
    all.push_back(make("bf16 in, f32 and f16 out", {cast<float>(g0) * 0.5f, cast<half>(g0)}, {DType::bf16}));
  }
  // More live values than L1 holds: every term is read again by the second chain.
  {
    const Expr x = input<double>(0);
    std::vector<Expr> terms;
    for (int k = 1; k <= 40; ++k) terms.push_back(ew::sqrt(ew::abs(x) + k));
    Expr sum = terms[0], product = terms.back();
    for (std::size_t k = 1; k < terms.size(); ++k) sum = sum + terms[k], product = product * terms[terms.size() - 1 - k];
    all.push_back(make("40 live registers", {sum / product}, {DType::f64}));
  }
  return all;
}

struct Result {
  std::vector<Array> inputs, outputs;  // as after the call
};

InputArray input_span(const Array& a, std::size_t first, std::size_t n) {
  switch (a.dtype) {
    case DType::f32: return Span<const float>(a.f() + first, n);
    case DType::f64: return Span<const double>(a.d() + first, n);
    case DType::f16: return Span<const half>(a.h() + first, n);
    case DType::bf16: break;
  }
  return Span<const bfloat16>(a.b() + first, n);
}

OutputArray output_span(const Array& a, std::size_t first, std::size_t n) {
  switch (a.dtype) {
    case DType::f32: return Span<float>(a.f() + first, n);
    case DType::f64: return Span<double>(a.d() + first, n);
    case DType::f16: return Span<half>(a.h() + first, n);
    case DType::bf16: break;
  }
  return Span<bfloat16>(a.b() + first, n);
}

// One call on `ctx` over copies of `init`, each operand at its pattern's offset.
Result run_case(Context& ctx, const Case& c, std::size_t n, int pattern, const std::vector<Array>& init,
             const Layout& layout = {}) {
  Result r;
  const auto first_of = [&](std::size_t operand) { return layout.lead + offset_of(pattern, static_cast<int>(operand)); };
  std::vector<InputArray> ins(c.inputs.size());
  for (std::size_t s = 0; s < c.inputs.size(); ++s) {
    r.inputs.push_back(init[s].clone(first_of(s) + n + layout.trail, layout.fence));
    ins[s] = input_span(r.inputs[s], first_of(s), n);
  }
  std::vector<OutputArray> outs(c.in_place.size());
  for (std::size_t k = 0; k < outs.size(); ++k) {
    const DType t = c.kernel.output_dtype(static_cast<int>(k));
    // In place: the input's own bytes, at its offset.
    const std::size_t operand = c.in_place[k] >= 0 ? static_cast<std::size_t>(c.in_place[k]) : c.inputs.size() + k;
    if (c.in_place[k] >= 0) {
      r.outputs.push_back(r.inputs[operand]);
    } else {
      r.outputs.emplace_back(t, first_of(operand) + n + layout.trail, layout.fence);
      r.outputs.back().poison_all();
    }
    outs[k] = output_span(r.outputs[k], first_of(operand), n);
  }
  c.kernel.run(ctx, ins.data(), ins.size(), outs.data(), outs.size(), c.params.data(), c.params.size());
  return r;
}

// First element where two arrays differ, or -1.
long long first_difference(const Array& got, const Array& want) {
  for (std::size_t i = 0; i < want.count; ++i)
    if (!got.same_at(i, want)) return static_cast<long long>(i);
  return -1;
}

// Every output and input array, guards included, has the scalar backend's bytes.
void expect_same(const Result& got, const Result& want, const std::string& what) {
  for (std::size_t k = 0; k < want.outputs.size(); ++k) {
    const long long i = first_difference(got.outputs[k], want.outputs[k]);
    ASSERT_EQ(i, -1) << "output " << k << " array element " << i << " is " << got.outputs[k].show(i)
                     << ", the scalar backend's " << want.outputs[k].show(i) << ": " << what;
  }
  for (std::size_t s = 0; s < want.inputs.size(); ++s) {
    const long long i = first_difference(got.inputs[s], want.inputs[s]);
    ASSERT_EQ(i, -1) << "input " << s << " array element " << i << " is " << got.inputs[s].show(i)
                     << ", the scalar backend's " << want.inputs[s].show(i) << ": " << what;
  }
}

using Param = std::tuple<std::int64_t, int>;  // Highway target, threads

class HighwayExpr : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::highway);
    hwy::SetSupportedTargetsForTest(std::get<0>(GetParam()));
  }
  void TearDown() override {
    hwy::SetSupportedTargetsForTest(0);
    hw::reset_tuning();
    hw::set_expr_block_elements(0);
  }
};

// Compares every case at every size and offset pattern, with streaming stores, a team
// for small arrays and blocks of 256 elements (lowered thresholds), or with none of them
// (the defaults' side for these sizes); counts the calls that streamed.
void check_all_cases(int threads, bool low_thresholds) {
  constexpr std::size_t streaming_bytes = 4096, parallel_bytes = 256;
  hw::set_expr_block_elements(low_thresholds ? block : 0);
  if (low_thresholds) hw::set_tuning({streaming_bytes, parallel_bytes});
  else hw::set_tuning({std::numeric_limits<std::size_t>::max(), std::numeric_limits<std::size_t>::max()});
  ContextOptions options;
  options.threads = threads;
  Context ctx(Backend::highway, options);
  Context scalar(Backend::scalar);
  for (const Case& c : cases())
    for (std::size_t n : sizes) {
      std::vector<Array> init;
      for (DType t : c.inputs) init.push_back(random_array(t, guard + 3 + n + guard));
      for (int pattern = 0; pattern < patterns; ++pattern) {
        const std::size_t streamed_before = hw::expr_streaming_calls();
        const Result got = run_case(ctx, c, n, pattern, init);
        const std::size_t streamed = hw::expr_streaming_calls() - streamed_before;
        const Result want = run_case(scalar, c, n, pattern, init);
        const std::string what = c.name + ", n=" + std::to_string(n) + ", offset pattern " + std::to_string(pattern) +
                                 ", threads " + std::to_string(threads) + (low_thresholds ? ", low thresholds" : "") +
                                 ", target " + hw::chosen_target() + "\n" + c.kernel.str();
        expect_same(got, want, what);
        if (testing::Test::HasFailure()) return;
        std::size_t output_bytes = 0;
        bool some_output_not_an_input = false;
        for (std::size_t k = 0; k < c.in_place.size(); ++k) {
          const DType out = c.kernel.output_dtype(static_cast<int>(k));
          output_bytes += n * size_of(is_storage16(out) ? DType::f32 : out);  // 16-bit at f32's size
          some_output_not_an_input |= c.in_place[k] < 0;
        }
        // An output that is also an input is read anyway: streaming would only evict it.
        const bool should_stream =
            low_thresholds && n > 0 && output_bytes > streaming_bytes && some_output_not_an_input;
        ASSERT_EQ(streamed, should_stream ? 1u : 0u)
            << "streaming stores " << (should_stream ? "not " : "") << "used: " << what;
      }
    }
}

TEST_P(HighwayExpr, EveryCaseMatchesScalarBitForBit) {
  check_all_cases(std::get<1>(GetParam()), false);
  // The comparison above must really have run on the forced target.
  EXPECT_STREQ(hw::chosen_target(), hwy::TargetName(std::get<0>(GetParam())));
}

TEST_P(HighwayExpr, EveryCaseMatchesScalarStreamedAndThreaded) {
  check_all_cases(std::get<1>(GetParam()), true);
  EXPECT_STREQ(hw::chosen_target(), hwy::TargetName(std::get<0>(GetParam())));
}

// Every operand flush against a page that faults on any access, before or after it: the
// padded tail, the aligning head and the vector loops touch no byte outside the operands.
TEST_P(HighwayExpr, TouchesNothingOutsideItsOperands) {
  hw::set_tuning({4096, 256});  // streaming stores and the team, for these sizes
  hw::set_expr_block_elements(block);
  ContextOptions options;
  options.threads = std::get<1>(GetParam());
  Context ctx(Backend::highway, options);
  Context scalar(Backend::scalar);
  for (const Case& c : cases())
    for (std::size_t n : {std::size_t(1), std::size_t(15), std::size_t(17), block + 1, std::size_t(1000),
                          std::size_t(4097)}) {
      std::vector<Array> init;
      for (DType t : c.inputs) init.push_back(random_array(t, 3 + n));
      for (Fence fence : {Fence::before, Fence::after})
        for (int pattern : {0, 2, 4}) {
          const Layout layout{0, 0, fence};
          const Result got = run_case(ctx, c, n, pattern, init, layout);
          const Result want = run_case(scalar, c, n, pattern, init, layout);
          expect_same(got, want,
                      c.name + ", n=" + std::to_string(n) + ", fenced " + (fence == Fence::before ? "before" : "after") +
                          ", offset pattern " + std::to_string(pattern) + ", target " + hw::chosen_target());
          if (HasFailure()) return;
        }
    }
  EXPECT_STREQ(hw::chosen_target(), hwy::TargetName(std::get<0>(GetParam())));
}

TEST(HighwayExprBlocks, ForcedSizeMustSuitEveryTarget) {
  for (std::size_t bad : {std::size_t(8), std::size_t(100), std::size_t(1) << 20})
    expect_error(Errc::invalid_argument, [&] { hw::set_expr_block_elements(bad); }, "set_expr_block_elements");
  hw::set_expr_block_elements(16);
  hw::set_expr_block_elements(0);
  EXPECT_EQ(hw::expr_block_elements(1, 0, false), 2048u);
  EXPECT_EQ(hw::expr_block_elements(1, 4, false), 1024u);
  EXPECT_EQ(hw::expr_block_elements(1, 16, false), 256u);
  EXPECT_EQ(hw::expr_block_elements(1000, 0, false), 256u);
  EXPECT_EQ(hw::expr_block_elements(1, 4, true), 128u);
}

// A call whose block registers cannot be had throws out_of_memory before any output is
// written, so an output written in place keeps its input. Here the blocks are forced to
// 65536 elements (megabytes of registers a thread) and the address space limited to room
// for one thread's; the team's eight threads were started before. A new process (the limit
// is the process's): EXPECT_EXIT's statement.
int in_place_with_no_room_for_registers() {
  const std::size_t n = std::size_t(1) << 20;
  const std::vector<float> x0 = random_vector<float>(n), y = random_vector<float>(n);
  const Expr a = input<float>(0), b = input<float>(1);
  const Kernel k = compile({a * sigmoid(b) + a * b});
  std::vector<float> want = x0, x = x0;
  Context scalar(Backend::scalar);
  k(scalar, {x0, y}, {want});
  ContextOptions eight;
  eight.threads = 8;
  Context ctx(Backend::highway, eight);
  k(ctx, {x, y}, {x});  // default blocks: registers on the stack; the team's threads start
  x = x0;
  hw::set_expr_block_elements(65536);
  if (!limit_address_space_to_current_plus(std::size_t(4) << 20)) return 4;
  try {
    k(ctx, {x, y}, {x});
    return 5;  // no error
  } catch (const Error& e) {
    if (e.code() != Errc::out_of_memory || std::string(e.what()).find("block registers") == std::string::npos) {
      std::fprintf(stderr, "wrong error: %s\n", e.what());
      return 6;
    }
  }
  if (std::memcmp(x.data(), x0.data(), n * sizeof(float)) != 0) return 7;  // written although refused
  const rlimit none{RLIM_INFINITY, RLIM_INFINITY};
  if (setrlimit(RLIMIT_AS, &none) != 0) return 8;
  k(ctx, {x, y}, {x});
  for (std::size_t i = 0; i < n; ++i)
    if (!same_bits(x[i], want[i])) return 9;
  return 0;
}

TEST(HighwayExprBlocks, NoMemoryForTheRegistersIsAnErrorAndNothingIsWritten) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's own allocations need the address space this test takes away";
#else
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a fresh process: no team, no registers kept yet
  EXPECT_EXIT(std::_Exit(in_place_with_no_room_for_registers()), ::testing::ExitedWithCode(0), "");
#endif
}

std::string name(const testing::TestParamInfo<Param>& info) {
  return std::string(hwy::TargetName(std::get<0>(info.param))) + "_threads" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(highway, HighwayExpr,
                         testing::Combine(testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                                          testing::Values(1, 2)),
                         name);

}  // namespace
}  // namespace ew::test
