#pragma once
#include <cstddef>
#include <type_traits>
#include <vector>

#include "ew/types.hpp"

namespace ew {

// A non-owning view of caller memory, tagged with where it lives. `unknown` lets the
// library classify the pointer itself (through CUDA where it is compiled in: one driver
// query an operand, which also tells another GPU's device memory, refused). A tag is taken at
// its word, without a query. Device memory that says its GPU (`device` >= 0, as an
// ew::Buffer's span does) must be the context's GPU's; tagged `device` without a GPU, it is
// not checked, which is how memory of another GPU that the context's GPU can reach (peer
// access enabled) is passed. A view into a Buffer keeps its GPU through subspan():
// `buf.span().subspan(offset, n)`.
template <class T>
struct Span {
  T* data = nullptr;
  std::size_t size = 0;
  MemorySpace space = MemorySpace::unknown;
  int device = -1;  // for device memory, the GPU it belongs to; -1: not said

  constexpr Span() = default;
  constexpr Span(T* p, std::size_t n, MemorySpace where = MemorySpace::unknown, int gpu = -1)
      : data(p), size(n), space(where), device(gpu) {}
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T>>>
  constexpr Span(const Span<U>& other) : data(other.data), size(other.size), space(other.space), device(other.device) {}
  // Any contiguous container; one that knows its memory space and GPU (ew::Buffer) passes
  // them on, so the library need not classify the pointer again.
  template <class V, class = decltype(std::declval<V&>().data()), class = decltype(std::declval<V&>().size())>
  Span(V& container)
      : data(container.data()), size(container.size()), space(space_of(container)), device(device_of(container)) {}

  constexpr T& operator[](std::size_t i) const { return data[i]; }
  constexpr T* begin() const { return data; }
  constexpr T* end() const { return data + size; }
  constexpr bool empty() const { return size == 0; }
  constexpr std::size_t bytes() const { return size * sizeof(T); }
  // No bounds check, like std::span: offset + count <= size is the caller's to keep.
  constexpr Span subspan(std::size_t offset, std::size_t count) const {
    return Span(data + offset, count, space, device);
  }

 private:
  template <class V>
  static constexpr MemorySpace space_of(const V& container) {
    if constexpr (has_space<V>::value)
      return container.space();
    else
      return MemorySpace::unknown;
  }
  // A container's GPU where it says its memory space too and its device() is an int (an
  // ew::Buffer's); else none.
  template <class V>
  static constexpr int device_of(const V& container) {
    if constexpr (has_space<V>::value && has_device<V>::value)
      return container.device();
    else
      return -1;
  }
  template <class V, class = void>
  struct has_space : std::false_type {};
  template <class V>
  struct has_space<V, std::void_t<decltype(std::declval<const V&>().space())>> : std::true_type {};
  template <class V, class = void>
  struct has_device : std::false_type {};
  template <class V>
  struct has_device<V, std::void_t<decltype(std::declval<const V&>().device())>>
      : std::is_same<decltype(std::declval<const V&>().device()), int> {};
};

}  // namespace ew
