/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What a context and a thread cost: CHACHA20-DRBG next to OpenSSL's
 * CTR-DRBG and the default configuration, side by side in one run.  Every
 * figure is the median of RUNS runs, the two sides interleaved run by run,
 * and each ratio is of those medians ("no slower" means a ratio of at least
 * 0.95).  Times are CPU time of the whole process (CLOCK_PROCESS_CPUTIME_ID,
 * every thread, user and system): on a shared machine wall-clock time mostly
 * measures the other tenants, CPU time what each side costs.  Even so a
 * busy host still shifts cache and frequency: read the ratios.  System calls are counted
 * by interposition (interpose.c).  This is not a test: the targets are
 * printed for information and the exit status does not depend on them.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>
#include <openssl/rand.h>

#include "interpose.h"

#define RUNS 7
#define LIFECYCLES 2000
#define SYSCALL_CTX 10000
#define RSS_THREADS 1000
#define CHURN_THREADS 300
#define STACK_BYTES (256 * 1024)

static volatile unsigned char sink;

static void die(const char *what)
{
    fprintf(stderr, "bench_ctx: %s\n", what);
    ERR_print_errors_fp(stderr);
    exit(1);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The verdict printed beside a target (information only, as above). */
static const char *met(int ok)
{
    return ok ? "target met" : "target MISSED";
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* Sorts |v|: afterwards v[0] is the smallest, v[n - 1] the largest. */
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return v[n / 2];
}

/* ---- context lifecycle ------------------------------------------------ */

static EVP_RAND *chacha, *ctr;

static EVP_RAND_CTX *new_ready(EVP_RAND *alg)
{
    EVP_RAND_CTX *c = EVP_RAND_CTX_new(alg, NULL);
    char cipher[] = "AES-256-CTR";
    OSSL_PARAM p[2];

    if (c == NULL)
        return NULL;
    if (alg == ctr) {
        /* CTR-DRBG has no cipher until it is told one */
        p[0] = OSSL_PARAM_construct_utf8_string("cipher", cipher, 0);
        p[1] = OSSL_PARAM_construct_end();
        if (!EVP_RAND_CTX_set_params(c, p)) {
            EVP_RAND_CTX_free(c);
            return NULL;
        }
    }
    if (!EVP_RAND_instantiate(c, 256, 0, NULL, 0, NULL)) {
        EVP_RAND_CTX_free(c);
        return NULL;
    }
    return c;
}

/* Nanoseconds per new + instantiate + 32-byte generate + free. */
static double lifecycle_ns(EVP_RAND *alg, int n)
{
    unsigned char out[32];
    double t0 = now();
    int i;

    for (i = 0; i < n; i++) {
        EVP_RAND_CTX *c = new_ready(alg);

        if (c == NULL
            || !EVP_RAND_generate(c, out, sizeof(out), 256, 0, NULL, 0))
            die("context lifecycle failed");
        sink ^= out[0];
        EVP_RAND_CTX_free(c);
    }
    return (now() - t0) * 1e9 / n;
}

static void bench_lifecycle(void)
{
    double cc[RUNS], ct[RUNS], m_cc, m_ct;
    unsigned long mm, mu, ma, g;
    int r;

    /* from a cold pool: the first mapping is in the count */
    ip_getrandom_reset_calls();
    ip_mem_calls(&mm, &mu, &ma);
    lifecycle_ns(chacha, SYSCALL_CTX);
    g = ip_getrandom_calls();
    {
        unsigned long mm1, mu1, ma1;

        ip_mem_calls(&mm1, &mu1, &ma1);
        mm = mm1 - mm;
        mu = mu1 - mu;
        ma = ma1 - ma;
    }
    for (r = 0; r < RUNS; r++) {
        cc[r] = lifecycle_ns(chacha, LIFECYCLES);
        ct[r] = lifecycle_ns(ctr, LIFECYCLES);
    }
    m_cc = median(cc, RUNS);
    m_ct = median(ct, RUNS);
    printf("\nContext lifecycle (EVP_RAND_CTX_new + instantiate + 32-byte "
           "generate + free, no parent)\n");
    printf("  chacharng %8.0f ns   CTR-DRBG %8.0f ns   chacharng/CTR %.2fx"
           "  (<= 1.00x: %s)\n",
           m_cc, m_ct, m_cc / m_ct, met(m_cc <= m_ct));
    printf("  fastest   %8.0f ns   CTR-DRBG %8.0f ns\n", cc[0], ct[0]);
    printf("  system calls per context over %d contexts from a cold pool:"
           " %.4f (mmap %lu, munmap %lu, madvise %lu; <= 1: %s),"
           " seed getrandom %.2f\n",
           SYSCALL_CTX, (double)(mm + mu + ma) / SYSCALL_CTX, mm, mu, ma,
           met(mm + mu + ma <= SYSCALL_CTX), (double)g / SYSCALL_CTX);
}

/* ---- 4 KiB and 64 KiB against the bare keystream ----------------------- */

static double mbps_drbg(EVP_RAND_CTX *c, unsigned char *buf, size_t len,
                        int calls)
{
    double t0 = now();
    int i;

    for (i = 0; i < calls; i++)
        if (!EVP_RAND_generate(c, buf, len, 256, 0, NULL, 0))
            die("generate failed");
    sink ^= buf[0];
    return (double)len * calls / (now() - t0) / 1e6;
}

static double mbps_evp(EVP_CIPHER_CTX *e, const unsigned char *zeros,
                       unsigned char *buf, size_t len, int calls)
{
    double t0 = now();
    int i, outl;

    for (i = 0; i < calls; i++)
        if (!EVP_EncryptUpdate(e, buf, &outl, zeros, (int)len))
            die("EVP ChaCha20 failed");
    sink ^= buf[0];
    return (double)len * calls / (now() - t0) / 1e6;
}

static void bench_bulk(OSSL_LIB_CTX *lc)
{
    static const size_t lens[] = { 4, 16, 4096, 65536, 1 << 20 };
    static const unsigned char key[32] = { 1 }, iv[16] = { 0 };
    unsigned char *buf = malloc(1 << 20), *zeros = calloc(1, 1 << 20);
    EVP_RAND_CTX *c = new_ready(chacha);
    EVP_CIPHER *cc20 = EVP_CIPHER_fetch(lc, "ChaCha20", NULL);
    EVP_CIPHER_CTX *e = EVP_CIPHER_CTX_new();
    size_t i;

    if (buf == NULL || zeros == NULL || c == NULL || cc20 == NULL || e == NULL
        || !EVP_EncryptInit_ex(e, cc20, NULL, key, iv))
        die("bulk set-up failed");
    printf("\nRequests against OpenSSL's EVP ChaCha20 keystream (MB/s; "
           "the target is for 4 KiB and 64 KiB)\n");
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        double a[RUNS], b[RUNS], ma, mb;
        size_t want = ((size_t)64 << 20) / lens[i];
        int calls = want > 200000 ? 200000 : (int)want, r;

        for (r = 0; r < RUNS; r++) {
            a[r] = mbps_drbg(c, buf, lens[i], calls);
            b[r] = mbps_evp(e, zeros, buf, lens[i], calls);
        }
        ma = median(a, RUNS);
        mb = median(b, RUNS);
        if (lens[i] == 4096 || lens[i] == 65536)
            printf("  %7zu bytes: chacharng %8.1f   EVP ChaCha20 %8.1f   ratio "
                   "%.2f  (>= 0.90: %s)\n",
                   lens[i], ma, mb, ma / mb, met(ma / mb >= 0.90));
        else
            printf("  %7zu bytes: chacharng %8.1f   EVP ChaCha20 %8.1f   ratio "
                   "%.2f\n",
                   lens[i], ma, mb, ma / mb);
        printf("        fastest: chacharng %8.1f   EVP ChaCha20 %8.1f\n",
               a[RUNS - 1], b[RUNS - 1]);
    }
    EVP_CIPHER_CTX_free(e);
    EVP_CIPHER_free(cc20);
    EVP_RAND_CTX_free(c);
    free(buf);
    free(zeros);
}

/* ---- threads ---------------------------------------------------------- */

static pthread_barrier_t drawn, leave;

struct draw {
    OSSL_LIB_CTX *lc;
    int hold, ok;
};

static void *draw_both(void *arg)
{
    struct draw *d = arg;
    unsigned char b[16];

    d->ok = RAND_bytes_ex(d->lc, b, sizeof(b), 0) == 1
            && RAND_priv_bytes_ex(d->lc, b, sizeof(b), 0) == 1;
    sink ^= b[0];
    if (d->hold) {
        pthread_barrier_wait(&drawn);
        pthread_barrier_wait(&leave);
    }
    return NULL;
}

static void *draw_16(void *arg)
{
    struct draw *d = arg;
    unsigned char b[16];

    d->ok = RAND_bytes_ex(d->lc, b, sizeof(b), 0) == 1;
    sink ^= b[0];
    return NULL;
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;

    if (f == NULL)
        return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2)
        res = -1;
    fclose(f);
    return res * (sysconf(_SC_PAGESIZE) / 1024);
}

static OSSL_LIB_CTX *ctx_for(const char *conf)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();

    if (lc == NULL)
        die("OSSL_LIB_CTX_new failed");
    if (conf != NULL && !OSSL_LIB_CTX_load_config(lc, conf))
        die("loading the configuration failed");
    return lc;
}

/* In a child of its own: RSS added per thread that drew, in bytes. */
static double rss_per_thread(const char *conf)
{
    int fd[2];
    double v = -1;
    pid_t pid;

    if (pipe(fd) != 0)
        die("pipe");
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        static pthread_t th[RSS_THREADS];
        static struct draw d[RSS_THREADS];
        OSSL_LIB_CTX *lc = ctx_for(conf);
        pthread_attr_t attr;
        long before, after;
        int i, ok = 1;

        /* the main thread's generators and the shared parents first */
        d[0].lc = lc;
        draw_both(&d[0]);
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, STACK_BYTES);
        pthread_barrier_init(&drawn, NULL, RSS_THREADS + 1);
        pthread_barrier_init(&leave, NULL, RSS_THREADS + 1);
        before = rss_kib();
        for (i = 0; i < RSS_THREADS; i++) {
            d[i].lc = lc;
            d[i].hold = 1;
            if (pthread_create(&th[i], &attr, draw_both, &d[i]) != 0)
                _exit(2);
        }
        pthread_barrier_wait(&drawn);
        after = rss_kib();
        pthread_barrier_wait(&leave);
        for (i = 0; i < RSS_THREADS; i++) {
            pthread_join(th[i], NULL);
            ok &= d[i].ok;
        }
        v = ok ? (double)(after - before) * 1024 / RSS_THREADS : -1;
        if (write(fd[1], &v, sizeof(v)) != sizeof(v))
            _exit(3);
        _exit(0);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], &v, sizeof(v)) != sizeof(v))
        v = -1;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    return v;
}

/* Microseconds per create + RAND_bytes(16) + join. */
static double churn_us(OSSL_LIB_CTX *lc)
{
    struct draw d = { lc, 0, 0 };
    double t0 = now();
    int i;

    for (i = 0; i < CHURN_THREADS; i++) {
        pthread_t th;

        if (pthread_create(&th, NULL, draw_16, &d) != 0)
            die("pthread_create");
        pthread_join(th, NULL);
        if (!d.ok)
            die("RAND_bytes in a new thread failed");
    }
    return (now() - t0) * 1e6 / CHURN_THREADS;
}

static void bench_threads(const char *conf)
{
    double rc[RUNS], rd[RUNS], cc[RUNS], cd[RUNS], m_rc, m_rd, m_cc, m_cd;
    OSSL_LIB_CTX *lc_cc = ctx_for(conf), *lc_def = ctx_for(NULL);
    int r;

    for (r = 0; r < RUNS; r++) {
        rc[r] = rss_per_thread(conf);
        rd[r] = rss_per_thread(NULL);
        cc[r] = churn_us(lc_cc);
        cd[r] = churn_us(lc_def);
    }
    m_rc = median(rc, RUNS);
    m_rd = median(rd, RUNS);
    m_cc = median(cc, RUNS);
    m_cd = median(cd, RUNS);
    printf("\nThreads (%s against the default configuration)\n", conf);
    printf("  RSS per thread, RAND_bytes + RAND_priv_bytes once, %d threads:"
           " chacharng %.1f KiB   default %.1f KiB   (no more: %s)\n",
           RSS_THREADS, m_rc / 1024, m_rd / 1024, met(m_rc <= m_rd));
    printf("  thread churn (create, RAND_bytes(16), join): chacharng %.1f us"
           "   default %.1f us   default/chacharng %.2f  (>= 0.95: %s)\n",
           m_cc, m_cd, m_cd / m_cc, met(m_cd / m_cc >= 0.95));
    printf("  thread churn, fastest run: chacharng %.1f us   default %.1f us\n",
           cc[0], cd[0]);
    OSSL_LIB_CTX_free(lc_cc);
    OSSL_LIB_CTX_free(lc_def);
}

/*
 * 1 if |conf| may be loaded by this libcrypto: a random-provider sample
 * (a `random_provider` key, OpenSSL 3.5 on) is a fatal configuration error
 * before 3.5, so there its rows are skipped, saying why.
 */
static int conf_usable(const char *conf)
{
    char line[256];
    int random_provider = 0;
    FILE *f = fopen(conf, "r");

    if (f == NULL)
        die("cannot read a configuration file");
    while (fgets(line, sizeof(line), f) != NULL)
        if (strncmp(line, "random_provider", 15) == 0)
            random_provider = 1;
    fclose(f);
    if (random_provider && OpenSSL_version_num() < 0x30500000L) {
        printf("\nThreads (%s): skipped, the random provider needs "
               "OpenSSL 3.5 or later\n",
               conf);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
    OSSL_PROVIDER *def, *cc;
    int i;

    if (argc < 2) {
        fprintf(stderr, "usage: bench_ctx OPENSSL_CNF_SAMPLE...\n");
        return 2;
    }
    if (!OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) || lc == NULL)
        die("init failed");
    def = OSSL_PROVIDER_load(lc, "default");
    cc = OSSL_PROVIDER_load(lc, "chacharng");
    if (def == NULL || cc == NULL)
        die("cannot load the providers (OPENSSL_MODULES?)");
    if (!ip_attach_module())
        die("the chacharng module is not mapped");
    chacha = EVP_RAND_fetch(lc, "CHACHA20-DRBG", "provider=chacharng");
    ctr = EVP_RAND_fetch(lc, "CTR-DRBG", "provider=default");
    if (chacha == NULL || ctr == NULL)
        die("cannot fetch the generators");
    printf("chacharng context and thread costs, %s; medians of %d "
           "interleaved runs\n(and the fastest run; RSS is a size, not a"
           " speed: medians only)\n",
           OpenSSL_version(OPENSSL_VERSION), RUNS);
    bench_lifecycle();
    bench_bulk(lc);
    for (i = 1; i < argc; i++)
        if (conf_usable(argv[i]))
            bench_threads(argv[i]);
    EVP_RAND_free(chacha);
    EVP_RAND_free(ctr);
    OSSL_PROVIDER_unload(cc);
    OSSL_PROVIDER_unload(def);
    OSSL_LIB_CTX_free(lc);
    return 0;
}
