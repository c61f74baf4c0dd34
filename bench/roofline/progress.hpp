#pragma once
// A live progress line on stderr (what runs, how far, elapsed), only when stderr is a
// terminal: redirected output and CI logs stay clean.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace ew::roofline {

class Progress {
 public:
  Progress() : live_(isatty(STDERR_FILENO) == 1), start_(std::chrono::steady_clock::now()) {}
  ~Progress() { clear(); }

  void set_total(long total) { total_ = total, done_ = 0; }
  // Shows `what` as the step now running; counts it as done at the next call.
  void step(const std::string& what) {
    if (!live_) return;
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string line = total_ > 0 ? "[" + std::to_string(++done_) + "/" + std::to_string(total_) + "] " : "";
    line += what;
    if (line.size() > 90) line.resize(90);
    std::fprintf(stderr, "\r%-90s %7.1f s", line.c_str(), elapsed);
    std::fflush(stderr);
  }
  void clear() {
    if (live_) std::fprintf(stderr, "\r%100s\r", ""), std::fflush(stderr);
  }

 private:
  bool live_;
  std::chrono::steady_clock::time_point start_;
  long total_ = 0, done_ = 0;
};

}  // namespace ew::roofline
