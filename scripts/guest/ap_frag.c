// SPDX-License-Identifier: GPL-2.0
/*
 * Fragment free memory for the benchmark: fill all but LEAVE_MIB of free
 * memory with order-0 pages, then free every page whose page frame number
 * is odd (read from /proc/self/pagemap, so as root) and hold the others
 * until killed. Free memory is then plenty but in single pages that cannot
 * merge, where order-0 prefault still works and mTHP must fall back.
 * Prints "ready" with the free and held amounts once done.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = atol(line + strlen(key));
			break;
		}
	fclose(f);
	return v;
}

int main(int argc, char **argv)
{
	long leave = argc > 1 ? atol(argv[1]) : 24;
	long psz = sysconf(_SC_PAGESIZE);
	size_t len, i, freed = 0;
	uint64_t ent;
	char *p;
	int fd;

	if (leave <= 0) {
		fprintf(stderr, "usage: ap_frag [LEAVE_MIB]\n");
		return 2;
	}
	len = (size_t)(meminfo_kb("MemFree:") - leave * 1024) * 1024;
	len &= ~((size_t)psz - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	madvise(p, len, MADV_RANDOM);
	for (i = 0; i < len; i += psz)
		p[i] = 1;
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0) {
		perror("pagemap");
		return 1;
	}
	for (i = 0; i < len; i += psz) {
		if (pread(fd, &ent, sizeof(ent), (uintptr_t)(p + i) / psz *
			  sizeof(ent)) != sizeof(ent))
			break;
		/* bit 63: present, bits 0-54: PFN (zero without CAP_SYS_ADMIN) */
		if ((ent >> 63) && (ent & 1)) {
			madvise(p + i, psz, MADV_DONTNEED);
			freed += psz;
		}
	}
	close(fd);
	printf("ready: held %zu MiB in order-0 pages, freed %zu MiB, MemFree %ld MiB\n",
	       (len - freed) >> 20, freed >> 20, meminfo_kb("MemFree:") >> 10);
	fflush(stdout);
	for (;;)
		pause();
	return 0;
}
