#include "cuda_error.hpp"

namespace ew::detail::cuda {

// The errors after which, driver_types.h says, the process must be terminated and relaunched
// to use CUDA again.
bool is_sticky(cudaError_t e) noexcept {
  switch (e) {
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorMpsClientTerminated:
    case cudaErrorExternalDevice:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorLaunchTimeout:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
      return true;
    default:
      return false;
  }
}

std::string describe(cudaError_t e) { return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"; }

void throw_error(cudaError_t e, const std::string& what) {
  cudaGetLastError();
  const std::string message = "cuda: " + what + ": " + describe(e);
  if (e == cudaErrorMemoryAllocation) throw Error(Errc::out_of_memory, message);
  if (is_sticky(e)) throw Error(Errc::device_fatal, message + "; this device is unusable in this process");
  throw Error(Errc::device_error, message);
}

}  // namespace ew::detail::cuda
