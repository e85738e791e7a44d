/* SPDX-License-Identifier: Apache-2.0 */
#include "errq.h"

#include <stdio.h>
#include <string.h>

#include <openssl/err.h>

#include "testutil.h"

/* One entry as a line: OpenSSL's error string, then any detail text. */
static void entry_text(unsigned long e, const char *data, int flags, char *buf,
                       size_t buflen)
{
    char text[256];

    ERR_error_string_n(e, text, sizeof(text));
    snprintf(buf, buflen, "%s%s%s", text,
             (flags & ERR_TXT_STRING) && data != NULL ? ": " : "",
             (flags & ERR_TXT_STRING) && data != NULL ? data : "");
}

void tu_err_print(void)
{
    unsigned long e;
    const char *data;
    int flags;
    char line[600];

    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &flags)) != 0) {
        entry_text(e, data, flags, line, sizeof(line));
        tu_diag("  %s", line);
    }
}

static int contains(const char *s, const char *needle)
{
    return s != NULL && strstr(s, needle) != NULL;
}

int tu_err_find(const char *lib, const char *reason, const char *detail,
                unsigned int flags)
{
    enum { SHOWN = 8 };
    char seen[SHOWN][600];
    unsigned long e;
    const char *data;
    int eflags, found = 0, n = 0, i;

    while ((e = ERR_get_error_all(NULL, NULL, NULL, &data, &eflags)) != 0) {
        const char *elib = ERR_lib_error_string(e);
        const char *why = ERR_reason_error_string(e);
        const char *text = (eflags & ERR_TXT_STRING) ? data : NULL;
        char line[600];
        int reason_ok;

        entry_text(e, data, eflags, line, sizeof(line));
        if (n < SHOWN)
            memcpy(seen[n], line, sizeof(line));
        n++;
        if (flags & TU_ERR_VERBOSE)
            tu_diag("error: %s", line);
        reason_ok = reason == NULL
                    || (why != NULL && why[0] != '\0'
                        && ((flags & TU_ERR_EXACT) ? strcmp(why, reason) == 0
                                                   : contains(why, reason)))
                    || ((flags & TU_ERR_EITHER) && contains(text, reason));
        if ((lib == NULL || (elib != NULL && strcmp(elib, lib) == 0))
            && reason_ok && (detail == NULL || contains(text, detail)))
            found = 1;
    }
    if (!found && !(flags & TU_ERR_QUIET)) {
        tu_diag("wanted an error from %s, reason \"%s\", detail \"%s\"; "
                "the queue held %d%s",
                lib != NULL ? lib : "any library",
                reason != NULL ? reason : "*", detail != NULL ? detail : "*", n,
                n > 0 ? ":" : "");
        for (i = 0; i < n && i < SHOWN; i++)
            tu_diag("  %s", seen[i]);
    }
    return found;
}
