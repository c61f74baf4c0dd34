#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ew/context.hpp"
#include "ew/span.hpp"

namespace ew {

namespace detail {
void* allocate(Context& ctx, std::size_t n, std::size_t element_size, MemorySpace& where);
void deallocate(BackendImpl& backend, void* p, MemorySpace where) noexcept;
void copy_bytes(BackendImpl& backend, void* dst, const void* src, std::size_t bytes);
void check_transfer_size(std::size_t buffer_size, std::size_t n, const char* what);
}  // namespace detail

// An owning array in a backend's memory space. `unknown` takes the backend's own
// space (device memory for cuda, host for CPU backends). Allocation failure throws
// Error(out_of_memory); a MemorySpace value outside the enum, Error(invalid_argument); a
// space the backend cannot use, Error(foreign_memory) (device memory on a CPU backend);
// pinned or managed memory on a backend without a GPU runtime, which can read them but not
// make them, Error(unsupported). The buffer shares the backend
// with its context, so it may outlive the Context object (declaration order does not matter).
template <class T>
class Buffer {
 public:
  using value_type = T;

  Buffer(Context& ctx, std::size_t n, MemorySpace where = MemorySpace::unknown)
      : backend_(ctx.shared_impl()), size_(n), space_(where) {
    data_ = static_cast<T*>(detail::allocate(ctx, n, sizeof(T), space_));
    if (space_ == MemorySpace::device) device_ = ctx.device();
  }
  ~Buffer() { reset(); }
  Buffer(Buffer&& o) noexcept
      : backend_(std::move(o.backend_)), data_(o.data_), size_(o.size_), space_(o.space_), device_(o.device_) {
    o.data_ = nullptr;
    o.size_ = 0;
    o.device_ = -1;
  }
  Buffer& operator=(Buffer&& o) noexcept {
    if (this != &o) {
      reset();
      backend_ = std::move(o.backend_), data_ = o.data_, size_ = o.size_, space_ = o.space_, device_ = o.device_;
      o.data_ = nullptr, o.size_ = 0, o.device_ = -1;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  MemorySpace space() const noexcept { return space_; }
  int device() const noexcept { return device_; }  // the GPU of device memory, else -1
  Span<T> span() const noexcept { return Span<T>(data_, size_, space_, device_); }

  // Blocking copies between this buffer and host memory of the same length. n * sizeof(T)
  // cannot overflow: n equals the size the buffer was allocated with. An empty (or
  // moved-from, backend-less) buffer copies nothing.
  void upload(const T* host, std::size_t n) {
    detail::check_transfer_size(size_, n, "Buffer::upload");
    if (n) detail::copy_bytes(*backend_, data_, host, n * sizeof(T));
  }
  void download(T* host, std::size_t n) const {
    detail::check_transfer_size(size_, n, "Buffer::download");
    if (n) detail::copy_bytes(*backend_, host, data_, n * sizeof(T));
  }

 private:
  void reset() noexcept {
    if (data_) detail::deallocate(*backend_, data_, space_);
    data_ = nullptr;
  }
  std::shared_ptr<detail::BackendImpl> backend_;
  T* data_ = nullptr;
  std::size_t size_;
  MemorySpace space_;
  int device_ = -1;
};

}  // namespace ew
