// ew-info: what this build of elementwise can do on this machine.
// Exits 2, with the reason, when EW_BACKEND names an unknown or unusable backend,
// EW_DEVICE is not a device index, or an argument is not one it takes.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "ew/ew.hpp"

namespace {
const char usage[] =
    "usage: ew-info [--help] [--version]\n"
    "Prints the backends this build of elementwise has, whether each can run here and why not,\n"
    "the backend the automatic choice takes (EW_BACKEND, EW_DEVICE: docs/environment.md), and\n"
    "whether expressions can run on cuda (NVRTC, EW_NVRTC).\n";
}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::fputs(usage, stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--version")) {
      std::printf("%s\n", ew::version());
      return 0;
    }
    std::fprintf(stderr, "ew-info: unknown argument '%s'\n%s", argv[i], usage);
    return 2;
  }
  std::printf("elementwise %s\n\nbackends (in order of the automatic choice):\n", ew::version());
  for (const ew::BackendStatus& s : ew::available_backends()) {
    const char* state = s.usable ? "usable" : (s.compiled ? "unusable" : "not compiled");
    std::printf("  %-8s %-13s %s\n", s.name.c_str(), state, s.usable ? s.detail.c_str() : s.reason.c_str());
  }
  const char* env = std::getenv("EW_BACKEND");
  try {
    ew::Backend chosen = ew::resolve_backend(ew::Backend::automatic);
    std::printf("\nautomatic choice%s: %s\n", env && *env ? " (EW_BACKEND)" : "", ew::to_string(chosen));
  } catch (const ew::Error& e) {
    std::fprintf(stderr, "\nerror: %s\n", e.what());
    return 2;
  }
  // Expressions on cuda need NVRTC at run time (EW_NVRTC): one tiny kernel says whether they run.
  for (const ew::BackendStatus& s : ew::available_backends()) {
    if (s.name != "cuda" || !s.compiled) continue;
    if (!s.usable) {
      std::printf("\nexpressions on cuda: no (the cuda backend is unusable here)\n");
      continue;
    }
    try {
      const auto start = std::chrono::steady_clock::now();
      ew::Context gpu(ew::Backend::cuda);
      ew::Buffer<float> x(gpu, 1);
      const float one = 1.0f;
      x.upload(&one, 1);
      ew::compile({ew::input<float>(0) + 1})(gpu, {x.span()}, {x.span()});
      gpu.synchronize();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      std::printf("\nexpressions on cuda: yes (NVRTC; a first kernel compiled or read from the cache in %.0f ms)\n", ms);
    } catch (const ew::Error& e) {
      std::printf("\nexpressions on cuda: no: %s\n", e.what());
    }
  }
  return 0;
}
