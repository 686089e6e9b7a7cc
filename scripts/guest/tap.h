/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP output for the harness's guest programs (ap_oom, ap_numa):
 * result(), skip() and diag() number and print the lines; "failed" tells
 * main() what to return.
 */
#ifndef AP_TAP_H
#define AP_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int test_nr;
static bool failed;

static inline void result(bool ok, const char *desc)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++test_nr, desc);
	if (!ok)
		failed = true;
	fflush(stdout);
}

static inline void skip(const char *desc, const char *reason)
{
	printf("ok %d %s # SKIP %s\n", ++test_nr, desc, reason);
	fflush(stdout);
}

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

#endif /* AP_TAP_H */
