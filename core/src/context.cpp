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
#include "ew_internal/registry.hpp"

namespace ew {

namespace detail {

// Host memory on 64-byte boundaries: whole cache lines, and aligned for any SIMD width.
void* BackendImpl::allocate(std::size_t bytes, MemorySpace space) {
  if (space != MemorySpace::host)
    throw Error(Errc::invalid_argument,
                std::string("this backend cannot allocate ") + to_string(space) + " memory");
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

int requested_device(const ContextOptions& options) {
  if (options.device >= 0) return options.device;
  const char* env = std::getenv("EW_DEVICE");
  if (!env || !*env) return -1;
  long long d = 0;
  for (const char* c = env; *c; ++c) {
    if (*c < '0' || *c > '9' || (d = d * 10 + (*c - '0')) > INT_MAX)
      throw Error(Errc::invalid_argument, "EW_DEVICE='" + std::string(env) +
                                              "' is not a device index (accepted: a GPU index 0.." +
                                              std::to_string(INT_MAX) + " in decimal digits, or unset)");
  }
  return static_cast<int>(d);
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
  impl_ = detail::descriptor(backend_).create(options_);
}

Context::~Context() = default;
Context::Context(Context&&) noexcept = default;
Context& Context::operator=(Context&&) noexcept = default;

int Context::device() const { return detail::checked_backend(*this, "Context::device").device(); }
void* Context::native_stream() const {
  return detail::checked_backend(*this, "Context::native_stream").native_stream();
}
void Context::synchronize() { detail::checked_backend(*this, "Context::synchronize").synchronize(); }

}  // namespace ew
