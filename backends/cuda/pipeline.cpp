#include "pipeline.hpp"

#include <algorithm>
#include <thread>

#include "cuda_error.hpp"
#include "fault_injection.hpp"

namespace ew::detail::cuda {

namespace {

enum class Residence { device, pinned, pageable };

Residence residence(MemorySpace s) {
  if (s == MemorySpace::pinned) return Residence::pinned;
  if (s == MemorySpace::host) return Residence::pageable;
  return Residence::device;  // device or managed: the kernel reads it where it is
}

}  // namespace

HostPipeline::HostPipeline(std::size_t staging_bytes, int copy_threads)
    : chunk_bytes_(pipeline_chunk_bytes(staging_bytes)), copy_threads_(copy_threads) {
  try {
    for (Slot& s : slots_) {
      check(cudaStreamCreateWithFlags(&s.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags (pipeline)");
      check(cudaEventCreateWithFlags(&s.done, cudaEventDisableTiming), "cudaEventCreateWithFlags (pipeline)");
    }
    check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "cudaEventCreateWithFlags (pipeline)");
  } catch (...) {
    release();  // what was made before the failure (no destructor runs; the next call retries)
    throw;
  }
}

HostPipeline::~HostPipeline() { release(); }

// Clears only an error of its own (one that failed here): an error the application has yet to
// read stays for it.
void HostPipeline::release() noexcept {
  bool failed = false;
  const auto call = [&failed](cudaError_t e) { failed |= e != cudaSuccess; };
  for (Slot& s : slots_) {
    if (s.stream) call(cudaStreamSynchronize(s.stream));
    if (s.scratch) call(cudaFree(s.scratch));
    if (s.staging) call(cudaFreeHost(s.staging));
    if (s.done) call(cudaEventDestroy(s.done));
    if (s.stream) call(cudaStreamDestroy(s.stream));
  }
  if (ready_) call(cudaEventDestroy(ready_));
  if (failed) cudaGetLastError();
}

void HostPipeline::ensure_scratch() {
  for (Slot& s : slots_)
    if (!s.scratch)
      check(fault_point(Step::scratch_alloc, [&] { return cudaMalloc(&s.scratch, kArrays * chunk_bytes_); }),
            "cudaMalloc (pipeline device scratch)");
}

void HostPipeline::ensure_staging() {
  for (Slot& s : slots_)
    if (!s.staging)
      check(fault_point(Step::staging_alloc, [&] { return cudaMallocHost(&s.staging, kArrays * chunk_bytes_); }),
            "cudaMallocHost (pipeline pinned staging)");
}

CopyTeam& HostPipeline::team() {
  if (!team_) team_ = std::make_unique<CopyTeam>(copy_threads_);
  return *team_;
}

void HostPipeline::run(const OpCall& c, cudaStream_t main, LaunchShape& shape) {
  try {
    run_chunks(c, main, shape);
  } catch (...) {
    abandon();
    throw;
  }
}

// After a failure: whatever was enqueued before it runs to its end (or fails), so that
// no copy into the caller's memory is in flight once the call has thrown, and the
// slots start afresh. A sticky error stays with the device whatever this does.
void HostPipeline::abandon() noexcept {
  bool failed = false;
  for (Slot& s : slots_) {
    failed |= cudaStreamSynchronize(s.stream) != cudaSuccess;
    s.in_use = false;
    s.pending_drain = false;
  }
  if (failed) cudaGetLastError();  // its own error only, as in the destructor
}

void HostPipeline::run_chunks(const OpCall& c, cudaStream_t main, LaunchShape& shape) {
  const std::size_t elem = size_of(c.dtype);
  const bool has_b = c.b != nullptr;
  // Operands 0: a, 1: b, 2: out. Identical pointers share one region (exact aliasing),
  // so an in-place op or add(x, x) moves each array once.
  const void* user[kArrays] = {c.a, c.b, c.out};
  Residence where[kArrays] = {residence(c.a_space), has_b ? residence(c.b_space) : Residence::device,
                              residence(c.out_space)};
  int region[kArrays] = {0, 1, 2};
  if (has_b && c.b == c.a) region[1] = 0;
  if (c.out == c.a) region[2] = 0;
  else if (has_b && c.out == c.b) region[2] = region[1];

  bool any_pageable = false;
  for (int k = 0; k < kArrays; ++k) any_pageable |= (k != 1 || has_b) && where[k] == Residence::pageable;
  ensure_scratch();
  if (any_pageable) ensure_staging();
  const std::size_t chunk = chunk_bytes_ / elem;

  check(fault_point(Step::order, [&] { return cudaEventRecord(ready_, main); }), "cudaEventRecord (pipeline start)");
  for (Slot& s : slots_)
    check(fault_point(Step::order, [&] { return cudaStreamWaitEvent(s.stream, ready_, 0); }),
          "cudaStreamWaitEvent (pipeline start)");

  std::vector<CopyTeam::Segment> host_copies;
  auto drain = [&](Slot& s) {
    check(fault_point(Step::sync, [&] { return cudaEventSynchronize(s.done); }),
          "cudaEventSynchronize (pipeline chunk, before its staging is reused)");
    s.in_use = false;
    if (s.pending_drain)
      host_copies.push_back({static_cast<char*>(c.out) + s.drain_offset * elem, s.staging + 2 * chunk_bytes_,
                             s.drain_count * elem});
    s.pending_drain = false;
  };

  std::size_t chunks = 0;
  for (std::size_t offset = 0, count = 0; offset < c.n; offset += count, ++chunks) {
    count = next_chunk_elements(c.n - offset, chunk);
    Slot& s = slots_[chunks % kSlots];
    const std::size_t bytes = count * elem;
    host_copies.clear();
    if (any_pageable && s.in_use) drain(s);  // its staging is about to be refilled
    void* operand[kArrays];
    for (int k = 0; k < kArrays; ++k) {
      if (k == 1 && !has_b) {
        operand[k] = nullptr;
        continue;
      }
      char* at = const_cast<char*>(static_cast<const char*>(user[k])) + offset * elem;
      if (where[k] == Residence::device) {
        operand[k] = at;
        continue;
      }
      operand[k] = s.scratch + region[k] * chunk_bytes_;
      if (k < 2 && where[k] == Residence::pageable && region[k] == k)
        host_copies.push_back({s.staging + k * chunk_bytes_, at, bytes});
    }
    team().copy(host_copies);
    for (int k = 0; k < 2; ++k) {
      if ((k == 1 && (!has_b || region[1] != 1)) || where[k] == Residence::device) continue;
      const char* src = where[k] == Residence::pinned ? static_cast<const char*>(user[k]) + offset * elem
                                                      : s.staging + k * chunk_bytes_;
      check(fault_point(Step::host_to_device,
                        [&] { return cudaMemcpyAsync(operand[k], src, bytes, cudaMemcpyHostToDevice, s.stream); }),
            "cudaMemcpyAsync (pipeline host-to-device copy)");
    }
    check(fault_point(Step::kernel_launch,
                      [&] { return launch(c.op, c.dtype, count, operand[0], operand[1], operand[2], c.s, c.t, shape, s.stream); }),
          "kernel launch (pipeline)");
    if (where[2] != Residence::device) {
      // A pageable output lands in its own staging region even when its scratch is an
      // input's: the next fill of this slot may then run beside its drain.
      char* dst = where[2] == Residence::pinned ? static_cast<char*>(c.out) + offset * elem
                                                : s.staging + 2 * chunk_bytes_;
      check(fault_point(Step::device_to_host,
                        [&] { return cudaMemcpyAsync(dst, operand[2], bytes, cudaMemcpyDeviceToHost, s.stream); }),
            "cudaMemcpyAsync (pipeline device-to-host copy)");
      s.pending_drain = where[2] == Residence::pageable;
      s.drain_offset = offset, s.drain_count = count;
    }
    check(fault_point(Step::order, [&] { return cudaEventRecord(s.done, s.stream); }), "cudaEventRecord (pipeline chunk)");
    s.in_use = true;
  }

  if (any_pageable) {  // pageable memory is written by host threads: finish before returning
    host_copies.clear();
    for (std::size_t i = 0; i < std::min<std::size_t>(chunks, kSlots); ++i) {
      Slot& s = slots_[(chunks - 1 - i) % kSlots];
      if (s.in_use) drain(s);
    }
    team().copy(host_copies);
  }
  for (Slot& s : slots_) {
    check(fault_point(Step::order, [&] { return cudaEventRecord(s.done, s.stream); }), "cudaEventRecord (pipeline end)");
    check(fault_point(Step::order, [&] { return cudaStreamWaitEvent(main, s.done, 0); }),
          "cudaStreamWaitEvent (pipeline end)");
  }
}

}  // namespace ew::detail::cuda
