#pragma once
// Arrays split over the devices of a context (docs/multigpu.md). A context over several
// GPUs (ContextOptions::devices, or EW_DEVICE=0,1) runs each op on every device at once,
// each on its own stream; an ew::ShardedBuffer holds one contiguous shard of an array in
// the memory of each device, so that shard k of every operand is on device k.
//
// The split rule, shared by ShardedBuffer, host-resident operands of a multi-device
// context and the MPI helper (contrib/mpi): the n elements are cut into groups of
// `granule` elements (the last group may be short); part p of P takes
// groups/P groups, plus one more when p < groups % P, in order. Earlier parts are never
// smaller than later ones; a part may be empty when there are fewer groups than parts.
// Devices split in groups of shard_group = 8 elements whatever the dtype (16 bytes of
// f16/bf16, 32 of f32, 64 of f64), so every shard starts 16-byte aligned when the array
// does, and arrays of different dtypes and the same length are cut at the same elements:
// shard k of every operand of a call covers the same range.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "ew/api.hpp"
#include "ew/buffer.hpp"
#include "ew/context.hpp"
#include "ew/error.hpp"
#include "ew/expr.hpp"

namespace ew {

struct ShardRange {
  std::size_t begin = 0, end = 0;
  std::size_t size() const noexcept { return end - begin; }
};

// Part `part` of `parts` of [0, n) by the rule above. Never overflows.
inline ShardRange shard_range(std::size_t n, std::size_t parts, std::size_t part, std::size_t granule = 1) {
  if (parts == 0 || granule == 0 || part >= parts)
    throw Error(Errc::invalid_argument, "shard_range: part " + std::to_string(part) + " of " + std::to_string(parts) +
                                            " with granule " + std::to_string(granule) +
                                            " (parts and granule must be > 0, part < parts)");
  const std::size_t groups = n / granule + (n % granule != 0);
  const std::size_t per = groups / parts, extra = groups % parts;
  const auto first_group = [&](std::size_t p) { return p * per + std::min(p, extra); };
  // first_group(p) <= groups, and (groups - 1) * granule < n: no product exceeds n.
  const auto element = [&](std::size_t g) { return g >= groups ? n : g * granule; };
  return {element(first_group(part)), element(first_group(part + 1))};
}

// The granule devices split on, in elements (see above).
inline constexpr std::size_t shard_group = 8;

namespace detail {
// The same error with "device <d>: " before its message (d < 0: unchanged).
Error on_device(int device, const Error& e);
std::string device_list(const std::vector<int>& devices);  // "devices 0,1", "the host"
}  // namespace detail

// An owning array split over the devices of a context: shard k lives in the memory of
// device ctx.devices()[k] (host memory on CPU backends, one shard). Like Buffer, it keeps
// the backend alive and may outlive the Context object.
template <class T>
class ShardedBuffer {
 public:
  using value_type = T;

  ShardedBuffer(Context& ctx, std::size_t n) : size_(n), devices_(ctx.devices()) {
    const int parts = ctx.shard_count();
    shards_.reserve(static_cast<std::size_t>(parts));
    for (int k = 0; k < parts; ++k) {
      const ShardRange r = shard_range(n, static_cast<std::size_t>(parts), static_cast<std::size_t>(k), shard_group);
      offsets_.push_back(r.begin);
      try {
        Context shard = ctx.shard(k);
        shards_.emplace_back(shard, r.size());
      } catch (const Error& e) {
        throw detail::on_device(device_of(k), e);
      }
    }
  }

  // Moved from, it holds nothing (size 0, no shard), as a moved-from Buffer: an op on it, a
  // shard of it or a transfer of more than 0 elements is refused with an Error.
  ShardedBuffer(ShardedBuffer&& other) noexcept { *this = std::move(other); }
  ShardedBuffer& operator=(ShardedBuffer&& other) noexcept {
    if (this != &other) {
      size_ = std::exchange(other.size_, 0);
      devices_ = std::exchange(other.devices_, {});
      offsets_ = std::exchange(other.offsets_, {});
      shards_ = std::exchange(other.shards_, {});
    }
    return *this;
  }

  std::size_t size() const noexcept { return size_; }
  int shard_count() const noexcept { return static_cast<int>(shards_.size()); }
  const std::vector<int>& devices() const noexcept { return devices_; }  // empty on the host
  Span<T> shard(int k) const { return shards_[need_shard(k)].span(); }
  std::size_t offset(int k) const { return offsets_[need_shard(k)]; }  // first element of shard k

  // Blocking copies of the whole array between host memory and the shards.
  void upload(const T* host, std::size_t n) {
    detail::check_transfer_size(size_, n, "ShardedBuffer::upload");
    for (int k = 0; k < shard_count(); ++k) try {
        Buffer<T>& b = shards_[static_cast<std::size_t>(k)];
        b.upload(host + offsets_[static_cast<std::size_t>(k)], b.size());
      } catch (const Error& e) {
        throw detail::on_device(device_of(k), e);
      }
  }
  void download(T* host, std::size_t n) const {
    detail::check_transfer_size(size_, n, "ShardedBuffer::download");
    for (int k = 0; k < shard_count(); ++k) try {
        const Buffer<T>& b = shards_[static_cast<std::size_t>(k)];
        b.download(host + offsets_[static_cast<std::size_t>(k)], b.size());
      } catch (const Error& e) {
        throw detail::on_device(device_of(k), e);
      }
  }

 private:
  int device_of(int k) const { return devices_.empty() ? -1 : devices_[static_cast<std::size_t>(k)]; }
  std::size_t need_shard(int k) const {
    if (k < 0 || k >= shard_count())
      throw Error(Errc::invalid_argument, "ShardedBuffer::shard(" + std::to_string(k) + "): " +
                                              (shards_.empty() ? std::string("a moved-from ShardedBuffer holds no shard")
                                                               : "it has " + std::to_string(shard_count()) + " shards"));
    return static_cast<std::size_t>(k);
  }
  std::size_t size_ = 0;
  std::vector<int> devices_;
  std::vector<std::size_t> offsets_;
  std::vector<Buffer<T>> shards_;
};

namespace detail {

// Every sharded operand of a call must have the call's size, the context's devices and a
// shard for each: checked for all of them before any shard runs, so that a bad call writes
// nothing.
inline void check_layout(const char* call, const char* operand, std::size_t size, const std::vector<int>& devices,
                         std::size_t shards, std::size_t n, const std::vector<int>& context_devices,
                         int context_shards) {
  if (shards != static_cast<std::size_t>(context_shards))
    throw Error(Errc::invalid_argument, std::string(call) + ": " + operand + " has " + std::to_string(shards) +
                                            " shards, the context " + std::to_string(context_shards) +
                                            (shards == 0 ? " (a moved-from ShardedBuffer)" : ""));
  if (size != n)
    throw Error(Errc::size_mismatch, std::string(call) + ": " + operand + " has " + std::to_string(size) +
                                         " elements, the output " + std::to_string(n));
  if (devices != context_devices)
    throw Error(Errc::invalid_argument, std::string(call) + ": " + operand + " is sharded over " + device_list(devices) +
                                            ", the context runs on " + device_list(context_devices));
}

// f(shard context, k) for each shard in order; each shard's work is asynchronous on its
// own device, so the devices run at once. Errors name the device.
template <class F>
void for_each_shard(Context& ctx, const std::vector<int>& devices, F&& f) {
  for (int k = 0; k < ctx.shard_count(); ++k) try {
      Context shard = ctx.shard(k);
      f(shard, k);
    } catch (const Error& e) {
      throw on_device(devices.empty() ? -1 : devices[static_cast<std::size_t>(k)], e);
    }
}

template <class T>
void run_sharded(Context& ctx, Op op, const ShardedBuffer<T>& a, const ShardedBuffer<T>* b, ShardedBuffer<T>& out,
                 compute_t<T> s, compute_t<T> t) {
  const char* call = info(op).name;
  const std::vector<int> devices = ctx.devices();
  const int shards = ctx.shard_count();
  check_layout(call, "out", out.size(), out.devices(), out.shard_count(), out.size(), devices, shards);
  check_layout(call, "a", a.size(), a.devices(), a.shard_count(), out.size(), devices, shards);
  if (b) check_layout(call, "b", b->size(), b->devices(), b->shard_count(), out.size(), devices, shards);
  for_each_shard(ctx, devices, [&](Context& shard, int k) {
    run<T>(shard, op, Operands<T>{a.shard(k), b ? Span<const T>(b->shard(k)) : Span<const T>(), out.shard(k), s, t});
  });
}

}  // namespace detail

// The ops on sharded arrays: each device computes its shards, asynchronously on its stream.
template <class T>
void copy(Context& ctx, const ShardedBuffer<detail::nd<T>>& a, ShardedBuffer<T>& c) {
  detail::run_sharded<T>(ctx, Op::copy, a, nullptr, c, 1, 1);
}
template <class T>
void scale(Context& ctx, scalar_of<T> s, const ShardedBuffer<detail::nd<T>>& a, ShardedBuffer<T>& c) {
  detail::run_sharded<T>(ctx, Op::scale, a, nullptr, c, s, 1);
}
template <class T>
void add(Context& ctx, const ShardedBuffer<detail::nd<T>>& a, const ShardedBuffer<detail::nd<T>>& b, ShardedBuffer<T>& c) {
  detail::run_sharded<T>(ctx, Op::add, a, &b, c, 1, 1);
}
template <class T>
void mul(Context& ctx, const ShardedBuffer<detail::nd<T>>& a, const ShardedBuffer<detail::nd<T>>& b, ShardedBuffer<T>& c) {
  detail::run_sharded<T>(ctx, Op::mul, a, &b, c, 1, 1);
}
template <class T>
void triad(Context& ctx, const ShardedBuffer<detail::nd<T>>& a, scalar_of<T> s, const ShardedBuffer<detail::nd<T>>& b,
           ShardedBuffer<T>& c) {
  detail::run_sharded<T>(ctx, Op::triad, a, &b, c, s, 1);
}
template <class T>
void axpy(Context& ctx, scalar_of<T> s, const ShardedBuffer<detail::nd<T>>& x, ShardedBuffer<T>& y) {
  detail::run_sharded<T>(ctx, Op::axpy, x, nullptr, y, s, 1);
}
template <class T>
void axpby(Context& ctx, scalar_of<T> s, const ShardedBuffer<detail::nd<T>>& x, scalar_of<T> t, ShardedBuffer<T>& y) {
  detail::run_sharded<T>(ctx, Op::axpby, x, nullptr, y, s, t);
}

// ew::convert on sharded arrays: each device converts its shard. Shards of every dtype
// cover the same elements (shard_group), so shard k of `in` and of `out` match.
template <class From, class To>
void convert(Context& ctx, const ShardedBuffer<detail::nd<From>>& in, ShardedBuffer<To>& out) {
  const char* call = "ew::convert";
  const std::vector<int> devices = ctx.devices();
  const int shards = ctx.shard_count();
  detail::check_layout(call, "out", out.size(), out.devices(), out.shard_count(), out.size(), devices, shards);
  detail::check_layout(call, "in", in.size(), in.devices(), in.shard_count(), out.size(), devices, shards);
  detail::for_each_shard(ctx, devices, [&](Context& shard, int k) {
    convert<From, To>(shard, Span<const From>(in.shard(k)), out.shard(k));
  });
}

// Reductions do not run over several devices: the fixed summation tree spans the whole
// array, and per-device partial results would not give its bits (docs/multigpu.md). A call
// on a ShardedBuffer does not compile; reduce a shard on its device instead,
// ew::sum<T>(ctx.shard(k), x.shard(k)), and combine the shards' results in a fixed order.
template <class T, class U, class... Rest> void sum(Context&, const ShardedBuffer<U>&, Rest&&...) = delete;
template <class T, class U, class... Rest> void asum(Context&, const ShardedBuffer<U>&, Rest&&...) = delete;
template <class T, class U, class... Rest> void dot(Context&, const ShardedBuffer<U>&, Rest&&...) = delete;
template <class T, class U, class... Rest> void norm2(Context&, const ShardedBuffer<U>&, Rest&&...) = delete;
template <class T, class U> void min_element(Context&, const ShardedBuffer<U>&) = delete;
template <class T, class U> void max_element(Context&, const ShardedBuffer<U>&) = delete;

// Operands of a compiled expression (ew::Kernel) on sharded arrays. Empty: an input
// slot the expression does not read.
struct ShardedInput {
  std::size_t size = 0;
  std::vector<int> devices;
  std::vector<InputArray> shards;
  ShardedInput() = default;
  template <class T>
  ShardedInput(const ShardedBuffer<T>& b) : size(b.size()), devices(b.devices()) {
    if (b.shard_count() == 0) throw Error(Errc::invalid_argument, "ShardedInput: a moved-from ShardedBuffer");
    for (int k = 0; k < b.shard_count(); ++k) shards.emplace_back(Span<const T>(b.shard(k)));
  }
};
struct ShardedOutput {
  std::size_t size = 0;
  std::vector<int> devices;
  std::vector<OutputArray> shards;
  template <class T>
  ShardedOutput(ShardedBuffer<T>& b) : size(b.size()), devices(b.devices()) {
    for (int k = 0; k < b.shard_count(); ++k) shards.emplace_back(b.shard(k));
  }
};

// kernel(ctx, inputs, outputs, params) on every shard, each device on its own stream. The
// layout (sizes, devices) is checked for every operand first; every other check is the
// Kernel's own, made on shard 0 (the largest) before anything runs.
inline void run_sharded(const Kernel& kernel, Context& ctx, std::initializer_list<ShardedInput> inputs,
                        std::initializer_list<ShardedOutput> outputs, std::initializer_list<double> params = {}) {
  constexpr const char* call = "ew::run_sharded(Kernel)";
  if (outputs.size() == 0 || outputs.size() > max_expr_outputs || inputs.size() > max_expr_inputs)
    throw Error(Errc::invalid_argument, std::string(call) + ": " + std::to_string(inputs.size()) + " inputs and " +
                                            std::to_string(outputs.size()) + " outputs (1.." +
                                            std::to_string(max_expr_outputs) + " outputs, at most " +
                                            std::to_string(max_expr_inputs) + " inputs)");
  const std::vector<int> devices = ctx.devices();
  const std::size_t n = outputs.begin()->size;
  const int shards = ctx.shard_count();
  for (const ShardedOutput& o : outputs)
    detail::check_layout(call, "an output", o.size, o.devices, o.shards.size(), n, devices, shards);
  for (const ShardedInput& i : inputs)
    if (!i.shards.empty()) detail::check_layout(call, "an input", i.size, i.devices, i.shards.size(), n, devices, shards);
  detail::for_each_shard(ctx, devices, [&](Context& shard, int k) {
    InputArray in[max_expr_inputs];
    OutputArray out[max_expr_outputs];
    std::size_t i = 0, o = 0;
    for (const ShardedInput& x : inputs) in[i++] = x.shards.empty() ? InputArray() : x.shards[static_cast<std::size_t>(k)];
    for (const ShardedOutput& x : outputs) out[o++] = x.shards[static_cast<std::size_t>(k)];
    kernel.run(shard, in, i, out, o, params.begin(), params.size());
  });
}

}  // namespace ew
