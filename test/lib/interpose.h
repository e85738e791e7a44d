/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fault injection and memory observation by symbol interposition, for
 * t_faults, t_zeroize and t_fork_modes.  A test executable that links
 * interpose.c with -rdynamic defines getrandom, getauxval, mmap, munmap,
 * madvise, __register_atfork, malloc and calloc itself; the dynamic linker then
 * binds the dlopen'd chacharng module to these definitions instead of
 * libc's, so the tests can make the entropy syscall or an allocation fail,
 * can give the module the madvise and atfork of another kernel or of an
 * emulator, and can look at every state page the module maps and unmaps,
 * with no hook in the provider.  Only calls made from inside
 * the module (by return address) are failed or recorded; everything else
 * passes straight through.
 */
#ifndef CHACHARNG_INTERPOSE_H
#define CHACHARNG_INTERPOSE_H

#include <stddef.h>

/*
 * Find the loaded chacharng module (any object whose file name contains
 * "chacharng") and start filtering on its address range.  Call after the
 * module is loaded.  Returns 1 if it was found.
 */
int ip_attach_module(void);

/* getrandom(2) behaviour for calls from the module. */
enum ip_getrandom_mode {
    IP_GETRANDOM_REAL = 0, /* the real system call */
    IP_GETRANDOM_FAIL,     /* -1 with errno EIO */
    IP_GETRANDOM_EINTR,    /* -1 with errno EINTR once, then real */
    IP_GETRANDOM_SHORT     /* real, but at most 1 byte per call */
};
void ip_getrandom_mode(enum ip_getrandom_mode mode);
/* getrandom() calls made by the module since the last reset. */
unsigned long ip_getrandom_calls(void);
void ip_getrandom_reset_calls(void);
/*
 * Of those, the calls shaped as kernel mixing reads them:
 * CHACHA_DRBG_MIX_BYTES with flags GRND_NONBLOCK and nothing else.
 */
unsigned long ip_getrandom_mix_calls(void);
/* Make every getrandom() from the module fail with |err| (0: stop). */
void ip_getrandom_fail_with(int err);

/*
 * The vDSO that getauxval(AT_SYSINFO_EHDR) shows (to everyone: the module
 * asks while it loads, before ip_attach_module()).  Set it before the
 * module is first loaded in the process, which finds its route once.  The
 * stand-ins are an image in this library exporting __vdso_getrandom, which
 * needs the kernel's own vDSO getrandom: ip_vdso_mode() returns 0 (and
 * changes nothing) where there is none, else 1.
 */
enum ip_vdso_mode {
    IP_VDSO_REAL = 0, /* the kernel's own */
    IP_VDSO_NONE,     /* none at all: AT_SYSINFO_EHDR reads 0 */
    IP_VDSO_COUNTING, /* a stand-in that counts reads, passes them on */
    IP_VDSO_FAILING,  /* a stand-in that answers the parameters query
                        * but fails every read with -ENOSYS */
    IP_VDSO_NO_PARAMS /* a stand-in that refuses the parameters query */
};
int ip_vdso_mode(enum ip_vdso_mode mode);
/* 1 if the kernel's vDSO exports getrandom and answers its query. */
int ip_vdso_real_available(void);
/*
 * Reads (calls other than the parameters query) of the stand-in since the
 * last reset; *|mix_shaped| gets those shaped as mixing reads:
 * CHACHA_DRBG_MIX_BYTES, GRND_NONBLOCK, a state of the size the query
 * gave, within one page.
 */
unsigned long ip_vdso_calls(unsigned long *mix_shaped);
void ip_vdso_reset_calls(void);

/*
 * Make the |nth| (1-based) malloc/calloc from the module, counting from
 * now, return NULL with ENOMEM; 0 disarms.  ip_alloc_fired() says whether
 * the armed failure happened.
 */
void ip_fail_alloc(unsigned int nth);
int ip_alloc_fired(void);

/* The same for mmap. */
void ip_fail_mmap(unsigned int nth);
int ip_mmap_fired(void);

/*
 * madvise(2) as the module meets it on other systems.  Advice values the
 * module uses only for core dumps (MADV_DONTDUMP) always reach the kernel
 * except in IP_MADVISE_IGNORED.
 */
enum ip_madvise_mode {
    IP_MADVISE_REAL = 0,      /* the real system call */
    IP_MADVISE_NO_WIPEONFORK, /* kernel < 4.14: MADV_WIPEONFORK is EINVAL */
    IP_MADVISE_IGNORED,       /* qemu-user: every advice returns 0, no effect */
    IP_MADVISE_EAGAIN_ONCE    /* the next call other than MADV_DONTDUMP
                               * fails with EAGAIN, then real */
};
void ip_madvise_mode(enum ip_madvise_mode mode);

/*
 * Make every pthread_atfork() of the module fail with ENOMEM (|fail| 1) or
 * work (0).  glibc's pthread_atfork is a static stub linked into each
 * object that calls __register_atfork, so that is the symbol interposed.
 * ip_atfork_registered() counts the module's registrations that succeeded.
 */
void ip_atfork_fail(int fail);
unsigned long ip_atfork_registered(void);

/*
 * mmap, munmap (of a mapping the module made) and madvise calls of the
 * module since it started, each into its pointer if not NULL; returns the
 * sum.
 */
unsigned long ip_mem_calls(unsigned long *mmaps, unsigned long *munmaps,
                           unsigned long *madvises);

/* Every mapping the module made (up to a fixed number), oldest first. */
struct ip_mapping {
    unsigned char *addr;
    size_t len;
    int live;          /* not unmapped yet */
    int zero_at_unmap; /* every byte was zero when munmap was called */
    int flags;         /* mmap's flags */
};

/*
 * The map type of the vDSO's getrandom states (Linux's MAP_DROPPABLE,
 * which the C library headers may lack): such a mapping holds no
 * generator state of the module's, only the vDSO's.
 */
#define IP_MAP_DROPPABLE 0x08
#define IP_MAP_TYPE 0x0f

/* Number of mappings recorded; *|maps| receives the array. */
size_t ip_mappings(const struct ip_mapping **maps);

/* Forget the recorded mappings (live ones stay live in the module). */
void ip_mappings_reset(void);

/* 1 if every byte of |p|..|p|+|len| is zero. */
int ip_all_zero(const void *p, size_t len);

/*
 * The VmFlags line of /proc/self/smaps for the mapping that holds |addr|,
 * copied into |buf|.  Returns 1 if found.
 */
int ip_smaps_vmflags(const void *addr, char *buf, size_t buflen);

/* 1 if the two-letter flag |flag| (e.g. "dd") is in a VmFlags line. */
int ip_vmflags_has(const char *vmflags, const char *flag);

#endif
