#pragma once
#include "ew_internal/backend_impl.hpp"

namespace ew::detail {

// The descriptor of a compiled-in backend (resolve_backend has checked it is usable).
const BackendDescriptor& descriptor(Backend b);
// Where a pointer lives, asked of the first usable backend that can tell; host otherwise.
PointerLocation classify(const void* p);

}  // namespace ew::detail
