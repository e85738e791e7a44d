/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TAP output and the per-kernel runner (see testutil.h).  Child processes
 * write their test points into a pipe; the parent relays and counts them so
 * that a single plan covers every kernel.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chacha.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define TU_HAVE_VALGRIND_H 1
#endif
#endif

int tu_failures;
static int tu_points;

const char *tu_impl(void)
{
    const char *e = getenv("CHACHARNG_IMPL");

    return e != NULL ? e : "default";
}

const char *tu_expected_impl(void)
{
    const char *e = getenv("CHACHARNG_IMPL");

    return e != NULL && *e != '\0' ? e : chacha_impl_best()->name;
}

const struct chacha_impl *tu_impl_under_test(void)
{
    const char *e = getenv("CHACHARNG_IMPL");
    const struct chacha_impl *impl =
        e != NULL && *e != '\0' ? chacha_impl_by_name(e) : NULL;

    return impl != NULL ? impl : chacha_impl_best();
}

void *tu_xmalloc(size_t n)
{
    void *p = malloc(n != 0 ? n : 1);

    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

size_t tu_min_size(size_t a, size_t b)
{
    return a < b ? a : b;
}

void tu_child_of_threads(void)
{
#ifdef TU_HAVE_VALGRIND_H
    /* a no-op outside valgrind */
    VALGRIND_CLO_CHANGE("--leak-check=no");
#endif
}

int tu_under_valgrind(void)
{
    const char *pre = getenv("LD_PRELOAD");

    return pre != NULL && strstr(pre, "vgpreload") != NULL;
}

int tu_ok(int cond, const char *fmt, ...)
{
    va_list ap;

    tu_points++;
    printf("%s - [%s] ", cond ? "ok" : "not ok", tu_impl());
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    if (!cond)
        tu_failures++;
    return cond;
}

void tu_diag(const char *fmt, ...)
{
    va_list ap;

    printf("# ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void tu_skip(const char *fmt, ...)
{
    va_list ap;

    tu_points++;
    printf("ok - [%s] # SKIP ", tu_impl());
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void tu_diag_hex(const char *what, const unsigned char *p, size_t len)
{
    size_t i;

    printf("# %s:", what);
    for (i = 0; i < len; i++)
        printf("%s%02x", i % 32 == 0 ? "\n#   " : "", p[i]);
    printf("\n");
    fflush(stdout);
}

int tu_main_once(void (*body)(void))
{
    body();
    printf("1..%d\n", tu_points);
    return tu_failures ? 1 : 0;
}

void tu_run_child(const char *what, void (*job)(void *), void *arg)
{
    int fds[2], status;
    pid_t pid;
    FILE *in;
    char line[4096];

    fflush(stdout);
    if (pipe(fds) != 0) {
        tu_ok(0, "pipe for %s", what);
        return;
    }
    pid = fork();
    if (pid < 0) {
        tu_ok(0, "fork for %s", what);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDOUT_FILENO);
        close(fds[1]);
        job(arg);
        fflush(stdout);
        _exit(tu_failures ? 1 : 0);
    }
    close(fds[1]);
    in = fdopen(fds[0], "r");
    while (in != NULL && fgets(line, sizeof(line), in) != NULL) {
        if (strncmp(line, "ok", 2) == 0)
            tu_points++;
        else if (strncmp(line, "not ok", 6) == 0) {
            tu_points++;
            tu_failures++;
        }
        fputs(line, stdout);
    }
    if (in != NULL)
        fclose(in);
    fflush(stdout);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        /* a crash in the child is a failure even if no point said so */
        tu_ok(0, "%s: test process died (status 0x%x)", what, status);
    } else if (WEXITSTATUS(status) != 0 && tu_failures == 0) {
        tu_ok(0, "%s: test process exited %d", what, WEXITSTATUS(status));
    }
}

struct impl_run {
    const char *name;
    void (*body)(void);
};

static void run_impl(void *arg)
{
    const struct impl_run *r = arg;

    setenv("CHACHARNG_IMPL", r->name, 1);
    r->body();
}

/* Run |body| in a child with CHACHARNG_IMPL=|name|; relay and count its TAP. */
static void run_child(const char *name, void (*body)(void))
{
    struct impl_run r;
    char what[64];

    r.name = name;
    r.body = body;
    snprintf(what, sizeof(what), "kernel %s", name);
    tu_run_child(what, run_impl, &r);
}

void tu_each_kernel_path(void (*check)(const struct chacha_impl *))
{
    const struct chacha_impl *list, *variants;
    size_t n, i, nv, v;

    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++) {
        if (!chacha_impl_supported(&list[i])) {
            tu_skip("kernel %s: not supported by this CPU", list[i].name);
            continue;
        }
        check(&list[i]);
        variants = chacha_impl_variants(&list[i], &nv);
        for (v = 0; v < nv; v++) {
            if (!chacha_impl_supported(&variants[v]))
                tu_skip("kernel %s: not supported by this CPU",
                        variants[v].name);
            else
                check(&variants[v]);
        }
    }
}

int tu_main_per_impl(void (*body)(void))
{
    const struct chacha_impl *list;
    size_t n, i;

    if (getenv("CHACHARNG_IMPL") != NULL)
        return tu_main_once(body);
    list = chacha_impl_list(&n);
    for (i = 0; i < n; i++) {
        if (!chacha_impl_supported(&list[i])) {
            tu_points++;
            printf("ok - [%s] # SKIP kernel %s: not supported by this CPU\n",
                   list[i].name, list[i].name);
            continue;
        }
        run_child(list[i].name, body);
    }
    printf("1..%d\n", tu_points);
    return tu_failures ? 1 : 0;
}
