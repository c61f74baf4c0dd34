// The table of backends compiled into this build and the selection rule:
// explicit choice, then EW_BACKEND, then the best usable backend.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "ew/backend.hpp"
#include "ew/error.hpp"
#include "ew/version.hpp"
#include "ew_internal/registry.hpp"

namespace ew {

namespace detail {

namespace {

struct Entry {
  Backend id;
  const BackendDescriptor* descriptor;  // null when not compiled in
  const char* missing;                  // why, when not compiled in
};

// Order of preference of the automatic choice.
const Entry* entries() {
  static const Entry table[] = {
#ifdef EW_HAVE_CUDA
      {Backend::cuda, &cuda_backend(), nullptr},
#else
      {Backend::cuda, nullptr, "compiled without CUDA (EW_ENABLE_CUDA)"},
#endif
#ifdef EW_HAVE_HIGHWAY
      {Backend::highway, &highway_backend(), nullptr},
#else
      {Backend::highway, nullptr, "compiled without Highway (EW_ENABLE_HIGHWAY)"},
#endif
#ifdef EW_HAVE_KOKKOS
      {Backend::kokkos, &kokkos_backend(), nullptr},
#else
      {Backend::kokkos, nullptr, "compiled without Kokkos (EW_ENABLE_KOKKOS)"},
#endif
      {Backend::scalar, &scalar_backend(), nullptr},
  };
  return table;
}
constexpr int entry_count = 4;

BackendStatus make_status(const Entry& e, bool& classifies) {
  BackendStatus s;
  s.backend = e.id;
  s.name = to_string(e.id);
  s.compiled = e.descriptor != nullptr;
  if (!s.compiled) {
    s.reason = e.missing;
    return s;
  }
  Probe p = e.descriptor->probe();
  classifies = p.usable || p.classifies;
  s.usable = p.usable;
  s.reason = p.reason;
  s.detail = p.detail;
  return s;
}

// Each backend probed once: its status, and whether its classify may be asked.
struct Probed {
  std::vector<BackendStatus> statuses;
  std::vector<bool> classifies;
};

const Probed& probed() {
  static const Probed all = [] {
    Probed v;
    for (int i = 0; i < entry_count; ++i) {
      bool classifies = false;
      v.statuses.push_back(make_status(entries()[i], classifies));
      v.classifies.push_back(classifies);
    }
    return v;
  }();
  return all;
}

// The probes' statuses, with what has changed since: a backend the process has lost since
// its probe (Kokkos finalized) is unavailable, saying why.
std::vector<BackendStatus> statuses() {
  std::vector<BackendStatus> now = probed().statuses;
  for (int i = 0; i < entry_count; ++i) {
    const BackendDescriptor* d = entries()[i].descriptor;
    if (!now[i].usable || !d || !d->lost) continue;
    if (std::string why = d->lost(); !why.empty()) now[i].usable = false, now[i].reason = std::move(why);
  }
  return now;
}

const Entry& entry(Backend b) {
  for (int i = 0; i < entry_count; ++i)
    if (entries()[i].id == b) return entries()[i];
  throw Error(Errc::unknown_backend, "backend enum value out of range");
}

}  // namespace

const BackendDescriptor& descriptor(Backend b) {
  const Entry& e = entry(b);
  if (!e.descriptor) throw Error(Errc::backend_unavailable, std::string("backend '") + to_string(b) + "': " + e.missing);
  return *e.descriptor;
}

PointerLocation classify(const void* p) {
  for (int i = 0; i < entry_count; ++i) {
    const Entry& e = entries()[i];
    if (e.descriptor && e.descriptor->classify && probed().classifies[i]) return e.descriptor->classify(p);
  }
  return {};
}

}  // namespace detail

const char* to_string(Backend b) noexcept {
  switch (b) {
    case Backend::automatic: return "auto";
    case Backend::scalar: return "scalar";
    case Backend::highway: return "highway";
    case Backend::kokkos: return "kokkos";
    case Backend::cuda: return "cuda";
  }
  return "unknown";
}

constexpr const char* known_backends = "known: auto, scalar, highway, kokkos, cuda";

Backend parse_backend(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "auto" || lower == "automatic") return Backend::automatic;
  for (Backend b : all_backends)
    if (lower == to_string(b)) return b;
  throw Error(Errc::unknown_backend, "unknown backend '" + std::string(name) + "' (" + known_backends + ")");
}

std::vector<BackendStatus> available_backends() { return detail::statuses(); }

BackendStatus backend_status(Backend b) {
  for (BackendStatus& s : detail::statuses())
    if (s.backend == b) return std::move(s);
  if (b == Backend::automatic)
    throw Error(Errc::invalid_argument, "backend_status: 'auto' is not a backend; resolve it first");
  throw Error(Errc::unknown_backend, "Backend value " + std::to_string(static_cast<int>(b)) + " names no backend (" +
                                         known_backends + ")");
}

Backend resolve_backend(Backend requested) {
  const char* origin = "requested explicitly";
  if (requested == Backend::automatic) {
    const char* env = std::getenv("EW_BACKEND");
    if (env && *env) {
      try {
        requested = parse_backend(env);
      } catch (const Error&) {
        throw Error(Errc::unknown_backend,
                    "EW_BACKEND='" + std::string(env) + "' names no backend (" + known_backends + ")");
      }
      origin = "requested by EW_BACKEND";
    }
    // The environment chooses the device too: a malformed EW_DEVICE fails here, on every
    // backend, rather than being ignored by those that run on the host.
    detail::requested_devices(ContextOptions{});
  }
  if (requested != Backend::automatic) {
    BackendStatus s = backend_status(requested);
    if (!s.usable)
      throw Error(Errc::backend_unavailable,
                  "backend '" + s.name + "' (" + origin + ") is unavailable: " + s.reason);
    return requested;
  }
  for (const BackendStatus& s : detail::statuses())
    if (s.usable) return s.backend;
  throw Error(Errc::internal, "no usable backend (the scalar backend is always usable)");
}

void finalize() {
  for (int i = 0; i < detail::entry_count; ++i) {
    const detail::BackendDescriptor* d = detail::entries()[i].descriptor;
    if (d && d->finalize) d->finalize();
  }
}

const char* version() noexcept { return EW_VERSION_STRING; }

}  // namespace ew
