/* options.c - validating cujit_options and turning them into an NVRTC command line. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile/compile.h"
#include "dl/driver.h"

int cj_arch_clamp(int cc, const int *supported, size_t n) {
  int best = 0, lowest = 0;
  size_t i;
  for (i = 0; i < n; i++) {
    if (supported[i] <= cc && supported[i] > best) best = supported[i];
    if (!lowest || supported[i] < lowest) lowest = supported[i];
  }
  return best ? best : lowest;
}

static void list_archs(char *out, size_t size, const int *archs, size_t n) {
  size_t i, len = 0;
  out[0] = '\0';
  for (i = 0; i < n && len + 8 < size; i++)
    len += (size_t)snprintf(out + len, size - len, "%s%d", i ? " " : "", archs[i]);
}

/* Parses "sm_90", "sm_90a", "compute_120f"... into kind ("sm"/"compute"), number, suffix. */
static int parse_arch(const char *s, int *is_sm, int *num, char *suffix) {
  const char *p;
  char *end;
  long v;
  if (strncmp(s, "sm_", 3) == 0) {
    *is_sm = 1;
    p = s + 3;
  } else if (strncmp(s, "compute_", 8) == 0) {
    *is_sm = 0;
    p = s + 8;
  } else {
    return -1;
  }
  if (!isdigit((unsigned char)*p)) return -1;
  v = strtol(p, &end, 10);
  if (v <= 0 || v > 10000) return -1;
  *suffix = '\0';
  if (*end == 'a' || *end == 'f') *suffix = *end++;
  if (*end) return -1;
  *num = (int)v;
  return 0;
}

static int arch_supported(int num, const int *archs, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    if (archs[i] == num) return 1;
  return 0;
}

/* NVIDIA's rule: architecture-specific targets ('a') exist from 90 on, family targets
 * ('f') from 100 on, and NVRTC knows family targets from 12.9 on. */
static int suffix_exists(int num, char suffix) {
  int major = 0, minor = 0;
  if (suffix == 'a') return num >= 90;
  if (suffix != 'f') return 1;
  if (cj_nvrtc_version_cached(&major, &minor) != CUJIT_OK) return 0;
  return num >= 100 && (major > 12 || (major == 12 && minor >= 9));
}

/* Why a target that parsed is not valid here. `from` says where it came from. */
static cujit_status arch_refused(const char *req, const char *from, int num, char suffix,
                                 const char *list) {
  CJ_CHECK(suffix_exists(num, suffix), CUJIT_ERROR_INVALID_OPTION,
           "architecture '%s'%s does not exist: the 'a' suffix needs 90 or newer and "
           "the 'f' suffix needs 100 or newer (and NVRTC 12.9); use '%.*s', or e.g. "
           "sm_90a, sm_100f (this NVRTC supports %s)",
           req, from, (int)strlen(req) - 1, req, list);
  return cj_fail(CUJIT_ERROR_INVALID_OPTION,
                 "architecture '%s'%s is not supported by this NVRTC; it supports %s", req, from,
                 list);
}

/* Validates an explicit target. The list of supported targets is only formatted for an
 * error: this runs on every compile, cache hits included. */
static cujit_status explicit_arch(const char *req, const char *from, char *out, size_t out_size) {
  const int *archs;
  size_t n, len = strlen(req);
  int is_sm, num;
  char suffix, list[256];
  CJ_TRY(cj_nvrtc_archs(&archs, &n));
  if (parse_arch(req, &is_sm, &num, &suffix) == 0 && arch_supported(num, archs, n) &&
      suffix_exists(num, suffix) && len < out_size) {
    memcpy(out, req, len + 1);
    return CUJIT_OK;
  }
  list_archs(list, sizeof list, archs, n);
  CJ_CHECK(parse_arch(req, &is_sm, &num, &suffix) == 0, CUJIT_ERROR_INVALID_OPTION,
           "invalid architecture '%s'%s: use sm_XX for CUBIN and PTX, or compute_XX for "
           "PTX only (this NVRTC supports %s)",
           req, from, list);
  CJ_CHECK(len < out_size, CUJIT_ERROR_INVALID_OPTION, "architecture '%s'%s is too long", req,
           from);
  return arch_refused(req, from, num, suffix, list);
}

/* CUJIT_ARCH, read at the first compile that needs it: a lookup in a large environment
 * costs as much as the rest of a memory-cache hit. */
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;
CJ_FORK_GUARDED(guard_arch_env, env_lock)
static char *arch_env;
static int arch_env_read;

static const char *arch_from_env(void) {
  const char *v;
  if (CJ_LIKELY(__atomic_load_n(&arch_env_read, __ATOMIC_ACQUIRE))) return arch_env;
  pthread_mutex_lock(&env_lock);
  v = cj_env("CUJIT_ARCH");
  if (!arch_env_read) {
    arch_env = v ? cj_strdup(v) : NULL;
    if (!v || arch_env) __atomic_store_n(&arch_env_read, 1, __ATOMIC_RELEASE);
  }
  v = arch_env_read ? arch_env : v; /* out of memory: read it again next time */
  pthread_mutex_unlock(&env_lock);
  return v;
}

/* "sm_<cc>" into out, without snprintf (see cj_join). */
static void sm_name(int cc, char *out, size_t out_size) {
  char digits[12], *d = digits + sizeof digits - 1;
  unsigned v = cc > 0 ? (unsigned)cc : 0;
  *d = '\0';
  do *--d = (char)('0' + v % 10);
  while ((v /= 10) != 0);
  cj_join(out, out_size, "sm_", d, NULL);
}

/* The target a compile would use, found without NVRTC (so that a cache hit never loads
 * it): an explicit target when it is well formed, or the device's "sm_XX". *pending says
 * what cj_request_prepare() still has to do once NVRTC is loaded: check an explicit
 * target against NVRTC's list (CJ_ARCH_CHECK, CJ_ARCH_CHECK_ENV when it came from
 * CUJIT_ARCH), or clamp the device's to the nearest NVRTC supports (CJ_ARCH_CLAMP). The
 * key made from the unclamped target is as good: the clamp depends on NVRTC, which the key
 * names too. */
static cujit_status arch_request(const char *requested, char *out, size_t out_size, int *pending) {
  int is_sm, num, cc, ordinal;
  char suffix;
  const char *from = "";
  *pending = 0;
  out[0] = '\0';
  if (!requested && (requested = arch_from_env()) != NULL) from = " (from CUJIT_ARCH)";
  if (requested) {
    if (parse_arch(requested, &is_sm, &num, &suffix) != 0 || strlen(requested) >= out_size)
      return explicit_arch(requested, from, out, out_size); /* says what is wrong */
    memcpy(out, requested, strlen(requested) + 1);
    *pending = from[0] ? CJ_ARCH_CHECK_ENV : CJ_ARCH_CHECK;
    return CUJIT_OK;
  }
  CJ_TRY(cj_device_env(&ordinal));                                /* it chooses the target */
  if (cj_device_cc_for_compile(&cc) != CUJIT_OK) return CUJIT_OK; /* no device: NVRTC's default */
  sm_name(cc, out, out_size);
  *pending = CJ_ARCH_CLAMP;
  return CUJIT_OK;
}

/* Finishes what arch_request() left pending, with NVRTC loaded. */
static cujit_status arch_finish(cj_request *r) {
  const int *archs;
  size_t n;
  int cc, clamped;
  cujit_status st = CUJIT_OK;
  char requested[sizeof r->arch];
  if (r->arch_pending == CJ_ARCH_CHECK || r->arch_pending == CJ_ARCH_CHECK_ENV) {
    memcpy(requested, r->arch, sizeof requested);
    st = explicit_arch(requested, r->arch_pending == CJ_ARCH_CHECK_ENV ? " (from CUJIT_ARCH)" : "",
                       r->arch, sizeof r->arch);
  } else {
    CJ_TRY(cj_nvrtc_archs(&archs, &n));
    cc = atoi(r->arch + 3);
    clamped = n ? cj_arch_clamp(cc, archs, n) : 0;
    if (clamped && clamped != cc)
      cj_info("device is sm_%d; this NVRTC's nearest target is sm_%d (PTX is produced too)", cc,
              clamped);
    if (clamped)
      snprintf(r->arch, sizeof r->arch, "sm_%d", clamped);
    else
      r->arch[0] = '\0';
  }
  if (st == CUJIT_OK) r->arch_pending = 0;
  return st;
}

cujit_status cj_arch_resolve(const char *requested, char *out, size_t out_size) {
  const int *archs;
  size_t n;
  int cc, ordinal;
  if (requested) return explicit_arch(requested, "", out, out_size);
  if ((requested = arch_from_env()) != NULL)
    return explicit_arch(requested, " (from CUJIT_ARCH)", out, out_size);
  out[0] = '\0';
  CJ_TRY(cj_device_env(&ordinal));                                /* it chooses the target */
  if (cj_device_cc_for_compile(&cc) != CUJIT_OK) return CUJIT_OK; /* no device: NVRTC's default */
  CJ_TRY(cj_nvrtc_archs(&archs, &n));
  if (n) snprintf(out, out_size, "sm_%d", cj_arch_clamp(cc, archs, n));
  if (n && cj_arch_clamp(cc, archs, n) != cc)
    cj_info("device is sm_%d; this NVRTC's nearest target is %s (PTX is produced too)", cc, out);
  return CUJIT_OK;
}

/* "-arch=X", "--gpu-architecture=X"; "-arch" alone has its value in the next
 * string, which cujit does not accept (value NULL). */
static int is_arch_option(const char *o, const char **value) {
  static const char *const names[] = {"-arch", "--gpu-architecture"};
  size_t i, len;
  for (i = 0; i < CJ_COUNT(names); i++) {
    len = strlen(names[i]);
    if (strncmp(o, names[i], len) == 0 && (o[len] == '\0' || o[len] == '=')) {
      *value = o[len] == '=' ? o + len + 1 : NULL;
      return 1;
    }
  }
  return 0;
}

static cujit_status check_list(const char *const *v, const char *what) {
  size_t i;
  for (i = 0; v && v[i]; i++)
    CJ_CHECK(v[i][0], CUJIT_ERROR_INVALID_OPTION, "%s %zu is an empty string", what, i);
  return CUJIT_OK;
}

static cujit_status check_options(const cujit_options *o, const char **arch) {
  size_t i;
  *arch = o->arch;
  CJ_TRY(check_list(o->include_dirs, "include directory"));
  CJ_TRY(check_list(o->defines, "define"));
  CJ_TRY(check_list(o->name_expressions, "name expression"));
  CJ_TRY(check_list(o->nvrtc_options, "NVRTC option"));
  for (i = 0; o->defines && o->defines[i]; i++)
    CJ_CHECK(isalpha((unsigned char)o->defines[i][0]) || o->defines[i][0] == '_',
             CUJIT_ERROR_INVALID_OPTION,
             "define '%s' must start with a macro name (\"NAME\" or \"NAME=VALUE\", "
             "without -D)",
             o->defines[i]);
  for (i = 0; o->nvrtc_options && o->nvrtc_options[i]; i++) {
    const char *opt = o->nvrtc_options[i], *value = NULL;
    CJ_CHECK(opt[0] == '-', CUJIT_ERROR_INVALID_OPTION,
             "NVRTC option '%s' does not start with '-'; pass each option as one "
             "string, e.g. \"-use_fast_math\" or \"-std=c++17\"",
             opt);
    CJ_CHECK(strcmp(opt, "-dlto") != 0 && strcmp(opt, "--dlink-time-opt") != 0,
             CUJIT_ERROR_INVALID_OPTION,
             "NVRTC option '%s' makes LTO-IR, which no device "
             "loads; to optimise across sources at link time, link them with "
             "cujit_module_link() and CUJIT_LINK_OPT_LTO, which compiles them with it",
             opt);
    if (is_arch_option(opt, &value)) {
      CJ_CHECK(value && *value, CUJIT_ERROR_INVALID_OPTION,
               "NVRTC option '%s' needs its value in the same string (\"-arch=sm_90\"), "
               "or use cujit_options.arch",
               opt);
      CJ_CHECK(!*arch || strcmp(*arch, value) == 0, CUJIT_ERROR_INVALID_OPTION,
               "two architectures given: arch '%s' and option '%s'; give one", *arch, opt);
      *arch = value;
    }
  }
  for (i = 0; o->headers && o->headers[i].name; i++)
    CJ_CHECK(o->headers[i].name[0] && o->headers[i].source, CUJIT_ERROR_INVALID_OPTION,
             "in-memory header %zu has an empty name or a NULL source", i);
  CJ_CHECK(o->time_limit_s >= 0, CUJIT_ERROR_INVALID_OPTION,
           "time_limit_s is %g; give the seconds a compile may take, or 0 for no limit",
           o->time_limit_s);
  return CUJIT_OK;
}

static int push_arg(cj_request *r, char *arg) {
  if (!arg) return -1;
  r->argv[r->argc++] = arg;
  return 0;
}

static char *join(const char *a, const char *b) {
  size_t la = strlen(a), lb = strlen(b);
  char *s = cj_malloc(la + lb + 1);
  if (!s) return NULL;
  memcpy(s, a, la);
  memcpy(s + la, b, lb + 1);
  return s;
}

static int has_user_option(const cj_request *r, const char *a, const char *b) {
  size_t i;
  for (i = 0; i < r->n_user_options; i++)
    if (strcmp(r->user_options[i], a) == 0 || strcmp(r->user_options[i], b) == 0) return 1;
  return 0;
}

size_t cj_request_include_count(const cj_request *r) {
  return r->n_include_dirs + (r->first_include_dir ? 1 : 0);
}

const char *cj_request_include_dir(const cj_request *r, size_t i) {
  if (r->first_include_dir) {
    if (i == 0) return r->first_include_dir;
    i--;
  }
  return r->include_dirs[i];
}

static int has_user_prefix(const cj_request *r, const char *a, const char *b) {
  size_t i;
  for (i = 0; i < r->n_user_options; i++)
    if (strncmp(r->user_options[i], a, strlen(a)) == 0 ||
        strncmp(r->user_options[i], b, strlen(b)) == 0)
      return 1;
  return 0;
}

/* NVRTC makes up some names at random (its documentation of -frandom-seed says so), so
 * that two compiles of one request could differ. Every compile gets the same seed unless
 * the caller gave one: compiling again gives the same bytes (which cujit_cache_verify
 * checks). One seed for all keeps the command line of sources sharing a header prefix
 * the same, so that they share a precompiled header (pch.c); the names NVRTC makes still
 * hold the program's name. NVRTC documents the option from version 13; an older one
 * compiles without it. */
static int push_seed(cj_request *r) {
  char opt[48];
  int major = 0, minor = 0;
  if (has_user_prefix(r, "-frandom-seed", "--frandom-seed") ||
      cj_nvrtc_version_cached(&major, &minor) != CUJIT_OK || major < 13)
    return 0;
  /* at most 32 bits: a larger number is not taken as a seed, and the names stay random */
  snprintf(opt, sizeof opt, "-frandom-seed=%lu", 0x63756a69ul /* "cuji" */);
  return push_arg(r, cj_strdup(opt));
}

/* argv: -arch, include dirs, defines, the caller's options (minus an arch), -no-cache,
 * -frandom-seed. */
static int build_argv(cj_request *r) {
  size_t i, n_inc = cj_request_include_count(r);
  size_t max = 5 + n_inc + r->n_defines + r->n_user_options + r->n_toolkit_dirs;
  const char *value;
  r->argv = cj_calloc(max, sizeof(char *));
  if (!r->argv) return -1;
  if (r->arch[0] && push_arg(r, join("-arch=", r->arch))) return -1;
  for (i = 0; i < n_inc; i++)
    if (push_arg(r, join("--include-path=", cj_request_include_dir(r, i)))) return -1;
  for (i = 0; i < r->n_defines; i++)
    if (push_arg(r, join("-D", r->defines[i]))) return -1;
  for (i = 0; i < r->n_user_options; i++)
    if (!is_arch_option(r->user_options[i], &value) && push_arg(r, cj_strdup(r->user_options[i])))
      return -1;
  for (i = 0; i < r->n_toolkit_dirs; i++)
    if (push_arg(r, join("--include-path=", r->toolkit_dirs[i]))) return -1;
  if ((r->link & CJ_LINK_RDC) && push_arg(r, cj_strdup("-rdc=true"))) return -1;
  if ((r->link & CJ_LINK_LTO) && push_arg(r, cj_strdup("-dlto"))) return -1;
  /* NVRTC's own cache is off unless asked for: a process's first compile is much faster
   * without it, and compiled modules are cached here anyway */
  if (!(r->flags & CUJIT_OPT_NVRTC_CACHE) && !has_user_option(r, "-no-cache", "--no-cache") &&
      push_arg(r, cj_strdup("-no-cache")))
    return -1;
  return push_seed(r);
}

static int has_header(const cj_request *r, const char *name) {
  size_t i;
  for (i = 0; i < r->n_headers; i++)
    if (strcmp(r->headers[i].name, name) == 0) return 1;
  return 0;
}

static void add_header(cj_request *r, const cujit_header *h) {
  r->header_names[r->n_nvrtc_headers] = h->name;
  r->header_sources[r->n_nvrtc_headers++] = h->source;
}

/* The caller's in-memory headers, then the built-in ones they do not replace. */
static int build_headers(cj_request *r) {
  size_t i, n_builtin = 0;
  const cujit_header *builtin = NULL;
  if (r->n_toolkit_dirs) builtin = cj_toolkit_builtin_headers(&n_builtin);
  r->n_nvrtc_headers = 0;
  if (!r->n_headers && !n_builtin) return 0;
  r->header_names = cj_calloc(r->n_headers + n_builtin, sizeof(char *));
  r->header_sources = cj_calloc(r->n_headers + n_builtin, sizeof(char *));
  if (!r->header_names || !r->header_sources) return -1;
  for (i = 0; i < r->n_headers; i++) add_header(r, &r->headers[i]);
  for (i = 0; i < n_builtin; i++)
    if (!has_header(r, builtin[i].name)) add_header(r, &builtin[i]);
  return 0;
}

static size_t count(const char *const *v) {
  size_t n = 0;
  while (v && v[n]) n++;
  return n;
}

/* The options' first version ended with flags; what a size of 0 stands for. */
#define OPTIONS_V1 CJ_SIZE_V1(cujit_options, flags)

cujit_status cj_request_init(cj_request *r, const char *source, const char *name,
                             const cujit_options *user, const char *first_include_dir) {
  cujit_options own, *opts = &own;
  const char *arch = NULL;
  memset(r, 0, sizeof *r);
  CJ_CHECK(source && source[0], CUJIT_ERROR_INVALID_SOURCE,
           "the source of '%s' is %s; pass CUDA C text", name ? name : "source.cu",
           source ? "empty" : "NULL");
  CJ_TRY(cj_sized_in("compiling", "cujit_options", user, OPTIONS_V1, &own, sizeof own));
  CJ_TRY(check_options(opts, &arch));
  CJ_TRY(arch_request(arch, r->arch, sizeof r->arch, &r->arch_pending));
  r->source = source;
  r->source_len = strlen(source);
  r->name = name ? name : "source.cu";
  r->flags = opts->flags;
  r->time_limit_s = opts->time_limit_s;
  r->cancel = opts->cancel;
  r->cancel_user = opts->cancel_user;
  r->first_include_dir = first_include_dir;
  r->include_dirs = opts->include_dirs;
  r->n_include_dirs = count(opts->include_dirs);
  r->defines = opts->defines;
  r->n_defines = count(opts->defines);
  r->user_options = opts->nvrtc_options;
  r->n_user_options = count(opts->nvrtc_options);
  r->name_exprs = opts->name_expressions;
  r->n_name_exprs = count(opts->name_expressions);
  r->headers = opts->headers;
  while (r->headers && r->headers[r->n_headers].name) r->n_headers++;
  r->toolkit = !(r->flags & CUJIT_OPT_NO_TOOLKIT_INCLUDES); /* found when compiling */
  return CUJIT_OK;
}

cujit_status cj_request_prepare(cj_request *r) {
  cujit_status st;
  if (r->argv) return CUJIT_OK;
  if (r->arch_pending && (st = arch_finish(r)) != CUJIT_OK) return st;
  if (r->toolkit) r->toolkit_dirs = cj_toolkit_include_dirs(&r->n_toolkit_dirs);
  if (build_argv(r) != 0 || build_headers(r) != 0) {
    cj_strv_free(r->argv, r->argc);
    cj_free(r->header_names);
    cj_free(r->header_sources);
    r->argv = NULL;
    r->argc = 0;
    r->header_names = r->header_sources = NULL;
    return cj_fail_oom("preparing the compile options");
  }
  return CUJIT_OK;
}

void cj_request_free(cj_request *r) {
  cj_strv_free(r->argv, r->argc);
  cj_free(r->header_names);
  cj_free(r->header_sources);
  memset(r, 0, sizeof *r);
}
