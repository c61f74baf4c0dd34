#pragma once
// The disk cache of compiled expression kernels (plain C++, tested without a GPU).
//
// One file per key, named by the key's hash, in the cache directory: EW_CACHE_DIR, else
// $XDG_CACHE_HOME/elementwise, else $HOME/.cache/elementwise. The key is everything the
// cubin depends on: the library version, NVRTC's version, the driver's version, the
// architecture, the compile options and the generated source (which holds the program).
// A file is [header][key][payload]; the header holds a magic, the key's hash, the two
// lengths and a checksum of key and payload. A file whose header, key or checksum does
// not match (another version, a hash collision, a torn or corrupt write) is ignored and
// replaced. Files are written to a temporary name and renamed into place, so a reader
// sees a whole file or none, whatever other processes do at the same time.
#include <cstdint>
#include <string>

namespace ew::detail::cuda {

// FNV-1a, 64 bits.
std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t seed = 0xcbf29ce484222325ull);

// The directory named above, or empty when none can be named (no HOME).
std::string expr_cache_dir();

// The file that holds `key` in `dir`.
std::string expr_cache_file(const std::string& dir, const std::string& key);

// The payload stored under `key`, or false (no file, or a file that is not a valid entry for this key).
bool expr_cache_load(const std::string& dir, const std::string& key, std::string& payload);

// Stores `payload` under `key` (directories created as needed). Returns false, leaving no
// partial file behind, when it cannot: the cache is an optimisation, not a requirement.
bool expr_cache_store(const std::string& dir, const std::string& key, const std::string& payload);

}  // namespace ew::detail::cuda
