/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kernel mixing (DESIGN.md sections 2 and 3): the `kernel_mix` config key
 * and CHACHARNG_KERNEL_MIX, the one-time check behind `auto`, the choice
 * for each new generator, and the callback the core calls before a refill
 * or a direct request.  Nothing here is timed: `auto` asks what the C
 * library and the kernel are, never how fast getrandom is.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>

#include <elf.h>
#include <link.h>

#include <openssl/params.h>

#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "rand_local.h"

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

/* ------------------------------------------------------------------------
 * The setting, at load
 * ------------------------------------------------------------------------ */

/* The `kernel_mix` key of our section in openssl.cnf, if any. */
static const char *config_kernel_mix(const CHACHARNG_PROV_CTX *prov)
{
    char *value = NULL;
    OSSL_PARAM params[2];

    if (prov->core_get_params == NULL)
        return NULL;
    params[0] = OSSL_PARAM_construct_utf8_ptr("kernel_mix", &value, 0);
    params[1] = OSSL_PARAM_construct_end();
    if (!prov->core_get_params(prov->handle, params))
        return NULL;
    return value != NULL && *value != '\0' ? value : NULL;
}

int chacharng_kmix_choose(CHACHARNG_PROV_CTX *prov)
{
    const char *v = getenv("CHACHARNG_KERNEL_MIX");
    const char *origin = "CHACHARNG_KERNEL_MIX";
    char why[64];
    int libc, vdso;

    if (v == NULL || *v == '\0') {
        v = config_kernel_mix(prov);
        origin = "config key kernel_mix";
    }
    if (v == NULL || strcmp(v, "auto") == 0) {
        prov->kernel_mix = CHACHARNG_KMIX_AUTO;
    } else if (strcmp(v, "on") == 0) {
        prov->kernel_mix = CHACHARNG_KMIX_ON;
    } else if (strcmp(v, "off") == 0) {
        prov->kernel_mix = CHACHARNG_KMIX_OFF;
    } else {
        CHACHARNG_RAISE(prov, CHACHARNG_R_INVALID_PARAMETER,
                        "%s=%s: expected auto, on or off", origin, v);
        return 0;
    }
    libc = libc_has_vdso_getrandom(why, sizeof(why));
    vdso = vdso_has_getrandom();
    prov->kernel_mix_vdso = libc && vdso;
    CHACHARNG_DEBUG_LOG("kernel mixing %s (%s; %s, vDSO getrandom %s)",
                        prov->kernel_mix == CHACHARNG_KMIX_ON    ? "on"
                        : prov->kernel_mix == CHACHARNG_KMIX_OFF ? "off"
                        : prov->kernel_mix_vdso                  ? "auto: on"
                                                                 : "auto: off",
                        v != NULL ? origin : "default", why,
                        vdso ? "exported" : "absent");
    return 1;
}

/* ------------------------------------------------------------------------
 * Per generator
 * ------------------------------------------------------------------------ */

int chacharng_kmix_default(const CHACHARNG_PROV_CTX *prov,
                           const CHACHARNG_RAND_CTX *ctx)
{
    if (prov->kernel_mix != CHACHARNG_KMIX_AUTO)
        return prov->kernel_mix == CHACHARNG_KMIX_ON;
    if (ctx == NULL || ctx->parent == NULL)
        return prov->kernel_mix_vdso;
    /* a chacharng parent: follow its choice, so a chain agrees */
    if (chacharng_parent_is_ours(ctx)) {
        const CHACHARNG_RAND_CTX *parent = ctx->parent;

        return chacha_drbg_kernel_mix_on(parent->drbg);
    }
    /*
     * An entropy source (SEED-SRC, JITTER) has no settable parameters:
     * nothing can make it repeat, so it counts as no parent.  Any other
     * parent (TEST-RAND, CTR-DRBG) may be deterministic on purpose.
     */
    return ctx->parent_set_ctx_params == NULL && prov->kernel_mix_vdso;
}

void chacharng_kmix_set(struct chacha_drbg *d, int on)
{
    chacha_drbg_set_kernel_mix(d, on ? chacharng_kmix_read : NULL);
}

int chacharng_kmix_read(uint8_t g[CHACHA_KEY_BYTES])
{
    static unsigned long failures;
    ssize_t r = getrandom(g, CHACHA_KEY_BYTES, GRND_NONBLOCK);
    unsigned long n;

    if (r == CHACHA_KEY_BYTES)
        return 1;
    if (chacharng_debug_enabled()) {
        /* the 1st, 2nd, 4th, 8th ... failure: seen, but never a flood */
        n = __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
        if ((n & (n - 1)) == 0)
            chacharng_debug_log("kernel mixing skipped: getrandom gave %s"
                                " (failure %lu in this process)",
                                r < 0 ? strerror(errno) : "a short read", n);
    }
    return 0;
}
