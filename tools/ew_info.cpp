// ew-info: what this build of elementwise can do on this machine.
// Exits 2, with the reason, when EW_BACKEND names an unknown or unusable backend or
// EW_DEVICE is not a device index.
#include <cstdio>
#include <cstdlib>

#include "ew/ew.hpp"

int main() {
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
  return 0;
}
