/* nvtx.h - NVTX itself, under the ranges of common.h's CJ_TRACE (trace.c): nvtx.c is the one
 * file that includes NVTX 3's header, and it depends on nothing else of the library, so
 * that closing a range (inline, in every file that opens one) calls into no file that
 * reads the environment or the log. */
#ifndef CUJIT_NVTX_H
#define CUJIT_NVTX_H

/* Makes the domain "cujit", which starts NVTX (it loads the tool that
 * NVTX_INJECTION64_PATH names): 1 when a tool is attached (the domain came back), else 0,
 * and every call below then does nothing. Called once, before any range (trace.c). */
int cj_nvtx_attach(void);
/* Opens a range named `text` (the tool copies it). */
void cj_nvtx_push(const char *text);
/* Opens a range of a fixed name, registered with the tool at its first use: *registered is
 * the tool's handle for it (static storage, shared by every thread; NULL until then). */
void cj_nvtx_push_named(const char *text, void **registered);
/* Closes the range this thread opened last. */
void cj_nvtx_pop(void);

#endif
