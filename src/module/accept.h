/* accept.h - what a kernel parameter takes (accept.c): the one rule of which arguments a
 * parameter takes, for launches, typed calls and the generators (accept.c's first comment
 * states it). A parameter's accept bits hold bit t for each argument tag t (cujit_arg.type)
 * it takes as it is, bytes unchanged: the tags below CUJIT_TYPE_PLAIN_ are arguments made
 * by the constructors, those from it up plain values. cj_takes() is the one test of them,
 * as cheap as a launch's hot path needs; a number a parameter does not take as it is goes
 * to cj_convert(). */
#ifndef CUJIT_ACCEPT_H
#define CUJIT_ACCEPT_H

#include "common/common.h"

/* What a parameter whose type is unknown, or is no scalar or pointer, takes: any argument
 * made by a constructor (its size is checked), and no plain value. */
#define CJ_ACCEPT_UNKNOWN 0xFFFFFFFFull
/* The accept bits of a parameter of cujit_type `want` (CUJIT_TYPE_BYTES for one that is no
 * scalar or pointer). */
uint64_t cj_accept_of(int want);
/* Whether a parameter of accept bits `accept` takes an argument of tag `tag` as it is. */
static inline CJ_ALWAYS_INLINE int cj_takes(uint64_t accept, int tag) {
  return (unsigned)tag < 64 && (accept >> tag & 1u);
}
/* Room for a number as cj_convert() writes it in a message ("-1", "1e+300", "(1, 2)"). */
#define CJ_VALUE_TEXT 64
/* Converts the number argument `a` holds (bool, an integer, float, double or complex, made
 * by a constructor or a plain value) to cujit_type `to` (bool, an integer, a floating or
 * complex type) as C converts an argument to a prototyped parameter: integers and reals
 * within the type's range, reals rounded to nearest (ties to even). Writes to's bytes into
 * out[0..16), the rest 0. Returns NULL; or, where the value would not keep its meaning (C
 * would wrap, truncate, drop an imaginary part or leave it undefined) or `a` holds no
 * number, why it is refused, a static string, with the value as text in `value` ("" when
 * it holds no number). Pure. */
const char *cj_convert(int to, const cujit_arg *a, unsigned char out[16],
                       char value[CJ_VALUE_TEXT]);

#endif
