// Runs triad through the installed library and checks it against the formula.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <ew/ew.hpp>

int main() {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-10.f, 10.f);
  std::vector<float> a(100003), b(a.size()), c(a.size(), std::nanf(""));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = dist(rng), b[i] = dist(rng);
  ew::Context ctx;  // EW_BACKEND or the best usable backend
  ew::triad<float>(ctx, a, 0.75f, b, c);
  ctx.synchronize();
  for (std::size_t i = 0; i < a.size(); ++i)
    if (c[i] != std::fma(0.75f, b[i], a[i])) {
      std::printf("consumer: mismatch at %zu on %s\n", i, ctx.backend_name());
      return 1;
    }
  std::printf("consumer: triad of %zu floats on %s matches\n", a.size(), ctx.backend_name());
  return 0;
}
