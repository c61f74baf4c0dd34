#include "ew_internal/multi_device.hpp"

#include <algorithm>
#include <exception>
#include <string>
#include <system_error>
#include <thread>

#include "ew/error.hpp"
#include "ew/sharded.hpp"
#include "ew_internal/program.hpp"
#include "ew_internal/registry.hpp"

namespace ew::detail {

namespace {

template <class P>
P* advance(P* p, std::size_t bytes) {
  using Byte = std::conditional_t<std::is_const_v<P>, const char, char>;
  return p ? static_cast<P*>(static_cast<Byte*>(p) + bytes) : p;
}

// One copy thread budget for the process, divided among the devices' pipelines.
ContextOptions one_device(const ContextOptions& options, int device, std::size_t devices) {
  ContextOptions o = options;
  o.devices.clear();
  o.device = device;
  const unsigned all = options.threads > 0 ? static_cast<unsigned>(options.threads)
                                           : std::max(1u, std::thread::hardware_concurrency());
  o.threads = static_cast<int>(std::max<std::size_t>(1, all / devices));
  return o;
}

}  // namespace

std::string device_list(const std::vector<int>& devices) {
  if (devices.empty()) return "the host";
  std::string s = devices.size() == 1 ? "device " : "devices ";
  for (std::size_t k = 0; k < devices.size(); ++k) s += (k ? "," : "") + std::to_string(devices[k]);
  return s;
}

Error on_device(int device, const Error& e) {
  if (device < 0) return e;
  // what() is "ew::Error [<code>]: <message>"; the new error gets its own prefix.
  std::string message = e.what();
  const std::string prefix = std::string("ew::Error [") + to_string(e.code()) + "]: ";
  if (message.compare(0, prefix.size(), prefix) == 0) message.erase(0, prefix.size());
  return Error(e.code(), "device " + std::to_string(device) + ": " + message);
}

std::shared_ptr<BackendImpl> create_backend(Backend backend, const ContextOptions& options) {
  const BackendDescriptor& d = descriptor(backend);
  // Host backends take EW_DEVICE as they always did (they ignore it): only cuda reads a
  // list there. ContextOptions::devices is checked for every backend.
  const std::vector<int> devices = backend == Backend::cuda || !options.devices.empty() ? requested_devices(options)
                                                                                        : std::vector<int>{};
  if (backend != Backend::cuda && options.devices.size() > 1)
    throw Error(Errc::invalid_argument, "ContextOptions::devices lists " + std::to_string(options.devices.size()) +
                                            " devices; only the cuda backend runs on several (this is " +
                                            to_string(backend) + ")");
  if (devices.size() <= 1) {
    ContextOptions single = options;
    if (!options.devices.empty()) single.device = options.devices[0];
    single.devices.clear();
    return d.create(single);
  }
  if (options.stream)
    throw Error(Errc::invalid_argument, "ContextOptions::stream belongs to one device; a context over " +
                                            device_list(devices) + " creates a stream on each");
  return std::make_shared<MultiDevice>(d, options, devices);
}

MultiDevice::MultiDevice(const BackendDescriptor& descriptor, const ContextOptions& options, std::vector<int> devices)
    : devices_(std::move(devices)) {
  for (int device : devices_) try {
      shards_.push_back(descriptor.create(one_device(options, device, devices_.size())));
    } catch (const Error& e) {
      throw on_device(device, e);
    }
}

MultiDevice::~MultiDevice() = default;

template <class F>
void MultiDevice::each(bool in_parallel, F&& f) {
  const std::size_t count = shards_.size();
  std::vector<std::exception_ptr> failed(count);
  auto one = [&](std::size_t k) {
    try {
      f(k, *shards_[k]);
    } catch (...) {
      failed[k] = std::current_exception();
    }
  };
  if (in_parallel) {
    std::vector<std::thread> threads;
    threads.reserve(count);  // no allocation between two threads' starts
    for (std::size_t k = 1; k < count; ++k) {
      try {
        threads.emplace_back(one, k);
      } catch (const std::system_error&) {  // no thread to be had: this shard on the caller
        one(k);
      }
    }
    one(0);
    for (std::thread& t : threads) t.join();
  } else {
    for (std::size_t k = 0; k < count; ++k) one(k);
  }
  // A shard that failed leaves the others' work queued on the caller's pinned or managed
  // memory: it is waited for, so that once the call has thrown nothing it started still
  // touches that memory (as on one device).
  if (std::any_of(failed.begin(), failed.end(), [](const std::exception_ptr& e) { return e != nullptr; }))
    for (auto& shard : shards_) shard->wait_idle();
  for (std::size_t k = 0; k < count; ++k) {
    if (!failed[k]) continue;
    try {
      std::rethrow_exception(failed[k]);
    } catch (const Error& e) {
      throw on_device(devices_[k], e);
    }
  }
}

void MultiDevice::run(const OpCall& c) {
  const std::size_t elem = size_of(c.dtype);
  const bool pageable = c.a_space == MemorySpace::host || (c.b && c.b_space == MemorySpace::host) ||
                        c.out_space == MemorySpace::host;
  each(pageable, [&](std::size_t k, BackendImpl& shard) {
    const ShardRange r = shard_range(c.n, shards_.size(), k, shard_group);
    if (r.size() == 0) return;
    OpCall part = c;
    part.n = r.size();
    part.a = advance(c.a, r.begin * elem);
    part.b = advance(c.b, r.begin * elem);
    part.out = advance(c.out, r.begin * elem);
    shard.run(part);
  });
}

void MultiDevice::run_convert(const ConvertCall& c) {
  const std::size_t in_elem = size_of(c.from), out_elem = size_of(c.to);
  const bool pageable = c.in_space == MemorySpace::host || c.out_space == MemorySpace::host;
  each(pageable, [&](std::size_t k, BackendImpl& shard) {
    const ShardRange r = shard_range(c.n, shards_.size(), k, shard_group);
    if (r.size() == 0) return;
    ConvertCall part = c;
    part.n = r.size();
    part.in = advance(c.in, r.begin * in_elem);
    part.out = advance(c.out, r.begin * out_elem);
    shard.run_convert(part);
  });
}

void MultiDevice::run_expr(const ExprCall& c) {
  const Program& p = *c.program;
  bool pageable = false;
  for (std::size_t k = 0; k < p.outputs.size(); ++k) pageable |= c.output_space[k] == MemorySpace::host;
  for (std::size_t k = 0; k < max_expr_inputs; ++k)
    if (c.inputs[k]) pageable |= c.input_space[k] == MemorySpace::host;
  each(pageable, [&](std::size_t k, BackendImpl& shard) {
    const ShardRange r = shard_range(c.n, shards_.size(), k, shard_group);
    if (r.size() == 0) return;
    ExprCall part = c;
    part.n = r.size();
    for (std::size_t i = 0; i < max_expr_inputs; ++i)
      if (c.inputs[i]) part.inputs[i] = advance(c.inputs[i], r.begin * size_of(p.input_dtype[i]));
    for (std::size_t o = 0; o < p.outputs.size(); ++o)
      part.outputs[o] = advance(c.outputs[o], r.begin * size_of(p.output_dtype(static_cast<int>(o))));
    shard.run_expr(part);
  });
}

ReduceResult MultiDevice::run_reduce(const ReduceCall& c) {
  throw Error(Errc::unsupported, std::string(c.call) + ": a context over " + device_list(devices_) +
                                     " does not reduce (the fixed summation tree spans the whole array); "
                                     "reduce on one device: a single-device context, or Context::shard(k) for "
                                     "shard k of an ew::ShardedBuffer");
}

void MultiDevice::synchronize() {
  each(false, [](std::size_t, BackendImpl& shard) { shard.synchronize(); });
}

void* MultiDevice::allocate(std::size_t bytes, MemorySpace space) {
  if (space == MemorySpace::device)
    throw Error(Errc::invalid_argument, "Buffer: device memory belongs to one device and this context runs on " +
                                            device_list(devices_) +
                                            ": use ew::ShardedBuffer (a shard on each device), a Buffer on "
                                            "Context::shard(k), or pinned or managed memory");
  // Pinned and managed memory are reachable from every device (unified addressing).
  return shards_[0]->allocate(bytes, space);
}

// Every device may still read a pinned or managed block (such operands are split over them):
// each waits for its queue before shard 0 takes the block back, as a one-device context
// waits for its own.
void MultiDevice::deallocate(void* p, MemorySpace space) noexcept {
  if (space == MemorySpace::pinned || space == MemorySpace::managed)
    for (std::size_t k = 1; k < shards_.size(); ++k) shards_[k]->wait_idle();
  shards_[0]->deallocate(p, space);
}

// A Buffer of this context is pinned or managed memory that every device's work may read or
// write: the copy waits for all of it, as a one-device context's copy follows its queue.
void MultiDevice::copy_bytes(void* dst, const void* src, std::size_t bytes) {
  std::size_t k = 0;
  try {
    for (k = 1; k < shards_.size(); ++k) shards_[k]->synchronize();
    k = 0;
    shards_[0]->copy_bytes(dst, src, bytes);
  } catch (const Error& e) {
    throw on_device(devices_[k], e);
  }
}

void* MultiDevice::native_stream() const {
  throw Error(Errc::invalid_argument, "Context::native_stream: this context has a stream on each of " +
                                          device_list(devices_) + "; take one from Context::shard(k)");
}

}  // namespace ew::detail
