// SPDX-License-Identifier: GPL-2.0
/*
 * Boot smoke test of the anon-prefault harness: anonymous memory can be
 * mapped, advised and faulted in, and the fault shows up in getrusage();
 * the opt-outs (MADV_NOPREFAULT, PR_GET_ANON_PREFAULT_DISABLE) work where
 * vm.anon_prefault exists and fail with EINVAL, as before the series,
 * where it does not.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

/* The series' UAPI values, for a libc that lacks them */
#define AP_MADV_NOPREFAULT		26
#define AP_MADV_PREFAULT		27
#define AP_PR_GET_ANON_PREFAULT_DISABLE	0x41504647	/* "APFG" */

static int optouts_ok(char *p, size_t len)
{
	int have = !access("/proc/sys/vm/anon_prefault", F_OK);
	int m, me, u, ue, g, ge;

	errno = 0;
	m = madvise(p, len, AP_MADV_NOPREFAULT);
	me = errno;
	errno = 0;
	u = madvise(p, len, AP_MADV_PREFAULT);
	ue = errno;
	errno = 0;
	g = prctl(AP_PR_GET_ANON_PREFAULT_DISABLE, 0, 0, 0, 0);
	ge = errno;
	if (have ? !m && !u && !g :
	    m == -1 && me == EINVAL && u == -1 && ue == EINVAL &&
	    g == -1 && ge == EINVAL)
		return 1;
	fprintf(stderr,
		"vm.anon_prefault %s: MADV_NOPREFAULT %d (%s), MADV_PREFAULT %d (%s), PR_GET_ANON_PREFAULT_DISABLE %d (%s); expected %s\n",
		have ? "present" : "absent", m, strerror(me), u, strerror(ue),
		g, strerror(ge), have ? "0, 0, 0" : "EINVAL for each");
	return 0;
}

int main(void)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = 64 * psz;
	struct rusage a, b;
	char *p;
	size_t i;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (madvise(p, len, MADV_RANDOM) || madvise(p, len, MADV_NORMAL) ||
	    madvise(p, len, MADV_SEQUENTIAL) || madvise(p, len, MADV_RANDOM)) {
		perror("madvise");
		return 1;
	}
	getrusage(RUSAGE_SELF, &a);
	for (i = 0; i < len; i += psz)
		p[i] = (char)i;
	getrusage(RUSAGE_SELF, &b);
	for (i = 0; i < len; i += psz)
		if (p[i] != (char)i) {
			fprintf(stderr, "page %zu lost its data\n", i / psz);
			return 1;
		}
	/* MADV_RANDOM: one fault per page, with or without prefault */
	if (b.ru_minflt - a.ru_minflt < 64) {
		fprintf(stderr, "%ld faults for 64 MADV_RANDOM pages\n",
			b.ru_minflt - a.ru_minflt);
		return 1;
	}
	return !optouts_ok(p, len);
}
