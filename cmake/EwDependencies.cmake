# Finds the dependency of each backend option (EwOptions.cmake) and decides
# EW_HAVE_HIGHWAY, EW_HAVE_CUDA, EW_HAVE_KOKKOS. Nothing is downloaded: everything
# comes from Debian packages or from what the user installed (CMAKE_PREFIX_PATH).
find_package(OpenMP COMPONENTS CXX)

# Highway (libhwy-dev)
set(_ew_hwy_found FALSE)
set(_ew_hwy_why "Highway not found (apt-get install libhwy-dev)")
if(NOT EW_ENABLE_HIGHWAY MATCHES "^(OFF|FALSE|NO|0)$")
  find_package(hwy CONFIG QUIET)
  if(hwy_FOUND AND OpenMP_CXX_FOUND)
    set(_ew_hwy_found TRUE)
  elseif(hwy_FOUND)
    set(_ew_hwy_why "OpenMP not found (the Highway backend uses it for its threads)")
  endif()
endif()
ew_backend_decide(EW_ENABLE_HIGHWAY _ew_hwy_found "${_ew_hwy_why}" "Highway ${hwy_VERSION}")

# CUDA (nvcc and the toolkit; the runtime is linked statically so the library
# loads on machines with no driver)
set(_ew_cuda_found FALSE)
set(_ew_cuda_why "no CUDA compiler found (nvcc on PATH or CMAKE_CUDA_COMPILER)")
if(NOT EW_ENABLE_CUDA MATCHES "^(OFF|FALSE|NO|0)$")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # sm_80, sm_90 and sm_100 machine code, plus PTX for newer GPUs.
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90-real 100-real 100-virtual)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(_ew_cuda_found TRUE)
    else()
      set(_ew_cuda_why "nvcc found but not the CUDA toolkit libraries")
    endif()
  endif()
endif()
ew_backend_decide(EW_ENABLE_CUDA _ew_cuda_found "${_ew_cuda_why}"
                  "CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")

# Kokkos (any installed Kokkos; Debian's needs mending, see EwKokkos.cmake)
set(_ew_kokkos_found FALSE)
set(_ew_kokkos_why "Kokkos not found (apt-get install libtrilinos-kokkos-dev, or set Kokkos_ROOT)")
if(NOT EW_ENABLE_KOKKOS MATCHES "^(OFF|FALSE|NO|0)$")
  include(EwKokkos)
  if(Kokkos_FOUND)
    set(_ew_kokkos_found TRUE)
  endif()
endif()
ew_backend_decide(EW_ENABLE_KOKKOS _ew_kokkos_found "${_ew_kokkos_why}" "Kokkos ${Kokkos_VERSION} ${EW_KOKKOS_DEVICES}")
# ctest labels of the kokkos/* cases: they run in Kokkos' default space, on the GPU where
# Kokkos was built for Cuda.
if(_ew_kokkos_found AND Kokkos_ENABLE_CUDA)
  set(EW_KOKKOS_TEST_LABELS "gpu;kokkos")
else()
  set(EW_KOKKOS_TEST_LABELS "cpu;kokkos")
endif()
