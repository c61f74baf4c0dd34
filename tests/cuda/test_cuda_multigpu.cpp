// A cuda context over several GPUs (labels gpu;multigpu): ew::ShardedBuffer ops and
// kernels on every device at once, host-resident and managed operands split across the
// devices' pipelines, device pointers refused with the reason, errors naming the device,
// reductions refused; f16 and bf16 ops and conversions. Every result is compared bit for bit with the scalar reference.
// Skipped, with the reason, where fewer than 2 GPUs are usable.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"

namespace ew::test {
namespace {

int visible_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  cudaGetLastError();
  return count;
}

class MultiGpu : public testing::Test {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::cuda);
    if (visible_devices() < 2)
      GTEST_SKIP() << "needs 2 usable CUDA devices, this machine has " << visible_devices();
  }
  static ContextOptions two(std::size_t staging = 0) {
    ContextOptions o;
    o.devices = {0, 1};
    o.staging_bytes = staging;
    return o;
  }
};

int device_of(const void* p) {
  cudaPointerAttributes attr{};
  EXPECT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  return attr.device;
}

TEST_F(MultiGpu, ContextHasAStreamOnEachDevice) {
  Context ctx(Backend::cuda, two());
  EXPECT_EQ(ctx.devices(), (std::vector<int>{0, 1}));
  EXPECT_EQ(ctx.shard_count(), 2);
  EXPECT_EQ(ctx.device(), 0);
  expect_error(Errc::invalid_argument, [&] { ctx.native_stream(); }, "a stream on each of devices 0,1");
  for (int k = 0; k < 2; ++k) {
    Context shard = ctx.shard(k);
    EXPECT_EQ(shard.device(), k);
    int device = -1;
    ASSERT_EQ(cudaStreamGetDevice(static_cast<cudaStream_t>(shard.native_stream()), &device), cudaSuccess);
    EXPECT_EQ(device, k);
  }
  EXPECT_NE(ctx.shard(0).native_stream(), ctx.shard(1).native_stream());
}

TEST_F(MultiGpu, EwDeviceListMakesAMultiDeviceContextInItsOrder) {
  const char* old = std::getenv("EW_DEVICE");
  const std::string saved = old ? old : "";
  setenv("EW_DEVICE", "1,0", 1);
  Context ctx(Backend::cuda);
  old ? setenv("EW_DEVICE", saved.c_str(), 1) : unsetenv("EW_DEVICE");
  EXPECT_EQ(ctx.devices(), (std::vector<int>{1, 0}));
  ShardedBuffer<float> x(ctx, 1000);
  EXPECT_EQ(device_of(x.shard(0).data), 1);
  EXPECT_EQ(device_of(x.shard(1).data), 0);
  EXPECT_EQ(x.shard(0).device, 1);  // a shard's span says its GPU
  EXPECT_EQ(x.shard(1).device, 0);
}

template <class T>
void sharded_ops_match_reference(Context& ctx, std::size_t n) {
  const std::vector<T> a = random_vector<T>(n), b = random_vector<T>(n), y = random_vector<T>(n);
  ShardedBuffer<T> sa(ctx, n), sb(ctx, n), sc(ctx, n);
  const std::vector<int> devices = ctx.devices();
  for (int k = 0; k < sa.shard_count(); ++k)
    if (sa.shard(k).size) {
      EXPECT_EQ(device_of(sa.shard(k).data), devices[static_cast<std::size_t>(k)]);
    }
  sa.upload(a.data(), n);
  sb.upload(b.data(), n);
  const compute_t<T> s = compute_t<T>(1.25), t = compute_t<T>(-0.5);
  for (int o = 0; o < op_count; ++o) {
    const Op op = static_cast<Op>(o);
    const bool in_place = info(op).in_place;
    std::vector<T> expected = in_place ? y : std::vector<T>(n, T(std::nan("")));
    reference<T>(op, n, a.data(), info(op).input_streams == 2 ? b.data() : (in_place ? expected.data() : nullptr),
                 expected.data(), s, t);
    sc.upload(in_place ? y.data() : std::vector<T>(n, T(std::nan(""))).data(), n);
    switch (op) {
      case Op::copy: ew::copy<T>(ctx, sa, sc); break;
      case Op::scale: ew::scale<T>(ctx, s, sa, sc); break;
      case Op::add: ew::add<T>(ctx, sa, sb, sc); break;
      case Op::mul: ew::mul<T>(ctx, sa, sb, sc); break;
      case Op::triad: ew::triad<T>(ctx, sa, s, sb, sc); break;
      case Op::axpy: ew::axpy<T>(ctx, s, sa, sc); break;
      case Op::axpby: ew::axpby<T>(ctx, s, sa, t, sc); break;
    }
    ctx.synchronize();
    std::vector<T> got(n);
    sc.download(got.data(), n);
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * sizeof(T)), 0) << to_string(op) << ", n " << n;
  }
}

TEST_F(MultiGpu, ShardedOpsOnBothDevicesMatchTheReference) {
  Context ctx(Backend::cuda, two());
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(5), std::size_t(17), std::size_t(1000003),
                        (std::size_t(1) << 22) + 3}) {
    sharded_ops_match_reference<float>(ctx, n);
    sharded_ops_match_reference<double>(ctx, n);
  }
}

// f16 and bf16: the ops on sharded arrays, ew::convert between sharded arrays (shards of
// different element sizes cover the same elements), and ew::convert of pinned and managed
// operands split across the devices; pageable operands are refused naming the device.
TEST_F(MultiGpu, Storage16ShardedOpsAndConverts) {
  Context ctx(Backend::cuda, two()), reference(Backend::scalar);
  for (std::size_t n : {std::size_t(1), std::size_t(17), std::size_t(1000003)}) {
    sharded_ops_match_reference<half>(ctx, n);
    sharded_ops_match_reference<bfloat16>(ctx, n);
  }
  const std::size_t n = 300001;
  const std::vector<float> f = random_vector<float>(n);
  std::vector<half> h_want(n);
  std::vector<double> d_want(n), d_got(n);
  convert<float, half>(reference, f, h_want);
  convert<half, double>(reference, h_want, d_want);
  ShardedBuffer<float> sf(ctx, n);
  ShardedBuffer<half> sh(ctx, n);
  ShardedBuffer<double> sd(ctx, n);
  sf.upload(f.data(), n);
  convert<float, half>(ctx, sf, sh);
  convert<half, double>(ctx, sh, sd);
  ctx.synchronize();
  sd.download(d_got.data(), n);
  EXPECT_EQ(std::memcmp(d_got.data(), d_want.data(), n * sizeof(double)), 0) << "sharded f32 -> f16 -> f64";

  for (MemorySpace space : {MemorySpace::pinned, MemorySpace::managed}) {
    Buffer<float> in(ctx, n, space);
    Buffer<half> out(ctx, n, space);
    std::copy(f.begin(), f.end(), in.data());
    std::fill(out.data(), out.data() + n, poison<half>());
    convert<float, half>(ctx, in.span(), out.span());
    ctx.synchronize();
    EXPECT_EQ(std::memcmp(out.data(), h_want.data(), n * sizeof(half)), 0) << to_string(space);
  }
  std::vector<half> pageable(n, poison<half>());
  Buffer<float> pinned(ctx, n, MemorySpace::pinned);
  expect_error(Errc::foreign_memory, [&] { convert<float, half>(ctx, pinned.span(), Span<half>(pageable.data(), n)); },
               "device 0: ew::convert: out is pageable host memory");
  for (const half& x : pageable) ASSERT_EQ(x.bits, poison<half>().bits);
}

// Every visible device at once (4 on a 4-GPU machine), with the split's remainder groups.
TEST_F(MultiGpu, EveryVisibleDevice) {
  ContextOptions o;
  for (int d = 0; d < visible_devices(); ++d) o.devices.push_back(d);
  Context ctx(Backend::cuda, o);
  sharded_ops_match_reference<float>(ctx, 4 * 1000 + 3 * 4 + 1);
}

// Host-resident and managed operands of a plain call are split across the devices (small
// staging: many chunks per device), in every combination with pageable memory.
TEST_F(MultiGpu, HostResidentAndManagedOperandsAreSplit) {
  Context ctx(Backend::cuda, two(64 << 10));
  const std::size_t n = 300001;
  for (MemorySpace sa : {MemorySpace::host, MemorySpace::pinned, MemorySpace::managed})
    for (MemorySpace so : {MemorySpace::host, MemorySpace::pinned, MemorySpace::managed})
      for (Op op : {Op::add, Op::triad, Op::axpby}) check_spaces<float>(ctx, op, n, sa, MemorySpace::host, so);
  check_spaces<double>(ctx, Op::triad, n, MemorySpace::host, MemorySpace::pinned, MemorySpace::host);
}

TEST_F(MultiGpu, DevicePointersAreRefusedWithTheReason) {
  Context ctx(Backend::cuda, two());
  Context one(Backend::cuda);
  const std::size_t n = 1000;
  std::vector<float> host(n, 3.0f);
  Buffer<float> on_device0(one, n);
  on_device0.upload(host.data(), n);
  expect_error(Errc::foreign_memory, [&] { ew::add<float>(ctx, host, host, on_device0.span()); },
               "out is device memory, which belongs to one device, and this context runs on devices 0,1");
  // Untagged, classified by the driver: refused the same way.
  expect_error(Errc::foreign_memory,
               [&] { ew::add<float>(ctx, host, host, Span<float>(on_device0.data(), n)); }, "belongs to one device");
  std::vector<float> back(n);
  on_device0.download(back.data(), n);
  EXPECT_EQ(back, host);
  expect_error(Errc::invalid_argument, [&] { Buffer<float> b(ctx, n); }, "device memory belongs to one device");
  // A Buffer of one shard's device is that shard's: its context takes it.
  Context shard1 = ctx.shard(1);
  Buffer<float> on_device1(shard1, n);
  on_device1.upload(host.data(), n);
  ew::scale<float>(shard1, 2.0f, on_device1.span(), on_device1.span());
  shard1.synchronize();
  on_device1.download(back.data(), n);
  EXPECT_EQ(back, std::vector<float>(n, 6.0f));
}

TEST_F(MultiGpu, ErrorsNameTheDevice) {
  const int count = visible_devices();
  ContextOptions o;
  o.devices = {0, count};
  expect_error(Errc::invalid_argument, [&] { Context c(Backend::cuda, o); }, ("device " + std::to_string(count) + ": ").c_str());
  ContextOptions with_stream = two();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  with_stream.stream = stream;
  expect_error(Errc::invalid_argument, [&] { Context c(Backend::cuda, with_stream); }, "belongs to one device");
  cudaStreamDestroy(stream);
  // Too large for device 1 alone (the largest device memory times 4): out of memory, named.
  Context ctx(Backend::cuda, two());
  std::size_t largest = 0;
  for (int d = 0; d < 2; ++d) {
    cudaDeviceProp p{};
    ASSERT_EQ(cudaGetDeviceProperties(&p, d), cudaSuccess);
    largest = std::max(largest, p.totalGlobalMem);
  }
  expect_error(Errc::out_of_memory, [&] { ShardedBuffer<float> huge(ctx, largest * 2); }, "device 0: ");
  sharded_ops_match_reference<float>(ctx, 1000);  // the context stays usable
}

TEST_F(MultiGpu, KernelsOnShardedAndHostOperands) {
  Context ctx(Backend::cuda, two());
  Context scalar(Backend::scalar);
  const std::size_t n = 500003;
  const std::vector<float> x = random_vector<float>(n), y = random_vector<float>(n);
  auto X = input<float>(0), Y = input<float>(1);
  const Kernel k = compile({X * sigmoid(X) + param<float>(0) * Y, ew::fma(X, Y, X)});
  std::vector<float> e0(n), e1(n);
  k(scalar, {x, y}, {e0, e1}, {0.25});
  ShardedBuffer<float> sx(ctx, n), sy(ctx, n), s0(ctx, n), s1(ctx, n);
  sx.upload(x.data(), n);
  sy.upload(y.data(), n);
  run_sharded(k, ctx, {sx, sy}, {s0, s1}, {0.25});
  ctx.synchronize();
  std::vector<float> g0(n), g1(n);
  s0.download(g0.data(), n);
  s1.download(g1.data(), n);
  EXPECT_EQ(std::memcmp(g0.data(), e0.data(), n * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(g1.data(), e1.data(), n * sizeof(float)), 0);
  std::vector<float> h0(n, -1.0f), h1(n, -1.0f);  // pageable operands, split by the context
  k(ctx, {x, y}, {h0, h1}, {0.25});
  ctx.synchronize();
  EXPECT_EQ(h0, e0);
  EXPECT_EQ(h1, e1);
}

TEST_F(MultiGpu, ReductionsAreRefusedOnSeveralDevicesAndRunOnAShard) {
  Context ctx(Backend::cuda, two());
  const std::size_t n = 100000;
  Buffer<float> pinned(ctx, n, MemorySpace::pinned);
  const std::vector<float> x = random_vector<float>(n);
  std::memcpy(pinned.data(), x.data(), n * sizeof(float));
  expect_error(Errc::unsupported, [&] { ew::sum<float>(ctx, pinned.span()); }, "does not reduce");
  expect_error(Errc::unsupported, [&] { ew::sum<float>(ctx, Span<const float>(pinned.data(), 0)); }, "does not reduce");
  Context first = ctx.shard(0);
  Buffer<float> on_one_device(first, n);  // refused as unsupported too, not for its memory
  expect_error(Errc::unsupported, [&] { ew::sum<float>(ctx, on_one_device.span()); }, "does not reduce");
  ShardedBuffer<float> sx(ctx, n);
  sx.upload(x.data(), n);
  Context scalar(Backend::scalar);
  for (int k = 0; k < 2; ++k) {
    Context shard = ctx.shard(k);
    const float got = ew::sum<float>(shard, sx.shard(k));
    const float expected = ew::sum<float>(scalar, Span<const float>(x.data() + sx.offset(k), sx.shard(k).size));
    EXPECT_EQ(std::memcmp(&got, &expected, sizeof got), 0) << "shard " << k;
  }
}

// A context on one GPU and memory of another: device memory that says its GPU (an
// ew::Buffer's span) or that the driver places (untagged) is refused, naming both devices,
// before anything runs (the kernels would fault where peer access is off); managed memory,
// which every GPU reads, is taken.
TEST_F(MultiGpu, OneDeviceContextRefusesAnotherDevicesMemory) {
  Context on0(Backend::cuda);
  ASSERT_EQ(on0.device(), 0);
  ContextOptions o;
  o.device = 1;
  Context on1(Backend::cuda, o);
  const std::size_t n = 4099;
  const std::vector<float> x = random_vector<float>(n), y = random_vector<float>(n);
  Buffer<float> a(on1, n), out(on1, n);
  ASSERT_EQ(device_of(a.data()), 1);  // else a failed check would fault on device 0 for the tests after it
  EXPECT_EQ(a.device(), 1);
  a.upload(x.data(), n);
  const std::vector<float> poison(n, -7.0f);
  out.upload(poison.data(), n);
  const Span<const float> a1(a.data(), n);  // untagged: the driver says device 1
  const Span<float> out1(out.data(), n);
  std::vector<float> dst = poison;
  const char* says = "is device memory of device 1, and this context runs on device 0";
  for (const Span<const float>& in : {a1, Span<const float>(a.span())}) {  // the driver's word, the Buffer's
    expect_error(Errc::foreign_memory, [&] { ew::add<float>(on0, in, y, dst); }, says);
    expect_error(Errc::foreign_memory, [&] { ew::sum<float>(on0, in); }, says);
    auto X = input<float>(0);
    const Kernel k = compile({X * sigmoid(X)});
    expect_error(Errc::foreign_memory, [&] { k(on0, {in}, {dst}); }, says);
    expect_error(Errc::foreign_memory, [&] { ew::sum(on0, k, {in}); }, says);
    std::vector<ew::half> h(n);
    expect_error(Errc::foreign_memory, [&] { ew::convert<float, ew::half>(on0, in, h); }, says);
  }
  for (const Span<float>& o1 : {out1, out.span()}) {
    expect_error(Errc::foreign_memory, [&] { ew::scale<float>(on0, 2.0f, y, o1); }, says);
    expect_error(Errc::foreign_memory, [&] { ew::sum<float>(on0, y, Span<float>(o1.data, 1, o1.space, o1.device)); },
                 says);
  }
  EXPECT_EQ(dst, poison);  // nothing written
  std::vector<float> back(n);
  out.download(back.data(), n);
  EXPECT_EQ(back, poison);
  // The same memory on its own device's context runs.
  ew::scale<float>(on1, 2.0f, a1, out1);
  ew::scale<float>(on1, 2.0f, a.span(), out.span());
  on1.synchronize();
  out.download(back.data(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], 2.0f * x[i]) << i;
  // Managed memory made while device 1 is current is read by device 0's context.
  float* managed = nullptr;
  const cudaError_t made = cudaSetDevice(1) == cudaSuccess ? cudaMallocManaged(&managed, n * sizeof(float)) : cudaErrorInvalidDevice;
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  ASSERT_EQ(made, cudaSuccess);
  std::memcpy(managed, x.data(), n * sizeof(float));
  std::vector<float> sum(n, -1.0f);
  ew::add<float>(on0, Span<const float>(managed, n), y, sum);
  on0.synchronize();
  cudaFree(managed);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(sum[i], x[i] + y[i]) << i;
}

// Shards on other contexts over the same devices are fine; over other devices, refused.
TEST_F(MultiGpu, ShardedOperandsMustLiveOnTheContextsDevices) {
  Context ctx(Backend::cuda, two());
  ContextOptions swapped;
  swapped.devices = {1, 0};
  Context other(Backend::cuda, swapped);
  ShardedBuffer<float> a(ctx, 1000), c(ctx, 1000), elsewhere(other, 1000);
  expect_error(Errc::invalid_argument, [&] { ew::add<float>(ctx, a, elsewhere, c); },
               "b is sharded over devices 1,0, the context runs on devices 0,1");
}

}  // namespace
}  // namespace ew::test
