#include "expr_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ew::detail::cuda {

namespace {

constexpr char kMagic[8] = {'E', 'W', 'C', 'U', 'B', 'I', 'N', '1'};
// A cubin of one expression kernel is tens of KiB; a header claiming more is not ours.
constexpr std::uint64_t kMaxPayloadBytes = std::uint64_t(256) << 20;

struct Header {
  char magic[8];
  std::uint64_t key_hash;
  std::uint64_t key_bytes;
  std::uint64_t payload_bytes;
  std::uint64_t checksum;  // of key and payload
};

std::uint64_t checksum_of(const std::string& key, const std::string& payload) {
  return fnv1a64(payload.data(), payload.size(), fnv1a64(key.data(), key.size()));
}

bool read_all(int fd, void* data, std::size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes) {
    const ssize_t got = ::read(fd, p, bytes);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got, bytes -= static_cast<std::size_t>(got);
  }
  return true;
}

bool write_all(int fd, const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes) {
    const ssize_t put = ::write(fd, p, bytes);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return false;
    p += put, bytes -= static_cast<std::size_t>(put);
  }
  return true;
}

// mkdir -p, private to the user.
bool make_directories(const std::string& dir) {
  if (dir.empty()) return false;
  for (std::size_t at = 1; at <= dir.size(); ++at) {
    if (at < dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  struct stat st {};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

}  // namespace

std::uint64_t fnv1a64(const void* data, std::size_t bytes, std::uint64_t seed) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  std::uint64_t h = seed;
  for (std::size_t k = 0; k < bytes; ++k) h = (h ^ p[k]) * 0x100000001b3ull;
  return h;
}

std::string expr_cache_dir() {
  if (const char* d = std::getenv("EW_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return std::string(x) + "/elementwise";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/elementwise";
  return {};
}

std::string expr_cache_file(const std::string& dir, const std::string& key) {
  char name[40];
  std::snprintf(name, sizeof name, "/%016llx.cubin", static_cast<unsigned long long>(fnv1a64(key.data(), key.size())));
  return dir + name;
}

bool expr_cache_load(const std::string& dir, const std::string& key, std::string& payload) {
  if (dir.empty()) return false;
  // Non-blocking, so that a FIFO or a device put where a cache file goes cannot hang the call.
  const int fd = ::open(expr_cache_file(dir, key).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return false;
  bool ok = false;
  Header h{};
  struct stat st {};
  // Only a file of this user's that nobody else may write: the payload is machine code that
  // runs in this process, and EW_CACHE_DIR may name a directory others share. (Checked on the
  // open file, so a file swapped in after the check is not read.) The sizes are checked by
  // subtraction (a foreign header's sum could wrap) and against a bound, before anything is
  // allocated for them.
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() &&
      (st.st_mode & (S_IWGRP | S_IWOTH)) == 0 && read_all(fd, &h, sizeof h) &&
      std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.key_hash == fnv1a64(key.data(), key.size()) &&
      h.key_bytes == key.size() && static_cast<std::uint64_t>(st.st_size) >= sizeof h + h.key_bytes &&
      h.payload_bytes == static_cast<std::uint64_t>(st.st_size) - sizeof h - h.key_bytes && h.payload_bytes > 0 &&
      h.payload_bytes <= kMaxPayloadBytes) {
    std::string stored_key(key.size(), '\0'), data(h.payload_bytes, '\0');
    ok = read_all(fd, &stored_key[0], stored_key.size()) && stored_key == key && read_all(fd, &data[0], data.size()) &&
         checksum_of(key, data) == h.checksum;
    if (ok) payload.swap(data);
  }
  ::close(fd);
  return ok;
}

bool expr_cache_store(const std::string& dir, const std::string& key, const std::string& payload) {
  if (!make_directories(dir)) return false;
  static std::atomic<unsigned> counter{0};
  const std::string file = expr_cache_file(dir, key);
  const std::string temp = file + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.key_hash = fnv1a64(key.data(), key.size());
  h.key_bytes = key.size();
  h.payload_bytes = payload.size();
  h.checksum = checksum_of(key, payload);
  bool ok = write_all(fd, &h, sizeof h) && write_all(fd, key.data(), key.size()) &&
            write_all(fd, payload.data(), payload.size());
  ok = ::close(fd) == 0 && ok;
  // rename() replaces the file in one step: readers open the old file or the new one.
  if (ok) ok = ::rename(temp.c_str(), file.c_str()) == 0;
  if (!ok) ::unlink(temp.c_str());
  return ok;
}

}  // namespace ew::detail::cuda
