// SPDX-License-Identifier: GPL-2.0
/*
 * Lock profile of the write faults of a sequential writer (make locks),
 * run on the CONFIG_LOCK_STAT kernel.
 *
 *   ap_locks MIB THREADS
 *
 * THREADS threads each write one byte to every page of their own MIB MiB
 * of one fresh anonymous mapping, front to back. /proc/lock_stat is
 * cleared once all threads are ready and read once they have all
 * finished, before the mapping is unmapped, so that the profile holds the
 * faults and not the teardown. Prints:
 *   pages,N          pages touched
 *   faults,N         minor faults of the process over the run
 *   lock,CLASS,F1..F12   the /proc/lock_stat line of each lock class of
 *                    interest (CLASS without its ":"; -R/-W kept), F1..F12
 *                    its columns (con-bounces, contentions, waittime
 *                    min/max/total/avg, acq-bounces, acquisitions,
 *                    holdtime min/max/total/avg; times in microseconds)
 * A class that was not taken during the run has no line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#define LOCK_STAT "/proc/lock_stat"

/* The classes the report shows (prefixes: "#2" or "/1" may follow). */
static const char *const classes[] = {
	"ptlock_ptr(ptdesc)",		/* the split PTE lock */
	"&mm->page_table_lock",		/* the PMD level */
	"&lruvec->lru_lock",
	"&zone->lock",
	"&pcp->lock",
	"&vma->vm_lock->lock",		/* the per-VMA lock */
	"&mm->mmap_lock",
};

static pthread_barrier_t start;
static char *region;
static size_t per_thread;
static long page_size;

static void die(const char *what)
{
	fprintf(stderr, "ap_locks: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *writer(void *arg)
{
	char *p = region + (size_t)(long)arg * per_thread;
	size_t off;

	pthread_barrier_wait(&start);
	for (off = 0; off < per_thread; off += page_size)
		p[off] = 1;
	return NULL;
}

/* Prints the lock_stat lines of the classes above. */
static int print_classes(void)
{
	static char buf[1 << 22];
	size_t len = 0;
	ssize_t n;
	char *line, *save;
	int fd = open(LOCK_STAT, O_RDONLY);

	if (fd < 0)
		die("open " LOCK_STAT);
	/* Read it whole first: printing while reading would be profiled. */
	while ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	if (n < 0)
		die("read " LOCK_STAT);
	close(fd);
	buf[len] = '\0';
	if (!strstr(buf, "lock_stat version")) {
		fprintf(stderr, "ap_locks: " LOCK_STAT " has no header\n");
		return 1;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *name = line + strspn(line, " ");
		char *colon = strchr(name, ':');
		char *field, *rest;
		size_t i, k;

		if (!colon)
			continue;
		for (i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
			k = strlen(classes[i]);
			if (!strncmp(name, classes[i], k) &&
			    (name + k == colon || strchr("#/-", name[k])))
				break;
		}
		if (i == sizeof(classes) / sizeof(classes[0]))
			continue;
		*colon = '\0';
		printf("lock,%s", name);
		for (field = strtok_r(colon + 1, " ", &rest); field;
		     field = strtok_r(NULL, " ", &rest))
			printf(",%s", field);
		printf("\n");
	}
	return 0;
}

int main(int argc, char **argv)
{
	long mib, threads, t;
	struct rusage r0, r1;
	pthread_t *tid;
	int fd;

	if (argc != 3 || (mib = atol(argv[1])) <= 0 ||
	    (threads = atol(argv[2])) <= 0 || threads > 256) {
		fprintf(stderr, "usage: ap_locks MIB THREADS\n");
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	per_thread = (size_t)mib << 20;
	region = mmap(NULL, per_thread * threads, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	tid = calloc(threads, sizeof(*tid));
	if (!tid || pthread_barrier_init(&start, NULL, threads + 1))
		die("setup");
	for (t = 0; t < threads; t++)
		if (pthread_create(&tid[t], NULL, writer, (void *)t))
			die("pthread_create");

	fd = open(LOCK_STAT, O_WRONLY);
	if (fd < 0 || write(fd, "0", 1) != 1)
		die("clear " LOCK_STAT);
	close(fd);
	getrusage(RUSAGE_SELF, &r0);
	pthread_barrier_wait(&start);
	for (t = 0; t < threads; t++)
		pthread_join(tid[t], NULL);
	getrusage(RUSAGE_SELF, &r1);
	printf("pages,%ld\n", (long)(per_thread / page_size) * threads);
	printf("faults,%ld\n", r1.ru_minflt - r0.ru_minflt);
	return print_classes();
}
