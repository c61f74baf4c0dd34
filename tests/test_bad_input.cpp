// Bad input, counted. One table lists every kind of bad call, the ew::Errc it must
// raise and a phrase its message must contain; each kind runs on every usable backend
// that takes host arrays. Operands live in guarded host arrays (random inputs, poisoned
// outputs, guard elements on both sides), and after every rejected call not one byte
// of them may have changed. A second test claims sizes whose byte counts overflow
// (2^61, 2^62, 2^63 - 1, SIZE_MAX elements) for every op and dtype over small real
// arrays: before the checks were overflow-safe, such a call ran and wrote past them.
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "ew_internal/check.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t n = 64;      // elements of each operand
constexpr std::size_t guard = n;   // guard elements before and after: room for every overlap layout

// A quiet NaN whose payload carries `i`: an output array of these differs from itself
// shifted by any number of elements, so an overlapping call that ran cannot hide by
// copying poison onto the same poison.
template <class T>
T poison_at(std::size_t i) {
  T v;
  if constexpr (sizeof(T) == 4) {
    const std::uint32_t bits = 0x7fc00000u | 0x2d0000u | static_cast<std::uint32_t>(i & 0xffff);
    std::memcpy(&v, &bits, 4);
  } else {
    const std::uint64_t bits = 0x7ff8000000000000ull | 0xdead00000000ull | (i & 0xffffffff);
    std::memcpy(&v, &bits, 8);
  }
  return v;
}

template <class T>
std::vector<T> poisoned(std::size_t count) {
  std::vector<T> v(count);
  for (std::size_t i = 0; i < count; ++i) v[i] = poison_at<T>(i);
  return v;
}

// One dtype's arrays: a and b random, out poisoned, each n elements inside guards.
template <class T>
struct Arrays {
  std::vector<T> a = random_vector<T>(n + 2 * guard), b = random_vector<T>(n + 2 * guard);
  std::vector<T> out = poisoned<T>(n + 2 * guard);

  const T* a_at(std::ptrdiff_t shift = 0) const { return a.data() + guard + shift; }
  const T* b_at(std::ptrdiff_t shift = 0) const { return b.data() + guard + shift; }
  T* out_at(std::ptrdiff_t shift = 0) { return out.data() + guard + shift; }
  Span<const T> A(std::size_t len = n) const { return {a_at(), len}; }
  Span<const T> B(std::size_t len = n) const { return {b_at(), len}; }
  Span<T> Out(std::size_t len = n) { return {out_at(), len}; }
  // An input over the output array, shifted by `shift` elements from the output.
  Span<const T> OutAsInput(std::ptrdiff_t shift, std::size_t len = n) { return {out_at(shift), len}; }
};

template <class T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  const auto* p = reinterpret_cast<const unsigned char*>(v.data());
  return std::vector<unsigned char>(p, p + v.size() * sizeof(T));
}

template <class T>
std::size_t bytes_changed(const std::vector<unsigned char>& before, const std::vector<T>& now) {
  const std::vector<unsigned char> after = bytes_of(now);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < before.size(); ++i) changed += before[i] != after[i];
  return changed;
}

// Every array a kind may touch, float and double, with a snapshot of every byte.
struct Arena {
  Arrays<float> f;
  Arrays<double> d;
  std::vector<unsigned char> snapshot[6] = {bytes_of(f.a), bytes_of(f.b), bytes_of(f.out),
                                            bytes_of(d.a), bytes_of(d.b), bytes_of(d.out)};
  std::size_t bytes_changed() const {
    return test::bytes_changed(snapshot[0], f.a) + test::bytes_changed(snapshot[1], f.b) +
           test::bytes_changed(snapshot[2], f.out) + test::bytes_changed(snapshot[3], d.a) +
           test::bytes_changed(snapshot[4], d.b) + test::bytes_changed(snapshot[5], d.out);
  }
};

// A pointer near the top of the address space: `count` floats from it run past the
// end. Never dereferenced: the checks must reject the range first.
const float* near_the_top(std::size_t count) {
  const std::uintptr_t top = std::numeric_limits<std::uintptr_t>::max() / 4 * 4;
  return reinterpret_cast<const float*>(top - (count / 2) * sizeof(float));
}

// Which backends a kind applies to.
enum class Scope {
  any,        // every backend the table runs on
  host_only,  // backends that run on host threads (they refuse device memory and GPU options)
  scalar,     // the scalar backend alone
  if_some_backend_unusable,  // needs a backend that cannot run here
};

struct Kind {
  const char* name;
  Errc code;
  std::string phrase;
  Scope scope;
  std::function<void(Backend, Arena&)> call;
};

std::string with_n(std::size_t count, const char* rest) { return std::to_string(count) + rest; }

constexpr std::size_t two_to(int k) { return std::size_t(1) << k; }

std::vector<Kind> kinds() {
  using S = Scope;
  const std::size_t huge62 = two_to(62), max = SIZE_MAX, max_signed = two_to(63) - 1;
  std::vector<Kind> k;
  // Sizes.
  k.push_back({"a shorter than the output", Errc::size_mismatch, "add: a has 63 elements, the output 64", S::any,
               [](Backend b, Arena& x) { Context c(b); add<float>(c, x.f.A(n - 1), x.f.B(), x.f.Out()); }});
  k.push_back({"a longer than the output", Errc::size_mismatch, "copy: a has 65 elements", S::any,
               [](Backend b, Arena& x) { Context c(b); copy<float>(c, x.f.A(n + 1), x.f.Out()); }});
  k.push_back({"b shorter than the output", Errc::size_mismatch, "mul: b has 1 elements", S::any,
               [](Backend b, Arena& x) { Context c(b); mul<double>(c, x.d.A(), x.d.B(1), x.d.Out()); }});
  k.push_back({"x and y of axpy differ", Errc::size_mismatch, "axpy: a has 3 elements", S::any,
               [](Backend b, Arena& x) { Context c(b); axpy<float>(c, 2.0f, x.f.A(3), x.f.Out()); }});
  k.push_back({"empty output, non-empty inputs", Errc::size_mismatch, "triad: a has 64 elements, the output 0", S::any,
               [](Backend b, Arena& x) { Context c(b); triad<float>(c, x.f.A(), 2.0f, x.f.B(), x.f.Out(0)); }});
  k.push_back({"a second input given to a one-input op", Errc::invalid_argument, "scale: b must be empty", S::any,
               [](Backend b, Arena& x) {
                 Context c(b);
                 run<float>(c, Op::scale, {x.f.A(), x.f.B(), x.f.Out(), 2.0f, 1.0f});
               }});
  k.push_back({"a second input given to axpby", Errc::invalid_argument, "axpby: b must be empty", S::any,
               [](Backend b, Arena& x) {
                 Context c(b);
                 run<double>(c, Op::axpby, {x.d.A(), Span<const double>(nullptr, n), x.d.Out(), 2.0, 3.0});
               }});
  // Sizes whose bytes overflow, over small real arrays (the overflow test covers every op).
  k.push_back({"2^62 floats, the output inside a (issue 9)", Errc::size_overflow,
               with_n(huge62, " elements of 4 bytes: more bytes than the address space"), S::any,
               [huge62](Backend b, Arena& x) {
                 Context c(b);
                 copy<float>(c, Span<const float>(x.f.a_at(), huge62), Span<float>(x.f.a.data() + guard + 60, huge62));
               }});
  k.push_back({"2^61 doubles (2^64 bytes wrap to 0)", Errc::size_overflow, with_n(two_to(61), " elements of 8 bytes"),
               S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 const std::size_t m = two_to(61);
                 add<double>(c, Span<const double>(x.d.a_at(), m), Span<const double>(x.d.b_at(), m),
                             Span<double>(x.d.out_at(), m));
               }});
  k.push_back({"2^63 - 1 elements", Errc::size_overflow, with_n(max_signed, " elements of 4 bytes"), S::any,
               [max_signed](Backend b, Arena& x) {
                 Context c(b);
                 axpy<float>(c, 2.0f, Span<const float>(x.f.a_at(), max_signed), Span<float>(x.f.out_at(), max_signed));
               }});
  k.push_back({"SIZE_MAX elements", Errc::size_overflow, with_n(max, " elements of 8 bytes"), S::any,
               [max](Backend b, Arena& x) {
                 Context c(b);
                 triad<double>(c, Span<const double>(x.d.a_at(), max), 0.5, Span<const double>(x.d.b_at(), max),
                               Span<double>(x.d.out_at(), max));
               }});
  k.push_back({"a range that wraps past the end of memory", Errc::size_overflow, "copy: a: 64 elements of 4 bytes from 0x",
               S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 copy<float>(c, Span<const float>(near_the_top(n), n), x.f.Out());
               }});
  k.push_back({"an output range that wraps past the end of memory", Errc::size_overflow,
               "scale: out: 64 elements of 4 bytes from 0x", S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 scale<float>(c, 2.0f, x.f.A(), Span<float>(const_cast<float*>(near_the_top(n)), n));
               }});
  // Null pointers.
  k.push_back({"a null", Errc::null_pointer, "copy: a is null with n = 64", S::any,
               [](Backend b, Arena& x) { Context c(b); copy<float>(c, Span<const float>(nullptr, n), x.f.Out()); }});
  k.push_back({"b null", Errc::null_pointer, "add: b is null", S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 add<double>(c, x.d.A(), Span<const double>(nullptr, n), x.d.Out());
               }});
  k.push_back({"out null", Errc::null_pointer, "triad: out is null", S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 triad<float>(c, x.f.A(), 2.0f, x.f.B(), Span<float>(nullptr, n));
               }});
  // Misalignment.
  auto shifted = [](const void* p, int bytes) { return static_cast<const char*>(p) + bytes; };
  k.push_back({"a misaligned", Errc::misaligned, "copy: a (0x", S::any, [shifted](Backend b, Arena& x) {
                 Context c(b);
                 copy<float>(c, Span<const float>(reinterpret_cast<const float*>(shifted(x.f.a_at(), 2)), n), x.f.Out());
               }});
  k.push_back({"b misaligned (a float's alignment for a double)", Errc::misaligned, "mul: b (0x", S::any,
               [shifted](Backend b, Arena& x) {
                 Context c(b);
                 // 4 bytes off: aligned for a float, not for a double.
                 mul<double>(c, x.d.A(), Span<const double>(reinterpret_cast<const double*>(shifted(x.d.b_at(), 4)), n),
                             x.d.Out());
               }});
  k.push_back({"out misaligned", Errc::misaligned, "scale: out (0x", S::any, [shifted](Backend b, Arena& x) {
                 Context c(b);
                 scale<float>(c, 3.0f, x.f.A(), Span<float>(reinterpret_cast<float*>(const_cast<char*>(shifted(x.f.out_at(), 1))), n));
               }});
  // Overlap, every direction (exact aliasing is in place and allowed).
  k.push_back({"input starts before the output", Errc::overlap, "copy: a partially overlaps the output out", S::any,
               [](Backend b, Arena& x) { Context c(b); copy<float>(c, x.f.OutAsInput(-4), x.f.Out()); }});
  k.push_back({"input starts after the output", Errc::overlap, "scale: a partially overlaps", S::any,
               [](Backend b, Arena& x) { Context c(b); scale<double>(c, 2.0, x.d.OutAsInput(4), x.d.Out()); }});
  k.push_back({"b overlapping the output", Errc::overlap, "add: b partially overlaps", S::any,
               [](Backend b, Arena& x) { Context c(b); add<float>(c, x.f.A(), x.f.OutAsInput(1), x.f.Out()); }});
  k.push_back({"input's last element is the output's first", Errc::overlap, "triad: a partially overlaps", S::any,
               [](Backend b, Arena& x) {
                 Context c(b);
                 triad<float>(c, x.f.OutAsInput(-static_cast<std::ptrdiff_t>(n) + 1), 2.0f, x.f.B(), x.f.Out());
               }});
  k.push_back({"input's first element is the output's last", Errc::overlap, "mul: b partially overlaps", S::any,
               [](Backend b, Arena& x) {
                 Context c(b);
                 mul<double>(c, x.d.A(), x.d.OutAsInput(static_cast<std::ptrdiff_t>(n) - 1), x.d.Out());
               }});
  k.push_back({"a == b, both overlapping the output", Errc::overlap, "add: a partially overlaps", S::any,
               [](Backend b, Arena& x) { Context c(b); add<float>(c, x.f.OutAsInput(2), x.f.OutAsInput(2), x.f.Out()); }});
  k.push_back({"x of axpy overlapping y", Errc::overlap, "axpy: a partially overlaps", S::any,
               [](Backend b, Arena& x) { Context c(b); axpy<double>(c, 2.0, x.d.OutAsInput(8), x.d.Out()); }});
  // Operands of one dtype and length cannot nest; operands of different widths (the
  // expression API's mixed dtypes) can. These two call the shared check as it does.
  k.push_back({"in inside out (mixed widths, shared check)", Errc::overlap, "expr: in partially overlaps the output out",
               S::any, [](Backend, Arena& x) {
                 const detail::ByteRange out = detail::check_operand("expr", "out", x.f.out_at(), n, 4);
                 const detail::ByteRange in = detail::check_operand("expr", "in", x.f.out_at(), n, 2);
                 detail::check_overlap("expr", "in", in, "out", out);
               }});
  k.push_back({"out inside in (mixed widths, shared check)", Errc::overlap, "expr: in partially overlaps the output out",
               S::any, [](Backend, Arena& x) {
                 const detail::ByteRange in = detail::check_operand("expr", "in", x.d.a_at(), n, 8);
                 const detail::ByteRange out = detail::check_operand("expr", "out", x.d.a_at(1), n, 4);
                 detail::check_overlap("expr", "in", in, "out", out);
               }});
  // Memory the backend cannot reach.
  k.push_back({"a tagged device memory", Errc::foreign_memory, "copy: a lives in device memory", S::host_only,
               [](Backend b, Arena& x) {
                 Context c(b);
                 copy<float>(c, Span<const float>(x.f.a_at(), n, MemorySpace::device), x.f.Out());
               }});
  k.push_back({"out tagged device memory", Errc::foreign_memory, "add: out lives in device memory", S::host_only,
               [](Backend b, Arena& x) {
                 Context c(b);
                 add<double>(c, x.d.A(), x.d.B(), Span<double>(x.d.out_at(), n, MemorySpace::device));
               }});
  k.push_back({"a MemorySpace value out of range", Errc::invalid_argument,
               "copy: a is tagged MemorySpace 7, which names no memory space", S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 copy<float>(c, Span<const float>(x.f.a_at(), n, static_cast<MemorySpace>(7)), x.f.Out());
               }});
  k.push_back({"a Buffer in device memory", Errc::foreign_memory, "cannot use device memory", S::host_only,
               [](Backend b, Arena&) {
                 Context c(b);
                 Buffer<float> buffer(c, n, MemorySpace::device);
               }});
  k.push_back({"a Buffer in a MemorySpace value out of range", Errc::invalid_argument,
               "Buffer: MemorySpace 9 names no memory space", S::any, [](Backend b, Arena&) {
                 Context c(b);
                 Buffer<float> buffer(c, n, static_cast<MemorySpace>(9));
               }});
  k.push_back({"a pinned Buffer on a host backend", Errc::unsupported,
               "Buffer: this backend cannot allocate pinned memory, which comes from a GPU runtime", S::host_only,
               [](Backend b, Arena&) {
                 Context c(b);
                 Buffer<float> buffer(c, n, MemorySpace::pinned);
               }});
  k.push_back({"a managed Buffer on a host backend", Errc::unsupported,
               "Buffer: this backend cannot allocate managed memory", S::host_only, [](Backend b, Arena&) {
                 Context c(b);
                 Buffer<double> buffer(c, n, MemorySpace::managed);
               }});
  // Backends that cannot be had.
  k.push_back({"Backend value out of range", Errc::unknown_backend, "Backend value 99 names no backend", S::any,
               [](Backend, Arena&) { Context c(static_cast<Backend>(99)); }});
  k.push_back({"EW_BACKEND naming no backend", Errc::unknown_backend, "EW_BACKEND='bogus' names no backend", S::any,
               [](Backend, Arena&) {
                 ScopedEnv env("EW_BACKEND", "bogus");
                 Context c;
               }});
  k.push_back({"EW_BACKEND naming an unusable backend", Errc::backend_unavailable,
               "(requested by EW_BACKEND) is unavailable", S::if_some_backend_unusable, [](Backend, Arena&) {
                 for (const BackendStatus& s : available_backends())
                   if (!s.usable) {
                     ScopedEnv env("EW_BACKEND", s.name.c_str());
                     Context c;
                   }
               }});
  k.push_back({"an unusable backend asked for explicitly", Errc::backend_unavailable, "(requested explicitly) is unavailable",
               S::if_some_backend_unusable, [](Backend, Arena&) {
                 for (const BackendStatus& s : available_backends())
                   if (!s.usable) Context c(s.backend);
               }});
  // Malformed EW_DEVICE, with this backend chosen through EW_BACKEND.
  const std::pair<const char*, const char*> bad_devices[] = {{"EW_DEVICE not a number", "abc"},
                                                             {"EW_DEVICE negative", "-1"},
                                                             {"EW_DEVICE not an integer", "1.5"},
                                                             {"EW_DEVICE with a leading blank", " 0"},
                                                             {"EW_DEVICE beyond INT_MAX", "99999999999"}};
  for (const auto& [name, bad] : bad_devices)
    k.push_back({name, Errc::invalid_argument, std::string("EW_DEVICE='") + bad + "' is not a device index (accepted: ",
                 S::any, [bad = bad](Backend b, Arena&) {
                   ScopedEnv backend("EW_BACKEND", to_string(b));
                   ScopedEnv device("EW_DEVICE", bad);
                   Context c;
                 }});
  // Options a backend cannot honour.
  k.push_back({"negative thread count", Errc::invalid_argument, "ContextOptions::threads must be >= 0", S::any,
               [](Backend b, Arena&) {
                 ContextOptions o;
                 o.threads = -1;
                 Context c(b, o);
               }});
  k.push_back({"two threads on the scalar backend", Errc::invalid_argument, "the scalar backend runs on one thread",
               S::scalar, [](Backend b, Arena&) {
                 ContextOptions o;
                 o.threads = 2;
                 Context c(b, o);
               }});
  k.push_back({"a stream on a host backend", Errc::invalid_argument, "ContextOptions::stream is for GPU backends",
               S::host_only, [](Backend b, Arena& x) {
                 ContextOptions o;
                 o.stream = x.f.out_at();  // any non-null value: it must be refused, never used
                 Context c(b, o);
               }});
  k.push_back({"a GPU index on a host backend", Errc::invalid_argument, "ContextOptions::device = 1", S::host_only,
               [](Backend b, Arena&) {
                 ContextOptions o;
                 o.device = 1;
                 Context c(b, o);
               }});
  // A moved-from context.
  k.push_back({"an op on a moved-from context", Errc::invalid_argument, "copy: moved-from context", S::any,
               [](Backend b, Arena& x) {
                 Context c(b);
                 Context taker(std::move(c));
                 copy<float>(c, x.f.A(), x.f.Out());  // NOLINT(bugprone-use-after-move): the point of the test
               }});
  k.push_back({"synchronize on a moved-from context", Errc::invalid_argument, "Context::synchronize: moved-from context",
               S::any, [](Backend b, Arena&) {
                 Context c(b);
                 Context taker(std::move(c));
                 c.synchronize();  // NOLINT(bugprone-use-after-move)
               }});
  k.push_back({"a Buffer on a moved-from context", Errc::invalid_argument, "Buffer: moved-from context", S::any,
               [](Backend b, Arena&) {
                 Context c(b);
                 Context taker(std::move(c));
                 Buffer<double> buffer(c, n);  // NOLINT(bugprone-use-after-move)
               }});
  // Ops outside the table.
  k.push_back({"Op one past the table", Errc::invalid_argument, "is not in the op table", S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 run<float>(c, static_cast<Op>(op_count), {x.f.A(), {}, x.f.Out()});
               }});
  k.push_back({"Op negative", Errc::invalid_argument, "Op value -1 is not in the op table", S::any,
               [](Backend b, Arena& x) {
                 Context c(b);
                 run<double>(c, static_cast<Op>(-1), {x.d.A(), x.d.B(), x.d.Out()});
               }});
  // Buffers.
  k.push_back({"Buffer upload of the wrong length", Errc::size_mismatch, "Buffer::upload: buffer holds 64 elements, host array 63",
               S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 Buffer<float> buffer(c, n);
                 std::vector<float> marker(n, poison<float>());
                 buffer.upload(marker.data(), n);
                 try {
                   buffer.upload(x.f.a_at(), n - 1);
                 } catch (const Error&) {
                   std::vector<float> now(n);
                   buffer.download(now.data(), n);
                   for (float v : now)
                     if (!is_poison(v)) ADD_FAILURE() << "the rejected upload wrote into the buffer";
                   throw;
                 }
               }});
  k.push_back({"Buffer download of the wrong length", Errc::size_mismatch, "Buffer::download: buffer holds 64 elements, host array 65",
               S::any, [](Backend b, Arena& x) {
                 Context c(b);
                 Buffer<float> buffer(c, n);
                 buffer.upload(x.f.a_at(), n);
                 buffer.download(x.f.out_at(), n + 1);  // the poisoned output must stay poisoned
               }});
  k.push_back({"Buffer beyond the address space", Errc::out_of_memory, "exceeds the address space", S::any,
               [](Backend b, Arena&) {
                 Context c(b);
                 Buffer<double> buffer(c, two_to(61) + 1);
               }});
  k.push_back({"Buffer of SIZE_MAX elements", Errc::out_of_memory, "exceeds the address space", S::any,
               [](Backend b, Arena&) {
                 Context c(b);
                 Buffer<float> buffer(c, SIZE_MAX);
               }});
  return k;
}

// The backends the table runs on: usable, and taking host arrays. Kokkos on a GPU
// takes device memory only; the table's arrays live on the host.
std::vector<Backend> table_backends(std::string& skipped) {
  std::vector<Backend> run;
  for (Backend b : all_backends) {
    const BackendStatus s = backend_status(b);
    if (!s.usable)
      skipped += std::string(" ") + s.name + " (unusable: " + s.reason + ");";
    else if (b == Backend::kokkos && s.detail.find("Cuda") != std::string::npos)
      skipped += " kokkos (runs on a GPU; the table's arrays are host memory);";
    else
      run.push_back(b);
  }
  return run;
}

bool applies(Scope scope, Backend b) {
  switch (scope) {
    case Scope::any: return true;
    case Scope::host_only: return b != Backend::cuda;
    case Scope::scalar: return b == Backend::scalar;
    case Scope::if_some_backend_unusable:
      for (const BackendStatus& s : available_backends())
        if (!s.usable) return true;
      return false;
  }
  return false;
}

TEST(BadInputTable, EveryKindOnEveryUsableBackend) {
  ScopedEnv clear_backend("EW_BACKEND", nullptr), clear_device("EW_DEVICE", nullptr);
  const std::vector<Kind> table = kinds();
  std::string skipped;
  const std::vector<Backend> backends = table_backends(skipped);
  std::size_t writes = 0, runs = 0;
  std::vector<bool> ran(table.size(), false);
  std::string per_backend;
  for (Backend b : backends) {
    std::size_t here = 0;
    for (std::size_t i = 0; i < table.size(); ++i) {
      const Kind& kind = table[i];
      if (!applies(kind.scope, b)) continue;
      SCOPED_TRACE(std::string(to_string(b)) + ": " + kind.name);
      Arena arena;
      expect_error(kind.code, [&] { kind.call(b, arena); }, kind.phrase.c_str());
      const std::size_t changed = arena.bytes_changed();
      EXPECT_EQ(changed, 0u) << "bytes of the operands changed by a rejected call";
      writes += changed;
      ran[i] = true;
      ++here, ++runs;
    }
    per_backend += std::string(" ") + to_string(b) + " " + std::to_string(here) + ",";
  }
  std::size_t kinds_run = 0;
  for (bool r : ran) kinds_run += r;
  EXPECT_GE(kinds_run, 30u);
  std::printf("bad-input table: %zu kinds, %zu calls (%s), %zu bytes written%s%s\n", kinds_run, runs,
              per_backend.empty() ? "" : per_backend.substr(1, per_backend.size() - 2).c_str(), writes,
              skipped.empty() ? "" : "; skipped:", skipped.c_str());
}

// Every op, dtype and overflowing size, over small real arrays laid out two ways:
// disjoint, and the output inside a (as in issue 9's reproducer, where the wrapped
// byte count made the overlap test pass and the call run).
template <class T>
void overflow_calls(Backend b, std::size_t& calls, std::size_t& writes) {
  const std::size_t sizes[] = {two_to(61), two_to(62), two_to(63) - 1, SIZE_MAX};
  for (const OpInfo& oi : op_table)
    for (std::size_t size : sizes)
      for (bool inside_a : {false, true}) {
        SCOPED_TRACE(std::string(to_string(b)) + " " + oi.name + " " + to_string(dtype_v<T>) + " n=" +
                     std::to_string(size) + (inside_a ? " (output inside a)" : " (disjoint)"));
        Arena arena;
        Arrays<T>& x = [&]() -> Arrays<T>& {
          if constexpr (sizeof(T) == 4) return arena.f;
          else return arena.d;
        }();
        Context ctx(b);
        Operands<T> args;
        args.a = Span<const T>(x.a_at(), size);
        if (oi.input_streams == 2) args.b = Span<const T>(x.b_at(), size);
        args.out = inside_a ? Span<T>(const_cast<T*>(x.a_at(n / 2)), size) : Span<T>(x.out_at(), size);
        args.s = T(2), args.t = T(3);
        expect_error(Errc::size_overflow, [&] { run<T>(ctx, oi.op, args); },
                     (std::string(oi.name) + ": a has " + std::to_string(size) + " elements of " +
                      std::to_string(sizeof(T)) + " bytes")
                         .c_str());
        const std::size_t changed = arena.bytes_changed();
        EXPECT_EQ(changed, 0u);
        writes += changed;
        ++calls;
      }
}

TEST(OverflowSizes, EveryOpAndDtypeThrowsAndWritesNothing) {
  std::string skipped;
  std::size_t calls = 0, writes = 0;
  for (Backend b : table_backends(skipped)) {
    overflow_calls<float>(b, calls, writes);
    overflow_calls<double>(b, calls, writes);
  }
  std::printf("overflow sizes: %zu calls, %zu bytes written%s%s\n", calls, writes, skipped.empty() ? "" : "; skipped:",
              skipped.c_str());
}

// Issue 9's reproducer as written there, on every backend the table runs on.
TEST(OverflowSizes, Issue9Reproducer) {
  std::string skipped;
  for (Backend b : table_backends(skipped)) {
    std::vector<float> v = random_vector<float>(100);
    const std::vector<float> before = v;
    Context ctx(b);
    const std::size_t huge = std::size_t(1) << 62;  // n * sizeof(float) wraps to 0
    expect_error(Errc::size_overflow, [&] {
      copy<float>(ctx, Span<const float>(v.data(), huge), Span<float>(v.data() + 60, huge));
    }, "copy: a has 4611686018427387904 elements");
    // 2^60 floats are 2^62 bytes: they fit, and the overlap is found.
    expect_error(Errc::overlap, [&] {
      copy<float>(ctx, Span<const float>(v.data(), huge >> 2), Span<float>(v.data() + 60, huge >> 2));
    });
    EXPECT_EQ(first_mismatch(v, before), -1) << to_string(b);
  }
}

}  // namespace
}  // namespace ew::test
