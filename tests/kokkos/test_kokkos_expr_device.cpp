// The per-element walk that runs expressions on a Kokkos device space
// (backends/kokkos/expr_device.hpp), run here on Kokkos' host execution space, so that
// machines without a GPU check it too: random programs (tests/expr's generator) and
// programs with many live values, in both shapes (inline: program in the functor,
// register file per thread; general: program and registers in Views), bit for bit
// against the scalar backend. On a GPU build of Kokkos the shared suite's kokkos/*
// cases run the same walk on the device through the public API.
#include <Kokkos_Core.hpp>

#include "expr/expr_gen.hpp"
#include "expr_device.hpp"

namespace ew::test {
namespace {

struct Outcome {
  std::string mismatch;  // empty: every element matched
  bool inline_shape = false;
};

Outcome walk_and_compare(const GeneratedCase& g, std::size_t n, std::mt19937_64& engine, bool force_general) {
  const Kernel k = compile(g.outputs);
  CallData c;
  c.n = n;
  c.params.assign(g.params.begin(), g.params.begin() + k.params());
  for (int s = 0; s < k.inputs(); ++s) c.inputs.push_back(random_array(engine, g.input_dtype[s], n, 0.02));
  const std::vector<HostArray> want = reference_outputs(k, c);

  detail::ExprCall call{};
  call.program = &k.program();
  call.n = n;
  for (int s = 0; s < k.inputs(); ++s) call.inputs[s] = c.inputs[s].data();
  for (int p = 0; p < k.params(); ++p) call.params[p] = c.params[p];
  std::vector<HostArray> got;
  for (int o = 0; o < k.outputs(); ++o) {
    got.emplace_back(k.output_dtype(o), n);
    for (std::size_t i = 0; i < n; ++i) got.back().set_poison(i);
  }
  for (int o = 0; o < k.outputs(); ++o) call.outputs[o] = got[o].data();

  const detail::kokkos::DevicePlan plan = detail::kokkos::plan_for_device(call);
  Outcome out;
  out.inline_shape = !force_general && plan.code.size() <= std::size_t(detail::kokkos::inline_instructions) &&
                     plan.registers <= detail::kokkos::inline_registers;
  const Kokkos::DefaultHostExecutionSpace exec;
  detail::kokkos::run_expr_per_element(exec, call, force_general);
  exec.fence();
  for (int o = 0; o < k.outputs(); ++o)
    for (std::size_t i = 0; i < n; ++i)
      if (!got[o].same_at(i, want[o], i)) {
        out.mismatch = "output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
                       std::to_string(got[o].get(i)) + " instead of " + std::to_string(want[o].get(i)) + "\n" +
                       describe(k, c);
        return out;
      }
  return out;
}

class KokkosExprPerElement : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::kokkos);
    context_ = std::make_unique<Context>(Backend::kokkos);  // Kokkos initialized by the library
  }
  std::unique_ptr<Context> context_;
};

TEST_P(KokkosExprPerElement, RandomProgramsMatchScalarBitForBit) {
  const bool force_general = GetParam();
  int inline_cases = 0;
  for (std::size_t n : {std::size_t(1), std::size_t(17), std::size_t(1000), std::size_t(70001)}) {
    for (int t = 0; t < (n > 10000 ? 4 : 40); ++t) {
      const std::uint64_t seed = rng()();
      ExprGenerator gen(seed);
      const Outcome r = walk_and_compare(gen.next(), n, gen.engine(), force_general);
      ASSERT_TRUE(r.mismatch.empty()) << "case seed " << seed << ", n " << n << "\n" << r.mismatch;
      inline_cases += r.inline_shape;
    }
  }
  if (force_general) EXPECT_EQ(inline_cases, 0);
  else EXPECT_GT(inline_cases, 0) << "no random program took the inline shape";
}

// More live values than the inline register file holds: the general shape, every time.
TEST_P(KokkosExprPerElement, ManyLiveValues) {
  for (int count : {20, 40, 100}) {
    const std::uint64_t seed = rng()();
    ExprGenerator gen(seed);
    const Outcome r = walk_and_compare(gen.many_live_values(count), 4099, gen.engine(), GetParam());
    ASSERT_TRUE(r.mismatch.empty()) << count << " live values, case seed " << seed << "\n" << r.mismatch;
    EXPECT_FALSE(r.inline_shape);
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

INSTANTIATE_TEST_SUITE_P(Shapes, KokkosExprPerElement, testing::Values(false, true),
                         [](const testing::TestParamInfo<bool>& info) { return info.param ? "general" : "chosen"; });

}  // namespace
}  // namespace ew::test
