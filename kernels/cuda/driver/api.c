/* dlopen/dlsym of libcuda.so.1 and NVRTC; see api.h. */
#include <dlfcn.h>
#include <stdio.h>
#include "api.h"

static struct {
    CUresult (*cuInit)(unsigned);
    CUresult (*cuDriverGetVersion)(int*);
    CUresult (*cuDeviceGetCount)(int*);
    CUresult (*cuDeviceGet)(CUdevice*, int);
    CUresult (*cuDeviceGetName)(char*, int, CUdevice);
    CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
    CUresult (*cuDevicePrimaryCtxRelease_v2)(CUdevice);
    CUresult (*cuCtxSetCurrent)(CUcontext);
    CUresult (*cuCtxSynchronize)(void);
    CUresult (*cuModuleLoadData)(CUmodule*, const void*);
    CUresult (*cuModuleUnload)(CUmodule);
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
    CUresult (*cuFuncGetAttribute)(int*, int, CUfunction);
    CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
    CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);
    CUresult (*cuMemFree_v2)(CUdeviceptr);
    CUresult (*cuMemAllocHost_v2)(void**, size_t);
    CUresult (*cuMemFreeHost)(void*);
    CUresult (*cuMemHostRegister_v2)(void*, size_t, unsigned);
    CUresult (*cuMemHostUnregister)(void*);
    CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void*, size_t);
    CUresult (*cuMemcpyDtoH_v2)(void*, CUdeviceptr, size_t);
    CUresult (*cuMemsetD8_v2)(CUdeviceptr, unsigned char, size_t);
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void**, void**);
    CUresult (*cuOccupancyMaxPotentialBlockSize)(int*, int*, CUfunction, CUoccupancyB2DSize, size_t, int);
    CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int*, CUfunction, int, size_t);
    CUresult (*cuGetErrorString)(CUresult, const char**);
    CUresult (*cuStreamCreate)(CUstream*, unsigned);
    CUresult (*cuStreamDestroy_v2)(CUstream);
    CUresult (*cuStreamSynchronize)(CUstream);
    CUresult (*cuEventCreate)(CUevent*, unsigned);
    CUresult (*cuEventDestroy_v2)(CUevent);
    CUresult (*cuEventRecord)(CUevent, CUstream);
    CUresult (*cuEventSynchronize)(CUevent);
    CUresult (*cuEventQuery)(CUevent);
    CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
    CUresult (*cuMemcpyHtoDAsync_v2)(CUdeviceptr, const void*, size_t, CUstream);
    CUresult (*cuMemcpyDtoHAsync_v2)(void*, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemcpyDtoDAsync_v2)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult (*cuMemGetInfo_v2)(size_t*, size_t*);
    /* optional */
    CUresult (*cuStreamBeginCapture_v2)(CUstream, int);
    CUresult (*cuStreamEndCapture)(CUstream, CUgraph*);
    CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec*, CUgraph, unsigned long long);
    CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
    CUresult (*cuGraphExecDestroy)(CUgraphExec);
    CUresult (*cuGraphDestroy)(CUgraph);
} cu;

static struct {
    nvrtcResult (*nvrtcVersion)(int*, int*);
    nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                      const char* const*);
    nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
    nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
    nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
    nvrtcResult (*nvrtcGetCUBINSize)(nvrtcProgram, size_t*);
    nvrtcResult (*nvrtcGetCUBIN)(nvrtcProgram, char*);
    nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
    const char* (*nvrtcGetErrorString)(nvrtcResult);
} nv;

#define SYM(lib, table, name)                                           \
    do {                                                                \
        *(void**)(&table.name) = dlsym(lib, #name);                     \
        if (!table.name) {                                              \
            snprintf(err, n, "symbol %s missing from %s", #name, path); \
            return 1;                                                   \
        }                                                               \
    } while (0)

#define OPT(lib, table, name) (*(void**)(&table.name) = dlsym(lib, #name))

int fg_cuda_load(const char* path, char* err, int n) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, n, "%s", dlerror());
        return 1;
    }
    SYM(h, cu, cuInit);
    SYM(h, cu, cuDriverGetVersion);
    SYM(h, cu, cuDeviceGetCount);
    SYM(h, cu, cuDeviceGet);
    SYM(h, cu, cuDeviceGetName);
    SYM(h, cu, cuDeviceGetAttribute);
    SYM(h, cu, cuDevicePrimaryCtxRetain);
    SYM(h, cu, cuDevicePrimaryCtxRelease_v2);
    SYM(h, cu, cuCtxSetCurrent);
    SYM(h, cu, cuCtxSynchronize);
    SYM(h, cu, cuMemGetInfo_v2);
    SYM(h, cu, cuModuleLoadData);
    SYM(h, cu, cuModuleUnload);
    SYM(h, cu, cuModuleGetFunction);
    SYM(h, cu, cuFuncGetAttribute);
    SYM(h, cu, cuFuncSetAttribute);
    SYM(h, cu, cuMemAlloc_v2);
    SYM(h, cu, cuMemFree_v2);
    SYM(h, cu, cuMemAllocHost_v2);
    SYM(h, cu, cuMemFreeHost);
    SYM(h, cu, cuMemHostRegister_v2);
    SYM(h, cu, cuMemHostUnregister);
    SYM(h, cu, cuMemcpyHtoD_v2);
    SYM(h, cu, cuMemcpyDtoH_v2);
    SYM(h, cu, cuMemsetD8_v2);
    SYM(h, cu, cuLaunchKernel);
    SYM(h, cu, cuOccupancyMaxPotentialBlockSize);
    SYM(h, cu, cuOccupancyMaxActiveBlocksPerMultiprocessor);
    SYM(h, cu, cuGetErrorString);
    SYM(h, cu, cuStreamCreate);
    SYM(h, cu, cuStreamDestroy_v2);
    SYM(h, cu, cuStreamSynchronize);
    SYM(h, cu, cuEventCreate);
    SYM(h, cu, cuEventDestroy_v2);
    SYM(h, cu, cuEventRecord);
    SYM(h, cu, cuEventSynchronize);
    SYM(h, cu, cuEventQuery);
    /* CUDA 12.8 added cuEventElapsedTime_v2 (same signature); 13 keeps both. */
    *(void**)(&cu.cuEventElapsedTime) = dlsym(h, "cuEventElapsedTime_v2");
    if (!cu.cuEventElapsedTime) SYM(h, cu, cuEventElapsedTime);
    SYM(h, cu, cuMemcpyHtoDAsync_v2);
    SYM(h, cu, cuMemcpyDtoHAsync_v2);
    SYM(h, cu, cuMemcpyDtoDAsync_v2);
    OPT(h, cu, cuStreamBeginCapture_v2);
    OPT(h, cu, cuStreamEndCapture);
    OPT(h, cu, cuGraphInstantiateWithFlags);
    OPT(h, cu, cuGraphLaunch);
    OPT(h, cu, cuGraphExecDestroy);
    OPT(h, cu, cuGraphDestroy);
    return 0;
}

int fg_preload(const char* path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL) ? 0 : 1; }

int fg_nvrtc_load(const char* path, char* err, int n) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, n, "%s", dlerror());
        return 1;
    }
    SYM(h, nv, nvrtcVersion);
    SYM(h, nv, nvrtcCreateProgram);
    SYM(h, nv, nvrtcCompileProgram);
    SYM(h, nv, nvrtcGetProgramLogSize);
    SYM(h, nv, nvrtcGetProgramLog);
    SYM(h, nv, nvrtcGetCUBINSize);
    SYM(h, nv, nvrtcGetCUBIN);
    SYM(h, nv, nvrtcDestroyProgram);
    SYM(h, nv, nvrtcGetErrorString);
    return 0;
}

CUresult fg_cuInit(unsigned f) { return cu.cuInit(f); }
CUresult fg_cuDriverGetVersion(int* v) { return cu.cuDriverGetVersion(v); }
CUresult fg_cuDeviceGetCount(int* c) { return cu.cuDeviceGetCount(c); }
CUresult fg_cuDeviceGet(CUdevice* d, int o) { return cu.cuDeviceGet(d, o); }
CUresult fg_cuDeviceGetName(char* s, int l, CUdevice d) { return cu.cuDeviceGetName(s, l, d); }
CUresult fg_cuDeviceGetAttribute(int* v, int a, CUdevice d) { return cu.cuDeviceGetAttribute(v, a, d); }
CUresult fg_cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) { return cu.cuDevicePrimaryCtxRetain(c, d); }
CUresult fg_cuDevicePrimaryCtxRelease(CUdevice d) { return cu.cuDevicePrimaryCtxRelease_v2(d); }
CUresult fg_cuCtxSetCurrent(CUcontext c) { return cu.cuCtxSetCurrent(c); }
CUresult fg_cuCtxSynchronize(void) { return cu.cuCtxSynchronize(); }
CUresult fg_cuMemGetInfo(size_t* free_b, size_t* total_b) { return cu.cuMemGetInfo_v2(free_b, total_b); }
CUresult fg_cuModuleLoadData(CUmodule* m, const void* im) { return cu.cuModuleLoadData(m, im); }
CUresult fg_cuModuleUnload(CUmodule m) { return cu.cuModuleUnload(m); }
CUresult fg_cuModuleGetFunction(CUfunction* f, CUmodule m, const char* s) { return cu.cuModuleGetFunction(f, m, s); }
CUresult fg_cuFuncGetAttribute(int* v, int a, CUfunction f) { return cu.cuFuncGetAttribute(v, a, f); }
CUresult fg_cuFuncSetAttribute(CUfunction f, int a, int v) { return cu.cuFuncSetAttribute(f, a, v); }
CUresult fg_cuMemAlloc(CUdeviceptr* p, size_t n) { return cu.cuMemAlloc_v2(p, n); }
CUresult fg_cuMemFree(CUdeviceptr p) { return cu.cuMemFree_v2(p); }
CUresult fg_cuMemAllocHost(void** p, size_t n) { return cu.cuMemAllocHost_v2(p, n); }
CUresult fg_cuMemFreeHost(void* p) { return cu.cuMemFreeHost(p); }
CUresult fg_cuMemHostRegister(void* p, size_t n, unsigned f) { return cu.cuMemHostRegister_v2(p, n, f); }
CUresult fg_cuMemHostUnregister(void* p) { return cu.cuMemHostUnregister(p); }
CUresult fg_cuMemcpyHtoD(CUdeviceptr d, const void* s, size_t n) { return cu.cuMemcpyHtoD_v2(d, s, n); }
CUresult fg_cuMemcpyDtoH(void* d, CUdeviceptr s, size_t n) { return cu.cuMemcpyDtoH_v2(d, s, n); }
CUresult fg_cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) { return cu.cuMemsetD8_v2(p, v, n); }
CUresult fg_cuOccupancyMaxPotentialBlockSize(int* g, int* b, CUfunction f, size_t smem, int limit) {
    return cu.cuOccupancyMaxPotentialBlockSize(g, b, f, NULL, smem, limit);
}
CUresult fg_cuOccupancyMaxActiveBlocksPerMultiprocessor(int* nb, CUfunction f, int b, size_t smem) {
    return cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(nb, f, b, smem);
}
const char* fg_cuErrorString(CUresult r) {
    const char* s = NULL;
    if (!cu.cuGetErrorString || cu.cuGetErrorString(r, &s) != CUDA_SUCCESS || !s) return "unknown CUDA error";
    return s;
}

nvrtcResult fg_nvrtcVersion(int* a, int* b) { return nv.nvrtcVersion(a, b); }
nvrtcResult fg_nvrtcCreateProgram(nvrtcProgram* p, const char* s, const char* name, int nh, const char* const* h,
                                  const char* const* hn) {
    return nv.nvrtcCreateProgram(p, s, name, nh, h, hn);
}
nvrtcResult fg_nvrtcCompileProgram(nvrtcProgram p, int n, const char* const* o) { return nv.nvrtcCompileProgram(p, n, o); }
nvrtcResult fg_nvrtcGetProgramLogSize(nvrtcProgram p, size_t* n) { return nv.nvrtcGetProgramLogSize(p, n); }
nvrtcResult fg_nvrtcGetProgramLog(nvrtcProgram p, char* l) { return nv.nvrtcGetProgramLog(p, l); }
nvrtcResult fg_nvrtcGetCUBINSize(nvrtcProgram p, size_t* n) { return nv.nvrtcGetCUBINSize(p, n); }
nvrtcResult fg_nvrtcGetCUBIN(nvrtcProgram p, char* c) { return nv.nvrtcGetCUBIN(p, c); }
nvrtcResult fg_nvrtcDestroyProgram(nvrtcProgram* p) { return nv.nvrtcDestroyProgram(p); }
const char* fg_nvrtcErrorString(nvrtcResult r) { return nv.nvrtcGetErrorString ? nv.nvrtcGetErrorString(r) : "NVRTC error"; }

CUresult fg_cuStreamCreate(CUstream* s, unsigned f) { return cu.cuStreamCreate(s, f); }
CUresult fg_cuStreamDestroy(CUstream s) { return cu.cuStreamDestroy_v2(s); }
CUresult fg_cuStreamSynchronize(CUstream s) { return cu.cuStreamSynchronize(s); }
CUresult fg_cuEventCreate(CUevent* e, unsigned f) { return cu.cuEventCreate(e, f); }
CUresult fg_cuEventDestroy(CUevent e) { return cu.cuEventDestroy_v2(e); }
CUresult fg_cuEventRecord(CUevent e, CUstream s) { return cu.cuEventRecord(e, s); }
CUresult fg_cuEventSynchronize(CUevent e) { return cu.cuEventSynchronize(e); }
CUresult fg_cuEventQuery(CUevent e) { return cu.cuEventQuery(e); }
CUresult fg_cuEventElapsedTime(float* ms, CUevent a, CUevent b) { return cu.cuEventElapsedTime(ms, a, b); }
CUresult fg_cuMemcpyHtoDAsync(CUdeviceptr d, const void* s, size_t n, CUstream st) { return cu.cuMemcpyHtoDAsync_v2(d, s, n, st); }
CUresult fg_cuMemcpyDtoHAsync(void* d, CUdeviceptr s, size_t n, CUstream st) { return cu.cuMemcpyDtoHAsync_v2(d, s, n, st); }
CUresult fg_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) { return cu.cuMemcpyDtoDAsync_v2(d, s, n, st); }
CUresult fg_cuLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                     unsigned smem, CUstream s, void* args, int nparams, const long long* offs) {
    void* params[FG_MAX_PARAMS];
    if (nparams < 0) {
        params[0] = args;
    } else {
        if (nparams > FG_MAX_PARAMS) return 1; /* CUDA_ERROR_INVALID_VALUE; the caller refuses it first */
        for (int i = 0; i < nparams; i++) params[i] = (char*)args + offs[i];
    }
    return cu.cuLaunchKernel(f, gx, gy, gz, bx, by, bz, smem, s, params, NULL);
}
int fg_cuGraphsAvailable(void) {
    return cu.cuStreamBeginCapture_v2 && cu.cuStreamEndCapture && cu.cuGraphInstantiateWithFlags && cu.cuGraphLaunch &&
           cu.cuGraphExecDestroy && cu.cuGraphDestroy;
}
/* Mode 2 = CU_STREAM_CAPTURE_MODE_RELAXED: other threads' driver calls (the
 * Go runtime may run them) do not invalidate the capture. */
CUresult fg_cuStreamBeginCapture(CUstream s) { return cu.cuStreamBeginCapture_v2(s, 2); }
CUresult fg_cuStreamEndCapture(CUstream s, CUgraph* g) { return cu.cuStreamEndCapture(s, g); }
CUresult fg_cuGraphInstantiate(CUgraphExec* e, CUgraph g) { return cu.cuGraphInstantiateWithFlags(e, g, 0); }
CUresult fg_cuGraphLaunch(CUgraphExec e, CUstream s) { return cu.cuGraphLaunch(e, s); }
CUresult fg_cuGraphExecDestroy(CUgraphExec e) { return cu.cuGraphExecDestroy(e); }
CUresult fg_cuGraphDestroy(CUgraph g) { return cu.cuGraphDestroy(g); }
