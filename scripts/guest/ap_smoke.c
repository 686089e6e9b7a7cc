// SPDX-License-Identifier: GPL-2.0
/*
 * Boot smoke test of the anon-prefault harness: anonymous memory can be
 * mapped, advised and faulted in, and the fault shows up in getrusage().
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

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
	return 0;
}
