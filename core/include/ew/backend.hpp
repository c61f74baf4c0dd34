#pragma once
// Which backends this build knows, whether each can run here, and why not.
#include <string>
#include <vector>

#include "ew/types.hpp"

namespace ew {

struct BackendStatus {
  Backend backend;
  std::string name;
  bool compiled = false;  // built into this library
  bool usable = false;    // compiled and its probe succeeded on this machine
  std::string reason;     // why not usable ("compiled without CUDA", "no CUDA driver", ...)
  std::string detail;     // what runs when usable (ISA target, Kokkos version and space, GPU model)
};

// Every backend known to the build, in the automatic choice's order of preference.
// Probes run once per process; the result is cached.
std::vector<BackendStatus> available_backends();
BackendStatus backend_status(Backend b);

// The backend a context gets for `requested`: an explicit choice wins; `automatic`
// consults EW_BACKEND, then takes the best usable backend. Asking (by argument or by
// EW_BACKEND) for an unusable backend throws Error(backend_unavailable) with the
// reason; an unknown EW_BACKEND value throws Error(unknown_backend), and for `automatic` a
// malformed EW_DEVICE (not a decimal GPU index) throws Error(invalid_argument). Never a fallback.
Backend resolve_backend(Backend requested = Backend::automatic);

const char* version() noexcept;

// Releases what backends set up for the whole process (a Kokkos the library itself
// initialized, cached device pools). Contexts must be gone first. Also runs at exit.
void finalize();

}  // namespace ew
