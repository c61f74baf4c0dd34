#pragma once
// NVRTC, loaded at run time (dlopen), never linked: the library loads on machines without
// the CUDA toolkit, and there expressions on cuda fail with the reason. Plain C++: no
// CUDA runtime, so the compiler is usable (and tested) on machines without a GPU.
//
// Where NVRTC is looked for: EW_NVRTC, when set and not empty, names the file (and only
// that file is tried); otherwise libnvrtc.so.<major of the toolkit the library was
// built with> through the dynamic loader's search (LD_LIBRARY_PATH, ld.so.cache), then
// in the build's toolkit lib64 and /usr/local/cuda/lib64.
#include <string>
#include <vector>

namespace ew::detail::cuda {

class Nvrtc {
 public:
  // The process's NVRTC, loaded on first use (thread-safe). Never throws.
  static const Nvrtc& instance();

  bool loaded() const { return compile_ != nullptr; }
  // Why not loaded: what was tried and what the loader said.
  const std::string& why_not() const { return why_not_; }
  const std::string& path() const { return path_; }
  int version() const { return major_ * 1000 + minor_ * 10; }  // as CUDA counts (13000)
  std::string version_string() const { return std::to_string(major_) + "." + std::to_string(minor_); }
  // The file the loader took, resolved (libnvrtc.so.13.0.88), and its size: nvrtcVersion
  // says only major.minor, and an update of the toolkit within them may compile otherwise.
  const std::string& build() const { return build_; }

  // Compiles `source` to a cubin for sm_<arch> (e.g. 90) with the options every
  // expression kernel gets (--fmad=false, -default-device, --std=c++17). Throws
  // Error(backend_unavailable) when NVRTC is not loaded, cannot load its builtins library
  // or refuses the architecture, Error(device_error) with the NVRTC log when the source
  // does not compile (a bug of the code generator).
  std::string compile_cubin(const std::string& source, const std::string& name, int arch) const;

  // The loader for a given file list, for tests; instance() uses the list above.
  static Nvrtc load(const std::vector<std::string>& candidates, const std::string& origin);
  static std::vector<std::string> default_candidates();

 private:
  void* handle_ = nullptr;
  std::string path_, why_not_, build_;
  int major_ = 0, minor_ = 0;
  void* create_ = nullptr;
  void* destroy_ = nullptr;
  void* compile_ = nullptr;
  void* log_size_ = nullptr;
  void* log_ = nullptr;
  void* cubin_size_ = nullptr;
  void* cubin_ = nullptr;
  void* error_string_ = nullptr;
};

// The options of every expression kernel (without the architecture).
std::vector<std::string> nvrtc_options(int arch);

}  // namespace ew::detail::cuda
