#include "expr.hpp"

#include <atomic>
#include <memory>
#include <mutex>

#include "bulk_tiles.hpp"
#include "codegen.hpp"
#include "cuda_error.hpp"
#include "ew/version.hpp"
#include "ew_internal/reduce_plan.hpp"
#include "expr_cache.hpp"
#include "expr_launch_tuning.hpp"
#include "kernels.hpp"  // sm90_features
#include "nvrtc.hpp"

namespace ew::detail::cuda {

CompiledExpr::~CompiledExpr() {
  if (library) cudaLibraryUnload(library);
}

namespace {

// Process-wide: a cudaLibrary_t is loaded into every device's context, so one entry
// serves every context of the same architecture. Entries live as long as the process
// (unloading at exit would race with the runtime's own teardown).
std::mutex compiled_mutex;
std::unordered_map<std::string, std::unique_ptr<CompiledExpr>>& compiled() {
  static auto* map = new std::unordered_map<std::string, std::unique_ptr<CompiledExpr>>();
  return *map;
}

}  // namespace

std::string expr_unavailable_reason() {
  const Nvrtc& n = Nvrtc::instance();
  return n.loaded() ? std::string() : n.why_not();
}

std::string expr_disk_key(const std::string& source, int arch) {
  int driver = 0;
  cudaDriverGetVersion(&driver);
  const Nvrtc& nvrtc = Nvrtc::instance();
  std::string key = std::string("elementwise ") + EW_VERSION_STRING + "\nnvrtc " + nvrtc.version_string() + " (" +
                    nvrtc.build() + ")\ndriver " + std::to_string(driver) + "\noptions";
  for (const std::string& o : nvrtc_options(arch)) key += " " + o;
  return key + "\n" + source;
}

namespace {

// The generated source `text` as a loaded library whose main kernel is `name`: the cubin
// from the disk cache, else compiled by NVRTC and stored there.
std::unique_ptr<CompiledExpr> load_library(const std::string& text, const char* name, int arch, ExprSource* source) {
  const Nvrtc& nvrtc = Nvrtc::instance();
  if (!nvrtc.loaded()) throw Error(Errc::backend_unavailable, nvrtc.why_not());
  const std::string dir = expr_cache_dir(), file_key = expr_disk_key(text, arch);
  std::string cubin;
  const bool from_disk = expr_cache_load(dir, file_key, cubin);
  if (!from_disk) {
    cubin = nvrtc.compile_cubin(text, "ew_expr.cu", arch);
    expr_cache_store(dir, file_key, cubin);
  }
  auto entry = std::make_unique<CompiledExpr>();
  check(cudaLibraryLoadData(&entry->library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "cudaLibraryLoadData (an expression kernel)");
  check(cudaLibraryGetKernel(&entry->kernel, entry->library, name), "cudaLibraryGetKernel (an expression kernel)");
  if (source) *source = from_disk ? ExprSource::disk : ExprSource::compiled;
  return entry;
}

// The process's memory cache in front of `load`, under `key`.
template <class Load>
const CompiledExpr& cached(std::string key, Load load) {
  std::lock_guard<std::mutex> lock(compiled_mutex);  // one compile at a time; others wait for it
  auto& map = compiled();
  if (auto it = map.find(key); it != map.end()) return *it->second;
  auto entry = load();
  return *map.emplace(std::move(key), std::move(entry)).first->second;
}

}  // namespace

std::unique_ptr<CompiledExpr> load_expr_kernel(const Program& p, bool aligned, int arch, ExprSource* source) {
  const ExprKernelSource generated = generate_expr_kernel(p, aligned ? ExprAlignment::aligned : ExprAlignment::any);
  auto entry = load_library(generated.text, kExprKernelName, arch, source);
  entry->group = generated.group;
  if (generated.has_bulk) {
    check(cudaLibraryGetKernel(&entry->bulk, entry->library, kExprBulkKernelName),
          "cudaLibraryGetKernel (an expression's bulk-copy kernel)");
    entry->bulk_bytes_per_element = generated.bulk_bytes_per_element;
  }
  return entry;
}

const CompiledExpr& expr_kernel(const Program& p, bool aligned, int arch, ExprSource* source) {
  if (source) *source = ExprSource::memory;  // unless loaded below
  return cached("sm_" + std::to_string(arch) + (aligned ? " aligned\n" : " any\n") + p.canonical,
                [&] { return load_expr_kernel(p, aligned, arch, source); });
}

const CompiledExpr& expr_reduce_kernel(const Program& p, int arch) {
  return cached("sm_" + std::to_string(arch) + " reduce\n" + p.canonical, [&] {
    const ExprReduceKernelSource generated = generate_expr_reduce_kernel(p);
    return load_library(generated.text, kExprReduceKernelName, arch, nullptr);
  });
}

ExprRunner::ExprRunner(int sm_count, int major, int minor, double peak_bytes_per_second, std::size_t staging_bytes)
    : sm_count_(sm_count),
      major_(major),
      arch_(major * 10 + minor),
      bulk_bytes_in_flight_(default_bulk_bytes_in_flight(peak_bytes_per_second, sm_count)),
      staging_bytes_(staging_bytes) {}

ExprRunner::~ExprRunner() {
  if (scratch_) cudaFree(scratch_);
}

ExprRunner::Known& ExprRunner::known_for(const Program& p) {
  if (known_.size() > 4096) known_.clear();  // programs come and go; their kernels stay cached process-wide
  Known& known = known_[&p];
  if (known.canonical.size() != p.canonical.size() || known.canonical != p.canonical) known = Known{p.canonical};
  return known;
}

void ExprRunner::run(const ExprCall& c, cudaStream_t stream) {
  const Program& p = *c.program;
  const int inputs = p.input_slots, outputs = static_cast<int>(p.outputs.size());
  Known& known = known_for(p);

  ExprKernelArgs args{};
  int in_size[max_expr_inputs] = {}, out_size[max_expr_outputs] = {};
  bool staged = false;
  for (int k = 0; k < inputs; ++k)
    if (p.input_read[k]) {
      args.in[k] = c.inputs[k], in_size[k] = static_cast<int>(size_of(p.input_dtype[k]));
      staged = staged || host_resident(c.input_space[k]);
    }
  for (int k = 0; k < outputs; ++k) {
    args.out[k] = c.outputs[k], out_size[k] = static_cast<int>(size_of(p.output_dtype(k)));
    staged = staged || host_resident(c.output_space[k]);
  }
  for (int k = 0; k < p.param_slots; ++k) args.param[k] = c.params[k];
  if (!staged) {
    launch(known, p, args, in_size, out_size, c.n, stream);
    return;
  }

  // Host-resident operands go through device scratch in chunks: copy in, compute, copy
  // out, in stream order (so one scratch serves every chunk), then wait, so that pageable
  // outputs are written when the call returns. Not overlapped as the fixed ops' pipeline
  // is: for speed, keep the data in device memory.
  std::size_t bytes_per_element = 0;
  for (int k = 0; k < inputs; ++k)
    if (p.input_read[k] && host_resident(c.input_space[k])) bytes_per_element += in_size[k];
  for (int k = 0; k < outputs; ++k)
    if (host_resident(c.output_space[k])) bytes_per_element += out_size[k];
  const int regions = inputs + outputs;
  std::size_t chunk = staging_bytes_ / bytes_per_element;
  if (chunk > 64) chunk -= chunk % 64;
  if (chunk < 1) chunk = 1;
  if (!scratch_)  // room for every region's rounding up to 256 bytes
    check(cudaMalloc(&scratch_, staging_bytes_ + (max_expr_inputs + max_expr_outputs) * 256),
          "cudaMalloc (expression staging)");
  // One 256-byte aligned region of `chunk` elements per host-resident operand.
  char* region[max_expr_inputs + max_expr_outputs] = {};
  std::size_t offset = 0;
  for (int k = 0; k < regions; ++k) {
    const bool host = k < inputs ? p.input_read[k] && host_resident(c.input_space[k]) : host_resident(c.output_space[k - inputs]);
    if (!host) continue;
    region[k] = static_cast<char*>(scratch_) + offset;
    offset += (chunk * std::size_t(k < inputs ? in_size[k] : out_size[k - inputs]) + 255) / 256 * 256;
  }
  try {
    run_chunks(known, p, c, args, in_size, out_size, region, chunk, stream);
  } catch (...) {
    // No copy into the caller's memory is left in flight; an error of the application's stays.
    if (cudaStreamSynchronize(stream) != cudaSuccess) cudaGetLastError();
    throw;
  }
}

void ExprRunner::run_chunks(Known& known, const Program& p, const ExprCall& c, const ExprKernelArgs& args,
                            const int* in_size, const int* out_size, char* const* region, std::size_t chunk,
                            cudaStream_t stream) {
  const int inputs = p.input_slots, outputs = static_cast<int>(p.outputs.size());
  for (std::size_t start = 0; start < c.n; start += chunk) {
    const std::size_t m = c.n - start < chunk ? c.n - start : chunk;
    ExprKernelArgs a = args;
    for (int k = 0; k < inputs; ++k) {
      if (!p.input_read[k]) continue;
      const char* src = static_cast<const char*>(c.inputs[k]) + start * std::size_t(in_size[k]);
      if (host_resident(c.input_space[k])) {
        char* dst = region[k];
        check(cudaMemcpyAsync(dst, src, m * std::size_t(in_size[k]), cudaMemcpyDefault, stream),
              "cudaMemcpyAsync (an expression's host input)");
        a.in[k] = dst;
      } else {
        a.in[k] = src;
      }
    }
    for (int k = 0; k < outputs; ++k)
      a.out[k] = host_resident(c.output_space[k]) ? static_cast<void*>(region[inputs + k])
                                                   : static_cast<char*>(c.outputs[k]) + start * std::size_t(out_size[k]);
    launch(known, p, a, in_size, out_size, m, stream);
    for (int k = 0; k < outputs; ++k)
      if (host_resident(c.output_space[k]))
        check(cudaMemcpyAsync(static_cast<char*>(c.outputs[k]) + start * std::size_t(out_size[k]), a.out[k],
                              m * std::size_t(out_size[k]), cudaMemcpyDefault, stream),
              "cudaMemcpyAsync (an expression's host output)");
  }
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (an expression on host memory)");
}

namespace {

// Read on every launch: atomics, not a lock (a call costs a few microseconds in all).
std::atomic<int> tuned_bulk{0};
std::atomic<std::size_t> tuned_bulk_target{0};

cudaLaunchConfig_t launch_config(std::uint64_t blocks, std::size_t shared_bytes, cudaStream_t stream, bool dependent,
                                 cudaLaunchAttribute* attribute) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(blocks < 1 ? 1 : blocks));
  config.blockDim = dim3(kExprThreads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = dependent ? 1 : 0;
  return config;
}

}  // namespace

void set_expr_launch_tuning(const ExprLaunchTuning& t) {
  if (t.bulk < -1 || t.bulk > 1)
    throw Error(Errc::invalid_argument, "expression launch tuning: bulk " + std::to_string(t.bulk) + " is not -1, 0 or 1");
  if (t.bulk_bytes_in_flight_per_sm > (std::size_t(228) << 10))
    throw Error(Errc::invalid_argument, "expression launch tuning: " + std::to_string(t.bulk_bytes_in_flight_per_sm) +
                                            " bytes in flight per SM is more than an SM's shared memory");
  tuned_bulk.store(t.bulk, std::memory_order_relaxed);
  tuned_bulk_target.store(t.bulk_bytes_in_flight_per_sm, std::memory_order_relaxed);
}

// Tiles of the bulk-copy kernel: the fewest elements per thread (1..32) for which the
// input tiles of every resident block reach `target` bytes in flight per SM
// (default_bulk_bytes_in_flight unless tuned), within the default dynamic shared memory
// limit: the rule of the hand-written bulk_kernel (bulk_tile_for), whose own target stays
// cub's 48 KiB.
void ExprRunner::launch_bulk(Known& known, const CompiledExpr& kernel, ExprKernelArgs& args, std::size_t target,
                             cudaStream_t stream) {
  const void* function = reinterpret_cast<const void*>(kernel.bulk);
  const std::size_t bytes_per_element = static_cast<std::size_t>(kernel.bulk_bytes_per_element);
  if (known.bulk_tile == 0 || known.bulk_target != target) {
    known.bulk_target = target;
    known.bulk_tile = kExprThreads / kernel.group;
    for (int per_thread = 1; per_thread <= 32; ++per_thread) {
      const std::size_t shared = std::size_t(kExprThreads) * per_thread * bytes_per_element;
      if (shared > kExprBulkMaxSharedBytes) break;
      known.bulk_tile = kExprThreads * per_thread / kernel.group;
      int blocks = 0;
      check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, kExprThreads, shared),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor (an expression's bulk-copy kernel)");
      if (std::size_t(blocks) * shared >= target) break;
    }
  }
  int tile = known.bulk_tile;
  const std::size_t shared = std::size_t(tile) * kernel.group * bytes_per_element;
  const std::uint64_t blocks = (args.groups + std::uint64_t(tile) - 1) / std::uint64_t(tile);
  cudaLaunchAttribute attribute[1];
  const cudaLaunchConfig_t config = launch_config(blocks, shared, stream, true, attribute);
  void* argv[] = {&args, &tile};
  check(cudaLaunchKernelExC(&config, function, argv), "expression kernel launch (bulk copy)");
}

void ExprRunner::launch(Known& known, const Program& p, ExprKernelArgs& args, const int* in_size, const int* out_size,
                        std::size_t n, cudaStream_t stream) {
  const int inputs = p.input_slots, outputs = static_cast<int>(p.outputs.size());
  const int group = known.kernel[0] ? known.kernel[0]->group : known.kernel[1] ? known.kernel[1]->group : expr_group(p);
  split_expr_range(n, group, args.in, in_size, inputs, args.out, out_size, outputs, args);
  std::uint32_t all = 0;
  for (int k = 0; k < inputs; ++k)
    if (p.input_read[k]) all |= 1u << k;
  for (int k = 0; k < outputs; ++k) all |= 1u << (16 + k);
  const int which = (args.vector_ok & all) == all ? 0 : 1;
  if (!known.kernel[which]) known.kernel[which] = &expr_kernel(p, which == 0, arch_);
  const CompiledExpr& kernel = *known.kernel[which];
  const int bulk = tuned_bulk.load(std::memory_order_relaxed);
  if (kernel.bulk && sm90_features(major_) && (bulk > 0 || (bulk == 0 && args.groups >= kExprBulkMinGroups))) {
    const std::size_t target = tuned_bulk_target.load(std::memory_order_relaxed);
    launch_bulk(known, kernel, args, target ? target : bulk_bytes_in_flight_, stream);
    return;
  }
  const void* function = reinterpret_cast<const void*>(kernel.kernel);
  if (known.blocks_per_sm[which] == 0) {
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, function, kExprThreads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor (an expression kernel)");
    known.blocks_per_sm[which] = blocks < 1 ? 1 : blocks;
  }
  // One group per thread until the grid covers every resident thread, then loops: the
  // rule of the hand-written kernels (kernels.cuh, grid_blocks).
  std::uint64_t blocks = (args.groups + kExprThreads - 1) / kExprThreads;
  const std::uint64_t resident = std::uint64_t(known.blocks_per_sm[which]) * std::uint64_t(sm_count_);
  if (blocks > resident) blocks = resident;
  if (blocks < 1) blocks = 1;

  cudaLaunchAttribute attribute[1];
  const cudaLaunchConfig_t config = launch_config(blocks, 0, stream, sm90_features(major_), attribute);
  void* argv[] = {&args};
  check(cudaLaunchKernelExC(&config, function, argv), "expression kernel launch");
}

const CompiledExpr& ExprRunner::reduce_kernel(Known& known, const Program& p) {
  if (!known.reduce) {
    const CompiledExpr& kernel = expr_reduce_kernel(p, arch_);
    int blocks = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, reinterpret_cast<const void*>(kernel.kernel),
                                                        kExprThreads, 0),
          "cudaOccupancyMaxActiveBlocksPerMultiprocessor (an expression's reduction kernel)");
    known.reduce_blocks_per_sm = blocks < 1 ? 1 : blocks;
    known.reduce = &kernel;  // only once both are known: a failed query is asked again
  }
  return *known.reduce;
}

std::size_t ExprRunner::reduce_warps(const Program& p) {
  Known& known = known_for(p);
  reduce_kernel(known, p);
  return std::size_t(known.reduce_blocks_per_sm) * std::size_t(sm_count_) * (kExprThreads / 32);
}

void ExprRunner::reduce(const ExprCall& c, bool magnitude, std::size_t run_blocks, std::size_t runs, double* partials,
                        cudaStream_t stream) {
  const Program& p = *c.program;
  Known& known = known_for(p);
  const CompiledExpr& kernel = reduce_kernel(known, p);
  ExprKernelArgs args{};
  for (int k = 0; k < p.input_slots; ++k)
    if (p.input_read[k]) args.in[k] = c.inputs[k];
  for (int k = 0; k < p.param_slots; ++k) args.param[k] = c.params[k];
  ExprReduceKernelArgs r{};
  r.n = c.n;
  r.blocks = plan::block_count(c.n);
  r.run_blocks = run_blocks;
  r.runs = runs;
  r.partials = partials;
  r.magnitude = magnitude ? 1u : 0u;
  // A warp per run, as many CUDA blocks as the runs need (one wave by default).
  const std::uint64_t blocks = (runs + kExprThreads / 32 - 1) / (kExprThreads / 32);
  if (blocks > 0x7fffffffu)
    throw Error(Errc::size_overflow, "cuda expression reduction: too many runs for one grid (" + std::to_string(runs) + ")");
  cudaLaunchAttribute attribute[1];
  const cudaLaunchConfig_t config = launch_config(blocks, 0, stream, sm90_features(major_), attribute);
  void* argv[] = {&args, &r};
  check(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(kernel.kernel), argv),
        "expression reduction kernel launch");
}

}  // namespace ew::detail::cuda
