#pragma once
// Expressions on the cuda backend: a Program becomes a kernel generated for it
// (codegen.hpp), compiled by NVRTC for the device's exact architecture (nvrtc.hpp),
// cached in memory for the process and on disk across processes (expr_cache.hpp),
// loaded through the runtime API (cudaLibraryLoadData) and launched on the context's
// stream. Host-resident operands (pageable or pinned) go through device scratch in
// chunks, copied in and out around the kernel; such calls return when done.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "ew_internal/backend_impl.hpp"
#include "codegen.hpp"
#include "ew_internal/program.hpp"

namespace ew::detail::cuda {

// The bulk-copy kernel's policy, as the hand-written one's (kernels.cu, kernels.cuh): from
// 2^20 groups on (below, the vector kernel was as fast or faster), at most 47 KiB of dynamic
// shared memory (the default limit is 48 KiB with the static barrier included); its bytes
// in flight per SM follow the GPU's bandwidth (bulk_tiles.hpp).
inline constexpr std::uint64_t kExprBulkMinGroups = std::uint64_t(1) << 20;
inline constexpr std::size_t kExprBulkMaxSharedBytes = 47 << 10;

// A loaded kernel; unloads its library when destroyed.
struct CompiledExpr {
  cudaLibrary_t library = nullptr;
  cudaKernel_t kernel = nullptr;
  cudaKernel_t bulk = nullptr;  // the bulk-copy kernel of the aligned case, or null
  int group = 4;
  int bulk_bytes_per_element = 0;
  CompiledExpr() = default;
  CompiledExpr(const CompiledExpr&) = delete;
  CompiledExpr& operator=(const CompiledExpr&) = delete;
  ~CompiledExpr();
};

// Per context: remembers the kernels of the programs it ran, so that a call of a
// Kernel already compiled costs a pointer lookup, not a hash of its text.
class ExprRunner {
 public:
  // peak_bytes_per_second: the memory's peak (0 if unknown), which sizes the bulk tiles.
  ExprRunner(int sm_count, int major, int minor, double peak_bytes_per_second, std::size_t staging_bytes);
  ~ExprRunner();
  ExprRunner(const ExprRunner&) = delete;
  ExprRunner& operator=(const ExprRunner&) = delete;
  void run(const ExprCall& call, cudaStream_t stream);

  // The fused reduction over call.program's one output (codegen.hpp's
  // generate_expr_reduce_kernel); every input it reads in device or managed memory. A warp
  // per run of run_blocks plan blocks (a power of two), runs = the runs over call.n's
  // blocks; each run's node of the plan's tree goes to partials[run], on the stream.
  void reduce(const ExprCall& call, bool magnitude, std::size_t run_blocks, std::size_t runs, double* partials,
              cudaStream_t stream);
  // The warps of the fused reduction kernel of `p` resident on the whole GPU (its default
  // run size gives one run per warp).
  std::size_t reduce_warps(const Program& p);

 private:
  struct Known {
    std::string canonical;                  // guards against a new Program at a reused address
    const CompiledExpr* kernel[2] = {};     // by alignment case: aligned, any
    int blocks_per_sm[2] = {};
    int bulk_tile = 0;  // groups per tile of the bulk-copy kernel; 0 until first needed
    std::size_t bulk_target = 0;  // the bytes in flight per SM bulk_tile was sized for
    const CompiledExpr* reduce = nullptr;  // the fused reduction kernel, once needed
    int reduce_blocks_per_sm = 0;
  };
  Known& known_for(const Program& p);
  const CompiledExpr& reduce_kernel(Known& known, const Program& p);
  static bool host_resident(MemorySpace s) { return s == MemorySpace::host || s == MemorySpace::pinned; }
  void launch(Known& known, const Program& p, ExprKernelArgs& args, const int* in_size, const int* out_size,
              std::size_t n, cudaStream_t stream);
  void launch_bulk(Known& known, const CompiledExpr& kernel, ExprKernelArgs& args, std::size_t target,
                   cudaStream_t stream);
  void run_chunks(Known& known, const Program& p, const ExprCall& c, const ExprKernelArgs& args, const int* in_size,
                  const int* out_size, char* const* region, std::size_t chunk, cudaStream_t stream);
  int sm_count_, major_, arch_;
  std::size_t bulk_bytes_in_flight_;  // per SM, the bulk tiles' default target
  std::size_t staging_bytes_;
  void* scratch_ = nullptr;  // device staging of host-resident operands (ContextOptions::staging_bytes)
  std::unordered_map<const Program*, Known> known_;
};

// Whether expressions can be compiled here: empty, or why not (NVRTC missing).
std::string expr_unavailable_reason();

// The disk cache's key of a kernel's source for sm_<arch>: the library's version, NVRTC's
// version and build (its resolved file and size), the driver's version, the options, the source.
std::string expr_disk_key(const std::string& source, int arch);

// The kernel of `p` for sm_<arch> and an alignment case: from the process's memory
// cache, else from the disk cache, else compiled (and stored on disk). Thread-safe.
enum class ExprSource { memory, disk, compiled };
const CompiledExpr& expr_kernel(const Program& p, bool aligned, int arch, ExprSource* source = nullptr);
// The fused reduction kernel of `p` (one output) for sm_<arch>, cached as expr_kernel's.
const CompiledExpr& expr_reduce_kernel(const Program& p, int arch);
// The same without the memory cache (a fresh library each time): for tests and the
// benchmark that time the disk cache and the compiler.
std::unique_ptr<CompiledExpr> load_expr_kernel(const Program& p, bool aligned, int arch, ExprSource* source = nullptr);

}  // namespace ew::detail::cuda
