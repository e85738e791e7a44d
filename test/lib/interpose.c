/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Interposed getrandom/getauxval/mmap/munmap/madvise/__register_atfork
 * (and, with IP_WITH_ALLOC, malloc and calloc) for the fault-injection,
 * zeroization, fork-mode and kernel-mixing tests; see interpose.h.
 * The real functions are found with dlsym(RTLD_NEXT), so a sanitizer or
 * valgrind allocator below us keeps working.  Calls are attributed to the
 * module by their return address; munmap is matched by address instead,
 * because a tail call (or a thread-exit destructor) may reach it from
 * outside the module.
 */
#define _GNU_SOURCE

#include "interpose.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/types.h>
#include <unistd.h>

#include <elf.h>

#include "chacha_drbg.h" /* CHACHA_DRBG_MIX_BYTES: a mixing read's size */

#define MAX_MAPPINGS 256

/* The build hides symbols by default; interposers must be seen. */
#define IP_EXPORT __attribute__((visibility("default")))
/*
 * The interposers can run inside a sanitizer's own start-up, before its
 * shadow memory exists: nothing on that path may be instrumented.
 */
#define IP_NOSAN __attribute__((no_sanitize_address, no_sanitize_thread))

/*
 * A sanitizer runtime intercepts these itself and exports its versions
 * under these names: call them directly, because it may call the plain
 * names (and so us) while starting up, before dlsym could be used.
 */
extern void *__interceptor_mmap(void *, size_t, int, int, int, off_t)
    __attribute__((weak));
extern int __interceptor_munmap(void *, size_t) __attribute__((weak));

static uintptr_t mod_lo, mod_hi;

IP_NOSAN static int from_module(const void *ret)
{
    uintptr_t a = (uintptr_t)ret;

    return mod_hi != 0 && a >= mod_lo && a < mod_hi;
}

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    int i;

    (void)size;
    (void)arg;
    if (info->dlpi_name == NULL || strstr(info->dlpi_name, "chacharng") == NULL
        || strstr(info->dlpi_name, ".so") == NULL)
        return 0;
    for (i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

        if (ph->p_type != PT_LOAD)
            continue;
        if (info->dlpi_addr + ph->p_vaddr < lo)
            lo = info->dlpi_addr + ph->p_vaddr;
        if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
            hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    if (hi == 0)
        return 0;
    mod_lo = lo;
    mod_hi = hi;
    return 1;
}

int ip_attach_module(void)
{
    return dl_iterate_phdr(find_module, NULL) == 1;
}

/* ---------------------------------------------------------------------- */
/* getrandom                                                              */
/* ---------------------------------------------------------------------- */

typedef ssize_t getrandom_fn(void *, size_t, unsigned int);

static enum ip_getrandom_mode gr_mode;
static unsigned long gr_calls, gr_mix_calls;
static int gr_errno;

void ip_getrandom_mode(enum ip_getrandom_mode mode)
{
    __atomic_store_n(&gr_mode, mode, __ATOMIC_SEQ_CST);
}

unsigned long ip_getrandom_calls(void)
{
    return __atomic_load_n(&gr_calls, __ATOMIC_SEQ_CST);
}

void ip_getrandom_reset_calls(void)
{
    __atomic_store_n(&gr_calls, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&gr_mix_calls, 0, __ATOMIC_SEQ_CST);
}

unsigned long ip_getrandom_mix_calls(void)
{
    return __atomic_load_n(&gr_mix_calls, __ATOMIC_SEQ_CST);
}

void ip_getrandom_fail_with(int err)
{
    __atomic_store_n(&gr_errno, err, __ATOMIC_SEQ_CST);
}

IP_EXPORT ssize_t getrandom(void *buf, size_t buflen, unsigned int flags)
{
    static getrandom_fn *real;
    enum ip_getrandom_mode mode = IP_GETRANDOM_REAL;

    if (real == NULL)
        real = (getrandom_fn *)dlsym(RTLD_NEXT, "getrandom");
    if (from_module(__builtin_return_address(0))) {
        int err = __atomic_load_n(&gr_errno, __ATOMIC_SEQ_CST);

        __atomic_add_fetch(&gr_calls, 1, __ATOMIC_SEQ_CST);
        if (buflen == CHACHA_DRBG_MIX_BYTES && flags == GRND_NONBLOCK)
            __atomic_add_fetch(&gr_mix_calls, 1, __ATOMIC_SEQ_CST);
        if (err != 0) {
            errno = err;
            return -1;
        }
        mode = __atomic_load_n(&gr_mode, __ATOMIC_SEQ_CST);
    }
    switch (mode) {
    case IP_GETRANDOM_FAIL:
        errno = EIO;
        return -1;
    case IP_GETRANDOM_EINTR:
        /* one interruption, then back to normal */
        ip_getrandom_mode(IP_GETRANDOM_REAL);
        errno = EINTR;
        return -1;
    case IP_GETRANDOM_SHORT:
        if (buflen > 1)
            buflen = 1;
        break;
    case IP_GETRANDOM_REAL:
    default:
        break;
    }
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(buf, buflen, flags);
}

/* ---------------------------------------------------------------------- */
/* getauxval(AT_SYSINFO_EHDR): the vDSO the module finds                  */
/* ---------------------------------------------------------------------- */

/*
 * The stand-in vDSO is an ELF image in this array, as small as the module's
 * reader needs: the header, a PT_LOAD at 0 and a PT_DYNAMIC, a dynamic
 * section naming a DT_HASH, a DT_SYMTAB and a DT_STRTAB, and one function
 * symbol, __vdso_getrandom, whose value is the stand-in's address less the
 * image's (modulo the address size, so it also works below the image).
 */
#if defined(__s390x__) || defined(__alpha__)
typedef uint64_t vdso_hash_word;
#else
typedef Elf32_Word vdso_hash_word;
#endif

struct fake_vdso {
    ElfW(Ehdr) eh;
    ElfW(Phdr) ph[2];
    ElfW(Dyn) dyn[4];
    vdso_hash_word hash[5]; /* nbucket, nchain, bucket[1], chain[2] */
    ElfW(Sym) sym[2];
    char str[24];
};

typedef ssize_t vgetrandom_fn(void *, size_t, unsigned int, void *, size_t);

static struct fake_vdso fake;
static vgetrandom_fn *vdso_real;
static size_t vdso_state_bytes;
static enum ip_vdso_mode vdso_mode;
static unsigned long vdso_calls, vdso_mix_calls;

/* The kernel's own vDSO getrandom, found through the dynamic linker. */
static vgetrandom_fn *real_vgetrandom(void)
{
    static int looked;
    void *h;

    if (looked)
        return vdso_real;
    looked = 1;
    h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    vdso_real = (vgetrandom_fn *)dlsym(h, "__vdso_getrandom");
    if (vdso_real == NULL)
        vdso_real = (vgetrandom_fn *)dlsym(h, "__kernel_getrandom");
    dlclose(h);
    return vdso_real;
}

int ip_vdso_real_available(void)
{
    uint32_t params[16] = { 0 };
    vgetrandom_fn *f = real_vgetrandom();

    if (f == NULL || f(NULL, 0, 0, params, ~(size_t)0) != 0)
        return 0;
    vdso_state_bytes = params[0];
    return vdso_state_bytes > 0;
}

static ssize_t stand_in(void *buf, size_t len, unsigned int flags, void *state,
                        size_t state_len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    enum ip_vdso_mode mode = __atomic_load_n(&vdso_mode, __ATOMIC_SEQ_CST);

    if (buf == NULL && len == 0 && flags == 0 && state_len == ~(size_t)0) {
        if (mode == IP_VDSO_NO_PARAMS)
            return -ENOSYS;
        return vdso_real(buf, len, flags, state, state_len);
    }
    __atomic_add_fetch(&vdso_calls, 1, __ATOMIC_SEQ_CST);
    if (len == CHACHA_DRBG_MIX_BYTES && flags == GRND_NONBLOCK
        && state_len == vdso_state_bytes
        && (uintptr_t)state % page + state_len <= page)
        __atomic_add_fetch(&vdso_mix_calls, 1, __ATOMIC_SEQ_CST);
    if (mode == IP_VDSO_FAILING)
        return -ENOSYS;
    return vdso_real(buf, len, flags, state, state_len);
}

static void build_fake_vdso(void)
{
    uintptr_t base = (uintptr_t)&fake;

    memcpy(fake.eh.e_ident, ELFMAG, SELFMAG);
    fake.eh.e_ident[EI_CLASS] = sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32;
    fake.eh.e_phoff = offsetof(struct fake_vdso, ph);
    fake.eh.e_phnum = 2;
    fake.ph[0].p_type = PT_LOAD;
    fake.ph[0].p_memsz = sizeof(fake);
    fake.ph[1].p_type = PT_DYNAMIC;
    fake.ph[1].p_offset = fake.ph[1].p_vaddr = offsetof(struct fake_vdso, dyn);
    fake.dyn[0].d_tag = DT_HASH;
    fake.dyn[0].d_un.d_ptr = offsetof(struct fake_vdso, hash);
    fake.dyn[1].d_tag = DT_SYMTAB;
    fake.dyn[1].d_un.d_ptr = offsetof(struct fake_vdso, sym);
    fake.dyn[2].d_tag = DT_STRTAB;
    fake.dyn[2].d_un.d_ptr = offsetof(struct fake_vdso, str);
    fake.dyn[3].d_tag = DT_NULL;
    fake.hash[0] = 1; /* one bucket, holding symbol 1 */
    fake.hash[1] = 2; /* two symbols: the null one and ours */
    fake.hash[2] = 1;
    memcpy(fake.str, "\0__vdso_getrandom", sizeof("\0__vdso_getrandom"));
    fake.sym[1].st_name = 1;
    fake.sym[1].st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
    fake.sym[1].st_shndx = 1;
    fake.sym[1].st_value = (ElfW(Addr))((uintptr_t)stand_in - base);
}

int ip_vdso_mode(enum ip_vdso_mode mode)
{
    if (mode >= IP_VDSO_COUNTING && !ip_vdso_real_available())
        return 0;
    if (mode >= IP_VDSO_COUNTING)
        build_fake_vdso();
    __atomic_store_n(&vdso_mode, mode, __ATOMIC_SEQ_CST);
    return 1;
}

unsigned long ip_vdso_calls(unsigned long *mix_shaped)
{
    if (mix_shaped != NULL)
        *mix_shaped = __atomic_load_n(&vdso_mix_calls, __ATOMIC_SEQ_CST);
    return __atomic_load_n(&vdso_calls, __ATOMIC_SEQ_CST);
}

void ip_vdso_reset_calls(void)
{
    __atomic_store_n(&vdso_calls, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&vdso_mix_calls, 0, __ATOMIC_SEQ_CST);
}

/* glibc's own, under the name it also exports */
extern unsigned long __getauxval(unsigned long type);

IP_EXPORT IP_NOSAN unsigned long getauxval(unsigned long type)
{
    enum ip_vdso_mode mode;

    if (type != AT_SYSINFO_EHDR)
        return __getauxval(type);
    mode = __atomic_load_n(&vdso_mode, __ATOMIC_SEQ_CST);
    if (mode == IP_VDSO_NONE)
        return 0;
    if (mode >= IP_VDSO_COUNTING)
        return (unsigned long)(uintptr_t)&fake;
    return __getauxval(type);
}

/* ---------------------------------------------------------------------- */
/* mmap / munmap                                                          */
/* ---------------------------------------------------------------------- */

typedef void *mmap_fn(void *, size_t, int, int, int, off_t);
typedef int munmap_fn(void *, size_t);

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ip_mapping maps[MAX_MAPPINGS];
static size_t nmaps;
static unsigned int mmap_countdown;
static int mmap_fired;

void ip_fail_mmap(unsigned int nth)
{
    pthread_mutex_lock(&map_lock);
    mmap_countdown = nth;
    mmap_fired = 0;
    pthread_mutex_unlock(&map_lock);
}

int ip_mmap_fired(void)
{
    int f;

    pthread_mutex_lock(&map_lock);
    f = mmap_fired;
    pthread_mutex_unlock(&map_lock);
    return f;
}

size_t ip_mappings(const struct ip_mapping **out)
{
    size_t n;

    pthread_mutex_lock(&map_lock);
    n = nmaps;
    pthread_mutex_unlock(&map_lock);
    *out = maps;
    return n;
}

void ip_mappings_reset(void)
{
    pthread_mutex_lock(&map_lock);
    nmaps = 0;
    pthread_mutex_unlock(&map_lock);
}

IP_NOSAN int ip_all_zero(const void *p, size_t len)
{
    const volatile unsigned char *c = p;
    unsigned char acc = 0;
    size_t i;

    for (i = 0; i < len; i++)
        acc |= c[i];
    return acc == 0;
}

/* mmap, munmap and madvise calls of the module (munmap: of its mappings). */
static unsigned long mem_calls[3];

unsigned long ip_mem_calls(unsigned long *mmaps, unsigned long *munmaps,
                           unsigned long *madvises)
{
    unsigned long a = __atomic_load_n(&mem_calls[0], __ATOMIC_RELAXED);
    unsigned long b = __atomic_load_n(&mem_calls[1], __ATOMIC_RELAXED);
    unsigned long c = __atomic_load_n(&mem_calls[2], __ATOMIC_RELAXED);

    if (mmaps != NULL)
        *mmaps = a;
    if (munmaps != NULL)
        *munmaps = b;
    if (madvises != NULL)
        *madvises = c;
    return a + b + c;
}

IP_EXPORT IP_NOSAN void *mmap(void *addr, size_t len, int prot, int flags,
                              int fd, off_t off)
{
    static mmap_fn *real;
    void *p;

    if (real == NULL)
        real = __interceptor_mmap != NULL ? __interceptor_mmap
                                          : (mmap_fn *)dlsym(RTLD_NEXT, "mmap");
    if (!from_module(__builtin_return_address(0)))
        return real(addr, len, prot, flags, fd, off);

    __atomic_add_fetch(&mem_calls[0], 1, __ATOMIC_RELAXED);
    pthread_mutex_lock(&map_lock);
    if (mmap_countdown > 0 && --mmap_countdown == 0) {
        mmap_fired = 1;
        pthread_mutex_unlock(&map_lock);
        errno = ENOMEM;
        return MAP_FAILED;
    }
    p = real(addr, len, prot, flags, fd, off);
    if (p != MAP_FAILED && nmaps < MAX_MAPPINGS) {
        maps[nmaps].addr = p;
        maps[nmaps].len = len;
        maps[nmaps].live = 1;
        maps[nmaps].zero_at_unmap = 0;
        maps[nmaps].flags = flags;
        nmaps++;
    }
    pthread_mutex_unlock(&map_lock);
    return p;
}

IP_EXPORT IP_NOSAN int munmap(void *addr, size_t len)
{
    static munmap_fn *real;
    size_t i;

    if (real == NULL)
        real = __interceptor_munmap != NULL
                   ? __interceptor_munmap
                   : (munmap_fn *)dlsym(RTLD_NEXT, "munmap");
    pthread_mutex_lock(&map_lock);
    for (i = 0; i < nmaps; i++) {
        if (maps[i].live && maps[i].addr == addr) {
            __atomic_add_fetch(&mem_calls[1], 1, __ATOMIC_RELAXED);
            /* the moment of truth: what the page still holds as it goes */
            maps[i].zero_at_unmap = ip_all_zero(addr, maps[i].len);
            maps[i].live = 0;
            break;
        }
    }
    pthread_mutex_unlock(&map_lock);
    return real(addr, len);
}

/* ---------------------------------------------------------------------- */
/* madvise                                                                */
/* ---------------------------------------------------------------------- */

typedef int madvise_fn(void *, size_t, int);

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

static enum ip_madvise_mode ma_mode;

void ip_madvise_mode(enum ip_madvise_mode mode)
{
    __atomic_store_n(&ma_mode, mode, __ATOMIC_SEQ_CST);
}

IP_EXPORT IP_NOSAN int madvise(void *addr, size_t len, int advice)
{
    static madvise_fn *real;
    enum ip_madvise_mode mode = IP_MADVISE_REAL;

    if (real == NULL)
        real = (madvise_fn *)dlsym(RTLD_NEXT, "madvise");
    if (from_module(__builtin_return_address(0))) {
        __atomic_add_fetch(&mem_calls[2], 1, __ATOMIC_RELAXED);
        mode = __atomic_load_n(&ma_mode, __ATOMIC_SEQ_CST);
    }
    switch (mode) {
    case IP_MADVISE_NO_WIPEONFORK:
        if (advice == MADV_WIPEONFORK) {
            errno = EINVAL;
            return -1;
        }
        break;
    case IP_MADVISE_IGNORED:
        return 0;
    case IP_MADVISE_EAGAIN_ONCE:
        if (advice != MADV_DONTDUMP) {
            ip_madvise_mode(IP_MADVISE_REAL);
            errno = EAGAIN;
            return -1;
        }
        break;
    case IP_MADVISE_REAL:
    default:
        break;
    }
    if (real == NULL) {
        errno = ENOSYS;
        return -1;
    }
    return real(addr, len, advice);
}

/* ---------------------------------------------------------------------- */
/* __register_atfork                                                      */
/* ---------------------------------------------------------------------- */

typedef int register_atfork_fn(void (*)(void), void (*)(void), void (*)(void),
                               void *);

/* glibc's own prototype lives in an internal header. */
int __register_atfork(void (*prepare)(void), void (*parent)(void),
                      void (*child)(void), void *dso_handle);

static int af_fail;
static unsigned long af_registered;

void ip_atfork_fail(int fail)
{
    __atomic_store_n(&af_fail, fail, __ATOMIC_SEQ_CST);
}

unsigned long ip_atfork_registered(void)
{
    return __atomic_load_n(&af_registered, __ATOMIC_SEQ_CST);
}

/* ThreadSanitizer registers its own fork handlers while it starts up. */
IP_EXPORT IP_NOSAN int __register_atfork(void (*prepare)(void),
                                         void (*parent)(void),
                                         void (*child)(void), void *dso_handle)
{
    static register_atfork_fn *real;
    int mod = from_module(__builtin_return_address(0)), r;

    if (real == NULL)
        real = (register_atfork_fn *)dlsym(RTLD_NEXT, "__register_atfork");
    if (mod && __atomic_load_n(&af_fail, __ATOMIC_SEQ_CST))
        return ENOMEM; /* pthread_atfork returns the error number */
    if (real == NULL)
        return ENOSYS;
    r = real(prepare, parent, child, dso_handle);
    if (mod && r == 0)
        __atomic_add_fetch(&af_registered, 1, __ATOMIC_SEQ_CST);
    return r;
}

/* ---------------------------------------------------------------------- */
/* smaps                                                                  */
/* ---------------------------------------------------------------------- */

int ip_smaps_vmflags(const void *addr, char *buf, size_t buflen)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int in_it = 0, found = 0;

    if (f == NULL)
        return 0;
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long start, end;

        /*
         * A mapping header: "start-end perms offset dev inode [path]".
         * The kernel may have merged the mapping with a neighbour that has
         * the same flags, so look for the one that contains |addr|.
         */
        if (sscanf(line, "%lx-%lx ", &start, &end) == 2) {
            in_it = start <= (unsigned long)(uintptr_t)addr
                    && (unsigned long)(uintptr_t)addr < end;
            continue;
        }
        if (in_it && strncmp(line, "VmFlags:", 8) == 0) {
            snprintf(buf, buflen, "%s", line + 8);
            buf[strcspn(buf, "\n")] = '\0';
            found = 1;
            break;
        }
    }
    fclose(f);
    return found;
}

int ip_vmflags_has(const char *vmflags, const char *flag)
{
    size_t n = strlen(flag);
    const char *p = vmflags;

    while (*p != '\0') {
        while (*p == ' ')
            p++;
        if (strncmp(p, flag, n) == 0 && (p[n] == ' ' || p[n] == '\0'))
            return 1;
        while (*p != ' ' && *p != '\0')
            p++;
    }
    return 0;
}

/* ---------------------------------------------------------------------- */
/* malloc / calloc (t_faults only)                                        */
/* ---------------------------------------------------------------------- */

#ifdef IP_WITH_ALLOC

typedef void *malloc_fn(size_t);
typedef void *calloc_fn(size_t, size_t);

static unsigned int alloc_countdown;
static int alloc_fired;
static __thread int resolving;

void ip_fail_alloc(unsigned int nth)
{
    __atomic_store_n(&alloc_fired, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&alloc_countdown, nth, __ATOMIC_SEQ_CST);
}

int ip_alloc_fired(void)
{
    return __atomic_load_n(&alloc_fired, __ATOMIC_SEQ_CST);
}

/* 1 if this module allocation is the one armed to fail. */
IP_NOSAN static int should_fail(const void *ret)
{
    unsigned int c;

    if (!from_module(ret))
        return 0;
    c = __atomic_load_n(&alloc_countdown, __ATOMIC_SEQ_CST);
    while (c > 0) {
        if (__atomic_compare_exchange_n(&alloc_countdown, &c, c - 1, 0,
                                        __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
            if (c == 1) {
                __atomic_store_n(&alloc_fired, 1, __ATOMIC_SEQ_CST);
                return 1;
            }
            return 0;
        }
    }
    return 0;
}

/* The sanitizer's allocator, when there is one (see mmap above). */
extern void *__interceptor_malloc(size_t) __attribute__((weak));
extern void *__interceptor_calloc(size_t, size_t) __attribute__((weak));

/*
 * Otherwise dlsym(RTLD_NEXT).  It may itself allocate on some C
 * libraries; a nested call while we resolve gets NULL, which every caller
 * must already handle.
 */
static void *resolve(const char *name)
{
    void *f;

    resolving = 1;
    f = dlsym(RTLD_NEXT, name);
    resolving = 0;
    return f;
}

IP_EXPORT IP_NOSAN void *malloc(size_t n)
{
    static malloc_fn *real;

    if (real == NULL) {
        if (__interceptor_malloc != NULL)
            real = __interceptor_malloc;
        else if (resolving)
            return NULL;
        else
            real = (malloc_fn *)resolve("malloc");
    }
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return real(n);
}

IP_EXPORT IP_NOSAN void *calloc(size_t n, size_t size)
{
    static calloc_fn *real;

    if (real == NULL) {
        if (__interceptor_calloc != NULL)
            real = __interceptor_calloc;
        else if (resolving)
            return NULL;
        else
            real = (calloc_fn *)resolve("calloc");
    }
    if (should_fail(__builtin_return_address(0))) {
        errno = ENOMEM;
        return NULL;
    }
    return real(n, size);
}

#else

void ip_fail_alloc(unsigned int nth)
{
    (void)nth;
}

int ip_alloc_fired(void)
{
    return 0;
}

#endif
