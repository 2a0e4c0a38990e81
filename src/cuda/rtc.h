/*
** rtc.h — kernels made at run time for the CUDA backend (rtc.c): torch.compile's
** fused pointwise kernels (lib/compile/cuda.lua writes their CUDA C source).
**
** A source is compiled two ways:
**   - by NVRTC (libnvrtc, opened with dlopen like libcuda.so.1: never linked)
**     into a cubin for the device's architecture, loaded with
**     cuModuleLoadData and launched with cuLaunchKernel on the device's
**     current stream: what runs under a real driver;
**   - by the host C++ compiler, as the kernels of src/cuda/kernels are in
**     their host build (ck_host.h), into a shared object that runs over the
**     fake driver's device memory (host memory): what runs under the fake.
** The kernels include cuda/kernels/ck_math.h; the module carries that header
** and ck_host.h (embedded at build time) so nothing outside it is needed.
**
** Lua functions, torch.cuda._rtc_*, for lib/compile/cuda.lua:
**   _rtc_nvrtc() -> "major.minor", path, include dir | nil, why
**   _rtc_compile(src, arch, opts) -> image, log | nil, message
**       arch "sm_90" gives a cubin, "compute_90" PTX; opts a list of NVRTC options
**   _rtc_headers() -> {name = text}
**   _rtc_host_memory() -> whether device memory is host memory (the fake driver)
**   _rtc_load(image, name, device) -> kernel | nil, message
**   _rtc_launch(kernel, n, {tensors}, {extents})
**   _rtc_host_load(path, symbol) -> host kernel | nil, message
**   _rtc_host_run(kernel, n, {tensors}, {extents})
** A kernel takes n (int64) and then one pointer per tensor, in order; the
** extents are the elements each pointer must reach (checked against the
** tensor's storage, as torch._compiled_run does for the CPU's kernels).
*/
#ifndef LT_CUDA_RTC_H
#define LT_CUDA_RTC_H
#include <lua.h>
#include <lauxlib.h>

/* the threads of one block, and the most blocks a launch has (a grid-stride
** loop covers the rest); the host build runs the same grid, thread by thread */
enum { LT_RTC_BLOCK = 256, LT_RTC_MAX_BLOCKS = 65536 };

/* the functions above, for luaL_setfuncs (lcuda.c); rtc_open makes the metatables */
extern const luaL_Reg lt_cuda_rtc_functions[];
void lt_cuda_rtc_open(lua_State *L);

#endif
