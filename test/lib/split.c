/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Splitting a test's process and talking to the child; see split.h.
 */
#define _GNU_SOURCE /* clone */

#include "split.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* glibc 2.34+; weak, so the tests still link (and skip) without it. */
pid_t _Fork(void) __attribute__((weak));

static const char *const split_names[TU_NSPLIT] = { "fork()", "_Fork()",
                                                    "clone() without CLONE_VM",
                                                    "syscall(SYS_fork)" };

const char *tu_split_name(enum tu_split how)
{
    return (unsigned int)how < TU_NSPLIT ? split_names[how] : "?";
}

int tu_split_available(enum tu_split how, const void *stack, const char **why)
{
    const char *no = NULL;

    if (how == TU_SPLIT_UFORK && _Fork == NULL)
        no = "this C library has no _Fork()";
    else if (how == TU_SPLIT_CLONE && stack == NULL)
        no = "no stack for clone children";
    if (no != NULL && why != NULL)
        *why = no;
    return no == NULL;
}

/* What a clone child runs; it reads this from its own copy of memory. */
struct clone_job {
    tu_job *job;
    void *arg;
};

/*
 * The first thing every child does.  The parent flushed stdout before the
 * split, but another of its threads may have printed into the buffer since,
 * and the child has a copy of that: it is the parent's to write.  Under
 * valgrind, which runs glibc's __libc_freeres at exit and so flushes every
 * stream, the child would write it again and the TAP stream would carry
 * that line twice.
 */
static void child_start(void)
{
    __fpurge(stdout);
}

/*
 * Returning ends the child (clone's own code makes the exit system call):
 * no noreturn _exit here, which a sanitizer would want to unwind from a
 * stack it does not know.
 */
static int clone_entry(void *arg)
{
    const struct clone_job *cj = arg;

    child_start();
    return cj->job(cj->arg);
}

/*
 * End a child with |status|, as _exit() would.  Not _exit() itself, and
 * not declared noreturn: before any noreturn call ASan unwinds the stack
 * it believes the thread runs on, and in a child that _Fork or the raw
 * system call made from another thread that belief is wrong (one warning
 * per child, nothing worse).
 */
static void child_exit(int status)
{
    syscall(SYS_exit_group, status);
    abort(); /* not reached */
}

pid_t tu_split(enum tu_split how, tu_job *job, void *arg, void *stack_top,
               int clone_flags)
{
    struct clone_job cj = { job, arg };
    pid_t pid = -1;

    if (!tu_split_available(how, stack_top, NULL)) {
        errno = how == TU_SPLIT_UFORK ? ENOSYS : EINVAL;
        return -1;
    }
    /* buffered TAP must not be written twice */
    fflush(stdout);
    switch (how) {
    case TU_SPLIT_FORK:
        pid = fork();
        break;
    case TU_SPLIT_UFORK:
        pid = _Fork();
        break;
    case TU_SPLIT_SYSFORK:
#ifdef SYS_fork
        pid = (pid_t)syscall(SYS_fork);
#else
        /* aarch64 and other newer ABIs only have clone */
        pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
        break;
    case TU_SPLIT_CLONE:
        return clone(clone_entry, stack_top, SIGCHLD | clone_flags, &cj);
    default:
        errno = EINVAL;
        return -1;
    }
    if (pid == 0) {
        child_start();
        child_exit(job(arg));
    }
    return pid;
}

void *tu_split_stack_new(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);

    return p != MAP_FAILED ? p : NULL;
}

void tu_split_stack_free(void *stack, size_t bytes)
{
    if (stack != NULL)
        munmap(stack, bytes);
}

/* Reads into |in|, or writes from |out| when it is not NULL. */
static int transfer(int fd, unsigned char *in, const unsigned char *out,
                    size_t n)
{
    size_t done = 0;

    while (done < n) {
        ssize_t k = out != NULL ? write(fd, out + done, n - done)
                                : read(fd, in + done, n - done);

        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return 0;
        done += (size_t)k;
    }
    return 1;
}

int tu_write_full(int fd, const void *buf, size_t n)
{
    return transfer(fd, NULL, buf, n);
}

int tu_read_full(int fd, void *buf, size_t n)
{
    return transfer(fd, buf, NULL, n);
}

int tu_wait_exit(pid_t pid, int *status)
{
    int st = -1;
    pid_t got = -1;

    if (pid > 0)
        while ((got = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
            ;
    if (got != pid)
        st = -1;
    if (status != NULL)
        *status = st;
    return got == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int tu_wait_ok(pid_t pid)
{
    return tu_wait_exit(pid, NULL) == 0;
}
