/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vDSO's dynamic symbols, read from the ELF image that the kernel
 * points AT_SYSINFO_EHDR at, in three steps as the image is laid out: the
 * program headers give the load bias and the dynamic section, the dynamic
 * section gives the symbol, string and hash tables, and a hash table gives
 * the number of symbols to search.  The image is the kernel's, so nothing
 * is relocated or loaded: every address is the mapped base plus a
 * link-time address less the first PT_LOAD's.
 */
#define _GNU_SOURCE

#include "vdso_sym.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>

#include <elf.h>
#include <link.h>

/* DT_HASH words are 64-bit on s390x and Alpha, 32-bit everywhere else. */
#if defined(__s390x__) || defined(__alpha__)
typedef uint64_t hash_word;
#else
typedef Elf32_Word hash_word;
#endif

struct vdso_image {
    uintptr_t base;       /* where the ELF header is mapped */
    ElfW(Addr) load_addr; /* link-time address of the image's first byte */
    ElfW(Addr) dyn_addr;  /* link-time address of the dynamic section */
    const ElfW(Sym) * sym;
    const char *str;
    const hash_word *hash; /* DT_HASH, or NULL */
    const Elf32_Word *gnu; /* DT_GNU_HASH, or NULL */
};

/* The mapped address of the link-time address |addr|. */
static uintptr_t image_at(const struct vdso_image *img, ElfW(Addr) addr)
{
    return img->base + (addr - img->load_addr);
}

/*
 * Check the ELF header at |base| (this process's word size) and find the
 * load bias and the dynamic section in its program headers.  Returns 1 if
 * both were found, else 0.
 */
static int image_open(struct vdso_image *img, uintptr_t base)
{
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)base;
    const ElfW(Phdr) * ph;
    int have_load = 0, have_dyn = 0;
    size_t i;

    if (base == 0 || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0
        || eh->e_ident[EI_CLASS]
               != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32))
        return 0;
    img->base = base;
    img->load_addr = 0;
    img->dyn_addr = 0;
    ph = (const ElfW(Phdr) *)(base + eh->e_phoff);
    for (i = 0; i < eh->e_phnum; i++) {
        if (ph[i].p_type == PT_LOAD && !have_load) {
            img->load_addr = ph[i].p_vaddr - ph[i].p_offset;
            have_load = 1;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            img->dyn_addr = ph[i].p_vaddr;
            have_dyn = 1;
        }
    }
    return have_load && have_dyn;
}

/*
 * Read the symbol, string and hash tables from the dynamic section.
 * Returns 1 if there are symbols with names, else 0.
 */
static int image_read_dynamic(struct vdso_image *img)
{
    const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)image_at(img, img->dyn_addr);

    img->sym = NULL;
    img->str = NULL;
    img->hash = NULL;
    img->gnu = NULL;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            img->sym = (const ElfW(Sym) *)image_at(img, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            img->str = (const char *)image_at(img, dyn->d_un.d_ptr);
            break;
        case DT_HASH:
            img->hash = (const hash_word *)image_at(img, dyn->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            img->gnu = (const Elf32_Word *)image_at(img, dyn->d_un.d_ptr);
            break;
        default:
            break;
        }
    }
    return img->sym != NULL && img->str != NULL;
}

/*
 * The number of symbols a DT_GNU_HASH table covers: past the highest
 * bucket's chain, whose last entry has bit 0 set.  0 if no bucket is used.
 */
static size_t gnu_hash_symbol_count(const Elf32_Word *gnu)
{
    Elf32_Word nbuckets = gnu[0], symoff = gnu[1], bloom = gnu[2];
    const Elf32_Word *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const Elf32_Word *chain = buckets + nbuckets;
    Elf32_Word top = 0;
    size_t i;

    for (i = 0; i < nbuckets; i++)
        if (buckets[i] > top)
            top = buckets[i];
    if (top < symoff)
        return 0;
    while ((chain[top - symoff] & 1) == 0)
        top++;
    return (size_t)top + 1;
}

/* The number of symbols in the table: DT_HASH's nchain, else DT_GNU_HASH's. */
static size_t image_symbol_count(const struct vdso_image *img)
{
    if (img->hash != NULL)
        return (size_t)img->hash[1]; /* nchain: one entry per symbol */
    if (img->gnu != NULL)
        return gnu_hash_symbol_count(img->gnu);
    return 0;
}

/* 1 if symbol |s| is a defined function named |a| or |b|. */
static int is_function_named(const struct vdso_image *img, const ElfW(Sym) * s,
                             const char *a, const char *b)
{
    const char *name = img->str + s->st_name;

    return s->st_shndx != SHN_UNDEF
           /* the same bits in ELF32 and ELF64 */
           && ELF64_ST_TYPE(s->st_info) == STT_FUNC
           && (strcmp(name, a) == 0 || strcmp(name, b) == 0);
}

void *chacha_vdso_getrandom(const char **name)
{
    struct vdso_image img;
    size_t nsym, i;

    if (!image_open(&img, (uintptr_t)getauxval(AT_SYSINFO_EHDR))
        || !image_read_dynamic(&img))
        return NULL;
    nsym = image_symbol_count(&img);
    for (i = 0; i < nsym; i++) {
        if (is_function_named(&img, &img.sym[i], "__vdso_getrandom",
                              "__kernel_getrandom")) {
            *name = img.str + img.sym[i].st_name;
            return (void *)image_at(&img, img.sym[i].st_value);
        }
    }
    return NULL;
}
