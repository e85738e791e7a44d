/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The child run of bench_narrow.h: /proc/self/exe -m -c COLUMNS with
 * OPENSSL_ia32cap set, its machine-readable request table read back
 * through a pipe.
 */
#define _GNU_SOURCE /* setenv in the child */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_narrow.h"

#define NARROW_MAX 8

static const size_t *narrow_lens;
static size_t narrow_n;
static const char *const narrow_titles[] = { "ssse3", "sse2", "chacha20" };
#define NARROW_COLS (sizeof(narrow_titles) / sizeof(narrow_titles[0]))
static double narrow_mbps[NARROW_COLS][NARROW_MAX];

static int column_index(const char *title)
{
    size_t c;

    for (c = 0; c < NARROW_COLS; c++)
        if (strcmp(title, narrow_titles[c]) == 0)
            return (int)c;
    return -1;
}

/* One "request<TAB>column<TAB>bytes<TAB>median<TAB>fastest" line. */
static void take_line(const char *line)
{
    char title[32];
    size_t len, k;
    double median, fastest;
    int c;

    if (sscanf(line, "request\t%31[^\t]\t%zu\t%lf\t%lf", title, &len, &median,
               &fastest)
            != 4
        || (c = column_index(title)) < 0)
        return;
    for (k = 0; k < narrow_n; k++)
        if (narrow_lens[k] == len)
            narrow_mbps[c][k] = median;
}

static void exec_child(int fd, int quick, const char *cols)
{
    char list[64];
    char *argv[] = { "bench", "-m", "-c", list, NULL, NULL };

    snprintf(list, sizeof(list), "%s", cols);

    if (quick)
        argv[4] = "-q";
    if (dup2(fd, STDOUT_FILENO) < 0
        || setenv("OPENSSL_ia32cap", BENCH_NARROW_IA32CAP, 1) != 0)
        _exit(127);
    close(fd);
    execv("/proc/self/exe", argv);
    _exit(127);
}

int bench_narrow_run(int quick, const char *cols, const size_t *lens, size_t n,
                     char *why, size_t whyn)
{
    char line[256];
    int fds[2], status;
    size_t k;
    pid_t pid;
    FILE *f;

    narrow_lens = lens;
    narrow_n = n < NARROW_MAX ? n : NARROW_MAX;
    for (k = 0; k < NARROW_MAX * NARROW_COLS; k++)
        narrow_mbps[k / NARROW_MAX][k % NARROW_MAX] = -1.0;
    fflush(stdout);
    if (pipe(fds) != 0) {
        snprintf(why, whyn, "no pipe for the child run");
        return 0;
    }
    if ((pid = fork()) < 0) {
        close(fds[0]);
        close(fds[1]);
        snprintf(why, whyn, "no child process");
        return 0;
    }
    if (pid == 0) {
        close(fds[0]);
        exec_child(fds[1], quick, cols);
    }
    close(fds[1]);
    f = fdopen(fds[0], "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        take_line(line);
    if (f != NULL)
        fclose(f);
    else
        close(fds[0]);
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)
        || WEXITSTATUS(status) != 0) {
        snprintf(why, whyn, "the child run with AVX2 masked failed");
        return 0;
    }
    return 1;
}

double bench_narrow_cell(const char *title, size_t k)
{
    int c = column_index(title);

    return c < 0 || k >= narrow_n ? -1.0 : narrow_mbps[c][k];
}
