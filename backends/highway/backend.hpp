#pragma once
// Knobs of the Highway backend that tests (and the benchmark) reach directly; the
// defaults come from this machine's caches and need no tuning by users.
#include <cstddef>

namespace ew::detail::highway {

struct Tuning {
  // Outputs larger than this many bytes, unless also an input, are written with
  // non-temporal stores. Default: an eighth of the last-level cache size (sysfs, then
  // sysconf, then 32 MiB).
  std::size_t streaming_bytes;
  // Ops whose output is smaller than this many bytes run on the calling thread, with
  // no OpenMP region (whose start costs more than a second core saves on them).
  std::size_t parallel_bytes;
};

// The size of the largest cache of the first CPU (sysfs, then sysconf, then 32 MiB), read
// once. Beyond it an array streams from DRAM.
std::size_t last_level_cache();

Tuning tuning();
// Replaces the tuning for every context (tests lower the thresholds to reach the
// streaming and threaded paths with small arrays); reset_tuning() restores the defaults.
void set_tuning(const Tuning& t);
void reset_tuning();

// How many op calls took the streaming-store path so far (lets a test assert it ran).
std::size_t streaming_calls();

// Reductions whose f64 inputs (all of them: both arrays of a dot) are larger than this many
// bytes read their rows with a software prefetch (reduce.cc says why). Default:
// last_level_cache(). Tests lower it to run that path on small arrays.
std::size_t f64_prefetch_bytes();
void set_f64_prefetch_bytes(std::size_t bytes);
// How many reductions took the prefetching path so far (lets a test assert it ran).
std::size_t prefetched_reductions();

}  // namespace ew::detail::highway
