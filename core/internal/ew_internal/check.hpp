#pragma once
// The checks every entry point runs on its operands before a backend sees the call,
// type-erased (pointer, element count, element size) so that any typed front end
// (ew::run, the expression API) shares them. Each throws ew::Error whose message
// starts with "<call>: <operand>". They compute every byte count and address without
// overflow, so a backend that receives a checked call may index it in std::size_t,
// std::ptrdiff_t or int64_t: n * element_size <= PTRDIFF_MAX and no range wraps.
#include <cstddef>
#include <cstdint>

#include "ew/context.hpp"
#include "ew/types.hpp"

namespace ew::detail {

class BackendImpl;
namespace plan {
enum class Kind;  // reduce_plan.hpp
}

// The bytes [begin, end) an operand covers; empty for n = 0.
struct ByteRange {
  std::uintptr_t begin = 0, end = 0;
};

// The backend of `ctx`; a moved-from context is Error(invalid_argument).
BackendImpl& checked_backend(const Context& ctx, const char* call);

// The backend must take data of dtype `d` (BackendImpl::supports): Error(unsupported)
// naming the backend and the dtype.
void check_dtype(const Context& ctx, const BackendImpl& backend, const char* call, DType d);

// `size` must equal `expected` (the size of `reference`): Error(size_mismatch).
void check_size(const char* call, const char* operand, std::size_t size, const char* reference,
                std::size_t expected);

// n * element_size, or Error(size_overflow) when it exceeds the largest object the
// address space can hold (PTRDIFF_MAX bytes: beyond it pointer differences overflow).
std::size_t checked_bytes(const char* call, const char* operand, std::size_t n, std::size_t element_size);

// For n > 0: not null (null_pointer), aligned to `element_size` (misaligned), a byte
// count that fits (size_overflow) and a range that ends before the end of the address
// space (size_overflow). n = 0 needs nothing and gives an empty range.
ByteRange check_operand(const char* call, const char* operand, const void* p, std::size_t n,
                        std::size_t element_size);

// The array of a call's operands or params passed as a pointer and a count (ew::Kernel's
// pointer forms): not null with count > 0 (null_pointer), before any entry is read.
void check_array_of_operands(const char* call, const char* what, const void* array, std::size_t count);

// An input and an output are either the same bytes (in place) or disjoint; anything
// else would make the result depend on the order of the writes: Error(overlap).
void check_overlap(const char* call, const char* input, ByteRange in, const char* output, ByteRange out);

// Whether a MemorySpace value is one of the enum's (a cast integer may be anything).
inline bool names_a_space(MemorySpace s) {
  return static_cast<unsigned>(s) <= static_cast<unsigned>(MemorySpace::managed);
}

// A reduction (ew::sum and the others, a reduction over an expression) on a context over
// several devices: refused whatever its operands are, before any operand's memory is looked
// at, by that context's backend, which says why and what to run instead.
void refuse_reduction_on_several_devices(const Context& ctx, BackendImpl& backend, const char* call, plan::Kind kind,
                                         DType dtype);

// Where the operand lives (its tag, else what the build can find out), which the
// context's backend must be able to access: Error(foreign_memory); device memory of
// another GPU than the context's too, as the tag's device (Span::device) or the driver
// tells it.
MemorySpace check_memory_space(const Context& ctx, const char* call, const char* operand, const void* p,
                               MemorySpace tagged, int tagged_device = -1);

}  // namespace ew::detail
