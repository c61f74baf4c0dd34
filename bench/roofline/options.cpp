#include "options.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "ew/error.hpp"

namespace ew::roofline {

const char* usage() {
  return "usage: ew-roofline [options]\n"
         "  Measures this machine's ceilings (memory and cache bandwidth, FMA rate) and every usable\n"
         "  backend of elementwise next to the best peers, cold and warm, as a table (stdout),\n"
         "  JSON and an SVG roofline.\n"
         "options:\n"
         "  --backends LIST  scalar,highway,kokkos,cuda (default: every usable backend)\n"
         "  --ops LIST       copy,scale,add,mul,triad,axpy,axpby (default: all)\n"
         "  --dtypes LIST    f32,f64 (default: both)\n"
         "  --sizes SPEC     log2 of n: FIRST:LAST[:STEP] or a list, e.g. 10:26 or 12,20,24\n"
         "                   (default: 10:28 on a GPU, 10:26 on the CPU)\n"
         "  --quick          a short run: best backends, sizes every 4th power, cold only, 3 reps\n"
         "  --cold, --warm   only cold-cache or only warm-cache measurements (default: both)\n"
         "  --reps N         timed repetitions per point (default 7, --quick 3)\n"
         "  --no-peers       skip the peer implementations\n"
         "  --ladder         also the GPU optimization ladder (needs a CUDA build and a GPU)\n"
         "  --json FILE      write every figure as JSON (schema in docs/roofline.md)\n"
         "  --plot FILE      write the roofline and bandwidth-vs-size charts as one SVG\n"
         "  --help           this text\n";
}

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) parts.push_back(item);
  return parts;
}

int to_int(const std::string& s, const std::string& flag) {
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 0 || v > 1000000) throw UsageError(flag + ": '" + s + "' is not a count");
  return static_cast<int>(v);
}

std::vector<int> parse_sizes(const std::string& spec) {
  std::vector<int> out;
  auto exponent = [](const std::string& s) {
    int e = to_int(s, "--sizes");
    if (e > 34) throw UsageError("--sizes: 2^" + s + " elements is beyond what ew-roofline allocates (<= 34)");
    return e;
  };
  if (spec.find(':') != std::string::npos) {
    std::vector<std::string> f;
    std::stringstream in(spec);
    for (std::string item; std::getline(in, item, ':');) f.push_back(item);
    if (f.size() < 2 || f.size() > 3) throw UsageError("--sizes: expected FIRST:LAST[:STEP], got '" + spec + "'");
    int first = exponent(f[0]), last = exponent(f[1]), step = f.size() == 3 ? to_int(f[2], "--sizes") : 1;
    if (step < 1 || last < first) throw UsageError("--sizes: empty range '" + spec + "'");
    for (int e = first; e <= last; e += step) out.push_back(e);
  } else {
    for (const std::string& s : split(spec)) out.push_back(exponent(s));
  }
  if (out.empty()) throw UsageError("--sizes: no size in '" + spec + "'");
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

Options parse(int argc, char** argv) {
  Options o;
  bool cold = false, warm = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1), arg = arg.substr(0, eq), has_value = true;
    }
    auto take = [&]() -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    auto flag_only = [&] {
      if (has_value) throw UsageError(arg + " takes no value");
    };
    if (arg == "--backends") {
      for (const std::string& s : split(take())) {
        try {
          Backend b = parse_backend(s);
          if (b == Backend::automatic) throw UsageError("--backends: name backends, not 'auto'");
          o.backends.push_back(b);
        } catch (const ew::Error& e) {
          throw UsageError(std::string("--backends: ") + e.what());
        }
      }
      if (o.backends.empty()) throw UsageError("--backends: empty list");
    } else if (arg == "--ops") {
      for (const std::string& s : split(take())) {
        auto it = std::find_if(std::begin(op_table), std::end(op_table), [&](const OpInfo& oi) { return s == oi.name; });
        if (it == std::end(op_table)) throw UsageError("--ops: unknown op '" + s + "'");
        o.ops.push_back(it->op);
      }
      if (o.ops.empty()) throw UsageError("--ops: empty list");
    } else if (arg == "--dtypes") {
      for (const std::string& s : split(take())) {
        if (s == "f32" || s == "float") o.dtypes.push_back(DType::f32);
        else if (s == "f64" || s == "double") o.dtypes.push_back(DType::f64);
        else throw UsageError("--dtypes: unknown dtype '" + s + "' (f32, f64)");
      }
      if (o.dtypes.empty()) throw UsageError("--dtypes: empty list");
    } else if (arg == "--sizes") {
      o.sizes_log2 = parse_sizes(take());
    } else if (arg == "--reps") {
      o.reps = to_int(take(), "--reps");
      if (o.reps < 1) throw UsageError("--reps: at least 1");
    } else if (arg == "--json") {
      o.json = take();
    } else if (arg == "--plot") {
      o.plot = take();
    } else if (arg == "--quick") {
      flag_only(), o.quick = true;
    } else if (arg == "--cold") {
      flag_only(), cold = true;
    } else if (arg == "--warm") {
      flag_only(), warm = true;
    } else if (arg == "--ladder") {
      flag_only(), o.ladder = true;
    } else if (arg == "--no-peers") {
      flag_only(), o.peers = false;
    } else if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else {
      throw UsageError("unknown option '" + std::string(argv[i]) + "'");
    }
  }
  if (cold || warm) o.cold = cold, o.warm = warm;
  else if (o.quick) o.warm = false;
  return o;
}

}  // namespace ew::roofline
