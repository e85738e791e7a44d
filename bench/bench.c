/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Single-thread throughput of CHACHA20-DRBG, once per ChaCha20 kernel, next
 * to what an application could use instead: OpenSSL's CTR-DRBG, RAND_bytes
 * with and without chacharng configured, getrandom(2), and OpenSSL's bare
 * ChaCha20 keystream.  Then each kernel called directly (MB/s and core
 * cycles per byte, the core clock measured around every round), short
 * kernel calls, the cost of kernel mixing (off against on), and the
 * per-call floor (against a provider that does nothing).  Every table
 * measures its generators in interleaved rounds and prints the median and
 * the fastest round.  MB/s is 10^6 bytes per second.  This is not a test:
 * the project's speed targets are printed for information only and the exit
 * status does not depend on them.
 */
#define _GNU_SOURCE /* syscall(), SYS_getrandom */

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "bench_cpu.h"
#include "bench_narrow.h"
#include "bench_noop.h"
#include "chacha.h"
#include "kmix.h"

#define DRBG_STRENGTH 256
#define MAX_COLUMNS 16
#define MAX_LEN ((size_t)1 << 20)
#define ENV_CONF "CHACHARNG_BENCH_CONF"

/*
 * A batch of calls between two clock reads lasts at least this long, so
 * that reading the clock (a vDSO call, or a system call on some virtual
 * machines) costs well under 0.1% of the measured time.
 */
#define BATCH_SECS 0.001

/*
 * Rounds per cell and their length: normal, then for -q.  More and
 * shorter rounds rather than a few long ones: on a shared machine a
 * round that loses the CPU is one outlier the median discards.
 */
#define RUNS_FULL 9
#define SECS_FULL 0.08
#define RUNS_QUICK 3
#define SECS_QUICK 0.03
#define MAX_RUNS 32 /* the most rounds any table takes */

static int opt_runs = RUNS_FULL;
static double opt_secs = SECS_FULL;

/* Every call's output feeds this, so no call can be optimised away. */
static volatile unsigned char sink;

/* EVP ChaCha20 encrypts this, so its output is the bare keystream. */
static unsigned char *zeros;

static const struct row {
    const char *label;
    size_t len;
} rows[] = {
    { "word", 4 },       { "buf(16)", 16 },    { "buf(32)", 32 },
    { "buf(48)", 48 },   { "buf(64)", 64 },    { "buf(80)", 80 },
    { "buf(96)", 96 },   { "buf(112)", 112 },  { "buf(128)", 128 },
    { "256 B", 256 },    { "512 B", 512 },     { "1 KiB", 1024 },
    { "2 KiB", 2048 },   { "4 KiB", 4096 },    { "16 KiB", 16384 },
    { "64 KiB", 65536 }, { "1 MiB", MAX_LEN },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* Write |len| bytes to |buf|.  Returns 1 on success, 0 on failure. */
typedef int bench_fn(void *arg, unsigned char *buf, size_t len);

struct column {
    char title[16]; /* column heading and its name for -c */
    bench_fn *fn;
    int (*rewind)(void *arg); /* if set, called before each row */
    void *arg;
    char why[512];      /* set when the column cannot run: the reason */
    double mbps[NROWS]; /* median MB/s per row */
};

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

static void die(const char *fmt, ...) PRINTF_LIKE(1, 2);

static void die(const char *fmt, ...)
{
    va_list ap;

    fflush(stdout);
    fputs("bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    ERR_print_errors_fp(stderr);
    exit(EXIT_FAILURE);
}

/*
 * Put the oldest queued OpenSSL error (with its data) into |buf| and clear
 * the queue: the oldest one names the cause, later ones the callers.
 */
static void take_error(char *buf, size_t n)
{
    const char *data = NULL;
    unsigned long e;
    int flags = 0;

    e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags);
    if (e == 0) {
        snprintf(buf, n, "no error reported");
        return;
    }
    ERR_error_string_n(e, buf, n);
    if (data != NULL && (flags & ERR_TXT_STRING) != 0 && *data != '\0') {
        size_t used = strlen(buf);

        snprintf(buf + used, n - used, " (%s)", data);
    }
    ERR_clear_error();
}

static double now_secs(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        die("clock_gettime(CLOCK_MONOTONIC): %s", strerror(errno));
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The time stamp counter gives "ticks per byte".  It runs at a fixed rate,
 * not at the core clock, so it equals cycles per byte only when the core
 * runs at the TSC rate; it is shown only when the CPU says the rate is
 * constant and the counter keeps running in idle states.
 */
#if defined(__x86_64__)
static uint64_t read_tsc(void)
{
    uint32_t lo, hi;

    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#else
static uint64_t read_tsc(void)
{
    return 0;
}
#endif

static int tsc_usable;

static int has_flag(const char *flags, const char *flag)
{
    size_t len = strlen(flag);
    const char *p = flags;

    while ((p = strstr(p, flag)) != NULL) {
        if ((p == flags || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return 1;
        p += len;
    }
    return 0;
}

static int tsc_check(void)
{
    char flags[4096];

#if defined(__x86_64__)
    if (bench_cpuinfo_field("flags", flags, sizeof(flags))
        && has_flag(flags, "constant_tsc") && has_flag(flags, "nonstop_tsc"))
        return 1;
#else
    (void)flags;
#endif
    return 0;
}

/* TSC ticks per second, over a short busy wait. */
static double tsc_rate(void)
{
    double t0 = now_secs(), t1;
    uint64_t c0 = read_tsc(), c1;

    do {
        t1 = now_secs();
    } while (t1 - t0 < 0.05);
    c1 = read_tsc();
    return (double)(c1 - c0) / (t1 - t0);
}

/* ------------------------------------------------------------------------
 * Measuring
 * ------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Call |fn| |batch| times; returns a byte of each output folded together. */
static unsigned char run_batch(bench_fn *fn, void *arg, unsigned char *buf,
                               size_t len, unsigned long batch,
                               const char *what, const char *size)
{
    unsigned char acc = 0;
    unsigned long i;

    for (i = 0; i < batch; i++) {
        if (!fn(arg, buf, len))
            die("%s failed for a %s request (%zu bytes)", what, size, len);
        acc ^= buf[len - 1];
    }
    return acc;
}

/*
 * One generator at one request size, measured in rounds: each round is a
 * loop of whole batches lasting at least the round's length, and every
 * job of a table takes its round before any job takes its next one.  A
 * disturbance (a neighbour's build, a clock change) then spoils one round
 * of every job alike, never a whole cell, and the median over rounds
 * drops it.
 */
struct job {
    bench_fn *fn;
    void *arg;
    size_t len;
    const char *what, *size; /* for error messages */
    unsigned long batch;     /* calls between two clock reads */
    double mbps[MAX_RUNS];   /* per round */
    double fast[MAX_RUNS];   /* seconds of the round's fastest batch */
    double hz[MAX_RUNS];     /* core clock around each round; 0 if unknown */
};

/*
 * The batch size, found by doubling until a batch lasts BATCH_SECS; this
 * doubles as the warm-up (caches, branch predictors, lazily seeded DRBGs,
 * the AVX clock change).
 */
static void calibrate(struct job *j, unsigned char *buf)
{
    unsigned long batch = 1;
    double t0, t1;

    for (;;) {
        t0 = now_secs();
        sink ^= run_batch(j->fn, j->arg, buf, j->len, batch, j->what, j->size);
        t1 = now_secs();
        if (t1 - t0 >= BATCH_SECS || batch >= (1ul << 30))
            break;
        batch *= 2;
    }
    j->batch = batch;
}

/*
 * MB/s of one round of |j| lasting at least |secs|; the time of its
 * fastest batch goes to |*fast|.
 */
static double one_round(struct job *j, unsigned char *buf, double secs,
                        double *fast)
{
    uint64_t calls = 0;
    unsigned char acc = 0;
    double t0 = now_secs(), t1 = t0, tb;

    *fast = 1e30;
    do {
        tb = t1;
        acc ^=
            run_batch(j->fn, j->arg, buf, j->len, j->batch, j->what, j->size);
        calls += j->batch;
        t1 = now_secs();
        if (t1 - tb < *fast)
            *fast = t1 - tb;
    } while (t1 - t0 < secs);
    sink ^= acc;
    return (double)calls * (double)j->len / (t1 - t0) / 1e6;
}

/*
 * |runs| rounds of |secs| for each of the |n| jobs, round by round, the
 * order rotating from round to round so that no job always follows the
 * same one.  With |clock| set, the core clock is measured just before and
 * just after each round (bench_core_hz) and their mean kept with it.
 */
static void run_jobs(struct job *jobs, size_t n, int runs, double secs,
                     int clock, unsigned char *buf)
{
    size_t i;
    int r;

    for (i = 0; i < n; i++)
        calibrate(&jobs[i], buf);
    for (r = 0; r < runs; r++)
        for (i = 0; i < n; i++) {
            struct job *j = &jobs[(i + (size_t)r) % n];
            double h0 = clock ? bench_core_hz() : 0.0;

            j->mbps[r] = one_round(j, buf, secs, &j->fast[r]);
            j->hz[r] = clock ? (h0 + bench_core_hz()) / 2 : 0.0;
        }
}

/* The median and the largest of |v[0..n)| (n <= MAX_RUNS). */
static double median_of(const double *v, int n)
{
    double t[MAX_RUNS];

    memcpy(t, v, (size_t)n * sizeof(t[0]));
    qsort(t, (size_t)n, sizeof(t[0]), cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static double max_of(const double *v, int n)
{
    double m = v[0];
    int i;

    for (i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static double min_of(const double *v, int n)
{
    double m = v[0];
    int i;

    for (i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

/*
 * Core cycles per byte of each round of |j| into |cpb|: the seconds per
 * byte of the round's fastest batch times the core clock measured around
 * the round.  The fastest batch, not the round: a batch lasts about
 * BATCH_SECS, so on a busy machine some batch of each round likely ran
 * without losing the CPU, which a whole round rarely does, and a cycle
 * count should not include another process's time.  0 if the clock is
 * unknown.
 */
static int cycles_per_byte(const struct job *j, int runs, double *cpb)
{
    int r;

    for (r = 0; r < runs; r++) {
        if (j->hz[r] <= 0)
            return 0;
        cpb[r] = j->fast[r] * j->hz[r] / ((double)j->batch * (double)j->len);
    }
    return 1;
}

/* ------------------------------------------------------------------------
 * The generators
 * ------------------------------------------------------------------------ */

static int gen_evp_rand(void *arg, unsigned char *buf, size_t len)
{
    return EVP_RAND_generate(arg, buf, len, DRBG_STRENGTH, 0, NULL, 0);
}

static int gen_rand_bytes(void *arg, unsigned char *buf, size_t len)
{
    return RAND_bytes_ex(arg, buf, len, 0);
}

/*
 * The system call itself, not libc's getrandom(): newer glibc serves that
 * from a vDSO generator, which would be a different comparison.  One call
 * for the whole request; the loop only finishes a short read (the kernel
 * may stop after 256 bytes when a signal arrives).
 */
static int gen_getrandom(void *arg, unsigned char *buf, size_t len)
{
    (void)arg;
    while (len > 0) {
        long got = syscall(SYS_getrandom, buf, len, 0);

        if (got < 0) {
            if (errno == EINTR)
                continue;
            return 0;
        }
        buf += got;
        len -= (size_t)got;
    }
    return 1;
}

/* The key and IV do not change the speed; any fixed value will do. */
static const unsigned char evp_key[32] = { 1, 2, 3 }, evp_iv[16] = { 0 };

/*
 * Back to block counter 0 at the start of a block.  Without it, the odd
 * lengths of earlier rows leave the stream mid-block and every later call
 * pays for a partial block at each end: not the cipher's best speed.
 */
static int rewind_evp_chacha20(void *arg)
{
    return EVP_EncryptInit_ex2(arg, NULL, NULL, evp_iv, NULL);
}

static int gen_evp_chacha20(void *arg, unsigned char *buf, size_t len)
{
    int outl = 0;

    if (!EVP_EncryptUpdate(arg, buf, &outl, zeros, (int)len))
        return 0;
    return (size_t)outl == len;
}

struct raw_arg {
    const struct chacha_impl *impl;
    uint32_t state[CHACHA_STATE_WORDS];
    size_t nblocks;
};

/* One kernel call; the counter moves on as a real caller's would. */
static int gen_raw_kernel(void *varg, unsigned char *buf, size_t len)
{
    struct raw_arg *a = varg;

    (void)len; /* always a->nblocks * 64 */
    a->impl->blocks(buf, a->state, a->nblocks);
    a->state[12] += (uint32_t)a->nblocks;
    return 1;
}

/* ------------------------------------------------------------------------
 * Setting up the columns
 * ------------------------------------------------------------------------ */

static struct column cols[MAX_COLUMNS];
static size_t ncols;

static struct column *add_column(const char *title)
{
    struct column *c;

    if (ncols == MAX_COLUMNS)
        die("too many columns");
    c = &cols[ncols++];
    memset(c, 0, sizeof(*c));
    snprintf(c->title, sizeof(c->title), "%s", title);
    return c;
}

static struct column *find_column(const char *title)
{
    size_t i;

    for (i = 0; i < ncols; i++)
        if (strcmp(cols[i].title, title) == 0)
            return &cols[i];
    return NULL;
}

static int get_utf8_param(EVP_RAND_CTX *ctx, const char *key, char *out,
                          size_t n)
{
    OSSL_PARAM params[2];

    params[0] = OSSL_PARAM_construct_utf8_string(key, out, n);
    params[1] = OSSL_PARAM_construct_end();
    return EVP_RAND_CTX_get_params(ctx, params);
}

/*
 * A parentless CHACHA20-DRBG context forced to |impl| through its `impl`
 * ctx param, instantiated at strength 256.  The param is read back: a
 * column must never claim a kernel it did not run.
 */
static void setup_kernel_column(struct column *col, EVP_RAND *chacha,
                                const struct chacha_impl *impl)
{
    EVP_RAND_CTX *ctx;
    OSSL_PARAM params[2];
    char name[32], got[32], err[200];

    snprintf(name, sizeof(name), "%s", impl->name);
    ctx = EVP_RAND_CTX_new(chacha, NULL);
    if (ctx == NULL)
        die("EVP_RAND_CTX_new(CHACHA20-DRBG) failed");
    params[0] = OSSL_PARAM_construct_utf8_string("impl", name, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_set_params(ctx, params)) {
        /* e.g. the module was built before this kernel was added */
        take_error(err, sizeof(err));
        snprintf(col->why, sizeof(col->why), "the provider refused impl=%s: %s",
                 name, err);
        EVP_RAND_CTX_free(ctx);
        return;
    }
    if (!EVP_RAND_instantiate(ctx, DRBG_STRENGTH, 0, NULL, 0, NULL))
        die("instantiating CHACHA20-DRBG (impl=%s) failed", name);
    if (!get_utf8_param(ctx, "impl", got, sizeof(got)))
        die("reading back the impl param of CHACHA20-DRBG failed");
    if (strcmp(got, name) != 0)
        die("CHACHA20-DRBG set to impl=%s reports impl=%s", name, got);
    col->fn = gen_evp_rand;
    col->arg = ctx;
}

static char ctr_note[160];

/*
 * OpenSSL's CTR-DRBG with AES-256-CTR, fed by a SEED-SRC parent as
 * libcrypto's own primary DRBG is; without SEED-SRC it runs parentless,
 * which on 3.0 seeds straight from the OS through the core.  Its reseed
 * interval is set to CHACHA20-DRBG's (|reseed_requests|, which is also what
 * libcrypto gives its public and private DRBGs) instead of a standalone
 * context's default, so both pay for reseeding equally often.
 */
static void setup_ctr_column(struct column *col, OSSL_LIB_CTX *libctx,
                             unsigned int reseed_requests,
                             EVP_RAND_CTX **parent_out)
{
    EVP_RAND *ctr, *src;
    EVP_RAND_CTX *ctx, *parent = NULL;
    OSSL_PARAM params[3];
    char cipher[] = "AES-256-CTR", err[200];

    ctr = EVP_RAND_fetch(libctx, "CTR-DRBG", NULL);
    if (ctr == NULL) {
        take_error(err, sizeof(err));
        snprintf(col->why, sizeof(col->why), "no CTR-DRBG: %s", err);
        return;
    }
    src = EVP_RAND_fetch(libctx, "SEED-SRC", NULL);
    if (src != NULL) {
        parent = EVP_RAND_CTX_new(src, NULL);
        if (parent != NULL
            && !EVP_RAND_instantiate(parent, 0, 0, NULL, 0, NULL)) {
            EVP_RAND_CTX_free(parent);
            parent = NULL;
        }
        EVP_RAND_free(src);
    }
    ERR_clear_error();
    ctx = EVP_RAND_CTX_new(ctr, parent);
    EVP_RAND_free(ctr);
    if (ctx == NULL)
        die("EVP_RAND_CTX_new(CTR-DRBG) failed");
    params[0] = OSSL_PARAM_construct_utf8_string("cipher", cipher, 0);
    params[1] = OSSL_PARAM_construct_uint("reseed_requests", &reseed_requests);
    params[2] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_set_params(ctx, params)
        || !EVP_RAND_instantiate(ctx, DRBG_STRENGTH, 0, NULL, 0, NULL)) {
        take_error(err, sizeof(err));
        snprintf(col->why, sizeof(col->why), "CTR-DRBG set-up failed: %s", err);
        EVP_RAND_CTX_free(ctx);
        EVP_RAND_CTX_free(parent);
        return;
    }
    snprintf(ctr_note, sizeof(ctr_note), "%s, reseed every %u requests",
             parent != NULL ? "SEED-SRC parent" : "no parent (OS entropy)",
             reseed_requests);
    col->fn = gen_evp_rand;
    col->arg = ctx;
    *parent_out = parent;
}

static char conf_note[200];
static char def_note[100];

/*
 * A library context configured by |path| (openssl.cnf.sample), whose
 * RAND_bytes must then come from chacharng's CHACHA20-DRBG: checked, so
 * the column cannot silently measure libcrypto's default instead.
 */
static OSSL_LIB_CTX *setup_conf_column(struct column *col, const char *path)
{
    OSSL_LIB_CTX *ctx;
    EVP_RAND_CTX *pub;
    const EVP_RAND *rand;
    const char *alg, *prov;
    char impl[32] = "?", err[200];

    if (path == NULL) {
        snprintf(col->why, sizeof(col->why),
                 "no config: give the path of openssl.cnf.sample as the"
                 " argument or in " ENV_CONF);
        return NULL;
    }
    ctx = OSSL_LIB_CTX_new();
    if (ctx == NULL)
        die("OSSL_LIB_CTX_new failed");
    if (!OSSL_LIB_CTX_load_config(ctx, path)) {
        take_error(err, sizeof(err));
        snprintf(col->why, sizeof(col->why), "loading %s failed: %s", path,
                 err);
        OSSL_LIB_CTX_free(ctx);
        return NULL;
    }
    pub = RAND_get0_public(ctx);
    rand = pub != NULL ? EVP_RAND_CTX_get0_rand(pub) : NULL;
    if (rand == NULL) {
        take_error(err, sizeof(err));
        snprintf(col->why, sizeof(col->why), "no public DRBG with %s: %s", path,
                 err);
        OSSL_LIB_CTX_free(ctx);
        return NULL;
    }
    alg = EVP_RAND_get0_name(rand);
    prov = OSSL_PROVIDER_get0_name(EVP_RAND_get0_provider(rand));
    if (strcmp(alg, "CHACHA20-DRBG") != 0 || strcmp(prov, "chacharng") != 0) {
        snprintf(col->why, sizeof(col->why),
                 "%s makes RAND_bytes use %s from %s, not chacharng", path, alg,
                 prov);
        OSSL_LIB_CTX_free(ctx);
        return NULL;
    }
    get_utf8_param(pub, "impl", impl, sizeof(impl));
    snprintf(conf_note, sizeof(conf_note), "CHACHA20-DRBG, impl=%s", impl);
    col->fn = gen_rand_bytes;
    col->arg = ctx;
    return ctx;
}

static EVP_CIPHER_CTX *setup_evp_chacha20(struct column *col,
                                          OSSL_LIB_CTX *libctx)
{
    EVP_CIPHER *cipher;
    EVP_CIPHER_CTX *ctx;
    char err[200];

    cipher = EVP_CIPHER_fetch(libctx, "ChaCha20", NULL);
    if (cipher == NULL) {
        take_error(err, sizeof(err));
        snprintf(col->why, sizeof(col->why), "no EVP ChaCha20: %s", err);
        return NULL;
    }
    ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL || !EVP_EncryptInit_ex2(ctx, cipher, evp_key, evp_iv, NULL))
        die("EVP ChaCha20 set-up failed");
    EVP_CIPHER_free(cipher);
    col->fn = gen_evp_chacha20;
    col->rewind = rewind_evp_chacha20;
    col->arg = ctx;
    return ctx;
}

/* ------------------------------------------------------------------------
 * Kernel mixing: its cost, off against on
 * ------------------------------------------------------------------------ */

#define KMIX_RUNS 11 /* at least; interleaved, so drift hits both alike */

static size_t row_index(size_t len);

static const char *libc_name(void)
{
#ifdef __GLIBC__
    static char v[32];

    snprintf(v, sizeof(v), "glibc %s", gnu_get_libc_version());
    return v;
#else
    return "not glibc";
#endif
}

static const struct row kmix_rows[] = {
    { "word", 4 },
    { "buf(16)", 16 },
    { "4 KiB", 4096 },
    { "1 MiB", MAX_LEN },
};
#define KMIX_ROWS (sizeof(kmix_rows) / sizeof(kmix_rows[0]))

/* A parentless CHACHA20-DRBG with kernel_mix = |on|, read back. */
static EVP_RAND_CTX *kmix_ctx(EVP_RAND *chacha, int on)
{
    EVP_RAND_CTX *ctx = EVP_RAND_CTX_new(chacha, NULL);
    OSSL_PARAM params[2];
    int got = -1;

    if (ctx == NULL)
        die("EVP_RAND_CTX_new(CHACHA20-DRBG) failed");
    params[0] = OSSL_PARAM_construct_int("kernel_mix", &on);
    params[1] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_set_params(ctx, params)
        || !EVP_RAND_instantiate(ctx, DRBG_STRENGTH, 0, NULL, 0, NULL))
        die("CHACHA20-DRBG with kernel_mix = %d: set-up failed (a module"
            " without kernel mixing?)",
            on);
    params[0] = OSSL_PARAM_construct_int("kernel_mix", &got);
    if (!EVP_RAND_CTX_get_params(ctx, params) || got != on)
        die("CHACHA20-DRBG set to kernel_mix = %d reports %d", on, got);
    return ctx;
}

/* One kernel mixing read by the system call route: getrandom(2). */
static int gen_kernel_read(void *arg, unsigned char *buf, size_t len)
{
    (void)arg;
    return getrandom(buf, len, GRND_NONBLOCK) == (ssize_t)len;
}

/* One kernel mixing read by the module's route (kmix.c), with its slot. */
static int gen_kmix_read(void *arg, unsigned char *buf, size_t len)
{
    (void)len;
    return chacha_kmix_getrandom((void **)arg, buf);
}

static unsigned int kmix_failures(EVP_RAND_CTX *ctx)
{
    unsigned int n = 0;
    OSSL_PARAM params[2];

    params[0] = OSSL_PARAM_construct_uint("kernel_mix_failures", &n);
    params[1] = OSSL_PARAM_construct_end();
    if (!EVP_RAND_CTX_get_params(ctx, params))
        die("reading kernel_mix_failures failed");
    return n;
}

/* Mixing on / off at 16 bytes and at 4 KiB, for print_targets(). */
static double kmix_ratio[2] = { -1.0, -1.0 };

/* The median over rounds of |num|'s MB/s over |den|'s, round by round. */
static double median_ratio(const struct job *num, const struct job *den,
                           int runs)
{
    double v[MAX_RUNS];
    int r;

    for (r = 0; r < runs; r++)
        v[r] = num->mbps[r] / den->mbps[r];
    return median_of(v, runs);
}

/* A job calling |fn| on |arg| with |len|-byte requests. */
static void set_job(struct job *j, bench_fn *fn, void *arg, size_t len,
                    const char *what)
{
    size_t i;

    memset(j, 0, sizeof(*j));
    j->fn = fn;
    j->arg = arg;
    j->len = len;
    j->what = what;
    j->size = "";
    for (i = 0; i < NROWS; i++)
        if (rows[i].len == len)
            j->size = rows[i].label;
}

/*
 * EVP_RAND_generate with mixing off and on, side by side in interleaved
 * rounds (run_jobs): medians, fastest rounds and the median of the
 * per-round ratios.  The heading says what the default (`auto`, unless
 * CHACHARNG_KERNEL_MIX says otherwise) is here.
 */
static void bench_kernel_mix(EVP_RAND *chacha, unsigned char *buf)
{
    EVP_RAND_CTX *ctx[2], *dflt = EVP_RAND_CTX_new(chacha, NULL);
    OSSL_PARAM params[2];
    struct job jobs[2];
    int auto_pick = -1;
    int runs = opt_runs > KMIX_RUNS ? opt_runs : KMIX_RUNS;
    void *slot = NULL;
    char route[128];
    size_t i;

    chacha_kmix_route(route, sizeof(route));
    params[0] = OSSL_PARAM_construct_int("kernel_mix", &auto_pick);
    params[1] = OSSL_PARAM_construct_end();
    if (dflt == NULL || !EVP_RAND_CTX_get_params(dflt, params))
        die("reading the default kernel_mix of CHACHA20-DRBG failed");
    EVP_RAND_CTX_free(dflt);
    ctx[0] = kmix_ctx(chacha, 0);
    ctx[1] = kmix_ctx(chacha, 1);
    printf("\nKernel mixing (one %d-byte getrandom per refill and per direct"
           " request),\nEVP_RAND_generate, MB/s: median of %d interleaved"
           " rounds of %.2f s each,\nthen the fastest round; on/off is the"
           " median of the per-round ratios\n  route: %s\n  default"
           " kernel_mix here: %s (C library: %s; auto is on wherever\n  the"
           " kernel's vDSO exports getrandom, Linux 6.11+ x86_64, 6.12+"
           " aarch64)\n",
           CHACHA_DRBG_MIX_BYTES, runs, opt_secs, route,
           auto_pick ? "on" : "off", libc_name());
    printf("%-9s%10s%10s%10s%10s%10s\n", "size", "off", "on", "fastest",
           "fastest", "on/off");
    for (i = 0; i < KMIX_ROWS; i++) {
        set_job(&jobs[0], gen_evp_rand, ctx[0], kmix_rows[i].len, "mixing off");
        set_job(&jobs[1], gen_evp_rand, ctx[1], kmix_rows[i].len, "mixing on");
        jobs[0].size = jobs[1].size = kmix_rows[i].label;
        run_jobs(jobs, 2, runs, opt_secs, 0, buf);
        printf("%-9s%10.1f%10.1f%10.1f%10.1f%10.3f\n", jobs[0].size,
               median_of(jobs[0].mbps, runs), median_of(jobs[1].mbps, runs),
               max_of(jobs[0].mbps, runs), max_of(jobs[1].mbps, runs),
               median_ratio(&jobs[1], &jobs[0], runs));
        if (kmix_rows[i].len == 16 || kmix_rows[i].len == 4096)
            kmix_ratio[kmix_rows[i].len == 4096] =
                median_ratio(&jobs[1], &jobs[0], runs);
        fflush(stdout);
    }
    printf("  failed kernel reads while mixing: %u\n", kmix_failures(ctx[1]));
    set_job(&jobs[0], gen_kernel_read, NULL, CHACHA_DRBG_MIX_BYTES,
            "getrandom");
    run_jobs(jobs, 1, runs, opt_secs / 4, 0, buf);
    printf("  one read, the system call getrandom(%d bytes, GRND_NONBLOCK):"
           " %.0f ns\n",
           CHACHA_DRBG_MIX_BYTES,
           CHACHA_DRBG_MIX_BYTES / median_of(jobs[0].mbps, runs) * 1e3);
    set_job(&jobs[0], gen_kmix_read, &slot, CHACHA_DRBG_MIX_BYTES, "kmix read");
    run_jobs(jobs, 1, runs, opt_secs / 4, 0, buf);
    printf("  one read, the module's route: %.0f ns\n",
           CHACHA_DRBG_MIX_BYTES / median_of(jobs[0].mbps, runs) * 1e3);
    chacha_kmix_release(slot);
    EVP_RAND_CTX_free(ctx[0]);
    EVP_RAND_CTX_free(ctx[1]);
}

/* ------------------------------------------------------------------------
 * The per-call floor: chacharng against a provider that does nothing
 * ------------------------------------------------------------------------ */

#define FLOOR_RUNS 21
#define FLOOR_SECS 0.02

/* At 4 and 16 bytes: against NOOP-RAND-STD, against NOOP-RAND. */
static double floor_ratio[2] = { -1.0, -1.0 }, bare_ratio[2] = { -1.0, -1.0 };

/*
 * EVP_RAND_generate on CHACHA20-DRBG (the provider's default kernel)
 * against the same call on bench_noop's NOOP-RAND, which does no work at
 * all: what is left there is libcrypto's own cost per call, the floor no
 * provider gets under; and on NOOP-RAND-STD, which answers max_request as
 * OpenSSL's own DRBGs do.  All three in interleaved rounds, in one
 * process; each figure is the median of the per-round ratios of the
 * floor's time per call over chacharng's (1.0: chacharng adds nothing).
 */
static void bench_floor(EVP_RAND *chacha, OSSL_LIB_CTX *libctx,
                        unsigned char *buf)
{
    static const size_t lens[2] = { 4, 16 };
    EVP_RAND_CTX *cc = EVP_RAND_CTX_new(chacha, NULL), *noop, *std;
    struct job jobs[3];
    char err[200];
    size_t i;
    int k;

    noop = bench_noop_ctx(libctx, "NOOP-RAND", err, sizeof(err));
    std = noop != NULL
              ? bench_noop_ctx(libctx, "NOOP-RAND-STD", err, sizeof(err))
              : NULL;
    if (std == NULL) {
        printf("\nPer-call floor: n/a (%s)\n", err);
        EVP_RAND_CTX_free(noop);
        EVP_RAND_CTX_free(cc);
        return;
    }
    if (cc == NULL
        || !EVP_RAND_instantiate(cc, DRBG_STRENGTH, 0, NULL, 0, NULL))
        die("instantiating CHACHA20-DRBG failed");
    printf("\nPer-call floor, EVP_RAND_generate, ns per call: median of %d"
           " interleaved\nrounds of %.2f s, then the fastest round;"
           " floor/cc is the median of the\nper-round ratios of the floor's"
           " time over chacharng's (cc: the default\nkernel, no parent;"
           " noop: NOOP-RAND, a built-in provider whose entry points\ndo"
           " nothing; std: NOOP-RAND-STD, the same answering max_request"
           " through\nOSSL_PARAM_locate as OpenSSL's DRBGs do)\n",
           FLOOR_RUNS, FLOOR_SECS);
    printf("%-9s%8s%8s%8s%9s%9s%9s%10s%10s\n", "size", "cc", "noop", "std",
           "fastest", "fastest", "fastest", "noop/cc", "std/cc");
    for (i = 0; i < 2; i++) {
        set_job(&jobs[0], gen_evp_rand, cc, lens[i], "CHACHA20-DRBG");
        set_job(&jobs[1], gen_evp_rand, noop, lens[i], "NOOP-RAND");
        set_job(&jobs[2], gen_evp_rand, std, lens[i], "NOOP-RAND-STD");
        run_jobs(jobs, 3, FLOOR_RUNS, FLOOR_SECS, 0, buf);
        bare_ratio[i] = median_ratio(&jobs[0], &jobs[1], FLOOR_RUNS);
        floor_ratio[i] = median_ratio(&jobs[0], &jobs[2], FLOOR_RUNS);
        printf("%-9s", jobs[0].size);
        for (k = 0; k < 3; k++)
            printf("%8.1f",
                   (double)lens[i] * 1e3 / median_of(jobs[k].mbps, FLOOR_RUNS));
        for (k = 0; k < 3; k++)
            printf("%9.1f",
                   (double)lens[i] * 1e3 / max_of(jobs[k].mbps, FLOOR_RUNS));
        printf("%10.3f%10.3f\n", bare_ratio[i], floor_ratio[i]);
        fflush(stdout);
    }
    EVP_RAND_CTX_free(std);
    EVP_RAND_CTX_free(noop);
    EVP_RAND_CTX_free(cc);
}

/* ------------------------------------------------------------------------
 * Output
 * ------------------------------------------------------------------------ */

static size_t row_index(size_t len)
{
    size_t i;

    for (i = 0; i < NROWS; i++)
        if (rows[i].len == len)
            return i;
    die("no %zu-byte row", len);
    return 0;
}

/* kernel_mix of the kernel columns' contexts; -1: no such column. */
static int column_mix = -1;

static void print_header(const char *conf, const char *provider_impl)
{
    const struct chacha_impl *list;
    char cpu[512], date[64];
    struct utsname un;
    time_t t = time(NULL);
    size_t n, i;

    bench_cpu_describe(cpu, sizeof(cpu));
    if (strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", localtime(&t))
        == 0)
        snprintf(date, sizeof(date), "unknown");

    printf("chacharng benchmark\n");
    printf("date:     %s\n", date);
    printf("cpu:      %s (%ld online)\n", cpu, sysconf(_SC_NPROCESSORS_ONLN));
    if (uname(&un) == 0)
        printf("system:   %s %s %s\n", un.sysname, un.release, un.machine);
    printf("openssl:  %s\n", OpenSSL_version(OPENSSL_VERSION));
    printf("kernels:  compiled in: ");
    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++)
        printf("%s%s%s", i > 0 ? ", " : "", list[i].name,
               chacha_impl_supported(&list[i]) ? "" : " (CPU lacks it)");
    printf("\n          provider default: %s\n", provider_impl);
    printf("config:   %s\n", conf != NULL ? conf : "(none)");
    if (column_mix >= 0)
        printf("mixing:   kernel_mix %s in the CHACHA20-DRBG columns (one"
               " kernel read per\n          refill and per direct request;"
               " CHACHARNG_KERNEL_MIX=off|on sets it)\n",
               column_mix ? "on" : "off");
    printf("timing:   single thread, CLOCK_MONOTONIC; every table interleaves"
           " its\n          generators round by round (%d rounds of %.2f s"
           " per cell unless\n          a table says otherwise) and shows"
           " the median and the fastest round\n",
           opt_runs, opt_secs);
    if (bench_core_hz() > 0)
        printf("clock:    core %.2f GHz now, measured (timed chains of"
               " dependent adds,\n          one cycle each), again around"
               " every round of the kernel table\n",
               bench_core_hz() / 1e9);
    if (tsc_usable)
        printf("tsc:      %.3f GHz (constant, nonstop; not the core clock)\n",
               tsc_rate() / 1e9);
    printf("units:    MB/s = 10^6 bytes per second\n");
}

/* What each column measured, and why any could not run. */
static void print_legend(size_t nkernels)
{
    size_t i;

    printf("\n");
    if (nkernels > 0)
        printf("  %s%s%s: CHACHA20-DRBG (chacharng) via EVP_RAND_generate,"
               " ctx param\n    impl = the kernel, no parent, strength 256\n",
               cols[0].title, nkernels > 1 ? ".." : "",
               nkernels > 1 ? cols[nkernels - 1].title : "");
    for (i = nkernels; i < ncols; i++) {
        const char *t = cols[i].title;

        if (cols[i].why[0] != '\0')
            continue; /* its reason follows */
        if (strcmp(t, "ctr-drbg") == 0)
            printf("  ctr-drbg: OpenSSL CTR-DRBG, AES-256-CTR, via"
                   " EVP_RAND_generate,\n    %s\n",
                   ctr_note);
        else if (strcmp(t, "rand-def") == 0)
            printf("  rand-def: RAND_bytes, default library context, no"
                   " config file\n    (%s)\n",
                   def_note);
        else if (strcmp(t, "rand-cc") == 0)
            printf("  rand-cc:  RAND_bytes_ex, library context loaded from"
                   " the config\n    (%s)\n",
                   conf_note);
        else if (strcmp(t, "getrandom") == 0)
            printf("  getrandom: getrandom(2) as a direct system call, flags"
                   " 0, one call per\n    request at every size (repeated"
                   " only to finish a short read)\n");
        else if (strcmp(t, "chacha20") == 0)
            printf("  chacha20: OpenSSL EVP ChaCha20 keystream"
                   " (EVP_EncryptUpdate over zeros),\n    the cipher's"
                   " speed without any DRBG\n");
    }
    for (i = 0; i < ncols; i++)
        if (cols[i].why[0] != '\0')
            printf("  %s is n/a: %s\n", cols[i].title, cols[i].why);
}

static const char *met(double v, double target)
{
    return v >= target ? "target met" : "target missed";
}

/* Why there is no number for |name|, a kernel or another column. */
static void why_missing(const char *name, char *why, size_t n)
{
    static const char *const kernels[] = { "generic", "sse2", "ssse3", "avx2",
                                           "avx512",  "neon", "vsx" };
    const struct chacha_impl *impl = chacha_impl_by_name(name);
    size_t i;

    for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
        if (strcmp(name, kernels[i]) == 0)
            break;
    if (i < sizeof(kernels) / sizeof(kernels[0]) && impl == NULL)
        snprintf(why, n, "%s not compiled in", name);
    else if (impl != NULL && !chacha_impl_supported(impl))
        snprintf(why, n, "the CPU lacks %s", name);
    else
        snprintf(why, n, "%s not selected", name);
}

/*
 * The MB/s of column |title| at the |len|-byte row, or -1 with the reason
 * in |why|.
 */
static double cell(const char *title, size_t len, char *why, size_t n)
{
    struct column *c = find_column(title);

    if (c == NULL) {
        why_missing(title, why, n);
        return -1.0;
    }
    if (c->why[0] != '\0') {
        snprintf(why, n, "%s n/a, see above", title);
        return -1.0;
    }
    return c->mbps[row_index(len)];
}

#define RAW_SIZES 3
static const size_t raw_blocks[RAW_SIZES] = { 16, 1024, 16384 };

struct raw_row {
    const char *name;
    double mbps[RAW_SIZES], best[RAW_SIZES];    /* median, fastest MB/s */
    double cpb[RAW_SIZES], cpb_best[RAW_SIZES]; /* core cycles/byte; < 0:
                                                   unknown */
};

static struct raw_row raw[MAX_COLUMNS];
static size_t nraw;

/* Like cell(), for the direct kernel table; |k| indexes raw_blocks. */
static double raw_cell(const char *name, size_t k, char *why, size_t n)
{
    size_t i;

    for (i = 0; i < nraw; i++)
        if (strcmp(raw[i].name, name) == 0)
            return raw[i].mbps[k];
    why_missing(name, why, n);
    return -1.0;
}

/* |num| / |den| against |target| (0: no target, information only). */
static void print_ratio(const char *what, double num, const char *whynum,
                        double den, const char *whyden, double target)
{
    double v;

    if (num < 0 || den <= 0) {
        printf("  %-46s    n/a (%s)\n", what, num < 0 ? whynum : whyden);
        return;
    }
    v = num / den;
    if (target > 0)
        printf("  %-46s %6.2f  >= %-4.2g %s\n", what, v, target,
               met(v, target));
    else
        printf("  %-46s %6.2f  (info)\n", what, v);
}

/*
 * The kernel a DRBG ratio is stated for: the one the provider picks by
 * default (the best this CPU runs) when it was measured, else the best
 * measured one.  Columns 0 .. |nkernels|-1 run from generic up to the best.
 */
static const char *drbg_kernel(size_t nkernels)
{
    struct column *c = find_column(chacha_impl_best()->name);
    size_t i;

    if (c != NULL && c->why[0] == '\0')
        return c->title;
    for (i = nkernels; i-- > 0;)
        if (cols[i].why[0] == '\0')
            return cols[i].title;
    return "none";
}

/* Request sizes whose DRBG / EVP ChaCha20 ratio print_targets() states. */
static const size_t mid_sizes[] = { 256, 512, 1024, 2048, 4096 };

/* The kernels against each other, raw and through EVP_RAND_generate. */
static void print_kernel_targets(void)
{
    static const struct {
        const char *fast, *slow;
        size_t k;
        double target;
    } pairs[] = {
        { "sse2", "generic", 0, 2.3 },
        { "avx2", "sse2", 1, 1.8 },
        { "avx512", "avx2", 1, 1.6 },
    };
    char what[80], w1[80], w2[80];
    double a, b;
    size_t i;

    for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        size_t blocks = raw_blocks[pairs[i].k];

        snprintf(what, sizeof(what), "%s/%s, kernels, %zu blocks (%zu KiB)",
                 pairs[i].fast, pairs[i].slow, blocks, blocks / 16);
        a = raw_cell(pairs[i].fast, pairs[i].k, w1, sizeof(w1));
        b = raw_cell(pairs[i].slow, pairs[i].k, w2, sizeof(w2));
        print_ratio(what, a, w1, b, w2, pairs[i].target);
        snprintf(what, sizeof(what), "  same via EVP_RAND_generate, %zu KiB",
                 blocks / 16);
        a = cell(pairs[i].fast, blocks * 64, w1, sizeof(w1));
        b = cell(pairs[i].slow, blocks * 64, w2, sizeof(w2));
        print_ratio(what, a, w1, b, w2, 0);
    }
}

/* Set when the SSE2 rows were measured against a CPU without AVX2. */
static int narrow_done;
static char narrow_why[96];
/* The kernels of x86_64 CPUs without AVX2, measured by the child run. */
static const char *const narrow_kernels[] = { "ssse3", "sse2" };

/*
 * A narrow kernel (|kern|: ssse3 or sse2) at a direct size
 * (mid_sizes[|k|]): where the CPU has AVX2, against the EVP ChaCha20 of a
 * CPU without it (bench_narrow.h), with the target, and against this
 * CPU's (AVX2) one for information; elsewhere the chacha20 column is
 * already that EVP ChaCha20.
 */
static void print_narrow_direct(const char *kern, size_t k, const char *what,
                                double target)
{
    size_t len = mid_sizes[k];
    char w1[80], w2[80], line[128];
    double a = cell(kern, len, w1, sizeof(w1));
    double b = cell("chacha20", len, w2, sizeof(w2));

    if (!(chacha_cpu_features() & CHACHA_CPU_AVX2)) {
        print_ratio(what, a, w1, b, w2, target);
        return;
    }
    snprintf(line, sizeof(line), "%s", what);
    if (narrow_done)
        print_ratio(line, bench_narrow_cell(kern, k), "not in the child run",
                    bench_narrow_cell("chacha20", k), "not in the child run",
                    target);
    else
        print_ratio(line, -1, narrow_why[0] ? narrow_why : "not measured", 1,
                    "", target);
    snprintf(line, sizeof(line), "  same against EVP ChaCha20 with AVX2");
    print_ratio(line, a, w1, b, w2, 0);
}

/*
 * Mid-size requests: 256 and 512 bytes are served from the buffer (a
 * refill every 960 bytes), 1, 2 and 4 KiB straight into the caller's
 * memory (a rekey block, then the caller's blocks), whose kernel read the
 * target allows for with mixing on.  The direct sizes also for the
 * kernels of x86_64 CPUs without AVX2, SSSE3 and the SSE2 baseline
 * (print_narrow_direct).  Then what kernel mixing costs.
 */
static void print_mid_targets(const char *k)
{
    char what[80], w1[80], w2[80];
    size_t i, j;

    for (i = 0; i < sizeof(mid_sizes) / sizeof(mid_sizes[0]); i++) {
        size_t len = mid_sizes[i];
        double target = len <= 960 || column_mix <= 0 ? 0.9 : 0.85;
        const char *unit = len < 1024 ? "B" : "KiB";
        size_t shown = len < 1024 ? len : len / 1024;
        const char *how = len <= 960 ? "buffered" : "direct";

        snprintf(what, sizeof(what), "DRBG[%s] / EVP ChaCha20, %zu %s, %s", k,
                 shown, unit, how);
        print_ratio(what, cell(k, len, w1, sizeof(w1)), w1,
                    cell("chacha20", len, w2, sizeof(w2)), w2, target);
        for (j = 0; j < sizeof(narrow_kernels) / sizeof(narrow_kernels[0]);
             j++) {
            const char *n = narrow_kernels[j];

            if (len <= 960 || strcmp(k, n) == 0
                || chacha_impl_by_name(n) == NULL)
                continue;
            snprintf(what, sizeof(what), "DRBG[%s] / EVP w/o AVX2, %zu %s, %s",
                     n, shown, unit, how);
            print_narrow_direct(n, i, what, target);
        }
    }
    print_ratio("kernel mixing on / off, 16 bytes", kmix_ratio[0],
                "kmix not measured", 1.0, "", 0.95);
    print_ratio("kernel mixing on / off, 4 KiB", kmix_ratio[1],
                "kmix not measured", 1.0, "", 0.90);
}

/* The per-call floor: what EVP_RAND_generate itself costs. */
static void print_floor_targets(void)
{
    print_ratio("per-call floor (std) / DRBG time, 4 bytes", floor_ratio[0],
                "floor not measured", 1.0, "", 0.90);
    print_ratio("per-call floor (std) / DRBG time, 16 bytes", floor_ratio[1],
                "floor not measured", 1.0, "", 0.90);
    print_ratio("  bare floor (noop) / DRBG time, 4 bytes", bare_ratio[0],
                "floor not measured", 1.0, "", 0);
    print_ratio("  bare floor (noop) / DRBG time, 16 bytes", bare_ratio[1],
                "floor not measured", 1.0, "", 0);
}

static void print_targets(size_t nkernels)
{
    const char *k = drbg_kernel(nkernels);
    char what[80], w1[80], w2[80];
    double a, b;

    printf("\nTargets (information only: the exit status ignores them)\n");
    print_kernel_targets();

    snprintf(what, sizeof(what), "DRBG[%s] / EVP ChaCha20, 1 MiB requests", k);
    a = cell(k, MAX_LEN, w1, sizeof(w1));
    b = cell("chacha20", MAX_LEN, w2, sizeof(w2));
    print_ratio(what, a, w1, b, w2, 0.95);
    snprintf(what, sizeof(what), "  kernel %s / EVP ChaCha20, 16384 blocks", k);
    a = raw_cell(k, 2, w1, sizeof(w1));
    b = raw_cell("EVP ChaCha20", 2, w2, sizeof(w2));
    print_ratio(what, a, w1, b, w2, 0);

    print_mid_targets(k);

    snprintf(what, sizeof(what), "DRBG[%s] / CTR-DRBG, EVP_RAND, 16 bytes", k);
    a = cell(k, 16, w1, sizeof(w1));
    b = cell("ctr-drbg", 16, w2, sizeof(w2));
    print_ratio(what, a, w1, b, w2, 15);

    snprintf(what, sizeof(what), "DRBG[%s] / getrandom(2), 4 bytes", k);
    a = cell(k, 4, w1, sizeof(w1));
    b = cell("getrandom", 4, w2, sizeof(w2));
    print_ratio(what, a, w1, b, w2, 0.85);

    a = cell("rand-cc", 16, w1, sizeof(w1));
    b = cell("rand-def", 16, w2, sizeof(w2));
    print_ratio("RAND_bytes(16), chacharng config / default", a, w1, b, w2, 4);

    print_floor_targets();
}

/* ------------------------------------------------------------------------
 * Main
 * ------------------------------------------------------------------------ */

static void usage(void)
{
    fprintf(stderr,
            "usage: bench [-q] [-m] [-c COLUMNS] [CONFIG]\n"
            "  -q          quick run (%d runs of %.2f s per cell instead of"
            " %d of %.2f s)\n"
            "  -m          machine-readable: the request table alone, one"
            " tab-separated\n              line per column and size, after"
            " #KEY lines naming the CPU\n"
            "  -c COLUMNS  comma-separated columns to measure: kernel names,"
            "\n              ctr-drbg, rand-def, rand-cc, getrandom,"
            " chacha20, raw, kmix,\n              floor (raw = the direct"
            " kernel table, kmix = kernel mixing\n              off/on,"
            " floor = per call against a do-nothing provider);\n"
            "              default all\n"
            "  CONFIG      openssl.cnf.sample for the rand-cc column"
            " (or set " ENV_CONF ")\n"
            "Set OPENSSL_MODULES to the directory holding chacharng.so.\n",
            RUNS_QUICK, SECS_QUICK, RUNS_FULL, SECS_FULL);
    exit(EXIT_FAILURE);
}

/* 1 if |name| is in the comma-separated |list| (or no list was given). */
static int selected(const char *list, const char *name)
{
    size_t len = strlen(name);
    const char *p = list;

    if (list == NULL)
        return 1;
    while (*p != '\0') {
        size_t n = strcspn(p, ",");

        if (n == len && strncmp(p, name, len) == 0)
            return 1;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Every name in |list| must be one we know: a typo should not go unseen. */
static void check_selection(const char *list, const char *const *known,
                            size_t nknown)
{
    const char *p = list;

    while (*p != '\0') {
        size_t n = strcspn(p, ","), i;
        int ok = 0;

        for (i = 0; i < nknown && !ok; i++)
            ok = strlen(known[i]) == n && strncmp(p, known[i], n) == 0;
        if (!ok && n > 0) {
            fprintf(stderr, "bench: unknown column '%.*s'\n", (int)n, p);
            usage();
        }
        p += n;
        if (*p == ',')
            p++;
    }
}

/* "MB/s [c/B]", 22 wide; the bracket only when the clock is known. */
static void print_raw_cell(double mbps, double cpb)
{
    if (cpb > 0)
        printf("%13.1f [%5.3f]", mbps, cpb);
    else
        printf("%22.1f", mbps);
}

/*
 * Every kernel the CPU runs, called directly, and EVP ChaCha20 beside
 * them, interleaved round by round at each size, with the core clock
 * measured around every round: MB/s and core cycles per byte, medians and
 * fastest rounds.
 */
static void bench_raw(const struct chacha_impl *list, size_t nimpl,
                      EVP_CIPHER_CTX *evp, unsigned char *buf)
{
    static const uint8_t key[32] = { 7 }, nonce[12] = { 9 };
    static struct raw_arg arg[MAX_COLUMNS];
    struct job jobs[MAX_COLUMNS];
    double cpb[MAX_RUNS];
    int has_clock = bench_core_hz() > 0;
    size_t i, k, n = 0;

    for (i = nimpl; i-- > 0 && n < MAX_COLUMNS - 1;) {
        if (!chacha_impl_supported(&list[i]))
            continue;
        arg[n].impl = &list[i];
        chacha_state_init(arg[n].state, key, 0, nonce);
        raw[n++].name = list[i].name;
    }
    if (evp != NULL)
        raw[n++].name = "EVP ChaCha20";
    nraw = n;
    printf("\nChaCha20 kernels called directly: MB/s%s, median of %d"
           " interleaved rounds\nof %.2f s, then the fastest round\n",
           has_clock ? " [core cycles per byte]" : "", opt_runs, opt_secs);
    printf("%-13s%22s%22s%22s\n", "kernel", "16 blocks (1 KiB)",
           "1024 (64 KiB)", "16384 (1 MiB)");
    for (k = 0; k < RAW_SIZES; k++) {
        for (i = 0; i < n; i++) {
            memset(&jobs[i], 0, sizeof(jobs[i]));
            jobs[i].len = raw_blocks[k] * 64;
            jobs[i].what = raw[i].name;
            jobs[i].size = "raw";
            if (evp != NULL && i == n - 1) {
                if (!rewind_evp_chacha20(evp))
                    die("EVP ChaCha20: rewinding failed");
                jobs[i].fn = gen_evp_chacha20;
                jobs[i].arg = evp;
            } else {
                arg[i].nblocks = raw_blocks[k];
                jobs[i].fn = gen_raw_kernel;
                jobs[i].arg = &arg[i];
            }
        }
        run_jobs(jobs, n, opt_runs, opt_secs, has_clock, buf);
        for (i = 0; i < n; i++) {
            raw[i].mbps[k] = median_of(jobs[i].mbps, opt_runs);
            raw[i].best[k] = max_of(jobs[i].mbps, opt_runs);
            raw[i].cpb[k] = raw[i].cpb_best[k] = -1.0;
            if (cycles_per_byte(&jobs[i], opt_runs, cpb)) {
                raw[i].cpb[k] = median_of(cpb, opt_runs);
                raw[i].cpb_best[k] = min_of(cpb, opt_runs);
            }
        }
    }
    for (i = 0; i < n; i++) {
        printf("%-13s", raw[i].name);
        for (k = 0; k < RAW_SIZES; k++)
            print_raw_cell(raw[i].mbps[k], raw[i].cpb[k]);
        printf("\n%-13s", "  fastest");
        for (k = 0; k < RAW_SIZES; k++)
            print_raw_cell(raw[i].best[k], raw[i].cpb_best[k]);
        printf("\n");
    }
    if (has_clock)
        printf("  core cycles: the time of each round's fastest batch of"
               " calls (about\n  %.0f ms) times the core clock measured"
               " just before and just after the\n  round (the fastest of 7"
               " timed chains of 40,000 dependent integer adds,\n  one cycle"
               " each; CLOCK_MONOTONIC); about %.2f GHz here\n",
               BATCH_SECS * 1e3, bench_core_hz() / 1e9);
}

/*
 * Short kernel calls: absorb and the direct path's rekey each ask a kernel
 * for one block, so a wide kernel must not lose to the generic one there.
 * ns per call of 1, 2 and 3 blocks for every kernel the CPU runs, in
 * SHORT_RUNS interleaved rounds (run_jobs).
 */
#define SHORT_RUNS 15
#define SHORT_SECS 0.02
#define SHORT_SIZES 3

static void bench_short_calls(const struct chacha_impl *list, size_t nimpl,
                              unsigned char *buf)
{
    static const uint8_t key[32] = { 7 }, nonce[12] = { 9 };
    static struct raw_arg arg[MAX_COLUMNS];
    struct job jobs[MAX_COLUMNS];
    double ns[MAX_COLUMNS][SHORT_SIZES], best[MAX_COLUMNS][SHORT_SIZES];
    double secs = opt_secs < SHORT_SECS ? opt_secs : SHORT_SECS;
    size_t n = 0, i, k;

    for (i = 0; i < nimpl && n < MAX_COLUMNS; i++) {
        if (!chacha_impl_supported(&list[i]))
            continue;
        arg[n].impl = &list[i];
        chacha_state_init(arg[n].state, key, 0, nonce);
        n++;
    }
    for (k = 0; k < SHORT_SIZES; k++) {
        for (i = 0; i < n; i++) {
            memset(&jobs[i], 0, sizeof(jobs[i]));
            arg[i].nblocks = k + 1;
            jobs[i].fn = gen_raw_kernel;
            jobs[i].arg = &arg[i];
            jobs[i].len = (k + 1) * 64;
            jobs[i].what = arg[i].impl->name;
            jobs[i].size = "short call";
        }
        run_jobs(jobs, n, SHORT_RUNS, secs, 0, buf);
        for (i = 0; i < n; i++) {
            ns[i][k] =
                (double)jobs[i].len * 1e3 / median_of(jobs[i].mbps, SHORT_RUNS);
            best[i][k] =
                (double)jobs[i].len * 1e3 / max_of(jobs[i].mbps, SHORT_RUNS);
        }
    }
    printf("\nShort kernel calls, ns per call (wall clock): median of %d"
           " interleaved rounds,\nthen the fastest round\n"
           "%-13s%10s%10s%10s\n",
           SHORT_RUNS, "kernel", "1 block", "2 blocks", "3 blocks");
    for (i = 0; i < n; i++) {
        printf("%-13s", arg[i].impl->name);
        for (k = 0; k < SHORT_SIZES; k++)
            printf("%10.1f", ns[i][k]);
        printf("\n%-13s", "  fastest");
        for (k = 0; k < SHORT_SIZES; k++)
            printf("%10.1f", best[i][k]);
        printf("\n");
    }
    /* speed against the generic kernel, always compiled in and listed last */
    for (i = 0; i + 1 < n; i++) {
        char what[80];

        snprintf(what, sizeof(what), "%s/generic speed, 1-block kernel call",
                 arg[i].impl->name);
        print_ratio(what, ns[n - 1][0], "", ns[i][0], "", 0.95);
    }
}

/*
 * One row of the request table: every column that runs, round by round;
 * the medians go to the columns for the targets.
 */
/* -m: one line per measurement for scripts (bench/plot-throughput.py). */
static int opt_machine;

/*
 * The machine-readable form of the header: "#KEY<TAB>VALUE" lines, the
 * ones a plot names its CPU and date by.
 */
static void print_machine_header(const char *provider_impl)
{
    char cpu[512], date[32];
    struct utsname un;
    time_t t = time(NULL);

    bench_cpu_describe(cpu, sizeof(cpu));
    if (strftime(date, sizeof(date), "%Y-%m-%d", localtime(&t)) == 0)
        snprintf(date, sizeof(date), "unknown");
    printf("#format\tchacharng-bench 1\n#date\t%s\n#cpu\t%s\n", date, cpu);
    if (uname(&un) == 0)
        printf("#system\t%s %s %s\n", un.sysname, un.release, un.machine);
    printf("#openssl\t%s\n#provider-impl\t%s\n#kernel-mix\t%d\n",
           OpenSSL_version(OPENSSL_VERSION), provider_impl, column_mix);
    printf("#rounds\t%d of %.2f s, medians\n", opt_runs, opt_secs);
    printf("#columns\tkind\tcolumn\tbytes\tmedian_MBps\tfastest_MBps\n");
}

/*
 * One row of the request table: every column at |rows[row].len|, round by
 * round, printed as a table row or, with -m, as "request" lines.
 */
static void bench_row(size_t row, unsigned char *buf)
{
    struct job jobs[MAX_COLUMNS];
    size_t map[MAX_COLUMNS], n = 0, j, k;

    for (j = 0; j < ncols; j++) {
        struct column *col = &cols[j];

        if (col->fn == NULL)
            continue;
        if (col->rewind != NULL && !col->rewind(col->arg))
            die("%s: rewinding failed", col->title);
        memset(&jobs[n], 0, sizeof(jobs[n]));
        jobs[n].fn = col->fn;
        jobs[n].arg = col->arg;
        jobs[n].len = rows[row].len;
        jobs[n].what = col->title;
        jobs[n].size = rows[row].label;
        map[n++] = j;
    }
    run_jobs(jobs, n, opt_runs, opt_secs, 0, buf);
    for (k = 0; k < n; k++)
        cols[map[k]].mbps[row] = median_of(jobs[k].mbps, opt_runs);
    if (opt_machine) {
        for (k = 0; k < n; k++)
            printf("request\t%s\t%zu\t%.1f\t%.1f\n", cols[map[k]].title,
                   rows[row].len, cols[map[k]].mbps[row],
                   max_of(jobs[k].mbps, opt_runs));
        fflush(stdout);
        return;
    }
    printf("%-9s", rows[row].label);
    for (j = 0, k = 0; j < ncols; j++)
        if (k < n && map[k] == j)
            printf("%10.1f", cols[j].mbps[row]), k++;
        else
            printf("%10s", "n/a");
    printf("\n%-9s", "  fastest");
    for (j = 0, k = 0; j < ncols; j++)
        if (k < n && map[k] == j)
            printf("%10.1f", max_of(jobs[k].mbps, opt_runs)), k++;
        else
            printf("%10s", "");
    printf("\n");
    fflush(stdout);
}

/* What the command line asked for. */
struct options {
    const char *conf; /* openssl.cnf for rand-cc, or NULL */
    const char *pick; /* -c: the columns to measure, or NULL for all */
};

static void parse_options(int argc, char **argv, struct options *o)
{
    static const char *const fixed_cols[] = {
        "ctr-drbg", "rand-def", "rand-cc", "getrandom", "chacha20",
        "raw",      "kmix",     "floor",   "generic",   "sse2",
        "ssse3",    "avx2",     "avx512",  "neon",      "vsx"
    };
    int c;

    o->conf = getenv(ENV_CONF);
    o->pick = NULL;
    while ((c = getopt(argc, argv, "qmc:h")) != -1) {
        switch (c) {
        case 'q':
            opt_runs = RUNS_QUICK;
            opt_secs = SECS_QUICK;
            break;
        case 'm':
            opt_machine = 1;
            break;
        case 'c':
            o->pick = optarg;
            break;
        default:
            usage();
        }
    }
    if (optind < argc)
        o->conf = argv[optind++];
    if (optind < argc)
        usage();
    if (o->pick != NULL)
        check_selection(o->pick, fixed_cols,
                        sizeof(fixed_cols) / sizeof(fixed_cols[0]));
}

/* What the columns run on, made once and freed at the end. */
struct session {
    OSSL_LIB_CTX *libctx;  /* the EVP_RAND columns' library context */
    OSSL_LIB_CTX *confctx; /* rand-cc's, loaded from the config */
    OSSL_PROVIDER *defprov, *ccprov;
    EVP_RAND *chacha;
    EVP_RAND_CTX *ctr_parent;
    EVP_CIPHER_CTX *evp;
    const struct chacha_impl *list; /* the kernels compiled in */
    size_t nimpl, nkernels;         /* ... and the columns made of them */
    char provider_impl[32];         /* the kernel the provider chose */
};

/*
 * The library context the EVP_RAND columns share, populated explicitly
 * with the default provider and chacharng, and CHACHA20-DRBG from it.
 */
static void open_session(struct session *s)
{
    OSSL_PARAM params[2];

    memset(s, 0, sizeof(*s));
    snprintf(s->provider_impl, sizeof(s->provider_impl), "?");
    s->libctx = OSSL_LIB_CTX_new();
    if (s->libctx == NULL)
        die("OSSL_LIB_CTX_new failed");
    s->defprov = OSSL_PROVIDER_load(s->libctx, "default");
    if (s->defprov == NULL)
        die("cannot load the default provider");
    s->ccprov = OSSL_PROVIDER_load(s->libctx, "chacharng");
    if (s->ccprov == NULL)
        die("cannot load the chacharng provider (set OPENSSL_MODULES to the"
            " directory holding chacharng.so)");
    params[0] = OSSL_PARAM_construct_utf8_string("impl", s->provider_impl,
                                                 sizeof(s->provider_impl));
    params[1] = OSSL_PARAM_construct_end();
    if (!OSSL_PROVIDER_get_params(s->ccprov, params))
        ERR_clear_error();
    s->chacha =
        EVP_RAND_fetch(s->libctx, "CHACHA20-DRBG", "provider=chacharng");
    if (s->chacha == NULL)
        die("cannot fetch CHACHA20-DRBG from chacharng");
    s->list = chacha_impl_list(&s->nimpl);
}

/*
 * One column per kernel that is compiled in and that this CPU runs.
 * Returns the reseed interval in calls of CHACHA20-DRBG, for CTR-DRBG to
 * reseed as often; notes the columns' kernel_mix in column_mix.
 */
static unsigned int add_kernel_columns(struct session *s, const char *pick)
{
    unsigned int reseed_requests = 65536; /* replaced by CHACHA20-DRBG's */
    OSSL_PARAM params[2];
    size_t i;

    for (i = s->nimpl; i-- > 0;) {
        if (!chacha_impl_supported(&s->list[i])
            || !selected(pick, s->list[i].name))
            continue;
        setup_kernel_column(add_column(s->list[i].name), s->chacha,
                            &s->list[i]);
        s->nkernels++;
    }
    params[1] = OSSL_PARAM_construct_end();
    for (i = 0; i < s->nkernels; i++) {
        if (cols[i].fn != NULL) {
            params[0] =
                OSSL_PARAM_construct_uint("reseed_requests", &reseed_requests);
            if (!EVP_RAND_CTX_get_params(cols[i].arg, params))
                die("reading reseed_requests of CHACHA20-DRBG failed");
            params[0] = OSSL_PARAM_construct_int("kernel_mix", &column_mix);
            if (!EVP_RAND_CTX_get_params(cols[i].arg, params))
                die("reading kernel_mix of CHACHA20-DRBG failed");
            break;
        }
    }
    return reseed_requests;
}

/* The columns beside the kernels: what an application could use instead. */
static void add_other_columns(struct session *s, const struct options *o,
                              unsigned int reseed_requests)
{
    static struct column evp_only; /* EVP ChaCha20 for the raw table only */

    if (selected(o->pick, "ctr-drbg"))
        setup_ctr_column(add_column("ctr-drbg"), s->libctx, reseed_requests,
                         &s->ctr_parent);
    if (selected(o->pick, "rand-def")) {
        struct column *col = add_column("rand-def");
        EVP_RAND_CTX *pub = RAND_get0_public(NULL);

        if (pub == NULL)
            die("RAND_get0_public(NULL) failed");
        /* named in the legend: it depends on the libcrypto version */
        snprintf(def_note, sizeof(def_note), "%s",
                 EVP_RAND_get0_name(EVP_RAND_CTX_get0_rand(pub)));
        col->fn = gen_rand_bytes;
        col->arg = NULL;
    }
    if (selected(o->pick, "rand-cc"))
        s->confctx = setup_conf_column(add_column("rand-cc"), o->conf);
    if (selected(o->pick, "getrandom"))
        add_column("getrandom")->fn = gen_getrandom;
    if (selected(o->pick, "chacha20"))
        s->evp = setup_evp_chacha20(add_column("chacha20"), s->libctx);
    else if (selected(o->pick, "raw"))
        s->evp = setup_evp_chacha20(&evp_only, s->libctx);
}

/*
 * Row by row, every column before the next row, and within a row round
 * by round (run_jobs), so that slow drift (clock changes, neighbours on a
 * shared host) spreads over all columns instead of landing on one.
 */
static void run_request_table(unsigned char *buf)
{
    size_t i, j;

    if (!opt_machine) {
        printf("\nRequest throughput, MB/s: per size, the median of the"
               " interleaved rounds,\nthen the fastest round\n%-9s",
               "size");
        for (j = 0; j < ncols; j++)
            printf("%10s", cols[j].title);
        printf("\n");
        fflush(stdout);
    }
    for (i = 0; i < NROWS; i++)
        bench_row(i, buf);
    for (j = 0; opt_machine && j < ncols; j++)
        if (cols[j].why[0] != '\0')
            printf("#n/a\t%s\t%s\n", cols[j].title, cols[j].why);
}

/*
 * The child run for print_narrow_direct(), when its rows need it: the
 * narrow kernels this build and CPU have and the chacha20 column
 * measured, on a CPU with AVX2.
 */
static void run_narrow(const char *pick)
{
    char list[64] = "", names[64] = "";
    size_t i;

    if (!(chacha_cpu_features() & CHACHA_CPU_AVX2)
        || !selected(pick, "chacha20"))
        return;
    for (i = 0; i < sizeof(narrow_kernels) / sizeof(narrow_kernels[0]); i++) {
        const struct chacha_impl *impl = chacha_impl_by_name(narrow_kernels[i]);

        if (impl == NULL || !chacha_impl_supported(impl)
            || !selected(pick, narrow_kernels[i]))
            continue;
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s,",
                 narrow_kernels[i]);
        snprintf(names + strlen(names), sizeof(names) - strlen(names),
                 "%sDRBG[%s]", names[0] ? ", " : "", narrow_kernels[i]);
    }
    if (list[0] == '\0')
        return;
    snprintf(list + strlen(list), sizeof(list) - strlen(list), "chacha20");
    printf("\n%s and EVP ChaCha20 again, in a child with "
           "OPENSSL_ia32cap=%s\n(AVX2 and AVX-512 masked: libcrypto's 4-block "
           "SSSE3 ChaCha20)\n",
           names, BENCH_NARROW_IA32CAP);
    narrow_done = bench_narrow_run(opt_runs == RUNS_QUICK, list, mid_sizes,
                                   sizeof(mid_sizes) / sizeof(mid_sizes[0]),
                                   narrow_why, sizeof(narrow_why));
}

static void close_session(struct session *s)
{
    size_t i;

    EVP_CIPHER_CTX_free(s->evp);
    for (i = 0; i < ncols; i++)
        if (cols[i].fn == gen_evp_rand)
            EVP_RAND_CTX_free(cols[i].arg);
    EVP_RAND_CTX_free(s->ctr_parent);
    EVP_RAND_free(s->chacha);
    OSSL_LIB_CTX_free(s->confctx);
    OSSL_PROVIDER_unload(s->ccprov);
    OSSL_PROVIDER_unload(s->defprov);
    OSSL_LIB_CTX_free(s->libctx);
}

int main(int argc, char **argv)
{
    struct options o;
    struct session s;
    unsigned char *buf;

    parse_options(argc, argv, &o);
    /*
     * Before anything touches the default library context: it must not
     * read any openssl.cnf, so that rand-def really is libcrypto's default.
     */
    if (!OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL))
        die("OPENSSL_init_crypto failed");
    buf = aligned_alloc(64, MAX_LEN);
    zeros = calloc(1, MAX_LEN);
    if (buf == NULL || zeros == NULL)
        die("out of memory");
    tsc_usable = tsc_check();

    open_session(&s);
    add_other_columns(&s, &o, add_kernel_columns(&s, o.pick));
    if (opt_machine) {
        /* the request table alone: what bench/plot-throughput.py draws */
        print_machine_header(s.provider_impl);
        run_request_table(buf);
    } else {
        print_header(o.conf, s.provider_impl);
        run_request_table(buf);
        print_legend(s.nkernels);
        /* The kernels alone: what the DRBG can at best approach. */
        if (selected(o.pick, "raw")) {
            bench_raw(s.list, s.nimpl, s.evp, buf);
            bench_short_calls(s.list, s.nimpl, buf);
        }
        if (selected(o.pick, "kmix"))
            bench_kernel_mix(s.chacha, buf);
        if (selected(o.pick, "floor"))
            bench_floor(s.chacha, s.libctx, buf);
        run_narrow(o.pick);
        print_targets(s.nkernels);
    }
    fflush(stdout);
    close_session(&s);
    free(zeros);
    free(buf);
    return EXIT_SUCCESS;
}
