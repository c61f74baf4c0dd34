#pragma once
// What the CUDA benchmarks share: a failed CUDA call ends the run with its name, and the GPU
// time of back-to-back calls on a stream, read from two events (each benchmark
// takes its own statistic over batches: a median, or the best).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace ew::bench {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e));
}

class EventTimer {
 public:
  explicit EventTimer(cudaStream_t stream) : stream_(stream) {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Seconds a call: `calls` calls of call() queued back to back between the two events.
  template <class F>
  double seconds_per_call(F&& call, int calls) {
    check(cudaEventRecord(start_, stream_), "cudaEventRecord");
    for (int i = 0; i < calls; ++i) call();
    check(cudaEventRecord(stop_, stream_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms * 1e-3 / calls;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_, stop_;
};

}  // namespace ew::bench
