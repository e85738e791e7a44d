/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing without OpenSSL (see kmix.h): the non-blocking read of the
 * kernel's generator by its two routes, the pool of vDSO states, and the
 * answer behind `auto`.  The vDSO is read through its own dynamic symbol
 * table, because the kernel exports getrandom there from 6.11 (x86_64) or
 * 6.12 (aarch64 and others) on, whatever the C library does with it; this
 * file does not ask the C library (glibc calls the vDSO only from 2.41).
 *
 * The vDSO's getrandom (lib/vdso/getrandom.c in Linux) is
 *   ssize_t f(void *buf, size_t len, unsigned int flags,
 *             void *state, size_t state_len)
 * and returns the bytes written or -errno.  Called with buf = NULL,
 * len = 0, flags = 0 and state_len = ~0, it fills a struct of sixteen u32
 * (state size, mmap prot, mmap flags, reserved) and returns 0.  A state
 * must come from mmap with that prot and those flags (MAP_DROPPABLE: wiped
 * in a fork child, and the kernel may zero it under memory pressure; the
 * vDSO re-keys a zeroed state from the kernel), must not cross a page
 * boundary (else -EFAULT), must be passed with state_len equal to its
 * size, and must never be used by two threads at once.
 */
#define _GNU_SOURCE

#include "kmix.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/types.h>
#include <unistd.h>

#include "slotpool.h"
#include "vdso_sym.h"
#include "wipe.h"

/* ------------------------------------------------------------------------
 * The route, found once per process
 * ------------------------------------------------------------------------ */

typedef ssize_t vgetrandom_fn(void *buf, size_t len, unsigned int flags,
                              void *state, size_t state_len);

/* What the parameters query fills in (Linux include/uapi/linux/random.h). */
struct vgetrandom_params {
    uint32_t state_bytes;
    uint32_t mmap_prot;
    uint32_t mmap_flags;
    uint32_t reserved[13];
};

struct route {
    vgetrandom_fn *fn; /* NULL: the system call route */
    size_t state_bytes;
    int prot, flags;
    size_t page;         /* bytes of a page */
    unsigned int across; /* states in one page */
    unsigned int slots;  /* states in one mapping, at most 64 */
    char why[96];
};

static struct route found;
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

/* The vDSO's getrandom and the states it asks for, if usable here. */
static void find_route(void)
{
    struct vgetrandom_params p;
    const char *name = NULL;
    vgetrandom_fn *fn = (vgetrandom_fn *)chacha_vdso_getrandom(&name);
    long page = sysconf(_SC_PAGESIZE);

    found.fn = NULL;
    if (fn == NULL) {
        snprintf(found.why, sizeof(found.why),
                 "getrandom system call: the vDSO exports no getrandom");
        return;
    }
    memset(&p, 0, sizeof(p));
    if (fn(NULL, 0, 0, &p, ~(size_t)0) != 0 || p.state_bytes == 0 || page <= 0
        || p.state_bytes > (unsigned long)page) {
        snprintf(found.why, sizeof(found.why),
                 "getrandom system call: %s refused its parameters query",
                 name);
        return;
    }
    found.state_bytes = p.state_bytes;
    found.prot = (int)p.mmap_prot;
    found.flags = (int)p.mmap_flags;
    found.page = (size_t)page;
    found.across = (unsigned int)(found.page / found.state_bytes);
    /* one page, or as many as make 64 states or fewer */
    found.slots = found.across >= 64 ? 64 : found.across * (64 / found.across);
    snprintf(found.why, sizeof(found.why), "vDSO %s, %zu-byte states", name,
             found.state_bytes);
    found.fn = fn;
}

static const struct route *route(void)
{
    pthread_once(&found_once, find_route);
    return &found;
}

enum chacha_kmix_route chacha_kmix_route(char *why, size_t n)
{
    const struct route *r = route();

    snprintf(why, n, "%s", r->why);
    return r->fn != NULL ? CHACHA_KMIX_VDSO : CHACHA_KMIX_SYSCALL;
}

int chacha_kmix_vdso_available(char *why, size_t n)
{
    return chacha_kmix_route(why, n) == CHACHA_KMIX_VDSO;
}

/* ------------------------------------------------------------------------
 * The pool of vDSO states
 *
 * One state per generator, never per call, from a slot pool (slotpool.h):
 * a mapping holds up to 64 states (two 4 KiB pages of 144-byte states on
 * x86_64 6.11+), none across a page, and stays until chacha_kmix_trim(),
 * so a warm process creates and frees generators with no system call.
 * The pool's records are on the heap and take no lock, so a fork child's
 * records describe exactly the states its copies of the generators hold.
 * Those states read zero in the child (MAP_DROPPABLE wipes on fork), which
 * the vDSO notices and re-keys from the kernel, so the child keeps them.
 * ------------------------------------------------------------------------ */

/* States only ever come from the route found, so its shape is the pool's. */
static void vstates_shape(struct chacha_slotpool_shape *sh)
{
    const struct route *r = route();

    sh->slot_bytes = r->state_bytes;
    sh->span_bytes = r->page;
    sh->per_span = r->across;
    sh->slots = r->fn != NULL ? r->slots : 0;
}

static void *vstates_map(size_t len, int *tag)
{
    void *p = mmap(NULL, len, found.prot, found.flags, -1, 0);

    *tag = 0;
    return p == MAP_FAILED ? NULL : p;
}

static void vstates_unmap(void *base, size_t len)
{
    munmap(base, len);
}

static struct chacha_slotpool vstates = { vstates_shape, vstates_map,
                                          vstates_unmap, NULL };

/*
 * A generator's word for its vDSO state: the state and the record of the
 * mapping that holds it, so that the state goes back to that record and
 * no other (while a trim unmaps a mapping, a new one may be given the
 * same addresses).  On the heap, as the pool's records are, so a fork
 * child's copy of a generator still finds it.
 */
struct vstate {
    void *state; /* NULL: this generator reads by the system call */
    struct chacha_slotpool_map *home;
};

/* The word of a generator whose state could not be had. */
static struct vstate no_state;

/*
 * Reads by generators holding no_state, in this process (atomic): every
 * KMIX_STATE_RETRY-th of them tries for a state again, so a mapping that
 * failed once (memory pressure, a limit raised since) does not leave a
 * generator on the system call for the rest of its life, while one that
 * keeps failing costs one more attempt per that many reads.
 */
#define KMIX_STATE_RETRY 64
static unsigned long stateless_reads;

static struct vstate *state_take(void)
{
    struct chacha_slotpool_map *home;
    struct vstate *v;
    void *p = chacha_slotpool_get(&vstates, &home);

    if (p == NULL)
        return &no_state;
    v = malloc(sizeof(*v));
    if (v == NULL) {
        chacha_slotpool_put(&vstates, p, home);
        return &no_state;
    }
    v->state = p;
    v->home = home;
    return v;
}

void chacha_kmix_release(void *slot)
{
    struct vstate *v = slot;

    if (v == NULL || v == &no_state)
        return;
    /* the vDSO's key and unread batch: the next owner starts afresh */
    chacha_slotpool_put(&vstates, v->state, v->home);
    free(v);
}

void *chacha_kmix_state(void *slot)
{
    const struct vstate *v = slot;

    return v != NULL ? v->state : NULL;
}

void chacha_kmix_trim(void)
{
    chacha_slotpool_trim(&vstates);
}

/* ------------------------------------------------------------------------
 * The read, before every refill and direct request
 * ------------------------------------------------------------------------ */

static chacha_kmix_report_fn *report_fn;
static unsigned long failures; /* failed reads in this process (atomic) */

void chacha_kmix_set_report(chacha_kmix_report_fn *report)
{
    __atomic_store_n(&report_fn, report, __ATOMIC_RELAXED);
}

static int syscall_read(uint8_t g[CHACHA_DRBG_MIX_BYTES])
{
    ssize_t r = getrandom(g, CHACHA_DRBG_MIX_BYTES, GRND_NONBLOCK);
    chacha_kmix_report_fn *report;
    unsigned long n;

    if (r == CHACHA_DRBG_MIX_BYTES)
        return 1;
    report = __atomic_load_n(&report_fn, __ATOMIC_RELAXED);
    if (report != NULL) {
        int err = r < 0 ? errno : 0;

        n = __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        if ((n & (n - 1)) == 0)
            report(err, n);
    }
    return 0;
}

int chacha_kmix_getrandom(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES])
{
    const struct route *r = route();

    if (r->fn != NULL) {
        void *state;

        if (*slot == NULL
            || (*slot == &no_state
                && __atomic_add_fetch(&stateless_reads, 1, __ATOMIC_RELAXED)
                           % KMIX_STATE_RETRY
                       == 0))
            *slot = state_take();
        state = ((struct vstate *)*slot)->state;
        /*
         * The vDSO falls back to the system call itself where it must
         * (kernel generator not ready, state in use by a signal handler);
         * anything it still refuses goes to the system call here.
         */
        if (state != NULL
            && r->fn(g, CHACHA_DRBG_MIX_BYTES, GRND_NONBLOCK, state,
                     r->state_bytes)
                   == CHACHA_DRBG_MIX_BYTES)
            return 1;
    }
    return syscall_read(g);
}

const struct chacha_drbg_mixer chacha_kmix_mixer = { chacha_kmix_getrandom,
                                                     chacha_kmix_release };

static int syscall_only(void **slot, uint8_t g[CHACHA_DRBG_MIX_BYTES])
{
    (void)slot;
    return syscall_read(g);
}

const struct chacha_drbg_mixer chacha_kmix_syscall_mixer = { syscall_only,
                                                             NULL };
