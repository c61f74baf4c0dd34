#include "nvrtc.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <nvrtc.h>  // types and declarations only: nothing of libnvrtc is linked

#include <cstdlib>
#include <memory>

#include "ew/error.hpp"

#ifndef EW_NVRTC_LIBRARY_NAME
#define EW_NVRTC_LIBRARY_NAME "libnvrtc.so.13"
#endif
#ifndef EW_CUDA_TOOLKIT_LIBRARY_DIR
#define EW_CUDA_TOOLKIT_LIBRARY_DIR "/usr/local/cuda/lib64"
#endif

namespace ew::detail::cuda {

namespace {

template <class F>
F fn(void* p) {
  return reinterpret_cast<F>(p);
}

std::string loader_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

// The resolved file that holds `symbol` and its size in bytes ("?" where the loader or the
// file system cannot say).
std::string file_identity(void* symbol) {
  Dl_info info{};
  if (!dladdr(symbol, &info) || !info.dli_fname) return "?";
  std::unique_ptr<char, decltype(&std::free)> resolved(realpath(info.dli_fname, nullptr), &std::free);
  const std::string file = resolved ? resolved.get() : info.dli_fname;
  struct stat st{};
  return file + ", " + (::stat(file.c_str(), &st) == 0 ? std::to_string(st.st_size) : std::string("?")) + " bytes";
}

}  // namespace

std::vector<std::string> Nvrtc::default_candidates() {
  const char* env = std::getenv("EW_NVRTC");
  if (env && *env) return {env};
  std::vector<std::string> c = {EW_NVRTC_LIBRARY_NAME, std::string(EW_CUDA_TOOLKIT_LIBRARY_DIR) + "/" + EW_NVRTC_LIBRARY_NAME};
  const std::string usual = std::string("/usr/local/cuda/lib64/") + EW_NVRTC_LIBRARY_NAME;
  if (usual != c[1]) c.push_back(usual);
  return c;
}

Nvrtc Nvrtc::load(const std::vector<std::string>& candidates, const std::string& origin) {
  Nvrtc n;
  std::string tried;
  for (const std::string& file : candidates) {
    void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      tried += (tried.empty() ? "" : "; ") + file + " (" + loader_error() + ")";
      continue;
    }
    const char* names[] = {"nvrtcVersion",          "nvrtcCreateProgram", "nvrtcDestroyProgram",
                           "nvrtcCompileProgram",   "nvrtcGetProgramLogSize", "nvrtcGetProgramLog",
                           "nvrtcGetCUBINSize",     "nvrtcGetCUBIN",      "nvrtcGetErrorString"};
    void* f[sizeof names / sizeof *names] = {};
    std::string missing;
    for (std::size_t k = 0; k < sizeof names / sizeof *names; ++k)
      if (!(f[k] = dlsym(h, names[k]))) missing += (missing.empty() ? "" : ", ") + std::string(names[k]);
    if (!missing.empty()) {
      tried += (tried.empty() ? "" : "; ") + file + " (lacks " + missing + ")";
      dlclose(h);
      continue;
    }
    int major = 0, minor = 0;
    if (fn<decltype(&nvrtcVersion)>(f[0])(&major, &minor) != NVRTC_SUCCESS) {
      tried += (tried.empty() ? "" : "; ") + file + " (nvrtcVersion failed)";
      dlclose(h);
      continue;
    }
    // Kept loaded for the life of the process: compiled kernels need nothing of it, but
    // unloading at exit races with other static destructors.
    n.handle_ = h;
    n.path_ = file;
    n.build_ = file_identity(f[0]);
    n.major_ = major, n.minor_ = minor;
    n.create_ = f[1], n.destroy_ = f[2], n.compile_ = f[3], n.log_size_ = f[4], n.log_ = f[5];
    n.cubin_size_ = f[6], n.cubin_ = f[7], n.error_string_ = f[8];
    return n;
  }
  n.why_not_ = "NVRTC (the CUDA toolkit's run-time compiler) was not found: tried " + tried + " [" + origin + "]";
  return n;
}

const Nvrtc& Nvrtc::instance() {
  static const Nvrtc n = [] {
    const char* env = std::getenv("EW_NVRTC");
    return load(default_candidates(), env && *env ? "EW_NVRTC names the file"
                                                  : "set EW_NVRTC to the path of libnvrtc.so to use another");
  }();
  return n;
}

std::vector<std::string> nvrtc_options(int arch) {
  return {"--gpu-architecture=sm_" + std::to_string(arch), "--fmad=false", "-default-device", "--std=c++17"};
}

std::string Nvrtc::compile_cubin(const std::string& source, const std::string& name, int arch) const {
  if (!loaded()) throw Error(Errc::backend_unavailable, why_not_);
  auto error_string = fn<decltype(&nvrtcGetErrorString)>(error_string_);
  auto destroy = fn<decltype(&nvrtcDestroyProgram)>(destroy_);
  nvrtcProgram program = nullptr;
  nvrtcResult r = fn<decltype(&nvrtcCreateProgram)>(create_)(&program, source.c_str(), name.c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) throw Error(Errc::device_error, std::string("nvrtcCreateProgram: ") + error_string(r));
  std::unique_ptr<nvrtcProgram, decltype(destroy)> guard(&program, destroy);

  const std::vector<std::string> options = nvrtc_options(arch);
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());
  r = fn<decltype(&nvrtcCompileProgram)>(compile_)(program, static_cast<int>(argv.size()), argv.data());
  if (r != NVRTC_SUCCESS) {
    std::string log;
    std::size_t size = 0;
    if (fn<decltype(&nvrtcGetProgramLogSize)>(log_size_)(program, &size) == NVRTC_SUCCESS && size > 1) {
      log.resize(size);
      if (fn<decltype(&nvrtcGetProgramLog)>(log_)(program, &log[0]) != NVRTC_SUCCESS) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    // A builtins library that NVRTC cannot load (a toolkit installed in part, or EW_NVRTC
    // naming a libnvrtc whose builtins are not on the loader's path) is this machine's, not
    // a bug of the generator; NVRTC's log names the file it wanted.
    if (r == NVRTC_ERROR_BUILTIN_OPERATION_FAILURE)
      throw Error(Errc::backend_unavailable,
                  "NVRTC " + version_string() + " (" + path_ + ") could not load its builtins library (libnvrtc-builtins" +
                      "[.alt].so." + version_string() + ", named in NVRTC's log below), which it loads through the " +
                      "dynamic loader's search: install it with NVRTC, or put the directory that holds it on " +
                      "LD_LIBRARY_PATH: " + error_string(r) + "\n" + log);
    // Options refused are this NVRTC's age, not a bug of the generator: a GPU newer than the
    // toolkit, or EW_NVRTC naming one older than the options need.
    if (r == NVRTC_ERROR_INVALID_OPTION)
      throw Error(Errc::backend_unavailable, "NVRTC " + version_string() + " (" + path_ +
                                                 ") refuses the options for sm_" + std::to_string(arch) +
                                                 ", this GPU's architecture: expressions on cuda need a newer NVRTC "
                                                 "(EW_NVRTC may name one): " + error_string(r) + "\n" + log);
    throw Error(Errc::device_error, "NVRTC " + version_string() + " could not compile the generated kernel " + name +
                                        " for sm_" + std::to_string(arch) + " (a bug of elementwise's code generator: " +
                                        "please report it with this message): " + error_string(r) + "\n" + log);
  }
  std::size_t size = 0;
  r = fn<decltype(&nvrtcGetCUBINSize)>(cubin_size_)(program, &size);
  if (r != NVRTC_SUCCESS) throw Error(Errc::device_error, std::string("nvrtcGetCUBINSize: ") + error_string(r));
  std::string cubin(size, '\0');
  r = fn<decltype(&nvrtcGetCUBIN)>(cubin_)(program, &cubin[0]);
  if (r != NVRTC_SUCCESS) throw Error(Errc::device_error, std::string("nvrtcGetCUBIN: ") + error_string(r));
  return cubin;
}

}  // namespace ew::detail::cuda
