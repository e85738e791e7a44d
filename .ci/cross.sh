#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds of other configurations and architectures from a release tarball,
# each running its tests.  Writes one automake test-suite.log per build to
# RESULTS_DIR/<name>.log for .ci/test-all.sh to count; a build that cannot
# run here writes RESULTS_DIR/<name>.skip with the reason instead.
#
# Usage: .ci/cross.sh TARBALL RESULTS_DIR [variants] [aarch64] [s390x]
#        [ppc64el] [riscv64]
#   (s390x writes s390x.log and s390x-novx.log)
set -u

tarball=$(realpath "$1")
results=$(realpath "$2")
shift 2
jobs=$(nproc 2>/dev/null || echo 2)
# every make check here is bounded: a test hung under an emulator ends
# its run (no test-suite.log: the stage counts as failed), not CI's
bound=${CHACHARNG_CROSS_TIMEOUT:-1800}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

unpack() {
    local dir=$work/$1
    mkdir -p "$dir"
    tar -xf "$tarball" -C "$dir" --strip-components=1
    echo "$dir"
}

# $1 name, rest: configure arguments.  Native build, then the tests that
# depend on which kernels are compiled in (Makefile.am's kernel_tests).
variant() {
    local name=$1 dir
    shift
    dir=$(unpack "$name")
    echo "--- $name: ./configure --enable-werror $*"
    # make, not the shell, expands the group
    # shellcheck disable=SC2016
    (cd "$dir" && ./configure -q --enable-werror "$@" && make -j"$jobs" \
        && timeout "$bound" make -j"$jobs" check TESTS='$(kernel_tests)') || true
    cp "$dir/test-suite.log" "$results/$name.log" 2>/dev/null
    grep -E '^(PASS|FAIL|SKIP|ERROR)' "$dir"/test/*.log 2>/dev/null \
        | grep -v '^.*:PASS' | head -20
}

variants() {
    variant disable-asm --disable-asm
    variant disable-avx512 --disable-avx512
    variant disable-avx512-avx2 --disable-avx512 --disable-avx2
    variant disable-all-isas --disable-avx512 --disable-avx2 --disable-sse2
}

# The provider and its C tests cross-built for aarch64, run under qemu with
# the NEON and the C kernel.  The CLI test needs an aarch64 openssl binary,
# which multiarch cannot co-install, so only the C tests run, plus the
# llvm-mca check of the NEON kernel (tools/mca-neon.sh; skips without llvm-19)
# and the BTI checks (test/t_bti.sh, on the host: property notes and landing
# pads of every object, and the NEON kernel called through blr under qemu
# -cpu max with BTI enforced).  Without binfmt_misc an aarch64 program
# cannot execute another one itself: tests that start processes run them
# through CHACHARNG_TEST_EMULATOR.
aarch64() {
    local dir qemu="qemu-aarch64 -L /"
    if ! command -v aarch64-linux-gnu-gcc >/dev/null \
        || ! command -v qemu-aarch64 >/dev/null \
        || [ ! -f /usr/lib/aarch64-linux-gnu/pkgconfig/libcrypto.pc ]; then
        echo "aarch64 cross compiler, qemu-aarch64 or libssl-dev:arm64 missing" \
            > "$results/aarch64.skip"
        return
    fi
    dir=$(unpack aarch64)
    echo "--- aarch64 (qemu-user)"
    # make itself expands $(emulated_tests)
    # shellcheck disable=SC2016
    (cd "$dir" \
        && PKG_CONFIG_LIBDIR=/usr/lib/aarch64-linux-gnu/pkgconfig \
            ./configure -q --enable-werror --host=aarch64-linux-gnu \
        && make -j"$jobs" \
        && CHACHARNG_TEST_EMULATOR=$qemu timeout "$bound" make -j"$jobs" check \
            TESTS='$(emulated_tests)' LOG_COMPILER="$qemu") || true
    cp "$dir/test-suite.log" "$results/aarch64.log" 2>/dev/null
    grep -h '^ok - \[neon\]' "$dir"/test/*.log 2>/dev/null | head -3
    grep -hE '^(PASS|FAIL): .*round loop' "$dir"/tools/mca-neon.log 2>/dev/null
    grep -h '^[a-z ]* [0-9]* - .*blr' "$dir"/test/t_bti.log 2>/dev/null
}

# Big-endian: chacha/ and its OpenSSL-free tests alone (configure
# --disable-provider: there is no libssl-dev:s390x to link against), linked
# statically so that qemu-s390x runs them with no s390x root.  --static,
# not -static: libtool takes -static for itself and leaves the link
# dynamic.  Without binfmt_misc the host cannot start an s390x program by
# itself, so the test harness runs each through qemu-s390x (LOG_COMPILER);
# the .sh tests among them (test/t_kernel_entries.sh, tools/mca-vx.sh)
# run on the host.
# libssl-dev:s390x does not co-install on Debian 12: bookworm-security
# carries no s390x, so libssl3:s390x stays at the point release while the
# host's libssl3 takes security updates, and Multi-Arch: same wants the
# two at one version.
# The tests run twice: under -cpu max, which has the vector facility (the
# vx kernel is chosen and checked, and tools/mca-vx.sh compares its round
# loops with OpenSSL's on the host), and as s390x-novx under max with the
# vector facility and its enhancements switched off (the C kernel must be
# chosen: t_chacha compares the choice with AT_HWCAP).
s390x() {
    local dir novx="qemu-s390x -cpu max,vx=off,vxeh=off,vxeh2=off"
    if ! command -v s390x-linux-gnu-gcc >/dev/null \
        || ! command -v qemu-s390x >/dev/null; then
        echo "s390x cross compiler or qemu-s390x missing" > "$results/s390x.skip"
        cp "$results/s390x.skip" "$results/s390x-novx.skip"
        return
    fi
    dir=$(unpack s390x)
    echo "--- s390x (big-endian, qemu-user)"
    # make itself expands $(emulated_tests)
    # shellcheck disable=SC2016
    (cd "$dir" \
        && ./configure -q --enable-werror --host=s390x-linux-gnu \
            --disable-provider LDFLAGS=--static \
        && make -j"$jobs" \
        && timeout "$bound" make -j"$jobs" check TESTS='$(emulated_tests)' \
            LOG_COMPILER="qemu-s390x -cpu max") || true
    cp "$dir/test-suite.log" "$results/s390x.log" 2>/dev/null
    grep -h -m1 'checksum' "$dir"/test/t_chacha.log 2>/dev/null
    grep -h 'best kernel' "$dir"/test/t_chacha.log 2>/dev/null
    grep -hE '^(ok|not ok) .*pass8' "$dir"/tools/mca-vx.log 2>/dev/null
    rm -f "$dir"/test-suite.log "$dir"/test/*.log "$dir"/test/*.trs
    # shellcheck disable=SC2016
    (cd "$dir" && timeout "$bound" make -j"$jobs" check TESTS='$(core_tests)' \
        LOG_COMPILER="$novx") || true
    cp "$dir/test-suite.log" "$results/s390x-novx.log" 2>/dev/null
    grep -h 'best kernel' "$dir"/test/t_chacha.log 2>/dev/null
}

# Little-endian POWER: the provider and its C tests cross-built against
# Debian's multiarch libssl-dev:ppc64el (it co-installs with the host's
# on Debian 12), run under qemu-ppc64le as a POWER9; then the kernel and
# generator core tests again as a POWER8 and as a POWER10.  Every run is
# told the kernel the CPU must be given (CHACHARNG_TEST_BEST): each of
# these models has VSX and vector crypto, so the VSX kernel.  As on
# aarch64 only the C tests run (no ppc64el openssl binary co-installs),
# plus tools/mca-vsx.sh and test/t_kernel_entries.sh on the host.
# QEMU's POWER7, the one model without vector crypto, cannot run these
# programs at all (Debian's ppc64el code is built for POWER8), so no run
# shows generic chosen.
ppc64el() {
    local dir cpu qemu="qemu-ppc64le -L /"
    if ! command -v powerpc64le-linux-gnu-gcc >/dev/null \
        || ! command -v qemu-ppc64le >/dev/null \
        || [ ! -f /usr/lib/powerpc64le-linux-gnu/pkgconfig/libcrypto.pc ]; then
        echo "ppc64el cross compiler, qemu-ppc64le or libssl-dev:ppc64el missing" \
            > "$results/ppc64el.skip"
        # the runs under the other two models are skipped for the same reason
        cp "$results/ppc64el.skip" "$results/ppc64el-power8.skip"
        cp "$results/ppc64el.skip" "$results/ppc64el-power10.skip"
        return
    fi
    dir=$(unpack ppc64el)
    echo "--- ppc64el (qemu-user: power9; core tests on power8, power10)"
    # make itself expands the test groups
    # shellcheck disable=SC2016
    (cd "$dir" \
        && PKG_CONFIG_LIBDIR=/usr/lib/powerpc64le-linux-gnu/pkgconfig \
            ./configure -q --enable-werror --host=powerpc64le-linux-gnu \
        && make -j"$jobs" \
        && CHACHARNG_TEST_BEST=vsx \
            CHACHARNG_TEST_EMULATOR="$qemu -cpu power9" timeout "$bound" make -j"$jobs" check \
            TESTS='$(emulated_tests)' LOG_COMPILER="$qemu -cpu power9") || true
    cp "$dir/test-suite.log" "$results/ppc64el.log" 2>/dev/null
    grep -h '^ok - .*vsx' "$dir"/test/t_chacha.log 2>/dev/null | head -2
    grep -hE '^(ok|not ok) .*round loop' "$dir"/tools/mca-vsx.log 2>/dev/null
    for cpu in power8 power10; do
        rm -f "$dir/test-suite.log"
        # shellcheck disable=SC2016
        (cd "$dir" && CHACHARNG_TEST_BEST=vsx \
            CHACHARNG_TEST_EMULATOR="$qemu -cpu $cpu" timeout "$bound" make -j"$jobs" check \
            TESTS='$(core_tests)' LOG_COMPILER="$qemu -cpu $cpu") || true
        cp "$dir/test-suite.log" "$results/ppc64el-$cpu.log" 2>/dev/null
        grep -h 'is given kernel' "$dir"/test/t_chacha.log 2>/dev/null
    done
}

# RVV: chacha/ and its OpenSSL-free tests, built as for s390x (there is no
# libssl-dev:riscv64 in Debian 12), run under qemu-riscv64 once per vector
# length the kernel must serve (VLEN 128 to 1024, the range qemu 7.2
# emulates) and once without the vector extension.  CHACHARNG_TEST_BEST
# makes t_chacha check that detection picks rvv, and generic without V;
# CHACHARNG_TEST_RUNS=rvv/vror that it finds Zvkb where qemu has it.
# Each run writes riscv64-<name>.log: all core tests at VLEN 128 (with
# test/t_kernel_entries.sh, on the host), the kernel test alone at the
# other lengths.  qemu 7.2 has no Zvkb, so the vror path is reported as
# skipped there, and one more run, riscv64-zvkb, takes Debian 13's qemu
# with Zvkb; tools/mca-rvv.sh estimates the round loops of both paths.
riscv64_run() {
    local dir=$1 name=$2 cpu=$3 best=$4 tests=$5 qemu=${6:-qemu-riscv64}
    echo "--- riscv64 $name ($qemu -cpu $cpu)"
    (cd "$dir" && CHACHARNG_TEST_BEST=$best timeout "$bound" make -j"$jobs" check \
        TESTS="$tests" LOG_COMPILER="$qemu -cpu $cpu") || true
    cp "$dir/test-suite.log" "$results/riscv64-$name.log" 2>/dev/null
    grep -h -E 'the CPU gets kernel|checksum' "$dir"/test/t_chacha.log \
        2>/dev/null
}

riscv64() {
    local dir n v=vext_spec=v1.0
    local qemu10=${CHACHARNG_QEMU_DIR:-/var/tmp/chacharng-qemu}/usr/bin/qemu-riscv64
    if ! command -v riscv64-linux-gnu-gcc >/dev/null \
        || ! command -v qemu-riscv64 >/dev/null; then
        for n in vlen128 vlen256 vlen512 vlen1024 novector zvkb; do
            echo "riscv64 cross compiler or qemu-riscv64 missing" \
                > "$results/riscv64-$n.skip"
        done
        return
    fi
    dir=$(unpack riscv64)
    (cd "$dir" \
        && ./configure -q --enable-werror --host=riscv64-linux-gnu \
            --disable-provider LDFLAGS=--static \
        && make -j"$jobs") || true
    # make itself expands $(emulated_tests)
    # shellcheck disable=SC2016
    riscv64_run "$dir" vlen128 "rv64,v=true,vlen=128,$v" rvv \
        '$(emulated_tests)'
    for n in 256 512 1024; do
        riscv64_run "$dir" "vlen$n" "rv64,v=true,vlen=$n,$v" rvv test/t_chacha
    done
    riscv64_run "$dir" novector rv64 generic test/t_chacha
    # Zvkb and riscv_hwprobe: Debian 13's qemu (.ci/qemu-trixie.sh), which
    # detection must lead to the vror path of the rvv kernel
    if [ -x "$qemu10" ]; then
        # make itself expands $(emulated_tests)
        # shellcheck disable=SC2016
        CHACHARNG_TEST_RUNS=rvv/vror riscv64_run "$dir" zvkb \
            "rv64,v=true,vlen=256,zvkb=true,zbb=true" rvv '$(emulated_tests)' \
            "$qemu10"
    else
        echo "no $qemu10 (.ci/qemu-trixie.sh)" > "$results/riscv64-zvkb.skip"
    fi
    bash "$dir/tools/mca-rvv.sh" "$dir/asm/chacha_rvv_riscv64.lo" || true
}

for stage in "$@"; do
    "$stage"
done
