/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPU a benchmark ran on, for the header of `make bench` and `make
 * bench-rand`: figures mean little without the CPU family and model they
 * were measured on (chacharng wins on some x86 families and not others).
 */
#ifndef CHACHARNG_BENCH_CPU_H
#define CHACHARNG_BENCH_CPU_H

#include <stddef.h>

/* The text after "|key|<spaces>: " in the first such /proc/cpuinfo line. */
int bench_cpuinfo_field(const char *key, char *out, size_t n);

/*
 * "NAME (VENDOR family F model M stepping S)" on x86, "NAME (implementer
 * I part P variant V revision R)" on Arm, with what /proc/cpuinfo has.
 */
void bench_cpu_describe(char *out, size_t n);

/*
 * The core clock in Hz right now, from a timed chain of dependent integer
 * additions (one cycle each); 0 where the chain is not written for the
 * architecture.  About 0.1 ms per call.  Frequency changes make it a
 * figure for this moment: take it next to what it converts.
 */
double bench_core_hz(void);

#endif
