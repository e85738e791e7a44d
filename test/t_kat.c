/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known-answer test of the whole CHACHA20-DRBG construction (DESIGN.md
 * section 3) and of the reseed policy cases that decide which bytes come
 * out (section 4), through the public EVP_RAND interface.
 *
 * The provider is seeded from a TEST-RAND parent with a fixed seed, so its
 * output is a pure function of the seed and the calls made.  Every output is
 * compared with an independent model of the construction on top of
 * OpenSSL's own EVP ChaCha20 (test/lib/drbg_model.c), so neither our
 * kernels nor our generator code take part in computing the expected bytes.
 * This file is the driver: the call sequences are the numbered stanzas of
 * test/vectors/drbg_scenarios.txt, and a few model outputs are pinned in
 * test/vectors/drbg_kat.txt, which guards the model itself against
 * drifting along with the provider.
 *
 * The body runs once per kernel the CPU supports (tu_main_per_impl), with
 * CHACHARNG_IMPL forcing the kernel at provider load.
 */
/* getline(), strdup() and strtok_r() */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>

#include "drbg_model.h"
#include "errq.h"
#include "hex.h"
#include "provutil.h"
#include "rfc8439.h"
#include "testutil.h"

#define KAT_FILE "drbg_kat.txt"
#define SCENARIO_FILE "drbg_scenarios.txt"

/* Two fixed seeds, handed out by TEST-RAND at every (re)seed. */
static const char seed_a_hex[] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f";
static const char seed_b_hex[] =
    "c3a1f07e5b2d9418e6407fd2913ab5c85e0c77a24d19f6e3b8025fa6c1d49e37"
    "0b8a6f5e24d3c1917a08e5b3f26c4d90";

static struct pu_env env; /* default and chacharng, TEST-RAND, the DRBG */
static EVP_CIPHER *chacha20;

/* ------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------ */

/* Deterministic filler for personalization, additional input and entropy. */
static void fill(unsigned char *p, size_t len, unsigned int tag)
{
    size_t i;

    for (i = 0; i < len; i++)
        p[i] = (unsigned char)(tag * 29 + i * 131 + (i >> 8) * 7 + 1);
}

/* ------------------------------------------------------------------------
 * The provider side: a TEST-RAND parent and a CHACHA20-DRBG child, with
 * the model following along
 * ------------------------------------------------------------------------ */

struct rig {
    EVP_RAND_CTX *parent, *drbg;
    struct model m;
    unsigned int counter0; /* drbg reseed_counter right after instantiate */
    unsigned int seeds0;   /* m.seeds at the same moment */
};

static void rig_free(struct rig *r)
{
    EVP_RAND_CTX_free(r->drbg);
    EVP_RAND_CTX_free(r->parent);
    model_free(&r->m);
    memset(r, 0, sizeof(*r));
}

/*
 * A parent handing out |seed| at every request and a child instantiated on
 * it with |pers|; the model is instantiated the same way.  Returns 1, or 0
 * after recording a failed test point labelled |what|.
 */
static int rig_new(struct rig *r, const unsigned char seed[MODEL_SEED_LEN],
                   const unsigned char *pers, size_t perslen, const char *what)
{
    OSSL_PARAM p[3];
    unsigned int strength = MODEL_STRENGTH;
    int no_mix = 0;
    const char *step;

    memset(r, 0, sizeof(*r));
    if (!model_init(&r->m, chacha20, seed)) {
        step = "model cipher context";
        goto err;
    }
    step = "TEST-RAND parent";
    r->parent = EVP_RAND_CTX_new(env.test_rand, NULL);
    if (r->parent == NULL)
        goto err;
    p[0] = OSSL_PARAM_construct_uint(OSSL_RAND_PARAM_STRENGTH, &strength);
    p[1] = OSSL_PARAM_construct_octet_string(OSSL_RAND_PARAM_TEST_ENTROPY,
                                             r->m.seed, MODEL_SEED_LEN);
    p[2] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_set_params(r->parent, p)
        || !EVP_RAND_instantiate(r->parent, MODEL_STRENGTH, 0, NULL, 0, NULL))
        goto err;
    step = "CHACHA20-DRBG context";
    r->drbg = EVP_RAND_CTX_new(env.rand, r->parent);
    if (r->drbg == NULL)
        goto err;
    step = "CHACHA20-DRBG instantiate with kernel_mix = 0";
    /* the known answers are those of the construction without mixing */
    p[0] = OSSL_PARAM_construct_int("kernel_mix", &no_mix);
    p[1] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_instantiate(r->drbg, MODEL_STRENGTH, 0, pers, perslen, p))
        goto err;
    step = "reseed_counter after instantiate";
    if (!pu_get_uint(r->drbg, OSSL_DRBG_PARAM_RESEED_COUNTER, &r->counter0))
        goto err;
    model_instantiate(&r->m, pers, perslen);
    r->seeds0 = r->m.seeds;
    return 1;

err:
    tu_ok(0, "%s: %s failed", what, step);
    tu_err_print();
    rig_free(r);
    return 0;
}

/*
 * The provider's reseed_counter must have moved exactly as often as the
 * model (re)seeded: this is what shows that a reseed happened at the call
 * where the model did it, not merely that the bytes agree.
 */
static int rig_counter_ok(struct rig *r, const char *what)
{
    unsigned int c;

    if (!pu_get_uint(r->drbg, OSSL_DRBG_PARAM_RESEED_COUNTER, &c)) {
        tu_diag("%s: cannot read reseed_counter", what);
        tu_err_print();
        return 0;
    }
    if (c - r->counter0 != r->m.seeds - r->seeds0) {
        tu_diag("%s: reseed_counter moved by %u since instantiate, "
                "the model reseeded %u times",
                what, c - r->counter0, r->m.seeds - r->seeds0);
        return 0;
    }
    return 1;
}

/* Report where |got| and |want| first differ; 1 if they are equal. */
static int same_bytes(const unsigned char *got, const unsigned char *want,
                      size_t n, const char *what)
{
    size_t i, from;

    for (i = 0; i < n && got[i] == want[i]; i++)
        continue;
    if (i == n)
        return 1;
    tu_diag("%s: first differing byte at offset %zu of %zu "
            "(provider %02x, model %02x)",
            what, i, n, got[i], want[i]);
    from = i - i % 32;
    tu_diag_hex("provider", got + from, tu_min_size(64, n - from));
    tu_diag_hex("model", want + from, tu_min_size(64, n - from));
    return 0;
}

/*
 * One EVP_RAND_generate of |n| bytes on the provider and the same request
 * on the model; compares the bytes and the reseed count.  Diagnoses and
 * returns 0 on any difference.  |got| starts as a pattern the model cannot
 * plausibly produce, so a call that writes nothing is caught.
 */
static int rig_generate(struct rig *r, size_t n, int pred_res,
                        const unsigned char *adin, size_t adinlen,
                        const char *what)
{
    unsigned char *got = tu_xmalloc(n), *want = tu_xmalloc(n);
    int ok = 1;

    memset(got, 0x5a, n);
    memset(want, 0xa5, n);
    if (!EVP_RAND_generate(r->drbg, got, n, MODEL_STRENGTH, pred_res, adin,
                           adinlen)) {
        tu_diag("%s: EVP_RAND_generate(%zu) failed", what, n);
        tu_err_print();
        ok = 0;
    }
    model_evp_generate(&r->m, want, n, pred_res, adin, adinlen);
    if (r->m.failed) {
        tu_diag("%s: the model's EVP ChaCha20 failed", what);
        tu_err_print();
        ok = 0;
    }
    if (ok)
        ok = same_bytes(got, want, n, what) && rig_counter_ok(r, what);
    free(got);
    free(want);
    return ok;
}

/* EVP_RAND_reseed on the provider and the model; checks the count. */
static int rig_reseed(struct rig *r, int pred_res, const unsigned char *ent,
                      size_t entlen, const unsigned char *adin, size_t adinlen,
                      const char *what)
{
    if (!EVP_RAND_reseed(r->drbg, pred_res, ent, entlen, adin, adinlen)) {
        tu_diag("%s: EVP_RAND_reseed failed", what);
        tu_err_print();
        return 0;
    }
    model_reseed(&r->m, ent, entlen, adin, adinlen);
    return rig_counter_ok(r, what);
}

/* ------------------------------------------------------------------------
 * The tests
 * ------------------------------------------------------------------------ */

/*
 * The model stands on EVP ChaCha20 and on our reading of its IV layout:
 * check both against RFC 8439 section 2.3.2 (test/lib/rfc8439.c).
 */
static void test_model_cipher(void)
{
    const struct rfc8439_block *v = &rfc8439_blocks[0];
    unsigned char want[MODEL_BLOCK_LEN], got[MODEL_BLOCK_LEN];
    struct model m;
    int ok;

    tu_unhex(want, sizeof(want), v->keystream);
    if (!model_init(&m, chacha20, want)) {
        tu_ok(0, "model: EVP ChaCha20 gives RFC 8439 2.3.2 block");
        return;
    }
    tu_unhex(m.key, sizeof(m.key), v->key);
    tu_unhex(m.nonce, sizeof(m.nonce), v->nonce);
    model_ks(&m, v->counter, got, sizeof(got));
    ok = !m.failed && memcmp(got, want, sizeof(got)) == 0;
    if (!ok) {
        tu_err_print();
        tu_diag_hex("got", got, sizeof(got));
    }
    tu_ok(ok, "model: EVP ChaCha20 gives RFC 8439 2.3.2 block");
    model_free(&m);
}

/* The kernel in use and the fixed parameters the model depends on. */
static void test_params(const unsigned char *seed)
{
    struct rig r;
    char impl[64] = "";
    size_t max_request = 0;
    unsigned int u = 0;
    const char *want = getenv("CHACHARNG_IMPL");
    OSSL_PARAM p[3];
    int ok;

    if (!rig_new(&r, seed, NULL, 0, "params"))
        return;
    p[0] = OSSL_PARAM_construct_utf8_string("impl", impl, sizeof(impl));
    p[1] =
        OSSL_PARAM_construct_size_t(OSSL_RAND_PARAM_MAX_REQUEST, &max_request);
    p[2] = OSSL_PARAM_construct_end();
    ok = EVP_RAND_CTX_get_params(r.drbg, p);
    if (!ok)
        tu_err_print();
    if (want != NULL) {
        /* proves the kernel under test is the one that produced the bytes */
        tu_ok(ok && strcmp(impl, want) == 0,
              "ctx param impl is \"%s\" (CHACHARNG_IMPL=%s)", impl, want);
    } else {
        tu_ok(ok && impl[0] != '\0', "ctx param impl is \"%s\"", impl);
    }
    tu_ok(ok && max_request == MODEL_MAX_REQUEST,
          "max_request is %zu (model splits at %zu)", max_request,
          MODEL_MAX_REQUEST);
    /* read first: the order of evaluation of tu_ok's arguments is open */
    ok = pu_get_uint(r.drbg, OSSL_RAND_PARAM_STRENGTH, &u);
    tu_ok(ok && u == MODEL_STRENGTH, "strength is %u", u);
    u = 0;
    ok = pu_get_uint(r.drbg, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    tu_ok(ok && u == MODEL_DEFAULT_RESEED_REQUESTS,
          "default reseed_requests is %u", u);
    tu_ok(EVP_RAND_get_state(r.drbg) == EVP_RAND_STATE_READY,
          "state is ready after instantiate");
    rig_free(&r);
}

/* Instantiate with personalization of lengths around the 44-byte chunk. */
static void test_instantiate(const unsigned char *seed, const char *seedname)
{
    static const size_t lens[] = { 0, 1, 7, 43, 44, 45, 88, 100, 1000 };
    unsigned char pers[1000];
    char what[96];
    struct rig r;
    size_t i;

    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        snprintf(what, sizeof(what), "instantiate seed %s, pers %zu bytes",
                 seedname, lens[i]);
        fill(pers, lens[i], (unsigned int)i + 3);
        if (!rig_new(&r, seed, lens[i] != 0 ? pers : NULL, lens[i], what))
            continue;
        tu_ok(rig_generate(&r, 64, 0, NULL, 0, what)
                  && rig_generate(&r, 1000, 0, NULL, 0, what),
              "%s", what);
        rig_free(&r);
    }
}

/*
 * The seed and the personalization must both reach the output: otherwise
 * the comparisons above could agree on something that ignores its input.
 */
static void test_inputs_matter(const unsigned char *seed_a,
                               const unsigned char *seed_b)
{
    unsigned char out[3][32], pers[44];
    struct rig r;
    int i, ok = 1;

    fill(pers, sizeof(pers), 9);
    for (i = 0; i < 3; i++) {
        if (!rig_new(&r, i == 1 ? seed_b : seed_a, i == 2 ? pers : NULL,
                     i == 2 ? sizeof(pers) : 0, "inputs matter"))
            return;
        if (!EVP_RAND_generate(r.drbg, out[i], sizeof(out[i]), MODEL_STRENGTH,
                               0, NULL, 0)) {
            tu_err_print();
            ok = 0;
        }
        rig_free(&r);
    }
    tu_ok(ok && memcmp(out[0], out[1], sizeof(out[0])) != 0
              && memcmp(out[0], out[2], sizeof(out[0])) != 0,
          "different seeds or personalization give different output");
}

/* Every request length 1..5000 in turn through one context. */
static void test_all_lengths(const unsigned char *seed)
{
    char what[64];
    struct rig r;
    size_t n;
    int ok = 1;

    if (!rig_new(&r, seed, NULL, 0, "lengths 1..5000"))
        return;
    for (n = 1; n <= 5000 && ok; n++) {
        snprintf(what, sizeof(what), "lengths 1..5000, request %zu", n);
        ok = rig_generate(&r, n, 0, NULL, 0, what);
    }
    tu_ok(ok, "requests of every length 1..5000 in one context");
    rig_free(&r);
}

/* ------------------------------------------------------------------------
 * Scenarios (test/vectors/drbg_scenarios.txt): the call sequences below
 * ------------------------------------------------------------------------ */

/*
 * Open test/vectors/|file|: in CHACHARNG_TEST_VECTORS when set, else
 * under the working directory or $srcdir.
 */
static FILE *open_vectors(const char *file, char *path, size_t pathlen)
{
    const char *dir = getenv("CHACHARNG_TEST_VECTORS");
    const char *srcdir = getenv("srcdir");
    FILE *f;

    if (dir != NULL) {
        /* told where they are: look nowhere else */
        snprintf(path, pathlen, "%s/%s", dir, file);
        return fopen(path, "r");
    }
    snprintf(path, pathlen, "test/vectors/%s", file);
    if ((f = fopen(path, "r")) != NULL || srcdir == NULL)
        return f;
    snprintf(path, pathlen, "%s/test/vectors/%s", srcdir, file);
    return fopen(path, "r");
}

static char *trim(char *s)
{
    char *e;

    while (*s == ' ' || *s == '\t')
        s++;
    e = s + strlen(s);
    while (e > s
           && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
        *--e = '\0';
    return s;
}

struct step {
    size_t n, adin, ent; /* request, additional input, reseed entropy */
    int pr;              /* prediction resistance */
};

struct scenario {
    char *name;
    struct step *step;
    size_t nsteps;
};

#define MAX_SCENARIOS 16

static struct scenario scenarios[MAX_SCENARIOS];
static size_t nscenarios;

/* Additional input and reseed entropy: filled afresh for every step. */
static unsigned char adin_buf[MODEL_MAX_ADIN], ent_buf[MODEL_MAX_ADIN];

/* "key=value ..." with keys n, adin, ent, pr; 1 if well formed. */
static int parse_step(char *v, struct step *st)
{
    char *tok, *save = NULL, *end;
    unsigned long long x;

    memset(st, 0, sizeof(*st));
    for (tok = strtok_r(v, " \t", &save); tok != NULL;
         tok = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(tok, '=');

        if (eq == NULL || eq[1] < '0' || eq[1] > '9')
            return 0;
        *eq = '\0';
        errno = 0;
        x = strtoull(eq + 1, &end, 10);
        if (errno != 0 || *end != '\0' || x > SIZE_MAX)
            return 0;
        if (strcmp(tok, "n") == 0)
            st->n = (size_t)x;
        else if (strcmp(tok, "adin") == 0 && x <= MODEL_MAX_ADIN)
            st->adin = (size_t)x;
        else if (strcmp(tok, "ent") == 0 && x <= MODEL_MAX_ADIN)
            st->ent = (size_t)x;
        else if (strcmp(tok, "pr") == 0 && x <= 1)
            st->pr = (int)x;
        else
            return 0;
    }
    return 1;
}

/* One line of the file into the scenario table; 1 if well formed. */
static int scenario_line(char *s)
{
    struct scenario *sc = nscenarios > 0 ? &scenarios[nscenarios - 1] : NULL;
    char *eq = strchr(s, '='), *key, *val, *end;
    unsigned long idx;
    struct step *grown;

    if (eq == NULL)
        return 0;
    *eq = '\0';
    key = trim(s);
    val = trim(eq + 1);
    if (strcmp(key, "Scenario") == 0) {
        if (nscenarios == MAX_SCENARIOS || val[0] == '\0')
            return 0;
        sc = &scenarios[nscenarios++];
        sc->name = strdup(val);
        return sc->name != NULL;
    }
    if (sc == NULL || strncmp(key, "Step.", 5) != 0 || key[5] < '0'
        || key[5] > '9')
        return 0;
    idx = strtoul(key + 5, &end, 10);
    /* numbered in order, without gaps */
    if (*end != '\0' || idx != sc->nsteps)
        return 0;
    grown = realloc(sc->step, (sc->nsteps + 1) * sizeof(*grown));
    if (grown == NULL)
        return 0;
    sc->step = grown;
    return parse_step(val, &sc->step[sc->nsteps++]);
}

static void scenarios_load(void)
{
    char path[4096], *line = NULL, *s;
    size_t cap = 0;
    unsigned int lineno = 0, bad = 0;
    FILE *f = open_vectors(SCENARIO_FILE, path, sizeof(path));

    if (!tu_ok(f != NULL, "scenarios file %s opens", path))
        return;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        s = trim(line);
        if (s[0] == '#' || s[0] == '\0')
            continue;
        if (!scenario_line(s)) {
            tu_diag("%s:%u: bad line", path, lineno);
            bad++;
        }
    }
    free(line);
    fclose(f);
    tu_ok(bad == 0 && nscenarios > 0, "scenarios file holds %zu scenarios",
          nscenarios);
}

static void scenarios_free(void)
{
    size_t i;

    for (i = 0; i < nscenarios; i++) {
        free(scenarios[i].name);
        free(scenarios[i].step);
    }
    memset(scenarios, 0, sizeof(scenarios));
    nscenarios = 0;
}

/* The scenario called |name|, or NULL after a failed test point. */
static const struct scenario *scenario(const char *name)
{
    size_t i;

    for (i = 0; i < nscenarios; i++)
        if (strcmp(scenarios[i].name, name) == 0)
            return &scenarios[i];
    tu_ok(0, "scenario %s is in %s", name, SCENARIO_FILE);
    return NULL;
}

/* First requests around the buffer and direct-path boundaries. */
static void test_first_requests(const unsigned char *seed)
{
    const struct scenario *sc = scenario("first-requests");
    char what[64];
    struct rig r;
    size_t i, n;

    for (i = 0; sc != NULL && i < sc->nsteps; i++) {
        n = sc->step[i].n;
        snprintf(what, sizeof(what), "first request %zu", n);
        if (!rig_new(&r, seed, NULL, 0, what))
            continue;
        /* the follow-ups show the state left behind is right too */
        tu_ok(rig_generate(&r, n, 0, NULL, 0, what)
                  && rig_generate(&r, 1, 0, NULL, 0, what)
                  && rig_generate(&r, 3000, 0, NULL, 0, what),
              "%s, then 1 and 3000", what);
        rig_free(&r);
    }
}

/* Additional input of assorted lengths, interleaved with plain requests. */
static void test_adin(const unsigned char *seed)
{
    const struct scenario *sc = scenario("adin");
    const struct step *st;
    unsigned char pers[20];
    char what[80];
    struct rig r;
    size_t i;

    fill(pers, sizeof(pers), 17);
    if (sc == NULL
        || !rig_new(&r, seed, pers, sizeof(pers), "additional input"))
        return;
    for (i = 0; i < sc->nsteps; i++) {
        st = &sc->step[i];
        snprintf(what, sizeof(what),
                 "additional input step %zu: "
                 "%zu bytes, adin %zu",
                 i, st->n, st->adin);
        fill(adin_buf, st->adin, (unsigned int)i + 40);
        tu_ok(rig_generate(&r, st->n, 0, st->adin != 0 ? adin_buf : NULL,
                           st->adin, what),
              "%s", what);
    }
    rig_free(&r);
}

/* Prediction resistance reseeds before serving, with or without adin. */
static void test_pred_res(const unsigned char *seed)
{
    const struct scenario *sc = scenario("pred-res");
    const struct step *st;
    unsigned int asked = 0;
    char what[96];
    struct rig r;
    size_t i;

    if (sc == NULL || !rig_new(&r, seed, NULL, 0, "prediction resistance"))
        return;
    for (i = 0; i < sc->nsteps; i++) {
        st = &sc->step[i];
        snprintf(what, sizeof(what),
                 "prediction resistance step %zu: "
                 "%zu bytes, adin %zu, pred_res %d",
                 i, st->n, st->adin, st->pr);
        fill(adin_buf, st->adin, (unsigned int)i + 60);
        tu_ok(rig_generate(&r, st->n, st->pr, st->adin != 0 ? adin_buf : NULL,
                           st->adin, what),
              "%s", what);
        asked += (unsigned int)st->pr;
    }
    /* the counter checks must have seen every one that was asked for */
    tu_ok(r.m.seeds - r.seeds0 == asked && rig_counter_ok(&r, "pred_res total"),
          "prediction resistance reseeded %u times", asked);
    rig_free(&r);
}

/* EVP_RAND_reseed with and without caller entropy and additional input. */
static void test_explicit_reseed(const unsigned char *seed)
{
    const struct scenario *sc = scenario("explicit-reseed");
    const struct step *st;
    char what[96];
    struct rig r;
    size_t i;

    if (sc == NULL || !rig_new(&r, seed, NULL, 0, "explicit reseed"))
        return;
    /* leave part of a refill unread, which every reseed must discard */
    if (!tu_ok(rig_generate(&r, 10, 0, NULL, 0, "explicit reseed"),
               "explicit reseed: first request")) {
        rig_free(&r);
        return;
    }
    for (i = 0; i < sc->nsteps; i++) {
        st = &sc->step[i];
        snprintf(what, sizeof(what),
                 "explicit reseed step %zu: ent %zu, "
                 "adin %zu, pred_res %d, then %zu bytes",
                 i, st->ent, st->adin, st->pr, st->n);
        fill(ent_buf, st->ent, (unsigned int)i + 80);
        fill(adin_buf, st->adin, (unsigned int)i + 90);
        tu_ok(rig_reseed(&r, st->pr, st->ent != 0 ? ent_buf : NULL, st->ent,
                         st->adin != 0 ? adin_buf : NULL, st->adin, what)
                  && rig_generate(&r, st->n, 0, NULL, 0, what),
              "%s", what);
    }
    rig_free(&r);
}

/*
 * reseed_requests = 3: three provider calls per seed, the fourth reseeds
 * first (the scenario's comment counts the calls).
 */
static void test_reseed_requests(const unsigned char *seed)
{
    const struct scenario *sc = scenario("reseed-requests");
    const unsigned int want_reseeds = 4;
    unsigned char adin[3] = { 1, 2, 3 };
    unsigned int u = 0;
    char what[80];
    struct rig r;
    size_t i;
    int ok = 1;

    if (sc == NULL || !rig_new(&r, seed, NULL, 0, "reseed_requests"))
        return;
    ok = pu_set_uint(r.drbg, OSSL_DRBG_PARAM_RESEED_REQUESTS, 3)
         && pu_get_uint(r.drbg, OSSL_DRBG_PARAM_RESEED_REQUESTS, &u);
    tu_ok(ok && u == 3, "reseed_requests set to 3 reads back %u", u);
    r.m.reseed_requests = 3;
    ok = 1;
    for (i = 0; i < sc->nsteps && ok; i++) {
        snprintf(what, sizeof(what), "reseed_requests=3 step %zu (%zu bytes)",
                 i, sc->step[i].n);
        /* adin on odd steps: a reseed must absorb it once, after E */
        ok = rig_generate(&r, sc->step[i].n, 0, i % 2 ? adin : NULL,
                          i % 2 ? sizeof(adin) : 0, what);
    }
    tu_ok(ok, "reseed_requests=3: %zu requests match the model", i);
    tu_ok(r.m.seeds - r.seeds0 == want_reseeds
              && rig_counter_ok(&r, "reseed_requests total"),
          "reseed_requests=3: reseed_counter advanced %u times", want_reseeds);
    rig_free(&r);
}

/*
 * 16 MiB since the last seed, checked before each call: 16 calls of 1 MiB
 * reach the mark exactly, so the 17th reseeds first.
 */
static void test_16mib(const unsigned char *seed)
{
    char what[64];
    struct rig r;
    int i, ok = 1;

    if (!rig_new(&r, seed, NULL, 0, "16 MiB"))
        return;
    for (i = 1; i <= 17 && ok; i++) {
        snprintf(what, sizeof(what), "16 MiB: call %d of 1 MiB", i);
        ok = rig_generate(&r, MODEL_MAX_REQUEST, 0, NULL, 0, what);
        if (ok && i == 16 && r.m.seeds != r.seeds0) {
            tu_diag("16 MiB: the model reseeded before call 17");
            ok = 0;
        }
    }
    tu_ok(ok && r.m.seeds - r.seeds0 == 1,
          "17 calls of 1 MiB: the 17th reseeds first (16 MiB rule)");
    rig_free(&r);
}

/*
 * Limits crossed while the buffer holds the next request's bytes: the
 * request path must decide before serving from the buffer.  The context
 * has a TEST-RAND parent (no reseed counter to follow), so its small
 * requests take the inline path.
 */
static void test_buffered_limits(const unsigned char *seed)
{
    const struct scenario *sc = scenario("buffered-limits");
    const struct step *st;
    unsigned int asked = 0;
    char what[96];
    struct rig r;
    size_t i;
    int ok = 1, crossed = 0;

    if (sc == NULL || !rig_new(&r, seed, NULL, 0, "buffered limits"))
        return;
    for (i = 0; i < sc->nsteps && ok; i++) {
        st = &sc->step[i];
        snprintf(what, sizeof(what),
                 "buffered limits step %zu: %zu bytes, pred_res %d", i, st->n,
                 st->pr);
        /* the step that finds 16 MiB passed with its bytes buffered */
        if (r.m.bytes >= MODEL_RESEED_BYTES && r.m.avail >= st->n)
            crossed = 1;
        ok = rig_generate(&r, st->n, st->pr, NULL, 0, what);
        asked += (unsigned int)st->pr;
    }
    tu_ok(ok, "buffered limits: %zu requests match the model", i);
    tu_ok(crossed, "buffered limits: a request found 16 MiB passed with its "
                   "bytes buffered");
    /* the 16 MiB reseed and the asked ones */
    tu_ok(r.m.seeds - r.seeds0 == 1 + asked
              && rig_counter_ok(&r, "buffered limits total"),
          "buffered limits: reseeded %u times", 1 + asked);
    rig_free(&r);
}

/*
 * Requests above max_request are split by the EVP layer.  Seven 2.5 MiB
 * requests with additional input cross the 16 MiB mark inside the seventh
 * (after its first chunk), and a last one asks for prediction resistance,
 * which only its first chunk carries.
 */
static void test_split(const unsigned char *seed)
{
    const size_t big = 2621440;
    unsigned char adin[50];
    char what[80];
    struct rig r;
    int i;

    fill(adin, sizeof(adin), 123);
    if (!rig_new(&r, seed, NULL, 0, "split")) {
        return;
    }
    for (i = 1; i <= 8; i++) {
        snprintf(what, sizeof(what), "2.5 MiB request %d with adin%s", i,
                 i == 8 ? " and pred_res" : "");
        tu_ok(rig_generate(&r, big, i == 8, adin, sizeof(adin), what), "%s",
              what);
    }
    /* the 16 MiB reseed inside request 7 and the pred_res one in 8 */
    tu_ok(r.m.seeds - r.seeds0 == 2 && rig_counter_ok(&r, "split total"),
          "2.5 MiB requests reseeded twice");
    rig_free(&r);

    if (!rig_new(&r, seed, NULL, 0, "split, no adin"))
        return;
    tu_ok(rig_generate(&r, 7, 0, NULL, 0, "split, no adin")
              && rig_generate(&r, big, 0, NULL, 0, "split, no adin")
              && rig_generate(&r, 100, 0, NULL, 0, "split, no adin"),
          "7 bytes, 2.5 MiB, 100 bytes without adin");
    rig_free(&r);
}

/* ------------------------------------------------------------------------
 * Pinned vectors (test/vectors/drbg_kat.txt)
 * ------------------------------------------------------------------------ */

struct kat {
    unsigned int line;
    char *name;
    unsigned char *seed, *pers, *adin, *output;
    size_t seedlen, perslen, adinlen, outputlen;
    size_t *req;
    size_t nreq;
    int have_output, bad;
};

static void kat_clear(struct kat *k)
{
    free(k->name);
    free(k->seed);
    free(k->pers);
    free(k->adin);
    free(k->output);
    free(k->req);
    memset(k, 0, sizeof(*k));
}

static int parse_requests(struct kat *k, const char *v)
{
    const char *s = v;
    char *end;
    unsigned long long n;

    while (*s != '\0') {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0')
            break;
        if (*s < '0' || *s > '9')
            return 0;
        errno = 0;
        n = strtoull(s, &end, 10);
        if (errno != 0 || n > 64 * MODEL_MAX_REQUEST)
            return 0;
        k->req = realloc(k->req, (k->nreq + 1) * sizeof(*k->req));
        if (k->req == NULL)
            return 0;
        k->req[k->nreq++] = (size_t)n;
        s = end;
    }
    return k->nreq > 0;
}

/* Apply one "key = value" line to |k|; 0 on an unknown key or bad value. */
static int kat_set(struct kat *k, const char *key, const char *v)
{
    if (strcmp(key, "name") == 0) {
        free(k->name);
        k->name = strdup(v);
        return k->name != NULL;
    }
    if (strcmp(key, "seed") == 0)
        return tu_unhex_alloc(v, &k->seed, &k->seedlen)
               && k->seedlen == MODEL_SEED_LEN;
    if (strcmp(key, "pers") == 0)
        return tu_unhex_alloc(v, &k->pers, &k->perslen);
    if (strcmp(key, "adin") == 0)
        return tu_unhex_alloc(v, &k->adin, &k->adinlen);
    if (strcmp(key, "requests") == 0)
        return parse_requests(k, v);
    if (strcmp(key, "output") == 0) {
        k->have_output = 1;
        return tu_unhex_alloc(v, &k->output, &k->outputlen);
    }
    return 0;
}

/*
 * Run one vector: the model must give the pinned bytes, and so must the
 * provider.  A vector without an output line fails, printing the model's
 * value (this is how the file's values were made).
 */
static void kat_run(struct kat *k)
{
    const char *name = k->name != NULL ? k->name : "(unnamed)";
    unsigned char *got, *want;
    size_t last, shown, longest = 0, i;
    struct model m;
    struct rig r;
    int ok;

    if (k->bad || k->seed == NULL || k->nreq == 0) {
        tu_ok(0, "vector %s (line %u): malformed or incomplete", name, k->line);
        return;
    }
    last = k->req[k->nreq - 1];
    shown = tu_min_size(last, 64);
    for (i = 0; i < k->nreq; i++)
        longest = k->req[i] > longest ? k->req[i] : longest;

    /* the model alone, from the file's inputs */
    if (!model_init(&m, chacha20, k->seed)) {
        tu_ok(0, "vector %s: model", name);
        return;
    }
    want = tu_xmalloc(longest);
    model_instantiate(&m, k->pers, k->perslen);
    for (i = 0; i < k->nreq; i++)
        model_evp_generate(&m, want, k->req[i], 0, k->adin, k->adinlen);
    ok = !m.failed && k->have_output && k->outputlen == shown
         && memcmp(want, k->output, shown) == 0;
    if (!ok) {
        tu_diag("vector %s: pinned output %s; the model gives:", name,
                k->have_output ? "differs" : "missing");
        tu_diag_hex("output", want, shown);
    }
    tu_ok(ok, "vector %s: model matches pinned output", name);
    model_free(&m);

    /* the provider, through the same path as every other test */
    if (rig_new(&r, k->seed, k->pers, k->perslen, name)) {
        got = tu_xmalloc(longest);
        ok = 1;
        for (i = 0; i < k->nreq && ok; i++) {
            if (!EVP_RAND_generate(r.drbg, got, k->req[i], MODEL_STRENGTH, 0,
                                   k->adin, k->adinlen)) {
                tu_err_print();
                ok = 0;
            }
        }
        ok = ok && k->have_output && k->outputlen == shown
             && same_bytes(got, k->output, shown, name);
        tu_ok(ok, "vector %s: provider matches pinned output", name);
        free(got);
        rig_free(&r);
    }
    free(want);
}

/*
 * File format: "#" comments; a vector is a run of "key = value" lines
 * (name, seed, pers, adin, requests, output) ended by a blank line or the
 * end of the file.  See the file's own header for the meaning.
 */
static void test_vectors(void)
{
    static char empty[1];
    char path[4096], *line = NULL, *s, *eq;
    size_t cap = 0;
    unsigned int lineno = 0, nvec = 0;
    struct kat k;
    FILE *f;

    memset(&k, 0, sizeof(k));
    f = open_vectors(KAT_FILE, path, sizeof(path));
    if (!tu_ok(f != NULL, "vectors file %s opens", path))
        return;
    for (;;) {
        int eof = getline(&line, &cap, f) < 0;

        lineno++;
        s = eof ? empty : trim(line);
        if (s[0] == '#')
            continue;
        if (s[0] == '\0') {
            if (k.line != 0) {
                kat_run(&k);
                nvec++;
                kat_clear(&k);
            }
            if (eof)
                break;
            continue;
        }
        if (k.line == 0)
            k.line = lineno;
        eq = strchr(s, '=');
        if (eq == NULL) {
            k.bad = 1;
            continue;
        }
        *eq = '\0';
        if (!kat_set(&k, trim(s), trim(eq + 1))) {
            tu_diag("%s:%u: bad line", path, lineno);
            k.bad = 1;
        }
    }
    free(line);
    fclose(f);
    tu_ok(nvec >= 6, "vectors file holds %u vectors", nvec);
}

/* ------------------------------------------------------------------------ */

static void body(void)
{
    unsigned char seed_a[MODEL_SEED_LEN], seed_b[MODEL_SEED_LEN];

    tu_unhex(seed_a, MODEL_SEED_LEN, seed_a_hex);
    tu_unhex(seed_b, MODEL_SEED_LEN, seed_b_hex);

    if (!tu_ok(pu_env_init(&env),
               "library context with providers default "
               "and chacharng, TEST-RAND and CHACHA20-DRBG fetched"))
        return;
    chacha20 = EVP_CIPHER_fetch(env.libctx, "ChaCha20", "provider=default");
    if (!tu_ok(chacha20 != NULL, "fetch ChaCha20 from the default provider")) {
        tu_err_print();
        goto end;
    }

    scenarios_load();
    test_model_cipher();
    test_params(seed_a);
    test_instantiate(seed_a, "A");
    test_instantiate(seed_b, "B");
    test_inputs_matter(seed_a, seed_b);
    test_all_lengths(seed_a);
    test_first_requests(seed_b);
    test_adin(seed_a);
    test_pred_res(seed_b);
    test_explicit_reseed(seed_a);
    test_reseed_requests(seed_b);
    test_16mib(seed_a);
    test_buffered_limits(seed_a);
    test_split(seed_b);
    test_vectors();
    scenarios_free();

end:
    EVP_CIPHER_free(chacha20);
    chacha20 = NULL;
    pu_env_free(&env);
}

int main(void)
{
    return tu_main_per_impl(body);
}
