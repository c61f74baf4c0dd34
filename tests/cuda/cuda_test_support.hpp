#pragma once
// What the cuda tests share: a fixture that skips (with the reason) where cuda is
// unusable, operands in any memory space filled from and read back to host vectors,
// and a random case run over such operands and compared with the reference.
#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace ew::test {

class NeedsCuda : public testing::Test {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(Backend::cuda); }
};

// An array of `total` elements in one memory space. Pageable memory is a plain
// std::vector; the others are Buffers.
template <class T>
class Storage {
 public:
  Storage(Context& ctx, MemorySpace where, std::size_t total) : where_(where), total_(total) {
    if (where == MemorySpace::host)
      host_.resize(total);
    else
      buffer_ = std::make_unique<Buffer<T>>(ctx, total, where);
  }
  T* data() { return where_ == MemorySpace::host ? host_.data() : buffer_->data(); }
  void fill(const std::vector<T>& v) {
    if (where_ == MemorySpace::host)
      host_ = v;
    else
      buffer_->upload(v.data(), total_);
  }
  std::vector<T> read() {
    if (where_ == MemorySpace::host) return host_;
    std::vector<T> v(total_);
    buffer_->download(v.data(), total_);
    return v;
  }

 private:
  MemorySpace where_;
  std::size_t total_;
  std::vector<T> host_;
  std::unique_ptr<Buffer<T>> buffer_;
};

// Runs op with a, b and out in the given spaces, untagged (the backend classifies each
// pointer itself), and compares every element and the guard zones with the reference.
template <class T>
void check_spaces(Context& ctx, Op op, std::size_t n, MemorySpace sa, MemorySpace sb, MemorySpace so,
                  const std::size_t (&off)[3] = offset_sets[0]) {
  const Case<T> c = make_case<T>(op, n, off);
  Storage<T> da(ctx, sa, c.total()), db(ctx, sb, c.total()), dout(ctx, so, c.total());
  da.fill(c.a), db.fill(c.b), dout.fill(c.out_init);
  run(ctx, op, c.operands(da.data(), db.data(), dout.data()));
  ctx.synchronize();
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  const std::string m = c.mismatch(dout.read());
  EXPECT_TRUE(m.empty()) << m << " (a: " << to_string(sa) << ", b: " << to_string(sb) << ", out: " << to_string(so)
                         << ")";
}

// Small staging: chunks of about 10.5 KiB, so a call of 50'000 elements has tens of chunks.
inline ContextOptions small_staging() {
  ContextOptions o;
  o.staging_bytes = 64 << 10;
  return o;
}

}  // namespace ew::test
