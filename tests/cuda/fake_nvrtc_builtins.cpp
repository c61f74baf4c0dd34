// A library that names itself NVRTC's builtins (its soname, tests/cuda/CMakeLists.txt) and
// holds none of them: what a broken or mismatched toolkit hands NVRTC.
extern "C" {
int ew_fake_nvrtc_builtins = 0;
}
