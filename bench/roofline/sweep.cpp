#include "sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "cpu_probe.hpp"
#include "ew/ew.hpp"
#include "gpu.hpp"
#include "peers.hpp"
#include "timing.hpp"

namespace ew::roofline {

namespace {

constexpr std::size_t page = 4096;
// The scalars every op gets: finite values that keep repeated in-place ops bounded.
constexpr double scalar_s = 0.75, scalar_t = 0.5;

// Calls f(T{}) with T the element type of dtype d.
template <class F>
decltype(auto) with_type(DType d, F&& f) {
  switch (d) {
    case DType::f64: return f(double{});
    case DType::f16: return f(half{});
    case DType::bf16: return f(bfloat16{});
    case DType::f32: break;
  }
  return f(float{});
}

template <class T>
void library_call(Context& ctx, MemorySpace space, const Call& c) {
  const OpInfo& oi = info(c.op);
  Operands<T> o;
  o.a = Span<const T>(static_cast<const T*>(c.a), c.n, space);
  if (oi.input_streams == 2) o.b = Span<const T>(static_cast<const T*>(c.b), c.n, space);
  o.out = Span<T>(static_cast<T*>(c.out), c.n, space);
  o.s = static_cast<compute_t<T>>(c.s);
  o.t = static_cast<compute_t<T>>(c.t);
  run<T>(ctx, c.op, o);
}

std::vector<bench::Peer> linked_peers() {
  std::vector<bench::Peer> all;
#if defined(EW_ROOFLINE_CPU_PEERS)
  for (const bench::Peer& p : bench::cpu_peers()) all.push_back(p);
#endif
#if defined(EW_ROOFLINE_CUDA_PEERS)
  if (gpu::query().usable)
    for (const bench::Peer& p : bench::cuda_peers()) all.push_back(p);
#endif
  return all;
}

// Where one (op, dtype, n) lives in an arena: `sets` disjoint copies of its arrays,
// each array on its own page boundary. Cold runs rotate through the sets.
struct Layout {
  std::size_t array_bytes = 0, set_bytes = 0, sets = 1;
  int arrays = 0;
};

Layout layout(Op op, DType d, std::size_t n, Cache cache, std::size_t cold_bytes, std::size_t arena_bytes) {
  Layout l;
  l.arrays = info(op).input_streams + 1;
  l.array_bytes = (n * size_of(d) + page - 1) / page * page;
  l.set_bytes = l.arrays * l.array_bytes;
  if (cache == Cache::cold) {
    std::size_t want = (cold_bytes + l.set_bytes - 1) / l.set_bytes;
    l.sets = std::max<std::size_t>(1, std::min(want, arena_bytes / l.set_bytes));
  }
  return l;
}

struct Arena {
  Place place;
  char* base = nullptr;
  std::size_t bytes = 0;
  Arena(Place p, std::size_t b) : place(p), bytes(b) {
    base = static_cast<char*>(p == Place::host ? cpu::host_alloc(b) : gpu::allocate(b));
    refill();
  }
  // Every element holds a normal float in [1, 2); read as doubles the same bytes
  // are normal numbers near 2^-7, read as f16 or bf16 normal numbers in [2^-7, 2).
  // Never zero, never subnormal.
  void refill() {
    if (place == Place::host) cpu::host_fill(base, bytes / 4, DType::f32, 11);
    else gpu::fill(base, bytes / 4, DType::f32, 11);
  }
  ~Arena() { place == Place::host ? cpu::host_free(base) : gpu::release(base); }
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  Call call(const Layout& l, std::size_t set, Op op, DType d, std::size_t n) const {
    char* s = base + set * l.set_bytes;
    void* out = s + (l.arrays - 1) * l.array_bytes;
    const void* b = info(op).in_place ? out : info(op).input_streams == 2 ? s + l.array_bytes : nullptr;
    return Call{op, d, n, s, b, out, scalar_s, scalar_t};
  }
  void read(void* dst, const void* src, std::size_t bytes) const {
    if (place == Place::host) std::memcpy(dst, src, bytes);
    else gpu::to_host(dst, src, bytes);
  }
};

// Runs one call on set 0 and compares every element with ew::apply on the inputs
// as they were: bit for bit for library backends, within a few ulps for peers.
template <class T>
bool verify_typed(Target& t, const Arena& arena, const Call& c) {
  const OpInfo& oi = info(c.op);
  std::vector<T> a(c.n), b(c.n), out(c.n);
  arena.read(a.data(), c.a, c.n * sizeof(T));
  if (c.b) arena.read(b.data(), c.b, c.n * sizeof(T));
  t.run(c);
  if (t.events) gpu::synchronize();
  t.sync();
  arena.read(out.data(), c.out, c.n * sizeof(T));
  using W = compute_t<T>;
  const W s = W(c.s), tt = W(c.t);
  // A 16-bit peer may round differently (a unit of 2^-8 for bf16); f32 and f64 peers by a few ulps.
  const double tolerance = sizeof(T) == 2 ? 1e-2 : sizeof(T) == 4 ? 1e-6 : 1e-14;
  bool ok = true;
  dispatch_op(c.op, [&](auto op) {
    for (std::size_t i = 0; i < c.n && ok; ++i) {
      T ref = apply<decltype(op)::value>(a[i], oi.reads_b() ? b[i] : T(0), s, tt);
      const double r = static_cast<double>(ref), o = static_cast<double>(out[i]);
      ok = t.exact ? std::memcmp(&ref, &out[i], sizeof(T)) == 0
                   : r == o || (std::isnan(r) && std::isnan(o)) || std::abs(o - r) <= tolerance * std::abs(r);
    }
  });
  return ok;
}

}  // namespace

std::vector<Target> make_targets(const std::vector<Backend>& requested, bool quick, bool peers,
                                 std::vector<Skipped>& skipped) {
  std::vector<Backend> wanted = requested;
  if (wanted.empty()) {
    bool other_cpu = backend_status(Backend::highway).usable || backend_status(Backend::kokkos).usable;
    for (const BackendStatus& s : available_backends())
      if (s.usable && !(quick && s.backend == Backend::scalar && other_cpu)) wanted.push_back(s.backend);
  }
  std::vector<Target> targets;
  bool host = false, device = false;
  for (Backend b : wanted) {
    BackendStatus st = backend_status(b);
    if (!st.usable) {
      skipped.push_back({st.name, st.reason});
      continue;
    }
    try {
      auto ctx = std::make_shared<Context>(b);
      Target t;
      t.name = st.name;
      bool on_device = Buffer<float>(*ctx, 64).space() == MemorySpace::device;
      if (on_device && gpu::query().usable) {  // GPU backends run on the probes' stream, so events time them
        ContextOptions opt;
        opt.stream = gpu::stream();
        ctx = std::make_shared<Context>(b, opt);
      }
      if (on_device && !gpu::query().usable) {
        skipped.push_back({st.name, "its memory is on a GPU that ew-roofline cannot use: " + gpu::query().why});
        continue;
      }
      t.place = on_device ? Place::device : Place::host;
      t.events = on_device && ctx->native_stream() == gpu::stream();
      const MemorySpace space = on_device ? MemorySpace::device : MemorySpace::host;
      Context* raw = ctx.get();
      t.supports = [](Op, DType) { return true; };
      t.run = [raw, space](const Call& c) {
        with_type(c.dtype, [&](auto tag) { library_call<decltype(tag)>(*raw, space, c); });
      };
      t.sync = [raw] { raw->synchronize(); };
      t.keep_alive = ctx;
      (on_device ? device : host) = true;
      targets.push_back(std::move(t));
    } catch (const std::exception& e) {
      skipped.push_back({st.name, e.what()});
    }
  }
  bool cuda_wanted = requested.empty() ||
                     std::find(requested.begin(), requested.end(), Backend::cuda) != requested.end();
  if (peers) {
    for (const bench::Peer& p : linked_peers()) {
      if (p.on_device ? !(device || (cuda_wanted && gpu::query().usable)) : !host) continue;
      Target t;
      t.name = p.name;
      t.peer = true;
      t.place = p.on_device ? Place::device : Place::host;
      t.events = p.on_device;
      t.exact = false;
      t.supports = p.supports;
      void* stream = p.on_device ? gpu::stream() : nullptr;
      t.run = [p, stream](const Call& c) { p.run(c.op, c.dtype, c.n, c.a, c.b, c.out, c.s, c.t, stream); };
      t.sync = [] {};
      targets.push_back(std::move(t));
    }
  }
  return targets;
}

namespace {

const std::vector<int>& sizes_for(const Plan& plan, Place p) {
  return p == Place::host ? plan.host_log2 : plan.device_log2;
}

std::vector<Cache> caches(const Plan& plan) {
  std::vector<Cache> c;
  if (plan.cold) c.push_back(Cache::cold);
  if (plan.warm) c.push_back(Cache::warm);
  return c;
}

}  // namespace

long count_points(const Plan& plan, const std::vector<Target>& targets) {
  long points = 0;
  for (const Target& t : targets)
    for (Op op : plan.ops)
      for (DType d : plan.dtypes)
        if (t.supports(op, d)) points += long(sizes_for(plan, t.place).size() * caches(plan).size());
  return points;
}

std::vector<Result> run_sweep(const Plan& plan, std::vector<Target>& targets, Progress& progress) {
  std::vector<Result> results;
  for (Place place : {Place::host, Place::device}) {
    std::vector<Target*> here;
    for (Target& t : targets)
      if (t.place == place) here.push_back(&t);
    const std::vector<int>& sizes = sizes_for(plan, place);
    if (here.empty() || sizes.empty()) continue;

    const std::size_t cold_bytes = place == Place::host ? plan.host_cold_bytes : plan.device_cold_bytes;
    // Room for every cold layout's whole rotation (fewer than cold_bytes / set + 1 sets):
    // an arena of cold_bytes alone held one set of arrays between a half and all of
    // cold_bytes, so such a point ran on one set over and over, and part of it stayed in
    // the last-level cache (f32 add at 2^26 on a 300 MiB L3: above the DRAM ceiling).
    std::size_t largest_set = 0;
    for (Op op : plan.ops)
      for (DType d : plan.dtypes)
        largest_set = std::max(largest_set, layout(op, d, std::size_t(1) << sizes.back(), Cache::warm, 0, 0).set_bytes);
    const std::size_t arena_bytes = cold_bytes + largest_set;
    Arena arena(place, arena_bytes);
    // Host calls take microseconds: batches of a few ms average out the clock.
    const double batch_seconds = place == Place::host ? (plan.quick ? 2e-3 : 4e-3) : (plan.quick ? 5e-4 : 1e-3);
    std::set<std::string> failed;  // target/op/dtype that threw once

    for (Op op : plan.ops)
      for (DType d : plan.dtypes) {
        // Earlier ops leave normal floats whose low 16 bits, read as bf16, are now and then
        // subnormal (a microcode assist for each vector holding one): 16-bit series start
        // from fresh data.
        if (is_storage16(d)) arena.refill();
        std::set<Target*> verified;
        for (int e : sizes) {
          const std::size_t n = std::size_t(1) << e;
          std::map<Target*, Result> cold_of;  // reused for warm when cold needed no rotation
          for (Cache cache : caches(plan)) {
            Layout l = layout(op, d, n, cache, cold_bytes, arena.bytes);
            bool same_as_cold = cache == Cache::warm && plan.cold &&
                                layout(op, d, n, Cache::cold, cold_bytes, arena.bytes).sets == 1;
            for (Target* t : here) {
              if (!t->supports(op, d)) continue;
              std::string key = t->name + "/" + to_string(op) + "/" + to_string(d);
              progress.step(t->name + " " + to_string(op) + " " + to_string(d) + " n=2^" + std::to_string(e) + " " +
                            to_string(cache));
              if (failed.count(key)) continue;
              Result r;
              if (same_as_cold && cold_of.count(t)) {
                r = cold_of[t];
                r.cache = Cache::warm;
                results.push_back(r);
                continue;
              }
              r.target = t->name, r.peer = t->peer, r.place = place, r.op = op, r.dtype = d, r.n = n, r.cache = cache;
              try {
                if (!verified.count(t)) {
                  bool ok = with_type(d, [&](auto tag) {
                    return verify_typed<decltype(tag)>(*t, arena, arena.call(l, 0, op, d, n));
                  });
                  if (!ok) {
                    progress.clear();
                    std::fprintf(stderr, "warning: %s %s %s n=%zu differs from the scalar reference%s\n",
                                 t->name.c_str(), to_string(op), to_string(d), n,
                                 t->exact ? " (not bit-identical)" : " (beyond a few ulps)");
                  }
                  r.verified = ok;
                  verified.insert(t);
                } else {
                  r.verified = true;  // verified at the first size of this op and dtype
                }
                std::size_t set = 0;
                auto batch = [&](long calls) {
                  auto body = [&] {
                    for (long c = 0; c < calls; ++c) {
                      t->run(arena.call(l, set, op, d, n));
                      set = (set + 1) % l.sets;
                    }
                  };
                  if (t->events) return gpu::time_on_stream(body);
                  return seconds_of([&] {
                    body();
                    t->sync();
                  });
                };
                batch(1);  // warm-up
                // The batch is sized from the fastest of a few single calls: one call that
                // happened to wait for the scheduler would shrink every batch to one call.
                double one = batch(1);
                for (int extra = 0; extra < 2 && one < batch_seconds / 4; ++extra) one = std::min(one, batch(1));
                long calls = batch_for(one, batch_seconds);
                std::vector<double> per_call;
                for (int rep = 0; rep < plan.reps; ++rep) per_call.push_back(batch(calls) / calls);
                r.seconds = summarize(per_call);
                r.gbps = double(info(op).bytes_per_element(d)) * n / r.seconds.median / 1e9;
                if (cache == Cache::cold) cold_of[t] = r;
                results.push_back(r);
              } catch (const std::exception& ex) {
                failed.insert(key);
                progress.clear();
                std::fprintf(stderr, "warning: %s %s %s failed, skipped: %s\n", t->name.c_str(), to_string(op),
                             to_string(d), ex.what());
              }
            }
          }
        }
      }
  }
  return results;
}

}  // namespace ew::roofline
