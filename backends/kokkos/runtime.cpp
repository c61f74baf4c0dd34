#include "runtime.hpp"

#include <Kokkos_Core.hpp>

#include <cstdlib>
#include <mutex>
#include <string>

#include "ew/error.hpp"
#if defined(KOKKOS_ENABLE_CUDA)
#include "cuda_check.hpp"
#endif

namespace ew::detail::kokkos {

namespace {

enum class Owner { nobody, application, library, finalized };

// Constant-initialized, trivially destructible: usable from the exit handler.
std::mutex state_mutex;
Owner owner = Owner::nobody;

[[noreturn]] void unavailable(const std::string& why) {
  throw Error(Errc::backend_unavailable, "backend 'kokkos' is unavailable: " + why);
}

void initialize(const ContextOptions& options) {
  const int device = options.device;
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings settings;
  if (options.threads > 0) settings.set_num_threads(options.threads);
  if (device >= 0) settings.set_device_id(device);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments arguments;
  if (options.threads > 0) arguments.num_threads = options.threads;
  if (device >= 0) arguments.device_id = device;
  Kokkos::initialize(arguments);
#endif
}

// Kokkos::finalize with Kokkos' GPU current (it frees memory before it sets its device, which
// on a thread without a context would make one on the thread's fallback GPU) and the calling
// thread's context stack and device given back after (context.hpp). Never throws (it also runs
// at exit).
void finalize_keeping_thread_context() {
#if defined(KOKKOS_ENABLE_CUDA)
  const ContextStackScope keep(cuda::primary_context_of(Kokkos::Cuda().cuda_device()));
#endif
  Kokkos::finalize();
}

// lost() with state_mutex held.
std::string lost_locked() {
  if (owner == Owner::finalized)
    return "ew::finalize() finalized the Kokkos it had initialized, and Kokkos cannot be initialized again in this "
           "process";
  if (Kokkos::is_initialized()) return {};
  const char* by_application =
      "the application finalized Kokkos, and Kokkos cannot be initialized again in this process";
  if (owner == Owner::application) return by_application;
#if KOKKOS_VERSION >= 40000
  if (Kokkos::is_finalized()) return by_application;
#endif
  return {};
}

}  // namespace

void acquire(const ContextOptions& options) {
  std::lock_guard<std::mutex> guard(state_mutex);
  if (const std::string why = lost_locked(); !why.empty()) unavailable(why);
  if (Kokkos::is_initialized()) {
    if (owner == Owner::nobody) owner = Owner::application;
    return;
  }
  try {
    initialize(options);
  } catch (const std::exception& e) {
    unavailable(std::string("Kokkos::initialize failed: ") + e.what());
  }
  owner = Owner::library;
  // Registered after Kokkos::initialize, so it runs before the destructors of anything
  // Kokkos (or the CUDA runtime) set up during initialization.
  std::atexit(release);
}

void release() {
  std::lock_guard<std::mutex> guard(state_mutex);
  if (owner != Owner::library) return;
  if (Kokkos::is_initialized()) finalize_keeping_thread_context();
  owner = Owner::finalized;
}

std::string lost() {
  std::lock_guard<std::mutex> guard(state_mutex);
  return lost_locked();
}

bool initialized_by_library() {
  std::lock_guard<std::mutex> guard(state_mutex);
  return owner == Owner::library;
}

std::string version() {
  return "Kokkos " + std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) + "." +
         std::to_string(KOKKOS_VERSION % 100);
}

}  // namespace ew::detail::kokkos
