// An expression equal to one of the seven ops gives that op's bits, on every backend,
// in f32 and f64: copy, scale, add, mul, triad = fma(s, b, a), axpy = fma(s, x, y) and
// axpby = fma(s, x, t*y), the last two also in place as the ops are.
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
template <class T>
void check_op(Context& ctx, Op op, std::size_t n) {
  const std::vector<T> a = random_vector<T>(n), b = random_vector<T>(n);
  const T s = random_scalar<T>(), t = random_scalar<T>();
  const Expr A = input<T>(0), B = input<T>(1), S = param<T>(0), Tp = param<T>(1);
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
  run(ctx, op, args);
  ctx.synchronize();
  const std::vector<T> want = download(by_op);

  // The expression, written to a separate output, and (for axpy, axpby) in place over y.
  Kernel k;
  switch (op) {
    case Op::copy: k = compile({A}); break;
    case Op::scale: k = compile({S * A}); break;
    case Op::add: k = compile({A + B}); break;
    case Op::mul: k = compile({A * B}); break;
    case Op::triad: k = compile({ew::fma(S, B, A)}); break;
    case Op::axpy: k = compile({ew::fma(S, A, B)}); break;
    case Op::axpby: k = compile({ew::fma(S, A, Tp * B)}); break;
  }
  std::vector<double> params;
  if (info(op).scalars >= 1) params.push_back(s);
  if (info(op).scalars >= 2) params.push_back(t);
  std::vector<InputArray> ins{da};
  if (info(op).reads_b()) ins.push_back(db);
  Buffer<T> separate = upload(ctx, poisoned);
  OutputArray out = separate;
  k.run(ctx, ins.data(), ins.size(), &out, 1, params.data(), params.size());
  ctx.synchronize();
  const std::string what = std::string(to_string(op)) + " " + to_string(dtype_v<T>) + " n=" + std::to_string(n) +
                           " on " + ctx.backend_name() + ", expression\n" + k.str();
  EXPECT_EQ(first_mismatch(download(separate), want), -1) << what;
  if (in_place) {
    Buffer<T> y = upload(ctx, b);
    std::vector<InputArray> in_place_ins{da, y};
    OutputArray y_out = y;
    k.run(ctx, in_place_ins.data(), 2, &y_out, 1, params.data(), params.size());
    ctx.synchronize();
    EXPECT_EQ(first_mismatch(download(y), want), -1) << "in place: " << what;
  }
  // And the op on the scalar backend agrees (the shared suite's claim, for these data).
  std::vector<T> ref(n, poison<T>());
  Context scalar(Backend::scalar);
  Operands<T> host_args;
  host_args.a = Span<const T>(a.data(), n);
  if (info(op).input_streams == 2) host_args.b = Span<const T>(b.data(), n);
  if (in_place) ref = b;
  host_args.out = Span<T>(ref.data(), n);
  host_args.s = s, host_args.t = t;
  run(scalar, op, host_args);
  EXPECT_EQ(first_mismatch(want, ref), -1) << what;
}

using Param = std::tuple<Backend, DType>;
class ExprEqualsOp : public testing::TestWithParam<Param> {};

TEST_P(ExprEqualsOp, SameBitsAsTheOp) {
  auto [backend, dtype] = GetParam();
  EW_EXPR_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  for (int o = 0; o < op_count; ++o)
    for (std::size_t n : sizes) {
      if (dtype == DType::f32) check_op<float>(ctx, static_cast<Op>(o), n);
      else check_op<double>(ctx, static_cast<Op>(o), n);
      if (HasFailure()) return;
    }
}

std::string name(const testing::TestParamInfo<Param>& info) { return to_string(std::get<1>(info.param)); }

#define EW_INSTANTIATE_FOR(backend)                                                                            \
  INSTANTIATE_TEST_SUITE_P(backend, ExprEqualsOp,                                                              \
                           testing::Combine(testing::Values(Backend::backend), testing::Values(DType::f32, DType::f64)), \
                           name)
EW_INSTANTIATE_FOR(scalar);
EW_INSTANTIATE_FOR(highway);
EW_INSTANTIATE_FOR(kokkos);
EW_INSTANTIATE_FOR(cuda);

}  // namespace
}  // namespace ew::test
