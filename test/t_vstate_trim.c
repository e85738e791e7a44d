/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A trim of the vDSO states (chacha_kmix_trim, provider teardown) racing
 * generators that come and go, with the race's window held open from
 * outside: the munmap that trim calls is wrapped at link time
 * (linkwrap.h), and the other side's part runs inside it, in the trimming
 * thread, after the kernel has unmapped the idle mapping and before trim
 * goes on.  There a retired record is revived and given the same
 * addresses (the kernel may do that on its own; the wrapper makes it
 * sure), one of its states is taken and given back, and after the trim a
 * new generator must get a state of a live mapping, not one of the dead
 * record's: a vDSO call on that would write through a wild pointer.
 * Runs in a child, so a crash is a failed test point; skipped without the
 * vDSO route.
 */
#include <stdint.h>
#include <string.h>

#include "kmix.h"
#include "linkwrap.h"
#include "testutil.h"

/* More than two mappings' worth (a mapping holds at most 64 states). */
#define MAX_STATES 130

static void *taken[MAX_STATES];
static void *inside[2];
static uint8_t *window_base;
static size_t window_len;
static int window_ran;

/*
 * The other thread's part, in the window: the dying mapping's addresses
 * are free again, its record still in the list.  A new generator revives
 * the retired record at those addresses (slot 0), a second one takes its
 * slot 1 and goes away again.
 */
static void in_window(void *base, size_t len)
{
    uint8_t g[CHACHA_KEY_BYTES];

    window_base = base;
    window_len = len;
    window_ran = 1;
    lw_place_mmap(base);
    chacha_kmix_getrandom(&inside[0], g);
    chacha_kmix_getrandom(&inside[1], g);
    chacha_kmix_release(inside[1]);
    inside[1] = NULL;
}

/* Take states until a second mapping is made; how many, 0 if none was. */
static size_t take_two_mappings(void)
{
    unsigned long m0, m;
    uint8_t g[CHACHA_KEY_BYTES];
    size_t i;

    lw_calls(&m0, NULL, NULL);
    for (i = 0; i < MAX_STATES; i++) {
        chacha_kmix_getrandom(&taken[i], g);
        lw_calls(&m, NULL, NULL);
        if (m == m0 + 2)
            return i + 1;
    }
    return 0;
}

static void race(void *arg)
{
    uint8_t g[CHACHA_KEY_BYTES];
    void *later = NULL;
    uint8_t *state;
    size_t i, n = take_two_mappings();
    int ok;

    (void)arg;
    if (!TU_OK(n >= 2, "states of two mappings taken (%zu states)", n))
        return;
    /* the older mapping idle: the first trim retires its record */
    for (i = 0; i + 1 < n; i++)
        chacha_kmix_release(taken[i]);
    chacha_kmix_trim();
    /* the newer one idle: the second trim unmaps it, held in the window */
    chacha_kmix_release(taken[n - 1]);
    lw_after_munmap(in_window);
    chacha_kmix_trim();
    lw_after_munmap(NULL);
    if (!TU_OK(window_ran, "the trim's munmap ran the other side's part"))
        return;
    TU_OK(chacha_kmix_state(inside[0]) == window_base,
          "in the window, a revived record was given the dying mapping's "
          "addresses");
    ok = chacha_kmix_getrandom(&later, g);
    state = chacha_kmix_state(later);
    TU_OK(ok && state > window_base && state < window_base + window_len,
          "after the trim, a new generator gets a state of the live mapping"
          " (%p, mapping at %p)",
          (void *)state, (void *)window_base);
    chacha_kmix_release(later);
    chacha_kmix_release(inside[0]);
    chacha_kmix_trim();
}

static void body(void)
{
    char why[128];

    if (chacha_kmix_route(why, sizeof(why)) != CHACHA_KMIX_VDSO) {
        tu_skip("vDSO states: %s", why);
        return;
    }
    tu_run_child("trim racing generators, window held", race, NULL);
}

int main(void)
{
    return tu_main_once(body);
}
