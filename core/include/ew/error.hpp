#pragma once
// Every failure the library reports is an ew::Error with a code; the message names
// the offending argument. Bad input is detected before anything is written.
#include <stdexcept>
#include <string>

namespace ew {

enum class Errc {
  invalid_argument,     // a value outside its domain (bad option, bad op for the arity, ...)
  size_mismatch,        // spans of one call differ in length
  size_overflow,        // a size whose bytes do not fit in the address space, or a range that wraps past its end
  null_pointer,         // a null data pointer with n > 0
  overlap,              // an output partially overlaps an input (exact aliasing is fine)
  misaligned,           // a pointer not aligned to its element size
  foreign_memory,       // memory the chosen backend cannot access (device memory on a CPU backend, ...)
  unknown_backend,      // a backend name nobody knows (EW_BACKEND=typo)
  backend_unavailable,  // a known backend that cannot run here; the message says why
  out_of_memory,        // an allocation failed; the library stays usable
  device_error,         // a recoverable error reported by a device runtime
  device_fatal,         // a sticky device error: this device is unusable in this process
  internal,             // a broken invariant inside the library
  unsupported,          // a valid request this backend cannot do yet (a dtype it lacks); the message says which
};

const char* to_string(Errc code) noexcept;

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message);
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

}  // namespace ew
