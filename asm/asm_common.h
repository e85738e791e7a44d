/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Shared assembler boilerplate for the kernels in asm/: symbol declaration
 * (ELF only: the provider targets Linux and the BSDs), indirect-branch
 * landing pads (CET endbr64 on x86_64, BTI on aarch64), the GNU property
 * note that tells the linker the object is CET/BTI clean, and the
 * non-executable stack note.  Include once, at the top of each .S file.
 */
#ifndef CHACHARNG_ASM_COMMON_H
#define CHACHARNG_ASM_COMMON_H

#define FUNC_BEGIN(name)                                                       \
    .globl name;                                                               \
    .hidden name;                                                              \
    .type name, @function;                                                     \
    name:                                                                      \
    .cfi_startproc

#define FUNC_END(name)                                                         \
    .cfi_endproc;                                                              \
    .size name, .- name

#if defined(__x86_64__)
#if defined(__CET__) && (__CET__ & 1)
#define LANDING_PAD endbr64
#else
#define LANDING_PAD
#endif
/*
 * GNU_PROPERTY_X86_FEATURE_1_AND: IBT (1) | SHSTK (2), each claimed only if
 * its own bit of __CET__ says the build asked for it (-fcf-protection=branch
 * sets bit 0, =return bit 1, =full both).  The linker ANDs the notes of all
 * objects, so claiming IBT without the endbr64 above would switch on
 * indirect-branch tracking over a function that faults under it.  A
 * ret-only leaf function is shadow-stack safe as it stands.
 */
#if defined(__CET__) && (__CET__ & 1)
#define GNU_PROPERTY_IBT 1
#else
#define GNU_PROPERTY_IBT 0
#endif
#if defined(__CET__) && (__CET__ & 2)
#define GNU_PROPERTY_SHSTK 2
#else
#define GNU_PROPERTY_SHSTK 0
#endif
#if GNU_PROPERTY_IBT || GNU_PROPERTY_SHSTK
#define GNU_PROPERTY_TYPE 0xc0000002
#define GNU_PROPERTY_VALUE (GNU_PROPERTY_IBT | GNU_PROPERTY_SHSTK)
#endif
#elif defined(__aarch64__)
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define LANDING_PAD hint 34 /* bti c */
#define GNU_PROPERTY_BTI 1
#else
#define LANDING_PAD
#define GNU_PROPERTY_BTI 0
#endif
#if defined(__ARM_FEATURE_PAC_DEFAULT) && __ARM_FEATURE_PAC_DEFAULT
#define GNU_PROPERTY_PAC 2
#else
#define GNU_PROPERTY_PAC 0
#endif
/* GNU_PROPERTY_AARCH64_FEATURE_1_AND: leaf functions never sign lr, so
 * they are PAC-compatible as they stand. */
#if GNU_PROPERTY_BTI || GNU_PROPERTY_PAC
#define GNU_PROPERTY_TYPE 0xc0000000
#define GNU_PROPERTY_VALUE (GNU_PROPERTY_BTI | GNU_PROPERTY_PAC)
#endif
#endif

/* Mark the object's stack non-executable (every file, every target). */
#if defined(__ELF__)
    .section .note.GNU-stack, "", %progbits
    .previous
#endif

/* Emit the .note.gnu.property section so -z cet-report/BTI builds stay on. */
#if defined(__ELF__) && defined(GNU_PROPERTY_TYPE)
#if defined(__x86_64__) || defined(__aarch64__)
    .pushsection .note.gnu.property, "a"
    .p2align 3
    .long 4                 /* name size */
    .long 16                /* descriptor size */
    .long 5                 /* NT_GNU_PROPERTY_TYPE_0 */
    .asciz "GNU"
    .long GNU_PROPERTY_TYPE
    .long 4                 /* property data size */
    .long GNU_PROPERTY_VALUE
    .long 0                 /* pad to 8 bytes */
    .popsection
#endif
#endif

#endif
