/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing without OpenSSL (see kmix.h): the non-blocking getrandom
 * read, and the check behind `auto`.  The vDSO is read through its own
 * dynamic symbol table, because glibc reports whether *it* uses the vDSO
 * only through its version, and the kernel exports the symbol only from
 * 6.11 (x86_64) or 6.12 (aarch64 and others) on.
 */
#define _GNU_SOURCE

#include "kmix.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/types.h>

#include <elf.h>
#include <link.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

/* ------------------------------------------------------------------------
 * The read, before every refill and direct request
 * ------------------------------------------------------------------------ */

static chacha_kmix_report_fn *report_fn;
static unsigned long failures; /* failed reads in this process (atomic) */

void chacha_kmix_set_report(chacha_kmix_report_fn *report)
{
    __atomic_store_n(&report_fn, report, __ATOMIC_RELAXED);
}

int chacha_kmix_getrandom(uint8_t g[CHACHA_KEY_BYTES])
{
    ssize_t r = getrandom(g, CHACHA_KEY_BYTES, GRND_NONBLOCK);
    chacha_kmix_report_fn *report;
    unsigned long n;

    if (r == CHACHA_KEY_BYTES)
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

/* ------------------------------------------------------------------------
 * What `auto` asks: does this C library serve getrandom from the vDSO?
 * ------------------------------------------------------------------------ */

/* glibc 2.41 was the first to call the kernel's vDSO getrandom. */
static int libc_has_vdso_getrandom(char *why, size_t n)
{
#ifdef __GLIBC__
    const char *v = gnu_get_libc_version();
    unsigned int major = 0, minor = 0;

    if (sscanf(v, "%u.%u", &major, &minor) != 2) {
        snprintf(why, n, "glibc version \"%s\" not understood", v);
        return 0;
    }
    snprintf(why, n, "glibc %u.%u", major, minor);
    return major > 2 || (major == 2 && minor >= 41);
#else
    snprintf(why, n, "not glibc");
    return 0;
#endif
}

/* DT_HASH words are 64-bit on s390x and Alpha, 32-bit everywhere else. */
#if defined(__s390x__) || defined(__alpha__)
typedef uint64_t hash_word;
#else
typedef Elf32_Word hash_word;
#endif

/* An address of the vDSO image, from a link-time address |vaddr|. */
#define VDSO_AT(type, vaddr) ((type)(base + ((vaddr)-load_vaddr)))

/*
 * 1 if the vDSO mapped into this process exports getrandom: Linux 6.11+
 * on x86_64 (`__vdso_getrandom`), 6.12+ on aarch64 and others
 * (`__kernel_getrandom`).  Read from its dynamic symbol table through the
 * ELF header that the kernel points AT_SYSINFO_EHDR at.
 */
static int vdso_has_getrandom(void)
{
    uintptr_t base = (uintptr_t)getauxval(AT_SYSINFO_EHDR), load_vaddr = 0;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) * ph;
    const ElfW(Dyn) *dyn = NULL;
    const ElfW(Sym) *sym = NULL;
    const hash_word *hash = NULL;
    const Elf32_Word *gnu = NULL;
    const char *str = NULL;
    size_t nsym = 0, i;
    int have_load = 0;

    if (base == 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0
        || eh->e_ident[EI_CLASS]
               != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return 0;
    ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    for (i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !have_load) {
            load_vaddr = ph[i].p_vaddr - ph[i].p_offset;
            have_load = 1;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(base + ph[i].p_offset);
        }
    }
    if (!have_load || dyn == NULL)
        return 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            sym = VDSO_AT(const ElfW(Sym) *, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            str = VDSO_AT(const char *, dyn->d_un.d_ptr);
            break;
        case DT_HASH:
            hash = VDSO_AT(const hash_word *, dyn->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            gnu = VDSO_AT(const Elf32_Word *, dyn->d_un.d_ptr);
            break;
        default:
            break;
        }
    }
    if (sym == NULL || str == NULL)
        return 0;
    if (hash != NULL) {
        nsym = (size_t)hash[1]; /* nchain: one entry per symbol */
    } else if (gnu != NULL) {
        /* past the highest bucket's chain, whose last entry has bit 0 set */
        Elf32_Word nbuckets = gnu[0], symoff = gnu[1], bloom = gnu[2];
        const Elf32_Word *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
        const Elf32_Word *chain = buckets + nbuckets;
        Elf32_Word top = 0;

        for (i = 0; i < nbuckets; i++)
            if (buckets[i] > top)
                top = buckets[i];
        if (top >= symoff) {
            while ((chain[top - symoff] & 1) == 0)
                top++;
            nsym = (size_t)top + 1;
        }
    }
    for (i = 0; i < nsym; i++) {
        const char *name = str + sym[i].st_name;

        if (sym[i].st_shndx != SHN_UNDEF
            /* the same bits in ELF32 and ELF64 */
            && ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC
            && (strcmp(name, "__vdso_getrandom") == 0
                || strcmp(name, "__kernel_getrandom") == 0))
            return 1;
    }
    return 0;
}

int chacha_kmix_vdso_available(char *why, size_t n)
{
    char libc[48];
    int have_libc = libc_has_vdso_getrandom(libc, sizeof(libc));
    int have_vdso = vdso_has_getrandom();

    snprintf(why, n, "%s, vDSO getrandom %s", libc,
             have_vdso ? "exported" : "absent");
    return have_libc && have_vdso;
}
