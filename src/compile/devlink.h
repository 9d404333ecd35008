/* devlink.h - the device link, with nvJitLink: relocatable CUBINs, PTX, fatbins, LTO-IR and
 * libraries into one CUBIN for one architecture. The cache layer above decides when. */
#ifndef CUJIT_COMPILE_DEVLINK_H
#define CUJIT_COMPILE_DEVLINK_H

#include "compile/compile.h"
#include "dl/nvjitlink.h"

/* One input of a link: bytes (borrowed) of an nvJitLink input type. */
typedef struct cj_link_in {
  nvJitLinkInputType type;
  const char *name; /* in messages and nvJitLink's log */
  const void *data;
  size_t size;
} cj_link_in;

/* What a link is asked to do besides its inputs. */
typedef struct cj_link_spec {
  const char *arch;           /* "sm_90": the CUBIN's target */
  int lto;                    /* link-time optimisation (-lto) */
  const char *const *options; /* the caller's nvJitLink options, as given */
  size_t n_options;
  const char *name; /* the program's name, in messages */
} cj_link_spec;

/* Links the inputs into an image (refs 1): the CUBIN, no PTX (""), nvJitLink's info log,
 * `linked` set. CUJIT_ERROR_LINK with nvJitLink's
 * error log naming the input refused or the link that failed (undefined or duplicate
 * symbols, architectures that do not match); CUJIT_ERROR_INVALID_OPTION for an option
 * nvJitLink refuses; CUJIT_ERROR_NO_NVJITLINK; CUJIT_ERROR_OUT_OF_MEMORY. */
cujit_status cj_link_run(const cj_link_spec *spec, const cj_link_in *in, size_t n, cj_image **out);

/* The readable name of an input type ("a CUBIN", "LTO-IR"...). */
const char *cj_link_type_name(nvJitLinkInputType t);
/* nvJitLink's version (loaded first, by the caller), asked in flight (see devlink.c); 0.0
 * when it cannot say. */
void cj_link_version(unsigned *major, unsigned *minor);

/* The toolkit's libcudadevrt.a (the device runtime, for kernels that launch kernels):
 * beside the nvJitLink in use, beside the NVRTC in use, then where NVRTC is looked for.
 * Static storage, found once; "" when none was found, with where it looked in *looked. */
const char *cj_cudadevrt_path(const char **looked);

#endif
