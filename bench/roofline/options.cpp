#include "options.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "ew/error.hpp"
#include "expressions.hpp"

namespace ew::roofline {

const char* usage() {
  return "usage: ew-roofline [options]\n"
         "  Measures this machine's ceilings (memory and cache bandwidth, FMA rate) and every usable\n"
         "  backend of elementwise next to the best peers, cold and warm, as a table (stdout),\n"
         "  JSON and an SVG roofline. With no options: the full sweep (every usable backend, op,\n"
         "  dtype and size, cold and warm, with the peers; minutes), table only.\n"
         "options:\n"
         "  --backends LIST  scalar,highway,kokkos,cuda (default: every usable backend)\n"
         "  --ops LIST       copy,scale,add,mul,triad,axpy,axpby (default: all)\n"
         "  --dtypes LIST    f32,f64,f16,bf16 (default: f32,f64; f16 and bf16 for the ops, reductions and expressions)\n"
         "  --sizes SPEC     log2 of n, exponents 0..34: FIRST:LAST[:STEP] or a list,\n"
         "                   e.g. 10:26 or 12,20,24 (20 means 2^20 = 1048576 elements;\n"
         "                   default: 10:28 on a GPU, 10:26 on the CPU)\n"
         "  --quick          a short run: best backends, sizes every 4th power, cold only, 3 reps\n"
         "  --cold, --warm   only cold-cache or only warm-cache measurements (default: both)\n"
         "  --reps N         timed repetitions per point, 1..1000000 (default 7, --quick 3)\n"
         "  --no-peers       skip the peer implementations\n"
         "  --ladder         also the GPU optimization ladder (needs a CUDA build and a GPU)\n"
         "  --expressions LIST  relu,silu,dot4,clamp,chain3: the expressions section, fused against\n"
         "                   the fixed ops and an OpenMP loop (default: all; --quick: silu,chain3)\n"
         "  --read-pass         with the expressions on a GPU, a read-only pass over each point's bytes\n"
         "                   (how fast reading them alone runs there, for reference)\n"
         "  --no-expressions    skip the expressions section\n"
         "  --only-expressions  only the ceilings and the expressions section\n"
         "  --no-reductions     skip the reductions section (sum, dot, norm2 against OpenMP, cub, cuBLAS)\n"
         "  --json FILE      write every figure as JSON (schema in docs/roofline.md)\n"
         "  --plot FILE      write the roofline and bandwidth-vs-size charts as one SVG\n"
         "  -h, --help       this text\n"
         "A bad option or value is named on one line of stderr, with exit status 2.\n";
}

namespace {

constexpr int max_exponent = 34;  // 2^34 elements: 128 GiB per f64 array, beyond any device here
constexpr int max_reps = 1000000;
const std::string sizes_hint = "give exponents 0..34 such as 20 or 10:26 (2^20 = 1048576 elements)";

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, by);) parts.push_back(item);
  if (!s.empty() && s.back() == by) parts.push_back("");
  return parts;
}

// A comma-separated list; empty items are skipped ("add," is "add").
std::vector<std::string> list(const std::string& s) {
  std::vector<std::string> items;
  for (std::string& item : split(s, ','))
    if (!item.empty()) items.push_back(std::move(item));
  return items;
}

// Decimal digits only, in [lo, hi]; false otherwise (no sign, no spaces, no overflow).
bool parse_int(const std::string& s, int lo, int hi, int& v) {
  if (s.empty() || s.size() > 10 || s.find_first_not_of("0123456789") != std::string::npos) return false;
  const long long x = std::stoll(s);
  if (x < lo || x > hi) return false;
  v = static_cast<int>(x);
  return true;
}

int exponent(const std::string& s) {
  int e = 0;
  if (parse_int(s, 0, max_exponent, e)) return e;
  std::string hint;
  // A count given where an exponent is wanted: name the exponent it stands for.
  if (s.size() <= 19 && !s.empty() && s.find_first_not_of("0123456789") == std::string::npos) {
    const unsigned long long n = std::stoull(s);
    if (n > 0 && (n & (n - 1)) == 0) {
      int log2 = 0;
      while ((1ULL << log2) != n) ++log2;
      if (log2 <= max_exponent) hint = " (" + s + " = 2^" + std::to_string(log2) + ": write " + std::to_string(log2) + ")";
    }
  }
  throw UsageError("--sizes: '" + s + "' is not a log2 exponent" + hint + "; " + sizes_hint);
}

std::vector<int> parse_sizes(const std::string& spec) {
  std::vector<int> out;
  if (spec.find(':') != std::string::npos) {
    const std::vector<std::string> f = split(spec, ':');
    if (f.size() < 2 || f.size() > 3)
      throw UsageError("--sizes: '" + spec + "' is not FIRST:LAST[:STEP]; " + sizes_hint);
    const int first = exponent(f[0]), last = exponent(f[1]);
    int step = 1;
    if (f.size() == 3 && !parse_int(f[2], 1, max_exponent, step))
      throw UsageError("--sizes: step '" + f[2] + "' in '" + spec + "' is not 1..34; give e.g. 10:26:4");
    if (last < first)
      throw UsageError("--sizes: '" + spec + "' is an empty range (FIRST > LAST); give e.g. 10:26");
    for (int e = first; e <= last; e += step) out.push_back(e);
  } else {
    for (const std::string& s : list(spec)) out.push_back(exponent(s));
  }
  if (out.empty()) throw UsageError("--sizes: no size in '" + spec + "'; " + sizes_hint);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string op_names() {
  std::string names;
  for (const OpInfo& oi : op_table) names += std::string(names.empty() ? "" : ", ") + oi.name;
  return names;
}

constexpr const char* backend_names = "scalar, highway, kokkos, cuda";

template <class T>
void add_unique(std::vector<T>& v, T x) {
  if (std::find(v.begin(), v.end(), x) == v.end()) v.push_back(x);
}

// The file is written when the run ends, minutes later: refuse now what cannot be written.
// Opened for appending (nothing truncated), and removed again if this check created it.
void check_writable(const std::string& flag, const std::string& file) {
  if (file.empty()) throw UsageError(flag + ": empty file name");
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec)) throw UsageError(flag + ": '" + file + "' is a directory");
  const bool existed = std::filesystem::exists(file, ec);
  std::FILE* f = std::fopen(file.c_str(), "a");
  if (!f) throw UsageError(flag + ": cannot write '" + file + "': " + std::strerror(errno));
  std::fclose(f);
  if (!existed) std::remove(file.c_str());
}

}  // namespace

// The library refuses a malformed EW_DEVICE (core/src/context.cpp) only where a context
// resolves it, and the GPU probes read it directly: check it before anything runs, with the
// library's rule and wording. A list the library takes (a context over several GPUs) is
// refused too: the ceilings are measured on one GPU, and every row is labelled with it.
void check_environment() {
  const char* env = std::getenv("EW_DEVICE");
  if (!env || !*env) return;
  const std::string text = env;
  int device = 0;
  bool list = text.find(',') != std::string::npos;
  for (std::size_t begin = 0, end; list && begin <= text.size(); begin = end + 1) {
    end = std::min(text.find(',', begin), text.size());
    list = parse_int(text.substr(begin, end - begin).c_str(), 0, INT_MAX, device);
  }
  if (list)
    throw UsageError("EW_DEVICE='" + text + "' lists several GPUs; ew-roofline measures one (give one index, or unset it)");
  if (!parse_int(env, 0, INT_MAX, device))
    throw UsageError("EW_DEVICE='" + text + "' is not a device index (accepted: a GPU index 0.." +
                     std::to_string(INT_MAX) + " in decimal digits, or unset)");
}

Options parse(int argc, char** argv) {
  Options o;
  bool cold = false, warm = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1), arg = arg.substr(0, eq), has_value = true;
    }
    // `what` says what the value is, for the message when it is missing.
    auto take = [&](const char* what) -> std::string {
      if (has_value) return value;
      if (i + 1 >= argc) throw UsageError(arg + " needs a value (" + what + ")");
      const std::string next = argv[i + 1];
      if (next.rfind("--", 0) == 0)
        throw UsageError(arg + " needs a value (" + what + "), got the option '" + next + "'");
      return argv[++i];
    };
    auto flag_only = [&] {
      if (has_value) throw UsageError(arg + " takes no value (got '" + argv[i] + "')");
    };
    if (arg == "--backends") {
      const std::string spec = take("a list such as highway,cuda");
      if (list(spec).empty()) throw UsageError("--backends: empty list; give " + std::string(backend_names));
      for (const std::string& s : list(spec)) {
        Backend b = Backend::automatic;
        try {
          b = parse_backend(s);
        } catch (const ew::Error&) {
          throw UsageError("--backends: unknown backend '" + s + "'; give " + backend_names + ", comma-separated");
        }
        if (b == Backend::automatic)
          throw UsageError("--backends: '" + s + "' is not a backend; give " + backend_names +
                           " (without --backends: every usable one)");
        add_unique(o.backends, b);
      }
    } else if (arg == "--ops") {
      const std::string spec = take("a list such as add,triad");
      if (list(spec).empty()) throw UsageError("--ops: empty list; give " + op_names());
      for (const std::string& s : list(spec)) {
        auto it = std::find_if(std::begin(op_table), std::end(op_table), [&](const OpInfo& oi) { return s == oi.name; });
        if (it == std::end(op_table)) throw UsageError("--ops: unknown op '" + s + "'; give " + op_names());
        add_unique(o.ops, it->op);
      }
    } else if (arg == "--dtypes") {
      const std::string spec = take("a list of f32, f64, f16, bf16 such as f32,f16");
      if (list(spec).empty()) throw UsageError("--dtypes: empty list; give a list of f32, f64, f16, bf16");
      for (const std::string& s : list(spec)) {
        if (s == "f32" || s == "float") add_unique(o.dtypes, DType::f32);
        else if (s == "f64" || s == "double") add_unique(o.dtypes, DType::f64);
        else if (s == "f16" || s == "half") add_unique(o.dtypes, DType::f16);
        else if (s == "bf16" || s == "bfloat16") add_unique(o.dtypes, DType::bf16);
        else throw UsageError("--dtypes: unknown dtype '" + s + "'; give a list of f32, f64, f16, bf16");
      }
    } else if (arg == "--sizes") {
      o.sizes_log2 = parse_sizes(take("log2 exponents such as 20 or 10:26"));
    } else if (arg == "--reps") {
      const std::string s = take("a count such as 7");
      if (!parse_int(s, 1, max_reps, o.reps))
        throw UsageError("--reps: '" + s + "' is not a number of repetitions; give 1.." + std::to_string(max_reps) +
                         " such as 7");
    } else if (arg == "--json") {
      o.json = take("a file name");
      check_writable(arg, o.json);
    } else if (arg == "--plot") {
      o.plot = take("a file name");
      check_writable(arg, o.plot);
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
    } else if (arg == "--expressions") {
      std::string names;
      for (const std::string& e : expression_names()) names += (names.empty() ? "" : ", ") + e;
      const std::string spec = take("a list such as relu,chain3");
      if (list(spec).empty()) throw UsageError("--expressions: empty list; give " + names);
      for (const std::string& e : list(spec)) {
        const std::vector<std::string>& known = expression_names();
        if (std::find(known.begin(), known.end(), e) == known.end())
          throw UsageError("--expressions: unknown expression '" + e + "'; give " + names);
        add_unique(o.expressions, e);
      }
    } else if (arg == "--read-pass") {
      flag_only(), o.read_pass = true;
    } else if (arg == "--no-expressions") {
      flag_only(), o.no_expressions = true;
    } else if (arg == "--only-expressions") {
      flag_only(), o.only_expressions = true;
    } else if (arg == "--no-reductions") {
      flag_only(), o.no_reductions = true;
    } else if (arg == "--help" || arg == "-h") {
      flag_only(), o.help = true;
    } else if (arg.rfind("-", 0) == 0 && arg.size() > 1) {
      throw UsageError("unknown option '" + std::string(argv[i]) + "'; ew-roofline --help lists the options");
    } else {
      throw UsageError("unexpected argument '" + arg + "'; ew-roofline takes options only (--help lists them)");
    }
  }
  if (o.no_expressions && (o.only_expressions || !o.expressions.empty()))
    throw UsageError(std::string("--no-expressions contradicts ") +
                     (o.only_expressions ? "--only-expressions" : "--expressions"));
  if (cold || warm) o.cold = cold, o.warm = warm;
  else if (o.quick) o.warm = false;
  return o;
}

}  // namespace ew::roofline
