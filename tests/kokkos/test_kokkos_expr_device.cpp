// The walk that runs expressions on a Kokkos device space (backends/kokkos/expr_device.hpp),
// run here on Kokkos' host execution space, so that machines without a GPU check it too:
// random programs (tests/expr's generator, 16-bit data included), operands at different alignments, several
// threads over groups, head and tail, one-dtype programs of up to 16 live values and
// programs with many live values, in every shape (lanes: groups of elements in lockstep;
// inline: program in the functor, register file per thread; general: program and
// registers in Views), bit for bit against the scalar backend, outputs poisoned first and
// checked untouched outside their range, each call checked to take the walk the rules name.
// On a GPU build of Kokkos the walks also run on the GPU (WalksOnTheGpu), and the shared
// suite's kokkos/* cases run the chosen shape there through the public API.
#include <Kokkos_Core.hpp>

#include <cstring>

#include "expr/expr_gen.hpp"
#include "expr_device.hpp"

namespace ew::test {
namespace {

struct Outcome {
  std::string mismatch;  // empty: every element matched, and the walk the rules name ran
  bool inline_shape = false;  // the inline shape would take it (the walks aside)
  bool lanes = false;  // the lane walk took it
  bool tiles = false;  // the tile walk took it (asked for where the SMs hold it, or the device's default)
};

// A switch, not a table in the enum's order: a walk added to the enum warns here (-Wswitch).
const char* walk_name(detail::kokkos::Walked w) {
  switch (w) {
    case detail::kokkos::Walked::none: return "none";
    case detail::kokkos::Walked::tiles: return "tiles";
    case detail::kokkos::Walked::lanes: return "lanes";
    case detail::kokkos::Walked::per_element: return "per_element";
    case detail::kokkos::Walked::general: return "general";
  }
  return "?";
}

// The operands where Exec reaches them: host arrays themselves where Exec reads host memory; on
// Cuda, copies in managed memory, which the host fills, and for outputs reads back (`back`).
template <class Exec>
struct Reachable {
  static constexpr bool host = Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
#if defined(KOKKOS_ENABLE_CUDA)
  using Copy = Kokkos::View<char*, Kokkos::CudaUVMSpace>;
  std::vector<Copy> copies;  // every operand's, alive until the walk is done
  // An output's elements (its vector's buffer, which a move of the HostArray keeps) and its copy.
  std::vector<std::pair<void*, Copy>> outputs;
#endif
  // a's element `shift`: other alignments than the allocator's, different ones per operand.
  char* at(HostArray& a, int shift, bool output) {
    const std::size_t offset = shift * size_of(a.dtype);
    if constexpr (host) {
      (void)output;
      return static_cast<char*>(a.data()) + offset;
    } else {
#if defined(KOKKOS_ENABLE_CUDA)
      const std::size_t bytes = a.size() * size_of(a.dtype);
      const Copy copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ew test operand"), bytes);
      std::memcpy(copy.data(), a.data(), bytes);
      copies.push_back(copy);
      if (output) outputs.emplace_back(a.data(), copy);
      return copy.data() + offset;
#else
      static_assert(host, "device operands are written for Cuda");
#endif
    }
  }
  void back() {
#if defined(KOKKOS_ENABLE_CUDA)
    for (auto& [elements, copy] : outputs) std::memcpy(elements, copy.data(), copy.extent(0));
#endif
  }
};

// The walks on Exec: Kokkos' host space (every machine) or the GPU of a Cuda build.
template <class Exec = Kokkos::DefaultHostExecutionSpace>
Outcome walk_and_compare(const GeneratedCase& g, std::size_t n, std::mt19937_64& engine, detail::kokkos::DeviceShape shape,
                         std::int64_t max_threads = 0, bool misalign = false, unsigned long long* queue = nullptr) {
  const Exec exec;
  Reachable<Exec> reach;
  const Kernel k = compile(g.outputs);
  CallData c;
  c.n = n;
  c.params.assign(g.params.begin(), g.params.begin() + k.params());
  for (int s = 0; s < k.inputs(); ++s) c.inputs.push_back(random_array(engine, g.input_dtype[s], n, 0.02));
  const std::vector<HostArray> want = reference_outputs(k, c);

  std::uniform_int_distribution<int> pick_shift(0, misalign ? 3 : 0);
  detail::ExprCall call{};
  call.program = &k.program();
  call.n = n;
  std::vector<HostArray> in;
  in.reserve(k.inputs());
  for (int s = 0; s < k.inputs(); ++s) {
    const int shift = pick_shift(engine);
    in.emplace_back(c.inputs[s].dtype, n + 3);
    copy_elements(c.inputs[s], 0, in.back(), static_cast<std::size_t>(shift), n);
    call.inputs[s] = reach.at(in.back(), shift, false);
  }
  // What Kernel::run hands a backend: each param rounded once to its dtype.
  for (int p = 0; p < k.params(); ++p) {
    HostArray one(k.program().param_dtype[p], 1);
    one.set(0, c.params[p]);
    call.params[p] = one.get(0);
  }
  std::vector<HostArray> got;
  std::vector<int> out_shift;
  for (int o = 0; o < k.outputs(); ++o) {
    got.emplace_back(k.output_dtype(o), n + 3);
    for (std::size_t i = 0; i < n + 3; ++i) got.back().set_poison(i);
    out_shift.push_back(pick_shift(engine));
  }
  for (int o = 0; o < k.outputs(); ++o) call.outputs[o] = reach.at(got[o], out_shift[o], true);

  const detail::kokkos::DevicePlan plan = detail::kokkos::plan_for_device(call);
  const detail::kokkos::DevicePlan lane_plan = detail::kokkos::plan_for_device(call, true);
  Outcome out;
  bool one_dtype = true;
  for (const auto& instr : k.program().code) one_dtype = one_dtype && instr.dtype == k.program().code[0].dtype;
  one_dtype = one_dtype && !is_storage16(k.program().code[0].dtype);  // 16-bit data takes the other shapes
  const bool walks = (shape == detail::kokkos::DeviceShape::chosen || shape == detail::kokkos::DeviceShape::tiles) &&
                     one_dtype && lane_plan.code.size() <= std::size_t(detail::kokkos::inline_instructions) &&
                     lane_plan.registers <= detail::kokkos::inline_registers;
  // The tile walk where asked for and the device holds its blocks, or by the device's default.
  const detail::kokkos::LanePlan walk = detail::kokkos::plan_for_lanes(lane_plan);
  out.tiles = walks && walk.registers <= 2 &&
              ((shape == detail::kokkos::DeviceShape::tiles && detail::kokkos::tiles_run_on(exec)) ||
               detail::kokkos::tiles_by_default(exec, k.program(), walk));
  out.lanes = walks && !out.tiles;
  out.inline_shape = shape != detail::kokkos::DeviceShape::general &&
                     plan.code.size() <= std::size_t(detail::kokkos::inline_instructions) &&
                     plan.registers <= detail::kokkos::inline_registers;
  using detail::kokkos::Walked;
  const Walked expected = out.tiles ? Walked::tiles
                          : out.lanes ? Walked::lanes
                          : out.inline_shape ? Walked::per_element
                                             : Walked::general;
  const Walked ran = detail::kokkos::run_expr_per_element(exec, call, shape, max_threads, queue);
  exec.fence();
  reach.back();
  if (ran != expected) {
    out.mismatch = std::string("the ") + walk_name(ran) + " walk ran, not " + walk_name(expected) + "\n" +
                   describe(k, c);
    return out;
  }
  for (int o = 0; o < k.outputs(); ++o) {
    const int shift = out_shift[o];
    for (std::size_t i = 0; i < n + 3; ++i) {
      const bool inside = i >= std::size_t(shift) && i < n + shift;
      if (inside ? got[o].same_at(i, want[o], i - shift) : got[o].poisoned(i)) continue;
      out.mismatch = "output " + std::to_string(o) + " (shifted by " + std::to_string(shift) + ") element " +
                     std::to_string(i) + ": " + std::to_string(got[o].get(i)) +
                     (inside ? " instead of " + std::to_string(want[o].get(i - shift)) : " outside the operand") +
                     "\n" + describe(k, c);
      return out;
    }
  }
  return out;
}

using detail::kokkos::DeviceShape;

class KokkosExprPerElement : public testing::TestWithParam<DeviceShape> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::kokkos);
    context_ = std::make_unique<Context>(Backend::kokkos);  // Kokkos initialized by the library
  }
  std::unique_ptr<Context> context_;
};

TEST_P(KokkosExprPerElement, RandomProgramsMatchScalarBitForBit) {
  const DeviceShape shape = GetParam();
  int inline_cases = 0, lane_cases = 0, tile_cases = 0;
  for (std::size_t n : {std::size_t(1), std::size_t(17), std::size_t(1000), std::size_t(70001)}) {
    for (int t = 0; t < (n > 10000 ? 4 : 40); ++t) {
      const std::uint64_t seed = rng()();
      ExprGenerator gen(seed);
      const Outcome r = walk_and_compare(gen.next(), n, gen.engine(), shape);
      ASSERT_TRUE(r.mismatch.empty()) << "case seed " << seed << ", n " << n << "\n" << r.mismatch;
      inline_cases += r.inline_shape;
      lane_cases += r.lanes;
      tile_cases += r.tiles;
    }
  }
  if (shape == DeviceShape::general) EXPECT_EQ(inline_cases, 0);
  else EXPECT_GT(inline_cases, 0) << "no random program took the inline shape";
  if (shape == DeviceShape::chosen) {
    EXPECT_GT(lane_cases, 0) << "no random program took the lane walk";
  }
  if (shape == DeviceShape::tiles) {
    EXPECT_GT(tile_cases, 0) << "no random program took the tile walk";
  }
}

class KokkosExprLanes : public testing::Test {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::kokkos);
    context_ = std::make_unique<Context>(Backend::kokkos);
  }
  std::unique_ptr<Context> context_;
};

// The lane walk's edges: operands at different alignments (no 16-byte moves, or a head
// before output 0's boundary), and several threads striding over groups, head and tail.
TEST_F(KokkosExprLanes, AlignmentsAndThreadCounts) {
  int lane_cases = 0;
  for (std::int64_t threads : {1, 2, 3, 7, 64}) {
    for (std::size_t n : {std::size_t(1), std::size_t(5), std::size_t(63), std::size_t(1001)}) {
      for (int t = 0; t < 12; ++t) {
        const std::uint64_t seed = rng()();
        ExprGenerator gen(seed);
        const Outcome r = walk_and_compare(gen.next(), n, gen.engine(), DeviceShape::chosen, threads, t % 3 != 0);
        ASSERT_TRUE(r.mismatch.empty()) << "case seed " << seed << ", n " << n << ", threads " << threads << "\n"
                                        << r.mismatch;
        lane_cases += r.lanes;
      }
    }
  }
  EXPECT_GT(lane_cases, 20);
}

// One dtype and up to 16 live values: the lane walk's larger register file (5-16 values)
// as well as the smaller one, every register number read and written.
GeneratedCase one_dtype_live_values(DType t, int count) {
  GeneratedCase g;
  g.input_dtype = {t, t, t};
  g.param_dtype = {t};
  g.params = {0.375};
  const Expr a = input(0, t), b = input(1, t), c = input(2, t), s = param(0, t);
  std::vector<Expr> parts;
  for (int k = 0; k < count; ++k) {
    const Expr w(1.0 + k / 64.0);
    switch (k % 4) {
      case 0: parts.push_back(a * w); break;
      case 1: parts.push_back(sigmoid(b) - w); break;
      case 2: parts.push_back(select(a < c, c * s, max(b, w))); break;
      default: parts.push_back(ew::fma(c, w, a)); break;
    }
  }
  Expr sum = parts[0];
  for (int k = 1; k < count; ++k) sum = sum + parts[k];
  Expr product = sum;
  for (int k = count - 1; k >= 0; --k) product = product * parts[k] / (abs(parts[k]) + Expr(1.0));
  g.outputs = {product, sum - a};
  return g;
}

TEST_F(KokkosExprLanes, OneDtypeManyLiveValues) {
  int lane_cases = 0, large_files = 0;
  for (DType t : {DType::f32, DType::f64}) {
    for (int count = 2; count <= 16; ++count) {
      const std::uint64_t seed = rng()();
      ExprGenerator gen(seed);
      const GeneratedCase g = one_dtype_live_values(t, count);
      const Kernel k = compile(g.outputs);
      detail::ExprCall probe{};
      probe.program = &k.program();
      // The lane walk's own file: inputs and the results read again later.
      const int registers = detail::kokkos::plan_for_lanes(detail::kokkos::plan_for_device(probe, true)).registers;
      const Outcome r = walk_and_compare(g, 1003, gen.engine(), DeviceShape::chosen, 5, count % 2 == 1);
      ASSERT_TRUE(r.mismatch.empty()) << to_string(t) << ", " << count << " live values, case seed " << seed << "\n"
                                      << r.mismatch;
      lane_cases += r.lanes;
      large_files += r.lanes && registers > 4;
    }
  }
  EXPECT_GT(lane_cases, 10);
  EXPECT_GT(large_files, 4);
}

// The lane walk's accumulator form (plan_for_lanes): two different constants in one
// instruction (one runs as an instruction), the same constant twice, a value read through
// acc by both operands, a result read by the next instruction and again later (kept), an
// output that is the last result, one that is an earlier result, and one that is an input;
// through the lane walk and the tile walk.
TEST_F(KokkosExprLanes, AccumulatorEdges) {
  for (DType t : {DType::f32, DType::f64}) {
    const Expr a = input(0, t), b = input(1, t);
    const Expr s = a + b;
    const std::vector<std::vector<Expr>> cases = {
        {ew::fma(Expr(1.5), a, Expr(-2.25)) * Expr(1.5)},
        {ew::fma(a, Expr(2.0), Expr(3.0)), ew::fma(b, Expr(0.5), Expr(0.5))},
        {s * s},
        {s, (s * Expr(2.0)) - s, a},
        {max(min(s, Expr(0.25)), Expr(-0.25)) / (abs(s) + Expr(1.0)), b},
    };
    for (std::size_t c = 0; c < cases.size(); ++c) {
      GeneratedCase g;
      g.input_dtype = {t, t};
      g.outputs = cases[c];
      const std::uint64_t seed = rng()();
      ExprGenerator gen(seed);
      for (std::size_t n : {std::size_t(3), std::size_t(1003)}) {
        const Outcome r = walk_and_compare(g, n, gen.engine(), DeviceShape::chosen, 5, n > 100);
        ASSERT_TRUE(r.mismatch.empty()) << to_string(t) << ", case " << c << ", seed " << seed << "\n" << r.mismatch;
        EXPECT_TRUE(r.lanes) << to_string(t) << ", case " << c;
        // The same edges through the tile walk, which takes files of up to two registers (the
        // last case's file holds three: the lane walk again).
        const Outcome tiled = walk_and_compare(g, n, gen.engine(), DeviceShape::tiles, 5, n > 100);
        ASSERT_TRUE(tiled.mismatch.empty()) << to_string(t) << ", case " << c << ", tiles, seed " << seed << "\n"
                                            << tiled.mismatch;
        EXPECT_EQ(tiled.tiles, c + 1 < cases.size()) << to_string(t) << ", case " << c;
      }
    }
  }
}

// The walks of files of one and two registers (relu, silu, clamp: two groups a thread) and
// the tile walk that takes such files with a transcendental step on Cuda (asked for here),
// checked to be those files, at sizes that end inside a group and past several threads'
// strides, with head and tail, aligned and not.
TEST_F(KokkosExprLanes, OneAndTwoRegisterFiles) {
  for (DType t : {DType::f32, DType::f64}) {
    const Expr a = input(0, t), b = input(1, t), s = param(0, t);
    const std::vector<std::pair<Expr, int>> cases = {
        {max(a, Expr(0.0)), 1},
        {a * sigmoid(a), 1},
        {min(max(s * a + b, Expr(-0.5)), Expr(0.5)), 2},
        {max(a, b) * s - b, 2},
    };
    for (const auto& [expr, registers] : cases) {
      GeneratedCase g;
      g.input_dtype = {t, t};
      g.param_dtype = {t};
      g.params = {0.75};
      g.outputs = {expr};
      const Kernel k = compile(g.outputs);
      detail::ExprCall probe{};
      probe.program = &k.program();
      ASSERT_EQ(detail::kokkos::plan_for_lanes(detail::kokkos::plan_for_device(probe, true)).registers, registers)
          << to_string(t) << " " << expr.str();
      const std::uint64_t seed = rng()();
      ExprGenerator gen(seed);
      for (DeviceShape shape : {DeviceShape::chosen, DeviceShape::tiles})
        for (std::int64_t threads : {1, 3, 64})
          for (std::size_t n : {std::size_t(1), std::size_t(7), std::size_t(66), std::size_t(1001)})
            for (bool misalign : {false, true}) {
              const Outcome r = walk_and_compare(g, n, gen.engine(), shape, threads, misalign);
              ASSERT_TRUE(r.mismatch.empty()) << to_string(t) << " " << expr.str() << ", n " << n << ", threads "
                                              << threads << (shape == DeviceShape::tiles ? ", tiles" : "")
                                              << ", seed " << seed << "\n" << r.mismatch;
              EXPECT_TRUE(shape == DeviceShape::tiles ? r.tiles : r.lanes);
            }
    }
  }
}

#if defined(KOKKOS_ENABLE_CUDA)
bool queue_empty(const detail::kokkos::WalkQueue& queue) {
  unsigned long long counters[2] = {1, 1};
  if (cudaMemcpy(counters, queue.counters(), sizeof counters, cudaMemcpyDeviceToHost) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return counters[0] == 0 && counters[1] == 0;
}

// The walks on the GPU of a Cuda build: random programs in the chosen shape and with the tile
// walk asked for, and files of one and two registers at the edges (head, tail, unaligned
// operands, a few threads or the default grid), bit for bit against the scalar backend, each
// call checked to take the walk the rules name. The tile walk's warps take pieces from its
// queue from 4 fixed shares a thread up: here where 3 threads (one warp) or 160 (five warps
// in two blocks, competing for pieces) are asked for on the larger arrays; the queue's
// counters are back at zero after every call. bench/cuda/expr_check.sh runs this
// test under compute-sanitizer's memcheck and racecheck (the tile and staged walks use
// shared memory).
TEST_F(KokkosExprLanes, WalksOnTheGpu) {
  using Gpu = Kokkos::DefaultExecutionSpace;
  const detail::cuda::GpuContext gpu(Gpu().cuda_device(), nullptr, "WalksOnTheGpu");  // the backend's, held
  const detail::kokkos::WalkQueue queue(gpu.get(), Gpu().cuda_stream());
  int tile_cases = 0, lane_cases = 0;
  for (DeviceShape shape : {DeviceShape::chosen, DeviceShape::tiles}) {
    for (std::size_t n : {std::size_t(1), std::size_t(17), std::size_t(1000), std::size_t(70001)}) {
      for (int t = 0; t < (n > 10000 ? 4 : 20); ++t) {
        const std::uint64_t seed = rng()();
        ExprGenerator gen(seed);
        const Outcome r = walk_and_compare<Gpu>(gen.next(), n, gen.engine(), shape, 0, t % 2 == 1, queue.counters());
        ASSERT_TRUE(r.mismatch.empty()) << "case seed " << seed << ", n " << n << "\n" << r.mismatch;
        ASSERT_TRUE(queue_empty(queue)) << "case seed " << seed << ", n " << n;
        tile_cases += r.tiles;
        lane_cases += r.lanes;
      }
    }
  }
  for (DType t : {DType::f32, DType::f64}) {
    const Expr a = input(0, t), b = input(1, t), s = param(0, t);
    for (const Expr& expr : {a * sigmoid(a), min(max(s * a + b, Expr(-0.5)), Expr(0.5))}) {
      GeneratedCase g;
      g.input_dtype = {t, t};
      g.param_dtype = {t};
      g.params = {0.75};
      g.outputs = {expr};
      const std::uint64_t seed = rng()();
      ExprGenerator gen(seed);
      for (DeviceShape shape : {DeviceShape::chosen, DeviceShape::tiles})
        for (std::int64_t threads : {0, 3, 160})
          for (std::size_t n : {std::size_t(7), std::size_t(66), std::size_t(1001), std::size_t(65539)})
            for (bool misalign : {false, true}) {
              const Outcome r = walk_and_compare<Gpu>(g, n, gen.engine(), shape, threads, misalign, queue.counters());
              ASSERT_TRUE(r.mismatch.empty()) << to_string(t) << " " << expr.str() << ", n " << n << ", threads "
                                              << threads << (shape == DeviceShape::tiles ? ", tiles" : "")
                                              << ", seed " << seed << "\n" << r.mismatch;
              ASSERT_TRUE(queue_empty(queue)) << to_string(t) << " " << expr.str() << ", n " << n;
              tile_cases += r.tiles;
              lane_cases += r.lanes;
            }
    }
  }
  EXPECT_GT(lane_cases, 0);
  if (detail::kokkos::tiles_run_on(Gpu())) {
    EXPECT_GT(tile_cases, 0);
    // Without a context's queue the tile walk on Cuda refuses rather than walk with none.
    const Expr a = input(0, DType::f32);
    GeneratedCase g;
    g.input_dtype = {DType::f32};
    g.outputs = {a * sigmoid(a)};
    ExprGenerator gen(rng()());
    try {
      walk_and_compare<Gpu>(g, 70001, gen.engine(), DeviceShape::tiles, 0, false, nullptr);
      ADD_FAILURE() << "the tile walk ran without a queue";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::internal) << e.what();
    }
  }
}
#endif

// More live values than the inline register file holds: the general shape, every time.
TEST_P(KokkosExprPerElement, ManyLiveValues) {
  for (int count : {20, 40, 100}) {
    const std::uint64_t seed = rng()();
    ExprGenerator gen(seed);
    const Outcome r = walk_and_compare(gen.many_live_values(count), 4099, gen.engine(), GetParam());
    ASSERT_TRUE(r.mismatch.empty()) << count << " live values, case seed " << seed << "\n" << r.mismatch;
    EXPECT_FALSE(r.inline_shape);
    EXPECT_FALSE(r.lanes);
  }
}

// Where the tile walk runs by default (EW_KOKKOS_TILES 2): files of one register with a
// transcendental step, on devices fast behind each SM whose SMs hold its blocks; never else.
TEST(KokkosExprPlan, TileWalkByDefault) {
  if (EW_KOKKOS_TILES != 2) GTEST_SKIP() << "built with EW_KOKKOS_TILES " << EW_KOKKOS_TILES;
  for (DType t : {DType::f32, DType::f64}) {
    const Expr a = input(0, t), b = input(1, t);
    const std::vector<std::pair<Expr, bool>> cases = {
        {a * sigmoid(a), true}, {ew::exp(a), true}, {ew::log(abs(a) + Expr(1.0)), true}, {ew::tanh(a) * Expr(2.0), true},
        {max(a, Expr(0.0)), false}, {ew::exp(a) * b, false},  // no transcendental step; a file of two registers
    };
    for (const auto& [expr, one_register_transcendental] : cases) {
      const Kernel k = compile({expr});
      detail::ExprCall probe{};
      probe.program = &k.program();
      const detail::kokkos::LanePlan walk = detail::kokkos::plan_for_lanes(detail::kokkos::plan_for_device(probe, true));
      for (bool fast : {false, true})
        for (bool fit : {false, true}) {
          detail::kokkos::DeviceFacts facts;
          facts.fast_per_sm = fast, facts.tiles_fit = fit;
          EXPECT_EQ(detail::kokkos::tiles_by_default(facts, k.program(), walk), one_register_transcendental && fast && fit)
              << to_string(t) << " " << expr.str() << ", fast " << fast << ", fits " << fit;
        }
    }
  }
}

// Registers come back when values die: a long chain needs a handful, whatever its length.
TEST(KokkosExprPlan, RegistersFollowLiveRanges) {
  const Expr x = input<float>(0);
  Expr e = x;
  for (int k = 1; k < 300; ++k) e = e * Expr(1.0 + k / 4096.0) + x;
  const Kernel kernel = compile({e});
  detail::ExprCall call{};
  call.program = &kernel.program();
  const detail::kokkos::DevicePlan plan = detail::kokkos::plan_for_device(call);
  EXPECT_EQ(plan.code.size(), kernel.program().code.size());
  EXPECT_LE(plan.registers, 4);
}

// The lane walk's accumulator form of the benchmark's formulas: constants and params are
// operands, a result read only by the next step stays in acc, so clamp runs four steps on a
// file of its two inputs, and dot4 keeps one product (in a register its inputs freed).
TEST(KokkosExprPlan, LaneWalkKeepsOnlyWhatIsReadAgain) {
  const Expr a = input<float>(0), b = input<float>(1), c = input<float>(2), d = input<float>(3);
  const Expr s = param<float>(0), lo = param<float>(1), hi = param<float>(2);
  const Kernel clamp = compile({min(max(s * a + b, lo), hi)});
  const Kernel dot4 = compile({a * b + c * d});
  for (const Kernel* k : {&clamp, &dot4}) {
    detail::ExprCall call{};
    call.program = &k->program();
    call.params[0] = 0.75, call.params[1] = -0.5, call.params[2] = 0.5;
    const detail::kokkos::LanePlan walk = detail::kokkos::plan_for_lanes(detail::kokkos::plan_for_device(call, true));
    int kept = 0;
    for (const auto& step : walk.code) kept += step.keep;
    EXPECT_TRUE(walk.out_acc[0]);
    if (k == &clamp) {
      EXPECT_EQ(walk.code.size(), 4u);
      EXPECT_EQ(walk.registers, 2);
      EXPECT_EQ(kept, 0);
    } else {
      EXPECT_EQ(walk.code.size(), 3u);
      EXPECT_EQ(walk.registers, 4);
      EXPECT_EQ(kept, 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, KokkosExprPerElement,
                         testing::Values(DeviceShape::chosen, DeviceShape::tiles, DeviceShape::per_element,
                                         DeviceShape::general),
                         [](const testing::TestParamInfo<DeviceShape>& info) {
                           return info.param == DeviceShape::chosen        ? "chosen"
                                  : info.param == DeviceShape::tiles       ? "tiles"
                                  : info.param == DeviceShape::per_element ? "per_element"
                                                                           : "general";
                         });

}  // namespace
}  // namespace ew::test
