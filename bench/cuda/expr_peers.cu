// cub::DeviceTransform with each expression of ew-roofline's set as an ahead-of-time functor.
#include <cuda_runtime.h>

#include <cub/device/device_transform.cuh>
#include <stdexcept>
#include <string>

#include "cuda/expr_functors.cuh"
#include "cuda/expr_peers.hpp"

namespace ew::bench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}

template <class T>
bool run(const std::string& name, std::size_t n, const void* const* inputs, void* out, const double* params,
         cudaStream_t stream) {
  namespace f = functors;
  const auto in = [&](int k) { return static_cast<const T*>(inputs[k]); };
  const auto p = [&](int k) { return static_cast<T>(params[k]); };
  T* y = static_cast<T*>(out);
  cudaError_t e;
  using ::cuda::std::make_tuple;
  using cub::DeviceTransform;
  if (name == "relu") e = DeviceTransform::Transform(in(0), y, n, f::Relu<T>{}, stream);
  else if (name == "silu") e = DeviceTransform::Transform(in(0), y, n, f::Silu<T>{}, stream);
  else if (name == "dot4")
    e = DeviceTransform::Transform(make_tuple(in(0), in(1), in(2), in(3)), y, n, f::Dot4<T>{}, stream);
  else if (name == "clamp")
    e = DeviceTransform::Transform(make_tuple(in(0), in(1)), y, n, f::Clamp<T>{p(0), p(1), p(2)}, stream);
  else if (name == "chain3")
    e = DeviceTransform::Transform(make_tuple(in(0), in(1), in(2)), y, n, f::Chain3<T>{p(0)}, stream);
  else return false;
  check(e, ("cub::DeviceTransform " + name).c_str());
  return true;
}

}  // namespace

bool run_cuda_expr_peer(const std::string& name, DType dtype, std::size_t n, const void* const* inputs, void* out,
                        const double* params, void* stream) {
  const auto s = static_cast<cudaStream_t>(stream);
  if (dtype == DType::f32) return run<float>(name, n, inputs, out, params, s);
  if (dtype == DType::f64) return run<double>(name, n, inputs, out, params, s);
  return false;
}

}  // namespace ew::bench
