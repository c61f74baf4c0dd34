#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ew/float16.hpp"

namespace ew {

// f16 and bf16 are storage types (ew/float16.hpp): arithmetic on them runs in f32.
enum class DType { f32, f64, f16, bf16 };

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <> struct dtype_of<half> { static constexpr DType value = DType::f16; };
template <> struct dtype_of<bfloat16> { static constexpr DType value = DType::bf16; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

constexpr std::size_t size_of(DType d) noexcept {
  switch (d) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::f16:
    case DType::bf16: return 2;
  }
  return 0;
}
constexpr const char* to_string(DType d) noexcept {
  switch (d) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
  }
  return "unknown dtype";
}
constexpr bool is_storage16(DType d) noexcept { return d == DType::f16 || d == DType::bf16; }
// The arithmetic dtypes: code that branches f32/f64 iterates these.
inline constexpr DType all_dtypes[] = {DType::f32, DType::f64};
// The 16-bit storage dtypes: the seven ops, ew::convert, expressions and reductions take them
// on every backend (arithmetic in f32).
inline constexpr DType storage16_dtypes[] = {DType::f16, DType::bf16};

// Where memory lives. `unknown` asks the library to find out (CUDA can tell host,
// pinned, device and managed pointers apart; without CUDA everything is host).
enum class MemorySpace { unknown, host, pinned, device, managed };
constexpr const char* to_string(MemorySpace m) noexcept {
  switch (m) {
    case MemorySpace::host: return "host";
    case MemorySpace::pinned: return "pinned";
    case MemorySpace::device: return "device";
    case MemorySpace::managed: return "managed";
    default: return "unknown";
  }
}

// The automatic choice ranks usable backends in the registry (cuda, highway, kokkos, scalar).
enum class Backend { automatic, scalar, highway, kokkos, cuda };
inline constexpr Backend all_backends[] = {Backend::scalar, Backend::highway, Backend::kokkos,
                                           Backend::cuda};
const char* to_string(Backend b) noexcept;
// Parses "auto", "scalar", "highway", "kokkos", "cuda" (case-insensitive);
// throws Error(unknown_backend) naming the accepted values otherwise.
Backend parse_backend(std::string_view name);

}  // namespace ew
