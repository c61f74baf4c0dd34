#pragma once
#include <cstddef>
#include <type_traits>
#include <vector>

#include "ew/types.hpp"

namespace ew {

// A non-owning view of caller memory, tagged with where it lives. `unknown` lets the
// library classify the pointer itself (through CUDA where it is compiled in: one driver
// query a call, which also refuses another GPU's device memory). A tag is taken at its word:
// `device` must be memory of the context's GPU.
template <class T>
struct Span {
  T* data = nullptr;
  std::size_t size = 0;
  MemorySpace space = MemorySpace::unknown;

  constexpr Span() = default;
  constexpr Span(T* p, std::size_t n, MemorySpace where = MemorySpace::unknown)
      : data(p), size(n), space(where) {}
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T>>>
  constexpr Span(const Span<U>& other) : data(other.data), size(other.size), space(other.space) {}
  // Any contiguous container; one that knows its memory space (ew::Buffer) passes it on,
  // so the library need not classify the pointer again.
  template <class V, class = decltype(std::declval<V&>().data()), class = decltype(std::declval<V&>().size())>
  Span(V& container) : data(container.data()), size(container.size()), space(space_of(container)) {}

  constexpr T& operator[](std::size_t i) const { return data[i]; }
  constexpr T* begin() const { return data; }
  constexpr T* end() const { return data + size; }
  constexpr bool empty() const { return size == 0; }
  constexpr std::size_t bytes() const { return size * sizeof(T); }
  // No bounds check, like std::span: offset + count <= size is the caller's to keep.
  constexpr Span subspan(std::size_t offset, std::size_t count) const {
    return Span(data + offset, count, space);
  }

 private:
  template <class V>
  static constexpr MemorySpace space_of(const V& container) {
    if constexpr (has_space<V>::value)
      return container.space();
    else
      return MemorySpace::unknown;
  }
  template <class V, class = void>
  struct has_space : std::false_type {};
  template <class V>
  struct has_space<V, std::void_t<decltype(std::declval<const V&>().space())>> : std::true_type {};
};

}  // namespace ew
