/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU's name, family and model from /proc/cpuinfo, for benchmark
 * headers (bench_cpu.h).  Reads the first processor's lines only.
 */
#include <stdio.h>
#include <string.h>

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
