#include "expressions.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

#include "cpu_probe.hpp"
#include "ew/ew.hpp"
#include "gpu.hpp"
#include "report.hpp"
#include "timing.hpp"
#if defined(EW_ROOFLINE_CPU_PEERS)
#include "cpu/expr_peers.hpp"
#endif
#if defined(EW_ROOFLINE_CUDA_PEERS)
#include "cuda/expr_peers.hpp"
#endif

namespace ew::roofline {

namespace {

constexpr std::size_t page = 4096;
// Verification compares this many elements (or n, if fewer) with the scalar backend:
// enough for every backend to split the call among its threads, cheap for the reference.
constexpr std::size_t verify_elements = std::size_t(1) << 20;

// One expression of the fixed set. Its operands are `inputs` arrays, then the output
// (unless it is written in place on input 2), then the fixed ops' temporaries.
struct Entry {
  const char* name;
  const char* formula;
  int inputs;
  bool in_place;
  int temporaries;
  const char* fixed_ops;  // nullptr: no sequence of the fixed ops computes it
  bool transcendental;
  std::vector<double> params;
  Expr (*build)(DType);

  int arrays() const { return inputs + (in_place ? 0 : 1) + temporaries; }
  // Distinct inputs read once, the one output written once.
  int bytes_per_element(DType d) const { return (inputs + 1) * int(size_of(d)); }
};

const std::vector<Entry>& catalog() {
  static const std::vector<Entry> entries = {
      {"relu", "y = max(x, 0)", 1, false, 0, nullptr, false, {},
       [](DType d) { return max(input(0, d), 0); }},
      {"silu", "y = x * sigmoid(x)", 1, false, 0, nullptr, true, {},
       [](DType d) {
         const Expr x = input(0, d);
         return x * sigmoid(x);
       }},
      {"dot4", "c = a*b + c*d (in place on c)", 4, true, 2, "mul, mul, add", false, {},
       [](DType d) { return input(0, d) * input(1, d) + input(2, d) * input(3, d); }},
      {"clamp", "y = min(max(s*a + b, lo), hi)", 2, false, 0, nullptr, false, {0.75, -0.5, 0.5},
       [](DType d) { return min(max(param(0, d) * input(0, d) + input(1, d), param(1, d)), param(2, d)); }},
      // t = a + b; t = s*t; y = t + c, as one expression: the same bits as the three ops.
      {"chain3", "y = s*(a + b) + c (t = a + b; t = s*t; y = t + c)", 3, false, 1, "add, scale, add", false, {0.75},
       [](DType d) { return param(0, d) * (input(0, d) + input(1, d)) + input(2, d); }},
  };
  return entries;
}

// The operands of one call: a set of the arena.
struct Arrays {
  const void* in[4] = {};
  void* out = nullptr;
  void* tmp[2] = {};
};

struct Layout {
  std::size_t array_bytes = 0, set_bytes = 0, sets = 1;
};

Layout layout(const Entry& e, DType d, std::size_t n, Cache cache, std::size_t cold_bytes, std::size_t arena_bytes) {
  Layout l;
  l.array_bytes = (n * size_of(d) + page - 1) / page * page;
  l.set_bytes = e.arrays() * l.array_bytes;
  if (cache == Cache::cold) {
    const std::size_t want = (cold_bytes + l.set_bytes - 1) / l.set_bytes;
    l.sets = std::max<std::size_t>(1, std::min(want, arena_bytes / l.set_bytes));
  }
  return l;
}

Arrays arrays_of(const Entry& e, const Layout& l, char* base, std::size_t set) {
  char* p = base + set * l.set_bytes;
  Arrays a;
  int k = 0;
  for (; k < e.inputs; ++k) a.in[k] = p + k * l.array_bytes;
  a.out = e.in_place ? const_cast<void*>(a.in[2]) : p + (k++) * l.array_bytes;
  for (int t = 0; t < e.temporaries; ++t) a.tmp[t] = p + (k++) * l.array_bytes;
  return a;
}

// Uniform values in [-1, 1) from a hash of the index (element `first` onwards), multiples
// of 2^-23: mixed signs (relu and clamp take both sides), never subnormal (rounded to
// bf16 they stay normal; f16 subnormals widen to normal floats, which cost nothing), and
// in place dot4's c converges to a*b / (1 - d), finite.
void fill(void* p, std::size_t count, DType d, std::size_t first = 0) {
  const std::ptrdiff_t m = static_cast<std::ptrdiff_t>(count);
  auto value = [first](std::uint64_t i) {
    i += first;
    std::uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 29;
    return -1 + 2 * double(x >> 40) * 0x1p-24;
  };
  if (d == DType::f32) {
    auto* f = static_cast<float*>(p);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < m; ++i) f[i] = static_cast<float>(value(std::uint64_t(i)));
  } else if (d == DType::f16) {
    auto* f = static_cast<half*>(p);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < m; ++i) f[i] = half(value(std::uint64_t(i)));
  } else if (d == DType::bf16) {
    auto* f = static_cast<bfloat16*>(p);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < m; ++i) f[i] = bfloat16(value(std::uint64_t(i)));
  } else {
    auto* f = static_cast<double*>(p);
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t i = 0; i < m; ++i) f[i] = value(std::uint64_t(i));
  }
}

// An arena of one place: host memory, or device memory of the GPU the probes use.
struct Arena {
  Place place = Place::host;
  char* base = nullptr;
  Arena(Place p, std::size_t bytes) : place(p) {
    base = static_cast<char*>(p == Place::host ? cpu::host_alloc(bytes) : gpu::allocate(bytes));
  }
  ~Arena() { place == Place::host ? cpu::host_free(base) : gpu::release(base); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void fill_values(std::size_t count, DType d) {
    if (place == Place::host) return fill(base, count, d);
    // Device memory: the same values, made on the host a chunk at a time.
    const std::size_t chunk = (std::size_t(64) << 20) / size_of(d);
    std::vector<char> staging(chunk * size_of(d));
    for (std::size_t first = 0; first < count; first += chunk) {
      const std::size_t m = std::min(chunk, count - first);
      fill(staging.data(), m, d, first);
      gpu::to_device(base + first * size_of(d), staging.data(), m * size_of(d));
    }
  }
  void read(void* dst, const void* src, std::size_t bytes) const {
    if (place == Place::host) std::memcpy(dst, src, bytes);
    else gpu::to_host(dst, src, bytes);
  }
  void write(void* dst, const void* src, std::size_t bytes) const {
    if (place == Place::host) std::memcpy(dst, src, bytes);
    else gpu::to_device(dst, src, bytes);
  }
};

MemorySpace space_of(Place p) { return p == Place::host ? MemorySpace::host : MemorySpace::device; }

InputArray input_array(const void* p, std::size_t n, DType d, MemorySpace space) {
  InputArray a;
  a.data = p, a.size = n, a.dtype = d, a.space = space;
  return a;
}

OutputArray output_array(void* p, std::size_t n, DType d, MemorySpace space) {
  OutputArray a;
  a.data = p, a.size = n, a.dtype = d, a.space = space;
  return a;
}

void run_kernel(const Kernel& k, Context& ctx, const Entry& e, DType d, std::size_t n, const Arrays& a,
                MemorySpace space = MemorySpace::host) {
  InputArray in[4];
  for (int i = 0; i < e.inputs; ++i) in[i] = input_array(a.in[i], n, d, space);
  const OutputArray out = output_array(a.out, n, d, space);
  k.run(ctx, in, std::size_t(e.inputs), &out, 1, e.params.data(), e.params.size());
}

template <class T>
void run_fixed_ops(Context& ctx, const Entry& e, std::size_t n, const Arrays& a, MemorySpace space) {
  auto in = [&](int k) { return Span<const T>(static_cast<const T*>(a.in[k]), n, space); };
  auto tmp = [&](int k) { return Span<T>(static_cast<T*>(a.tmp[k]), n, space); };
  const Span<T> out(static_cast<T*>(a.out), n, space);
  const std::string name = e.name;
  if (name == "dot4") {
    mul<T>(ctx, in(0), in(1), tmp(0));
    mul<T>(ctx, in(2), in(3), tmp(1));
    add<T>(ctx, tmp(0), tmp(1), out);
  } else if (name == "chain3") {
    add<T>(ctx, in(0), in(1), tmp(0));
    scale<T>(ctx, static_cast<compute_t<T>>(e.params[0]), tmp(0), tmp(0));
    add<T>(ctx, tmp(0), in(2), out);
  } else {
    throw std::logic_error(std::string("no fixed-op sequence for ") + e.name);
  }
}

// A backend measured here, or one whose expressions ew-roofline cannot time.
struct BackendUse {
  std::string name;
  std::shared_ptr<Context> ctx;
  Place place = Place::host;  // where its memory is
  bool events = false;        // it runs on gpu::stream(), so CUDA events time it
  std::string not_measured;   // non-empty: the reason
};

std::vector<BackendUse> backends_for(const ExprPlan& plan) {
  std::vector<Backend> wanted = plan.backends;
  if (wanted.empty()) {
    const bool other_cpu = backend_status(Backend::highway).usable || backend_status(Backend::kokkos).usable;
    for (const BackendStatus& s : available_backends())
      if (s.usable && !(plan.quick && s.backend == Backend::scalar && other_cpu)) wanted.push_back(s.backend);
  }
  std::vector<BackendUse> uses;
  for (Backend b : wanted) {
    const BackendStatus st = backend_status(b);
    if (!st.usable) continue;  // already reported with its reason as a skipped backend
    BackendUse u;
    u.name = st.name;
    try {
      u.ctx = std::make_shared<Context>(b);
      // A backend whose memory is on a GPU (cuda, kokkos on a GPU) is timed as run_sweep
      // times the GPU ops: a device arena, its calls on gpu::stream() between CUDA events.
      if (Buffer<float>(*u.ctx, 64).space() == MemorySpace::device) {
        u.place = Place::device;
        if (gpu::query().usable) {
          ContextOptions opt;
          opt.stream = gpu::stream();
          u.ctx = std::make_shared<Context>(b, opt);
          u.events = u.ctx->native_stream() == gpu::stream();
        } else {
          u.not_measured = "its memory is on a GPU that ew-roofline cannot use: " + gpu::query().why;
        }
      }
    } catch (const std::exception& ex) {
      u.not_measured = ex.what();
    }
    uses.push_back(std::move(u));
  }
  return uses;
}

// One way to compute an expression at a point: fused or unfused on a backend, or the peer.
struct Method {
  std::string kind, target;
  Place place = Place::host;
  bool events = false;  // timed with CUDA events on gpu::stream()
  bool exact = true;    // must match the scalar backend bit for bit
  std::function<void(DType, std::size_t, const Arrays&)> run;
  std::function<void()> sync = [] {};
  std::string unavailable;  // set once it could not run: every later point says why
  bool verified = false, checked = false;
};

// Bit for bit, or (a method that rounds otherwise: a peer, the unfused ops on 16-bit data,
// which round every temporary to 16 bits) within a tolerance of the dtype.
template <class T>
bool matches(const Method& m, const std::vector<T>& got, const std::vector<T>& ref) {
  using C = compute_t<T>;
  const C tolerance = is_storage16_v<T> ? C(2e-2) : sizeof(T) == 4 ? C(1e-6) : C(1e-14);
  for (std::size_t i = 0; i < got.size(); ++i) {
    const C g = static_cast<C>(got[i]), r = static_cast<C>(ref[i]);
    const bool ok = m.exact ? std::memcmp(&got[i], &ref[i], sizeof(T)) == 0
                            : std::abs(g - r) <= tolerance * std::max(std::abs(r), C(1));
    if (!ok) return false;
  }
  return true;
}

// A NaN that marks an output element never written.
template <class T>
T poison_value() {
  if constexpr (is_storage16_v<T>) return T(std::numeric_limits<float>::quiet_NaN());
  else return std::numeric_limits<T>::quiet_NaN();
}

// One call on the first elements of `a` (the output poisoned first) against the scalar
// backend's Kernel on copies of the inputs as they were.
template <class T>
bool verify_typed(Method& m, const Entry& e, const Kernel& k, Context& scalar, std::size_t n, const Arrays& a,
                  const Arena& arena) {
  std::vector<std::vector<T>> in(e.inputs);
  for (int i = 0; i < e.inputs; ++i) {
    in[i].resize(n);
    arena.read(in[i].data(), a.in[i], n * sizeof(T));
  }
  if (!e.in_place) {
    const std::vector<T> poison(n, poison_value<T>());
    arena.write(a.out, poison.data(), n * sizeof(T));
  }
  m.run(dtype_v<T>, n, a);
  if (m.events) gpu::synchronize();
  m.sync();
  std::vector<T> got(n);
  arena.read(got.data(), a.out, n * sizeof(T));
  std::vector<T> ref(n);
  Arrays copies;
  for (int i = 0; i < e.inputs; ++i) copies.in[i] = in[i].data();
  copies.out = ref.data();
  run_kernel(k, scalar, e, dtype_v<T>, n, copies);
  return matches(m, got, ref);
}

// Median seconds per call over `reps` batches of back-to-back calls, as run_sweep times
// the fixed ops: consecutive calls take consecutive sets of the arena. Each method runs its
// calls back to back, so the thread pool another method left spinning (OpenMP threads
// spin for milliseconds after a loop) can only delay the untimed warm-up call.
Stats time_method(Method& m, const Entry& e, DType d, std::size_t n, const Layout& l, char* base, int reps,
                  double batch_seconds) {
  std::size_t set = 0;
  auto calls_of = [&](long calls) {
    for (long c = 0; c < calls; ++c) {
      m.run(d, n, arrays_of(e, l, base, set));
      set = (set + 1) % l.sets;
    }
  };
  auto batch = [&](long calls) {
    if (m.events) return gpu::time_on_stream([&] { calls_of(calls); });
    return seconds_of([&] {
      calls_of(calls);
      m.sync();
    });
  };
  batch(1);  // warm-up
  double one = batch(1);
  for (int extra = 0; extra < 2 && one < batch_seconds / 4; ++extra) one = std::min(one, batch(1));
  const long calls = batch_for(one, batch_seconds);
  std::vector<double> per_call;
  for (int rep = 0; rep < reps; ++rep) per_call.push_back(batch(calls) / double(calls));
  return summarize(per_call);
}

int node_count(const Kernel& k) {
  std::istringstream lines(k.str());
  int nodes = 0;
  for (std::string line; std::getline(lines, line);)
    if (!line.empty() && line.rfind("out ", 0) != 0) ++nodes;
  return nodes;
}

std::vector<Cache> caches(const ExprPlan& plan) {
  std::vector<Cache> c;
  if (plan.cold) c.push_back(Cache::cold);
  if (plan.warm) c.push_back(Cache::warm);
  return c;
}

// The cost of a call on 16 elements: c = a + b as a Kernel and as the fixed op add, in the
// backend's own memory (on a GPU, host vectors would time the staging instead).
std::vector<CallCost> call_costs(const std::vector<BackendUse>& uses, int reps, double batch_seconds) {
  std::vector<CallCost> costs;
  constexpr std::size_t n = 16;
  std::vector<float> a(n, 1.5f), b(n, 0.25f), c(n);
  const Kernel k = compile({input<float>(0) + input<float>(1)});
  for (const BackendUse& u : uses) {
    if (!u.not_measured.empty()) continue;
    Context& ctx = *u.ctx;
    Span<const float> sa(a), sb(b);
    Span<float> sc(c);
    std::vector<Buffer<float>> device;
    if (u.place == Place::device) {
      for (const std::vector<float>* v : {&a, &b, &c}) {
        device.emplace_back(ctx, n);
        device.back().upload(v->data(), n);
      }
      sa = device[0].span(), sb = device[1].span(), sc = device[2].span();
    }
    const std::function<void()> kernel = [&] { k(ctx, {sa, sb}, {sc}); };
    const std::function<void()> op = [&] { add<float>(ctx, sa, sb, sc); };
    struct Timed {
      const char* what;
      const std::function<void()>* f;
      long calls = 1;
      std::vector<double> per_call;
    } timed[] = {{"kernel c = a + b", &kernel, 1, {}}, {"op add", &op, 1, {}}};
    try {
      for (Timed& t : timed) {
        (*t.f)();
        double one = 1e30;
        for (int i = 0; i < 3; ++i) one = std::min(one, seconds_of(*t.f));
        t.calls = batch_for(std::max(one, 1e-8), batch_seconds, 1L << 22);
      }
      // Alternating, so that a disturbance of the machine hits both alike.
      for (int rep = 0; rep < reps; ++rep)
        for (Timed& t : timed) {
          const double s = seconds_of([&] {
            for (long i = 0; i < t.calls; ++i) (*t.f)();
            ctx.synchronize();
          });
          t.per_call.push_back(s / double(t.calls));
        }
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "ew-roofline: %s: call cost not measured: %s\n", u.name.c_str(), ex.what());
      continue;
    }
    for (Timed& t : timed) costs.push_back({u.name, t.what, n, summarize(t.per_call)});
  }
  return costs;
}

}  // namespace

const std::vector<std::string>& expression_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Entry& e : catalog()) v.push_back(e.name);
    return v;
  }();
  return names;
}

std::vector<std::string> quick_expressions() { return {"silu", "chain3"}; }

ExprSection measure_expressions(const ExprPlan& plan, Progress& progress) {
  ExprSection section;
  if (plan.expressions.empty() || plan.dtypes.empty()) return section;
  const std::vector<BackendUse> uses = backends_for(plan);
  if (uses.empty()) return section;
  Context scalar(Backend::scalar);
  const double batch_seconds = plan.quick ? 2e-3 : 4e-3;

  std::vector<const Entry*> entries;
  for (const Entry& e : catalog())
    if (std::find(plan.expressions.begin(), plan.expressions.end(), e.name) != plan.expressions.end())
      entries.push_back(&e);

  // The host first, then the GPU: each with its sizes, its cold footprint, its ceiling,
  // its peer and one arena (the cold footprint, or the largest set if that is larger).
  for (Place place : {Place::host, Place::device}) {
    const std::vector<int>& sizes = place == Place::host ? plan.log2_sizes : plan.device_log2_sizes;
    const std::size_t cold_bytes = place == Place::host ? plan.cold_bytes : plan.device_cold_bytes;
    const double ceiling_gbps = place == Place::host ? plan.memory_gbps : plan.device_gbps;
    const MemorySpace space = space_of(place);
    std::vector<const BackendUse*> here;
    for (const BackendUse& u : uses)
      if (u.place == place) here.push_back(&u);
    if (here.empty() || sizes.empty()) continue;
    // Room for every cold layout's whole rotation, as in the ops' sweep (sweep.cpp).
    std::size_t largest_set = 0;
    for (const Entry* e : entries)
      for (DType d : plan.dtypes)
        largest_set = std::max(largest_set, layout(*e, d, std::size_t(1) << sizes.back(), Cache::warm, 0, 0).set_bytes);
    const std::size_t arena_bytes = cold_bytes + largest_set;
    const bool any_measured =
        std::any_of(here.begin(), here.end(), [](const BackendUse* u) { return u->not_measured.empty(); });
    std::unique_ptr<Arena> arena;
    if (any_measured) {
      progress.step(std::string("expressions: arena, ") + to_string(place));
      arena = std::make_unique<Arena>(place, arena_bytes);
    }

    for (DType d : plan.dtypes) {
      // Operands for every expression of this dtype, over every set any of them uses. dot4
      // rewrites its c in place, to finite values; the expressions after it in the catalog
      // read those as they are.
      if (arena) {
        std::size_t used = 0;
        for (const Entry* e : entries)
          for (int lg : sizes) {
            const Layout l =
                layout(*e, d, std::size_t(1) << lg, plan.cold ? Cache::cold : Cache::warm, cold_bytes, arena_bytes);
            used = std::max(used, l.sets * l.set_bytes);
          }
        progress.step(std::string("expressions: operands, ") + to_string(place) + " " + to_string(d));
        arena->fill_values(used / size_of(d), d);
      }
      for (const Entry* ep : entries) {
        const Entry& e = *ep;
        const Kernel kernel = compile({e.build(d)});
        const int nodes = node_count(kernel);

        std::vector<Method> methods;
        for (const BackendUse* u : here) {
          Method fused;
          fused.kind = "fused", fused.target = u->name, fused.unavailable = u->not_measured;
          fused.place = place, fused.events = u->events;
          Context* ctx = u->ctx.get();
          fused.run = [kernel, ctx, &e, space](DType dt, std::size_t n, const Arrays& a) {
            run_kernel(kernel, *ctx, e, dt, n, a, space);
          };
          if (ctx) fused.sync = [ctx] { ctx->synchronize(); };
          methods.push_back(fused);
          if (!e.fixed_ops) continue;
          Method unfused = fused;
          unfused.kind = "unfused";
          // On 16-bit data the fixed ops round each temporary to 16 bits, the Kernel only its
          // output: the same formula, not the same bits.
          unfused.exact = !is_storage16(d);
          unfused.run = [ctx, &e, space](DType dt, std::size_t n, const Arrays& a) {
            switch (dt) {
              case DType::f32: return run_fixed_ops<float>(*ctx, e, n, a, space);
              case DType::f64: return run_fixed_ops<double>(*ctx, e, n, a, space);
              case DType::f16: return run_fixed_ops<half>(*ctx, e, n, a, space);
              case DType::bf16: return run_fixed_ops<bfloat16>(*ctx, e, n, a, space);
            }
          };
          methods.push_back(unfused);
        }
        if (plan.peers && any_measured && place == Place::host) {
#if defined(EW_ROOFLINE_CPU_PEERS)
          Method peer;
          peer.kind = "peer", peer.target = "openmp loop", peer.exact = false;
          peer.run = [&e](DType dt, std::size_t n, const Arrays& a) {
            if (!bench::run_expr_peer(e.name, dt, n, a.in, a.out, e.params.data()))
              throw std::logic_error(std::string("no peer loop for ") + e.name);
          };
          methods.push_back(peer);
#endif
        }
        if (plan.peers && any_measured && place == Place::device) {
#if defined(EW_ROOFLINE_CUDA_PEERS)
          // The hand-written fused kernel: its functor calls the library's arithmetic kit,
          // so it must give the scalar backend's bits too.
          Method peer;
          peer.kind = "peer", peer.target = "cub::DeviceTransform", peer.place = place, peer.events = true;
          peer.run = [&e](DType dt, std::size_t n, const Arrays& a) {
            if (!bench::run_cuda_expr_peer(e.name, dt, n, a.in, a.out, e.params.data(), gpu::stream()))
              throw std::logic_error(std::string("no cub functor for ") + e.name);
          };
          methods.push_back(peer);
#endif
        }

        if (plan.read_pass && any_measured && place == Place::device) {
          // Not an implementation of the formula: a pass that reads as many arrays of the set
          // as the call moves (inputs, then the output, then temporaries), nothing written and
          // so nothing verified.
          Method pass;
          pass.kind = "read-pass", pass.target = "read-only pass", pass.place = place, pass.events = true;
          pass.checked = true;
          pass.run = [&e](DType dt, std::size_t n, const Arrays& a) {
            const void* read[gpu::max_read_arrays] = {};
            int count = 0;
            for (int k = 0; k < e.inputs; ++k) read[count++] = a.in[k];
            if (!e.in_place) read[count++] = a.out;
            for (int t = 0; t < e.temporaries && count < e.inputs + 1; ++t) read[count++] = a.tmp[t];
            if (count != e.inputs + 1)
              throw std::logic_error(std::string("the read-only pass of ") + e.name + " has too few arrays");
            gpu::read_pass(read, count, n * size_of(dt));  // arrays are whole pages: whole vectors
          };
          methods.push_back(pass);
        }

        for (int lg : sizes) {
          const std::size_t n = std::size_t(1) << lg;
          std::map<std::size_t, ExprResult> cold_of;  // by method: reused for warm when cold needed no rotation
          for (Cache cache : caches(plan)) {
            const Layout l = layout(e, d, n, cache, cold_bytes, arena_bytes);
            const bool same_as_cold = cache == Cache::warm && plan.cold &&
                                      layout(e, d, n, Cache::cold, cold_bytes, arena_bytes).sets == 1;
            const std::size_t first = section.results.size();
            for (std::size_t mi = 0; mi < methods.size(); ++mi) {
              Method& m = methods[mi];
              ExprResult r;
              r.expression = e.name, r.formula = e.formula, r.method = m.kind, r.target = m.target;
              r.fixed_ops = e.fixed_ops ? e.fixed_ops : "";
              r.place = place, r.dtype = d, r.n = n, r.cache = cache, r.nodes = nodes, r.transcendental = e.transcendental;
              r.bytes_per_element = e.bytes_per_element(d);
              if (m.unavailable.empty() && same_as_cold && cold_of.count(mi)) {
                r = cold_of[mi];
                r.cache = Cache::warm;
                section.results.push_back(r);
                continue;
              }
              progress.step("expressions: " + m.target + " " + m.kind + " " + e.name + " " + to_string(d) + " n=2^" +
                            std::to_string(lg) + " " + to_string(cache));
              if (m.unavailable.empty()) {
                try {
                  if (!m.checked) {
                    const std::size_t vn = std::min(n, verify_elements);
                    const Arrays a = arrays_of(e, l, arena->base, 0);
                    switch (d) {
                      case DType::f32: m.verified = verify_typed<float>(m, e, kernel, scalar, vn, a, *arena); break;
                      case DType::f64: m.verified = verify_typed<double>(m, e, kernel, scalar, vn, a, *arena); break;
                      case DType::f16: m.verified = verify_typed<half>(m, e, kernel, scalar, vn, a, *arena); break;
                      case DType::bf16: m.verified = verify_typed<bfloat16>(m, e, kernel, scalar, vn, a, *arena); break;
                    }
                    m.checked = true;
                    if (!m.verified) {
                      progress.clear();
                      std::fprintf(stderr, "warning: %s %s %s %s n=%zu differs from the scalar backend%s\n",
                                   m.target.c_str(), m.kind.c_str(), e.name, to_string(d), vn,
                                   m.exact ? " (not bit-identical)" : " (beyond the tolerance)");
                    }
                  }
                  r.verified = m.verified;
                  r.seconds = time_method(m, e, d, n, l, arena->base, plan.reps, batch_seconds);
                  r.gbps = double(r.bytes_per_element) * double(n) / r.seconds.median / 1e9;
                  if (ceiling_gbps > 0) r.pct_of_measured_ceiling = 100.0 * r.gbps / ceiling_gbps;
                } catch (const std::exception& ex) {
                  m.unavailable = ex.what();
                  progress.clear();
                  std::fprintf(stderr, "ew-roofline: %s %s %s %s: not available: %s\n", m.target.c_str(), m.kind.c_str(),
                               e.name, to_string(d), ex.what());
                }
              }
              if (!m.unavailable.empty()) {
                r.available = false, r.reason = m.unavailable;
              } else if (cache == Cache::cold) {
                cold_of[mi] = r;
              }
              section.results.push_back(r);
            }
            // Same-run ratios at this point.
            const ExprResult* peer = nullptr;
            for (std::size_t i = first; i < section.results.size(); ++i)
              if (section.results[i].method == "peer" && section.results[i].available) peer = &section.results[i];
            for (std::size_t i = first; i < section.results.size(); ++i) {
              ExprResult& x = section.results[i];
              if (!x.available || x.method == "peer") continue;
              if (peer && peer->gbps > 0) x.ratio_to_peer = x.gbps / peer->gbps;
              if (x.method != "fused") continue;
              for (std::size_t j = first; j < section.results.size(); ++j) {
                const ExprResult& u = section.results[j];
                if (u.method == "unfused" && u.target == x.target && u.available && u.gbps > 0)
                  x.ratio_to_unfused = x.gbps / u.gbps;
              }
            }
          }
        }
      }
    }
  }
  progress.step("expressions: call cost on 16 elements");
  section.call_costs = call_costs(uses, plan.reps, batch_seconds);
  return section;
}

namespace {

const Entry* entry_named(const std::string& name) {
  for (const Entry& e : catalog())
    if (name == e.name) return &e;
  return nullptr;
}

// Kokkos on the GPU against the cuda backend, the ratio its goal names: cuda's fused time over
// kokkos's at the same point of the same run (above 1: kokkos faster). "vs peer" in the table
// above is against the cub functor, which differs where cuda itself is not at cub's speed.
void print_kokkos_against_cuda(const Report& r, std::FILE* out) {
  bool header = false;
  for (const ExprResult& k : r.expressions) {
    if (k.method != "fused" || k.target != "kokkos" || k.place != Place::device || !k.available) continue;
    for (const ExprResult& c : r.expressions) {
      if (c.method != "fused" || c.target != "cuda" || c.place != k.place || !c.available ||
          c.expression != k.expression || c.dtype != k.dtype || c.n != k.n || c.cache != k.cache)
        continue;
      if (!header) {
        std::fprintf(out, "\nkokkos on the GPU against cuda (cuda's fused time over kokkos's, same run)\n");
        header = true;
      }
      std::string notes;  // the table's flags of either row, which the ratio inherits
      for (const ExprResult* y : {&c, &k}) {
        if (!y->verified) notes += "  (" + y->target + " NOT VERIFIED)";
        if (y->seconds.unsteady()) notes += "  UNSTEADY " + y->target;
      }
      std::fprintf(out, "  %-7s %-5s %-5s %-5s %.3f%s\n", k.expression.c_str(), to_string(k.dtype), pretty_n(k.n).c_str(),
                   to_string(k.cache), c.seconds.median / k.seconds.median, notes.c_str());
    }
  }
}

// --read-pass: a pass reading as many bytes as each call moves, nothing written, timed as the
// methods are: how fast reading those bytes alone runs at that size. A reference, not a
// bound: a call that writes some of its bytes may run faster (measured on an H200, 2^20..2^22).
void print_read_pass(const Report& r, std::FILE* out) {
  bool header = false;
  for (const ExprResult& p : r.expressions) {
    if (p.method != "read-pass" || !p.available) continue;
    for (const ExprResult& c : r.expressions) {
      if (c.method != "fused" || c.place != p.place || !c.available || c.expression != p.expression ||
          c.dtype != p.dtype || c.n != p.n || c.cache != p.cache)
        continue;
      if (!header) {
        std::fprintf(out,
                     "\nthe read-only pass over each point's bytes, nothing written, for reference (vs peer: the\n"
                     "peer's time over the pass's; fused/pass: the pass's time over the backend's, above 1 where\n"
                     "the call runs faster than reading its bytes alone)\n");
        header = true;
      }
      std::fprintf(out, "  %-7s %-5s %-5s %-5s %-9s pass %9.1f GB/s  vs peer %s  fused/pass %.3f%s\n",
                   p.expression.c_str(), to_string(p.dtype), pretty_n(p.n).c_str(), to_string(p.cache),
                   c.target.c_str(), p.gbps, p.ratio_to_peer >= 0 ? (fixed(p.ratio_to_peer, 3) + "x").c_str() : "-",
                   p.seconds.median / c.seconds.median, p.seconds.unsteady() ? "  UNSTEADY pass" : "");
    }
  }
}

}  // namespace

void print_expressions(const Report& r, std::FILE* out) {
  if (r.expressions.empty() && r.expression_call_costs.empty()) return;
  std::fprintf(out,
               "\nexpressions: fused = one compiled ew::Kernel; unfused = the fixed ops through temporaries;\n"
               "peer = an OpenMP loop of the formula (-O3 -march=native; exp from libm), on a GPU\n"
               "cub::DeviceTransform with the formula as a functor compiled ahead of time. GB/s count the distinct\n"
               "inputs read once plus the output written once, alike for all three (ratios are ratios of time).\n");
  std::vector<std::string> listed;
  for (const ExprResult& x : r.expressions) {
    if (std::find(listed.begin(), listed.end(), x.expression) != listed.end()) continue;
    listed.push_back(x.expression);
    const Entry* e = entry_named(x.expression);
    std::fprintf(out, "  %-7s %-52s %2d nodes, %d arrays, fixed ops: %s%s\n", x.expression.c_str(), x.formula.c_str(),
                 x.nodes, e ? e->inputs + 1 : 0, x.fixed_ops.empty() ? "none" : x.fixed_ops.c_str(),
                 x.transcendental ? ", transcendental" : "");
  }
  std::fprintf(out, "\n%-7s %-5s %-5s %-5s %-9s %11s %13s %9s %6s %9s %9s %9s %9s\n", "expr", "dtype", "n", "cache",
               "backend", "fused time", "spread", "GB/s", "%ceil", "unfused", "peer", "vs peer", "vs unfus");
  int unsteady = 0, rows = 0;
  for (const ExprResult& x : r.expressions) {
    if (x.method != "fused") continue;
    ++rows;
    char head[96];
    std::snprintf(head, sizeof head, "%-7s %-5s %-5s %-5s %-9s", x.expression.c_str(), to_string(x.dtype),
                  pretty_n(x.n).c_str(), to_string(x.cache), x.target.c_str());
    if (!x.available) {
      std::fprintf(out, "%s not available: %s\n", head, x.reason.c_str());
      continue;
    }
    const ExprResult *unfused = nullptr, *peer = nullptr;
    for (const ExprResult& y : r.expressions) {
      if (y.expression != x.expression || y.place != x.place || y.dtype != x.dtype || y.n != x.n || y.cache != x.cache)
        continue;
      if (y.method == "unfused" && y.target == x.target) unfused = &y;
      if (y.method == "peer") peer = &y;
    }
    std::string unfused_text = x.fixed_ops.empty() ? "none" : "n/a";
    if (unfused && unfused->available) unfused_text = fixed(unfused->gbps, 1);
    std::string peer_text = peer && peer->available ? fixed(peer->gbps, 1) : "-";
    const double lo = 100.0 * (x.seconds.min / x.seconds.median - 1), hi = 100.0 * (x.seconds.max / x.seconds.median - 1);
    std::string notes;
    for (const ExprResult* y : {&x, unfused, peer}) {
      if (!y || !y->available) continue;
      const std::string who = y->method == "peer" ? "peer" : y->method;
      if (!y->verified) notes += "  (" + who + " NOT VERIFIED)";
      if (y->seconds.unsteady()) {
        ++unsteady;
        notes += "  UNSTEADY " + who + ": slowest batch " + fixed(y->seconds.spread(), 1) + "x the median";
      }
    }
    std::fprintf(out, "%s %11s %13s %9.1f %6s %9s %9s %9s %9s%s\n", head, duration(x.seconds.median).c_str(),
                 (fixed(lo, 0) + "/+" + fixed(hi, 0) + "%").c_str(), x.gbps,
                 x.pct_of_measured_ceiling >= 0 ? fixed(x.pct_of_measured_ceiling, 1).c_str() : "-", unfused_text.c_str(),
                 peer_text.c_str(), x.ratio_to_peer >= 0 ? (fixed(x.ratio_to_peer, 2) + "x").c_str() : "-",
                 x.ratio_to_unfused >= 0 ? (fixed(x.ratio_to_unfused, 2) + "x").c_str() : "-", notes.c_str());
  }
  std::fprintf(out, "%d fused rows; %d unsteady measurements among them and their unfused and peer figures\n", rows,
               unsteady);
  print_kokkos_against_cuda(r, out);
  print_read_pass(r, out);
  if (!r.expression_call_costs.empty()) {
    std::fprintf(out, "\none call on %zu floats (median of %d batches of back-to-back calls; fastest batch)\n",
                 r.expression_call_costs.front().n, r.expression_call_costs.front().seconds.reps);
    for (const CallCost& c : r.expression_call_costs)
      std::fprintf(out, "  %-9s %-18s %8.1f ns  (%.1f)\n", c.backend.c_str(), c.what.c_str(), c.seconds.median * 1e9,
                   c.seconds.min * 1e9);
  }
}

namespace {

// The colors of plot.cpp's palette, so a backend looks the same in every panel.
std::string color_of(const std::string& target) {
  static const std::map<std::string, std::string> colors = {{"highway", "#1f77b4"}, {"kokkos", "#9467bd"},
                                                            {"scalar", "#7f7f7f"},  {"cuda", "#d62728"},
                                                            {"openmp loop", "#e377c2"},
                                                            {"cub::DeviceTransform", "#2ca02c"}};
  auto it = colors.find(target);
  return it != colors.end() ? it->second : "#8c564b";
}

// A bar chart of one place at its largest size measured (cold where measured): per
// expression and dtype, the fused bar of each backend, its unfused bar (pale), and the
// peer (hollow).
std::string expressions_panel(const Report& r, Place place, double y0, double width, double& height) {
  height = 0;
  std::size_t n = 0;
  bool any_cold = false;
  std::string peer_name;
  for (const ExprResult& x : r.expressions)
    if (x.available && x.place == place) {
      n = std::max(n, x.n), any_cold = any_cold || x.cache == Cache::cold;
      if (x.method == "peer") peer_name = x.target;
    }
  if (n == 0) return "";
  const Cache shown = any_cold ? Cache::cold : Cache::warm;
  struct Group {
    std::string label;
    std::vector<const ExprResult*> bars;
  };
  std::vector<Group> groups;
  std::vector<std::string> backends;
  double top = 0;
  for (const std::string& name : expression_names())
    for (DType d : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
      Group g{name + " " + to_string(d), {}};
      // Each backend's fused and unfused bars side by side, the peer last.
      for (const ExprResult& x : r.expressions)
        if (x.method == "fused" && x.available && x.place == place &&
            std::find(backends.begin(), backends.end(), x.target) == backends.end())
          backends.push_back(x.target);
      std::vector<std::pair<std::string, std::string>> order;  // (method, target)
      for (const std::string& b : backends) order.push_back({"fused", b}), order.push_back({"unfused", b});
      order.push_back({"peer", ""});
      for (const auto& [method, target] : order)
        for (const ExprResult& x : r.expressions)
          if (x.expression == name && x.place == place && x.dtype == d && x.n == n && x.cache == shown &&
              x.method == method &&
              (method == "peer" || x.target == target) && x.available) {
            g.bars.push_back(&x);
            top = std::max(top, x.gbps);
          }
      if (!g.bars.empty()) groups.push_back(std::move(g));
    }
  if (groups.empty()) return "";
  const Ceilings* ceiling = r.ceilings_of(place);
  if (ceiling && ceiling->memory_gbps > 0) top = std::max(top, ceiling->memory_gbps);
  top *= 1.12;

  height = 360;
  const double x0 = 70, fy = y0 + 44, fw = width - x0 - 230, fh = height - 110;
  auto py = [&](double v) { return fy + fh - fh * v / top; };
  std::ostringstream s;
  s << "<text x='" << x0 << "' y='" << y0 + 22 << "' font-size='15'>"
    << xml_escape("Expressions at n = " + pretty_n(n) + " on the " + to_string(place) + " (" + to_string(shown) +
           "): fused Kernel, the fixed ops unfused, " + (peer_name.empty() ? "no peer" : peer_name))
    << "</text>\n";
  s << "<rect x='" << x0 << "' y='" << fy << "' width='" << fw << "' height='" << fh << "' fill='white' stroke='#444'/>\n";
  const double step = top > 200 ? 50 : top > 80 ? 20 : top > 40 ? 10 : top > 16 ? 5 : top > 8 ? 2 : 1;
  for (double v = 0; v <= top; v += step)
    s << "<line x1='" << x0 << "' y1='" << py(v) << "' x2='" << x0 + fw << "' y2='" << py(v)
      << "' stroke='#e4e4e4'/>\n<text x='" << x0 - 6 << "' y='" << py(v) + 4 << "' text-anchor='end' font-size='11'>"
      << v << "</text>\n";
  s << "<text transform='translate(" << x0 - 44 << "," << fy + fh / 2
    << ") rotate(-90)' text-anchor='middle' font-size='12'>GB/s (distinct inputs + output)</text>\n";
  if (ceiling && ceiling->memory_gbps > 0)
    s << "<line x1='" << x0 << "' y1='" << py(ceiling->memory_gbps) << "' x2='" << x0 + fw << "' y2='"
      << py(ceiling->memory_gbps) << "' stroke='#1f4e79' stroke-dasharray='6,4'/>\n<text x='" << x0 + 4 << "' y='"
      << py(ceiling->memory_gbps) - 4 << "' font-size='10' fill='#1f4e79'>" << to_string(place) << " memory ceiling "
      << fixed(ceiling->memory_gbps, 1) << " GB/s</text>\n";

  const double group_w = fw / double(groups.size());
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group& g = groups[gi];
    const double bar_w = std::min(28.0, (group_w - 12) / double(g.bars.size()));
    double x = x0 + gi * group_w + (group_w - bar_w * double(g.bars.size())) / 2;
    for (const ExprResult* b : g.bars) {
      const std::string color = color_of(b->target);
      const bool peer = b->method == "peer", unfused = b->method == "unfused";
      s << "<rect x='" << x + 1 << "' y='" << py(b->gbps) << "' width='" << bar_w - 2 << "' height='"
        << fy + fh - py(b->gbps) << "' fill='" << (peer ? "white" : color) << "' fill-opacity='" << (unfused ? 0.3 : 1)
        << "' stroke='" << color << "' stroke-width='1.5'" << (unfused ? " stroke-dasharray='3,2'" : "") << "/>\n";
      if (b->seconds.unsteady())
        s << "<circle cx='" << x + bar_w / 2 << "' cy='" << py(b->gbps) << "' r='5' fill='none' stroke='#d62728' "
          << "stroke-width='1.6'/>\n";
      if (b->method == "fused" && b->ratio_to_peer >= 0)
        s << "<text x='" << x + bar_w / 2 << "' y='" << py(b->gbps) - 4 << "' font-size='9' text-anchor='middle'>"
          << fixed(b->ratio_to_peer, 2) << "</text>\n";
      x += bar_w;
    }
    s << "<text x='" << x0 + (gi + 0.5) * group_w << "' y='" << fy + fh + 16 << "' font-size='11' text-anchor='middle'>"
      << xml_escape(g.label) << "</text>\n";
  }
  // Legend.
  double ly = fy + 12;
  const double lx = x0 + fw + 16;
  auto legend = [&](const std::string& color, bool hollow, bool pale, const std::string& label) {
    s << "<rect x='" << lx << "' y='" << ly - 9 << "' width='14' height='10' fill='" << (hollow ? "white" : color)
      << "' fill-opacity='" << (pale ? 0.3 : 1) << "' stroke='" << color << "'" << (pale ? " stroke-dasharray='3,2'" : "")
      << "/>\n<text x='" << lx + 20 << "' y='" << ly << "' font-size='11'>" << xml_escape(label) << "</text>\n";
    ly += 16;
  };
  for (const std::string& b : backends) {
    legend(color_of(b), false, false, b + ": fused Kernel");
    legend(color_of(b), false, true, b + ": fixed ops, unfused");
  }
  if (!peer_name.empty()) legend(color_of(peer_name), true, false, "peer: " + peer_name);
  s << "<text x='" << lx << "' y='" << ly + 6 << "' font-size='10' fill='#555'>number over a fused bar:</text>\n"
    << "<text x='" << lx << "' y='" << ly + 19 << "' font-size='10' fill='#555'>its speed / the peer's</text>\n"
    << "<text x='" << lx << "' y='" << ly + 32 << "' font-size='10' fill='#555'>no pale bar: no fixed-op sequence</text>\n";
  return s.str();
}

}  // namespace

// One panel per place measured, the host's first.
std::string expressions_svg(const Report& r, double y0, double width, double& height) {
  height = 0;
  std::string svg;
  for (Place place : {Place::host, Place::device}) {
    double h = 0;
    svg += expressions_panel(r, place, y0 + height, width, h);
    height += h;
  }
  return svg;
}

}  // namespace ew::roofline
