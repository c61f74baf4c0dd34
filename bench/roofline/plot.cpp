// --plot: one self-contained SVG written by hand (no dependencies). On top, a log-log
// roofline (x: arithmetic intensity in FLOP/byte, y: GFLOP/s) with each device's
// measured ceilings, every backend's and peer's points at its largest cold size, and
// the intensity probe's curve; below, one bandwidth-versus-size panel per op.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "report.hpp"

namespace ew::roofline {

namespace {

// FLOPs per element of each op (an fma counts 2): copy has none and stays off the roofline.
double flops_per_element(Op op) {
  switch (op) {
    case Op::copy: return 0;
    case Op::scale: case Op::add: case Op::mul: return 1;
    case Op::triad: case Op::axpy: return 2;
    case Op::axpby: return 3;
  }
  return 0;
}

std::string num(double v, int digits = 1) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

// Short labels for ticks: 0.01, 0.1, 1, 10, 100, 1k, 10k, ...
std::string tick_label(double v) {
  if (v >= 1e6) return num(v / 1e6, 0) + "M";
  if (v >= 1e3) return num(v / 1e3, 0) + "k";
  if (v >= 1) return num(v, 0);
  std::ostringstream o;
  o << v;
  return o.str();
}

// Powers of two below 1 as fractions: 1/64, 1/32, ...
std::string pow2_label(double v) { return v >= 1 ? tick_label(v) : "1/" + num(1 / v, 0); }

const char* device_color(Place p) { return p == Place::host ? "#1f4e79" : "#8b1a1a"; }

class Palette {
 public:
  const std::string& of(const std::string& target, bool peer) {
    auto it = colors_.find(target);
    if (it != colors_.end()) return it->second;
    // Backends in saturated primaries, the known peers in clearly different hues.
    static const std::map<std::string, std::string> fixed = {
        {"cuda", "#d62728"},           {"highway", "#1f77b4"},        {"kokkos", "#9467bd"},
        {"scalar", "#7f7f7f"},         {"cub::DeviceTransform", "#2ca02c"}, {"cuBLAS", "#ff7f0e"},
        {"openmp loop", "#e377c2"},    {"std::transform", "#17becf"}};
    static const char* others[] = {"#8c564b", "#bcbd22", "#393b79", "#637939", "#843c39", "#7b4173"};
    auto f = fixed.find(target);
    std::string c = f != fixed.end() ? f->second : others[next_++ % 6];
    order_.push_back({target, peer});
    return colors_[target] = c;
  }
  const std::vector<std::pair<std::string, bool>>& order() const { return order_; }

 private:
  std::map<std::string, std::string> colors_;
  std::vector<std::pair<std::string, bool>> order_;
  int next_ = 0;
};

// A log-log (or lin-x/log-y) plotting frame.
struct Frame {
  double x0, y0, w, h;           // pixel box
  double xmin, xmax, ymin, ymax;  // data range (positive)
  bool logx = true;
  double px(double x) const {
    return logx ? x0 + w * (std::log(x) - std::log(xmin)) / (std::log(xmax) - std::log(xmin))
                : x0 + w * (x - xmin) / (xmax - xmin);
  }
  double py(double y) const { return y0 + h - h * (std::log(y) - std::log(ymin)) / (std::log(ymax) - std::log(ymin)); }
  bool inside(double x, double y) const { return x >= xmin && x <= xmax && y >= ymin && y <= ymax; }
};

void decade_range(double lo, double hi, double& out_lo, double& out_hi) {
  out_lo = std::pow(10.0, std::floor(std::log10(std::max(lo, 1e-9))));
  out_hi = std::pow(10.0, std::ceil(std::log10(std::max(hi, out_lo * 10))));
  if (out_hi <= out_lo) out_hi = out_lo * 10;
}

void axes(std::ostream& s, const Frame& f, const std::string& xlabel, const std::string& ylabel, bool x_pow2) {
  s << "<rect x='" << f.x0 << "' y='" << f.y0 << "' width='" << f.w << "' height='" << f.h
    << "' fill='white' stroke='#444'/>\n";
  // y: decades with light grid lines
  for (double y = f.ymin; y <= f.ymax * 1.0001; y *= 10) {
    double p = f.py(y);
    s << "<line x1='" << f.x0 << "' y1='" << p << "' x2='" << f.x0 + f.w << "' y2='" << p
      << "' stroke='#e4e4e4'/>\n<text x='" << f.x0 - 6 << "' y='" << p + 4
      << "' text-anchor='end' font-size='11'>" << tick_label(y) << "</text>\n";
  }
  if (f.logx) {
    for (double x = f.xmin; x <= f.xmax * 1.0001; x *= 2) {
      double p = f.px(x);
      s << "<line x1='" << p << "' y1='" << f.y0 << "' x2='" << p << "' y2='" << f.y0 + f.h
        << "' stroke='#eeeeee'/>\n<text x='" << p << "' y='" << f.y0 + f.h + 15
        << "' text-anchor='middle' font-size='11'>" << pow2_label(x) << "</text>\n";
    }
  } else {
    int step = f.xmax - f.xmin > 12 ? 2 : 1;
    for (int e = int(f.xmin); e <= int(f.xmax); e += step) {
      double p = f.px(e);
      s << "<line x1='" << p << "' y1='" << f.y0 << "' x2='" << p << "' y2='" << f.y0 + f.h
        << "' stroke='#eeeeee'/>\n<text x='" << p << "' y='" << f.y0 + f.h + 15
        << "' text-anchor='middle' font-size='11'>" << (x_pow2 ? "2^" : "") << e << "</text>\n";
    }
  }
  s << "<text x='" << f.x0 + f.w / 2 << "' y='" << f.y0 + f.h + 32 << "' text-anchor='middle' font-size='12'>"
    << xml_escape(xlabel) << "</text>\n";
  s << "<text transform='translate(" << f.x0 - 48 << "," << f.y0 + f.h / 2
    << ") rotate(-90)' text-anchor='middle' font-size='12'>" << xml_escape(ylabel) << "</text>\n";
}

void marker(std::ostream& s, double x, double y, const std::string& color, DType d, bool filled) {
  std::string fill = filled ? color : "white";
  if (d == DType::f32)
    s << "<circle cx='" << x << "' cy='" << y << "' r='4.5' fill='" << fill << "' stroke='" << color
      << "' stroke-width='1.6'/>\n";
  else
    s << "<rect x='" << x - 4 << "' y='" << y - 4 << "' width='8' height='8' fill='" << fill << "' stroke='" << color
      << "' stroke-width='1.6'/>\n";
}

// An unsteady point (Stats::unsteady): a red ring around its marker and, where given, a
// whisker down to the bandwidth of its slowest batch, so the picture shows what the median hides.
void unsteady_mark(std::ostream& s, double x, double y, double y_slowest) {
  if (y_slowest > y)
    s << "<line x1='" << x << "' y1='" << y << "' x2='" << x << "' y2='" << y_slowest
      << "' stroke='#d62728' stroke-width='1.4'/>\n";
  s << "<circle cx='" << x << "' cy='" << y << "' r='8' fill='none' stroke='#d62728' stroke-width='1.8'/>\n";
}

// A line clipped to the frame by sampling (ceilings are straight in log-log space).
void segment(std::ostream& s, const Frame& f, double xa, double ya, double xb, double yb, const std::string& color,
             const char* dash, double width) {
  auto clamp = [&](double& x, double& y, double ox, double oy) {
    // Move (x, y) along the line toward (ox, oy) until it lies inside the y range.
    if (y < f.ymin || y > f.ymax) {
      double target = y < f.ymin ? f.ymin : f.ymax;
      double t = (std::log(target) - std::log(y)) / (std::log(oy) - std::log(y));
      x = std::exp(std::log(x) + t * (std::log(ox) - std::log(x)));
      y = target;
    }
  };
  if ((ya < f.ymin && yb < f.ymin) || (ya > f.ymax && yb > f.ymax)) return;
  clamp(xa, ya, xb, yb);
  clamp(xb, yb, xa, ya);
  s << "<line x1='" << f.px(xa) << "' y1='" << f.py(ya) << "' x2='" << f.px(xb) << "' y2='" << f.py(yb)
    << "' stroke='" << color << "' stroke-width='" << width << "'" << (dash ? std::string(" stroke-dasharray='") + dash + "'" : "")
    << "/>\n";
}

void text(std::ostream& s, double x, double y, const std::string& t, const std::string& color, int size = 11,
          const char* anchor = "start") {
  s << "<text x='" << x << "' y='" << y << "' font-size='" << size << "' fill='" << color << "' text-anchor='" << anchor
    << "'>" << xml_escape(t) << "</text>\n";
}

std::string device_name(const Report& r, Place p) {
  std::string name = p == Place::host ? "CPU: " + r.machine.cpu_model : "GPU: " + r.machine.gpu_model;
  return name.size() > 60 ? name.substr(0, 57) + "..." : name;
}

void roofline_panel(std::ostream& s, const Report& r, Palette& pal, double x0, double y0, double w, double h) {
  // Points: each (target, op, dtype) at its largest size, cold when measured.
  struct Point {
    const Result* r;
    double ai, gflops;
  };
  std::map<std::tuple<std::string, Op, DType, Place>, const Result*> largest;
  bool any_cold = std::any_of(r.results.begin(), r.results.end(), [](const Result& x) { return x.cache == Cache::cold; });
  for (const Result& x : r.results) {
    if (flops_per_element(x.op) == 0 || (any_cold && x.cache != Cache::cold)) continue;
    auto k = std::make_tuple(x.target, x.op, x.dtype, x.place);
    if (!largest.count(k) || largest[k]->n < x.n) largest[k] = &x;
  }
  std::vector<Point> points;
  double ylo = 1e300, yhi = 0;
  for (auto& [k, x] : largest) {
    double ai = flops_per_element(x->op) / double(info(x->op).bytes_per_element(x->dtype));
    points.push_back({x, ai, x->gbps * ai});
  }
  for (const Point& p : points) ylo = std::min(ylo, p.gflops), yhi = std::max(yhi, p.gflops);
  for (const IntensityPoint& p : r.intensity) ylo = std::min(ylo, p.gflops), yhi = std::max(yhi, p.gflops);
  for (const Ceilings& c : r.ceilings) {
    yhi = std::max({yhi, c.fma_gflops_f32, c.fma_gflops_f64});
    if (c.memory_gbps > 0) ylo = std::min(ylo, c.memory_gbps / 64);
  }
  if (yhi <= 0) ylo = 0.1, yhi = 100;
  Frame f{x0 + 70, y0 + 40, w - 500, h - 90, 1.0 / 64, 128, 0, 0};
  decade_range(ylo / 1.5, yhi * 1.5, f.ymin, f.ymax);

  text(s, x0 + 70, y0 + 22, "Roofline: measured ceilings and every backend (largest size, " +
                                std::string(any_cold ? "cold cache" : "warm cache") + ")", "#000", 15);
  axes(s, f, "arithmetic intensity (FLOP per byte moved)", "GFLOP/s", false);

  // Ceilings: memory (solid) and cache (dashed) slopes up to the FMA roof of each dtype.
  double label_y = f.y0 + 14;
  auto legend_line = [&](const std::string& color, const char* dash, const std::string& label) {
    double lx = f.x0 + f.w + 16;
    s << "<line x1='" << lx << "' y1='" << label_y - 4 << "' x2='" << lx + 26 << "' y2='" << label_y - 4
      << "' stroke='" << color << "' stroke-width='2'" << (dash ? std::string(" stroke-dasharray='") + dash + "'" : "")
      << "/>\n";
    text(s, lx + 32, label_y, label, "#000", 11);
    label_y += 16;
  };
  for (const Ceilings& c : r.ceilings) {
    const std::string color = device_color(c.place);
    const double roof = std::max(c.fma_gflops_f32, c.fma_gflops_f64);
    text(s, f.x0 + f.w + 16, label_y, device_name(r, c.place), color, 11);
    label_y += 16;
    if (c.memory_gbps > 0) {
      segment(s, f, f.xmin, c.memory_gbps * f.xmin, roof / c.memory_gbps, roof, color, nullptr, 2.2);
      legend_line(color, nullptr, "memory " + num(c.memory_gbps) + " GB/s: " + c.memory_kernel);
    }
    if (c.cache_gbps > 0) {
      segment(s, f, f.xmin, c.cache_gbps * f.xmin, roof / c.cache_gbps, roof, color, "7,4", 1.4);
      legend_line(color, "7,4", c.cache_label + " " + num(c.cache_gbps) + " GB/s");
    }
    if (c.spec_gbps > 0) {
      segment(s, f, f.xmin, c.spec_gbps * f.xmin, roof / c.spec_gbps, roof, color, "2,3", 1.2);
      legend_line(color, "2,3", "spec " + num(c.spec_gbps) + " GB/s (clock x bus x 2)");
    }
    // The flat roofs start where the fastest slope (cache, else memory) meets them.
    const double fastest = std::max(c.memory_gbps, c.cache_gbps);
    for (DType d : all_dtypes) {
      double peak = c.fma_gflops(d);
      if (peak <= 0 || fastest <= 0) continue;
      segment(s, f, peak / fastest, peak, f.xmax, peak, color, d == DType::f32 ? nullptr : "10,3,2,3", 2.2);
      legend_line(color, d == DType::f32 ? nullptr : "10,3,2,3",
                  std::string("FMA peak ") + to_string(d) + " " + num(peak, 0) + " GFLOP/s");
    }
    label_y += 6;
  }

  // The intensity probe: k = 1..256 FMAs per element, one curve per device and dtype.
  for (Place place : {Place::host, Place::device})
    for (DType d : all_dtypes) {
      std::ostringstream path;
      int count = 0;
      for (const IntensityPoint& p : r.intensity)
        if (p.place == place && p.dtype == d && f.inside(p.flop_per_byte, p.gflops))
          path << (count++ ? " L " : "M ") << f.px(p.flop_per_byte) << " " << f.py(p.gflops);
      if (count < 2) continue;
      s << "<path d='" << path.str() << "' fill='none' stroke='" << device_color(place)
        << "' stroke-opacity='0.45' stroke-width='1.5'/>\n";
      for (const IntensityPoint& p : r.intensity)
        if (p.place == place && p.dtype == d && f.inside(p.flop_per_byte, p.gflops))
          s << "<text x='" << f.px(p.flop_per_byte) << "' y='" << f.py(p.gflops) + 4
            << "' font-size='12' text-anchor='middle' fill='" << device_color(place) << "' fill-opacity='0.6'>"
            << (d == DType::f32 ? "+" : "x") << "</text>\n";
    }
  legend_line("#888", nullptr, "intensity probe, k = 1..256 FMA/element");
  text(s, f.x0 + f.w + 48, label_y, "(+ f32, x f64; a bench kernel: the device, not the library)", "#555", 10);
  label_y += 22;

  // Backend and peer points; copy has no FLOPs and appears only in its bandwidth panel.
  for (const Point& p : points) {
    if (!f.inside(p.ai, p.gflops)) continue;
    marker(s, f.px(p.ai), f.py(p.gflops), pal.of(p.r->target, p.r->peer), p.r->dtype, !p.r->peer);
    if (p.r->seconds.unsteady()) unsteady_mark(s, f.px(p.ai), f.py(p.gflops), 0);
  }
  for (const auto& [name, peer] : pal.order()) {
    double lx = f.x0 + f.w + 16;
    marker(s, lx + 13, label_y - 4, pal.of(name, peer), DType::f32, !peer);
    text(s, lx + 32, label_y, (peer ? "peer: " : "backend: ") + name, "#000", 11);
    label_y += 16;
  }
  text(s, f.x0 + f.w + 16, label_y + 4, "circle f32, square f64; filled = library", "#555", 10);
  text(s, f.x0 + f.w + 16, label_y + 18, "copy (0 FLOP) only in its panel below", "#555", 10);
  unsteady_mark(s, f.x0 + f.w + 29, label_y + 34, 0);
  text(s, f.x0 + f.w + 48, label_y + 38,
       "unsteady: slowest batch > " + num(unsteady_spread) + "x the median (" +
           std::to_string(std::count_if(r.results.begin(), r.results.end(),
                                        [](const Result& x) { return x.seconds.unsteady(); })) +
           " points); whisker: its GB/s",
       "#d62728", 10);
}

void bandwidth_panel(std::ostream& s, const Report& r, Palette& pal, Op op, double x0, double y0, double w, double h) {
  bool any_cold = std::any_of(r.results.begin(), r.results.end(), [](const Result& x) { return x.cache == Cache::cold; });
  Cache shown = any_cold ? Cache::cold : Cache::warm;
  std::map<std::tuple<std::string, DType, Place>, std::vector<const Result*>> series;
  double ylo = 1e300, yhi = 0;
  int emin = 64, emax = 0;
  for (const Result& x : r.results) {
    if (x.op != op || x.cache != shown) continue;
    series[{x.target, x.dtype, x.place}].push_back(&x);
    ylo = std::min(ylo, x.gbps), yhi = std::max(yhi, x.gbps);
    int e = int(std::lround(std::log2(double(x.n))));
    emin = std::min(emin, e), emax = std::max(emax, e);
  }
  for (const Ceilings& c : r.ceilings) yhi = std::max(yhi, c.cache_gbps > 0 ? c.cache_gbps : c.memory_gbps);
  if (series.empty()) return;
  if (emax == emin) emin -= 1, emax += 1;
  Frame f{x0 + 62, y0 + 30, w - 80, h - 75, double(emin), double(emax), 0, 0, false};
  decade_range(ylo / 1.3, yhi * 1.3, f.ymin, f.ymax);
  text(s, f.x0, y0 + 18, std::string(to_string(op)) + ": " + info(op).formula + " (" + to_string(shown) + ")", "#000", 13);
  axes(s, f, "n (elements)", "GB/s (counted bytes)", true);
  for (const Ceilings& c : r.ceilings) {
    if (c.memory_gbps > 0 && c.memory_gbps >= f.ymin && c.memory_gbps <= f.ymax) {
      double y = f.py(c.memory_gbps);
      s << "<line x1='" << f.x0 << "' y1='" << y << "' x2='" << f.x0 + f.w << "' y2='" << y << "' stroke='"
        << device_color(c.place) << "' stroke-width='1.2' stroke-opacity='0.7'/>\n";
      text(s, f.x0 + 4, y - 3, std::string(to_string(c.place)) + " memory ceiling", device_color(c.place), 9);
    }
    if (c.cache_gbps > 0 && c.cache_gbps >= f.ymin && c.cache_gbps <= f.ymax) {
      double y = f.py(c.cache_gbps);
      s << "<line x1='" << f.x0 << "' y1='" << y << "' x2='" << f.x0 + f.w << "' y2='" << y << "' stroke='"
        << device_color(c.place) << "' stroke-dasharray='6,4' stroke-opacity='0.7'/>\n";
      text(s, f.x0 + 4, y - 3, std::string(to_string(c.place)) + " " + c.cache_label, device_color(c.place), 9);
    }
  }
  for (auto& [key, pts] : series) {
    std::sort(pts.begin(), pts.end(), [](const Result* a, const Result* b) { return a->n < b->n; });
    const Result& first = *pts.front();
    const std::string& color = pal.of(first.target, first.peer);
    std::ostringstream path;
    for (std::size_t i = 0; i < pts.size(); ++i)
      path << (i ? " L " : "M ") << f.px(std::log2(double(pts[i]->n))) << " " << f.py(pts[i]->gbps);
    s << "<path d='" << path.str() << "' fill='none' stroke='" << color << "' stroke-width='1.6'"
      << (first.dtype == DType::f64 ? " stroke-dasharray='5,3'" : "") << "/>\n";
    for (const Result* p : pts) {
      const double x = f.px(std::log2(double(p->n))), y = f.py(p->gbps);
      marker(s, x, y, color, p->dtype, !p->peer);
      if (p->seconds.unsteady())
        unsteady_mark(s, x, y, f.py(std::max(f.ymin, p->gbps * p->seconds.median / p->seconds.max)));
    }
  }
}

}  // namespace

void write_svg(const Report& r, const std::string& path) {
  std::vector<Op> ops;
  for (const OpInfo& oi : op_table)
    if (std::any_of(r.results.begin(), r.results.end(), [&](const Result& x) { return x.op == oi.op; }))
      ops.push_back(oi.op);
  const double width = 1280, roof_h = 640, panel_w = 640, panel_h = 330, header = 56;
  const int rows = int(ops.size() + 1) / 2;
  double expressions_h = 0;
  const std::string expressions = expressions_svg(r, header + roof_h + rows * panel_h, width, expressions_h);
  const double height = header + roof_h + rows * panel_h + expressions_h + 30;

  Palette pal;
  // Library backends take their colors first, so the legend lists them first.
  for (const Result& x : r.results)
    if (!x.peer) pal.of(x.target, false);
  for (const Result& x : r.results)
    if (x.peer) pal.of(x.target, true);

  std::ostringstream s;
  s << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height << "' viewBox='0 0 "
    << width << " " << height << "' font-family='DejaVu Sans, Arial, sans-serif'>\n";
  s << "<rect width='100%' height='100%' fill='#fafafa'/>\n";
  std::string title = "elementwise " + r.machine.library_version + " roofline, " + r.date;
  text(s, 20, 26, title, "#000", 17);
  std::string machine = "CPU: " + r.machine.cpu_model + " (" + std::to_string(r.machine.cpu_cores) + " logical CPUs)";
  if (!r.machine.gpu_model.empty()) machine += "   GPU: " + r.machine.gpu_model + " (" + std::to_string(r.machine.gpu_sms) + " SMs)";
  text(s, 20, 46, machine, "#333", 12);
  roofline_panel(s, r, pal, 0, header, width, roof_h);
  for (std::size_t i = 0; i < ops.size(); ++i)
    bandwidth_panel(s, r, pal, ops[i], (i % 2) * panel_w, header + roof_h + (i / 2) * panel_h, panel_w, panel_h);
  s << expressions;
  text(s, 20, height - 10,
       "Bandwidth counts the op table's bytes (each input read once, the output written once); "
       "solid f32, dashed f64; filled markers = library backends, hollow = peers.",
       "#555", 11);
  s << "</svg>\n";
  std::ofstream out(path);
  out << s.str();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace ew::roofline
