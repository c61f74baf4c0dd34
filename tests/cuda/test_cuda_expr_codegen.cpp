// Expressions on cuda without a GPU: the generated source of every opcode, of dtype
// mixes (16-bit data included), of several outputs and of random expressions (tests/expr's generator) compiles
// with NVRTC itself to a cubin for sm_90 (compiling needs no GPU); the disk cache (miss,
// hit, corrupt and foreign files, two processes writing at once); a missing NVRTC and a
// compile error give their clear errors. Runs where NVRTC can be loaded (CI has the
// toolkit); skips with the reason elsewhere.
#include <dlfcn.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>

#include "bulk_tiles.hpp"
#include "codegen.hpp"
#include "expr/expr_gen.hpp"
#include "expr.hpp"
#include "expr_cache.hpp"
#include "expr_launch_tuning.hpp"
#include "ew/ew.hpp"
#include "ew_internal/program.hpp"
#include "nvrtc.hpp"

namespace ew::detail::cuda {
namespace {

constexpr int kArch = 90;  // every GPU the benchmarks name; compiling needs none

#define EW_NEED_NVRTC()                                                              \
  do {                                                                               \
    if (!Nvrtc::instance().loaded()) GTEST_SKIP() << Nvrtc::instance().why_not();    \
  } while (0)

bool slots_read_empty(const Kernel& k) { return test::slots_read(k).empty(); }

// Compiles the fused reduction kernel of `k` (one output); returns the NVRTC error, or empty.
std::string compile_reduce(const Kernel& k) {
  try {
    const ExprReduceKernelSource s = generate_expr_reduce_kernel(k.program());
    const std::string cubin = Nvrtc::instance().compile_cubin(s.text, "ew_expr_reduce.cu", kArch);
    if (cubin.find(kExprReduceKernelName) == std::string::npos) return "the cubin lacks the reduction kernel's name";
  } catch (const Error& e) {
    return std::string(e.what()) + "\nexpression (reduced):\n" + k.str();
  }
  return {};
}

// Compiles both alignment cases of `k`; returns the NVRTC error, or empty.
std::string compile_both(const Kernel& k) {
  for (ExprAlignment a : {ExprAlignment::aligned, ExprAlignment::any}) {
    const ExprKernelSource s = generate_expr_kernel(k.program(), a);
    try {
      const std::string cubin = Nvrtc::instance().compile_cubin(s.text, "ew_expr.cu", kArch);
      if (cubin.size() < 4 || cubin.compare(0, 4, "\x7f" "ELF") != 0) return "the cubin is not an ELF file";
      if (cubin.find(kExprKernelName) == std::string::npos) return "the cubin lacks the kernel's name";
      if (s.has_bulk && cubin.find(kExprBulkKernelName) == std::string::npos) return "the cubin lacks the bulk-copy kernel";
      if (s.has_bulk != (a == ExprAlignment::aligned && k.inputs() > 0 && !slots_read_empty(k)))
        return "the bulk-copy kernel is where it should not be, or missing";
    } catch (const Error& e) {
      return std::string(e.what()) + "\nexpression:\n" + k.str();
    }
  }
  // A kernel of one output that reads an input can be reduced over: its fused kernel too.
  if (k.outputs() == 1 && !slots_read_empty(k)) return compile_reduce(k);
  return {};
}

TEST(CudaExprCodegen, EveryOpcodeInBothDtypesCompiles) {
  EW_NEED_NVRTC();
  for (DType t : {DType::f32, DType::f64}) {
    const Expr x = input(0, t), y = input(1, t), z = input(2, t), s = param(0, t);
    const Expr other = t == DType::f32 ? cast<float>(input(3, DType::f64)) : cast<double>(input(3, DType::f32));
    const std::vector<Expr> outputs = {
        -x + ew::abs(y) * ew::sqrt(z) - ew::floor(x) / ew::ceil(y) + ew::trunc(z) + ew::round(x),
        ew::exp(x) + ew::log(y) + ew::tanh(z) + ew::sigmoid(s),
        ew::min(x, y) + ew::max(y, z) + (x < y) + (x <= y) + (x > y) + (x >= y) + (x == y) + (x != y),
        ew::fma(x, y, z) + ew::select(x - y, s, Expr(2.5)) + other * 0.5,
    };
    const Kernel k = compile(outputs);
    std::set<std::string> ops;
    for (const Instr& in : k.program().code) ops.insert(to_string(in.op));
    EXPECT_EQ(ops.size(), static_cast<std::size_t>(opcode_count)) << k.str();
    const std::string error = compile_both(k);
    EXPECT_TRUE(error.empty()) << error;
  }
}

TEST(CudaExprCodegen, DtypeMixesAndEightOutputsCompile) {
  EW_NEED_NVRTC();
  const Expr a = input(0, DType::f32), b = input(1, DType::f64), c = input(15, DType::f32);
  std::vector<Expr> outputs;
  for (int k = 0; k < max_expr_outputs; ++k) {
    const Expr e = k % 2 ? cast<double>(a) * b + param(k % max_expr_params, DType::f64) : a * cast<float>(b) - c;
    outputs.push_back(k == 0 ? Expr(a) : e + Expr(k));
  }
  const Kernel k = compile(outputs);
  EXPECT_EQ(k.outputs(), max_expr_outputs);
  const std::string error = compile_both(k);
  EXPECT_TRUE(error.empty()) << error;
  // Only doubles: groups of two elements (one double2 per operand).
  const Expr d = input(0, DType::f64);
  EXPECT_EQ(expr_group(compile({d * 2.0}).program()), 2);
  EXPECT_EQ(expr_group(k.program()), 4);
  // No input at all: the kernel writes a param everywhere.
  const std::string no_inputs = compile_both(compile({param(0, DType::f32) * 2.0f}));
  EXPECT_TRUE(no_inputs.empty()) << no_inputs;
}

// 16-bit data: every opcode on f16 and on bf16 nodes (computed in float), casts to and
// from both types (from f64 straight), 16-bit params, and kernels that read one storage
// type and write another; groups of 8 elements, moved as one 16-byte uint4 per operand.
TEST(CudaExprCodegen, SixteenBitKernelsCompile) {
  EW_NEED_NVRTC();
  for (DType t : storage16_dtypes) {
    const Expr x = input(0, t), y = input(1, t), z = input(2, t), s = param(0, t);
    const DType other = t == DType::f16 ? DType::bf16 : DType::f16;
    const std::vector<Expr> outputs = {
        -x + ew::abs(y) * ew::sqrt(z) - ew::floor(x) / ew::ceil(y) + ew::trunc(z) + ew::round(x),
        ew::exp(x) + ew::log(y) + ew::tanh(z) + ew::sigmoid(s),
        ew::min(x, y) + ew::max(y, z) + (x < y) + (x <= y) + (x > y) + (x >= y) + (x == y) + (x != y),
        ew::fma(x, y, z) + ew::select(x - y, s, Expr(2.5)) + cast(input(3, DType::f64), t) * 0.5,
        cast<float>(x) * cast<float>(cast(x * y, t)) + cast<float>(input(4, other)),
        cast(input(5, DType::f32) * 3, t) + cast(cast<double>(x), t),
        cast(x * input(4, other), other),
    };
    const Kernel k = compile(outputs);
    std::set<std::string> ops;
    for (const Instr& in : k.program().code) ops.insert(to_string(in.op));
    EXPECT_EQ(ops.size(), static_cast<std::size_t>(opcode_count)) << k.str();
    EXPECT_EQ(expr_group(k.program()), 8);
    const std::string error = compile_both(k);
    EXPECT_TRUE(error.empty()) << error;
    const std::string text = generate_expr_kernel(k.program(), ExprAlignment::aligned).text;
    EXPECT_NE(text.find("load<G>(x0[u], in0 + i, true)"), std::string::npos) << "16-byte loads of 8 halves";
    EXPECT_NE(text.find("ew_from_float_" + std::string(to_string(t))), std::string::npos);
    EXPECT_NE(text.find("ew_from_double_" + std::string(to_string(t))), std::string::npos) << "f64 rounds once";
  }
  // bf16 in, f32 out; f32 in, bf16 out; f16 in, f64 out.
  for (const Expr& e : {cast<float>(input<bfloat16>(0)) * 2.0f, cast<bfloat16>(input<float>(0) + 1),
                        cast<double>(input<half>(0)) / 3.0}) {
    const Kernel k = compile({e});
    EXPECT_EQ(expr_group(k.program()), 8) << k.str();
    const std::string error = compile_both(k);
    EXPECT_TRUE(error.empty()) << error;
  }
}

// The random expressions of the expression suite (trees, DAGs, up to depth 8, mixed
// dtypes, 1-2 outputs), each compiled in both alignment cases. EW_EXPR_CODEGEN_CASES
// sets the count (CI: the default).
TEST(CudaExprCodegen, RandomExpressionsCompile) {
  EW_NEED_NVRTC();
  int cases = 120;
  if (const char* n = std::getenv("EW_EXPR_CODEGEN_CASES")) cases = std::atoi(n);
  const auto start = std::chrono::steady_clock::now();
  for (int c = 0; c < cases; ++c) {
    const std::uint64_t seed = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(c + 1);
    test::ExprGenerator gen(seed);
    const test::GeneratedCase g = gen.next();
    const Kernel k = compile(g.outputs);
    const std::string error = compile_both(k);
    ASSERT_TRUE(error.empty()) << "case seed " << seed << ": " << error;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%d random expressions, both alignment cases: %.2f s (%.0f ms a kernel)\n", cases, seconds,
              cases ? seconds * 1000 / (2 * cases) : 0.0);
}

// The fused reductions (sum or asum of one output): every opcode, in outputs of every
// dtype; the rows in flight follow the inputs' bytes; several outputs are refused.
TEST(CudaExprCodegen, ReductionKernelsCompile) {
  EW_NEED_NVRTC();
  for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
    const Expr x = input(0, t), y = input(1, t), z = input(2, t), s = param(0, t);
    for (const Expr& e : {-x + ew::abs(y) * ew::sqrt(z) - ew::floor(x) / ew::ceil(y) + ew::trunc(z) + ew::round(x),
                          ew::exp(x) + ew::log(y) + ew::tanh(z) + ew::sigmoid(s),
                          ew::min(x, y) + ew::max(y, z) + (x < y) + (x <= y) + (x > y) + (x >= y) + (x == y) + (x != y),
                          ew::fma(x, y, z) + ew::select(x - y, s, Expr(2.5)) + cast(input(3, DType::f64), t) * 0.5}) {
      const Kernel k = compile({e});
      const std::string error = compile_reduce(k);
      EXPECT_TRUE(error.empty()) << error;
    }
  }
  const Kernel sq = compile({(input<float>(0) - input<float>(1)) * (input<float>(0) - input<float>(1))});
  const ExprReduceKernelSource s = generate_expr_reduce_kernel(sq.program());
  EXPECT_EQ(s.rows, 16) << "two floats: 8 bytes a row, 16 rows";
  EXPECT_NE(s.text.find("x0[u] = __ldcs(in0 + i)"), std::string::npos);
  EXPECT_EQ(s.text.find('@'), std::string::npos) << "a placeholder of the skeleton was left";
  EXPECT_EQ(generate_expr_reduce_kernel(compile({input<double>(0) * input<double>(1)}).program()).rows, 8);
  EXPECT_THROW(generate_expr_reduce_kernel(compile({input<float>(0), input<float>(1)}).program()), Error);
}

TEST(CudaExprCodegen, ConstantsKeepTheirBits) {
  const Kernel k = compile({input(0, DType::f32) + Expr(-0.0f), input(1, DType::f64) * Expr(0.1)});
  const std::string s = generate_expr_kernel(k.program(), ExprAlignment::aligned).text;
  EXPECT_NE(s.find("__int_as_float(0x80000000u)"), std::string::npos) << "-0.0f";
  EXPECT_NE(s.find("__longlong_as_double(0x3fb999999999999aull)"), std::string::npos) << "0.1";
  EXPECT_EQ(s.find('@'), std::string::npos) << "a placeholder of the skeleton was left";
}

// A cast of a comparison is the comparison in the cast's type, never a conversion of its
// 0 or 1 (ptxas 12.9 and 13.0 miscompiled that conversion: codegen.cpp, comparison()).
TEST(CudaExprCodegen, CastOfAComparisonIsTheComparisonInTheCastsType) {
  const Expr a = input<double>(0), b = input<double>(1), h = input(2, DType::f16);
  const Kernel k = compile({cast<float>(a >= b), cast(a < b, DType::bf16), cast<double>(h != h)});
  const std::string s = generate_expr_kernel(k.program(), ExprAlignment::any).text;
  EXPECT_NE(s.find("const float r3 = (r0 >= r1 ? float(1) : float(0));  // cast"), std::string::npos) << s;
  EXPECT_NE(s.find("const float r5 = (r0 < r1 ? float(1) : float(0));  // cast"), std::string::npos) << s;
  EXPECT_NE(s.find("const double r8 = (r6 != r6 ? double(1) : double(0));  // cast"), std::string::npos) << s;
  EXPECT_EQ(s.find("static_cast<float>(r2)"), std::string::npos) << s;
}

// The expression kernel's bulk tiles' bytes in flight follow the bandwidth per SM: cub's
// 48 KiB at an H100's, more on an H200, never below 48 KiB or above 96 KiB, 48 KiB when the
// peak is unknown; the expression tuning hook refuses what it cannot mean.
TEST(CudaExprLaunch, BulkBytesInFlightFollowTheBandwidthPerSm) {
  EXPECT_EQ(default_bulk_bytes_in_flight(3352e9, 132), std::size_t(48) << 10);   // H100 SXM
  EXPECT_EQ(default_bulk_bytes_in_flight(2.0 * 2619e6 * 5120 / 8, 132), std::size_t(48) << 10);  // as it reports itself
  EXPECT_EQ(default_bulk_bytes_in_flight(4814e9, 132), std::size_t(69) << 10);   // H200
  EXPECT_EQ(default_bulk_bytes_in_flight(1555e9, 108), std::size_t(48) << 10);   // A100 40GB: the floor
  EXPECT_EQ(default_bulk_bytes_in_flight(8000e9, 132), std::size_t(96) << 10);   // the ceiling
  EXPECT_EQ(default_bulk_bytes_in_flight(0, 132), std::size_t(48) << 10);
  EXPECT_EQ(default_bulk_bytes_in_flight(4814e9, 0), std::size_t(48) << 10);
  const ExprLaunchTuning refused[] = {{2, 0}, {-2, 0}, {0, std::size_t(229) << 10}};
  for (const ExprLaunchTuning& bad : refused) {
    try {
      set_expr_launch_tuning(bad);
      ADD_FAILURE() << "accepted bulk " << bad.bulk << ", " << bad.bulk_bytes_in_flight_per_sm << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
    }
  }
  set_expr_launch_tuning({});
}

TEST(CudaNvrtc, CompileErrorIsDeviceErrorWithTheLog) {
  EW_NEED_NVRTC();
  try {
    Nvrtc::instance().compile_cubin("extern \"C\" __global__ void k() { undeclared_thing = 1; }", "broken.cu", kArch);
    FAIL() << "broken source compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::device_error);
    EXPECT_NE(std::string(e.what()).find("undeclared_thing"), std::string::npos) << e.what();
  }
}

// An architecture this NVRTC does not know (a GPU newer than the toolkit) is no code
// generator bug: backend_unavailable, naming the NVRTC and the architecture.
TEST(CudaNvrtc, AnArchitectureNvrtcDoesNotKnowIsUnavailable) {
  EW_NEED_NVRTC();
  try {
    Nvrtc::instance().compile_cubin("extern \"C\" __global__ void k() {}", "k.cu", 9990);
    FAIL() << "compiled for sm_9990";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find("refuses the options for sm_9990"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(Nvrtc::instance().path()), std::string::npos) << e.what();
  }
}

// The disk cache's key holds the loaded library's resolved file and size beside its
// major.minor, so that a toolkit update within the same version compiles anew.
TEST(CudaNvrtc, BuildNamesTheResolvedFileAndItsSize) {
  EW_NEED_NVRTC();
  const std::string& b = Nvrtc::instance().build();
  const std::size_t comma = b.rfind(", ");
  ASSERT_NE(comma, std::string::npos) << b;
  const std::string file = b.substr(0, comma);
  EXPECT_EQ(file.front(), '/') << b;
  EXPECT_NE(file.find("nvrtc"), std::string::npos) << b;
  struct stat st {};
  ASSERT_EQ(::lstat(file.c_str(), &st), 0) << b;
  EXPECT_TRUE(S_ISREG(st.st_mode)) << b;  // resolved: no symbolic link left
  EXPECT_EQ(b.substr(comma + 2), std::to_string(st.st_size) + " bytes");
  const std::string key = expr_disk_key("extern \"C\" __global__ void k() {}", kArch);
  EXPECT_NE(key.find("nvrtc " + Nvrtc::instance().version_string() + " (" + b + ")"), std::string::npos) << key;
}

TEST(CudaNvrtc, MissingNvrtcSaysWhereItLooked) {
  const char* old = std::getenv("EW_NVRTC");
  const std::string saved = old ? old : "";
  setenv("EW_NVRTC", "/nonexistent/libnvrtc.so.13", 1);
  const std::vector<std::string> candidates = Nvrtc::default_candidates();
  if (old) setenv("EW_NVRTC", saved.c_str(), 1);
  else unsetenv("EW_NVRTC");
  ASSERT_EQ(candidates, std::vector<std::string>{"/nonexistent/libnvrtc.so.13"});
  const Nvrtc n = Nvrtc::load(candidates, "EW_NVRTC names the file");
  EXPECT_FALSE(n.loaded());
  try {
    n.compile_cubin("", "x.cu", kArch);
    FAIL() << "compiled without NVRTC";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable);
    const std::string m = e.what();
    EXPECT_NE(m.find("NVRTC"), std::string::npos) << m;
    EXPECT_NE(m.find("not found"), std::string::npos) << m;
    EXPECT_NE(m.find("/nonexistent/libnvrtc.so.13"), std::string::npos) << m;
    EXPECT_NE(m.find("EW_NVRTC"), std::string::npos) << m;
  }
  // The default list names the toolkit's directory after the loader's own search.
  unsetenv("EW_NVRTC");
  const std::vector<std::string> usual = Nvrtc::default_candidates();
  if (old) setenv("EW_NVRTC", saved.c_str(), 1);
  ASSERT_GE(usual.size(), 2u);
  EXPECT_EQ(usual[0].rfind("libnvrtc.so.", 0), 0u) << usual[0];
  EXPECT_NE(usual[1].find("/libnvrtc.so."), std::string::npos) << usual[1];
}

// An NVRTC that cannot use its builtins library is unavailable, not a bug of the generator:
// the error says which library and where NVRTC looks for it. Here the library NVRTC gets is
// one with the builtins' soname and none of their contents, loaded before the first compile
// (NVRTC loads its builtins then) in a new process.
int compile_with_unusable_builtins() {
  if (!dlopen(EW_FAKE_NVRTC_BUILTINS, RTLD_NOW | RTLD_GLOBAL)) return 2;
  const Nvrtc& n = Nvrtc::instance();
  try {
    const Kernel k = compile({input<float>(0) + input<float>(1)});
    n.compile_cubin(generate_expr_kernel(k.program(), ExprAlignment::aligned).text, "ew_expr.cu", kArch);
    return 3;  // compiled
  } catch (const Error& e) {
    const std::string m = e.what();
    if (e.code() != Errc::backend_unavailable) return 4;
    if (m.find("its builtins library (libnvrtc-builtins[.alt].so." EW_FAKE_NVRTC_BUILTINS_VERSION) == std::string::npos ||
        m.find("LD_LIBRARY_PATH") == std::string::npos || m.find(n.path()) == std::string::npos) {
      std::fprintf(stderr, "%s\n", m.c_str());
      return 5;
    }
  }
  return 0;
}

TEST(CudaNvrtc, BuiltinsItCannotUseMakeItUnavailable) {
  EW_NEED_NVRTC();
  if (Nvrtc::instance().version_string() != EW_FAKE_NVRTC_BUILTINS_VERSION)
    GTEST_SKIP() << "the test's stand-in builtins are those of NVRTC " EW_FAKE_NVRTC_BUILTINS_VERSION ", this NVRTC is "
                 << Nvrtc::instance().version_string();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // a process whose NVRTC has compiled nothing yet
  EXPECT_EXIT(std::_Exit(compile_with_unusable_builtins()), ::testing::ExitedWithCode(0), "");
}

// A fresh directory per test, removed afterwards.
class CudaExprCache : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/ew_expr_cache_test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = std::string(pattern) + "/nested/elementwise";  // created by the first store
  }
  void TearDown() override {
    const std::string root = dir_.substr(0, dir_.find("/nested"));
    std::filesystem::remove_all(root);
  }
  std::string dir_;
};

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST_F(CudaExprCache, MissThenHit) {
  std::string got = "untouched";
  EXPECT_FALSE(expr_cache_load(dir_, "key one", got));
  EXPECT_EQ(got, "untouched");
  ASSERT_TRUE(expr_cache_store(dir_, "key one", "cubin bytes\0with a zero"));
  ASSERT_TRUE(expr_cache_load(dir_, "key one", got));
  EXPECT_EQ(got, std::string("cubin bytes\0with a zero"));
  EXPECT_FALSE(expr_cache_load(dir_, "key two", got)) << "another key (another version) is a miss";
  // No temporary file is left behind.
  const std::string listing = dir_ + "/*.tmp.*";
  EXPECT_NE(std::system(("ls " + listing + " >/dev/null 2>&1").c_str()), 0);
}

TEST_F(CudaExprCache, CorruptFilesAreIgnoredAndRebuilt) {
  const std::string key = "elementwise 1.0\nnvrtc 13.0\ndriver 13000\nsource ...", payload(5000, 'c');
  ASSERT_TRUE(expr_cache_store(dir_, key, payload));
  const std::string file = expr_cache_file(dir_, key), good = file_bytes(file);
  std::string got;
  auto damaged = [&](std::string bytes) {
    write_bytes(file, bytes);
    got = "untouched";
    return !expr_cache_load(dir_, key, got) && got == "untouched";
  };
  std::string flipped = good;
  flipped[good.size() - 10] ^= 1;
  EXPECT_TRUE(damaged(flipped)) << "a flipped payload bit";
  EXPECT_TRUE(damaged(good.substr(0, good.size() - 1))) << "a truncated file (torn write)";
  EXPECT_TRUE(damaged(good + "x")) << "a longer file";
  EXPECT_TRUE(damaged("")) << "an empty file";
  EXPECT_TRUE(damaged(std::string(200, '\xff'))) << "garbage";
  std::string magic = good;
  magic[0] = 'X';
  EXPECT_TRUE(damaged(magic)) << "another format";
  // A header whose sizes wrap around 2^64 to the file's size: refused before anything is
  // allocated for them (it once threw std::length_error out of the call).
  std::string wrapped = good.substr(0, 40);
  const std::uint64_t huge = 0 - static_cast<std::uint64_t>(key.size());
  std::memcpy(&wrapped[24], &huge, 8);
  EXPECT_TRUE(damaged(wrapped)) << "sizes that wrap";
  // A file written for another key under this key's name (a hash collision).
  const std::string other = "elementwise 0.9\nnvrtc 12.8\ndriver 12080\nsource ...";
  ASSERT_TRUE(expr_cache_store(dir_, other, payload));
  EXPECT_TRUE(damaged(file_bytes(expr_cache_file(dir_, other)))) << "another key's file";
  // Rebuilt: the next store replaces the bad file.
  ASSERT_TRUE(expr_cache_store(dir_, key, payload));
  ASSERT_TRUE(expr_cache_load(dir_, key, got));
  EXPECT_EQ(got, payload);
}

// Something else where the file goes: not read (a FIFO would block an open for reading).
TEST_F(CudaExprCache, AFifoWhereTheFileGoesIsAMiss) {
  ASSERT_TRUE(expr_cache_store(dir_, "key", "payload"));
  const std::string file = expr_cache_file(dir_, "key");
  ASSERT_EQ(std::remove(file.c_str()), 0);
  ASSERT_EQ(mkfifo(file.c_str(), 0600), 0);
  std::string got = "untouched";
  EXPECT_FALSE(expr_cache_load(dir_, "key", got));
  EXPECT_EQ(got, "untouched");
}

// A cache file runs as machine code in the process that loads it: one that another user
// owns, or that others may write, is a miss (and the next store replaces it).
TEST_F(CudaExprCache, AFileOthersCouldHaveWrittenIsAMiss) {
  ASSERT_TRUE(expr_cache_store(dir_, "key", "payload"));
  const std::string file = expr_cache_file(dir_, "key");
  std::string got;
  ASSERT_TRUE(expr_cache_load(dir_, "key", got));
  for (mode_t writable : {mode_t(0620), mode_t(0602)}) {
    ASSERT_EQ(chmod(file.c_str(), writable), 0);
    got = "untouched";
    EXPECT_FALSE(expr_cache_load(dir_, "key", got)) << "mode " << std::oct << writable;
    EXPECT_EQ(got, "untouched");
  }
  ASSERT_TRUE(expr_cache_store(dir_, "key", "payload"));
  ASSERT_TRUE(expr_cache_load(dir_, "key", got));
  EXPECT_EQ(got, "payload");
  if (geteuid() != 0) return;  // only root can give a file away
  ASSERT_EQ(chown(file.c_str(), 12345, 12345), 0);
  got = "untouched";
  EXPECT_FALSE(expr_cache_load(dir_, "key", got)) << "a file of uid 12345";
  EXPECT_EQ(got, "untouched");
}

TEST_F(CudaExprCache, UnwritableDirectoryIsNotAnError) {
  EXPECT_FALSE(expr_cache_store("/proc/ew_cannot_be_here", "k", "v"));
  std::string got;
  EXPECT_FALSE(expr_cache_load("/proc/ew_cannot_be_here", "k", got));
  EXPECT_FALSE(expr_cache_load("", "k", got));
}

TEST_F(CudaExprCache, DirectoryFromTheEnvironment) {
  const char* names[] = {"EW_CACHE_DIR", "XDG_CACHE_HOME", "HOME"};
  std::string saved[3];
  bool had[3];
  for (int k = 0; k < 3; ++k) {
    const char* v = std::getenv(names[k]);
    had[k] = v != nullptr, saved[k] = v ? v : "";
  }
  setenv("HOME", "/home/someone", 1);
  unsetenv("EW_CACHE_DIR");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(expr_cache_dir(), "/home/someone/.cache/elementwise");
  setenv("XDG_CACHE_HOME", "/xdg", 1);
  EXPECT_EQ(expr_cache_dir(), "/xdg/elementwise");
  setenv("EW_CACHE_DIR", "/mine", 1);
  EXPECT_EQ(expr_cache_dir(), "/mine");
  for (int k = 0; k < 3; ++k)
    if (had[k]) setenv(names[k], saved[k].c_str(), 1);
    else unsetenv(names[k]);
}

// Two processes store the same key (one payload each, of different lengths) over and
// over while a third reads: every read finds no file or one whole payload, never a mix.
TEST_F(CudaExprCache, TwoProcessesWritingAtOnce) {
  const std::string key = "a key both processes compile";
  const std::string payload[2] = {std::string(300000, 'a'), std::string(200000, 'b')};
  pid_t writers[2];
  for (int w = 0; w < 2; ++w) {
    writers[w] = fork();
    ASSERT_GE(writers[w], 0);
    if (writers[w] == 0) {
      bool ok = true;
      for (int k = 0; k < 200; ++k) ok = expr_cache_store(dir_, key, payload[w]) && ok;
      _exit(ok ? 0 : 1);
    }
  }
  int hits = 0, bad = 0;
  for (int k = 0; k < 2000; ++k) {
    std::string got;
    if (expr_cache_load(dir_, key, got)) {
      ++hits;
      if (got != payload[0] && got != payload[1]) ++bad;
    }
  }
  for (pid_t w : writers) {
    int status = 0;
    waitpid(w, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed to store";
  }
  EXPECT_EQ(bad, 0);
  std::string got;
  ASSERT_TRUE(expr_cache_load(dir_, key, got));
  EXPECT_TRUE(got == payload[0] || got == payload[1]);
  std::printf("%d of 2000 reads hit while two processes wrote\n", hits);
}

}  // namespace
}  // namespace ew::detail::cuda
