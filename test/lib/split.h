/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Splitting a test's process: the ways a user's program may make a child
 * (each reaches the generator's fork detection differently), a child that
 * runs the caller's job and exits with its result, whole transfers over the
 * pipe a child reports through, and how the child ended.  OpenSSL-free
 * (the s390x stage builds it).
 */
#ifndef CHACHARNG_TEST_SPLIT_H
#define CHACHARNG_TEST_SPLIT_H

#include <stddef.h>
#include <sys/types.h>

enum tu_split {
    TU_SPLIT_FORK,    /* fork(): the atfork handlers run */
    TU_SPLIT_UFORK,   /* _Fork() (glibc 2.34+): no handler runs */
    TU_SPLIT_CLONE,   /* clone() without CLONE_VM, on a stack of its own */
    TU_SPLIT_SYSFORK, /* the system call behind the C library's back:
                         SYS_fork, or SYS_clone with SIGCHLD alone where
                         the ABI has none (aarch64) */
    TU_NSPLIT
};

/* What a child runs; its result is the child's exit status. */
typedef int tu_job(void *arg);

/* "fork()", "_Fork()", "clone() without CLONE_VM", "syscall(SYS_fork)" */
const char *tu_split_name(enum tu_split how);

/*
 * 1 if |how| can run here, a clone child on |stack| (NULL: there is none);
 * otherwise 0, and *|why| (unless |why| is NULL) says why not.
 */
int tu_split_available(enum tu_split how, const void *stack, const char **why);

/*
 * Split the process |how|, with stdout flushed first so that buffered TAP
 * is not written twice.  The child runs |job|(|arg|) and exits with its
 * result, running no atexit handler and flushing no stdio buffer; a clone
 * child starts with its stack at |stack_top| (stacks grow down) and is made
 * with SIGCHLD | |clone_flags|, which the other ways ignore.  Returns the
 * child's pid to the parent, or -1 with errno set (ENOSYS or EINVAL when
 * |how| is not available).
 */
pid_t tu_split(enum tu_split how, tu_job *job, void *arg, void *stack_top,
               int clone_flags);

/* |bytes| of fresh memory for clone children's stacks, or NULL. */
void *tu_split_stack_new(size_t bytes);
void tu_split_stack_free(void *stack, size_t bytes);

/*
 * All |n| bytes to or from |fd|, through short transfers and EINTR.  1 on
 * success; 0 on an error or, reading, an end of file before |n| bytes.
 */
int tu_write_full(int fd, const void *buf, size_t n);
int tu_read_full(int fd, void *buf, size_t n);

/*
 * Reap the child |pid|.  Returns its exit code if it exited, -1 if it was
 * killed, could not be waited for, or |pid| is not a child's (<= 0: a
 * split that failed).  *|status|, unless NULL, gets the raw wait status,
 * or -1 when there was none.
 */
int tu_wait_exit(pid_t pid, int *status);

/* 1 if the child |pid| exited with 0 (reaping it); 0 otherwise. */
int tu_wait_ok(pid_t pid);

#endif
