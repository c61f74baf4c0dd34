// The scalar backend: one element at a time through ew::apply, exactly as the op
// table defines each op. Every other backend is tested against it bit for bit.
#include <string>

#include "ew/error.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/convert_eval.hpp"
#include "expr.hpp"
#include "kernels.hpp"
#include "reduce.hpp"

namespace ew::detail {

namespace {

class ScalarBackend final : public BackendImpl {
 public:
  void run(const OpCall& call) override {
    dispatch_dtype(call.dtype, [&](auto tag) { scalar::run<decltype(tag)>(call); });
  }
  bool supports(DType) const override { return true; }
  void run_convert(const ConvertCall& c) override {
    dispatch_dtype(c.from, [&](auto from) {
      using From = decltype(from);
      dispatch_dtype(c.to, [&](auto to) {
        using To = decltype(to);
        convert_loop<From, To>(c.n, static_cast<const From*>(c.in), static_cast<To*>(c.out));
      });
    });
  }
  void run_expr(const ExprCall& call) override { scalar::run_expr(call); }
  ReduceResult run_reduce(const ReduceCall& call) override { return scalar::run_reduce(call); }
  void synchronize() override {}
  bool accepts(MemorySpace space) const override { return space != MemorySpace::device; }
};

Probe probe() { return {true, "", "one element at a time, one thread; the reference"}; }

std::unique_ptr<BackendImpl> create(const ContextOptions& options) {
  reject_device_options(options, "scalar");
  if (options.threads > 1)
    throw Error(Errc::invalid_argument, "ContextOptions::threads = " + std::to_string(options.threads) +
                                            ": the scalar backend runs on one thread");
  return std::make_unique<ScalarBackend>();
}

}  // namespace

const BackendDescriptor& scalar_backend() {
  static const BackendDescriptor d{Backend::scalar, &probe, &create, nullptr, nullptr, nullptr};
  return d;
}

}  // namespace ew::detail
