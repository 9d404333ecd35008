/* map.c - the engine under the elementwise operations cujit writes itself, whose element i
 * depends only on element i of each input: out[i] = expr, the expression reading the
 * inputs' elements by name.
 *
 * The kernel has two loops over the same elements. Where every array's address is a
 * multiple of 16 bytes, it moves chunks of W elements (W = 16 bytes over the largest
 * element size) with one access per array, as a device-to-device copy does, and the last
 * n mod W elements one at a time; otherwise (a view that starts between chunks) every
 * element alone, four per thread in flight. The choice is made in the kernel from the
 * pointers it is given, so one kernel serves both. An input of one element that stands for
 * every index (broadcast) is read once, before the loops.
 *
 * Where some array is a strided view, the kernel is another: a loop over the elements in C
 * order that finds each one's coordinates in the shape (dimensions merged as far as every
 * array allows, so at most 4) and each array's element by its own strides. Where the plan
 * allows it (cj_plan_chunks: every array steps by 1 along the innermost dimension, or an
 * input by 0, and the rows are a multiple of the chunk), it first moves chunks of W
 * elements of that dimension, their coordinates found once a chunk, each array by one
 * access: a row broadcast down a matrix streams as a copy does. */
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

void cj_chunk_load(cj_buf *b, const char *indent, int type, unsigned w, const char *var,
                   const char *base, const char *index) {
  const cj_elem *e = cj_elem_of(type);
  const char *raw = cj_raw_type(e->size * w);
  cj_buf_printf(b,
                "%s%s %s[%u];\n"
                "%s{ const %s cj_r = reinterpret_cast<const %s *>(%s)[%s];\n"
                "%s  memcpy(%s, &cj_r, sizeof cj_r); }\n",
                indent, e->c_name, var, w, indent, raw, raw, base, index, indent, var);
}

void cj_chunk_store(cj_buf *b, const char *indent, int type, unsigned w, const char *var,
                    const char *base, const char *index) {
  const char *raw = cj_raw_type(cj_elem_of(type)->size * w);
  cj_buf_printf(b,
                "%s{ %s cj_r;\n%s  memcpy(&cj_r, %s, sizeof cj_r);\n"
                "%s  reinterpret_cast<%s *>(%s)[%s] = cj_r; }\n",
                indent, raw, indent, var, indent, raw, base, index);
}

static int is_bcast(const cj_map_kernel *k, size_t a) { return (int)(k->bcast >> a & 1); }
static int has_out(const cj_map_kernel *k) { return k->out_type != CJ_NO_OUTPUT; }

/* Whether input a is read once a chunk by the strided loop's chunks (steps by 0 there). */
static int is_zinner(const cj_map_kernel *k, size_t a) { return (int)(k->zinner >> a & 1); }

unsigned cj_map_kernel_width(const cj_map_kernel *k) {
  int types[CUJIT_MAP_MAX_ARRAYS + 1];
  size_t a, n = 0;
  unsigned w;
  if (k->dims && k->chunk < 2) return 1;
  for (a = 0; a < k->n_in; a++)
    if (!is_bcast(k, a) && !(k->dims && is_zinner(k, a))) types[n++] = k->in_types[a];
  if (has_out(k)) types[n++] = k->out_type;
  w = n ? cj_map_width(types, n) : 1;
  return k->dims && k->chunk < w ? k->chunk : w;
}

/* Input a's element as the expression reads it: its one element read before the loop
 * (broadcast), else the element at `at`. */
static void put_input(cj_buf *b, const cj_map_kernel *k, size_t a, const char *at,
                      const char *indent) {
  cj_buf_printf(b, "%sconst %s %s = ", indent, cj_elem_of(k->in_types[a])->c_name, k->in_names[a]);
  if (is_bcast(k, a))
    cj_buf_printf(b, "cj_b%zu;\n", a);
  else
    cj_buf_printf(b, "cj_in%zu[%s];\n", a, at);
}

/* The statement for element `at` (an unsigned long long expression) of the one-at-a-time
 * loop: each input's element by its name, then the output. */
static void put_element(cj_buf *b, const cj_map_kernel *k, const char *at, const char *indent) {
  char inner[16];
  size_t a;
  snprintf(inner, sizeof inner, "%s  ", indent);
  cj_buf_printf(b, "%s{\n%s  const long long i = (long long)(%s);\n", indent, indent, at);
  for (a = 0; a < k->n_in; a++) put_input(b, k, a, "i", inner);
  if (has_out(k))
    cj_buf_printf(b, "%s  cj_out[i] = %s;\n%s}\n", indent, k->expr, indent);
  else
    cj_buf_printf(b, "%s  %s;\n%s}\n", indent, k->expr, indent);
}

/* The chunked loop: W elements of every array per access, while whole chunks are left.
 * Broadcast inputs are not in it: their element was read once. */
static void put_chunks(cj_buf *b, const cj_map_kernel *k, unsigned w) {
  const cj_elem *r = has_out(k) ? cj_elem_of(k->out_type) : NULL;
  const char *sep = "";
  size_t a;
  cj_buf_puts(b, "  if (((");
  for (a = 0; a < k->n_in; a++)
    if (!is_bcast(k, a)) cj_buf_printf(b, "%s(unsigned long long)cj_in%zu", sep, a), sep = " | ";
  if (r) cj_buf_printf(b, "%s(unsigned long long)cj_out", sep);
  cj_buf_printf(b,
                ") & 15) == 0) {\n"
                "    const unsigned long long cj_chunks = cj_n / %u;\n"
                "    for (unsigned long long cj_c = cj_k; cj_c < cj_chunks;"
                " cj_c += cj_stride) {\n",
                w);
  for (a = 0; a < k->n_in; a++) {
    char var[32], base[32];
    if (is_bcast(k, a)) continue;
    snprintf(var, sizeof var, "cj_v%zu", a);
    snprintf(base, sizeof base, "cj_in%zu", a);
    cj_chunk_load(b, "      ", k->in_types[a], w, var, base, "cj_c");
  }
  if (r) cj_buf_printf(b, "      %s cj_o[%u];\n", r->c_name, w);
  cj_buf_printf(b,
                "#pragma unroll\n"
                "      for (int cj_j = 0; cj_j < %u; cj_j++) {\n"
                "        const long long i = (long long)(cj_c * %u + cj_j);\n",
                w, w);
  for (a = 0; a < k->n_in; a++) {
    char v[32];
    snprintf(v, sizeof v, "cj_v%zu[cj_j]", a);
    if (is_bcast(k, a))
      put_input(b, k, a, "", "        ");
    else
      cj_buf_printf(b, "        const %s %s = %s;\n", cj_elem_of(k->in_types[a])->c_name,
                    k->in_names[a], v);
  }
  if (!r) {
    cj_buf_printf(b, "        (void)i;\n        %s;\n      }\n    }\n", k->expr);
  } else {
    cj_buf_printf(b, "        (void)i;\n        cj_o[cj_j] = %s;\n      }\n", k->expr);
    cj_chunk_store(b, "      ", k->out_type, w, "cj_o", "cj_out", "cj_c");
    cj_buf_puts(b, "    }\n");
  }
  cj_buf_printf(b, "    cj_k += cj_chunks * %u; /* the rest, one at a time */\n  }\n", w);
}

void cj_layout_source(cj_buf *b) {
  cj_buf_puts(b, "#ifndef CJ_LAYOUT\n#define CJ_LAYOUT\n"
                 "/* A loop's shape (outermost first) and the strides of A arrays along it. */\n"
                 "template <int D, int A> struct cj_lay {\n"
                 "  long long shape[D];\n  long long stride[A][D];\n};\n"
                 "/* The coordinates of element k (C order); 32-bit division where it fits. */\n"
                 "template <int D, int A>\n"
                 "__device__ __forceinline__ void cj_coords(unsigned long long k, "
                 "const cj_lay<D, A> &L, long long *c) {\n"
                 "#pragma unroll\n"
                 "  for (int d = D - 1; d > 0; d--) {\n"
                 "    const unsigned long long s = (unsigned long long)L.shape[d];\n"
                 "    const unsigned long long q = ((k | s) >> 32) == 0\n"
                 "        ? (unsigned long long)((unsigned)k / (unsigned)s) : k / s;\n"
                 "    c[d] = (long long)(k - q * s);\n"
                 "    k = q;\n  }\n  c[0] = (long long)k;\n}\n"
                 "/* Where element k (C order) of array j lies, in elements from its first. */\n"
                 "template <int D, int A>\n"
                 "__device__ __forceinline__ long long cj_off(unsigned long long k, "
                 "const cj_lay<D, A> &L, int j) {\n"
                 "  long long c[D], o = 0;\n  cj_coords(k, L, c);\n"
                 "#pragma unroll\n"
                 "  for (int d = 0; d < D; d++) o += c[d] * L.stride[j][d];\n"
                 "  return o;\n}\n#endif\n");
}

/* Array a's offset at coordinates cj_c, as `const long long cj_o<a>`. */
static void put_offsets(cj_buf *b, const cj_map_kernel *k, const char *indent) {
  size_t a, arrays = k->n_in + (size_t)has_out(k);
  int d;
  for (a = 0; a < arrays; a++) {
    cj_buf_printf(b, "%sconst long long cj_o%zu = ", indent, a);
    for (d = 0; d < k->dims; d++)
      cj_buf_printf(b, "%scj_c[%d] * cj_lay.stride[%zu][%d]", d ? " + " : "", d, a, d);
    cj_buf_puts(b, ";\n");
  }
}

/* The strided loop's chunks: W elements of the innermost dimension at once, their
 * coordinates found once, each array moved by one access (an input that steps by 0 there
 * read once), where every array moved by chunks starts at a multiple of 16 bytes; the
 * plan makes the innermost dimension a multiple of W, so no element is left. */
static void put_strided_chunks(cj_buf *b, const cj_map_kernel *k, unsigned w) {
  const cj_elem *r = has_out(k) ? cj_elem_of(k->out_type) : NULL;
  const char *sep = "";
  size_t a;
  cj_buf_puts(b, "  if (((");
  for (a = 0; a < k->n_in; a++)
    if (!is_zinner(k, a)) cj_buf_printf(b, "%s(unsigned long long)cj_in%zu", sep, a), sep = " | ";
  if (r) cj_buf_printf(b, "%s(unsigned long long)cj_out", sep);
  cj_buf_printf(b,
                ") & 15) == 0) {\n"
                "    for (unsigned long long cj_q = cj_k; cj_q < cj_n / %u; cj_q += cj_stride) {\n"
                "      long long cj_c[%d];\n      cj_coords(cj_q * %u, cj_lay, cj_c);\n",
                w, k->dims, w);
  put_offsets(b, k, "      ");
  for (a = 0; a < k->n_in; a++) {
    char var[32], base[64];
    if (is_zinner(k, a)) {
      cj_buf_printf(b, "      const %s cj_s%zu = cj_in%zu[cj_o%zu];\n",
                    cj_elem_of(k->in_types[a])->c_name, a, a, a);
      continue;
    }
    snprintf(var, sizeof var, "cj_v%zu", a);
    snprintf(base, sizeof base, "cj_in%zu + cj_o%zu", a, a);
    cj_chunk_load(b, "      ", k->in_types[a], w, var, base, "0");
  }
  if (r) cj_buf_printf(b, "      %s cj_ov[%u];\n", r->c_name, w);
  cj_buf_printf(b,
                "#pragma unroll\n"
                "      for (int cj_j = 0; cj_j < %u; cj_j++) {\n"
                "        const long long i = (long long)(cj_q * %u + cj_j);\n"
                "        (void)i;\n",
                w, w);
  for (a = 0; a < k->n_in; a++)
    cj_buf_printf(b, "        const %s %s = %s%zu%s;\n", cj_elem_of(k->in_types[a])->c_name,
                  k->in_names[a], is_zinner(k, a) ? "cj_s" : "cj_v", a,
                  is_zinner(k, a) ? "" : "[cj_j]");
  if (r) {
    char base[64];
    cj_buf_printf(b, "        cj_ov[cj_j] = %s;\n      }\n", k->expr);
    snprintf(base, sizeof base, "cj_out + cj_o%zu", k->n_in);
    cj_chunk_store(b, "      ", k->out_type, w, "cj_ov", base, "0");
  } else {
    cj_buf_printf(b, "        %s;\n      }\n", k->expr);
  }
  cj_buf_puts(b, "    }\n    return;\n  }\n");
}

/* The strided loop: each element's coordinates, then every array's element by its own
 * strides (a broadcast one steps by 0). */
static void put_strided(cj_buf *b, const cj_map_kernel *k) {
  size_t a;
  unsigned w = cj_map_kernel_width(k);
  if (w > 1) put_strided_chunks(b, k, w);
  cj_buf_printf(b,
                "  for (; cj_k < cj_n; cj_k += cj_stride) {\n"
                "    const long long i = (long long)cj_k;\n"
                "    long long cj_c[%d];\n    cj_coords(cj_k, cj_lay, cj_c);\n    (void)i;\n",
                k->dims);
  put_offsets(b, k, "    ");
  for (a = 0; a < k->n_in; a++)
    cj_buf_printf(b, "    const %s %s = cj_in%zu[cj_o%zu];\n", cj_elem_of(k->in_types[a])->c_name,
                  k->in_names[a], a, a);
  if (has_out(k))
    cj_buf_printf(b, "    cj_out[cj_o%zu] = %s;\n  }\n", k->n_in, k->expr);
  else
    cj_buf_printf(b, "    %s;\n  }\n", k->expr);
}

void cj_map_source(cj_buf *b, const cj_map_kernel *k) {
  int types[CUJIT_MAP_MAX_ARRAYS + 1];
  /* a strided loop's arrays may be one another (in place): no __restrict__ then */
  const char *restrict_ = k->dims ? "" : "__restrict__ ";
  unsigned w = cj_map_kernel_width(k);
  size_t a, n_types = k->n_in;
  if (k->n_in) memcpy(types, k->in_types, k->n_in * sizeof *types);
  if (has_out(k)) types[n_types++] = k->out_type;
  cj_array_includes(b, types, n_types);
  if (k->dims) cj_layout_source(b);
  if (k->preamble) cj_buf_printf(b, "%s\n", k->preamble);
  cj_buf_printf(b, "extern \"C\" __global__ void %s(", k->name);
  for (a = 0; a < k->n_in; a++)
    cj_buf_printf(b, "const %s *%scj_in%zu, ", cj_elem_of(k->in_types[a])->c_name, restrict_, a);
  if (k->scalars && k->scalars[0]) cj_buf_printf(b, "%s, ", k->scalars);
  if (has_out(k)) cj_buf_printf(b, "%s *%scj_out, ", cj_elem_of(k->out_type)->c_name, restrict_);
  cj_buf_puts(b, "unsigned long long cj_n");
  if (k->dims) cj_buf_printf(b, ", const cj_lay<%d, %zu> cj_lay", k->dims, k->n_in + has_out(k));
  cj_buf_puts(b, ") {\n"
                 "  const unsigned long long cj_stride = (unsigned long long)gridDim.x * "
                 "blockDim.x;\n"
                 "  unsigned long long cj_k = (unsigned long long)blockIdx.x * blockDim.x + "
                 "threadIdx.x;\n");
  if (k->dims) {
    put_strided(b, k);
    cj_buf_puts(b, "}\n");
    return;
  }
  for (a = 0; a < k->n_in; a++)
    if (is_bcast(k, a))
      cj_buf_printf(b, "  const %s cj_b%zu = *cj_in%zu; /* one element for every i */\n",
                    cj_elem_of(k->in_types[a])->c_name, a, a);
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

cujit_status cj_map_run_kernel(cujit_function *fn, unsigned w, const cj_map_run *r) {
  void *params[CUJIT_MAP_MAX_ARRAYS + 10];
  int64_t packed[(CUJIT_MAP_MAX_ARRAYS + 2) * CUJIT_ARRAY_MAX_DIMS];
  const cj_plan *plan = r->plan;
  CUdeviceptr any = r->has_out ? r->out : 0;
  uint64_t count = (uint64_t)r->n;
  size_t i, p = 0;
  CJ_CHECK(r->n_in <= CUJIT_MAP_MAX_ARRAYS && r->n_scalars <= 6, CUJIT_ERROR_INVALID_VALUE,
           "kernel '%s': too many arguments", cujit_function_name(fn));
  for (i = 0; i < r->n_in; i++) {
    params[p++] = (void *)&r->in[i];
    if (!plan || !(plan->bcast >> i & 1)) any |= r->in[i];
  }
  for (i = 0; i < r->n_scalars; i++)
    params[p++] = (void *)(r->scalars[i].data ? r->scalars[i].data : r->scalars[i].value.bytes);
  if (r->has_out) params[p++] = (void *)&r->out;
  params[p++] = &count;
  if (plan && plan->dims) {
    cj_plan_pack(plan, packed);
    params[p++] = packed;
    return cj_array_launch_params(fn, w > 1 ? r->n / w : r->n, r->stream, params, p);
  }
  return cj_array_launch_params(fn, cj_map_work(w, r->n, any), r->stream, params, p);
}

cujit_status cj_map_launch(cujit_function *fn, unsigned w, int64_t n, CUstream stream,
                           const CUdeviceptr *in, size_t n_in, const cujit_arg *scalars,
                           size_t n_scalars, CUdeviceptr out) {
  cj_map_run r = {n, stream, in, n_in, scalars, n_scalars, out, 1, NULL};
  return cj_map_run_kernel(fn, w, &r);
}
