// The split rule (ew::shard_range), EW_DEVICE lists and ContextOptions::devices, and
// ew::ShardedBuffer on the CPU backends (one shard in host memory): ops and expressions
// on sharded arrays give the bits of the same call on plain arrays. Several devices need
// a GPU machine: tests/cuda/test_cuda_multigpu.cpp.
#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "ew_internal/convert_eval.hpp"
#include "ew_internal/multi_device.hpp"
#include "ew_internal/program.hpp"
#include "ew_internal/registry.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

TEST(ShardRange, CoversExactlyInOrderWithBalancedGroups) {
  for (std::size_t n = 0; n <= 300; ++n)
    for (std::size_t parts = 1; parts <= 6; ++parts)
      for (std::size_t granule = 1; granule <= 5; ++granule) {
        const std::size_t groups = (n + granule - 1) / granule;
        std::size_t expected_begin = 0, previous_groups = ~std::size_t(0);
        for (std::size_t p = 0; p < parts; ++p) {
          const ShardRange r = shard_range(n, parts, p, granule);
          ASSERT_EQ(r.begin, expected_begin) << n << " " << parts << " " << p << " " << granule;
          ASSERT_LE(r.begin, r.end);
          ASSERT_TRUE(r.begin % granule == 0 || r.begin == n);
          const std::size_t g = (r.size() + granule - 1) / granule;
          ASSERT_EQ(g, groups / parts + (p < groups % parts ? 1 : 0)) << n << " " << parts << " " << p;
          ASSERT_LE(g, previous_groups);
          previous_groups = g;
          expected_begin = r.end;
        }
        ASSERT_EQ(expected_begin, n);
      }
}

TEST(ShardRange, LargestSizesDoNotOverflow) {
  const std::size_t n = ~std::size_t(0);
  std::size_t end = 0;
  for (std::size_t p = 0; p < 3; ++p) {
    const ShardRange r = shard_range(n, 3, p, 4);
    EXPECT_EQ(r.begin, end);
    end = r.end;
  }
  EXPECT_EQ(end, n);
  EXPECT_EQ(shard_group * sizeof(std::uint16_t) % 16, 0u);  // a shard of f16 starts 16-byte aligned
}

TEST(ShardRange, RefusesNoPartsAndPartsOutOfRange) {
  expect_error(Errc::invalid_argument, [] { shard_range(10, 0, 0); });
  expect_error(Errc::invalid_argument, [] { shard_range(10, 2, 2); });
  expect_error(Errc::invalid_argument, [] { shard_range(10, 2, 0, 0); });
}

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) had_ = true, old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() { had_ ? setenv(name_, old_.c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

TEST(DeviceList, MalformedEwDeviceListsAreRefusedOnEveryBackend) {
  for (const char* bad : {"0,", ",1", "0,,1", "a,1", "1,b", "0;1", "0, 1", "99999999999,0"}) {
    ScopedEnv env("EW_DEVICE", bad);
    expect_error(Errc::invalid_argument, [] { resolve_backend(); }, "is not a device index");
  }
  ScopedEnv env("EW_DEVICE", "1,0,1");
  expect_error(Errc::invalid_argument, [] { resolve_backend(); }, "lists device 1 twice");
}

TEST(DeviceList, AWellFormedListIsIgnoredByHostBackendsAsAnIndexIs) {
  ScopedEnv env("EW_DEVICE", "0,1");
  EXPECT_NO_THROW(resolve_backend());
  Context ctx(Backend::scalar);
  EXPECT_TRUE(ctx.devices().empty());
  EXPECT_EQ(ctx.shard_count(), 1);
}

TEST(DeviceList, ContextOptionsDevicesAreCheckedAndOnlyCudaTakesSeveral) {
  ContextOptions two;
  two.devices = {0, 1};
  expect_error(Errc::invalid_argument, [&] { Context c(Backend::scalar, two); }, "only the cuda backend runs on several");
  ContextOptions both;
  both.devices = {0};
  both.device = 0;
  expect_error(Errc::invalid_argument, [&] { Context c(Backend::scalar, both); }, "both set");
  ContextOptions twice;
  twice.devices = {0, 0};
  expect_error(Errc::invalid_argument, [&] { Context c(Backend::scalar, twice); }, "twice");
  ContextOptions negative;
  negative.devices = {-1};
  expect_error(Errc::invalid_argument, [&] { Context c(Backend::scalar, negative); }, "not a device index");
  ContextOptions one;
  one.devices = {0};
  EXPECT_NO_THROW(Context(Backend::scalar, one));
}

TEST(ContextShard, HostContextsHaveOneShardThatIsThemselves) {
  Context ctx(Backend::scalar);
  Context shard = ctx.shard(0);
  EXPECT_EQ(&shard.impl(), &ctx.impl());
  expect_error(Errc::invalid_argument, [&] { ctx.shard(1); }, "1 shard");
  expect_error(Errc::invalid_argument, [&] { ctx.shard(-1); }, "Context::shard(-1)");
}

// The multi-device backend over stand-in "devices" (scalar backends that record what they
// get): how a call is cut, whatever device runs the parts. On a GPU machine the same code
// runs over cuda backends (tests/cuda/test_cuda_multigpu.cpp).
struct Part {
  const void* out;
  std::size_t n;
};
std::mutex parts_mutex;
std::vector<Part> parts_seen;

// Which shard waited, and how: its synchronize() and wait_idle() calls, by shard index (the
// order of creation), and a shard that fails its ops on purpose.
std::vector<int> synchronized(8), waited(8);
int recorders_made = 0, failing_shard = -1;

class Recorder final : public detail::BackendImpl {
 public:
  void run(const detail::OpCall& c) override {
    if (index_ == failing_shard) throw Error(Errc::out_of_memory, "no scratch on purpose");
    record(c.out, c.n);
    inner_->run(c);
  }
  void run_expr(const detail::ExprCall& c) override {
    record(c.outputs[0], c.n);
    inner_->run_expr(c);
  }
  bool supports(DType) const override { return true; }
  void run_convert(const detail::ConvertCall& c) override {
    record(c.out, c.n);
    inner_->run_convert(c);
  }
  void synchronize() override {
    std::lock_guard<std::mutex> lock(parts_mutex);
    ++synchronized[index_];
  }
  void wait_idle() noexcept override {
    std::lock_guard<std::mutex> lock(parts_mutex);
    ++waited[index_];
  }
  bool accepts(MemorySpace) const override { return true; }

 private:
  const int index_ = recorders_made++ % 8;
  static void record(const void* out, std::size_t n) {
    std::lock_guard<std::mutex> lock(parts_mutex);
    parts_seen.push_back({out, n});
  }
  std::unique_ptr<detail::BackendImpl> inner_ = detail::descriptor(Backend::scalar).create(ContextOptions{});
};

std::unique_ptr<detail::BackendImpl> make_recorder(const ContextOptions&) { return std::make_unique<Recorder>(); }
const detail::BackendDescriptor recorders{Backend::scalar, nullptr, &make_recorder, nullptr, nullptr, nullptr};

// Every part is the split rule's (in groups of `granule` elements) at its offset in an
// output of `element`-byte elements.
void expect_parts(const void* base, std::size_t n, std::size_t count, std::size_t element, std::size_t granule) {
  std::vector<Part> expected;
  for (std::size_t k = 0; k < count; ++k) {
    const ShardRange r = shard_range(n, count, k, granule);
    if (r.size()) expected.push_back({static_cast<const char*>(base) + r.begin * element, r.size()});
  }
  std::lock_guard<std::mutex> lock(parts_mutex);
  ASSERT_EQ(parts_seen.size(), expected.size()) << "n " << n << ", " << count << " devices";
  for (const Part& e : expected) {
    bool found = false;
    for (const Part& p : parts_seen) found |= p.out == e.out && p.n == e.n;
    EXPECT_TRUE(found) << "no part of " << e.n << " elements at byte " << (static_cast<const char*>(e.out) -
                                                                             static_cast<const char*>(base));
  }
  parts_seen.clear();
}

template <class T>
void split_ops_match_reference(detail::MultiDevice& md, std::size_t n, MemorySpace space) {
  const std::vector<T> a = random_vector<T>(n), b = random_vector<T>(n), y = random_vector<T>(n);
  for (int o = 0; o < op_count; ++o) {
    const Op op = static_cast<Op>(o);
    const OpInfo& oi = info(op);
    std::vector<T> expected = oi.in_place ? y : std::vector<T>(n, T(std::nan("")));
    std::vector<T> got = expected;
    reference<T>(op, n, a.data(), oi.input_streams == 2 ? b.data() : (oi.in_place ? expected.data() : nullptr),
                 expected.data(), compute_t<T>(1.25), compute_t<T>(-0.5));
    detail::OpCall c{op, dtype_v<T>, n, a.data(), oi.input_streams == 2 ? b.data() : (oi.in_place ? got.data() : nullptr),
                     got.data(), 1.25, -0.5, space, space, space};
    md.run(c);
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * sizeof(T)), 0) << to_string(op) << ", n " << n;
    expect_parts(got.data(), n, static_cast<std::size_t>(md.shard_count()), sizeof(T), shard_group);
  }
}

TEST(MultiDeviceSplit, OpsAreCutByTheRuleAndGiveOneBackendsBits) {
  for (int count : {2, 3, 4}) {
    std::vector<int> devices;
    for (int d = 0; d < count; ++d) devices.push_back(d);
    detail::MultiDevice md(recorders, ContextOptions{}, devices);
    EXPECT_EQ(md.shard_count(), count);
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(17), std::size_t(4099), std::size_t(100003)})
      for (MemorySpace space : {MemorySpace::host, MemorySpace::managed}) {  // threads, then one by one
        split_ops_match_reference<float>(md, n, space);
        split_ops_match_reference<double>(md, n, space);
        split_ops_match_reference<half>(md, n, space);
        split_ops_match_reference<bfloat16>(md, n, space);
      }
  }
}

// ew::convert between dtypes of different sizes: both operands cut at the same elements.
template <class From, class To>
void split_convert_matches_reference(detail::MultiDevice& md, std::size_t n, MemorySpace space) {
  const std::vector<From> in = random_vector<From>(n);
  std::vector<To> expected(n), got(n, poison<To>());
  for (std::size_t i = 0; i < n; ++i) expected[i] = detail::convert_element<From, To>(in[i]);
  detail::ConvertCall c{dtype_v<From>, dtype_v<To>, n, in.data(), got.data(), space, space, "scalar"};
  md.run_convert(c);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * sizeof(To)), 0)
      << to_string(dtype_v<From>) << " -> " << to_string(dtype_v<To>) << ", n " << n;
  expect_parts(got.data(), n, static_cast<std::size_t>(md.shard_count()), sizeof(To), shard_group);
}

TEST(MultiDeviceSplit, ConvertsAreCutAtTheSameElements) {
  for (int count : {2, 3}) {
    std::vector<int> devices;
    for (int d = 0; d < count; ++d) devices.push_back(d);
    detail::MultiDevice md(recorders, ContextOptions{}, devices);
    for (std::size_t n : {std::size_t(1), std::size_t(17), std::size_t(100003)})
      for (MemorySpace space : {MemorySpace::host, MemorySpace::managed}) {
        split_convert_matches_reference<float, bfloat16>(md, n, space);
        split_convert_matches_reference<half, double>(md, n, space);
        split_convert_matches_reference<double, half>(md, n, space);
      }
  }
}

TEST(MultiDeviceSplit, ExpressionsOfMixedDtypesAreCutAtTheSameElements) {
  detail::MultiDevice md(recorders, ContextOptions{}, {0, 1, 2});
  Context scalar(Backend::scalar);
  const std::size_t n = 10007;
  const std::vector<float> x = random_vector<float>(n);
  const std::vector<double> y = random_vector<double>(n);
  auto X = input<float>(0);
  auto Y = input<double>(1);
  const Kernel k = compile({cast<double>(X) * Y + param<double>(0), X * X});
  std::vector<double> e0(n), g0(n, -1.0);
  std::vector<float> e1(n), g1(n, -1.0f);
  k(scalar, {x, y}, {e0, e1}, {0.5});
  detail::ExprCall c{};
  c.program = &k.program();
  c.n = n;
  c.inputs[0] = x.data(), c.inputs[1] = y.data();
  c.outputs[0] = g0.data(), c.outputs[1] = g1.data();
  c.params[0] = 0.5;
  for (auto& s : c.input_space) s = MemorySpace::host;
  for (auto& s : c.output_space) s = MemorySpace::host;
  md.run_expr(c);
  EXPECT_EQ(g0, e0);
  EXPECT_EQ(g1, e1);
  expect_parts(g0.data(), n, 3, sizeof(double), shard_group);
}

TEST(MultiDeviceSplit, RefusesReductionsAndDeviceBuffersNamingTheDevices) {
  detail::MultiDevice md(recorders, ContextOptions{}, {0, 1});
  detail::ReduceCall r{};
  r.call = "ew::sum";
  expect_error(Errc::unsupported, [&] { md.run_reduce(r); }, "ew::sum: a context over devices 0,1 does not reduce");
  expect_error(Errc::invalid_argument, [&] { md.allocate(64, MemorySpace::device); },
               "device memory belongs to one device and this context runs on devices 0,1");
  expect_error(Errc::invalid_argument, [&] { md.native_stream(); }, "a stream on each of devices 0,1");
  const Error e = detail::on_device(1, Error(Errc::out_of_memory, "cuda: cudaMalloc failed"));
  EXPECT_STREQ(e.what(), "ew::Error [out_of_memory]: device 1: cuda: cudaMalloc failed");
}

// A Buffer's upload or download on a context over several devices follows every device's
// queue, not device 0's alone (pinned and managed Buffers are split over all of them).
TEST(MultiDeviceSplit, CopiesWaitForEveryDevice) {
  recorders_made = 0;
  detail::MultiDevice md(recorders, ContextOptions{}, {0, 1, 2});
  std::fill(synchronized.begin(), synchronized.end(), 0);
  const std::vector<float> from = random_vector<float>(1000);
  std::vector<float> to(1000, poison<float>());
  md.copy_bytes(to.data(), from.data(), 1000 * sizeof(float));
  EXPECT_EQ(std::memcmp(to.data(), from.data(), 1000 * sizeof(float)), 0);
  EXPECT_EQ(synchronized[1], 1);
  EXPECT_EQ(synchronized[2], 1);
}

// A call one device fails has every device's work waited for before it throws: the others'
// parts may still be running on the caller's pinned or managed memory.
TEST(MultiDeviceSplit, AFailedShardWaitsForEveryDeviceBeforeItThrows) {
  recorders_made = 0;
  detail::MultiDevice md(recorders, ContextOptions{}, {0, 1, 2});
  std::fill(waited.begin(), waited.end(), 0);
  failing_shard = 1;
  const std::vector<float> a = random_vector<float>(100003), b = random_vector<float>(100003);
  std::vector<float> out(a.size());
  detail::OpCall c{Op::add, DType::f32, a.size(), a.data(), b.data(), out.data(), 1.0, 0.0,
                   MemorySpace::managed, MemorySpace::managed, MemorySpace::managed};
  expect_error(Errc::out_of_memory, [&] { md.run(c); }, "device 1: no scratch on purpose");
  failing_shard = -1;
  for (int k = 0; k < 3; ++k) EXPECT_EQ(waited[k], 1) << "shard " << k;
  std::lock_guard<std::mutex> lock(parts_mutex);
  parts_seen.clear();
}

class Sharded : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(GetParam()); }
};

// Every op on sharded arrays against the same op on plain host arrays, bit for bit.
TEST_P(Sharded, OpsGiveThePlainCallsBits) {
  Context ctx(GetParam());
  const std::size_t n = 100003;
  const std::vector<float> a = random_vector<float>(n), b = random_vector<float>(n), y0 = random_vector<float>(n);
  ShardedBuffer<float> sa(ctx, n), sb(ctx, n), sc(ctx, n);
  ASSERT_EQ(sa.shard_count(), 1);
  EXPECT_EQ(sa.offset(0), 0u);
  EXPECT_EQ(sa.shard(0).size, n);
  sa.upload(a.data(), n);
  sb.upload(b.data(), n);
  for (int o = 0; o < op_count; ++o) {
    const Op op = static_cast<Op>(o);
    const bool in_place = info(op).in_place;
    std::vector<float> expected = in_place ? y0 : std::vector<float>(n, std::nanf(""));
    std::vector<float> got(n);
    sc.upload(in_place ? y0.data() : std::vector<float>(n, std::nanf("")).data(), n);
    switch (op) {
      case Op::copy: ew::copy<float>(ctx, a, expected), ew::copy<float>(ctx, sa, sc); break;
      case Op::scale: ew::scale<float>(ctx, 1.5f, a, expected), ew::scale<float>(ctx, 1.5f, sa, sc); break;
      case Op::add: ew::add<float>(ctx, a, b, expected), ew::add<float>(ctx, sa, sb, sc); break;
      case Op::mul: ew::mul<float>(ctx, a, b, expected), ew::mul<float>(ctx, sa, sb, sc); break;
      case Op::triad: ew::triad<float>(ctx, a, 0.75f, b, expected), ew::triad<float>(ctx, sa, 0.75f, sb, sc); break;
      case Op::axpy: ew::axpy<float>(ctx, 2.5f, a, expected), ew::axpy<float>(ctx, 2.5f, sa, sc); break;
      case Op::axpby: ew::axpby<float>(ctx, 2.5f, a, -0.5f, expected), ew::axpby<float>(ctx, 2.5f, sa, -0.5f, sc); break;
    }
    ctx.synchronize();
    sc.download(got.data(), n);
    EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * sizeof(float)), 0) << to_string(op);
  }
}

TEST_P(Sharded, KernelsGiveThePlainCallsBits) {
  Context ctx(GetParam());
  const std::size_t n = 70001;
  const std::vector<double> x = random_vector<double>(n), y = random_vector<double>(n);
  auto X = input<double>(0), Y = input<double>(1);
  const Kernel k = compile({X * sigmoid(X) + param<double>(0) * Y});
  std::vector<double> expected(n), got(n, -1.0);
  try {
    k(ctx, {x, y}, {expected}, {0.25});
  } catch (const Error& e) {
    if (e.code() == Errc::backend_unavailable) GTEST_SKIP() << e.what();
    throw;
  }
  ShardedBuffer<double> sx(ctx, n), sy(ctx, n), sout(ctx, n);
  sx.upload(x.data(), n);
  sy.upload(y.data(), n);
  sout.upload(got.data(), n);
  run_sharded(k, ctx, {sx, sy}, {sout}, {0.25});
  ctx.synchronize();
  sout.download(got.data(), n);
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), n * sizeof(double)), 0);
}

// A size mismatch is found before any shard runs: the output keeps its bytes.
TEST_P(Sharded, BadCallsWriteNothing) {
  Context ctx(GetParam());
  const std::size_t n = 1000;
  const std::vector<float> poison(n, 7.0f);
  ShardedBuffer<float> sa(ctx, n), shorter(ctx, n - 1), sc(ctx, n);
  sa.upload(poison.data(), n);
  sc.upload(poison.data(), n);
  expect_error(Errc::size_mismatch, [&] { ew::add<float>(ctx, sa, shorter, sc); }, "add: b has 999 elements");
  const Kernel k = compile({input<float>(0) + input<float>(1)});
  expect_error(Errc::size_mismatch, [&] { run_sharded(k, ctx, {sa, shorter}, {sc}); }, "an input has 999");
  expect_error(Errc::size_mismatch, [&] { sc.upload(poison.data(), n - 1); }, "ShardedBuffer::upload");
  std::vector<float> got(n);
  sc.download(got.data(), n);
  EXPECT_EQ(got, poison);
}

// A moved-from ShardedBuffer holds nothing: every use of it is an ew::Error and nothing is
// written (it once crashed run_sharded and copied nothing in silence).
TEST_P(Sharded, AMovedFromBufferIsRefused) {
  Context ctx(GetParam());
  const std::size_t n = 64;
  const std::vector<float> poison(n, 7.0f);
  ShardedBuffer<float> gone(ctx, n), sc(ctx, n), empty_out(ctx, 0);
  sc.upload(poison.data(), n);
  ShardedBuffer<float> taken(std::move(gone));
  EXPECT_EQ(taken.size(), n);
  EXPECT_EQ(gone.size(), 0u);
  EXPECT_EQ(gone.shard_count(), 0);
  std::vector<float> host(n, 3.0f);
  expect_error(Errc::size_mismatch, [&] { gone.upload(host.data(), n); }, "ShardedBuffer::upload");
  expect_error(Errc::size_mismatch, [&] { gone.download(host.data(), n); }, "ShardedBuffer::download");
  EXPECT_EQ(host, std::vector<float>(n, 3.0f));
  expect_error(Errc::invalid_argument, [&] { (void)gone.shard(0); }, "moved-from ShardedBuffer holds no shard");
  expect_error(Errc::invalid_argument, [&] { ew::copy<float>(ctx, gone, sc); }, "copy: a has 0 shards");
  expect_error(Errc::invalid_argument, [&] { ew::copy<float>(ctx, sc, gone); }, "(a moved-from ShardedBuffer)");
  const Kernel k = compile({input<float>(0) + 1});
  expect_error(Errc::invalid_argument, [&] { run_sharded(k, ctx, {sc}, {gone}); }, "an output has 0 shards");
  expect_error(Errc::invalid_argument, [&] { run_sharded(k, ctx, {gone}, {empty_out}); }, "ShardedInput: a moved-from");
  std::vector<float> got(n);
  sc.download(got.data(), n);
  EXPECT_EQ(got, poison);
  gone = std::move(taken);  // assigned again, it is a whole buffer
  EXPECT_EQ(gone.shard_count(), 1);
  gone.upload(poison.data(), n);
}

// 16-bit sharded arrays: the ops, and ew::convert between sharded arrays, give the plain
// calls' bits.
TEST_P(Sharded, Storage16OpsAndConvertGiveThePlainCallsBits) {
  Context ctx(GetParam());
  const std::size_t n = 100003;
  const std::vector<float> f = random_vector<float>(n);
  ShardedBuffer<float> sf(ctx, n), back(ctx, n);
  ShardedBuffer<bfloat16> sb(ctx, n), sc(ctx, n);
  sf.upload(f.data(), n);
  ew::convert<float, bfloat16>(ctx, sf, sb);
  ew::triad<bfloat16>(ctx, sb, 0.75f, sb, sc);
  ew::convert<bfloat16, float>(ctx, sc, back);
  ctx.synchronize();
  std::vector<bfloat16> b(n), c(n);
  std::vector<float> want(n), got(n);
  ew::convert<float, bfloat16>(ctx, f, b);
  ew::triad<bfloat16>(ctx, b, 0.75f, b, c);
  ew::convert<bfloat16, float>(ctx, c, want);
  back.download(got.data(), n);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), n * sizeof(float)), 0);
  ShardedBuffer<half> shorter(ctx, n - 1);
  expect_error(Errc::size_mismatch, [&] { ew::convert<float, half>(ctx, sf, shorter); }, "ew::convert: in has");
}

INSTANTIATE_TEST_SUITE_P(scalar, Sharded, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, Sharded, testing::Values(Backend::highway));

}  // namespace
}  // namespace ew::test
