#pragma once
// A context over several devices: one backend per device (each with its own stream,
// memory pools and transfer pipeline), behind the ordinary backend interface. Operands it
// receives are host-resident or managed (the core refuses memory of one device): it
// splits them by the rule of ew/sharded.hpp and hands part k to device k's backend.
// ShardedBuffer operands never come here: they run on Context::shard(k).
#include <memory>
#include <vector>

#include "ew_internal/backend_impl.hpp"

namespace ew::detail {

// The backend a Context of `backend` and `options` runs on: a MultiDevice where several
// devices are asked of the cuda backend, else the backend's own (one device).
std::shared_ptr<BackendImpl> create_backend(Backend backend, const ContextOptions& options);

class MultiDevice final : public BackendImpl {
 public:
  MultiDevice(const BackendDescriptor& descriptor, const ContextOptions& options, std::vector<int> devices);
  ~MultiDevice() override;

  void run(const OpCall& call) override;
  bool supports(DType d) const override { return shards_[0]->supports(d); }
  void run_convert(const ConvertCall& call) override;
  void run_expr(const ExprCall& call) override;
  ReduceResult run_reduce(const ReduceCall& call) override;
  void synchronize() override;
  // Device memory is refused by the core (check_memory_space) and by allocate(), each
  // with a message that says why; every other space is split across the devices.
  bool accepts(MemorySpace) const override { return true; }
  MemorySpace native_space() const override { return MemorySpace::device; }
  void* allocate(std::size_t bytes, MemorySpace space) override;
  void deallocate(void* p, MemorySpace space) noexcept override;
  void copy_bytes(void* dst, const void* src, std::size_t bytes) override;
  int device() const override { return devices_[0]; }
  void* native_stream() const override;
  int shard_count() const override { return static_cast<int>(shards_.size()); }
  BackendImpl& shard(int k) override { return *shards_[static_cast<std::size_t>(k)]; }

 private:
  // f(k, shard k's backend) for every shard, on a host thread each when `in_parallel`
  // (pageable operands: each device's pipeline copies on the host). Every shard runs even
  // when one fails; then the first failure is thrown, naming its device.
  template <class F>
  void each(bool in_parallel, F&& f);

  std::vector<int> devices_;
  std::vector<std::unique_ptr<BackendImpl>> shards_;
};

}  // namespace ew::detail
