#include "report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace ew::roofline {

std::string pretty_n(std::size_t n) {
  if (n && (n & (n - 1)) == 0) {
    int e = 0;
    while ((std::size_t(1) << e) < n) ++e;
    return "2^" + std::to_string(e);
  }
  return std::to_string(n);
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string duration(double s) {
  if (s < 1e-3) return fixed(s * 1e6, 2) + " us";
  if (s < 1) return fixed(s * 1e3, 3) + " ms";
  return fixed(s, 3) + " s";
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '&') o += "&amp;";
    else if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else o += c;
  }
  return o;
}

namespace {

// The memory ceiling of an op's kind of traffic: the fastest ceiling kernel that moves
// the same streams. copy and scale read one array and write another (copy kernels, with
// or without streaming stores, and the highway backend's own copy); add, mul and triad
// read two and write a third (triad kernels); axpy and axpby read and write one array in
// place, with no read-for-ownership (the in-place update). 0 when no such kernel ran.
double traffic_ceiling(const Ceilings& c, Op op) {
  std::vector<std::string> prefixes;
  if (op == Op::copy || op == Op::scale) prefixes = {"copy", "highway backend copy", "cudaMemcpy"};
  else if (op == Op::axpy || op == Op::axpby) prefixes = {"update in place"};
  else prefixes = {"triad"};
  double best = 0;
  for (const CeilingKernel& k : c.kernels)
    for (const std::string& p : prefixes)
      if (k.kind == "memory" && k.name.compare(0, p.size(), p) == 0) best = std::max(best, k.value);
  return best;
}

}  // namespace

void finalize(Report& r) {
  using Key = std::tuple<Place, Op, DType, std::size_t, Cache>;
  std::map<Key, const Result*> best;
  for (const Result& x : r.results) {
    if (!x.peer) continue;
    Key k{x.place, x.op, x.dtype, x.n, x.cache};
    if (!best.count(k) || best[k]->gbps < x.gbps) best[k] = &x;
  }
  for (Result& x : r.results) {
    if (const Ceilings* c = r.ceilings_of(x.place)) {
      if (c->memory_gbps > 0) x.pct_of_measured_ceiling = 100.0 * x.gbps / c->memory_gbps;
      if (c->spec_gbps > 0) x.pct_of_spec = 100.0 * x.gbps / c->spec_gbps;
      if (const double t = traffic_ceiling(*c, x.op); t > 0) x.pct_of_traffic_ceiling = 100.0 * x.gbps / t;
    }
    if (x.peer) continue;
    auto it = best.find(Key{x.place, x.op, x.dtype, x.n, x.cache});
    if (it != best.end() && it->second->gbps > 0) {
      x.ratio_to_best_peer = x.gbps / it->second->gbps;
      x.best_peer = it->second->target;
    }
  }
}


void print_table(const Report& r, std::FILE* out) {
  std::fprintf(out, "elementwise %s roofline, %s\n", r.machine.library_version.c_str(), r.date.c_str());
  std::fprintf(out, "cpu: %s, %d logical CPUs\n", r.machine.cpu_model.c_str(), r.machine.cpu_cores);
  if (!r.machine.gpu_model.empty())
    std::fprintf(out, "gpu: %s, %d SMs, %.1f GiB\n", r.machine.gpu_model.c_str(), r.machine.gpu_sms,
                 r.machine.gpu_memory_bytes / double(1 << 30));
  for (const Skipped& s : r.skipped) std::fprintf(out, "skipped backend %s: %s\n", s.name.c_str(), s.reason.c_str());

  std::fprintf(out, "\nceilings (fastest of %d repetitions)\n", std::max(r.reps, 9));
  for (const Ceilings& c : r.ceilings) {
    for (const CeilingKernel& k : c.kernels)
      std::fprintf(out, "  %-4s %-7s %-40s %10.1f %s\n", to_string(c.place), k.kind.c_str(), k.name.c_str(), k.value,
                   k.kind == "fma" ? "GFLOP/s" : "GB/s");
    if (c.spec_gbps > 0)
      std::fprintf(out, "  %-4s %-7s %-40s %10.1f GB/s\n", to_string(c.place), "spec", "memory clock x bus width x 2",
                   c.spec_gbps);
  }

  int unsteady = 0;
  std::fprintf(out, "\n%-22s %-4s %-6s %-5s %-6s %-5s %12s %13s %9s %7s %7s %7s %9s\n", "backend", "dev", "op", "dtype",
               "n", "cache", "time", "spread", "GB/s", "%ceil", "%traf", "%spec", "vs peer");
  for (const Result& x : r.results) {
    std::string name = x.peer ? "(peer) " + x.target : x.target;
    if (name.size() > 22) name.resize(22);
    double spread_lo = 100.0 * (x.seconds.min / x.seconds.median - 1), spread_hi = 100.0 * (x.seconds.max / x.seconds.median - 1);
    std::string spread = fixed(spread_lo, 0) + "/+" + fixed(spread_hi, 0) + "%";
    if (x.seconds.unsteady()) ++unsteady;
    std::fprintf(out, "%-22s %-4s %-6s %-5s %-6s %-5s %12s %13s %9.1f %7s %7s %7s %9s%s%s\n", name.c_str(), to_string(x.place),
                 to_string(x.op), to_string(x.dtype), pretty_n(x.n).c_str(), to_string(x.cache),
                 duration(x.seconds.median).c_str(), spread.c_str(), x.gbps,
                 x.pct_of_measured_ceiling >= 0 ? fixed(x.pct_of_measured_ceiling, 1).c_str() : "-",
                 x.pct_of_traffic_ceiling >= 0 ? fixed(x.pct_of_traffic_ceiling, 1).c_str() : "-",
                 x.pct_of_spec >= 0 ? fixed(x.pct_of_spec, 1).c_str() : "-",
                 x.ratio_to_best_peer >= 0 ? (fixed(x.ratio_to_best_peer, 2) + "x").c_str() : "-",
                 x.verified ? "" : "  (NOT VERIFIED)",
                 x.seconds.unsteady() ? ("  UNSTEADY: slowest batch " + fixed(x.seconds.spread(), 1) + "x the median").c_str()
                                      : "");
  }
  std::fprintf(out, "%d of %zu points unsteady (slowest batch over %.1fx the median)\n", unsteady, r.results.size(),
               unsteady_spread);

  if (!r.intensity.empty()) {
    std::fprintf(out, "\nintensity probe (bench kernel, k FMAs per element: characterizes the device)\n");
    std::fprintf(out, "%-4s %-5s %5s %10s %12s %10s\n", "dev", "dtype", "k", "FLOP/B", "GFLOP/s", "GB/s");
    for (const IntensityPoint& p : r.intensity)
      std::fprintf(out, "%-4s %-5s %5d %10.3f %12.1f %10.1f\n", to_string(p.place), to_string(p.dtype), p.k,
                   p.flop_per_byte, p.gflops, p.gbps);
  }

  if (!r.ladder.empty()) {
    std::fprintf(out, "\noptimization ladder (%s)\n", r.machine.gpu_model.c_str());
    std::string group;
    for (const LadderStep& s : r.ladder) {
      if (s.group != group) std::fprintf(out, "  %s\n", (group = s.group).c_str());
      if (s.seconds.reps == 0) {  // a step that could not run: its name says why
        std::fprintf(out, "    %s\n", s.name.c_str());
        continue;
      }
      std::fprintf(out, "    %-52s %10s %9.1f GB/s %6s%% %8s %s%s\n", s.name.c_str(), duration(s.seconds.median).c_str(),
                   s.gbps, s.pct_of_ceiling >= 0 ? fixed(s.pct_of_ceiling, 1).c_str() : "-",
                   s.gain > 0 ? (fixed(s.gain, 2) + "x").c_str() : "", s.verified ? "verified" : "NOT VERIFIED",
                   s.note.empty() ? "" : ("  " + s.note).c_str());
    }
  } else if (!r.ladder_skipped.empty()) {
    std::fprintf(out, "\nladder not run: %s\n", r.ladder_skipped.c_str());
  }
  print_expressions(r, out);
  print_reductions(r, out);
  std::fprintf(out, "\n%.1f s in all\n", r.elapsed_seconds);
}

namespace {

// A minimal JSON writer: objects and arrays with comma bookkeeping.
class Json {
 public:
  std::string str() const { return out_.str() + "\n"; }
  Json& begin_object(const char* key = nullptr) { return open(key, '{'); }
  Json& begin_array(const char* key = nullptr) { return open(key, '['); }
  Json& end_object() { return close('}'); }
  Json& end_array() { return close(']'); }
  Json& field(const char* key, const std::string& v) { return raw(key, quote(v)); }
  Json& field(const char* key, const char* v) { return v ? raw(key, quote(v)) : raw(key, "null"); }
  Json& field(const char* key, bool v) { return raw(key, v ? "true" : "false"); }
  Json& field(const char* key, int v) { return raw(key, std::to_string(v)); }
  Json& field(const char* key, std::size_t v) { return raw(key, std::to_string(v)); }
  Json& field(const char* key, double v) { return raw(key, number(v)); }
  // A number where it is known (>= 0), null otherwise.
  Json& maybe(const char* key, double v) { return raw(key, v >= 0 ? number(v) : "null"); }
  Json& null(const char* key) { return raw(key, "null"); }

 private:
  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\', q += c;
      else if (static_cast<unsigned char>(c) < 0x20) q += ' ';
      else q += c;
    }
    return q + "\"";
  }
  static std::string number(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
  }
  void separator(const char* key) {
    if (!first_.empty()) {
      if (!first_.back()) out_ << ",";
      first_.back() = false;
      out_ << "\n" << std::string(2 * first_.size(), ' ');
    }
    if (key) out_ << quote(key) << ": ";
  }
  Json& open(const char* key, char c) {
    separator(key);
    out_ << c;
    first_.push_back(true);
    return *this;
  }
  Json& close(char c) {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) out_ << "\n" << std::string(2 * first_.size(), ' ');
    out_ << c;
    return *this;
  }
  Json& raw(const char* key, const std::string& v) {
    separator(key);
    out_ << v;
    return *this;
  }
  std::ostringstream out_;
  std::vector<bool> first_;
};

void stats(Json& j, const Stats& s) {
  j.field("seconds", s.median).field("seconds_min", s.min).field("seconds_max", s.max).field("reps", s.reps);
  j.field("spread", s.spread()).field("unsteady", s.unsteady());
}

const Machine::Backend* backend_named(const Machine& m, const char* name) {
  for (const Machine::Backend& b : m.backends)
    if (b.name == name && b.usable) return &b;
  return nullptr;
}

}  // namespace

void write_json(const Report& r, const std::string& path) {
  Json j;
  const Machine& m = r.machine;
  j.begin_object();
  j.field("schema", "elementwise-roofline/1").field("date", r.date).field("quick", r.quick).field("reps", r.reps);
  j.field("elapsed_seconds", r.elapsed_seconds);

  j.begin_object("machine");
  j.field("library_version", m.library_version);
  j.begin_object("cpu")
      .field("model", m.cpu_model)
      .field("logical_cpus", m.cpu_cores)
      .field("l2_bytes", m.l2_bytes)
      .field("llc_bytes", m.llc_bytes)
      .end_object();
  if (m.gpu_model.empty()) {
    j.null("gpu");
  } else {
    j.begin_object("gpu")
        .field("model", m.gpu_model)
        .field("sms", m.gpu_sms)
        .field("memory_bytes", m.gpu_memory_bytes)
        .field("l2_bytes", m.gpu_l2_bytes)
        .field("driver", m.gpu_driver)
        .field("cuda_runtime", m.cuda_runtime)
        .end_object();
  }
  const Machine::Backend* hwy = backend_named(m, "highway");
  const Machine::Backend* kokkos = backend_named(m, "kokkos");
  j.field("highway_target", hwy ? hwy->detail.c_str() : nullptr);
  j.field("kokkos", kokkos ? kokkos->detail.c_str() : nullptr);
  j.begin_array("backends");
  for (const Machine::Backend& b : m.backends) {
    j.begin_object().field("name", b.name).field("compiled", b.compiled).field("usable", b.usable);
    j.field("detail", b.detail).field("reason", b.reason).end_object();
  }
  j.end_array();
  j.end_object();

  j.begin_array("skipped");
  for (const Skipped& s : r.skipped) j.begin_object().field("backend", s.name).field("reason", s.reason).end_object();
  j.end_array();

  j.begin_object("ceilings");
  for (const Ceilings& c : r.ceilings) {
    j.begin_object(to_string(c.place));
    j.field("memory_gbps", c.memory_gbps).field("memory_kernel", c.memory_kernel);
    j.field("cache_gbps", c.cache_gbps).field("cache", c.cache_label);
    j.field("fma_gflops_f32", c.fma_gflops_f32).field("fma_gflops_f64", c.fma_gflops_f64);
    j.maybe("spec_gbps", c.spec_gbps > 0 ? c.spec_gbps : -1);
    j.begin_array("kernels");
    for (const CeilingKernel& k : c.kernels) {
      j.begin_object().field("kind", k.kind).field("name", k.name);
      if (k.kind == "fma") j.field("dtype", k.dtype).field("gflops", k.value);
      else j.field("gbps", k.value);
      stats(j, k.stats);
      j.end_object();
    }
    j.end_array().end_object();
  }
  j.end_object();

  j.begin_array("results");
  for (const Result& x : r.results) {
    if (x.peer) continue;
    j.begin_object().field("backend", x.target).field("device", to_string(x.place)).field("op", to_string(x.op));
    j.field("dtype", to_string(x.dtype)).field("n", x.n).field("cache", to_string(x.cache));
    stats(j, x.seconds);
    j.field("gbps", x.gbps).maybe("pct_of_measured_ceiling", x.pct_of_measured_ceiling).maybe("pct_of_spec", x.pct_of_spec);
    j.maybe("pct_of_traffic_ceiling", x.pct_of_traffic_ceiling);
    j.maybe("ratio_to_best_peer", x.ratio_to_best_peer);
    j.field("best_peer", x.best_peer.empty() ? nullptr : x.best_peer.c_str()).field("verified", x.verified);
    j.end_object();
  }
  j.end_array();

  j.begin_array("peers");
  for (const Result& x : r.results) {
    if (!x.peer) continue;
    j.begin_object().field("name", x.target).field("device", to_string(x.place)).field("op", to_string(x.op));
    j.field("dtype", to_string(x.dtype)).field("n", x.n).field("cache", to_string(x.cache));
    stats(j, x.seconds);
    j.field("gbps", x.gbps).maybe("pct_of_measured_ceiling", x.pct_of_measured_ceiling).maybe("pct_of_spec", x.pct_of_spec);
    j.maybe("pct_of_traffic_ceiling", x.pct_of_traffic_ceiling);
    j.field("verified", x.verified).end_object();
  }
  j.end_array();

  j.begin_array("intensity");
  for (const IntensityPoint& p : r.intensity) {
    j.begin_object().field("device", to_string(p.place)).field("dtype", to_string(p.dtype)).field("k", p.k).field("n", p.n);
    stats(j, p.seconds);
    j.field("flop_per_byte", p.flop_per_byte).field("gflops", p.gflops).field("gbps", p.gbps).end_object();
  }
  j.end_array();

  j.begin_array("ladder");
  for (const LadderStep& s : r.ladder) {
    j.begin_object().field("group", s.group).field("step", s.name).field("n", s.n);
    stats(j, s.seconds);
    j.field("gbps", s.gbps).maybe("pct_of_ceiling", s.pct_of_ceiling).maybe("gain", s.gain);
    j.field("verified", s.verified).field("note", s.note).end_object();
  }
  j.end_array();

  j.begin_array("expressions");
  for (const ExprResult& x : r.expressions) {
    j.begin_object().field("expression", x.expression).field("formula", x.formula).field("method", x.method);
    j.field("target", x.target).field("device", to_string(x.place)).field("dtype", to_string(x.dtype)).field("n", x.n);
    j.field("cache", to_string(x.cache)).field("nodes", x.nodes).field("transcendental", x.transcendental);
    j.field("bytes_per_element", x.bytes_per_element);
    j.field("fixed_ops", x.fixed_ops.empty() ? nullptr : x.fixed_ops.c_str()).field("available", x.available);
    j.field("reason", x.available ? nullptr : x.reason.c_str());
    if (x.available) stats(j, x.seconds), j.field("gbps", x.gbps);
    else j.null("seconds").null("seconds_min").null("seconds_max").null("reps").null("spread").null("unsteady").null("gbps");
    j.maybe("pct_of_measured_ceiling", x.pct_of_measured_ceiling).maybe("ratio_to_peer", x.ratio_to_peer);
    j.maybe("ratio_to_unfused", x.ratio_to_unfused).field("verified", x.verified).end_object();
  }
  j.end_array();
  j.begin_array("reductions");
  for (const ReductionResult& x : r.reductions) {
    j.begin_object().field("reduction", x.reduction).field("target", x.target).field("peer", x.peer);
    j.field("reproducible", x.reproducible).field("device", to_string(x.place)).field("dtype", to_string(x.dtype));
    j.field("n", x.n).field("bytes_per_element", x.bytes_per_element);
    stats(j, x.seconds);
    j.field("gbps", x.gbps).maybe("pct_of_measured_ceiling", x.pct_of_measured_ceiling);
    j.maybe("ratio_to_best_peer", x.ratio_to_best_peer).field("best_peer", x.best_peer.empty() ? nullptr : x.best_peer.c_str());
    j.field("verified", x.verified).end_object();
  }
  j.end_array();
  j.begin_array("expression_call_cost");
  for (const CallCost& c : r.expression_call_costs) {
    j.begin_object().field("backend", c.backend).field("call", c.what).field("n", c.n);
    stats(j, c.seconds);
    j.field("ns", c.seconds.median * 1e9).end_object();
  }
  j.end_array();
  j.end_object();

  std::ofstream f(path);
  f << j.str();
  if (!f) throw std::runtime_error("cannot write " + path);
}

}  // namespace ew::roofline
