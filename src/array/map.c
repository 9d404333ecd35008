/* map.c - the engine under the elementwise operations cujit writes itself, whose element i
 * depends only on element i of each input: out[i] = expr, the expression reading the
 * inputs' elements by name.
 *
 * The kernel has two loops over the same elements. Where every array's address is a
 * multiple of 16 bytes, it moves chunks of W elements (W = 16 bytes over the largest
 * element size) with one access per array, as a device-to-device copy does, and the last
 * n mod W elements one at a time; otherwise (a view that starts between chunks) every
 * element alone, four per thread in flight. The choice is made in the kernel from the
 * pointers it is given, so one kernel serves both. */
#include <stdio.h>
#include <string.h>

#include "array/array.h"

unsigned cj_map_width(const int *types, size_t n) {
  size_t i, largest = 1;
  for (i = 0; i < n; i++)
    if (cj_elem_of(types[i])->size > largest) largest = cj_elem_of(types[i])->size;
  return (unsigned)(16 / largest);
}

const char *cj_raw_type(size_t bytes) {
  switch (bytes) {
    case 16: return "uint4";
    case 8: return "uint2";
    case 4: return "unsigned int";
    case 2: return "unsigned short";
    default: return "unsigned char";
  }
}

/* The statement for element `at` (an unsigned long long expression) of the one-at-a-time
 * loop: each input's element by its name, then the output. */
static void put_element(cj_buf *b, const cj_map_kernel *k, const char *at, const char *indent) {
  size_t a;
  cj_buf_printf(b, "%s{\n%s  const long long i = (long long)(%s);\n", indent, indent, at);
  for (a = 0; a < k->n_in; a++)
    cj_buf_printf(b, "%s  const %s %s = cj_in%zu[i];\n", indent, cj_elem_of(k->in_types[a])->c_name,
                  k->in_names[a], a);
  cj_buf_printf(b, "%s  cj_out[i] = %s;\n%s}\n", indent, k->expr, indent);
}

/* The chunked loop: W elements of every array per access, while whole chunks are left. */
static void put_chunks(cj_buf *b, const cj_map_kernel *k, unsigned w) {
  const cj_elem *r = cj_elem_of(k->out_type);
  size_t a;
  cj_buf_puts(b, "  if (((");
  for (a = 0; a < k->n_in; a++) cj_buf_printf(b, "(unsigned long long)cj_in%zu | ", a);
  cj_buf_printf(b,
                "(unsigned long long)cj_out) & 15) == 0) {\n"
                "    const unsigned long long cj_chunks = cj_n / %u;\n"
                "    for (unsigned long long cj_c = cj_k; cj_c < cj_chunks;"
                " cj_c += cj_stride) {\n",
                w);
  for (a = 0; a < k->n_in; a++) {
    const cj_elem *e = cj_elem_of(k->in_types[a]);
    const char *raw = cj_raw_type(e->size * w);
    cj_buf_printf(b,
                  "      %s cj_v%zu[%u];\n"
                  "      { const %s cj_r = reinterpret_cast<const %s *>(cj_in%zu)[cj_c];\n"
                  "        memcpy(cj_v%zu, &cj_r, sizeof cj_r); }\n",
                  e->c_name, a, w, raw, raw, a, a);
  }
  cj_buf_printf(b,
                "      %s cj_o[%u];\n#pragma unroll\n"
                "      for (int cj_j = 0; cj_j < %u; cj_j++) {\n"
                "        const long long i = (long long)(cj_c * %u + cj_j);\n",
                r->c_name, w, w, w);
  for (a = 0; a < k->n_in; a++)
    cj_buf_printf(b, "        const %s %s = cj_v%zu[cj_j];\n", cj_elem_of(k->in_types[a])->c_name,
                  k->in_names[a], a);
  cj_buf_printf(b,
                "        (void)i;\n        cj_o[cj_j] = %s;\n      }\n"
                "      { %s cj_r;\n        memcpy(&cj_r, cj_o, sizeof cj_r);\n"
                "        reinterpret_cast<%s *>(cj_out)[cj_c] = cj_r; }\n    }\n"
                "    cj_k += cj_chunks * %u; /* the rest, one at a time */\n  }\n",
                k->expr, cj_raw_type(r->size * w), cj_raw_type(r->size * w), w);
}

void cj_map_source(cj_buf *b, const cj_map_kernel *k) {
  int types[CUJIT_MAP_MAX_ARRAYS + 1];
  unsigned w;
  size_t a;
  if (k->n_in) memcpy(types, k->in_types, k->n_in * sizeof *types);
  types[k->n_in] = k->out_type;
  w = cj_map_width(types, k->n_in + 1);
  cj_array_includes(b, types, k->n_in + 1);
  if (k->preamble) cj_buf_printf(b, "%s\n", k->preamble);
  cj_buf_printf(b, "extern \"C\" __global__ void %s(", k->name);
  for (a = 0; a < k->n_in; a++)
    cj_buf_printf(b, "const %s *__restrict__ cj_in%zu, ", cj_elem_of(k->in_types[a])->c_name, a);
  if (k->scalars && k->scalars[0]) cj_buf_printf(b, "%s, ", k->scalars);
  cj_buf_printf(b,
                "%s *__restrict__ cj_out, unsigned long long cj_n) {\n"
                "  const unsigned long long cj_stride = (unsigned long long)gridDim.x * "
                "blockDim.x;\n"
                "  unsigned long long cj_k = (unsigned long long)blockIdx.x * blockDim.x + "
                "threadIdx.x;\n",
                cj_elem_of(k->out_type)->c_name);
  if (w > 1) put_chunks(b, k, w);
  cj_buf_puts(b, "  for (; cj_k + 3 * cj_stride < cj_n; cj_k += 4 * cj_stride) {\n"
                 "#pragma unroll\n"
                 "    for (int cj_u = 0; cj_u < 4; cj_u++)\n");
  put_element(b, k, "cj_k + cj_u * cj_stride", "    ");
  cj_buf_puts(b, "  }\n  for (; cj_k < cj_n; cj_k += cj_stride)\n");
  put_element(b, k, "cj_k", "  ");
  cj_buf_puts(b, "}\n");
}

cujit_status cj_map_prepare(const cj_map_kernel *k, cujit_function **fn) {
  cj_buf src = {0};
  cujit_status st;
  CJ_CHECK(k->n_in <= CUJIT_MAP_MAX_ARRAYS, CUJIT_ERROR_INVALID_VALUE,
           "kernel '%s': more than %d inputs", k->name, CUJIT_MAP_MAX_ARRAYS);
  cj_map_source(&src, k);
  if (src.oom) {
    cj_buf_free(&src);
    return cj_fail_oom("writing a kernel");
  }
  st = cj_array_kernel(src.data, k->name, fn);
  cj_buf_free(&src);
  return st;
}

int64_t cj_map_work(unsigned w, int64_t n, CUdeviceptr aligned) {
  if (w < 2 || aligned % 16 != 0) return n;
  return n / w + (n % w != 0);
}

cujit_status cj_map_launch(cujit_function *fn, unsigned w, int64_t n, CUstream stream,
                           const CUdeviceptr *in, size_t n_in, const cujit_arg *scalars,
                           size_t n_scalars, CUdeviceptr out) {
  void *params[CUJIT_MAP_MAX_ARRAYS + 8];
  CUdeviceptr any = out;
  uint64_t count = (uint64_t)n;
  size_t i, p = 0;
  CJ_CHECK(n_in <= CUJIT_MAP_MAX_ARRAYS && n_scalars <= 6, CUJIT_ERROR_INVALID_VALUE,
           "kernel '%s': too many arguments", cujit_function_name(fn));
  for (i = 0; i < n_in; i++) {
    params[p++] = (void *)&in[i];
    any |= in[i];
  }
  for (i = 0; i < n_scalars; i++)
    params[p++] = (void *)(scalars[i].data ? scalars[i].data : scalars[i].value.bytes);
  params[p++] = &out;
  params[p++] = &count;
  return cj_array_launch_params(fn, cj_map_work(w, n, any), stream, params, p);
}
