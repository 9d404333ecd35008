/* nvtxrec.c - an NVTX tool of the tests' own, so that CI can check the ranges cujit emits
 * without Nsight. NVTX 3 (the header-only library cujit is built with) loads it when a
 * program names it in NVTX_INJECTION64_PATH, and calls InitializeInjectionNvtx2 with its
 * export table; the tool fills the table's slots for the calls it handles, and NVTX makes
 * every other call do nothing. It records, in memory:
 *   - every range pushed, in a domain (nvtxDomainRangePushEx) or outside one
 *     (nvtxRangePushA/Ex): its name (the text, or the registered string's), its domain, the
 *     range open on the same thread and domain when it was pushed, and the thread;
 *   - every pop, which closes the innermost open range of its thread and domain;
 *   - domains created and strings registered (each handle is the tool's own object);
 *   - problems: a pop with nothing open, a range deeper than 64, anything outside a domain,
 *     a mark, a start/end range (cujit emits none of these).
 * The program reads the records back through nvtxrec.h. Never shipped. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NVTX_NO_IMPL /* a tool: the types and the callback IDs, not the implementation */
#include <nvtx3/nvToolsExt.h>

#include "nvtxrec.h"

#define EXPORT __attribute__((visibility("default")))

/* What NVTX calls, and what the program reads through nvtxrec.h. */
EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);
EXPORT size_t nvtxrec_count(void);
EXPORT int nvtxrec_get(size_t i, nvtxrec_range *out);
EXPORT void nvtxrec_clear(void);
EXPORT unsigned long nvtxrec_problems(char *buf, size_t size);
EXPORT unsigned long nvtxrec_domains(void);
EXPORT unsigned long nvtxrec_strings(void);

struct nvtxDomainRegistration_st {
  char name[32];
};
struct nvtxStringRegistration_st {
  char text[224];
};

typedef struct record {
  nvtxrec_range r;
  const void *domain; /* the handle it was pushed in; NULL: outside a domain */
} record;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static record *records;
static size_t n_records, cap_records;
static unsigned long n_domains, n_strings, n_problems;
static char problem_text[4096];

enum { DEEPEST = 64 };
/* The calling thread's open ranges, innermost last: indexes into records (which a clear
 * makes stale: an index past n_records, or before the clear, is dropped at its pop). */
static _Thread_local size_t open_ranges[DEEPEST];
static _Thread_local const void *open_domains[DEEPEST];
static _Thread_local unsigned long open_epochs[DEEPEST];
static _Thread_local int n_open;
static unsigned long epoch; /* bumped by each clear */

static void problem(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void problem(const char *fmt, ...) { /* mu held */
  size_t used = strlen(problem_text);
  va_list ap;
  n_problems++;
  if (used + 2 >= sizeof problem_text) return;
  va_start(ap, fmt);
  vsnprintf(problem_text + used, sizeof problem_text - used - 1, fmt, ap);
  va_end(ap);
  used = strlen(problem_text);
  problem_text[used] = '\n';
  problem_text[used + 1] = '\0';
}

static const char *message_of(const nvtxEventAttributes_t *a, int *registered) {
  *registered = 0;
  if (!a) return NULL;
  if (a->messageType == NVTX_MESSAGE_TYPE_ASCII) return a->message.ascii;
  if (a->messageType == NVTX_MESSAGE_TYPE_REGISTERED && a->message.registered) {
    *registered = 1;
    return a->message.registered->text;
  }
  return NULL;
}

static void push(const void *domain, const char *name, int registered) {
  record *r;
  int i;
  pthread_mutex_lock(&mu);
  if (!name) {
    problem("a range with no ASCII or registered name");
    name = "";
  }
  if (n_open == DEEPEST) {
    problem("a range deeper than %d: '%s'", DEEPEST, name);
    pthread_mutex_unlock(&mu);
    return;
  }
  if (n_records == cap_records) {
    size_t cap = cap_records ? 2 * cap_records : 1024;
    record *grown = realloc(records, cap * sizeof *records);
    if (!grown) abort();
    records = grown;
    cap_records = cap;
  }
  r = &records[n_records];
  memset(r, 0, sizeof *r);
  snprintf(r->r.name, sizeof r->r.name, "%s", name);
  snprintf(r->r.domain, sizeof r->r.domain, "%s",
           domain ? ((const struct nvtxDomainRegistration_st *)domain)->name : "");
  r->r.registered = registered;
  r->r.parent = -1;
  r->r.thread = (unsigned long)syscall(SYS_gettid);
  r->domain = domain;
  for (i = n_open - 1; i >= 0; i--)
    if (open_domains[i] == domain) {
      if (open_epochs[i] == epoch) {
        r->r.parent = (int)open_ranges[i];
        r->r.depth = records[open_ranges[i]].r.depth + 1;
      }
      break;
    }
  open_ranges[n_open] = n_records;
  open_domains[n_open] = domain;
  open_epochs[n_open] = epoch;
  n_open++;
  n_records++;
  pthread_mutex_unlock(&mu);
}

static int pop(const void *domain) {
  int i, j;
  pthread_mutex_lock(&mu);
  for (i = n_open - 1; i >= 0 && open_domains[i] != domain; i--) continue;
  if (i < 0) {
    problem("a pop with no range open on thread %lu in domain '%s'",
            (unsigned long)syscall(SYS_gettid),
            domain ? ((const struct nvtxDomainRegistration_st *)domain)->name : "");
    pthread_mutex_unlock(&mu);
    return -1;
  }
  if (open_epochs[i] == epoch) records[open_ranges[i]].r.closed = 1;
  for (j = i; j + 1 < n_open; j++) {
    open_ranges[j] = open_ranges[j + 1];
    open_domains[j] = open_domains[j + 1];
    open_epochs[j] = open_epochs[j + 1];
  }
  n_open--;
  pthread_mutex_unlock(&mu);
  return n_open;
}

static void unexpected(const char *what, const char *name) {
  pthread_mutex_lock(&mu);
  problem("%s: '%s'", what, name ? name : "");
  pthread_mutex_unlock(&mu);
}

/* ---- the calls, as NVTX hands them over ---- */

static int NVTX_API domain_push(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  int registered;
  const char *name = message_of(a, &registered);
  if (!d) unexpected("a domain range in the global domain", name);
  push(d, name, registered);
  return 0;
}

static int NVTX_API domain_pop(nvtxDomainHandle_t d) { return pop(d); }

static nvtxDomainHandle_t NVTX_API domain_create(const char *name) {
  struct nvtxDomainRegistration_st *d = calloc(1, sizeof *d);
  if (!d) return NULL;
  snprintf(d->name, sizeof d->name, "%s", name ? name : "");
  pthread_mutex_lock(&mu);
  n_domains++;
  pthread_mutex_unlock(&mu);
  return d; /* kept for the life of the process, as the program may use it until its end */
}

static void NVTX_API domain_destroy(nvtxDomainHandle_t d) { (void)d; }

static nvtxStringHandle_t NVTX_API register_string(nvtxDomainHandle_t d, const char *s) {
  struct nvtxStringRegistration_st *r = calloc(1, sizeof *r);
  (void)d;
  if (!r) return NULL;
  snprintf(r->text, sizeof r->text, "%s", s ? s : "");
  pthread_mutex_lock(&mu);
  n_strings++;
  pthread_mutex_unlock(&mu);
  return r;
}

static void NVTX_API domain_mark(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  int registered;
  (void)d;
  unexpected("a mark", message_of(a, &registered));
}

static nvtxRangeId_t NVTX_API domain_start(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a) {
  int registered;
  (void)d;
  unexpected("a start/end range", message_of(a, &registered));
  return 0;
}

static void NVTX_API domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id) { (void)d, (void)id; }

static int NVTX_API plain_push(const char *name) {
  unexpected("a range outside a domain", name);
  push(NULL, name, 0);
  return 0;
}

static int NVTX_API plain_push_ex(const nvtxEventAttributes_t *a) {
  int registered;
  const char *name = message_of(a, &registered);
  unexpected("a range outside a domain", name);
  push(NULL, name, registered);
  return 0;
}

static int NVTX_API plain_pop(void) { return pop(NULL); }

static void NVTX_API plain_mark(const char *name) { unexpected("a mark", name); }

/* ---- attaching ---- */

static void fill(NvtxFunctionTable t, unsigned size, unsigned id, NvtxFunctionPointer fn) {
  if (id <= size && t[id]) *t[id] = fn;
}

EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const NvtxExportTableCallbacks *cb = get ? get(NVTX_ETID_CALLBACKS) : NULL;
  const NvtxExportTableVersionInfo *v = get ? get(NVTX_ETID_VERSIONINFO) : NULL;
  NvtxFunctionTable core = NULL, core2 = NULL;
  unsigned n_core = 0, n_core2 = 0;
  if (!cb || !cb->GetModuleFunctionTable ||
      !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &n_core) ||
      !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &n_core2) || !core || !core2)
    return 0;
  if (v && v->SetInjectionNvtxVersion) v->SetInjectionNvtxVersion(NVTX_VERSION);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainRangePushEx, (NvtxFunctionPointer)domain_push);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainRangePop, (NvtxFunctionPointer)domain_pop);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainCreateA, (NvtxFunctionPointer)domain_create);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainDestroy, (NvtxFunctionPointer)domain_destroy);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainRegisterStringA, (NvtxFunctionPointer)register_string);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainMarkEx, (NvtxFunctionPointer)domain_mark);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainRangeStartEx, (NvtxFunctionPointer)domain_start);
  fill(core2, n_core2, NVTX_CBID_CORE2_DomainRangeEnd, (NvtxFunctionPointer)domain_end);
  fill(core, n_core, NVTX_CBID_CORE_RangePushA, (NvtxFunctionPointer)plain_push);
  fill(core, n_core, NVTX_CBID_CORE_RangePushEx, (NvtxFunctionPointer)plain_push_ex);
  fill(core, n_core, NVTX_CBID_CORE_RangePop, (NvtxFunctionPointer)plain_pop);
  fill(core, n_core, NVTX_CBID_CORE_MarkA, (NvtxFunctionPointer)plain_mark);
  return 1;
}

/* ---- what the program reads (nvtxrec.h) ---- */

EXPORT size_t nvtxrec_count(void) {
  size_t n;
  pthread_mutex_lock(&mu);
  n = n_records;
  pthread_mutex_unlock(&mu);
  return n;
}

EXPORT int nvtxrec_get(size_t i, nvtxrec_range *out) {
  int rc = -1;
  pthread_mutex_lock(&mu);
  if (i < n_records) {
    *out = records[i].r;
    rc = 0;
  }
  pthread_mutex_unlock(&mu);
  return rc;
}

EXPORT void nvtxrec_clear(void) {
  pthread_mutex_lock(&mu);
  n_records = 0;
  epoch++;
  pthread_mutex_unlock(&mu);
}

EXPORT unsigned long nvtxrec_problems(char *buf, size_t size) {
  unsigned long n;
  pthread_mutex_lock(&mu);
  n = n_problems;
  if (buf && size) snprintf(buf, size, "%s", problem_text);
  pthread_mutex_unlock(&mu);
  return n;
}

EXPORT unsigned long nvtxrec_domains(void) {
  unsigned long n;
  pthread_mutex_lock(&mu);
  n = n_domains;
  pthread_mutex_unlock(&mu);
  return n;
}

EXPORT unsigned long nvtxrec_strings(void) {
  unsigned long n;
  pthread_mutex_lock(&mu);
  n = n_strings;
  pthread_mutex_unlock(&mu);
  return n;
}
