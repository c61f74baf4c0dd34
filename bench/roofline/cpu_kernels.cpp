// One instance of the CPU ceiling kernels, compiled per x86-64 level with that
// level's -march (see CMakeLists.txt): EW_LEVEL names the instance. GCC vector types
// keep the independent chains in registers; -ffp-contract=fast (this file only) turns
// v*a + b into one FMA instruction where the level has one.
#include <cstring>

#include "cpu_kernels.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#ifndef EW_LEVEL
#error "EW_LEVEL must name the instance (base, v3, v4)"
#endif
#define EW_CAT2(a, b) a##b
#define EW_CAT(a, b) EW_CAT2(a, b)

namespace ew::roofline::cpu {
namespace EW_CAT(level_, EW_LEVEL) {
namespace {

#if defined(__AVX512F__)
constexpr std::size_t vbytes = 64;
#elif defined(__AVX__)
constexpr std::size_t vbytes = 32;
#else
constexpr std::size_t vbytes = 16;
#endif
typedef float vf __attribute__((vector_size(vbytes)));
typedef double vd __attribute__((vector_size(vbytes)));
constexpr std::size_t fl = vbytes / sizeof(float);
// Enough independent chains to cover FMA latency x FMA ports on current cores
// (4 x 2), with room to spare, and still fit in 16 vector registers.
constexpr int chains = 12;

template <class V, class T>
V load(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V, class T>
void store(T* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

// A non-temporal store of one vector (p aligned to the vector width).
void stream(float* p, vf v) {
#if defined(__AVX512F__)
  _mm512_stream_ps(p, reinterpret_cast<__m512&>(v));
#elif defined(__AVX__)
  _mm256_stream_ps(p, reinterpret_cast<__m256&>(v));
#elif defined(__SSE__)
  _mm_stream_ps(p, reinterpret_cast<__m128&>(v));
#else
  store(p, v);
#endif
}
void fence() {
#if defined(__SSE__)
  _mm_sfence();
#endif
}

// Eight accumulators: enough adds in flight to keep two loads a cycle going from L1/L2.
double read_sum(const float* a, std::size_t n) {
  vf acc[8] = {};
  for (std::size_t i = 0; i < n; i += 8 * fl)
    for (int j = 0; j < 8; ++j) acc[j] += load<vf>(a + i + j * fl);
  vf total = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  double s = 0;
  for (std::size_t l = 0; l < fl; ++l) s += total[l];
  return s;
}

void copy(const float* a, float* c, std::size_t n) {
  for (std::size_t i = 0; i < n; i += fl) store(c + i, load<vf>(a + i));
}

void copy_stream(const float* a, float* c, std::size_t n) {
  for (std::size_t i = 0; i < n; i += fl) stream(c + i, load<vf>(a + i));
  fence();
}

void triad(const float* a, const float* b, float* c, std::size_t n) {
  const vf s = vf{} + 0.5f;
  for (std::size_t i = 0; i < n; i += fl) store(c + i, load<vf>(a + i) + s * load<vf>(b + i));
}

void triad_stream(const float* a, const float* b, float* c, std::size_t n) {
  const vf s = vf{} + 0.5f;
  for (std::size_t i = 0; i < n; i += fl) stream(c + i, load<vf>(a + i) + s * load<vf>(b + i));
  fence();
}

// Reads and writes one array: no read-for-ownership, the traffic of in-place ops
// (axpy, axpby), which plain-store kernels above cannot show. x -> 0.75x + 0.25 stays
// normal however often it runs.
void update(float* a, std::size_t n) {
  const vf s = vf{} + 0.75f, t = vf{} + 0.25f;
  for (std::size_t i = 0; i < n; i += fl) store(a + i, load<vf>(a + i) * s + t);
}

void fill_stream(float* c, std::size_t n) {
  const vf v = vf{} + 1.0f;
  for (std::size_t i = 0; i < n; i += fl) stream(c + i, v);
  fence();
}

// v = v*a + b converges to b / (1 - a): no overflow, no subnormals, whatever the count.
template <class V, class T>
double fma_peak(std::size_t iterations) {
  V v[chains];
  for (int c = 0; c < chains; ++c) v[c] = V{} + T(1) + T(c) * T(1e-3);
  const V a = V{} + T(0.999), b = V{} + T(1e-3);
  for (std::size_t it = 0; it < iterations; ++it)
    for (int c = 0; c < chains; ++c) v[c] = v[c] * a + b;
  double s = 0;
  for (int c = 0; c < chains; ++c)
    for (std::size_t l = 0; l < vbytes / sizeof(T); ++l) s += v[c][l];
  return s;
}

// k dependent FMAs per element, `chains` vectors of elements in flight at once.
template <class V, class T>
void intensity(const T* x, T* y, std::size_t n, int k) {
  constexpr std::size_t lanes = vbytes / sizeof(T), block = chains * lanes;
  const V a = V{} + T(0.999), b = V{} + T(1e-3);
  std::size_t i = 0;
  for (; i + block <= n; i += block) {
    V v[chains];
    for (int c = 0; c < chains; ++c) v[c] = load<V>(x + i + c * lanes);
    for (int j = 0; j < k; ++j)
      for (int c = 0; c < chains; ++c) v[c] = v[c] * a + b;
    for (int c = 0; c < chains; ++c) store(y + i + c * lanes, v[c]);
  }
  for (; i < n; ++i) {
    T v = x[i];
    for (int j = 0; j < k; ++j) v = v * T(0.999) + T(1e-3);
    y[i] = v;
  }
}

void intensity_f32(const float* x, float* y, std::size_t n, int k) { intensity<vf>(x, y, n, k); }
void intensity_f64(const double* x, double* y, std::size_t n, int k) { intensity<vd>(x, y, n, k); }

}  // namespace

const Kernels& kernels() {
  static const Kernels k{EW_LEVEL_NAME,
                         vbytes,
                         &read_sum,
                         &copy,
                         &copy_stream,
                         &triad,
                         &triad_stream,
                         &fill_stream,
                         &update,
                         &fma_peak<vf, float>,
                         &fma_peak<vd, double>,
                         2 * chains * fl,
                         2 * chains * (vbytes / sizeof(double)),
                         &intensity_f32,
                         &intensity_f64};
  return k;
}

}  // namespace EW_CAT(level_, EW_LEVEL)
}  // namespace ew::roofline::cpu
