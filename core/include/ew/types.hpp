#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ew {

enum class DType { f32, f64 };

template <class T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::f32; };
template <> struct dtype_of<double> { static constexpr DType value = DType::f64; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

constexpr std::size_t size_of(DType d) noexcept { return d == DType::f32 ? 4 : 8; }
constexpr const char* to_string(DType d) noexcept { return d == DType::f32 ? "f32" : "f64"; }
inline constexpr DType all_dtypes[] = {DType::f32, DType::f64};

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
