// The scalar reference itself: the op table's formulas round as documented, and the
// table's byte counts are the ones the benchmarks rely on.
#include <cmath>

#include "test_support.hpp"

namespace ew::test {
namespace {

TEST(OpTable, BytesPerElementMatchTheSpecification) {
  const int expected[] = {2, 2, 3, 3, 3, 3, 3};  // copy scale add mul triad axpy axpby
  for (int i = 0; i < op_count; ++i) {
    EXPECT_EQ(static_cast<int>(op_table[i].op), i) << "op_table must be indexed by Op";
    EXPECT_EQ(op_table[i].elements_moved(), expected[i]) << op_table[i].name;
    EXPECT_EQ(op_table[i].bytes_per_element(DType::f64), 8u * expected[i]) << op_table[i].name;
  }
}

// Operands for which a*b+c rounded twice differs from the fused result.
template <class T>
void expect_single_rounding() {
  const T eps = std::numeric_limits<T>::epsilon();
  const T x = T(1) + eps, y = T(1) - eps, z = T(-1);
  const T twice = static_cast<T>(x * y) + z;   // x*y rounds to 1, so the sum is 0
  const T once = std::fma(x, y, z);            // -eps^2, exactly
  ASSERT_NE(twice, once);
  EXPECT_EQ((apply<Op::triad, T>(z, y, x, T(0))), once);        // a + s*b with s=x, b=y, a=z
  EXPECT_EQ((apply<Op::axpy, T>(y, z, x, T(0))), once);         // s*x + y with s=x, x=y, y=z
  EXPECT_EQ((apply<Op::axpby, T>(y, z, x, T(1))), once);        // t*y exact for t = 1
  EXPECT_EQ((apply<Op::axpby, T>(T(3), T(5), T(2), T(7))), T(41));
}

TEST(Reference, FusedOpsRoundOnce) {
  expect_single_rounding<float>();
  expect_single_rounding<double>();
}

TEST(Reference, PlainOps) {
  EXPECT_EQ((apply<Op::copy, double>(2.5, 9, 9, 9)), 2.5);
  EXPECT_EQ((apply<Op::scale, double>(2.5, 9, 4, 9)), 10.0);
  EXPECT_EQ((apply<Op::add, float>(2.5f, 0.25f, 9, 9)), 2.75f);
  EXPECT_EQ((apply<Op::mul, float>(2.5f, 4.0f, 9, 9)), 10.0f);
}

TEST(Reference, DispatchCoversEveryOp) {
  for (const OpInfo& oi : op_table) {
    Op seen = dispatch_op(oi.op, [](auto op) { return decltype(op)::value; });
    EXPECT_EQ(seen, oi.op) << oi.name;
  }
}

}  // namespace
}  // namespace ew::test
