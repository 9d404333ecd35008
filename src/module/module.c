/* module.c - modules: their handles, made and destroyed, and what they hold (their
 * results, and how each device loaded them). Modules from source are source.c's, from
 * prebuilt code loadimage.c's. */
#include <pthread.h>
#include <string.h>

#include "module/function.h"

/* ---- handles ----
 *
 * Every module is in a table of handles that never alias (common.h) from when it is made
 * until it is destroyed, so that a destroyed module's handle is refused, also when a new
 * module has taken its memory, and a second destroy frees nothing. Kernels point to their
 * module directly: a launch pays for no lookup. */

/* The table and its lock as one initialised object, which lies with the library's other
 * initialised data, on a page a warm start writes anyway: the lock alone would lie in zeroed
 * data, on a page that a fresh process would fault in twice (read first, then written). */
static struct {
  cj_handles table;
  pthread_mutex_t lock;
} modules = {CJ_HANDLES_INIT(CJ_HANDLE_TAG(0x4D)), PTHREAD_MUTEX_INITIALIZER};
CJ_FORK_GUARDED(guard_modules, modules.lock)

cj_module *cj_module_find(const cujit_module *h) {
  cj_module *m;
  pthread_mutex_lock(&modules.lock);
  m = cj_handle_get(&modules.table, (uintptr_t)h);
  pthread_mutex_unlock(&modules.lock);
  return m;
}

cujit_status cj_module_get(const cujit_module *h, const char *fn, cj_module **m) {
  CJ_CHECK(h, CUJIT_ERROR_INVALID_VALUE, "%s: mod is NULL", fn);
  CJ_CHECK((*m = cj_module_find(h)) != NULL, CUJIT_ERROR_INVALID_VALUE,
           "%s: mod is not a live module (destroyed already, or never made by cujit)", fn);
  return CUJIT_OK;
}

/* One allocation holds the module, its name and what the caller keeps with it. */
cujit_status cj_module_new_ex(cj_image *im, const char *name, size_t extra, void **extra_at,
                              cj_module **out) {
  size_t len = strlen(name), at = (sizeof(cj_module) + len + 1 + 15) & ~(size_t)15;
  cj_module *m = cj_calloc(1, at + extra);
  int full = 0;
  if (!m) return cj_fail_oom("creating the module");
  pthread_mutex_lock(&modules.lock);
  if (!(m->handle = cj_handle_add(&modules.table, m))) full = cj_handles_full(&modules.table);
  pthread_mutex_unlock(&modules.lock);
  if (!m->handle) {
    cj_free(m);
    CJ_CHECK(!full, CUJIT_ERROR_OUT_OF_MEMORY,
             "creating the module: %zu modules are live, the "
             "most cujit keeps at once; destroy some",
             (size_t)1 << CJ_HANDLE_SLOT_BITS);
    return cj_fail_oom("creating the module");
  }
  if (extra_at) *extra_at = (char *)m + at;
  m->name = (char *)(m + 1);
  memcpy(m->name, name, len + 1);
  m->image = im;
  m->source = im->source;
  pthread_mutex_init(&m->lock, NULL);
  pthread_mutex_init(&m->probe_lock, NULL);
  *out = m;
  return CUJIT_OK;
}

cujit_status cj_module_new(cj_image *im, const char *name, cj_module **out) {
  return cj_module_new_ex(im, name, 0, NULL, out);
}

/* Frees what the module holds, once neither its handle nor a graph needs it. */
static void module_free(cj_module *m) {
  cj_module_device_free(m);
  cj_module_probe_free(m);
  cj_image_unref(m->image);
  pthread_mutex_destroy(&m->lock);
  pthread_mutex_destroy(&m->probe_lock);
  cj_free(m);
}

void cujit_module_destroy(cujit_module *h) {
  cj_module *m;
  int held = 0;
  if (!h) return;
  pthread_mutex_lock(&modules.lock);
  if ((m = cj_handle_remove(&modules.table, (uintptr_t)h)) != NULL) m->doomed = held = m->graphs;
  pthread_mutex_unlock(&modules.lock);
  if (!m) {
    /* destroyed already, or not a module: nothing to free, nothing of it read */
    cj_fail(CUJIT_ERROR_INVALID_VALUE,
            "cujit_module_destroy: mod is not a live module "
            "(destroyed already, or never made by cujit); nothing was freed");
    return;
  }
  /* held: its kernels stay loaded for the graphs that launch them; the last frees it */
  if (!held) module_free(m);
}

void cj_module_hold(cj_module *m) {
  pthread_mutex_lock(&modules.lock);
  m->graphs++;
  pthread_mutex_unlock(&modules.lock);
}

void cj_module_unhold(cj_module *m) {
  int last;
  pthread_mutex_lock(&modules.lock);
  last = --m->graphs == 0 && m->doomed;
  pthread_mutex_unlock(&modules.lock);
  if (last) module_free(m);
}

void cj_module_free(cj_module *m) {
  if (m) cujit_module_destroy(cj_module_handle(m));
}

/* The results below read a module's image, which never changes: a destroyed (or NULL)
 * module gives what NULL gives. */

const char *cujit_module_ptx(const cujit_module *h, size_t *size) {
  const cj_module *m = cj_module_find(h);
  if (size) *size = m ? m->image->ptx_size : 0;
  return m ? m->image->ptx : NULL;
}

const void *cujit_module_cubin(const cujit_module *h, size_t *size) {
  const cj_module *m = cj_module_find(h);
  if (size) *size = m ? m->image->cubin_size : 0;
  return m ? m->image->cubin : NULL;
}

const char *cujit_module_log(const cujit_module *h) {
  const cj_module *m = cj_module_find(h);
  return m ? m->image->log : NULL;
}

const char *cujit_module_arch(const cujit_module *h) {
  const cj_module *m = cj_module_find(h);
  return m ? m->image->arch : NULL;
}

const char *cujit_module_name(const cujit_module *h) {
  const cj_module *m = cj_module_find(h);
  return m ? m->name : NULL;
}

size_t cujit_module_name_expression_count(const cujit_module *h) {
  const cj_module *m = cj_module_find(h);
  return m ? m->image->n_names : 0;
}

const char *cujit_module_name_expression(const cujit_module *h, size_t i, const char **lowered) {
  const cj_module *m = cj_module_find(h);
  if (!m || i >= m->image->n_names) return NULL;
  if (lowered) *lowered = m->image->lowered[i];
  return m->image->name_exprs[i];
}

cujit_status cujit_module_get_lowered_name(const cujit_module *h, const char *expr,
                                           const char **lowered) {
  cj_module *m;
  size_t i;
  CJ_TRY(cj_module_get(h, "cujit_module_get_lowered_name", &m));
  CJ_CHECK(expr && lowered, CUJIT_ERROR_INVALID_VALUE,
           "cujit_module_get_lowered_name: NULL argument");
  for (i = 0; i < m->image->n_names; i++) {
    if (strcmp(m->image->name_exprs[i], expr) == 0) {
      *lowered = m->image->lowered[i];
      return CUJIT_OK;
    }
  }
  return cj_fail(CUJIT_ERROR_NOT_FOUND,
                 "'%s' is not a name expression of module '%s'; add it to "
                 "cujit_options.name_expressions before compiling",
                 expr, m->name);
}

const char *cujit_module_loaded_as(cujit_module *h, int device) {
  cj_module *m = cj_module_find(h);
  const char *what = NULL;
  if (!m || device < 0 || device >= CJ_RECORDED_DEVICES) return NULL;
  pthread_mutex_lock(&m->lock);
  if (m->dev && m->dev->on_dev[device]) what = m->dev->what[m->dev->on_dev[device] - 1];
  pthread_mutex_unlock(&m->lock);
  return what;
}
