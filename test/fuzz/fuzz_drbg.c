/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: random sequences of EVP_RAND calls on CHACHA20-DRBG
 * contexts (new, instantiate, generate, reseed, uninstantiate, set/get
 * params, enable_locking, verify_zeroization, free) with random sizes,
 * strengths, inputs, parameter types and parent chains (TEST-RAND parents
 * with chosen seeds and strengths, chacharng parents several deep), in two
 * library contexts: one with the core's entropy upcall, one where the
 * upcall is removed so the provider falls back to getrandom(2).
 *
 * A shadow model of every context checks, after each call:
 *  - no success without output: every 16-byte chunk of a successful
 *    generate was written (none still holds the fill pattern), and a failed
 *    generate of at most max_request bytes wrote nothing;
 *  - outputs never repeat: 16-byte chunks are remembered; a context seeded
 *    (ultimately) by OS entropy must never produce one seen before from
 *    any such context, and one with a deterministic TEST-RAND ancestor
 *    never within one instantiation;
 *  - the state machine: calls that must fail (bad arguments, wrong state)
 *    fail with an error and change nothing, calls whose entropy source is
 *    known to be good succeed, failures leave the error state, uninstantiate
 *    zeroizes, parameters read back as set, the reseed counter only grows.
 *
 * Parameters come in every shape, well formed or not (NULL data or
 * pointers, data_size 0 or odd, wrong types, strings without a NUL in heap
 * blocks of their exact size, strings cut short by data_size), given to
 * set_params and to instantiate: each must be accepted or refused as the
 * model says, and a refused array changes nothing.  Requests for values
 * come in every shape too (wrong types, buffers too small or without room
 * for the NUL, size queries, near-miss keys, key buffers reused for other
 * keys): an answer depends only on the key's text, fits its buffer or
 * fails with an error, and never writes past data_size.
 *
 * The provider is linked in and registered with OSSL_PROVIDER_add_builtin.
 * Input format: a byte stream read front to back; each operation takes an
 * opcode byte and then what it needs.  Build and run: `make fuzz`.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/core.h>
#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "chacha.h"
#include "provutil.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
OSSL_provider_init_fn OSSL_provider_init;

#define MAX_REQUEST ((size_t)1 << 20)
#define INPUT_LIMIT 65536
#define MAX_SLOTS 8
#define MAX_RECORDS 64
#define MAX_OPS 96
#define BYTE_BUDGET ((size_t)6 << 20) /* output per input, for speed */
#define FILL 0xa5
#define CHUNK 16

#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "invariant broken (%s:%d): ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
            ERR_print_errors_fp(stderr);                                       \
            abort();                                                           \
        }                                                                      \
    } while (0)

/* ---------------------------------------------------------------------- */
/* Input reader                                                           */
/* ---------------------------------------------------------------------- */

struct rd {
    const uint8_t *p;
    size_t n;
};

static unsigned int u8(struct rd *r)
{
    if (r->n == 0)
        return 0;
    r->n--;
    return *r->p++;
}

static unsigned int u16(struct rd *r)
{
    return u8(r) | u8(r) << 8;
}

static uint32_t u32(struct rd *r)
{
    return (uint32_t)u16(r) | (uint32_t)u16(r) << 16;
}

/* Up to |max| bytes straight from the input; returns how many. */
static size_t take(struct rd *r, uint8_t *out, size_t max)
{
    size_t n = u8(r);

    if (n > max)
        n = max;
    if (n > r->n)
        n = r->n;
    memcpy(out, r->p, n);
    r->p += n;
    r->n -= n;
    return n;
}

/* ---------------------------------------------------------------------- */
/* Library contexts                                                       */
/* ---------------------------------------------------------------------- */

static struct pu_env libs[2]; /* [0]: core upcall, [1]: getrandom only */
static const char *default_impl;

#ifndef OSSL_FUNC_GET_USER_ENTROPY
#define OSSL_FUNC_GET_USER_ENTROPY 98
#endif

/* The provider's init with the entropy upcalls taken out of |in|. */
static int init_without_upcall(const OSSL_CORE_HANDLE *handle,
                               const OSSL_DISPATCH *in,
                               const OSSL_DISPATCH **out, void **provctx)
{
    static OSSL_DISPATCH edited[256];
    size_t n = 0;

    for (; in->function_id != 0 && n < 255; in++)
        if (in->function_id != OSSL_FUNC_GET_ENTROPY
            && in->function_id != OSSL_FUNC_GET_USER_ENTROPY)
            edited[n++] = *in;
    edited[n].function_id = 0;
    edited[n].function = NULL;
    return OSSL_provider_init(handle, edited, out, provctx);
}

static void lib_init(struct pu_env *l, OSSL_provider_init_fn *init)
{
    CHECK(pu_env_init_builtin(l, init), "library context");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    lib_init(&libs[0], OSSL_provider_init);
    lib_init(&libs[1], init_without_upcall);
    default_impl = chacha_impl_best()->name;
    if (getenv("CHACHARNG_IMPL") != NULL)
        default_impl = getenv("CHACHARNG_IMPL");
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Seen-output set                                                        */
/* ---------------------------------------------------------------------- */

#define SET_BITS 20
#define SET_SIZE ((size_t)1 << SET_BITS)

struct seen {
    uint64_t tag; /* 0: empty */
    uint8_t b[CHUNK];
};

static struct seen *set;
static size_t set_used;

static uint64_t hash_chunk(uint64_t tag, const uint8_t *b)
{
    uint64_t h = tag * 0x9e3779b97f4a7c15ull, w;
    int i;

    for (i = 0; i < CHUNK; i += 8) {
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 0xff51afd7ed558ccdull;
        h ^= h >> 33;
    }
    return h;
}

/* Remember |b| under |tag| (never 0); returns 1 if it was already there. */
static int seen_before(uint64_t tag, const uint8_t *b)
{
    size_t i;

    if (set == NULL)
        set = calloc(SET_SIZE, sizeof(*set));
    if (set == NULL)
        return 0;
    if (set_used > SET_SIZE / 2) {
        /* forgetting only weakens the check, it never makes it wrong */
        memset(set, 0, SET_SIZE * sizeof(*set));
        set_used = 0;
    }
    i = hash_chunk(tag, b) & (SET_SIZE - 1);
    while (set[i].tag != 0) {
        if (set[i].tag == tag && memcmp(set[i].b, b, CHUNK) == 0)
            return 1;
        i = (i + 1) & (SET_SIZE - 1);
    }
    set[i].tag = tag;
    memcpy(set[i].b, b, CHUNK);
    set_used++;
    return 0;
}

/* ---------------------------------------------------------------------- */
/* Shadow model                                                           */
/* ---------------------------------------------------------------------- */

enum kind { CHACHA, TEST };

struct rec {
    EVP_RAND_CTX *ctx;
    enum kind kind;
    int alive; /* we still hold a reference and may call it */
    int lib;
    int parent; /* record index or -1 */
    int state;
    unsigned int requests;
    time_t interval;
    char impl[16];
    unsigned int counter; /* reseed_counter last read */
    unsigned int epoch;   /* instantiations, for deterministic lineages */
    size_t test_len;      /* TEST: seed bytes */
    unsigned int test_strength;
};

static struct rec recs[MAX_RECORDS];
static int nrecs;
static int slots[MAX_SLOTS]; /* record indices, -1 = empty */
static uint64_t run_id;
static size_t budget;

static uint8_t scratch[INPUT_LIMIT + 16], scratch2[INPUT_LIMIT + 16];
static uint8_t outbuf[MAX_REQUEST * 2 + 64];

/* 1 if |r| has a TEST-RAND ancestor (its output is reproducible). */
static int deterministic(const struct rec *r)
{
    while (r->parent >= 0) {
        r = &recs[r->parent];
        if (r->kind == TEST)
            return 1;
    }
    return 0;
}

/*
 * Outcome of seeding |r| (|inst|: as instantiate does, which also checks
 * the parent's strength; |pred|: prediction resistance, which every
 * chacharng parent up the chain honours by reseeding): 1 must succeed,
 * 0 must fail, -1 cannot be told (a parent that may or may not need to
 * reseed, or one we no longer watch).
 */
static int serve(const struct rec *p, int pred);

static int src(const struct rec *r, int inst, int pred)
{
    const struct rec *p;

    if (r->parent < 0)
        return 1; /* the core upcall or getrandom: never failed here */
    p = &recs[r->parent];
    if (!p->alive)
        return -1;
    if (p->kind == TEST)
        return p->test_len >= 48
               && (!inst
                   || (p->test_strength >= 256 && p->test_strength <= INT_MAX));
    return serve(p, pred);
}

/* Outcome of chacharng context |p| serving a child's get_seed. */
static int serve(const struct rec *p, int pred)
{
    int a;

    switch (p->state) {
    case EVP_RAND_STATE_UNINITIALISED:
        return 0;
    case EVP_RAND_STATE_ERROR:
        a = src(p, 1, 0); /* it instantiates afresh first */
        if (a != 1)
            return a;
        a = src(p, 0, pred);
        return pred ? a : (a == 1 ? 1 : -1);
    default:
        a = src(p, 0, pred);
        /* without pred it reseeds only if due, which we do not model */
        return pred ? a : (a == 1 ? 1 : -1);
    }
}

/* Outcome of a generate or reseed call on |r| (|reseed|: always seeds). */
static int expect_use(const struct rec *r, int pred, int reseed)
{
    int a, b;

    if (r->state == EVP_RAND_STATE_ERROR) {
        a = src(r, 1, 0);
        if (a != 1)
            return a;
    }
    b = src(r, 0, pred);
    if (reseed || pred)
        return b;
    return b == 1 ? 1 : -1;
}

static void check_expect(int got, int want, const char *what)
{
    CHECK(want < 0 || got == want, "%s returned %d, the model says %d", what,
          got, want);
}

static int get_state(const struct rec *r)
{
    return EVP_RAND_get_state(r->ctx);
}

static unsigned int get_counter(const struct rec *r)
{
    unsigned int c = 0;
    OSSL_PARAM p[2];

    p[0] = OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_COUNTER, &c);
    p[1] = OSSL_PARAM_construct_end();
    CHECK(EVP_RAND_CTX_get_params(r->ctx, p), "get reseed_counter");
    return c;
}

static int is_ancestor(int a, int of)
{
    while (recs[of].parent >= 0) {
        of = recs[of].parent;
        if (of == a)
            return 1;
    }
    return 0;
}

/*
 * After an operation on record |target|: every other live context either
 * kept its state or, if it is an ancestor (it seeded the target), moved
 * between ready and error.  The shadow follows the real states.
 */
static void sync_states(int target)
{
    int i;

    for (i = 0; i < nrecs; i++) {
        struct rec *r = &recs[i];
        unsigned int c;
        int s;

        if (!r->alive || r->kind != CHACHA || i == target)
            continue;
        s = get_state(r);
        if (s != r->state) {
            CHECK(is_ancestor(i, target)
                      && r->state != EVP_RAND_STATE_UNINITIALISED
                      && s != EVP_RAND_STATE_UNINITIALISED,
                  "record %d changed state %d -> %d as a bystander", i,
                  r->state, s);
            if (s == EVP_RAND_STATE_READY)
                r->epoch++; /* it re-instantiated to serve the target */
            r->state = s;
        }
        c = get_counter(r);
        CHECK(c >= r->counter, "record %d: reseed_counter went back", i);
        r->counter = c;
    }
}

static void check_output(struct rec *r, int idx, const uint8_t *out, size_t len)
{
    static const uint8_t fill[CHUNK] = { FILL, FILL, FILL, FILL, FILL, FILL,
                                         FILL, FILL, FILL, FILL, FILL, FILL,
                                         FILL, FILL, FILL, FILL };
    static const uint8_t zero[CHUNK];
    uint64_t tag;
    size_t i;

    for (i = 0; i + CHUNK <= len; i += CHUNK)
        CHECK(memcmp(out + i, fill, CHUNK) != 0
                  && memcmp(out + i, zero, CHUNK) != 0,
              "generate(%zu) succeeded but left bytes %zu.. unwritten", len, i);
    if (len < CHUNK)
        return;
    tag =
        deterministic(r) ? (run_id << 24 | (uint64_t)idx << 16 | r->epoch) : 1;
    CHECK(!seen_before(tag, out), "output repeated (start of %zu bytes)", len);
    if (len >= 2 * CHUNK)
        CHECK(!seen_before(tag, out + len - CHUNK),
              "output repeated (end of %zu bytes)", len);
}

/* ---------------------------------------------------------------------- */
/* Parameters in: well formed or not                                      */
/* ---------------------------------------------------------------------- */

#define MAX_PARAMS 3
#define NAME_BOUND 16 /* how far a NUL-terminated impl pointer is read */

/* What one params[] points into; heap blocks are freed after the call. */
struct param_store {
    union {
        unsigned char b[32];
        uint64_t u;
        time_t t;
        double d;
    } v[MAX_PARAMS];
    char *ptr[MAX_PARAMS];
    void *heap[MAX_PARAMS];
};

/* The three settable values, as the model has them. */
struct settings {
    unsigned int requests;
    time_t interval;
    char impl[16];
};

static void free_params(struct param_store *st)
{
    int i;

    for (i = 0; i < MAX_PARAMS; i++) {
        free(st->heap[i]);
        st->heap[i] = NULL;
    }
}

/*
 * The model of how impl is read: a UTF8_STRING is its data_size bytes, or
 * fewer up to a NUL; a UTF8_PTR points to data_size bytes read the same
 * way, or (data_size 0) to at most NAME_BOUND; other types, NULL data and
 * a NULL pointer are refused.  1, with the name in |name|, if it names a
 * kernel this CPU runs.
 */
static int model_impl(const OSSL_PARAM *p, char *name, size_t namelen)
{
    const struct chacha_impl *impl;
    size_t bound = p->data_size, len = 0;
    const char *s;

    if (p->data == NULL)
        return 0;
    if (p->data_type == OSSL_PARAM_UTF8_STRING) {
        s = p->data;
    } else if (p->data_type == OSSL_PARAM_UTF8_PTR) {
        s = *(char *const *)p->data;
        if (bound == 0)
            bound = NAME_BOUND;
    } else {
        return 0;
    }
    if (s == NULL)
        return 0;
    while (len < bound && s[len] != '\0')
        len++;
    if (len >= namelen)
        return 0;
    memcpy(name, s, len);
    name[len] = '\0';
    impl = chacha_impl_by_name(name);
    return impl != NULL && chacha_impl_supported(impl);
}

/*
 * One parameter |p| (number |i| of the array) of a random type and shape,
 * and whether the provider must accept it (*|valid|), with what it would
 * apply written into |want|.  Beyond well-formed values: NULL data,
 * data_size 0, integers of 1 to 16 bytes, the wrong type, doubles, and
 * blocks on the heap of exactly data_size bytes (no NUL for strings), so
 * that a read past them is an ASan report; for impl also strings cut
 * short by data_size and NULL pointers.
 */
static void make_param(struct rd *in, OSSL_PARAM *p, struct param_store *st,
                       int i, struct settings *want, int *valid)
{
    static const char *names[] = { "generic", "sse2",   "ssse3",
                                   "avx2",    "avx512", "neon",
                                   "bogus",   "",       "GENERIC" };
    unsigned int key = u8(in) % 4, type = u8(in) % 6, shape = u8(in);
    uint64_t raw = u32(in) | (uint64_t)(u8(in) & 3) << 32;
    int sign = u8(in) & 1;
    const char *k = key == 0   ? OSSL_DRBG_PARAM_RESEED_REQUESTS
                    : key == 1 ? OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL
                    : key == 2 ? "impl"
                               : "cipher";
    void *store = st->v[i].b;

    memset(&st->v[i], 0, sizeof(st->v[i]));
    if (key == 2 || type == 5) {
        const char *name = names[raw % 8];
        size_t len = strlen(name);

        snprintf(store, sizeof(st->v[i].b), "%s", name);
        *p = OSSL_PARAM_construct_utf8_string(k, store, 0);
        st->ptr[i] = store;
        switch (shape % 16) {
        case 7:
            p->data_type = OSSL_PARAM_OCTET_STRING;
            break;
        case 8:
            p->data = NULL;
            break;
        case 9:
            p->data_size = (shape >> 4) % (len + 1); /* may cut it short */
            break;
        case 10:
            *p = OSSL_PARAM_construct_utf8_ptr(k, &st->ptr[i], 0);
            break;
        case 11:
            st->ptr[i] = NULL;
            *p = OSSL_PARAM_construct_utf8_ptr(k, &st->ptr[i], 0);
            break;
        case 12:
            *p = OSSL_PARAM_construct_utf8_ptr(k, &st->ptr[i],
                                               (shape >> 4) % (len + 2));
            break;
        case 13:
            p->data = NULL;
            p->data_type = OSSL_PARAM_UTF8_PTR;
            break;
        case 14:
            st->heap[i] = malloc(len > 0 ? len : 1); /* exactly the name */
            CHECK(st->heap[i] != NULL, "malloc");
            memcpy(st->heap[i], name, len);
            p->data = st->heap[i];
            p->data_size = len; /* no NUL inside */
            break;
        default:
            break;
        }
    } else {
        if (type == 0) {
            *(int *)store = sign ? -(int)(raw % 1000) : (int)(raw & INT_MAX);
            *p = OSSL_PARAM_construct_int(k, store);
        } else if (type == 1) {
            *(unsigned int *)store = (unsigned int)raw;
            *p = OSSL_PARAM_construct_uint(k, store);
        } else if (type == 2) {
            *(uint64_t *)store = raw;
            *p = OSSL_PARAM_construct_uint64(k, store);
        } else if (type == 3) {
            *(time_t *)store = sign ? -(time_t)(raw % 1000) : (time_t)raw;
            *p = OSSL_PARAM_construct_time_t(k, store);
        } else {
            *(size_t *)store = (size_t)raw;
            *p = OSSL_PARAM_construct_size_t(k, store);
        }
        switch (shape % 16) {
        case 8:
            p->data = NULL;
            break;
        case 9:
            p->data_size = 0;
            break;
        case 10:
            p->data_size = 1 + (shape >> 4); /* within the zeroed store */
            break;
        case 11:
            p->data_type = OSSL_PARAM_OCTET_STRING;
            break;
        case 12:
            *p = OSSL_PARAM_construct_utf8_ptr(k, &st->ptr[i], 0);
            break;
        case 13:
            st->v[i].d = (sign ? -(double)(raw % 1000) : (double)raw)
                         / ((shape >> 4) % 2 + 1);
            *p = OSSL_PARAM_construct_double(k, &st->v[i].d);
            break;
        case 14:
            st->heap[i] = malloc(p->data_size);
            CHECK(st->heap[i] != NULL, "malloc");
            memcpy(st->heap[i], p->data, p->data_size);
            p->data = st->heap[i];
            break;
        default:
            break;
        }
    }

    /*
     * OpenSSL's conversions are the oracle for a number that has data;
     * without data, or with data_size 0, it must be refused (3.0's getters
     * would crash on the one and read 0 from the other).
     */
    if (key == 0) {
        unsigned int v;

        *valid =
            p->data != NULL && p->data_size != 0 && OSSL_PARAM_get_uint(p, &v);
        if (*valid)
            want->requests = v;
    } else if (key == 1) {
        time_t v;

        *valid = p->data != NULL && p->data_size != 0
                 && OSSL_PARAM_get_time_t(p, &v) && v >= 0;
        if (*valid)
            want->interval = v;
    } else if (key == 2) {
        char name[NAME_BOUND + 1];

        *valid = model_impl(p, name, sizeof(name));
        if (*valid)
            snprintf(want->impl, sizeof(want->impl), "%s", name);
    } else {
        *valid = 1; /* unknown keys are ignored, whatever their shape */
    }
}

/*
 * 1 to 3 parameters into |p| (terminated), with *|valid| for the whole
 * array and |want| updated as it would apply.  Returns 0 (nothing to do)
 * when a key repeats: the provider reads only the first, which the model
 * does not follow.
 */
static int make_params(struct rd *in, OSSL_PARAM *p, struct param_store *st,
                       struct settings *want, int *valid)
{
    int n = 1 + (int)(u8(in) % MAX_PARAMS), i, j, v;

    *valid = 1;
    memset(st, 0, sizeof(*st));
    for (i = 0; i < n; i++) {
        make_param(in, &p[i], st, i, want, &v);
        *valid &= v;
    }
    p[n] = OSSL_PARAM_construct_end();
    for (i = 1; i < n; i++)
        for (j = 0; j < i; j++)
            if (strcmp(p[i].key, p[j].key) == 0) {
                free_params(st);
                return 0;
            }
    return 1;
}

static void model_settings(const struct rec *r, struct settings *s)
{
    s->requests = r->requests;
    s->interval = r->interval;
    snprintf(s->impl, sizeof(s->impl), "%s", r->impl);
}

static void set_model(struct rec *r, const struct settings *s)
{
    r->requests = s->requests;
    r->interval = s->interval;
    snprintf(r->impl, sizeof(r->impl), "%s", s->impl);
}

/* The context's settings must be the model's. */
static void check_settings(struct rec *r)
{
    unsigned int req;
    time_t ival;
    char impl[32];
    OSSL_PARAM p[4];

    p[0] = OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_REQUESTS, &req);
    p[1] = OSSL_PARAM_construct_time_t(OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL,
                                       &ival);
    p[2] = OSSL_PARAM_construct_utf8_string("impl", impl, sizeof(impl));
    p[3] = OSSL_PARAM_construct_end();
    CHECK(EVP_RAND_CTX_get_params(r->ctx, p), "get params");
    CHECK(req == r->requests && ival == r->interval
              && strcmp(impl, r->impl) == 0,
          "params read back %u/%lld/%s, model %u/%lld/%s", req, (long long)ival,
          impl, r->requests, (long long)r->interval, r->impl);
}

/* ---------------------------------------------------------------------- */
/* Parameters out: requests of every shape                                */
/* ---------------------------------------------------------------------- */

/* The gettable keys, then unknown ones that are near misses. */
static const char *const get_keys[] = {
    OSSL_RAND_PARAM_STATE,
    OSSL_RAND_PARAM_STRENGTH,
    OSSL_RAND_PARAM_MAX_REQUEST,
    OSSL_DRBG_PARAM_RESEED_REQUESTS,
    OSSL_DRBG_PARAM_RESEED_TIME_INTERVAL,
    OSSL_DRBG_PARAM_RESEED_COUNTER,
    OSSL_DRBG_PARAM_RESEED_TIME,
    OSSL_DRBG_PARAM_MAX_PERSLEN,
    OSSL_DRBG_PARAM_MAX_ADINLEN,
    "impl",
    "max_requesT",
    "max_reques",
    "max_request_",
    "strengtH",
    "no-such-key",
};
#define N_GET_KEYS (sizeof(get_keys) / sizeof(get_keys[0]))
#define KEY_IMPL 9
#define FIRST_UNKNOWN_KEY 10
#define ASK_BYTES 40

/*
 * Every request writes its keys into these same buffers, so a key's
 * address says nothing about its text.
 */
static char key_bufs[MAX_PARAMS][24];

struct ask {
    unsigned int key; /* index into get_keys */
    unsigned int shape;
    unsigned char buf[ASK_BYTES]; /* the data, then FILL to the end */
    char *ptr;
    int predict; /* 1 must succeed, 0 must fail, -1 cannot tell */
};

/* 1 if |v| (>= 0) fits |size| bytes, signed or not. */
static int fits(int64_t v, size_t size, int is_signed)
{
    size_t bits = size * 8 - (is_signed ? 1 : 0);

    return bits >= 63 || v < ((int64_t)1 << bits);
}

/* Build request |a| into |p| for a key whose value is |v| (or |name|). */
static void make_ask(struct ask *a, OSSL_PARAM *p, char *key, int64_t v,
                     const char *name)
{
    static const struct {
        unsigned int type;
        size_t size;
    } shapes[] = {
        { OSSL_PARAM_UNSIGNED_INTEGER, 8 },  { OSSL_PARAM_UNSIGNED_INTEGER, 1 },
        { OSSL_PARAM_UNSIGNED_INTEGER, 2 },  { OSSL_PARAM_INTEGER, 4 },
        { OSSL_PARAM_UNSIGNED_INTEGER, 4 },  { OSSL_PARAM_INTEGER, 16 },
        { OSSL_PARAM_REAL, sizeof(double) }, { OSSL_PARAM_UTF8_STRING, 0 },
        { OSSL_PARAM_UTF8_PTR, 0 },          { OSSL_PARAM_OCTET_STRING, 8 },
        { OSSL_PARAM_UNSIGNED_INTEGER, 0 },  { OSSL_PARAM_UTF8_STRING, 0 },
    };
    unsigned int s = a->shape % (sizeof(shapes) / sizeof(shapes[0]));
    int number = a->key < KEY_IMPL, is_int;
    size_t len = name != NULL ? strlen(name) : 0;

    snprintf(key, sizeof(key_bufs[0]), "%s", get_keys[a->key]);
    memset(a->buf, FILL, sizeof(a->buf));
    a->ptr = NULL;
    p->key = key;
    p->data_type = shapes[s].type;
    p->data = a->buf;
    p->data_size = shapes[s].size;
    p->return_size = OSSL_PARAM_UNMODIFIED;
    if (s == 7)
        p->data_size = (a->shape >> 4) % 24; /* any size, NUL room or not */
    else if (s == 8)
        p->data = &a->ptr;
    else if (s >= 10)
        p->data = NULL; /* asks for the size */

    is_int = p->data_type == OSSL_PARAM_INTEGER
             || p->data_type == OSSL_PARAM_UNSIGNED_INTEGER;
    if (a->key >= FIRST_UNKNOWN_KEY)
        a->predict = 1;
    else if (number && is_int)
        a->predict =
            p->data == NULL
            || fits(v, p->data_size, p->data_type == OSSL_PARAM_INTEGER);
    else if (number)
        a->predict = p->data_type == OSSL_PARAM_REAL ? -1 : 0;
    else if (p->data_type == OSSL_PARAM_UTF8_PTR)
        a->predict = 1;
    else if (p->data_type == OSSL_PARAM_UTF8_STRING)
        a->predict = p->data == NULL || p->data_size > len;
    else
        a->predict = 0;
}

/*
 * What request |a| in |p| wrote: nothing past data_size (nothing at all
 * in a failed call of one request), and the value if the call worked.
 */
static void check_ask(const struct ask *a, const OSSL_PARAM *p, int r_ok,
                      int alone, int64_t v, const char *name)
{
    size_t i, from = p->data_size;
    int64_t got;

    /* unknown keys, pointers and size queries leave the buffer alone */
    if (a->key >= FIRST_UNKNOWN_KEY || p->data != a->buf || (!r_ok && alone))
        from = 0;
    for (i = from; i < sizeof(a->buf); i++)
        CHECK(a->buf[i] == FILL, "get %s (type %u, %zu bytes) wrote byte %zu",
              get_keys[a->key], p->data_type, p->data_size, i);
    if (a->key >= FIRST_UNKNOWN_KEY) {
        CHECK(!OSSL_PARAM_modified(p) && a->ptr == NULL,
              "unknown key %s was answered", get_keys[a->key]);
        return;
    }
    if (!r_ok)
        return;
    CHECK(OSSL_PARAM_modified(p), "%s not answered", get_keys[a->key]);
    if (p->data == NULL) {
        CHECK(p->return_size > 0, "size query of %s returned 0",
              get_keys[a->key]);
        return;
    }
    if (a->key < KEY_IMPL) {
        CHECK(OSSL_PARAM_get_int64(p, &got) && got == v,
              "%s answered %lld, want %lld", get_keys[a->key], (long long)got,
              (long long)v);
    } else if (p->data_type == OSSL_PARAM_UTF8_PTR) {
        CHECK(a->ptr != NULL && strcmp(a->ptr, name) == 0,
              "impl answered as a pointer to %s, want %s",
              a->ptr != NULL ? a->ptr : "NULL", name);
    } else {
        CHECK(memcmp(a->buf, name, strlen(name) + 1) == 0
                  && p->return_size == strlen(name),
              "impl answered %.*s, want %s", (int)p->data_size, a->buf, name);
    }
}

/*
 * 1 to 3 requests of random keys and shapes in one call: the call works
 * exactly when each request can take its answer, none writes past its
 * buffer, answers follow the key's text, and a failure raises an error.
 */
static void ask_params(struct rd *in, struct rec *r, unsigned int counter,
                       time_t rtime)
{
    int n = 1 + (int)(u8(in) % MAX_PARAMS), i, r_ok, want;
    int any_fail = 0, any_unsure = 0;
    struct ask asks[MAX_PARAMS];
    OSSL_PARAM p[MAX_PARAMS + 1];
    int64_t vals[MAX_PARAMS];

    for (i = 0; i < n; i++) {
        struct ask *a = &asks[i];
        int j;
        const int64_t values[KEY_IMPL] = {
            r->state, 256,   MAX_REQUEST, r->requests, r->interval,
            counter,  rtime, INPUT_LIMIT, INPUT_LIMIT
        };

        a->key = u8(in) % N_GET_KEYS;
        a->shape = u8(in);
        for (j = 0; j < i; j++)
            if (asks[j].key == a->key)
                return; /* only the first would be answered: skip */
        vals[i] = a->key < KEY_IMPL ? values[a->key] : 0;
        make_ask(a, &p[i], key_bufs[i], vals[i], r->impl);
        if (a->predict == 0)
            any_fail = 1;
        else if (a->predict < 0)
            any_unsure = 1;
    }
    want = any_fail ? 0 : any_unsure ? -1 : 1;
    p[n] = OSSL_PARAM_construct_end();
    ERR_clear_error();
    r_ok = EVP_RAND_CTX_get_params(r->ctx, p);
    CHECK(want < 0 || r_ok == want, "get of %d params returned %d, want %d", n,
          r_ok, want);
    CHECK(r_ok || ERR_peek_error() != 0, "get failed without an error");
    for (i = 0; i < n; i++)
        check_ask(&asks[i], &p[i], r_ok, n == 1, vals[i], r->impl);
    if (!r_ok && n == 1 && asks[0].key == KEY_IMPL
        && p[0].data_type == OSSL_PARAM_UTF8_STRING)
        CHECK(p[0].return_size == strlen(r->impl),
              "too small for impl: return_size %zu", p[0].return_size);
    ERR_clear_error();
}

/* ---------------------------------------------------------------------- */
/* Operations                                                             */
/* ---------------------------------------------------------------------- */

static int new_record(void)
{
    struct rec *r;

    if (nrecs == MAX_RECORDS)
        return -1;
    r = &recs[nrecs];
    memset(r, 0, sizeof(*r));
    r->parent = -1;
    return nrecs++;
}

/* A free slot, or -1. */
static int free_slot(void)
{
    int i;

    for (i = 0; i < MAX_SLOTS; i++)
        if (slots[i] < 0)
            return i;
    return -1;
}

/* The record in the slot chosen by the next input byte, or -1. */
static int pick(struct rd *in, int want_kind)
{
    int s = (int)(u8(in) % MAX_SLOTS), i;

    for (i = 0; i < MAX_SLOTS; i++) {
        int idx = slots[(s + i) % MAX_SLOTS];

        if (idx >= 0
            && (want_kind < 0 || recs[idx].kind == (enum kind)want_kind))
            return idx;
    }
    return -1;
}

static unsigned int pick_strength(struct rd *in)
{
    static const unsigned int common[] = {
        256, 256, 256, 0, 128, 255, 257, 512
    };
    unsigned int c = u8(in);

    return c < 240 ? common[c % 8] : u32(in);
}

/* An input length: mostly small, sometimes at or past the 65536 limit. */
static size_t pick_input_len(struct rd *in)
{
    unsigned int c = u8(in);

    if (c < 200)
        return c % 64;
    if (c < 230)
        return 64 + u16(in) % 2000;
    return c < 245 ? INPUT_LIMIT : INPUT_LIMIT + 1;
}

/* Fill |len| bytes of |buf|: input bytes first, then a pattern. */
static uint8_t *input_bytes(struct rd *in, uint8_t *buf, size_t len)
{
    size_t got = take(in, buf, len < 255 ? len : 255), i;

    for (i = got; i < len; i++)
        buf[i] = (uint8_t)(i * 131 + 7);
    return buf;
}

static void op_new_test(struct rd *in)
{
    int slot = free_slot(), idx;
    struct rec *r;
    unsigned int strength = pick_strength(in);
    size_t len = u8(in) % 100;
    uint8_t *seed = input_bytes(in, scratch, len);
    OSSL_PARAM p[3];

    if (slot < 0 || (idx = new_record()) < 0)
        return;
    r = &recs[idx];
    r->kind = TEST;
    r->lib = (int)(u8(in) & 1);
    r->ctx = EVP_RAND_CTX_new(libs[r->lib].test_rand, NULL);
    CHECK(r->ctx != NULL, "TEST-RAND new");
    p[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY, seed,
                                             len);
    p[2] = OSSL_PARAM_construct_end();
    CHECK(EVP_RAND_CTX_set_params(r->ctx, p)
              && EVP_RAND_instantiate(r->ctx, 0, 0, NULL, 0, NULL),
          "TEST-RAND setup");
    r->alive = 1;
    r->test_len = len;
    r->test_strength = strength;
    slots[slot] = idx;
}

static void op_test_seed(struct rd *in)
{
    int idx = pick(in, TEST);
    struct rec *r;
    unsigned int strength = pick_strength(in);
    size_t len = u8(in) % 100;
    uint8_t *seed = input_bytes(in, scratch, len);
    OSSL_PARAM p[3];

    if (idx < 0)
        return;
    r = &recs[idx];
    p[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY, seed,
                                             len);
    p[2] = OSSL_PARAM_construct_end();
    CHECK(EVP_RAND_CTX_set_params(r->ctx, p), "TEST-RAND set");
    r->test_len = len;
    r->test_strength = strength;
}

static void op_new_chacha(struct rd *in)
{
    int slot = free_slot(), idx, parent = -1;
    unsigned int how = u8(in);
    struct rec *r;

    if (slot < 0)
        return;
    if (how % 3 == 1)
        parent = pick(in, TEST);
    else if (how % 3 == 2)
        parent = pick(in, CHACHA);
    if ((idx = new_record()) < 0)
        return;
    r = &recs[idx];
    r->kind = CHACHA;
    r->lib = (int)((how >> 2) & 1);
    r->parent = parent;
    ERR_clear_error();
    r->ctx = EVP_RAND_CTX_new(libs[r->lib].rand,
                              parent >= 0 ? recs[parent].ctx : NULL);
    CHECK(r->ctx != NULL, "newctx failed");
    {
        /* the model is the construction without kernel mixing */
        int zero = 0;
        OSSL_PARAM p[2];

        p[0] = OSSL_PARAM_construct_int("kernel_mix", &zero);
        p[1] = OSSL_PARAM_construct_end();
        CHECK(EVP_RAND_CTX_set_params(r->ctx, p), "kernel_mix = 0 refused");
    }
    r->alive = 1;
    r->state = get_state(r);
    CHECK(r->state == EVP_RAND_STATE_UNINITIALISED, "new context state %d",
          r->state);
    r->requests = 65536;
    r->interval = 3600;
    snprintf(r->impl, sizeof(r->impl), "%s", default_impl);
    r->counter = get_counter(r);
    slots[slot] = idx;
    if (how & 0x80)
        CHECK(EVP_RAND_enable_locking(r->ctx), "enable_locking");
    if (parent >= 0)
        sync_states(idx);
}

static void op_instantiate(struct rd *in)
{
    int idx = pick(in, CHACHA), pred = (int)(u8(in) & 1), r_ok, must_fail;
    unsigned int strength = pick_strength(in);
    size_t plen = pick_input_len(in);
    uint8_t *pers = input_bytes(in, scratch, plen);
    int with_params = (int)(u8(in) & 1), valid = 1;
    OSSL_PARAM p[MAX_PARAMS + 1];
    struct param_store st;
    struct settings want;
    struct rec *r;
    int before;

    if (idx < 0)
        return;
    r = &recs[idx];
    before = r->state;
    model_settings(r, &want);
    if (with_params && !make_params(in, p, &st, &want, &valid))
        return;
    /* params[] apply only when nothing else refuses the call */
    must_fail = before != EVP_RAND_STATE_UNINITIALISED || strength > 256
                || plen > INPUT_LIMIT || !valid;
    ERR_clear_error();
    r_ok = EVP_RAND_instantiate(r->ctx, strength, pred,
                                plen == 0 && (u8(in) & 1) ? NULL : pers, plen,
                                with_params ? p : NULL);
    if (with_params)
        free_params(&st);
    if (!must_fail)
        set_model(r, &want);
    check_settings(r);
    if (must_fail) {
        CHECK(!r_ok && ERR_peek_error() != 0,
              "instantiate(state %d, strength %u, perslen %zu) did not fail "
              "cleanly",
              before, strength, plen);
        CHECK(get_state(r) == before, "failed instantiate changed state");
    } else {
        check_expect(r_ok, src(r, 1, pred), "instantiate");
        CHECK(r_ok || ERR_peek_error() != 0, "failure without an error");
        r->state = get_state(r);
        CHECK(r->state == (r_ok ? EVP_RAND_STATE_READY : EVP_RAND_STATE_ERROR),
              "instantiate returned %d, state %d", r_ok, r->state);
        if (r_ok)
            r->epoch++;
    }
    if (r_ok) {
        unsigned int c = get_counter(r);

        CHECK(c > r->counter, "reseed_counter did not grow at instantiate");
        r->counter = c;
    }
    sync_states(idx);
}

static size_t pick_out_len(struct rd *in)
{
    unsigned int c = u8(in);

    switch (c % 8) {
    case 0:
        return c >> 3;
    case 1:
    case 2:
        return u16(in) % 3000;
    case 3: {
        static const size_t edges[] = {
            959, 960, 961, 1023, 1024, 1025, MAX_REQUEST, MAX_REQUEST + 1
        };
        return edges[(c >> 3) % 8];
    }
    case 4:
        return u32(in) % (MAX_REQUEST * 2 + 64);
    default:
        return u16(in) % 300;
    }
}

static void op_generate(struct rd *in)
{
    int idx = pick(in, CHACHA), pred = (int)(u8(in) & 1), r_ok, must_fail;
    unsigned int strength = pick_strength(in);
    size_t len = pick_out_len(in), alen = pick_input_len(in), i;
    uint8_t *adin = input_bytes(in, scratch, alen);
    struct rec *r;
    int before, untouched;

    if (idx < 0)
        return;
    if (len > budget)
        len = budget;
    budget -= len;
    r = &recs[idx];
    before = r->state;
    memset(outbuf, FILL, len);
    ERR_clear_error();
    r_ok = EVP_RAND_generate(r->ctx, outbuf, len, strength, pred, adin, alen);
    if (len == 0) {
        /* the EVP layer answers an empty request without calling us */
        CHECK(r_ok, "empty generate failed");
        CHECK(get_state(r) == before, "empty generate changed the state");
        sync_states(idx);
        return;
    }
    must_fail = before == EVP_RAND_STATE_UNINITIALISED || strength > 256
                || alen > INPUT_LIMIT;
    untouched = 1;
    for (i = 0; i < len && i < MAX_REQUEST; i++)
        if (outbuf[i] != FILL) {
            untouched = 0;
            break;
        }
    if (must_fail) {
        CHECK(!r_ok && ERR_peek_error() != 0,
              "generate(state %d, strength %u, adinlen %zu) did not fail "
              "cleanly",
              before, strength, alen);
        CHECK(untouched, "a refused generate wrote output");
        CHECK(get_state(r) == before, "a refused generate changed state");
        sync_states(idx);
        return;
    }
    check_expect(r_ok, expect_use(r, pred, 0), "generate");
    r->state = get_state(r);
    if (r_ok) {
        CHECK(r->state == EVP_RAND_STATE_READY, "state %d after success",
              r->state);
        if (before == EVP_RAND_STATE_ERROR)
            r->epoch++; /* recovered by instantiating afresh */
        check_output(r, idx, outbuf, len);
    } else {
        CHECK(ERR_peek_error() != 0, "failure without an error");
        CHECK(r->state == EVP_RAND_STATE_ERROR, "state %d after failure",
              r->state);
        if (len <= MAX_REQUEST)
            CHECK(untouched, "a failed generate wrote output");
    }
    {
        unsigned int c = get_counter(r);

        CHECK(c >= r->counter, "reseed_counter went back");
        r->counter = c;
    }
    sync_states(idx);
}

static void op_reseed(struct rd *in)
{
    int idx = pick(in, CHACHA), pred = (int)(u8(in) & 1), r_ok, must_fail;
    size_t elen = pick_input_len(in), alen = pick_input_len(in);
    uint8_t *ent = input_bytes(in, scratch, elen);
    uint8_t *adin = input_bytes(in, scratch2, alen);
    struct rec *r;
    int before;

    if (idx < 0)
        return;
    r = &recs[idx];
    before = r->state;
    must_fail = before == EVP_RAND_STATE_UNINITIALISED || elen > INPUT_LIMIT
                || alen > INPUT_LIMIT;
    ERR_clear_error();
    r_ok = EVP_RAND_reseed(r->ctx, pred, ent, elen, adin, alen);
    if (must_fail) {
        CHECK(!r_ok && ERR_peek_error() != 0, "reseed did not fail cleanly");
        CHECK(get_state(r) == before, "a refused reseed changed state");
        sync_states(idx);
        return;
    }
    check_expect(r_ok, expect_use(r, pred, 1), "reseed");
    r->state = get_state(r);
    CHECK(r->state == (r_ok ? EVP_RAND_STATE_READY : EVP_RAND_STATE_ERROR),
          "reseed returned %d, state %d", r_ok, r->state);
    if (r_ok) {
        unsigned int c = get_counter(r);

        if (before == EVP_RAND_STATE_ERROR)
            r->epoch++;
        CHECK(c > r->counter, "reseed_counter did not grow at reseed");
        r->counter = c;
    } else {
        CHECK(ERR_peek_error() != 0, "failure without an error");
    }
    sync_states(idx);
}

static void op_uninstantiate(struct rd *in)
{
    int idx = pick(in, CHACHA);
    struct rec *r;

    if (idx < 0)
        return;
    r = &recs[idx];
    CHECK(EVP_RAND_uninstantiate(r->ctx), "uninstantiate failed");
    r->state = get_state(r);
    CHECK(r->state == EVP_RAND_STATE_UNINITIALISED,
          "state %d after "
          "uninstantiate",
          r->state);
    CHECK(EVP_RAND_verify_zeroization(r->ctx) == 1,
          "not zeroized after uninstantiate");
    r->epoch++;
    sync_states(idx);
}

static void op_verify(struct rd *in)
{
    int idx = pick(in, CHACHA);
    struct rec *r;

    if (idx < 0)
        return;
    r = &recs[idx];
    CHECK(EVP_RAND_verify_zeroization(r->ctx)
              == (r->state != EVP_RAND_STATE_READY),
          "verify_zeroization disagrees with state %d", r->state);
}

static void op_set_params(struct rd *in)
{
    int idx = pick(in, CHACHA), valid, r_ok;
    OSSL_PARAM p[MAX_PARAMS + 1];
    struct param_store st;
    struct settings want;
    struct rec *r;

    if (idx < 0)
        return;
    r = &recs[idx];
    model_settings(r, &want);
    if (!make_params(in, p, &st, &want, &valid))
        return;
    ERR_clear_error();
    r_ok = EVP_RAND_CTX_set_params(r->ctx, p);
    free_params(&st);
    CHECK(r_ok == valid, "set_params returned %d, expected %d", r_ok, valid);
    if (r_ok)
        set_model(r, &want);
    else
        CHECK(ERR_peek_error() != 0, "set_params failed without an error");
    check_settings(r);
}

static void op_get_params(struct rd *in)
{
    int idx = pick(in, CHACHA), state = -1;
    unsigned int strength = 0, counter = 0;
    size_t maxreq = 0, maxpers = 0, maxadin = 0;
    time_t rtime = 0;
    OSSL_PARAM p[8];
    struct rec *r;

    if (idx < 0)
        return;
    r = &recs[idx];
    p[0] = OSSL_PARAM_construct_int(OSSL_RAND_PARAM_STATE, &state);
    p[1] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[2] = OSSL_PARAM_construct_size_t(OSSL_RAND_PARAM_MAX_REQUEST, &maxreq);
    p[3] = OSSL_PARAM_construct_uint(OSSL_DRBG_PARAM_RESEED_COUNTER, &counter);
    p[4] = OSSL_PARAM_construct_size_t(OSSL_DRBG_PARAM_MAX_PERSLEN, &maxpers);
    p[5] = OSSL_PARAM_construct_size_t(OSSL_DRBG_PARAM_MAX_ADINLEN, &maxadin);
    p[6] = OSSL_PARAM_construct_time_t(OSSL_DRBG_PARAM_RESEED_TIME, &rtime);
    p[7] = OSSL_PARAM_construct_end();
    CHECK(EVP_RAND_CTX_get_params(r->ctx, p), "get params");
    CHECK(state == r->state && strength == 256 && maxreq == MAX_REQUEST
              && maxpers == INPUT_LIMIT && maxadin == INPUT_LIMIT
              && counter >= r->counter,
          "params: state %d (model %d) strength %u max_request %zu "
          "counter %u (was %u)",
          state, r->state, strength, maxreq, counter, r->counter);
    r->counter = counter;
    ask_params(in, r, counter, rtime);
}

static void op_lock(struct rd *in)
{
    int idx = pick(in, -1);

    if (idx < 0)
        return;
    CHECK(EVP_RAND_enable_locking(recs[idx].ctx), "enable_locking failed");
}

static void op_free(struct rd *in)
{
    int s = (int)(u8(in) % MAX_SLOTS), idx = slots[s];

    if (idx < 0)
        return;
    EVP_RAND_CTX_free(recs[idx].ctx);
    recs[idx].alive = 0;
    slots[s] = -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rd in = { data, size };
    int ops = 0, i;

    run_id++;
    nrecs = 0;
    budget = BYTE_BUDGET;
    for (i = 0; i < MAX_SLOTS; i++)
        slots[i] = -1;

    while (in.n > 0 && ops++ < MAX_OPS) {
        switch (u8(&in) % 12) {
        case 0:
        case 1:
            op_new_chacha(&in);
            break;
        case 2:
            op_new_test(&in);
            break;
        case 3:
            op_test_seed(&in);
            break;
        case 4:
            op_instantiate(&in);
            break;
        case 5:
        case 6:
            op_generate(&in);
            break;
        case 7:
            op_reseed(&in);
            break;
        case 8:
            op_uninstantiate(&in);
            break;
        case 9:
            op_set_params(&in);
            break;
        case 10:
            if (u8(&in) & 1)
                op_get_params(&in);
            else
                op_verify(&in);
            break;
        default:
            if (u8(&in) & 1)
                op_lock(&in);
            else
                op_free(&in);
            break;
        }
    }
    /* free in slot order: parents and children in any order must work */
    for (i = 0; i < MAX_SLOTS; i++)
        if (slots[i] >= 0)
            EVP_RAND_CTX_free(recs[slots[i]].ctx);
    ERR_clear_error();
    return 0;
}
