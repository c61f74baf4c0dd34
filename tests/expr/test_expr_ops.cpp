// An expression equal to one of the seven ops gives that op's bits, on every backend,
// in f32, f64, f16 and bf16: copy, scale, add, mul, triad = fma(s, b, a), axpy = fma(s, x, y)
// and axpby = fma(s, x, t*y), the last two also in place as the ops are. On 16-bit data
// the op computes in f32 with float scalars and rounds once: the expression with f32
// params (an f32 node, so ew::cast<T> rounds it once), and with the scalars written as
// plain numbers (which meet the 16-bit operands as f32: 16-bit nodes, rounded at the store).
#include <tuple>

#include "expr_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t sizes[] = {1, 17, 255, 256, 257, 4097, 65537};

template <class T>
std::vector<T> download(const Buffer<T>& b) {
  std::vector<T> h(b.size());
  b.download(h.data(), h.size());
  return h;
}

template <class T>
Buffer<T> upload(Context& ctx, const std::vector<T>& h) {
  Buffer<T> b(ctx, h.size());
  b.upload(h.data(), h.size());
  return b;
}

// The op through `run_op` and the expression through `run_expr`, each into a fresh
// poisoned output (or the in-place y), on `ctx`: the same bits.
// The expression of `op` in T; scalars as params (numbers = false) or as plain numbers.
template <class T>
Kernel op_as_expression(Op op, compute_t<T> s, compute_t<T> t, bool numbers) {
  using C = compute_t<T>;
  const Expr A = input<T>(0), B = input<T>(1);
  const Expr S = numbers ? Expr(s) : param<C>(0), Tp = numbers ? Expr(t) : param<C>(1);
  Expr e;
  switch (op) {
    case Op::copy: e = A; break;
    case Op::scale: e = S * A; break;
    case Op::add: e = A + B; break;
    case Op::mul: e = A * B; break;
    case Op::triad: e = ew::fma(S, B, A); break;
    case Op::axpy: e = ew::fma(S, A, B); break;
    case Op::axpby: e = ew::fma(S, A, Tp * B); break;
  }
  // 16-bit data with f32 params computes an f32 node: rounded once, by the cast.
  if (e.dtype() != dtype_v<T>) e = cast<T>(e);
  return compile({e});
}

template <class T>
void check_op(Context& ctx, Op op, std::size_t n, bool numbers) {
  const std::vector<T> a = random_vector<T>(n), b = random_vector<T>(n);
  const compute_t<T> s = random_scalar<compute_t<T>>(), t = random_scalar<compute_t<T>>();
  const Buffer<T> da = upload(ctx, a), db = upload(ctx, b);
  const std::vector<T> poisoned(n, poison<T>());
  const bool in_place = info(op).in_place;
  // The op's own result.
  Buffer<T> by_op = upload(ctx, in_place ? b : poisoned);
  Operands<T> args;
  args.a = da.span();
  if (info(op).input_streams == 2) args.b = db.span();
  args.out = by_op.span();
  args.s = s, args.t = t;
  bool op_ran = true;
  try {
    run(ctx, op, args);
  } catch (const Error& e) {
    // The cuda backend's 16-bit ops may not be there yet; the expression is then compared
    // with the op on the scalar backend below. A CPU backend refusing fails.
    if (!(is_storage16_v<T> && e.code() == Errc::unsupported && ctx.backend() == Backend::cuda)) throw;
    op_ran = false;
  }
  ctx.synchronize();

  // And the op on the scalar backend (the shared suite's claim, for these data).
  std::vector<T> ref(n, poison<T>());
  Context scalar(Backend::scalar);
  Operands<T> host_args;
  host_args.a = Span<const T>(a.data(), n);
  if (info(op).input_streams == 2) host_args.b = Span<const T>(b.data(), n);
  if (in_place) ref = b;
  host_args.out = Span<T>(ref.data(), n);
  host_args.s = s, host_args.t = t;
  run(scalar, op, host_args);
  const std::vector<T> want = op_ran ? download(by_op) : ref;

  // The expression, written to a separate output, and (for axpy, axpby) in place over y.
  const Kernel k = op_as_expression<T>(op, s, t, numbers);
  std::vector<double> params;
  if (!numbers && info(op).scalars >= 1) params.push_back(s);
  if (!numbers && info(op).scalars >= 2) params.push_back(t);
  std::vector<InputArray> ins{da};
  if (info(op).reads_b()) ins.push_back(db);
  Buffer<T> separate = upload(ctx, poisoned);
  OutputArray out = separate;
  k.run(ctx, ins.data(), ins.size(), &out, 1, params.data(), params.size());
  ctx.synchronize();
  const std::string what = std::string(to_string(op)) + " " + to_string(dtype_v<T>) + " n=" + std::to_string(n) +
                           " on " + ctx.backend_name() + (numbers ? ", scalars as numbers" : "") + ", expression\n" +
                           k.str();
  EXPECT_EQ(first_mismatch(download(separate), want), -1) << what;
  if (in_place) {
    Buffer<T> y = upload(ctx, b);
    std::vector<InputArray> in_place_ins{da, y};
    OutputArray y_out = y;
    k.run(ctx, in_place_ins.data(), 2, &y_out, 1, params.data(), params.size());
    ctx.synchronize();
    EXPECT_EQ(first_mismatch(download(y), want), -1) << "in place: " << what;
  }
  EXPECT_EQ(first_mismatch(want, ref), -1) << what;
}

using Param = std::tuple<Backend, DType>;
class ExprEqualsOp : public testing::TestWithParam<Param> {};

TEST_P(ExprEqualsOp, SameBitsAsTheOp) {
  auto [backend, dtype] = GetParam();
  EW_EXPR_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  for (int o = 0; o < op_count; ++o)
    for (std::size_t n : sizes)
      for (bool numbers : {false, true}) {
        const Op op = static_cast<Op>(o);
        switch (dtype) {
          case DType::f32: check_op<float>(ctx, op, n, numbers); break;
          case DType::f64: check_op<double>(ctx, op, n, numbers); break;
          case DType::f16: check_op<half>(ctx, op, n, numbers); break;
          case DType::bf16: check_op<bfloat16>(ctx, op, n, numbers); break;
        }
        if (HasFailure()) return;
      }
}

std::string name(const testing::TestParamInfo<Param>& info) { return to_string(std::get<1>(info.param)); }

#define EW_INSTANTIATE_FOR(backend)                                                                            \
  INSTANTIATE_TEST_SUITE_P(backend, ExprEqualsOp,                                                              \
                           testing::Combine(testing::Values(Backend::backend),                                 \
                                            testing::Values(DType::f32, DType::f64, DType::f16, DType::bf16)), \
                           name)
EW_INSTANTIATE_FOR(scalar);
EW_INSTANTIATE_FOR(highway);
EW_INSTANTIATE_FOR(kokkos);
EW_INSTANTIATE_FOR(cuda);

}  // namespace
}  // namespace ew::test
