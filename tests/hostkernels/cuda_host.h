/* cuda_host.h - just enough of CUDA C++ for a kernel the array layer generates to compile
 * as host C++ and run as one thread of one block (hostrun.py). C++ gives integer
 * arithmetic the same meaning on the host as on the device (int is 32 bits, long long 64,
 * a signed overflow undefined on both), so the host's UndefinedBehaviorSanitizer judges
 * the kernel's arithmetic as NVRTC's compiler may assume it; NVRTC itself has no such
 * check. With one thread, a warp or block combination has one value to combine, and a
 * shuffle gives a thread its own value, as the device does where no other lane takes part. */
#ifndef CUDA_HOST_H
#define CUDA_HOST_H

#include <algorithm>
#include <cstring>

/* CUDA's own headers (cuda/std/complex, cuda_fp16.h), where a kernel includes them
 * first, define these for a host compiler already, and the vector types below too. */
#ifndef __global__
#  define __global__
#endif
#ifndef __device__
#  define __device__
#endif
#ifndef __host__
#  define __host__
#endif
#ifndef __forceinline__
#  define __forceinline__ inline
#endif
#ifndef __restrict__
#  define __restrict__ __restrict
#endif
#ifndef __shared__
#  define __shared__ /* one thread: memory of its own is the block's */
#endif
#ifndef __align__
#  define __align__(n)
#endif

using std::max;
using std::memcpy;
using std::min;

struct cj_host_dim3 {
  unsigned x, y, z;
};
static const cj_host_dim3 threadIdx = {0, 0, 0}, blockIdx = {0, 0, 0};
static const cj_host_dim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};

#ifndef __VECTOR_TYPES_H__
struct uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
#endif

static inline unsigned __shfl_down_sync(unsigned, unsigned v, int) { return v; }
static inline unsigned __shfl_up_sync(unsigned, unsigned v, unsigned) { return v; }
static inline void __syncthreads() {}

#endif
