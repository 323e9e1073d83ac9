// Host emulation of the CUDA built-ins the grid unit's kernels use (TestGridKernelsOnTheHost):
// one host thread per CUDA thread, std::barrier for __syncthreads and a warp's shuffles.
#include <atomic>
#include <barrier>
#include <cmath>
#include <math.h> // isinf, isfinite unqualified, as CUDA declares them
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__
struct dim3e { unsigned x = 0, y = 0, z = 0; };
thread_local dim3e threadIdx, blockIdx;
dim3e blockDim, gridDim;
static inline double __longlong_as_double(long long v) {
    double d;
    memcpy(&d, &v, 8);
    return d;
}
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T min(T a, T b) { return a < b ? a : b; }
template <class T> static inline T max(T a, T b) { return a > b ? a : b; }
using std::fabs;
using std::fmax;
using std::isfinite;
using std::sqrt;
static inline void __trap() { abort(); }
static inline int atomicAdd(int* p, int v) { return std::atomic_ref<int>(*p).fetch_add(v); }
static inline int atomicCAS(int* p, int cmp, int v) {
    std::atomic_ref<int>(*p).compare_exchange_strong(cmp, v);
    return cmp;
}
static inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
    auto o = *p;
    if (v < o) *p = v;
    return o;
}
struct Block {
    std::barrier<>* bar;
    std::vector<std::barrier<>*> warpbar;
    std::vector<double> shfl;
};
thread_local Block* curBlock;
static inline void __syncthreads() { curBlock->bar->arrive_and_wait(); }
static inline double __shfl_down_sync(unsigned, double v, int off) {
    int t = threadIdx.y * blockDim.x + threadIdx.x, w = t / 32, lane = t % 32;
    double* buf = &curBlock->shfl[w * 32];
    buf[lane] = v;
    curBlock->warpbar[w]->arrive_and_wait();
    double r = lane + off < 32 ? buf[lane + off] : v;
    curBlock->warpbar[w]->arrive_and_wait();
    return r;
}
// A pool of host threads, one per CUDA thread of a block (at most 256), reused
// from block to block.
struct Pool {
    int T;
    std::vector<std::thread> th;
    std::barrier<> start, done;
    std::function<void(int)> job;
    bool quit = false;
    explicit Pool(int t) : T(t), start(t + 1), done(t + 1) {
        for (int k = 0; k < T; k++)
            th.emplace_back([this, k] {
                for (;;) {
                    start.arrive_and_wait();
                    if (quit) return;
                    job(k);
                    done.arrive_and_wait();
                }
            });
    }
    ~Pool() {
        quit = true;
        start.arrive_and_wait();
        for (auto& t : th) t.join();
    }
};
static Pool& pool() {
    static Pool p(256);
    return p;
}
// launch runs kernel f over grid blocks of bx x by threads, blocks one after the other.
template <class A> void launch(void (*f)(A), int grid, int bx, int by, A a) {
    blockDim.x = bx;
    blockDim.y = by;
    blockDim.z = 1;
    gridDim.x = grid;
    const int n = bx * by;
    for (int b = 0; b < grid; b++) {
        Block blk;
        std::barrier<> bar(n);
        blk.bar = &bar;
        std::vector<std::barrier<>*> wb;
        for (int w = 0; w < (n + 31) / 32; w++) wb.push_back(new std::barrier<>(32));
        blk.warpbar = wb;
        blk.shfl.assign(n, 0.0);
        pool().job = [&](int t) {
            if (t >= n) return;
            curBlock = &blk;
            threadIdx.x = t % bx;
            threadIdx.y = t / bx;
            blockIdx.x = b;
            f(a);
        };
        pool().start.arrive_and_wait();
        pool().done.arrive_and_wait();
        for (auto p : wb) delete p;
    }
}
