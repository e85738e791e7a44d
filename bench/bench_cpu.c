/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU's name, family and model from /proc/cpuinfo, for benchmark
 * headers (bench_cpu.h), and its core clock as measured, for figures in
 * cycles.  Reads the first processor's cpuinfo lines only.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "bench_cpu.h"

int bench_cpuinfo_field(const char *key, char *out, size_t n)
{
    char line[4096];
    size_t klen = strlen(key);
    FILE *f = fopen("/proc/cpuinfo", "r");
    int found = 0;

    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        char *p = line + klen;

        if (strncmp(line, key, klen) != 0
            || (*p != ' ' && *p != '\t' && *p != ':'))
            continue;
        p = strchr(line, ':');
        if (p == NULL)
            continue;
        for (p++; *p == ' '; p++)
            continue;
        p[strcspn(p, "\n")] = '\0';
        snprintf(out, n, "%s", p);
        found = 1;
    }
    fclose(f);
    return found;
}

void bench_cpu_describe(char *out, size_t n)
{
    char name[256], a[64], b[64], c[64], d[64];

    if (!bench_cpuinfo_field("model name", name, sizeof(name))
        && !bench_cpuinfo_field("Model", name, sizeof(name)))
        snprintf(name, sizeof(name), "unknown CPU");
    if (bench_cpuinfo_field("cpu family", b, sizeof(b))
        && bench_cpuinfo_field("model", c, sizeof(c))) {
        if (!bench_cpuinfo_field("vendor_id", a, sizeof(a)))
            snprintf(a, sizeof(a), "?");
        if (!bench_cpuinfo_field("stepping", d, sizeof(d)))
            snprintf(d, sizeof(d), "?");
        snprintf(out, n, "%s (%s family %s model %s stepping %s)", name, a, b,
                 c, d);
    } else if (bench_cpuinfo_field("CPU implementer", a, sizeof(a))
               && bench_cpuinfo_field("CPU part", b, sizeof(b))) {
        if (!bench_cpuinfo_field("CPU variant", c, sizeof(c)))
            snprintf(c, sizeof(c), "?");
        if (!bench_cpuinfo_field("CPU revision", d, sizeof(d)))
            snprintf(d, sizeof(d), "?");
        snprintf(out, n, "%s (implementer %s part %s variant %s revision %s)",
                 name, a, b, c, d);
    } else {
        snprintf(out, n, "%s (family and model unknown)", name);
    }
}

/*
 * The core clock, measured: CHAIN_ADDS dependent register additions take
 * one core cycle each on every x86_64 and aarch64 core (an integer add has
 * a latency of one cycle and each one waits for the last), so their count
 * over the CLOCK_MONOTONIC time they took is the clock rate.  The loop
 * counter is a second, independent chain the core runs alongside.  Each
 * timing lasts about 10 us, short enough that a time slice lost to another
 * process is rare within one; such a timing only reads slower, so the
 * fastest of CHAIN_TRIES is kept.  The time stamp counter is no substitute:
 * it ticks at a fixed rate whatever the core clock is, and virtual
 * machines rarely expose the cycle counters.
 */
#define CHAIN_LOOPS 400
#define CHAIN_UNROLL 100 /* the .rept count below */
#define CHAIN_TRIES 7

#if defined(__x86_64__) || defined(__aarch64__)
static double chain_secs(void)
{
    struct timespec t0, t1;
    unsigned long n = CHAIN_LOOPS, x = 0;

    clock_gettime(CLOCK_MONOTONIC, &t0);
#if defined(__x86_64__)
    __asm__ __volatile__("1:\n\t"
                         ".rept 100\n\t"
                         "addq $1, %0\n\t"
                         ".endr\n\t"
                         "decq %1\n\t"
                         "jnz 1b"
                         : "+r"(x), "+r"(n)
                         :
                         : "cc");
#else
    __asm__ __volatile__("1:\n\t"
                         ".rept 100\n\t"
                         "add %0, %0, #1\n\t"
                         ".endr\n\t"
                         "subs %1, %1, #1\n\t"
                         "b.ne 1b"
                         : "+r"(x), "+r"(n)
                         :
                         : "cc");
#endif
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0.tv_sec)
           + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
}

double bench_core_hz(void)
{
    double best = 0.0;
    int i;

    for (i = 0; i < CHAIN_TRIES; i++) {
        double s = chain_secs();

        if (s > 0 && (double)CHAIN_LOOPS * CHAIN_UNROLL / s > best)
            best = (double)CHAIN_LOOPS * CHAIN_UNROLL / s;
    }
    return best;
}
#else
double bench_core_hz(void)
{
    return 0.0;
}
#endif
