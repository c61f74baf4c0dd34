#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "ew/buffer.hpp"
#include "ew/context.hpp"
#include "ew/error.hpp"
#include "ew_internal/check.hpp"
#include "ew_internal/multi_device.hpp"
#include "ew_internal/registry.hpp"

namespace ew {

namespace detail {

// Host memory on 64-byte boundaries: whole cache lines, and aligned for any SIMD width.
// Pinned and managed memory come from a GPU runtime: a host backend reads them where a GPU
// backend made them, but cannot make them (a valid request it cannot do: unsupported).
void* BackendImpl::allocate(std::size_t bytes, MemorySpace space) {
  if (space != MemorySpace::host)
    throw Error(Errc::unsupported, std::string("Buffer: this backend cannot allocate ") + to_string(space) +
                                       " memory, which comes from a GPU runtime; make the Buffer with a cuda "
                                       "context (this backend reads it) or in host memory");
  if (bytes == 0) return nullptr;
  std::size_t rounded = (bytes + 63) / 64 * 64;
  if (rounded < bytes) throw Error(Errc::out_of_memory, "allocation of " + std::to_string(bytes) + " bytes");
  void* p = std::aligned_alloc(64, rounded);
  if (!p) throw Error(Errc::out_of_memory, "host allocation of " + std::to_string(bytes) + " bytes failed");
  return p;
}

void BackendImpl::deallocate(void* p, MemorySpace) noexcept { std::free(p); }

void BackendImpl::copy_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void BackendImpl::zero_bytes(void* dst, std::size_t bytes) {
  constexpr unsigned char zeros[16] = {};
  for (std::size_t done = 0; done < bytes; done += sizeof zeros)
    copy_bytes(static_cast<unsigned char*>(dst) + done, zeros, bytes - done < sizeof zeros ? bytes - done : sizeof zeros);
}

// A buffer too large for the address space is one no allocator can give: out of memory,
// like any other allocation that cannot be satisfied, with the same bound as an operand.
void* allocate(Context& ctx, std::size_t n, std::size_t element_size, MemorySpace& where) {
  BackendImpl& backend = checked_backend(ctx, "Buffer");
  std::size_t bytes = 0;
  try {
    bytes = checked_bytes("Buffer", "size", n, element_size);
  } catch (const Error&) {
    throw Error(Errc::out_of_memory, "a buffer of " + std::to_string(n) + " elements of " +
                                         std::to_string(element_size) + " bytes exceeds the address space");
  }
  if (!names_a_space(where))
    throw Error(Errc::invalid_argument, "Buffer: MemorySpace " + std::to_string(static_cast<int>(where)) +
                                            " names no memory space");
  if (where == MemorySpace::unknown) where = backend.native_space();
  if (!backend.accepts(where))
    throw Error(Errc::foreign_memory, std::string("the ") + ctx.backend_name() + " backend cannot use " +
                                          to_string(where) + " memory");
  return backend.allocate(bytes, where);
}

void deallocate(BackendImpl& backend, void* p, MemorySpace where) noexcept { backend.deallocate(p, where); }

void copy_bytes(BackendImpl& backend, void* dst, const void* src, std::size_t bytes) {
  if (bytes && (!dst || !src))
    throw Error(Errc::null_pointer, "copy of " + std::to_string(bytes) + " bytes with a null pointer");
  backend.copy_bytes(dst, src, bytes);
}

void check_transfer_size(std::size_t buffer_size, std::size_t n, const char* what) {
  if (buffer_size != n)
    throw Error(Errc::size_mismatch, std::string(what) + ": buffer holds " + std::to_string(buffer_size) +
                                         " elements, host array " + std::to_string(n));
}

namespace {

// EW_DEVICE: one index, or a comma-separated list of distinct ones ("0,1").
std::vector<int> parse_device_list(const char* env) {
  const auto malformed = [&] {
    return Error(Errc::invalid_argument, "EW_DEVICE='" + std::string(env) +
                                             "' is not a device index (accepted: a GPU index 0.." +
                                             std::to_string(INT_MAX) +
                                             " in decimal digits, a comma-separated list of distinct indices such as "
                                             "0,1, or unset)");
  };
  std::vector<int> devices;
  const char* c = env;
  for (;;) {
    long long d = 0;
    const char* start = c;
    for (; *c >= '0' && *c <= '9'; ++c)
      if ((d = d * 10 + (*c - '0')) > INT_MAX) throw malformed();
    if (c == start || (*c && *c != ',')) throw malformed();
    if (std::find(devices.begin(), devices.end(), static_cast<int>(d)) != devices.end())
      throw Error(Errc::invalid_argument, "EW_DEVICE='" + std::string(env) + "' lists device " + std::to_string(d) +
                                              " twice");
    devices.push_back(static_cast<int>(d));
    if (!*c) return devices;
    ++c;  // past the comma: another index must follow
  }
}

}  // namespace

std::vector<int> requested_devices(const ContextOptions& options) {
  if (!options.devices.empty()) {
    if (options.device >= 0)
      throw Error(Errc::invalid_argument, "ContextOptions::device and ContextOptions::devices are both set; set one");
    for (std::size_t k = 0; k < options.devices.size(); ++k) {
      const int d = options.devices[k];
      if (d < 0)
        throw Error(Errc::invalid_argument, "ContextOptions::devices[" + std::to_string(k) + "] = " + std::to_string(d) +
                                                " is not a device index");
      if (std::find(options.devices.begin(), options.devices.begin() + static_cast<std::ptrdiff_t>(k), d) !=
          options.devices.begin() + static_cast<std::ptrdiff_t>(k))
        throw Error(Errc::invalid_argument, "ContextOptions::devices lists device " + std::to_string(d) + " twice");
    }
    return options.devices;
  }
  if (options.device >= 0) return {options.device};
  const char* env = std::getenv("EW_DEVICE");
  if (!env || !*env) return {};
  return parse_device_list(env);
}

int requested_device(const ContextOptions& options) {
  if (options.device >= 0 && options.devices.empty()) return options.device;
  const std::vector<int> devices = requested_devices(options);
  if (devices.size() > 1)
    throw Error(Errc::invalid_argument, (options.devices.empty() ? "EW_DEVICE" : "ContextOptions::devices") +
                                            std::string(" lists ") + std::to_string(devices.size()) +
                                            " devices; this backend runs on one");
  return devices.empty() ? -1 : devices[0];
}

void reject_device_options(const ContextOptions& options, const char* backend) {
  if (options.stream)
    throw Error(Errc::invalid_argument, std::string("ContextOptions::stream is for GPU backends; the ") + backend +
                                            " backend runs on host threads");
  if (options.device > 0)
    throw Error(Errc::invalid_argument, "ContextOptions::device = " + std::to_string(options.device) + ": the " +
                                            backend + " backend runs on the host");
}

}  // namespace detail

Context::Context(Backend backend, const ContextOptions& options)
    : backend_(resolve_backend(backend)), options_(options) {
  if (options.threads < 0) throw Error(Errc::invalid_argument, "ContextOptions::threads must be >= 0");
  impl_ = detail::create_backend(backend_, options_);
}

Context::Context(Backend backend, const ContextOptions& options, std::shared_ptr<detail::BackendImpl> impl)
    : backend_(backend), options_(options), impl_(std::move(impl)) {}

Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

int Context::device() const { return detail::checked_backend(*this, "Context::device").device(); }
void* Context::native_stream() const {
  return detail::checked_backend(*this, "Context::native_stream").native_stream();
}
void Context::synchronize() { detail::checked_backend(*this, "Context::synchronize").synchronize(); }

std::vector<int> Context::devices() const {
  detail::BackendImpl& b = detail::checked_backend(*this, "Context::devices");
  std::vector<int> devices;
  for (int k = 0; k < b.shard_count(); ++k)
    if (b.shard(k).device() >= 0) devices.push_back(b.shard(k).device());
  return devices;
}

int Context::shard_count() const { return detail::checked_backend(*this, "Context::shard_count").shard_count(); }

Context Context::shard(int k) const {
  detail::BackendImpl& b = detail::checked_backend(*this, "Context::shard");
  if (k < 0 || k >= b.shard_count())
    throw Error(Errc::invalid_argument, "Context::shard(" + std::to_string(k) + "): this context has " +
                                            std::to_string(b.shard_count()) + " shard(s)");
  if (b.shard_count() == 1) return Context(backend_, options_, impl_);
  ContextOptions one = options_;
  one.devices.clear();
  one.device = b.shard(k).device();
  // Shares ownership of the whole backend: the shard lives as long as any context uses it.
  return Context(backend_, one, std::shared_ptr<detail::BackendImpl>(impl_, &b.shard(k)));
}

}  // namespace ew
