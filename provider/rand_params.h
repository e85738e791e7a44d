/* SPDX-License-Identifier: Apache-2.0 */
/*
 * rand_params.c's answers in a caller's OSSL_PARAM, shared with prov.c,
 * and the X-macro columns both files build their parameter tables with.
 */
#ifndef CHACHARNG_RAND_PARAMS_H
#define CHACHARNG_RAND_PARAMS_H

#include <openssl/core.h>

#include "base.h"

/*
 * Answer |p| with the string |s|: a UTF8_PTR gets the pointer, a
 * UTF8_STRING a copy with its NUL, NULL data only the length.  return_size
 * is the length without the NUL, or for a buffer without room for the NUL
 * (refused) the length with it.  Returns 0 for any other type and for that
 * buffer.
 */
int chacharng_param_set_utf8(OSSL_PARAM *p, const char *s);
/*
 * The string of parameter |p| as |*s| and its length: a UTF8_STRING is its
 * data_size bytes, or fewer up to a NUL (no NUL is needed); a UTF8_PTR
 * points to data_size bytes read the same way, or with data_size 0 to a
 * NUL-terminated string, of which at most |ptr_bound| bytes are read.
 * Nothing past those bounds is read.  Returns 0, raising nothing, for any
 * other type and for NULL data or a NULL pointer.
 */
int chacharng_param_text(const OSSL_PARAM *p, size_t ptr_bound, const char **s,
                         size_t *len);
/*
 * Raise the error for an answer |p| could not take, |def| being the key's
 * definition in the gettable list; returns 0.
 */
int chacharng_param_refused(const CHACHARNG_PROV_CTX *prov, const OSSL_PARAM *p,
                            const OSSL_PARAM *def);

/*
 * The parameter tables (prov.c, rand_params.c) are X-macro lists of
 * (definition, handler) pairs; these two pick one column, so that the
 * OSSL_PARAM array a caller sees and the handlers that serve it come from
 * the same list and cannot drift apart.
 */
#define CHACHARNG_PARAM_DEFINITION(definition, handler) definition,
#define CHACHARNG_PARAM_HANDLER(definition, handler) handler,

#endif
