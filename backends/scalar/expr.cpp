#include "expr.hpp"

#include <vector>

#include "ew_internal/element_eval.hpp"

namespace ew::detail::scalar {

void run_expr(const ExprCall& call) {
  const Program& p = *call.program;
  std::vector<Value> regs(p.code.size());
  const int count = static_cast<int>(p.code.size()), outputs = static_cast<int>(p.outputs.size());
  for (std::size_t i = 0; i < call.n; ++i)
    eval_element(p.code.data(), count, p.outputs.data(), outputs, call.inputs, call.outputs, call.params, i,
                 regs.data());
}

}  // namespace ew::detail::scalar
