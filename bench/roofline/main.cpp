// ew-roofline: the machine's measured ceilings, every usable backend of elementwise
// and the best peers, in one run; as a table, JSON (--json) and an SVG (--plot).
// See docs/roofline.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>

#include "cpu_probe.hpp"
#include "ew/ew.hpp"
#include "expressions.hpp"
#include "gpu.hpp"
#include "options.hpp"
#include "reductions.hpp"
#include "report.hpp"
#include "sweep.hpp"
#if defined(EW_ROOFLINE_LADDER)
#include "ladder.hpp"
#endif

using namespace ew::roofline;

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

Machine describe() {
  Machine m;
  cpu::describe(m);
  const gpu::Info& g = gpu::query();
  if (g.usable) {
    m.gpu_model = g.name, m.gpu_sms = g.sms, m.gpu_memory_bytes = g.memory_bytes, m.gpu_l2_bytes = g.l2_bytes;
    m.gpu_driver = g.driver, m.cuda_runtime = g.runtime;
  }
  m.library_version = ew::version();
  for (const ew::BackendStatus& s : ew::available_backends())
    m.backends.push_back({s.name, s.compiled, s.usable, s.detail, s.reason});
  return m;
}

std::vector<int> powers(int first, int last, int step) {
  std::vector<int> v;
  for (int e = first; e <= last; e += step) v.push_back(e);
  return v;
}

int run(const Options& o) {
  const auto start = std::chrono::steady_clock::now();
  Report r;
  r.date = utc_now();
  r.quick = o.quick;
  r.reps = o.repetitions();
  r.machine = describe();
  Progress progress;

  std::vector<Target> targets = make_targets(o.backends, o.quick, o.peers, r.skipped);
  for (const Skipped& s : r.skipped)
    std::fprintf(stderr, "ew-roofline: backend %s is not usable here: %s\n", s.name.c_str(), s.reason.c_str());
  bool host = false, device = false;
  for (const Target& t : targets) (t.place == Place::host ? host : device) = true;
  if (!host && !device && !o.ladder) {
    std::fprintf(stderr, "ew-roofline: nothing to measure\n");
    return 1;
  }
  device = device || (o.ladder && gpu::query().usable);

  Plan plan;
  for (const ew::OpInfo& oi : ew::op_table) plan.ops.push_back(oi.op);
  if (!o.ops.empty()) plan.ops = o.ops;
  plan.dtypes = o.dtypes.empty() ? std::vector<ew::DType>{ew::DType::f32, ew::DType::f64} : o.dtypes;
  // The intensity probe takes f32 and f64; f16 and bf16 are storage for the seven ops,
  // the reductions and the expressions (their arithmetic is f32's).
  std::vector<ew::DType> wide;
  for (ew::DType d : plan.dtypes)
    if (!ew::is_storage16(d)) wide.push_back(d);
  plan.host_log2 = !o.sizes_log2.empty() ? o.sizes_log2 : o.quick ? powers(12, 24, 4) : powers(10, 26, 1);
  plan.device_log2 = !o.sizes_log2.empty() ? o.sizes_log2 : o.quick ? powers(16, 28, 4) : powers(10, 28, 1);
  plan.cold = o.cold, plan.warm = o.warm, plan.reps = r.reps, plan.quick = o.quick;
  plan.host_cold_bytes = std::max<std::size_t>(4 * r.machine.llc_bytes, std::size_t(256) << 20);
  plan.device_cold_bytes = std::max<std::size_t>(8 * r.machine.gpu_l2_bytes, std::size_t(512) << 20);

  progress.step("ceilings");
  // A ceiling is a best case: at least 9 tries even with --quick or --reps 1 (on a
  // shared machine a few of them will be disturbed).
  const int ceiling_reps = std::max(r.reps, 9);
  if (host) r.ceilings.push_back(cpu::measure_ceilings(r.machine, o.quick, ceiling_reps));
  if (device) r.ceilings.push_back(gpu::measure_ceilings(o.quick, ceiling_reps));

  if (!o.only_expressions) {
    progress.set_total(count_points(plan, targets));
    r.results = run_sweep(plan, targets, progress);
    progress.set_total(0);
  }

  const std::vector<int> ks = o.quick ? std::vector<int>{1, 4, 16, 64, 256} : std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128, 256};
  for (ew::DType d : o.only_expressions ? std::vector<ew::DType>{} : wide) {
    if (host) {
      progress.step(std::string("intensity probe, cpu ") + ew::to_string(d));
      std::size_t n = std::max<std::size_t>(std::size_t(1) << 22, 4 * r.machine.llc_bytes / ew::size_of(d));
      for (const IntensityPoint& p : cpu::intensity(d, ks, n, r.reps)) r.intensity.push_back(p);
    }
    if (device) {
      progress.step(std::string("intensity probe, gpu ") + ew::to_string(d));
      for (const IntensityPoint& p : gpu::intensity(d, ks, std::size_t(1) << (o.quick ? 25 : 27), r.reps))
        r.intensity.push_back(p);
    }
  }

  if (!o.no_expressions) {
    ExprPlan ep;
    ep.backends = o.backends;
    ep.expressions = !o.expressions.empty() ? o.expressions : o.quick ? quick_expressions() : expression_names();
    ep.dtypes = !o.dtypes.empty() ? o.dtypes : o.quick ? std::vector<ew::DType>{ew::DType::f32} : plan.dtypes;
    // --quick: 2^22, the smallest size of issue 11's goals, cheap even for a single-threaded backend.
    ep.log2_sizes = !o.sizes_log2.empty() ? o.sizes_log2 : o.quick ? std::vector<int>{22} : plan.host_log2;
    // On a GPU, --quick: a launch-bound size, a mid size and a large one (issue 12's goals
    // differ between 2^20..2^22 and 2^24..2^28).
    ep.device_log2_sizes = !o.sizes_log2.empty() ? o.sizes_log2 : o.quick ? std::vector<int>{20, 24, 28} : plan.device_log2;
    ep.cold = plan.cold, ep.warm = plan.warm, ep.peers = o.peers, ep.read_pass = o.read_pass, ep.quick = o.quick, ep.reps = r.reps;
    ep.cold_bytes = plan.host_cold_bytes, ep.device_cold_bytes = plan.device_cold_bytes;
    if (const Ceilings* c = r.ceilings_of(Place::host)) ep.memory_gbps = c->memory_gbps;
    if (const Ceilings* c = r.ceilings_of(Place::device)) ep.device_gbps = c->memory_gbps;
    ExprSection section = measure_expressions(ep, progress);
    r.expressions = std::move(section.results);
    r.expression_call_costs = std::move(section.call_costs);
  }

  if (!o.no_reductions && !o.only_expressions) {
    ReductionPlan rp;
    rp.backends = o.backends;
    rp.dtypes = plan.dtypes;  // every dtype: 16-bit data reduce (2 bytes per element read)
    rp.host_log2 = !o.sizes_log2.empty() ? o.sizes_log2 : o.quick ? std::vector<int>{22} : powers(16, 26, 2);
    rp.device_log2 = !o.sizes_log2.empty() ? o.sizes_log2 : o.quick ? std::vector<int>{24} : powers(20, 28, 2);
    rp.peers = o.peers, rp.quick = o.quick, rp.reps = r.reps;
    if (const Ceilings* c = r.ceilings_of(Place::host)) rp.host_gbps = c->memory_gbps;
    if (const Ceilings* c = r.ceilings_of(Place::device)) rp.device_gbps = c->memory_gbps;
    r.reductions = measure_reductions(rp, progress);
  }

  if (o.ladder) {
#if defined(EW_ROOFLINE_LADDER)
    if (gpu::query().usable) {
      ladder::Settings s;
      s.hbm_ceiling_gbps = r.ceilings_of(Place::device)->memory_gbps;
      s.quick = o.quick, s.reps = r.reps;
      s.progress = [&](const std::string& what) { progress.step("ladder: " + what); };
      r.ladder = ladder::run(s);
    } else {
      r.ladder_skipped = "no usable GPU: " + gpu::query().why;
    }
#else
    r.ladder_skipped = "ew-roofline was built without CUDA";
#endif
    if (!r.ladder_skipped.empty()) std::fprintf(stderr, "ew-roofline: --ladder: %s\n", r.ladder_skipped.c_str());
  }
  progress.clear();

  finalize(r);
  r.elapsed_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  print_table(r, stdout);
  if (!o.json.empty()) write_json(r, o.json);
  if (!o.plot.empty()) write_svg(r, o.plot);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
    if (o.help) {
      std::fputs(usage(), stdout);
      return 0;
    }
    check_environment();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "ew-roofline: %s\n", e.what());
    return 2;
  }
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "\new-roofline: %s\n", e.what());
    return 1;
  }
}
