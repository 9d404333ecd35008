/* linktest.h - the programs of several parts that the link test groups share. */
#ifndef CUJIT_LINKTEST_H
#define CUJIT_LINKTEST_H

/* A kernel calling a __device__ function and reading an extern __device__ variable, both
 * defined in the other source. */
static const char kLinkMain[] =
    "extern __device__ float scale;\n"
    "extern __device__ int calls;\n"
    "__device__ float twice(float x);\n"
    "__global__ void apply(float *p, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) { p[i] = twice(p[i]) * scale; atomicAdd(&calls, 1); }\n"
    "}\n";
static const char kLinkLib[] = "__device__ float scale = 3.0f;\n"
                               "__device__ int calls = 0;\n"
                               "__device__ float twice(float x) { return 2.0f * x + 1.0f; }\n";

/* A kernel launching a child kernel (dynamic parallelism, through libcudadevrt). */
static const char kLinkParent[] =
    "__global__ void child(int *out, int base) { out[base + threadIdx.x] = 7 * (base + "
    "threadIdx.x); }\n"
    "__global__ void parent(int *out) { child<<<1, 32>>>(out, (int)threadIdx.x * 32); }\n";

/* The target the CPU groups link for (nvJitLink needs no device). */
#define LINK_ARCH "sm_90"

static inline cujit_link_part link_source(const char *text, const char *name) {
  cujit_link_part p = CUJIT_LINK_PART_INIT;
  p.kind = CUJIT_LINK_SOURCE;
  p.data = text;
  p.name = name;
  return p;
}

static inline cujit_link_part link_bytes(int kind, const void *data, size_t size,
                                         const char *name) {
  cujit_link_part p = CUJIT_LINK_PART_INIT;
  p.kind = kind;
  p.data = data;
  p.data_size = size;
  p.name = name;
  return p;
}

/* 1 when the bytes hold the text `s` (a symbol's name in a CUBIN's string table). */
static inline int bytes_hold(const void *data, size_t size, const char *s) {
  size_t n = strlen(s), i;
  const char *p = data;
  for (i = 0; data && i + n <= size; i++)
    if (memcmp(p + i, s, n) == 0) return 1;
  return 0;
}

/* Prebuilt parts of kLinkLib made by nvcc in `dir` for sm_<cc>: lib.fatbin (-rdc=true
 * -fatbin), lib.o (-dc, a host object holding device code), liblib.a (nvcc -lib of it)
 * and lib_lto.fatbin (LTO-IR in a fatbin, -dlto). 0, or 1 with the reason in `why` (nvcc
 * missing, or a command that failed). */
static inline int link_nvcc_parts(const char *dir, int cc, char *why, size_t why_size) {
  static const char *const steps[] =
      {"nvcc -arch=sm_%d -rdc=true -fatbin -o '%s/lib.fatbin' '%s/lib.cu'",
       "nvcc -arch=sm_%d -dc -o '%s/lib.o' '%s/lib.cu'",
       "nvcc -arch=sm_%d -lib -o '%s/liblib.a' '%s/lib.o'",
       "nvcc -gencode arch=compute_%d,code=lto_%d -dc -fatbin -o '%s/lib_lto.fatbin' '%s/lib.cu'"};
  char cmd[8192], out[4096];
  size_t i;
  if (test_capture("command -v nvcc", out, sizeof out) != 0) {
    snprintf(why, why_size, "nvcc is not on PATH");
    return 1;
  }
  if (test_write_file(dir, "lib.cu", kLinkLib) != 0) {
    snprintf(why, why_size, "cannot write %s/lib.cu", dir);
    return 1;
  }
  for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    if (i == 3)
      snprintf(cmd, sizeof cmd, steps[i], cc, cc, dir, dir);
    else
      snprintf(cmd, sizeof cmd, steps[i], cc, dir, dir);
    strncat(cmd, " 2>&1", sizeof cmd - strlen(cmd) - 1);
    if (test_capture(cmd, out, sizeof out) != 0) {
      snprintf(why, why_size, "%s failed: %s", cmd, out);
      return 1;
    }
  }
  return 0;
}

/* A part of `kind` read from file `name` in `dir` (the path is kept in `buf`). */
static inline cujit_link_part link_file(int kind, const char *dir, const char *name, char *buf,
                                        size_t size) {
  cujit_link_part p = CUJIT_LINK_PART_INIT;
  snprintf(buf, size, "%s/%s", dir, name);
  p.kind = kind;
  p.path = buf;
  return p;
}

#endif
