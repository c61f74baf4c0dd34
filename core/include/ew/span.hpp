#pragma once
#include <cstddef>
#include <type_traits>
#include <vector>

#include "ew/types.hpp"

namespace ew {

// A non-owning view of caller memory, tagged with where it lives. `unknown` lets the
// library classify the pointer itself (through CUDA where it is compiled in).
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
  template <class V, class = decltype(std::declval<V&>().data())>
  Span(V& container) : data(container.data()), size(container.size()) {}

  constexpr bool empty() const { return size == 0; }
  constexpr std::size_t bytes() const { return size * sizeof(T); }
  constexpr Span subspan(std::size_t offset, std::size_t count) const {
    return Span(data + offset, count, space);
  }
};

}  // namespace ew
