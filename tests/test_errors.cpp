// Bad input: every error carries its code, and no output element is written.
#include <cstdlib>

#include "test_support.hpp"

namespace ew::test {
namespace {

class BadInput : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(GetParam()); }
};

// Host-side arrays with a poisoned output for the CPU backends, device buffers for the
// others: in both cases every element must still be poison after a rejected call.
struct Arrays {
  static constexpr std::size_t n = 257;
  Buffer<float> a, b, out;
  explicit Arrays(Context& ctx) : a(ctx, n + 8), b(ctx, n + 8), out(ctx, n + 8) {
    auto ra = random_vector<float>(n + 8), rb = random_vector<float>(n + 8);
    std::vector<float> p(n + 8, poison<float>());
    a.upload(ra.data(), n + 8);
    b.upload(rb.data(), n + 8);
    out.upload(p.data(), n + 8);
  }
  Span<const float> A(std::size_t off = 0, std::size_t len = n) const { return a.span().subspan(off, len); }
  Span<const float> B(std::size_t off = 0, std::size_t len = n) const { return b.span().subspan(off, len); }
  Span<float> Out(std::size_t off = 0, std::size_t len = n) const { return out.span().subspan(off, len); }
  void expect_untouched(Context& ctx) const {
    ctx.synchronize();
    std::vector<float> got(n + 8);
    out.download(got.data(), n + 8);
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_TRUE(is_poison(got[i])) << "element " << i << " written";
  }
};

TEST_P(BadInput, SizeMismatch) {
  Context ctx(GetParam());
  Arrays x(ctx);
  expect_error(Errc::size_mismatch, [&] { add<float>(ctx, x.A(0, 256), x.B(), x.Out()); });
  expect_error(Errc::size_mismatch, [&] { add<float>(ctx, x.A(), x.B(0, 100), x.Out()); });
  expect_error(Errc::size_mismatch, [&] { axpy<float>(ctx, 2.0f, x.A(0, 3), x.Out()); });
  x.expect_untouched(ctx);
}

TEST_P(BadInput, NullPointerWithElements) {
  Context ctx(GetParam());
  Arrays x(ctx);
  expect_error(Errc::null_pointer, [&] { add<float>(ctx, Span<const float>(nullptr, Arrays::n), x.B(), x.Out()); });
  expect_error(Errc::null_pointer, [&] { triad<float>(ctx, x.A(), 2.0f, Span<const float>(nullptr, Arrays::n), x.Out()); });
  expect_error(Errc::null_pointer, [&] { copy<float>(ctx, x.A(), Span<float>(nullptr, Arrays::n)); });
  x.expect_untouched(ctx);
  // n = 0 is a no-op, null pointers included.
  EXPECT_NO_THROW(add<float>(ctx, Span<const float>(), Span<const float>(), Span<float>()));
}

TEST_P(BadInput, PartialOverlap) {
  Context ctx(GetParam());
  Arrays x(ctx);
  Span<const float> shifted_out(x.out.data() + 1, Arrays::n, x.out.space());
  expect_error(Errc::overlap, [&] { add<float>(ctx, shifted_out, x.B(), x.Out()); });
  expect_error(Errc::overlap, [&] { scale<float>(ctx, 3.0f, x.Out(4), x.Out(0)); });
  Span<const float> last_element(x.out.data() + Arrays::n - 1, Arrays::n, x.out.space());
  expect_error(Errc::overlap, [&] { mul<float>(ctx, x.A(), last_element, x.Out()); });
  x.expect_untouched(ctx);
}

TEST_P(BadInput, MisalignedPointer) {
  Context ctx(GetParam());
  Arrays x(ctx);
  auto* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(x.a.data()) + 2);
  expect_error(Errc::misaligned, [&] { copy<float>(ctx, Span<const float>(odd, 100, x.a.space()), x.Out(0, 100)); });
  x.expect_untouched(ctx);
}

TEST_P(BadInput, SecondInputGivenToOneInputOp) {
  Context ctx(GetParam());
  Arrays x(ctx);
  Operands<float> args{x.A(), x.B(), x.Out(), 2.0f, 1.0f};
  expect_error(Errc::invalid_argument, [&] { run(ctx, Op::scale, args); });
  x.expect_untouched(ctx);
}

TEST_P(BadInput, BufferTransferSizeMismatch) {
  Context ctx(GetParam());
  Arrays x(ctx);
  std::vector<float> small(10, 1.0f);
  expect_error(Errc::size_mismatch, [&] { x.out.upload(small.data(), small.size()); });
  x.expect_untouched(ctx);
}

// Device memory whose span says another GPU (Span::device), as an ew::Buffer of another
// GPU's context says it: refused before anything runs, without touching the memory. A GPU
// backend names both devices; a CPU backend refuses device memory as such.
TEST_P(BadInput, DeviceMemoryOfAnotherGpu) {
  Context ctx(GetParam());
  Arrays x(ctx);
  const int other = ctx.device() + 1;  // the host's -1 gives 0
  const Span<const float> a(x.a.data(), Arrays::n, MemorySpace::device, other);
  const Span<float> out(x.out.data(), Arrays::n, MemorySpace::device, other);
  const std::string says = ctx.device() >= 0 ? "is device memory of device " + std::to_string(other) +
                                                   ", and this context runs on device " + std::to_string(ctx.device())
                                             : std::string("lives in device memory");
  expect_error(Errc::foreign_memory, [&] { add<float>(ctx, a, x.B(), x.Out()); }, says.c_str());
  expect_error(Errc::foreign_memory, [&] { add<float>(ctx, x.A(), x.B(), out); }, says.c_str());
  expect_error(Errc::foreign_memory, [&] { ew::sum<float>(ctx, a); }, says.c_str());
  const Span<float> first(x.out.data(), 1, MemorySpace::device, other);
  expect_error(Errc::foreign_memory, [&] { ew::sum<float>(ctx, x.A(), first); }, says.c_str());
  const Kernel twice = compile({input<float>(0) * 2.0f});
  expect_error(Errc::foreign_memory, [&] { twice(ctx, {a}, {x.Out()}); }, says.c_str());
  expect_error(Errc::foreign_memory, [&] { twice(ctx, {x.A()}, {out}); }, says.c_str());
  expect_error(Errc::foreign_memory, [&] { ew::sum(ctx, twice, {a}); }, says.c_str());
  expect_error(Errc::foreign_memory, [&] { ew::convert<float, float>(ctx, a, x.Out()); }, says.c_str());
  expect_error(Errc::foreign_memory, [&] { ew::convert<float, float>(ctx, x.A(), out); }, says.c_str());
  x.expect_untouched(ctx);
}

std::string backend_name(const testing::TestParamInfo<Backend>& info) { return to_string(info.param); }

INSTANTIATE_TEST_SUITE_P(scalar, BadInput, testing::Values(Backend::scalar), backend_name);
INSTANTIATE_TEST_SUITE_P(highway, BadInput, testing::Values(Backend::highway), backend_name);
INSTANTIATE_TEST_SUITE_P(kokkos, BadInput, testing::Values(Backend::kokkos), backend_name);
INSTANTIATE_TEST_SUITE_P(cuda, BadInput, testing::Values(Backend::cuda), backend_name);

TEST(ForeignMemory, CpuBackendsRejectDeviceMemory) {
  std::vector<float> a(64, 1.0f), c(64, poison<float>());
  for (Backend b : {Backend::scalar, Backend::highway, Backend::kokkos}) {
    if (!backend_status(b).usable || (b == Backend::kokkos && backend_status(b).detail.find("Cuda") != std::string::npos))
      continue;
    Context ctx(b);
    expect_error(Errc::foreign_memory,
                 [&] { copy<float>(ctx, Span<const float>(a.data(), 64, MemorySpace::device), Span<float>(c)); });
    expect_error(Errc::foreign_memory, [&] { Buffer<float>(ctx, 16, MemorySpace::device); });
  }
  for (float v : c) ASSERT_TRUE(is_poison(v));
}

// The GPU a span says travels with it: through const, subspan, the expression operands and
// any container that knows it (ew::Buffer: -1 for host memory).
TEST(SpanDevice, TravelsWithTheSpan) {
  std::vector<float> v(8);
  const Span<float> s(v.data(), 8, MemorySpace::device, 3);
  EXPECT_EQ(Span<const float>(s).device, 3);
  EXPECT_EQ(s.subspan(2, 4).device, 3);
  EXPECT_EQ(InputArray(s).device, 3);
  EXPECT_EQ(OutputArray(s).device, 3);
  EXPECT_EQ(Span<float>(v).device, -1);
  struct OnGpu {
    float* data() { return p; }
    std::size_t size() const { return 8; }
    MemorySpace space() const { return MemorySpace::device; }
    int device() const { return 5; }
    float* p;
  } on_gpu{v.data()};
  EXPECT_EQ(Span<float>(on_gpu).device, 5);
  Context scalar(Backend::scalar);
  Buffer<float> host(scalar, 8);
  EXPECT_EQ(host.device(), -1);
  EXPECT_EQ(Span<float>(host).device, -1);
}

TEST(Options, HostBackendsRejectWhatOnlyGpusHonour) {
  int stream_stand_in = 0;
  for (Backend b : {Backend::scalar, Backend::highway}) {
    if (!backend_status(b).usable) continue;
    ContextOptions with_stream;
    with_stream.stream = &stream_stand_in;
    expect_error(Errc::invalid_argument, [&] { Context ctx(b, with_stream); }, "ContextOptions::stream");
    ContextOptions with_device;
    with_device.device = 1;
    expect_error(Errc::invalid_argument, [&] { Context ctx(b, with_device); }, "ContextOptions::device");
  }
  ContextOptions two_threads;
  two_threads.threads = 2;
  expect_error(Errc::invalid_argument, [&] { Context ctx(Backend::scalar, two_threads); }, "one thread");
}

TEST(Operands, OpOutsideTheTableIsRejected) {
  Context ctx(Backend::scalar);
  std::vector<float> a(8, 1.0f), c(8, poison<float>());
  Operands<float> args{Span<const float>(a), {}, Span<float>(c)};
  expect_error(Errc::invalid_argument, [&] { run(ctx, static_cast<Op>(op_count), args); }, "op table");
  for (float v : c) ASSERT_TRUE(is_poison(v));
}

TEST(Buffers, SizeBeyondTheAddressSpaceIsOutOfMemory) {
  Context ctx(Backend::scalar);
  expect_error(Errc::out_of_memory, [&] { Buffer<double> b(ctx, (std::size_t(1) << 61) + 1); });
}

TEST(Buffers, MayOutliveTheirContextObject) {
  std::vector<float> want = random_vector<float>(100), got(100);
  Buffer<float> keep = [&] {
    Context ctx(Backend::scalar);
    Buffer<float> b(ctx, 100);
    b.upload(want.data(), 100);
    return b;
  }();
  keep.download(got.data(), 100);
  EXPECT_EQ(first_mismatch(got, want), -1);
  EXPECT_EQ(Span<float>(keep).space, MemorySpace::host);  // a Buffer passes its space on
}

TEST(Selection, UnknownBackendInEnvironment) {
  ScopedEnv env("EW_BACKEND", "no-such-backend");
  expect_error(Errc::unknown_backend, [] { Context ctx; });
  expect_error(Errc::unknown_backend, [] { resolve_backend(); });
  expect_error(Errc::unknown_backend, [] { parse_backend("cudaa"); });
}

TEST(Selection, ExplicitChoiceWinsOverEnvironment) {
  ScopedEnv env("EW_BACKEND", "no-such-backend");
  Context ctx(Backend::scalar);
  EXPECT_EQ(ctx.backend(), Backend::scalar);
}

TEST(Selection, EnvironmentChoosesBackend) {
  ScopedEnv env("EW_BACKEND", "SCALAR");
  EXPECT_EQ(Context().backend(), Backend::scalar);
}

TEST(Selection, UnusableBackendIsAnErrorNeverAFallback) {
  std::vector<BackendStatus> unusable;
  for (const BackendStatus& s : available_backends())
    if (!s.usable) unusable.push_back(s);
  if (unusable.empty()) GTEST_SKIP() << "every backend is usable on this machine";
  for (const BackendStatus& s : unusable) {
    EXPECT_FALSE(s.reason.empty()) << s.name;
    try {
      Context ctx(s.backend);
      ADD_FAILURE() << "Context(" << s.name << ") succeeded on an unusable backend";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::backend_unavailable);
      EXPECT_NE(std::string(e.what()).find(s.reason), std::string::npos) << e.what();
    }
    ScopedEnv env("EW_BACKEND", s.name.c_str());
    expect_error(Errc::backend_unavailable, [] { Context ctx; });
  }
}

TEST(Selection, AutomaticChoiceIsTheFirstUsable) {
  ScopedEnv env("EW_BACKEND", nullptr);
  Backend first = Backend::scalar;
  for (const BackendStatus& s : available_backends())
    if (s.usable) {
      first = s.backend;
      break;
    }
  EXPECT_EQ(Context().backend(), first);
  EXPECT_EQ(available_backends().back().backend, Backend::scalar);
  EXPECT_TRUE(available_backends().back().usable);
}

}  // namespace
}  // namespace ew::test
