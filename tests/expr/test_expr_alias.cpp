// Aliasing on every backend and size: an output that is exactly an input is written in
// place (even when another output reads that input as it was), outputs that alias
// nothing, and one array bound to two input slots. The reference is the scalar backend
// on separate arrays: an element's inputs are read before any of its outputs is written.
#include <functional>
#include <tuple>

#include "expr_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t sizes[] = {1, 3, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 4097, (1u << 20) + 3};

struct AliasCase {
  const char* name;
  std::vector<DType> inputs;
  std::function<std::vector<Expr>()> outputs;
  std::vector<int> output_alias;  // per output: the input slot it is written over, or -1
  std::vector<int> input_share;   // per input slot: an earlier slot whose array it is bound to, or -1
};

const DType f32 = DType::f32, f64 = DType::f64;
Expr in(int k, DType t) { return input(k, t); }

std::vector<AliasCase> cases() {
  return {
      {"y = 2x + y over y", {f32, f32}, [] { return std::vector<Expr>{2 * in(0, f32) + in(1, f32)}; }, {1}, {-1, -1}},
      {"x = sigmoid(x) over x (f64)", {f64}, [] { return std::vector<Expr>{ew::sigmoid(in(0, f64))}; }, {0}, {-1}},
      {"output 0 over input 1, output 1 is input 1 as it was",
       {f32, f32}, [] { return std::vector<Expr>{in(0, f32) * 2, in(1, f32)}; }, {1, -1}, {-1, -1}},
      {"output 0 over input 1, output 1 reads input 1",
       {f64, f64}, [] { return std::vector<Expr>{in(0, f64) - 1, in(1, f64) * 3 + in(0, f64)}; }, {1, -1}, {-1, -1}},
      {"two arrays swapped in place",
       {f32, f32}, [] { return std::vector<Expr>{in(1, f32), in(0, f32)}; }, {0, 1}, {-1, -1}},
      {"two outputs in place over their own inputs, mixed dtypes",
       {f32, f64}, [] { return std::vector<Expr>{cast<float>(in(1, f64)) + in(0, f32), in(1, f64) / in(0, f32)}; },
       {0, 1}, {-1, -1}},
      {"two outputs that alias nothing", {f32, f64},
       [] { return std::vector<Expr>{ew::max(in(0, f32), 0), in(1, f64) * in(0, f32)}; }, {-1, -1}, {-1, -1}},
      {"one array bound to two slots", {f64, f64},
       [] { return std::vector<Expr>{in(0, f64) * in(1, f64) - in(0, f64)}; }, {-1}, {-1, 0}},
      {"one array bound to two slots and written in place", {f32, f32, f32},
       [] { return std::vector<Expr>{ew::fma(in(0, f32), in(2, f32), in(1, f32)), in(2, f32) - in(0, f32)}; },
       {0, -1}, {-1, 0, -1}},
  };
}

using Param = std::tuple<Backend, std::size_t>;
class ExprAliasing : public testing::TestWithParam<Param> {};

TEST_P(ExprAliasing, InPlaceAndSharedInputs) {
  auto [backend, n] = GetParam();
  EW_EXPR_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  std::mt19937_64 engine(rng()());
  for (const AliasCase& a : cases()) {
    const Kernel k = compile(a.outputs());
    CallData c;
    c.n = n;
    for (std::size_t s = 0; s < a.inputs.size(); ++s)
      c.inputs.push_back(a.input_share[s] >= 0 ? c.inputs[a.input_share[s]] : random_array(engine, a.inputs[s], n, 0.01));
    const std::vector<HostArray> want = reference_outputs(k, c);
    for (int set = n > 100000 ? 2 : 0; set < 3; ++set) {  // the large size once, with every operand shifted
      Layout l = Layout::offsets(set, c.inputs.size(), want.size());
      l.output_alias = a.output_alias;
      l.input_share = a.input_share;
      const std::string m = run_and_compare(ctx, k, c, l, want);
      if (!m.empty()) {
        ADD_FAILURE() << a.name << ": " << m << "\n" << describe(k, c);
        break;
      }
    }
  }
}

std::string name(const testing::TestParamInfo<Param>& info) { return "n" + std::to_string(std::get<1>(info.param)); }

#define EW_INSTANTIATE_FOR(backend)                                                                               \
  INSTANTIATE_TEST_SUITE_P(backend, ExprAliasing,                                                                 \
                           testing::Combine(testing::Values(Backend::backend), testing::ValuesIn(sizes)), name)
EW_INSTANTIATE_FOR(scalar);
EW_INSTANTIATE_FOR(highway);
EW_INSTANTIATE_FOR(kokkos);
EW_INSTANTIATE_FOR(cuda);

}  // namespace
}  // namespace ew::test
