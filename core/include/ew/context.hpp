#pragma once
#include <cstddef>
#include <memory>
#include <vector>

#include "ew/backend.hpp"
#include "ew/types.hpp"

namespace ew {

namespace detail {
class BackendImpl;
}

struct ContextOptions {
  int device = -1;             // GPU index; -1: EW_DEVICE, else 0
  void* stream = nullptr;      // a caller's cudaStream_t to borrow (it must outlive the context);
                               // null: the context owns one
  int threads = 0;             // CPU backends: worker threads; 0: all hardware threads
  std::size_t staging_bytes = 0;  // CUDA host-resident pipeline staging limit; 0: the default
  // Several GPUs in one context (cuda): one stream each; host-resident and managed operands
  // are split across them, ew::ShardedBuffer holds a shard on each (docs/multigpu.md).
  // Empty: `device`, else EW_DEVICE ("0,1" is a list too). Not with `device` or `stream`.
  // The last field, so that positional initializers of the others keep their meaning.
  std::vector<int> devices;
};

// A backend bound to a device and a stream (or a CPU thread team). Ops issued on a
// context run in order; on asynchronous backends (cuda, kokkos on a GPU) they may
// still be running when the call returns: synchronize() waits and reports errors.
// A context is movable, not copyable, and not to be used by two threads at once; a
// moved-from context may only be assigned to or destroyed. On a GPU no call of the library
// (a context's creation and destruction, Buffers, ops, waits) changes the calling thread's
// CUDA context: the one it had is current again after the call, and a thread that had none
// keeps none, so no call creates a context on a GPU the application does not use
// (docs/multigpu.md, MPI). (On kokkos, the device the runtime falls back on where no context
// is current may become Kokkos' GPU: docs/kokkos.md.) On cuda a borrowed `stream`'s calls run
// in the stream's own context; kokkos refuses a stream of a context other than its GPU's
// primary one. The library's CUDA runtime is its own (linked in statically, none of its symbols
// exported): the application's runtime state, an error it has yet to read (cudaGetLastError)
// among it, is never read or changed by a call of the library, whose errors reach the
// application as ew::Error only. (On kokkos, Kokkos' own library calls the runtime Kokkos was
// linked with, which the application may share.)
class Context {
 public:
  explicit Context(Backend backend = Backend::automatic, const ContextOptions& options = {});
  ~Context();
  Context(Context&&) noexcept;
  Context& operator=(Context&&) noexcept;

  Backend backend() const noexcept { return backend_; }
  const char* backend_name() const noexcept { return to_string(backend_); }
  const ContextOptions& options() const noexcept { return options_; }
  int device() const;           // the GPU (the first of devices()), or -1 on the host
  void* native_stream() const;  // the cudaStream_t in use, or null; an error on several devices
  void synchronize();           // on several devices: waits for all of them

  // The GPUs of this context in shard order: one entry per device, empty on the host.
  std::vector<int> devices() const;
  int shard_count() const;      // devices().size(), at least 1
  // A context for shard k alone (device devices()[k], its stream), sharing this context's
  // backend: what it runs is ordered with what this context runs on that device.
  Context shard(int k) const;

  detail::BackendImpl& impl() const { return *impl_; }
  const std::shared_ptr<detail::BackendImpl>& shared_impl() const { return impl_; }

 private:
  Context(Backend backend, const ContextOptions& options, std::shared_ptr<detail::BackendImpl> impl);
  Backend backend_;
  ContextOptions options_;
  std::shared_ptr<detail::BackendImpl> impl_;
};

}  // namespace ew
