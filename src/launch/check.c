/* check.c - what a launch is checked against before it is made (pure, no driver): the
 * arguments against the kernel's parameters, the configuration against the device's and
 * the kernel's limits, the rules of cooperative launches and clusters; and a launch the
 * driver refused, as a status with its message. Every refusal says what to do. */
#include <stdio.h>
#include <string.h>

#include "launch/launch.h"

enum { PORTABLE_CLUSTER = 8, NON_PORTABLE_CLUSTER = 16 };

/* ---- arguments and configuration ---- */

/* An argument's type for messages (common/scalar.c): its short name ("f32"), in words
 * ("a float (f32)"), and the constructor that makes an argument for a parameter of it. */
static const char *type_name(int t) {
  const cj_scalar *s = cj_scalar_of(t);
  return s ? s->name : "?";
}

static const char *type_words(int t) {
  const cj_scalar *s = cj_scalar_of(t);
  return s ? s->words : "of an unknown type";
}

static const char *type_ctor(int t) {
  const cj_scalar *s = cj_scalar_of(t);
  return s ? s->ctor : "CUJIT_VALUE()";
}

const char *cj_launch_kind_name(int k) {
  static const char *const names[] = {"by value", "In buffer", "Out buffer", "InOut buffer"};
  return names[k];
}

/* Which constructors make an argument of `size` bytes. */
static const char *ctor_hint(size_t size) {
  switch (size) {
    case 1: return "cujit_i8() or cujit_u8()";
    case 2: return "cujit_i16() or cujit_u16()";
    case 4: return "cujit_i32(), cujit_u32() or cujit_f32()";
    case 8: return "cujit_i64(), cujit_u64(), cujit_f64(), cujit_ptr() or an In/Out buffer";
    default: return "CUJIT_VALUE() of a struct or vector of that size";
  }
}

static cujit_status count_mismatch(const char *kernel, size_t nparams, const size_t *sizes,
                                   size_t nargs) {
  cj_buf b = {0};
  size_t i;
  cujit_status st;
  cj_buf_printf(&b, "kernel '%s' takes %zu argument%s but %zu %s given", kernel, nparams,
                nparams == 1 ? "" : "s", nargs, nargs == 1 ? "was" : "were");
  if (nparams) {
    cj_buf_puts(&b, " (its parameters' sizes in bytes: ");
    for (i = 0; i < nparams; i++) cj_buf_printf(&b, "%s%zu", i ? ", " : "", sizes[i]);
    cj_buf_puts(&b, ")");
  }
  if (b.oom) {
    cj_buf_free(&b);
    return cj_fail_oom("describing an argument mismatch");
  }
  st = cj_fail(CUJIT_ERROR_INVALID_ARGS, "%s; nothing was launched", b.data);
  cj_buf_free(&b);
  return st;
}

/* An argument of the right size whose type the parameter does not take. */
static cujit_status type_mismatch(const char *kernel, const cj_ptypes *types, size_t i,
                                  const cujit_arg *a) {
  const cj_ptype *p = &types->p[i];
  const char *what = a->kind == CUJIT_ARG_VALUE ? type_words(a->type)
                     : a->kind == CUJIT_ARG_IN  ? "an In buffer (a device pointer)"
                     : a->kind == CUJIT_ARG_OUT ? "an Out buffer (a device pointer)"
                                                : "an InOut buffer (a device pointer)";
  return cj_fail(CUJIT_ERROR_INVALID_ARGS,
                 "argument %zu of kernel '%s' is %s, but parameter "
                 "%zu is '%s'%s; use %s; nothing was launched",
                 i + 1, kernel, what, i + 1, p->m.spelling ? p->m.spelling : "?",
                 types->from == CJ_TYPES_SIGNATURE ? " (by its signature)" : "",
                 type_ctor(p->want));
}

/* Whether parameter i of `types` (NULL: unknown) takes an argument of tag t as it is. */
static int takes(const cj_ptypes *types, size_t i, int t) {
  return cj_takes(types ? types->accept[i] : CJ_ACCEPT_UNKNOWN, t);
}

/* Whether `a` is a plain value (a number CUJIT_LAUNCH() made an argument of). */
static int is_plain(const cujit_arg *a) {
  return a->kind == CUJIT_ARG_VALUE && a->type >= CUJIT_TYPE_PLAIN_ &&
         a->type < 2 * CUJIT_TYPE_PLAIN_;
}

/* Arguments and parameters are named by their position counted from 1, as a reader of
 * the kernel's declaration counts them. A plain value its parameter does not take as it
 * is waits for cj_launch_convert_args(), which checks it. */
cujit_status cj_launch_check_args(const char *kernel, size_t nparams, const size_t *sizes,
                                  const cj_ptypes *types, const cujit_arg *args, size_t nargs) {
  size_t i;
  CJ_CHECK(!nargs || args, CUJIT_ERROR_INVALID_VALUE,
           "launching kernel '%s': args is NULL but nargs is "
           "%zu",
           kernel, nargs);
  if (CJ_UNLIKELY(nargs != nparams)) return count_mismatch(kernel, nparams, sizes, nargs);
  for (i = 0; i < nargs; i++) {
    const cujit_arg *a = &args[i];
    CJ_CHECK(a->kind != CUJIT_ARG_ARRAY || a->value.ptr, CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' is a destroyed or NULL array (cujit_array_arg() of "
             "an array that is not live); nothing was launched",
             i + 1, kernel);
    CJ_CHECK(a->kind != CUJIT_ARG_ARRAY, CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' is an array handle (cujit_arr()), which only the "
             "generated kernels' calls take; pass cujit_array_arg(a) to a launch",
             i + 1, kernel);
    CJ_CHECK(a->kind >= CUJIT_ARG_VALUE && a->kind <= CUJIT_ARG_INOUT, CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' has unknown kind %d; "
             "make arguments with the cujit_* constructors",
             i + 1, kernel, a->kind);
    if (is_plain(a) && !takes(types, i, a->type)) continue;
    CJ_CHECK(a->size == sizes[i], CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' has the wrong size: "
             "parameter %zu expects %zu bytes, but %zu bytes were given (%s, %s); use %s; "
             "nothing was launched",
             i + 1, kernel, i + 1, sizes[i], a->size, type_name(a->type),
             cj_launch_kind_name(a->kind), ctor_hint(sizes[i]));
    CJ_CHECK(a->kind != CUJIT_ARG_VALUE || a->size <= sizeof a->value || a->data,
             CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' is a %zu-byte value "
             "with no data; make it with cujit_value()",
             i + 1, kernel, a->size);
    CJ_CHECK(a->kind == CUJIT_ARG_VALUE || !a->bytes || a->host, CUJIT_ERROR_INVALID_ARGS,
             "argument %zu of kernel '%s' is an %s of %zu bytes "
             "with a NULL host pointer",
             i + 1, kernel, cj_launch_kind_name(a->kind), a->bytes);
    if (CJ_UNLIKELY(!takes(types, i, a->kind == CUJIT_ARG_VALUE ? a->type : CUJIT_TYPE_PTR)))
      return type_mismatch(kernel, types, i, a);
  }
  return CUJIT_OK;
}

int cj_launch_plain_args(const cj_ptypes *types, const cujit_arg *args, size_t nargs) {
  size_t i;
  for (i = 0; i < nargs; i++)
    if (is_plain(&args[i]) && !takes(types, i, args[i].type)) return 1;
  return 0;
}

/* Plain value a (argument i) converted to its parameter's type into *out. */
static cujit_status convert_plain(const char *kernel, const cj_ptypes *types, size_t i,
                                  const cujit_arg *a, cujit_arg *out) {
  const cj_ptype *p = &types->p[i];
  unsigned char bytes[16];
  char value[CJ_VALUE_TEXT] = "";
  const char *why;
  why = cj_convert(p->want, a, bytes, value); /* the value's text, whatever the parameter */
  if (p->want == CUJIT_TYPE_PTR && a->type == CUJIT_TYPE_PTR + CUJIT_TYPE_PLAIN_)
    why = "CUJIT_IN_PTR(), CUJIT_OUT_PTR(), CUJIT_INOUT_PTR() and cujit_arg_ref() are for "
          "cujit_call() and bound functions; a launch takes cujit_in(), cujit_out() and "
          "cujit_inout()";
  else if (p->want == CUJIT_TYPE_PTR)
    why = "a pointer parameter takes a device pointer: a CUdeviceptr, cujit_ptr() or an In/Out "
          "buffer";
  else if (p->want == CUJIT_TYPE_BYTES)
    why = "a plain value is converted only to a bool, integer or floating parameter; give this "
          "one with a constructor of its size or CUJIT_VALUE()";
  if (!why) {
    *out = cujit_arg_scalar_(p->want, cj_scalar_of(p->want)->size, bytes);
    return CUJIT_OK;
  }
  return cj_fail(CUJIT_ERROR_INVALID_ARGS,
                 "argument %zu of kernel '%s' is %s%s%s, but parameter %zu is '%s'%s: %s; "
                 "nothing was launched",
                 i + 1, kernel, type_words(a->type), value[0] ? " " : "", value, i + 1,
                 p->m.spelling ? p->m.spelling : "?",
                 types->from == CJ_TYPES_SIGNATURE ? " (by its signature)" : "", why);
}

cujit_status cj_launch_convert_args(const char *kernel, const cj_ptypes *types,
                                    const cujit_arg *args, size_t nargs, cujit_arg *out) {
  size_t i;
  for (i = 0; i < nargs; i++) {
    out[i] = args[i];
    if (is_plain(&args[i]) && !takes(types, i, args[i].type))
      CJ_TRY(convert_plain(kernel, types, i, &args[i], &out[i]));
  }
  return CUJIT_OK;
}

cujit_status cj_config_fail(const char *kernel, const char *fmt, ...) {
  char what[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return cj_fail(CUJIT_ERROR_LAUNCH_CONFIG, "cannot launch kernel '%s': %s; nothing was launched",
                 kernel, what);
}

cujit_status cj_config_check(const char *kernel, const cj_limits *lim, int kernel_max_threads,
                             int static_smem, cujit_dim3 grid, cujit_dim3 block,
                             unsigned shared_bytes) {
  const unsigned b[3] = {block.x, block.y, block.z}, g[3] = {grid.x, grid.y, grid.z};
  const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
  const unsigned long long smem = (unsigned long long)static_smem + shared_bytes;
  int i;
  for (i = 0; i < 3; i++) {
    if (!b[i] || !g[i])
      return cj_config_fail(kernel,
                            "%s.%c is 0, and every grid and block dimension must be at "
                            "least 1",
                            !b[i] ? "block" : "grid", "xyz"[i]);
    if (b[i] > (unsigned)lim->max_block[i])
      return cj_config_fail(kernel, "block.%c = %u exceeds the device's limit of %d", "xyz"[i],
                            b[i], lim -> max_block[i]);
    if (g[i] > (unsigned)lim->max_grid[i])
      return cj_config_fail(kernel, "grid.%c = %u exceeds the device's limit of %d", "xyz"[i], g[i],
                            lim -> max_grid[i]);
  }
  if (threads > (unsigned long long)lim->max_threads)
    return cj_config_fail(kernel,
                          "a block of %u x %u x %u = %llu threads exceeds the device's limit "
                          "of %d threads per block",
                          b[0], b[1], b[2], threads, lim->max_threads);
  if (threads > (unsigned long long)kernel_max_threads)
    return cj_config_fail(kernel,
                          "a block of %llu threads exceeds this kernel's limit of %d threads "
                          "per block on this device (set by its register use or "
                          "__launch_bounds__); "
                          "cujit_function_suggest_block() gives a size that fits",
                          threads, kernel_max_threads);
  if (smem > (unsigned long long)lim->smem_optin)
    return cj_config_fail(kernel,
                          "it needs %llu bytes of shared memory per block (%d static + %u "
                          "dynamic) and the device allows at most %d",
                          smem, static_smem, shared_bytes, lim->smem_optin);
  return CUJIT_OK;
}

/* ---- cooperative launches and clusters ---- */

cujit_status cj_coop_check(const char *kernel, int supported, cujit_dim3 grid, cujit_dim3 block,
                           unsigned shared_bytes, int per_sm, int sms) {
  const unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;
  const unsigned long long limit =
      (unsigned long long)(per_sm > 0 ? per_sm : 0) * (unsigned long long)(sms > 0 ? sms : 0);
  if (!supported)
    return cj_config_fail(kernel, "this device does not support cooperative launches "
                                  "(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH is 0); launch without "
                                  "CUJIT_LAUNCH_OPT_COOPERATIVE and synchronise the grid by "
                                  "splitting the kernel in "
                                  "two launches");
  if (blocks > limit)
    return cj_config_fail(
        kernel,
        "a cooperative launch needs all its blocks resident at once, and the "
        "grid has %llu blocks while at most %llu fit on this device (%d per "
        "multiprocessor x %d multiprocessors, for blocks of %u threads with %u bytes "
        "of dynamic shared memory); launch at most %llu blocks and let each thread "
        "loop over several elements (a grid-stride loop)",
        blocks, limit, per_sm, sms, block.x * block.y * block.z, shared_bytes, limit);
  return CUJIT_OK;
}

static cujit_status cluster_dims_check(const char *kernel, cujit_dim3 grid, cujit_dim3 cluster) {
  const unsigned c[3] = {cluster.x, cluster.y, cluster.z}, g[3] = {grid.x, grid.y, grid.z};
  int i;
  for (i = 0; i < 3; i++)
    if (!c[i])
      return cj_config_fail(kernel,
                            "cluster.%c is 0 while the cluster is %u x %u x %u: give every "
                            "cluster dimension (1 for none along it), or all three 0 for no "
                            "clusters",
                            "xyz"[i], c[0], c[1], c[2]);
  for (i = 0; i < 3; i++)
    if (g[i] % c[i])
      return cj_config_fail(kernel,
                            "grid.%c = %u is not a multiple of cluster.%c = %u, and the grid "
                            "must be made of whole clusters; round grid.%c up to %u and let the "
                            "kernel "
                            "skip the extra blocks",
                            "xyz"[i], g[i], "xyz"[i], c[i], "xyz"[i], (g[i] / c[i] + 1) * c[i]);
  return CUJIT_OK;
}

cujit_status cj_cluster_check(const char *kernel, int cc, cujit_dim3 grid, cujit_dim3 cluster,
                              unsigned flags) {
  const unsigned long long size = (unsigned long long)cluster.x * cluster.y * cluster.z;
  const int non_portable = (flags & CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER) != 0;
  if (cc < 90)
    return cj_config_fail(kernel,
                          "thread-block clusters need a device of compute capability 9.0 or "
                          "newer, and this one is %d.%d; leave cujit_launch_options.cluster zero "
                          "on "
                          "this device",
                          cc / 10, cc % 10);
  CJ_TRY(cluster_dims_check(kernel, grid, cluster));
  if (size > PORTABLE_CLUSTER && !non_portable)
    return cj_config_fail(kernel,
                          "a cluster of %u x %u x %u = %llu blocks exceeds the portable limit "
                          "of %d blocks; use a smaller cluster, or set "
                          "CUJIT_LAUNCH_OPT_NON_PORTABLE_CLUSTER "
                          "in flags to allow up to %d where the device supports it",
                          cluster.x, cluster.y, cluster.z, size, PORTABLE_CLUSTER,
                          NON_PORTABLE_CLUSTER);
  if (size > NON_PORTABLE_CLUSTER)
    return cj_config_fail(kernel,
                          "a cluster of %u x %u x %u = %llu blocks exceeds the limit of %d "
                          "blocks (with non-portable sizes allowed); use a smaller cluster",
                          cluster.x, cluster.y, cluster.z, size, NON_PORTABLE_CLUSTER);
  return CUJIT_OK;
}

cujit_status cj_cluster_match(const char *kernel, const int required[3], cujit_dim3 cluster) {
  if (!required[0] && !required[1] && !required[2]) return CUJIT_OK;
  if ((unsigned)required[0] == cluster.x && (unsigned)required[1] == cluster.y &&
      (unsigned)required[2] == cluster.z)
    return CUJIT_OK;
  return cj_config_fail(kernel,
                        "the kernel declares __cluster_dims__(%d, %d, %d) but the options ask "
                        "for clusters of %u x %u x %u; leave cujit_launch_options.cluster zero to "
                        "use "
                        "the kernel's own, or give the same dimensions",
                        required[0], required[1], required[2], cluster.x, cluster.y, cluster.z);
}

cujit_status cj_cluster_fit_check(const char *kernel, cujit_dim3 cluster, cujit_dim3 block,
                                  unsigned shared_bytes, int fits) {
  const unsigned long long size = (unsigned long long)cluster.x * cluster.y * cluster.z;
  if (size <= (unsigned long long)(fits > 0 ? fits : 0)) return CUJIT_OK;
  return cj_config_fail(kernel,
                        "a cluster of %llu blocks of %u threads with %u bytes of dynamic shared "
                        "memory does not fit on this device, which runs at most %d such blocks "
                        "together; use a smaller cluster, smaller blocks or less shared memory",
                        size, block.x * block.y * block.z, shared_bytes, fits > 0 ? fits : 0);
}

/* ---- refused launches ---- */

cujit_status cj_launch_failed(const cujit_function *fn, CUresult r, const char *when) {
  const char *text = NULL;
  cujit_status st = cj_cu_status(r);
  char what[320];
  if (cj_cu_capture_error(r)) { /* refused because of a capture: cj_cu_fail says what to do */
    snprintf(what, sizeof what, "kernel '%s': %s", fn->name, when);
    return cj_cu_fail(r, what);
  }
  cj_cu.cuGetErrorString(r, &text);
  if (st == CUJIT_ERROR_LAUNCH_FAILED) /* cj_fail_cu adds that the process must end */
    return cj_fail_cu(st, r,
                      "kernel '%s' failed while running: %s (%s; compute-sanitizer shows where "
                      "the fault is)",
                      fn->name, cj_cu_name(r), text ? text : "no description");
  return cj_fail_cu(st, r, "kernel '%s': %s failed: %s (%s)", fn->name, when, cj_cu_name(r),
                    text ? text : "no description");
}

cujit_status cj_launch_refused(const cujit_function *fn, CUresult r, int tries, const char *what) {
  CUcontext ctx;
  CUdevice dev;
  if (r == CUDA_ERROR_INVALID_CONTEXT && tries == 0) /* this thread has no context yet */
    return cj_ctx_ensure(&ctx, &dev);
  return cj_launch_failed(fn, r, what);
}
