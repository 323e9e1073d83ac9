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
typedef struct CUevent_st* CUevent;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
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
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

typedef int nvrtcResult;
typedef struct _nvrtcProgram* nvrtcProgram;
#define NVRTC_SUCCESS 0

/* fg_cuda_load dlopens libcuda (path) and resolves the driver symbols;
 * fg_nvrtc_load the same for NVRTC. 0 on success, else an error message in
 * err (size n). */
int fg_cuda_load(const char* path, char* err, int n);
int fg_nvrtc_load(const char* path, char* err, int n);
/* fg_preload dlopens a library (by path) so that a later lookup of its soname
 * finds it loaded: NVRTC opens libnvrtc-builtins by soname alone. 0 on success. */
int fg_preload(const char* path);

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
CUresult fg_cuMemGetInfo(size_t* free_b, size_t* total_b);
CUresult fg_cuModuleLoadData(CUmodule* m, const void* image);
CUresult fg_cuModuleUnload(CUmodule m);
CUresult fg_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* name);
CUresult fg_cuFuncGetAttribute(int* v, int attr, CUfunction f);
CUresult fg_cuFuncSetAttribute(CUfunction f, int attr, int v);
CUresult fg_cuMemAlloc(CUdeviceptr* p, size_t n);
CUresult fg_cuMemFree(CUdeviceptr p);
CUresult fg_cuMemAllocHost(void** p, size_t n);
CUresult fg_cuMemFreeHost(void* p);
CUresult fg_cuMemHostRegister(void* p, size_t n, unsigned flags);
CUresult fg_cuMemHostUnregister(void* p);
CUresult fg_cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n);
CUresult fg_cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n);
CUresult fg_cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n);
CUresult fg_cuOccupancyMaxPotentialBlockSize(int* minGrid, int* block, CUfunction f, size_t smem, int limit);
CUresult fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* nb, CUfunction f, int block, size_t smem);
const char* fg_cuErrorString(CUresult r);

/* Streams, events, asynchronous copies and CUDA graphs (the device flow).
 * The graph calls are optional: fg_cuGraphsAvailable says whether the driver
 * has them; without them the flow launches its kernels one by one. */
CUresult fg_cuStreamCreate(CUstream* s, unsigned flags);
CUresult fg_cuStreamDestroy(CUstream s);
CUresult fg_cuStreamSynchronize(CUstream s);
CUresult fg_cuEventCreate(CUevent* e, unsigned flags);
CUresult fg_cuEventDestroy(CUevent e);
CUresult fg_cuEventRecord(CUevent e, CUstream s);
CUresult fg_cuEventSynchronize(CUevent e);
CUresult fg_cuEventQuery(CUevent e);
CUresult fg_cuEventElapsedTime(float* ms, CUevent a, CUevent b);
CUresult fg_cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, size_t n, CUstream s);
CUresult fg_cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, size_t n, CUstream s);
CUresult fg_cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s);
/* The one launch: a 3-D grid and block, smem bytes of dynamic shared memory
 * on stream s, the arguments in one block at args. With nparams < 0 the block
 * is the kernel's one parameter (an argument struct passed by value); else
 * the kernel takes nparams parameters, parameter i at args + offs[i]. */
#define FG_MAX_PARAMS 64
CUresult fg_cuLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     unsigned smem, CUstream s, void* args, int nparams, const long long* offs);
int fg_cuGraphsAvailable(void);
CUresult fg_cuStreamBeginCapture(CUstream s);
CUresult fg_cuStreamEndCapture(CUstream s, CUgraph* g);
CUresult fg_cuGraphInstantiate(CUgraphExec* e, CUgraph g);
CUresult fg_cuGraphLaunch(CUgraphExec e, CUstream s);
CUresult fg_cuGraphExecDestroy(CUgraphExec e);
CUresult fg_cuGraphDestroy(CUgraph g);
#define CU_EVENT_DISABLE_TIMING 2
#define CUDA_ERROR_NOT_READY 600

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
