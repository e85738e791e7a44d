/* SPDX-License-Identifier: Apache-2.0 */
#ifndef CHACHARNG_PROBE_CONF_H
#define CHACHARNG_PROBE_CONF_H

/* Print libcrypto's reading of the config |file| (see probe-conf.c);
 * returns the exit status: 0, or 1 when libcrypto cannot load it. */
int probe_conf(const char *file);

#endif
