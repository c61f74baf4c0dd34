#pragma once
// What the expression tests share: arrays of any dtype on the host and in a
// backend's memory, one call of a Kernel over guarded, offset, poisoned operands
// compared with a reference bit for bit, and the backends to run on. Public API only
// (ew/ew.hpp); the shared suite's helpers (poison, same_bits, seeds) come from
// tests/test_support.hpp.
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace ew::test {

// Elements of each guard zone around an operand; an operand starts `guard + offset`
// elements into its allocation (offset 0..3), so both sides always have a guard.
inline constexpr std::size_t guard = 8;

// A host array of any dtype (16-bit elements as their bits).
struct HostArray {
  DType dtype = DType::f32;
  std::vector<float> f;
  std::vector<double> d;
  std::vector<std::uint16_t> h;  // f16, bf16

  HostArray() = default;
  HostArray(DType t, std::size_t n) : dtype(t) {
    if (t == DType::f32) f.resize(n);
    else if (t == DType::f64) d.resize(n);
    else h.resize(n);
  }
  std::size_t size() const { return dtype == DType::f32 ? f.size() : dtype == DType::f64 ? d.size() : h.size(); }
  void* data() { return const_cast<void*>(static_cast<const HostArray*>(this)->data()); }
  const void* data() const {
    if (dtype == DType::f32) return f.data();
    if (dtype == DType::f64) return d.data();
    return h.data();
  }
  double get(std::size_t i) const {
    switch (dtype) {
      case DType::f32: return static_cast<double>(f[i]);
      case DType::f64: return d[i];
      case DType::f16: return static_cast<double>(half::from_bits(h[i]));
      case DType::bf16: break;
    }
    return static_cast<double>(bfloat16::from_bits(h[i]));
  }
  // v rounded once to the dtype.
  void set(std::size_t i, double v) {
    switch (dtype) {
      case DType::f32: f[i] = static_cast<float>(v); break;
      case DType::f64: d[i] = v; break;
      case DType::f16: h[i] = half(v).bits; break;
      case DType::bf16: h[i] = bfloat16(v).bits; break;
    }
  }
  // The poison of each dtype (test_support.hpp): 16-bit ones are signaling NaNs, which no
  // 16-bit result is (every one is rounded, which quiets NaNs).
  std::uint16_t poison16() const { return dtype == DType::f16 ? poison<half>().bits : poison<bfloat16>().bits; }
  void set_poison(std::size_t i) {
    if (dtype == DType::f32) f[i] = poison<float>();
    else if (dtype == DType::f64) d[i] = poison<double>();
    else h[i] = poison16();
  }
  bool poisoned(std::size_t i) const {
    if (dtype == DType::f32) return is_poison(f[i]);
    if (dtype == DType::f64) return is_poison(d[i]);
    return h[i] == poison16();
  }
  bool nan(std::size_t i) const { return std::isnan(get(i)); }
  // Same bits (any NaN equals any NaN), and the poison only where the other has it.
  bool same_at(std::size_t i, const HostArray& o, std::size_t j) const {
    if (dtype != o.dtype) return false;
    if (poisoned(i) != o.poisoned(j)) return false;
    if (dtype == DType::f32) return same_bits(f[i], o.f[j]);
    if (dtype == DType::f64) return same_bits(d[i], o.d[j]);
    return (nan(i) && o.nan(j)) || h[i] == o.h[j];
  }
  // The exact value (hex float) and a readable one (and a 16-bit element's bits).
  std::string show(std::size_t i) const {
    char text[112];
    int len = std::snprintf(text, sizeof text, "%a (%.9g)", get(i), get(i));
    if (is_storage16(dtype)) std::snprintf(text + len, sizeof text - len, " [bits 0x%04x]", h[i]);
    return std::string(text) + (poisoned(i) ? " [poison: never written]" : "");
  }
};

// Values of both signs over several binades (as random_vector), from a given engine so
// that one case replays from its own seed; `special_rate` of them are special values (for
// the 16-bit types: any of the 65,536 bit patterns, NaN payloads and subnormals included).
inline HostArray random_array(std::mt19937_64& engine, DType t, std::size_t n, double special_rate = 0.0) {
  static const double specials[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(), 0.0, -0.0, 1e-310, -1e-40, 1e-45,
                                    3.4e38, -1e300, 0.5, -2.5, 1.0};
  std::uniform_real_distribution<double> mantissa(-2.0, 2.0), unit(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-8, 8);
  std::uniform_int_distribution<std::size_t> pick(0, sizeof specials / sizeof *specials - 1);
  HostArray a(t, n);
  for (std::size_t i = 0; i < n; ++i) {
    double v = std::ldexp(mantissa(engine), exponent(engine));
    if (special_rate > 0 && unit(engine) < special_rate) {
      if (is_storage16(t) && unit(engine) < 0.5) {
        a.h[i] = static_cast<std::uint16_t>(engine());
        continue;
      }
      v = specials[pick(engine)];
    }
    a.set(i, v);
  }
  return a;
}

// An array of any dtype in a backend's memory space (device memory on GPU backends).
class DeviceArray {
 public:
  DeviceArray(Context& ctx, DType t, std::size_t n) : dtype_(t), size_(n) {
    if (t == DType::f32) f_ = std::make_unique<Buffer<float>>(ctx, n);
    else if (t == DType::f64) d_ = std::make_unique<Buffer<double>>(ctx, n);
    else h_ = std::make_unique<Buffer<half>>(ctx, n);  // bf16 too: the same 2-byte storage
  }
  DType dtype() const { return dtype_; }
  std::size_t size() const { return size_; }
  void upload(const HostArray& host) {
    if (dtype_ == DType::f32) f_->upload(host.f.data(), size_);
    else if (dtype_ == DType::f64) d_->upload(host.d.data(), size_);
    else h_->upload(reinterpret_cast<const half*>(host.h.data()), size_);
  }
  HostArray download() const {
    HostArray host(dtype_, size_);
    if (dtype_ == DType::f32) f_->download(host.f.data(), size_);
    else if (dtype_ == DType::f64) d_->download(host.d.data(), size_);
    else h_->download(reinterpret_cast<half*>(host.h.data()), size_);
    return host;
  }
  // n elements from element `start`, as an input or an output of a Kernel call.
  InputArray input(std::size_t start, std::size_t n) const {
    switch (dtype_) {
      case DType::f32: return Span<const float>(f_->data() + start, n, f_->space());
      case DType::f64: return Span<const double>(d_->data() + start, n, d_->space());
      case DType::f16: return Span<const half>(h_->data() + start, n, h_->space());
      case DType::bf16: break;
    }
    return Span<const bfloat16>(reinterpret_cast<const bfloat16*>(h_->data()) + start, n, h_->space());
  }
  OutputArray output(std::size_t start, std::size_t n) const {
    switch (dtype_) {
      case DType::f32: return Span<float>(f_->data() + start, n, f_->space());
      case DType::f64: return Span<double>(d_->data() + start, n, d_->space());
      case DType::f16: return Span<half>(h_->data() + start, n, h_->space());
      case DType::bf16: break;
    }
    return Span<bfloat16>(reinterpret_cast<bfloat16*>(h_->data()) + start, n, h_->space());
  }

 private:
  DType dtype_;
  std::size_t size_;
  std::unique_ptr<Buffer<float>> f_;
  std::unique_ptr<Buffer<double>> d_;
  std::unique_ptr<Buffer<half>> h_;
};

// Why `backend` cannot run these tests here, or empty. Unusable backends skip with
// their reason. A backend whose arrays live on a GPU (cuda, kokkos on a GPU) skips
// while it refuses expressions (Errc::backend_unavailable, its message is the reason);
// a CPU backend never skips: refusing an expression there is a failure.
inline std::string expr_skip_reason(Backend b) {
  std::string reason = skip_reason(b);
  if (!reason.empty()) return reason;
  Context ctx(b);
  Buffer<float> probe(ctx, 1);
  if (probe.space() == MemorySpace::host) return {};
  try {
    Kernel k = compile({input<float>(0) + 1});
    k(ctx, {probe}, {probe});
    ctx.synchronize();
  } catch (const Error& e) {
    if (e.code() == Errc::backend_unavailable) return std::string("expressions on a GPU: ") + e.what();
    throw;
  }
  return {};
}

#define EW_EXPR_SKIP_IF_UNUSABLE(backend)                            \
  do {                                                               \
    std::string ew_reason_ = ::ew::test::expr_skip_reason(backend);  \
    if (!ew_reason_.empty()) GTEST_SKIP() << ew_reason_;             \
  } while (0)

// A call's operands: the data of every input slot (empty for a slot the kernel does
// not read and the call leaves unbound), the params, and the length.
struct CallData {
  std::size_t n = 0;
  std::vector<HostArray> inputs;  // n elements each, or empty (unbound slot)
  std::vector<double> params;
};

// Where each operand lives in one call.
struct Layout {
  std::vector<std::size_t> input_offset;   // 0..3 per input slot
  std::vector<std::size_t> output_offset;  // 0..3 per output
  std::vector<int> output_alias;           // per output: the input slot whose array it writes (in place), or -1
  std::vector<int> input_share;            // per input slot: an earlier slot whose array it is bound to, or -1

  static Layout plain(std::size_t inputs, std::size_t outputs) {
    return Layout{std::vector<std::size_t>(inputs, 0), std::vector<std::size_t>(outputs, 0),
                  std::vector<int>(outputs, -1), std::vector<int>(inputs, -1)};
  }
  // Set 0: all aligned; 1: all one element off; 2: each operand shifted differently.
  static Layout offsets(int set, std::size_t inputs, std::size_t outputs) {
    Layout l = plain(inputs, outputs);
    for (std::size_t k = 0; k < inputs; ++k) l.input_offset[k] = set == 0 ? 0 : set == 1 ? 1 : (k + 1) % 4;
    for (std::size_t k = 0; k < outputs; ++k) l.output_offset[k] = set == 0 ? 0 : set == 1 ? 1 : (k * 3 + 2) % 4;
    return l;
  }
  std::string str() const {
    std::ostringstream s;
    s << "offsets in {";
    for (std::size_t o : input_offset) s << o << ",";
    s << "} out {";
    for (std::size_t o : output_offset) s << o << ",";
    s << "}";
    for (std::size_t k = 0; k < output_alias.size(); ++k)
      if (output_alias[k] >= 0) s << " output " << k << " is input " << output_alias[k];
    for (std::size_t k = 0; k < input_share.size(); ++k)
      if (input_share[k] >= 0) s << " input " << k << " is input " << input_share[k];
    return s.str();
  }
};

// n elements' bits from `from` (at from_start) into `to` (at to_start), of one dtype.
inline void copy_elements(const HostArray& from, std::size_t from_start, HostArray& to, std::size_t to_start,
                          std::size_t n) {
  const std::size_t bytes = size_of(from.dtype);
  if (n)
    std::memcpy(static_cast<char*>(to.data()) + to_start * bytes,
                static_cast<const char*>(from.data()) + from_start * bytes, n * bytes);
}

inline std::vector<InputArray> plain_inputs(const std::vector<HostArray>& in) {
  std::vector<InputArray> v;
  for (const HostArray& a : in) {
    InputArray x;
    x.dtype = a.dtype;
    if (a.size()) x.data = a.data(), x.size = a.size(), x.space = MemorySpace::host;
    v.push_back(x);
  }
  return v;
}

// The outputs of `k` over plain host arrays (aligned, not aliased) on `ctx`.
inline std::vector<HostArray> run_plain(Context& ctx, const Kernel& k, const CallData& c) {
  std::vector<HostArray> out;
  for (int j = 0; j < k.outputs(); ++j) {
    out.emplace_back(k.output_dtype(j), c.n);
    for (std::size_t i = 0; i < c.n; ++i) out.back().set_poison(i);
  }
  std::vector<InputArray> in = plain_inputs(c.inputs);
  std::vector<OutputArray> o;
  for (HostArray& a : out) {
    OutputArray x;
    x.data = a.data(), x.size = a.size(), x.dtype = a.dtype, x.space = MemorySpace::host;
    o.push_back(x);
  }
  k.run(ctx, in.data(), in.size(), o.data(), o.size(), c.params.data(), c.params.size());
  ctx.synchronize();
  return out;
}

// What the scalar backend computes: the reference.
inline std::vector<HostArray> reference_outputs(const Kernel& k, const CallData& c) {
  Context scalar(Backend::scalar);
  return run_plain(scalar, k, c);
}

// Runs `k` on `ctx` with the operands laid out as `layout` says, inside guarded
// arrays in the backend's memory (inputs random around the operand, outputs poisoned),
// and compares every element of every array, guards included, with `want`: outputs
// bit for bit, inputs unchanged (an input written in place holds its output). Returns
// the first difference, said so that it can be found, or empty.
inline std::string run_and_compare(Context& ctx, const Kernel& k, const CallData& c, const Layout& layout,
                                   const std::vector<HostArray>& want) {
  const std::size_t n = c.n, total = n + 2 * guard;
  std::mt19937_64 fill(n * 7919 + 17);
  // Whole arrays (guards included) as they are before the call and must be after it.
  std::vector<HostArray> in_before(c.inputs.size()), in_after(c.inputs.size());
  std::vector<std::unique_ptr<DeviceArray>> in_dev(c.inputs.size());
  std::vector<InputArray> in_args(c.inputs.size());
  for (std::size_t s = 0; s < c.inputs.size(); ++s) {
    if (!c.inputs[s].size() && n) continue;  // an unbound slot (the kernel does not read it)
    if (layout.input_share[s] >= 0) continue;
    // Random guards around the operand (random guards and poisoned ones both must survive).
    HostArray whole(c.inputs[s].dtype, total);
    const HostArray guards = random_array(fill, whole.dtype, 2 * guard + 3);
    for (std::size_t i = 0; i < guard + layout.input_offset[s]; ++i) whole.set(i, guards.get(i));
    for (std::size_t i = guard + layout.input_offset[s] + n; i < total; ++i) whole.set(i, guards.get(total - i));
    copy_elements(c.inputs[s], 0, whole, guard + layout.input_offset[s], n);
    in_dev[s] = std::make_unique<DeviceArray>(ctx, whole.dtype, total);
    in_dev[s]->upload(whole);
    in_before[s] = whole;
    in_args[s] = in_dev[s]->input(guard + layout.input_offset[s], n);
  }
  for (std::size_t s = 0; s < c.inputs.size(); ++s)
    if (layout.input_share[s] >= 0) in_args[s] = in_args[layout.input_share[s]];
  in_after = in_before;

  const std::size_t outputs = want.size();
  std::vector<std::unique_ptr<DeviceArray>> out_dev(outputs);
  std::vector<OutputArray> out_args(outputs);
  std::vector<HostArray> out_want(outputs);
  for (std::size_t k2 = 0; k2 < outputs; ++k2) {
    const int alias = layout.output_alias[k2];
    if (alias >= 0) {
      const std::size_t start = guard + layout.input_offset[alias];
      out_args[k2] = in_dev[alias]->output(start, n);
      copy_elements(want[k2], 0, in_after[alias], start, n);
      continue;
    }
    HostArray whole(want[k2].dtype, total);
    for (std::size_t i = 0; i < total; ++i) whole.set_poison(i);
    out_dev[k2] = std::make_unique<DeviceArray>(ctx, whole.dtype, total);
    out_dev[k2]->upload(whole);
    out_want[k2] = whole;
    const std::size_t start = guard + layout.output_offset[k2];
    copy_elements(want[k2], 0, out_want[k2], start, n);
    out_args[k2] = out_dev[k2]->output(start, n);
  }

  k.run(ctx, in_args.data(), in_args.size(), out_args.data(), out_args.size(), c.params.data(), c.params.size());
  ctx.synchronize();

  auto compare = [&](const char* what, std::size_t index, const HostArray& got, const HostArray& expected,
                     std::size_t start) -> std::string {
    for (std::size_t i = 0; i < got.size(); ++i)
      if (!got.same_at(i, expected, i)) {
        std::ostringstream m;
        const bool inside = i >= start && i < start + n;
        m << ctx.backend_name() << " n=" << n << " " << layout.str() << ": " << what << " " << index << " ("
          << to_string(got.dtype) << ") " << (inside ? "element " : "guard element ")
          << (inside ? i - start : i) << " is " << got.show(i) << ", expected " << expected.show(i);
        return m.str();
      }
    return {};
  };
  for (std::size_t k2 = 0; k2 < outputs; ++k2) {
    if (!out_dev[k2]) continue;
    std::string m = compare("output", k2, out_dev[k2]->download(), out_want[k2], guard + layout.output_offset[k2]);
    if (!m.empty()) return m;
  }
  for (std::size_t s = 0; s < c.inputs.size(); ++s) {
    if (!in_dev[s]) continue;
    std::string m = compare("input array", s, in_dev[s]->download(), in_after[s], guard + layout.input_offset[s]);
    if (!m.empty()) return m;
  }
  return {};
}

inline std::string describe(const Kernel& k, const CallData& c) {
  std::ostringstream m;
  m << "params {";
  for (double p : c.params) m << p << ",";
  m << "}, input slots " << c.inputs.size() << ", kernel:\n" << k.str();
  return m.str();
}

}  // namespace ew::test
