/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Run-time CPU feature detection for kernel choice.  On x86_64 a feature
 * counts only when CPUID reports it *and* XCR0 shows the OS saves the
 * registers it needs; on aarch64 NEON (ASIMD) is part of the base ABI;
 * on s390x the vector facility counts when AT_HWCAP says the OS saves it;
 * on little-endian POWER the kernel's needs are read from the auxiliary
 * vector the kernel (the OS one) hands every process; on riscv64 the
 * kernel says in AT_HWCAP whether it enabled the vector extension for
 * processes, and riscv_hwprobe (Linux 6.8 and later) whether Zvkb is
 * there.  Other targets report nothing, so only the C kernel is ever
 * picked.
 */
#include "chacha.h"

#if defined(__x86_64__)
#include <cpuid.h>

static uint64_t read_xcr0(void)
{
    uint32_t lo, hi;

    /* xgetbv with ecx = 0; spelled as bytes for old assemblers */
    __asm__ __volatile__(".byte 0x0f, 0x01, 0xd0"
                         : "=a"(lo), "=d"(hi)
                         : "c"(0));
    return ((uint64_t)hi << 32) | lo;
}

uint32_t chacha_cpu_features(void)
{
    unsigned int eax, ebx, ecx, edx, max_leaf;
    uint32_t features = CHACHA_CPU_SSE2; /* part of the x86_64 ABI */
    uint64_t xcr0;

    max_leaf = __get_cpuid_max(0, NULL);
    if (max_leaf < 1)
        return features;
    __cpuid(1, eax, ebx, ecx, edx);
    if (ecx & bit_SSSE3)
        features |= CHACHA_CPU_SSSE3;
    if (max_leaf < 7)
        return features;
    if (!(ecx & bit_OSXSAVE) || !(ecx & bit_AVX))
        return features;
    xcr0 = read_xcr0();
    /* XMM (bit 1) and YMM (bit 2) state enabled by the OS */
    if ((xcr0 & 0x6) != 0x6)
        return features;
    features |= CHACHA_CPU_YMM_STATE;
    __cpuid_count(7, 0, eax, ebx, ecx, edx);
    if ((xcr0 & 0xe0) == 0xe0 && (ebx & bit_AVX512F))
        features |= CHACHA_CPU_ZMM_STATE;
    if (ebx & bit_AVX2)
        features |= CHACHA_CPU_AVX2;
    /* opmask (bit 5), ZMM0-15 upper halves (bit 6), ZMM16-31 (bit 7) */
    if ((xcr0 & 0xe0) == 0xe0 && (ebx & bit_AVX512F) && (ebx & bit_AVX512VL))
        features |= CHACHA_CPU_AVX512;
    return features;
}

#elif defined(__aarch64__)

uint32_t chacha_cpu_features(void)
{
    return CHACHA_CPU_NEON; /* Advanced SIMD is mandatory in AArch64 */
}

#elif defined(__s390x__)
#include <sys/auxv.h>

/*
 * The kernel sets HWCAP_S390_VXRS only when the machine has the vector
 * facility and the kernel saves v0-v31 across context switches.
 */
uint32_t chacha_cpu_features(void)
{
    return (getauxval(AT_HWCAP) & HWCAP_S390_VXRS) ? CHACHA_CPU_VX : 0;
}

#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && defined(__linux__)
#include <sys/auxv.h>

/* Linux's bits (arch/powerpc/include/uapi/asm/cputable.h), for C libraries
 * whose <sys/auxv.h> does not name them. */
#ifndef PPC_FEATURE_HAS_VSX
#define PPC_FEATURE_HAS_VSX 0x00000080
#endif
#ifndef PPC_FEATURE2_VEC_CRYPTO
#define PPC_FEATURE2_VEC_CRYPTO 0x02000000
#endif
#ifndef PPC_FEATURE2_ARCH_3_1
#define PPC_FEATURE2_ARCH_3_1 0x00040000
#endif

/* Read by the VSX kernel: 1 on POWER10 (ISA 3.1), where its eight-block
 * pass is the faster; written here, the same value every time. */
unsigned int chacharng_vsx_wide;

uint32_t chacha_cpu_features(void)
{
    /*
     * The VSX kernel uses VMX word arithmetic (vadduwm, vrlw), VSX moves,
     * loads and stores (ISA 2.06) and vpermxor, which ISA 2.07 puts in the
     * vector crypto category: AT_HWCAP2's VEC_CRYPTO bit is the one that
     * says vpermxor runs (POWER8 and later set it; ARCH_2_07 alone would
     * not promise the category).  HAS_VSX also says the OS saves the VSX
     * registers.
     */
    unsigned long hwcap2 = getauxval(AT_HWCAP2);

    __atomic_store_n(&chacharng_vsx_wide,
                     (hwcap2 & PPC_FEATURE2_ARCH_3_1) != 0 ? 1u : 0u,
                     __ATOMIC_RELAXED);
    if ((getauxval(AT_HWCAP) & PPC_FEATURE_HAS_VSX)
        && (hwcap2 & PPC_FEATURE2_VEC_CRYPTO))
        return CHACHA_CPU_VSX;
    return 0;
}

#elif defined(__riscv) && __riscv_xlen == 64
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The single-letter extension bits of AT_HWCAP: bit ('X' - 'A'). */
#define HWCAP_RISCV_V (1ul << ('V' - 'A'))

/*
 * riscv_hwprobe(2), spelled out: the C library headers of older releases
 * (Debian 12) have neither the system call number nor the structure.
 */
#define SYS_RISCV_HWPROBE 258
#define RISCV_HWPROBE_KEY_IMA_EXT_0 4
#define RISCV_HWPROBE_IMA_V (1ull << 2)
#define RISCV_HWPROBE_EXT_ZBB (1ull << 4)
#define RISCV_HWPROBE_EXT_ZVBB (1ull << 17) /* includes Zvkb */
#define RISCV_HWPROBE_EXT_ZVKB (1ull << 19)

struct riscv_hwprobe_pair {
    int64_t key;
    uint64_t value;
};

uint32_t chacharng_rvv_vror;

/* The IMA_EXT_0 bits, or 0 where the kernel has no riscv_hwprobe. */
static uint64_t hwprobe_ext0(void)
{
    struct riscv_hwprobe_pair pair = { RISCV_HWPROBE_KEY_IMA_EXT_0, 0 };

    if (syscall(SYS_RISCV_HWPROBE, &pair, 1, 0, NULL, 0) != 0 || pair.key < 0)
        return 0;
    return pair.value;
}

uint32_t chacha_cpu_features(void)
{
    uint32_t features = 0;
    uint64_t ext;

    if (!(getauxval(AT_HWCAP) & HWCAP_RISCV_V))
        return 0;
    features |= CHACHA_CPU_RVV;
    ext = hwprobe_ext0();
    /* the vror path's integer block rotates with Zbb's roriw */
    if ((ext & RISCV_HWPROBE_IMA_V) && (ext & RISCV_HWPROBE_EXT_ZBB)
        && (ext & (RISCV_HWPROBE_EXT_ZVKB | RISCV_HWPROBE_EXT_ZVBB)))
        features |= CHACHA_CPU_ZVKB;
    /* the same value from every caller: the kernel's choice of rotation */
    __atomic_store_n(&chacharng_rvv_vror, (features & CHACHA_CPU_ZVKB) != 0,
                     __ATOMIC_RELAXED);
    return features;
}

#else

uint32_t chacha_cpu_features(void)
{
    return 0;
}

#endif
