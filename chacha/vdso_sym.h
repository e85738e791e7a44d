/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Finding a function in the vDSO that the kernel maps into every process,
 * by its own dynamic symbol table, without the C library's help.
 */
#ifndef CHACHARNG_VDSO_SYM_H
#define CHACHARNG_VDSO_SYM_H

/*
 * The address of getrandom in the vDSO mapped into this process, and its
 * name in *|name|; NULL if it has none.  Linux 6.11+ exports it on x86_64
 * (`__vdso_getrandom`), 6.12+ on aarch64 and others (`__kernel_getrandom`).
 */
void *chacha_vdso_getrandom(const char **name);

#endif
