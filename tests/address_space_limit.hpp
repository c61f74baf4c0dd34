#pragma once
// For tests of a thread that cannot be started: limits the process's address space to what
// it uses now plus `headroom` bytes, so that a few new threads get their 8 MiB stacks and
// more do not. For a child process (the limit is the process's): EXPECT_EXIT's statement.
#include <sys/resource.h>
#include <unistd.h>

#include <cstddef>
#include <cstdio>

namespace ew::test {

inline bool limit_address_space_to_current_plus(std::size_t headroom) {
  long pages = 0;
  if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
    std::fclose(statm);
  }
  if (pages <= 0) return false;
  const rlimit limit{static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + headroom,
                     RLIM_INFINITY};
  return setrlimit(RLIMIT_AS, &limit) == 0;
}

}  // namespace ew::test
