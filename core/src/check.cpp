#include "ew_internal/check.hpp"

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <string>

#include "ew/error.hpp"
#include "ew/sharded.hpp"
#include "ew_internal/backend_impl.hpp"
#include "ew_internal/registry.hpp"

namespace ew::detail {

namespace {

constexpr std::size_t largest_object = static_cast<std::size_t>(std::numeric_limits<std::ptrdiff_t>::max());

std::string where(const char* call, const char* operand) { return std::string(call) + ": " + operand; }

std::string address(std::uintptr_t p) {
  char text[2 + 16 + 1];
  std::snprintf(text, sizeof text, "0x%" PRIxPTR, p);
  return text;
}

std::string elements(std::size_t n, std::size_t element_size) {
  return std::to_string(n) + " elements of " + std::to_string(element_size) + " bytes";
}

}  // namespace

BackendImpl& checked_backend(const Context& ctx, const char* call) {
  if (!ctx.shared_impl())
    throw Error(Errc::invalid_argument,
                std::string(call) + ": moved-from context (it may only be assigned to or destroyed)");
  return ctx.impl();
}

void check_dtype(const Context& ctx, const BackendImpl& backend, const char* call, DType d) {
  if (!backend.supports(d))
    throw Error(Errc::unsupported, std::string(call) + ": the " + ctx.backend_name() + " backend does not support " +
                                       to_string(d) + " data");
}

void check_size(const char* call, const char* operand, std::size_t size, const char* reference,
                std::size_t expected) {
  if (size != expected)
    throw Error(Errc::size_mismatch, where(call, operand) + " has " + std::to_string(size) + " elements, " +
                                         reference + " " + std::to_string(expected));
}

std::size_t checked_bytes(const char* call, const char* operand, std::size_t n, std::size_t element_size) {
  if (element_size == 0 || n > largest_object / element_size)
    throw Error(Errc::size_overflow, where(call, operand) + " has " + elements(n, element_size) +
                                         ": more bytes than the address space can hold (an object has at most " +
                                         std::to_string(largest_object) + " bytes)");
  return n * element_size;
}

ByteRange check_operand(const char* call, const char* operand, const void* p, std::size_t n,
                        std::size_t element_size) {
  if (n == 0) return {};
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  if (!p)
    throw Error(Errc::null_pointer, where(call, operand) + " is null with n = " + std::to_string(n) + " > 0");
  if (element_size == 0 || begin % element_size != 0)
    throw Error(Errc::misaligned, where(call, operand) + " (" + address(begin) +
                                      ") is not aligned to its element size (" + std::to_string(element_size) +
                                      " bytes)");
  const std::size_t bytes = checked_bytes(call, operand, n, element_size);
  if (bytes > std::numeric_limits<std::uintptr_t>::max() - begin)
    throw Error(Errc::size_overflow, where(call, operand) + ": " + elements(n, element_size) + " from " +
                                         address(begin) + " run past the end of the address space");
  return {begin, begin + bytes};
}

void check_array_of_operands(const char* call, const char* what, const void* array, std::size_t count) {
  if (!array && count > 0)
    throw Error(Errc::null_pointer, where(call, what) + " is null, with a count of " + std::to_string(count));
}

void check_overlap(const char* call, const char* input, ByteRange in, const char* output, ByteRange out) {
  const bool same = in.begin == out.begin && in.end == out.end;
  if (!same && in.begin < out.end && out.begin < in.end)
    throw Error(Errc::overlap, where(call, input) + " partially overlaps the output " + output +
                                   " (only exact aliasing, the same first element and length, is in place)");
}

void refuse_reduction_on_several_devices(const Context& ctx, BackendImpl& backend, const char* call, plan::Kind kind,
                                         DType dtype) {
  if (ctx.shard_count() <= 1) return;
  ReduceCall refused{};
  refused.call = call;
  refused.kind = kind;
  refused.dtype = dtype;
  backend.run_reduce(refused);  // throws: no backend over several devices reduces
  throw Error(Errc::unsupported, std::string(call) + ": a context over several devices does not reduce");
}

MemorySpace check_memory_space(const Context& ctx, const char* call, const char* operand, const void* p,
                               MemorySpace tagged, int tagged_device) {
  // A value outside the enum would pass as "not host" on cuda and reach a kernel.
  if (!names_a_space(tagged))
    throw Error(Errc::invalid_argument, where(call, operand) + " is tagged MemorySpace " +
                                            std::to_string(static_cast<int>(tagged)) + ", which names no memory space");
  BackendImpl& backend = checked_backend(ctx, call);
  // A tagged span is taken at its word (its device too, where it says one): the tag is how a
  // caller skips the driver's query.
  const PointerLocation location =
      tagged != MemorySpace::unknown ? PointerLocation{tagged, tagged == MemorySpace::device ? tagged_device : -1}
                                     : classify(p);
  const MemorySpace space = location.space;
  if (space == MemorySpace::device && backend.shard_count() > 1) {
    std::vector<int> devices;
    for (int k = 0; k < backend.shard_count(); ++k) devices.push_back(backend.shard(k).device());
    throw Error(Errc::foreign_memory, where(call, operand) + " is device memory, which belongs to one device, and this "
                                          "context runs on " + device_list(devices) +
                                          ": pass an ew::ShardedBuffer, host, pinned or managed memory, or run on "
                                          "Context::shard(k)");
  }
  if (!backend.accepts(space))
    throw Error(Errc::foreign_memory, where(call, operand) + " lives in " + to_string(space) + " memory, which the " +
                                          ctx.backend_name() + " backend cannot access");
  // Another GPU's memory: its kernels would fault where peer access is off, and read it
  // over the link where it is on. Either way it is a mistake a GPU library should name.
  if (space == MemorySpace::device && location.device >= 0 && backend.device() >= 0 &&
      location.device != backend.device())
    throw Error(Errc::foreign_memory, where(call, operand) + " is device memory of device " +
                                          std::to_string(location.device) + ", and this context runs on device " +
                                          std::to_string(backend.device()) + ": run it on a context of device " +
                                          std::to_string(location.device) + ", copy it, or pass managed memory");
  return space;
}

}  // namespace ew::detail
