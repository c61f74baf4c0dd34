#pragma once
// Functions that CUDA code calls on the device as well as on the host (the op table,
// the 16-bit conversions) are marked EW_HOST_DEVICE; without nvcc it is nothing, so
// these headers stay plain C++.
#ifndef EW_HOST_DEVICE
#if defined(__CUDACC__) || defined(__HIPCC__)
#define EW_HOST_DEVICE __host__ __device__
#else
#define EW_HOST_DEVICE
#endif
#endif
