/* The few CUDA driver and NVRTC declarations fieldgo uses, declared here so
 * the package builds without a CUDA toolkit; both libraries are dlopened at
 * run time (api.c). Values and signatures follow cuda.h and nvrtc.h. */
#ifndef FG_CUDA_API_H
#define FG_CUDA_API_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef unsigned long long CUdeviceptr;
typedef size_t (*CUoccupancyB2DSize)(int blockSize);

#define CUDA_SUCCESS 0
#define CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR 39
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK 0
#define CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES 1
#define CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES 3
#define CU_FUNC_ATTRIBUTE_NUM_REGS 4

typedef int nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;
#define NVRTC_SUCCESS 0

/* fg_cuda_load dlopens libcuda (path) and resolves the driver symbols;
 * fg_nvrtc_load the same for NVRTC. 0 on success, else an error message in
 * err (size n). */
int fg_cuda_load(const char* path, char* err, int n);
int fg_nvrtc_load(const char* path, char* err, int n);

/* Driver calls (through the loaded pointers). */
CUresult fg_cuInit(unsigned flags);
CUresult fg_cuDriverGetVersion(int* v);
CUresult fg_cuDeviceGetCount(int* n);
CUresult fg_cuDeviceGet(CUdevice* d, int ordinal);
CUresult fg_cuDeviceGetName(char* name, int len, CUdevice d);
CUresult fg_cuDeviceGetAttribute(int* v, int attr, CUdevice d);
CUresult fg_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d);
CUresult fg_cuDevicePrimaryCtxRelease(CUdevice d);
CUresult fg_cuCtxSetCurrent(CUcontext c);
CUresult fg_cuCtxSynchronize(void);
CUresult fg_cuModuleLoadData(CUmodule* m, const void* image);
CUresult fg_cuModuleUnload(CUmodule m);
CUresult fg_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name);
CUresult fg_cuFuncGetAttribute(int* v, int attr, CUfunction f);
CUresult fg_cuMemAlloc(CUdeviceptr* p, size_t n);
CUresult fg_cuMemFree(CUdeviceptr p);
CUresult fg_cuMemAllocHost(void** p, size_t n);
CUresult fg_cuMemFreeHost(void* p);
CUresult fg_cuMemHostRegister(void* p, size_t n, unsigned flags);
CUresult fg_cuMemHostUnregister(void* p);
CUresult fg_cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n);
CUresult fg_cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n);
CUresult fg_cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n);
CUresult fg_cuLaunchKernel(CUfunction f, unsigned gx, unsigned bx, unsigned smem, void* args);
CUresult fg_cuOccupancyMaxPotentialBlockSize(int* minGrid, int* block, CUfunction f, size_t smem, int limit);
CUresult fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* nb, CUfunction f, int block, size_t smem);
const char* fg_cuErrorString(CUresult r);

/* NVRTC calls. */
nvrtcResult fg_nvrtcVersion(int* major, int* minor);
nvrtcResult fg_nvrtcCreateProgram(nvrtcProgram* p, const char* src, const char* name, int nh,
                                  const char* const* headers, const char* const* names);
nvrtcResult fg_nvrtcCompileProgram(nvrtcProgram p, int nopt, const char* const* opts);
nvrtcResult fg_nvrtcGetProgramLogSize(nvrtcProgram p, size_t* n);
nvrtcResult fg_nvrtcGetProgramLog(nvrtcProgram p, char* log);
nvrtcResult fg_nvrtcGetCUBINSize(nvrtcProgram p, size_t* n);
nvrtcResult fg_nvrtcGetCUBIN(nvrtcProgram p, char* cubin);
nvrtcResult fg_nvrtcDestroyProgram(nvrtcProgram* p);
const char* fg_nvrtcErrorString(nvrtcResult r);

#endif
