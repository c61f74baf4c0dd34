#include "ew/error.hpp"

namespace ew {

const char* to_string(Errc code) noexcept {
  switch (code) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::size_mismatch: return "size_mismatch";
    case Errc::size_overflow: return "size_overflow";
    case Errc::null_pointer: return "null_pointer";
    case Errc::overlap: return "overlap";
    case Errc::misaligned: return "misaligned";
    case Errc::foreign_memory: return "foreign_memory";
    case Errc::unknown_backend: return "unknown_backend";
    case Errc::backend_unavailable: return "backend_unavailable";
    case Errc::out_of_memory: return "out_of_memory";
    case Errc::device_error: return "device_error";
    case Errc::device_fatal: return "device_fatal";
    case Errc::internal: return "internal";
    case Errc::unsupported: return "unsupported";
  }
  return "internal";
}

Error::Error(Errc code, const std::string& message)
    : std::runtime_error(std::string("ew::Error [") + to_string(code) + "]: " + message), code_(code) {}

}  // namespace ew
