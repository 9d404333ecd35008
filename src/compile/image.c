/* image.c - compiled images, shared by reference count. */
#include <stdio.h>
#include <string.h>

#include "compile/compile.h"
#include "compile/symbols.h"

cj_image *cj_image_new(void) {
  cj_image *im = cj_calloc(1, sizeof *im);
  if (im) im->refs = 1;
  return im;
}

cj_image *cj_image_ref(cj_image *im) {
  if (im) __atomic_add_fetch(&im->refs, 1, __ATOMIC_RELAXED);
  return im;
}

void cj_image_unref(cj_image *im) {
  if (!im || __atomic_sub_fetch(&im->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
  if (im->block) {
    cj_free(im->block);
  } else {
    cj_free(im->ptx);
    cj_free(im->cubin);
    cj_free(im->log);
  }
  cj_free(im->fatbin);
  cj_free(im->index);
  cj_free(im->source);
  cj_strv_free(im->name_exprs, im->n_names);
  cj_strv_free(im->lowered, im->n_names);
  cj_free(im);
}

void cj_image_arch_from_ptx(cj_image *im) {
  const char *t = im->ptx ? strstr(im->ptx, "\n.target ") : NULL;
  char target[24];
  if (!t || sscanf(t, "\n.target sm_%23[0-9a-z]", target) != 1) return;
  snprintf(im->arch, sizeof im->arch, "compute_%s", target);
}

int cj_image_is_ltoir(const cj_image *im) {
  return cj_image_bytes_are_ltoir(im->cubin, im->cubin_size);
}

int cj_image_bytes_are_ltoir(const void *data, size_t size) {
  static const unsigned char magic[4] = {0xed, 0x43, 0x4e, 0x7f}; /* 0x7f4e43ed */
  return data && size >= sizeof magic && memcmp(data, magic, sizeof magic) == 0;
}

size_t cj_image_bytes(const cj_image *im) {
  size_t n = sizeof *im + im->fatbin_size, i;
  n += im->block ? im->block_size : im->ptx_size + im->cubin_size + strlen(im->log);
  for (i = 0; i < im->n_names; i++) n += strlen(im->name_exprs[i]) + strlen(im->lowered[i]) + 2;
  return n;
}

void cj_image_index(cj_image *im) {
  if (!im->index && !im->prebuilt && !im->linked && im->ptx && im->ptx[0])
    im->index = cj_ptx_index_build(im->ptx);
}
