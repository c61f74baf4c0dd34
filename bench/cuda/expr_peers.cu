// cub::DeviceTransform with each expression of ew-roofline's set as an ahead-of-time functor.
#include <cuda_runtime.h>

#include <cub/device/device_transform.cuh>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cuda/expr_functors.cuh"
#include "cuda/expr_peers.hpp"
#include "event_timer.hpp"

namespace ew::bench {

namespace {

// T: the arrays' element type; S: the formula's (float for the 16-bit types, whose
// functors run through Stored16).
template <class T, class S>
bool run(const std::string& name, std::size_t n, const void* const* inputs, void* out, const double* params,
         cudaStream_t stream) {
  namespace f = functors;
  const auto in = [&](int k) { return static_cast<const T*>(inputs[k]); };
  // A param of a 16-bit expression is rounded to its dtype at the call (ew::half and
  // ew::bfloat16 round from double once, as the library does), then used as a float.
  const auto p = [&](int k) { return static_cast<S>(static_cast<T>(params[k])); };
  const auto on_arrays = [](auto formula) {
    if constexpr (std::is_same_v<T, S>) return formula;
    else return f::Stored16<T, decltype(formula)>{formula};
  };
  T* y = static_cast<T*>(out);
  cudaError_t e;
  using ::cuda::std::make_tuple;
  using cub::DeviceTransform;
  if (name == "relu") e = DeviceTransform::Transform(in(0), y, n, on_arrays(f::Relu<S>{}), stream);
  else if (name == "silu") e = DeviceTransform::Transform(in(0), y, n, on_arrays(f::Silu<S>{}), stream);
  else if (name == "dot4")
    e = DeviceTransform::Transform(make_tuple(in(0), in(1), in(2), in(3)), y, n, on_arrays(f::Dot4<S>{}), stream);
  else if (name == "clamp")
    e = DeviceTransform::Transform(make_tuple(in(0), in(1)), y, n, on_arrays(f::Clamp<S>{p(0), p(1), p(2)}), stream);
  else if (name == "chain3")
    e = DeviceTransform::Transform(make_tuple(in(0), in(1), in(2)), y, n, on_arrays(f::Chain3<S>{p(0)}), stream);
  else return false;
  check(e, ("cub::DeviceTransform " + name).c_str());
  return true;
}

}  // namespace

bool run_cuda_expr_peer(const std::string& name, DType dtype, std::size_t n, const void* const* inputs, void* out,
                        const double* params, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case DType::f32: return run<float, float>(name, n, inputs, out, params, s);
    case DType::f64: return run<double, double>(name, n, inputs, out, params, s);
    case DType::f16: return run<__half, float>(name, n, inputs, out, params, s);
    case DType::bf16: return run<__nv_bfloat16, float>(name, n, inputs, out, params, s);
  }
  return false;
}

}  // namespace ew::bench
