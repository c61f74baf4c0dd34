#pragma once
// Which of the build's kernel code a GPU runs, from CMAKE_CUDA_ARCHITECTURES alone: the
// probe answers it for every device without making a CUDA context (which would cost each
// process device memory, CPU backends' processes included). The driver's rules: an
// architecture's code (SASS, "-real") runs on GPUs of the same major version and the same
// or a higher minor one; its PTX ("-virtual") is compiled by the driver for any GPU of that
// architecture or a later one; a plain number is both. Code for an "a" architecture (90a)
// runs on that one alone, for an "f" one (100f) within its major version. The context itself asks the driver (kernel_architecture), which
// has the last word; CudaProbe's GPU test checks that both agree.
#include <cctype>
#include <cstdlib>
#include <string>

namespace ew::detail::cuda {

// The architecture (90 for sm_90) whose code a GPU of compute capability major.minor runs,
// from a list like "80-real 90-real 100-real 100-virtual" (spaces or semicolons between):
// the highest real code that runs there, else the highest PTX; 0 where none does; -1 where
// the list cannot tell ("native", "all", "all-major", or an entry it does not read).
inline int architecture_run_on(const std::string& list, int major, int minor) {
  const int device = major * 10 + minor;
  int real = 0, virt = 0;
  std::size_t at = 0;
  while (at < list.size()) {
    while (at < list.size() && (list[at] == ' ' || list[at] == ';')) ++at;
    std::size_t end = at;
    while (end < list.size() && list[end] != ' ' && list[end] != ';') ++end;
    if (end == at) break;
    const std::string entry = list.substr(at, end - at);
    at = end;
    std::size_t digits = 0;
    while (digits < entry.size() && std::isdigit(static_cast<unsigned char>(entry[digits]))) ++digits;
    if (digits == 0 || digits > 4) return -1;
    const int arch = std::atoi(entry.substr(0, digits).c_str());
    std::string rest = entry.substr(digits);
    char variant = 0;  // 'a': this architecture alone; 'f': its family (the same major version)
    if (!rest.empty() && (rest[0] == 'a' || rest[0] == 'f')) variant = rest[0], rest.erase(0, 1);
    const bool has_real = rest.empty() || rest == "-real", has_virtual = rest.empty() || rest == "-virtual";
    if (!has_real && !has_virtual) return -1;
    const bool same_major = arch / 10 == major && arch % 10 <= minor;
    const bool real_runs = variant == 'a' ? arch == device : same_major;
    const bool ptx_runs = variant == 'a' ? arch == device : variant == 'f' ? same_major : arch <= device;
    if (has_real && real_runs && arch > real) real = arch;
    if (has_virtual && ptx_runs && arch > virt) virt = arch;
  }
  return real ? real : virt;
}

}  // namespace ew::detail::cuda
