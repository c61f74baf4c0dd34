// Untagged operands (MemorySpace::unknown) whose memory changes kind at the same address:
// the backend asks the driver on every call (locate, memory.hpp), so a freed and
// reallocated block is never taken for what used to be there. Each case runs an add with
// all three operands untagged inside the block and compares every bit with the host's sum.
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cuda_test_support.hpp"
#include "memory.hpp"

namespace ew::test {
namespace {

class CudaPointerKind : public NeedsCuda {};

constexpr std::size_t kN = 3000;  // per operand: several 16-byte groups and a ragged tail
constexpr std::size_t kBytes = 4 * kN * sizeof(float);  // a, b, out and a guard operand's room

// a = block[0, n), b = block[n, 2n), out = block[2n, 3n); any kind of memory (cudaMemcpyDefault).
void add_in_block(Context& ctx, void* block, unsigned seed) {
  auto* f = static_cast<float*>(block);
  std::vector<float> a(kN), b(kN), poison(kN, std::numeric_limits<float>::quiet_NaN());
  for (std::size_t i = 0; i < kN; ++i) {
    a[i] = static_cast<float>(std::sin(double(i + seed))) * 3.5f;
    b[i] = static_cast<float>(std::cos(double(i * 7 + seed))) * 0.25f;
  }
  ASSERT_EQ(cudaMemcpy(f, a.data(), kN * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(f + kN, b.data(), kN * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(f + 2 * kN, poison.data(), kN * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  add<float>(ctx, Span<const float>(f, kN), Span<const float>(f + kN, kN), Span<float>(f + 2 * kN, kN));
  ctx.synchronize();
  std::vector<float> got(kN);
  ASSERT_EQ(cudaMemcpy(got.data(), f + 2 * kN, kN * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  for (std::size_t i = 0; i < kN; ++i) {
    const float want = a[i] + b[i];
    ASSERT_EQ(std::memcmp(&got[i], &want, sizeof want), 0) << "element " << i << ": " << got[i] << " != " << want;
  }
}

TEST_F(CudaPointerKind, PageableThenPinnedThenPageableAtTheSameAddress) {
  Context ctx(Backend::cuda);
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  EXPECT_EQ(detail::cuda::locate(block).space, MemorySpace::host);
  add_in_block(ctx, block, 1);
  ASSERT_EQ(cudaHostRegister(block, kBytes, cudaHostRegisterDefault), cudaSuccess);
  EXPECT_EQ(detail::cuda::locate(block).space, MemorySpace::pinned);
  add_in_block(ctx, block, 2);
  ASSERT_EQ(cudaHostUnregister(block), cudaSuccess);
  EXPECT_EQ(detail::cuda::locate(block).space, MemorySpace::host);
  add_in_block(ctx, block, 3);
  munmap(block, kBytes);
}

// Device memory freed, then memory of another kind allocated until the driver places it
// at the address the device block had (it reuses freed ranges of its own heap). Skips
// with the reason if it never does.
template <class AllocateOther>
void device_then_other(Context& ctx, MemorySpace other_kind, AllocateOther allocate_other, cudaError_t (*free_other)(void*)) {
  std::vector<void*> misses;
  bool reused = false;
  for (int attempt = 0; attempt < 16 && !reused; ++attempt) {
    void* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, kBytes), cudaSuccess);
    EXPECT_EQ(detail::cuda::locate(device).space, MemorySpace::device);
    add_in_block(ctx, device, 10 + attempt);
    ASSERT_EQ(cudaFree(device), cudaSuccess);
    void* other = nullptr;
    ASSERT_EQ(allocate_other(&other), cudaSuccess);
    if (other != device) {
      misses.push_back(other);  // kept, so the next try may land elsewhere
      continue;
    }
    reused = true;
    EXPECT_EQ(detail::cuda::locate(other).space, other_kind);
    add_in_block(ctx, other, 40 + attempt);
    ASSERT_EQ(free_other(other), cudaSuccess);
  }
  for (void* p : misses) free_other(p);
  if (!reused) GTEST_SKIP() << "the driver never placed the new block where the freed device block was (16 tries)";
}

TEST_F(CudaPointerKind, DeviceThenManagedAtTheSameAddress) {
  Context ctx(Backend::cuda);
  device_then_other(ctx, MemorySpace::managed, [](void** p) { return cudaMallocManaged(p, kBytes); }, &cudaFree);
}

TEST_F(CudaPointerKind, DeviceThenPinnedAtTheSameAddress) {
  Context ctx(Backend::cuda);
  device_then_other(ctx, MemorySpace::pinned, [](void** p) { return cudaMallocHost(p, kBytes); }, &cudaFreeHost);
}

// Managed memory freed, device memory allocated: the other direction.
TEST_F(CudaPointerKind, ManagedThenDeviceAtTheSameAddress) {
  Context ctx(Backend::cuda);
  std::vector<void*> misses;
  bool reused = false;
  for (int attempt = 0; attempt < 16 && !reused; ++attempt) {
    void* managed = nullptr;
    ASSERT_EQ(cudaMallocManaged(&managed, kBytes), cudaSuccess);
    EXPECT_EQ(detail::cuda::locate(managed).space, MemorySpace::managed);
    add_in_block(ctx, managed, 70 + attempt);
    ASSERT_EQ(cudaFree(managed), cudaSuccess);
    void* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, kBytes), cudaSuccess);
    if (device != managed) {
      misses.push_back(device);
      continue;
    }
    reused = true;
    EXPECT_EQ(detail::cuda::locate(device).space, MemorySpace::device);
    add_in_block(ctx, device, 90 + attempt);
    ASSERT_EQ(cudaFree(device), cudaSuccess);
  }
  for (void* p : misses) cudaFree(p);
  if (!reused) GTEST_SKIP() << "the driver never placed device memory where the freed managed block was (16 tries)";
}

}  // namespace
}  // namespace ew::test
