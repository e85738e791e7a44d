/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Minimal TAP helpers for the C tests, and the per-kernel runner.
 *
 * Output is TAP (automake's tap-driver counts every test point).  A test
 * program hands its body to tu_main_per_impl(), which runs it once per
 * kernel compiled in: each run is a forked child with CHACHARNG_IMPL set, so
 * the provider picks that kernel at load exactly as a user forcing it would.
 * Kernels the CPU lacks are reported as skipped, with the reason.
 */
#ifndef CHACHARNG_TESTUTIL_H
#define CHACHARNG_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>

struct chacha_impl;

extern int tu_failures;

/* Prefix of every test point's description: the kernel under test. */
const char *tu_impl(void);

/* Record one test point; returns |cond| so callers can bail out. */
int tu_ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A TAP diagnostic line ("# ..."). */
void tu_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Record one skipped test point with its reason. */
void tu_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Hex dump |len| bytes of |p| as a diagnostic, labelled |what|. */
void tu_diag_hex(const char *what, const unsigned char *p, size_t len);

/*
 * Run |body| once per compiled-in kernel that the CPU supports (or only for
 * CHACHARNG_IMPL when the caller already set it), print the TAP plan and
 * return the exit status for main().  |body| returns normally; failures are
 * counted through tu_ok().
 */
int tu_main_per_impl(void (*body)(void));

/*
 * Run |job|(|arg|) in a forked child, relaying its TAP to our output and
 * counting its test points as ours; a child that dies or fails without
 * saying so is a failed point named after |what|.
 */
void tu_run_child(const char *what, void (*job)(void *), void *arg);

struct chacha_impl;

/*
 * Call |check| on every compiled-in kernel and on each of its forced paths
 * (chacha_impl_variants()), in this process; one the CPU cannot run is a
 * skipped point, never a pass.
 */
void tu_each_kernel_path(void (*check)(const struct chacha_impl *));

/* Run |body| once, without the kernel loop (tests that do not use it). */
int tu_main_once(void (*body)(void));

/*
 * The kernel a test should find at work: the one CHACHARNG_IMPL names when
 * set, otherwise the best one the CPU supports.  tu_expected_impl() gives
 * its name as the provider should report it; tu_impl_under_test() the
 * kernel itself, for tests that drive chacha/ directly.
 */
const char *tu_expected_impl(void);
const struct chacha_impl *tu_impl_under_test(void);

/* malloc(|n|), at least one byte; on failure the test exits with 2. */
void *tu_xmalloc(size_t n);

size_t tu_min_size(size_t a, size_t b);

/*
 * In a fork child of a process that had other threads: what only those
 * threads referenced (their stacks are not scanned in the child, since the
 * threads do not exist there) is lost by the nature of fork, not leaked by
 * the code under test.  Under memcheck this turns its leak check off for
 * the rest of the child; errors of every other kind are still reported.
 * Parents, and children of single-threaded parents, keep the leak check.
 */
void tu_child_of_threads(void);

/*
 * 1 under valgrind's memcheck (it preloads vgpreload_*.so into every
 * program it runs).  Tests that start many processes or rounds run fewer
 * there: every process costs seconds under memcheck, and what it checks
 * (each path's memory use) needs each path once, not the repetitions a
 * race wants; the plain, ASan and TSan runs keep the full counts.
 */
int tu_under_valgrind(void);

#define TU_OK(cond, ...) tu_ok(!!(cond), __VA_ARGS__)

#endif
