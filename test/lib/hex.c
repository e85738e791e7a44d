/* SPDX-License-Identifier: Apache-2.0 */
#include "hex.h"

#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

size_t tu_unhex(unsigned char *out, size_t cap, const char *hex)
{
    size_t n = strlen(hex), i;

    if (n % 2 != 0 || n / 2 > cap)
        return (size_t)-1;
    for (i = 0; i < n / 2; i++) {
        int hi = hexval((unsigned char)hex[2 * i]);
        int lo = hexval((unsigned char)hex[2 * i + 1]);

        if (hi < 0 || lo < 0)
            return (size_t)-1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return n / 2;
}

int tu_unhex_alloc(const char *hex, unsigned char **out, size_t *outlen)
{
    size_t cap = strlen(hex) / 2, n;
    unsigned char *p = malloc(cap + 1);

    if (p == NULL)
        return 0;
    n = tu_unhex(p, cap, hex);
    if (n == (size_t)-1) {
        free(p);
        return 0;
    }
    *out = p;
    *outlen = n;
    return 1;
}
