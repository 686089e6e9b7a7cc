// SPDX-License-Identifier: GPL-2.0
/*
 * pft - anonymous page fault throughput benchmark, in the spirit of
 * Christoph Lameter's 2004 "pft".
 *
 * Each worker (a thread, or a process with -n) maps its own private
 * anonymous region and touches it (by default: writes one byte to every
 * page, in ascending order).  All workers are released together; the wall
 * time runs from the earliest worker start to the latest worker finish and
 * does not include mmap() or munmap().  This is repeated -r times, each
 * repetition on freshly mapped memory.
 *
 * Output columns:
 *   Gb          GiB mapped (and covered by the pattern) per repetition,
 *               summed over all workers
 *   Rep         repetitions
 *   Threads     workers (threads, or processes with -n)
 *   User/System CPU seconds spent in the touch phase, summed over all
 *               repetitions (threads: RUSAGE_SELF delta taken while all
 *               workers wait at a barrier; processes: RUSAGE_SELF delta
 *               measured by each child around its own touch loop)
 *   Wall        wall clock seconds of the touch phase, summed over reps
 *   flt/cpu/s   pages touched per CPU second (user + system)
 *   fault/wsec  pages touched per wall clock second
 *   minflt/page minor faults really taken (per-thread RUSAGE_THREAD delta
 *               around the touch loop, summed) divided by pages touched
 *   rss/page    pages present in the regions right after touching (from
 *               /proc/self/pagemap) divided by pages touched; "-" if
 *               pagemap could not be read
 *
 * Note that, as in the original pft, "fault" in flt/cpu/s and fault/wsec
 * means "page touched", not "page fault taken": if the kernel maps more
 * than one page per fault (THP, fault-around, prefaulting) these rates
 * go up while minflt/page goes below 1.  rss/page above 1 shows how many
 * pages got mapped per page touched.  With -R a read fault maps the
 * shared zero page, which pagemap also reports as present.  With -B each
 * page of the pattern is read, then each is written (a read fault, then
 * a copy-on-write of the zero page): a page counts once, and minflt/page
 * counts the faults of both passes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif

#define PAGEMAP_BATCH		512
#define RANDOM_SEED		0x2004c0ffeeULL

enum pattern { PAT_SEQ, PAT_STRIDE, PAT_RANDOM, PAT_RANDOM50 };

struct config {
	unsigned long long size;	/* bytes per worker, page aligned */
	unsigned long npages;		/* pages per worker */
	unsigned long ntouch;		/* pages touched per worker */
	long reps;
	long workers;
	bool processes;
	enum pattern pattern;
	unsigned long stride;
	bool read;
	bool read_write;
	bool thp;
	bool populate;
	bool header;
	bool csv;
	char pattern_name[32];
};

/* What one worker measured in one repetition. */
struct result {
	unsigned long long start_ns;
	unsigned long long end_ns;
	unsigned long long minflt;
	unsigned long long present;
	unsigned long long utime_us;
	unsigned long long stime_us;
	unsigned long long sink;
	int pagemap_ok;
	int failed;
};

/* Start signal for -n: lives in a MAP_SHARED page. */
struct proc_sync {
	int ready;
	int go;
};

static const char header[] =
	" Gb Rep Threads   User      System     Wall flt/cpu/s fault/wsec  minflt/page  rss/page";

static struct config cfg;
static unsigned long *order;	/* page order for the random patterns */
static long page_size;
static pthread_barrier_t barrier;

static void die(const char *what)
{
	fprintf(stderr, "pft: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void print_usage(FILE *f)
{
	fprintf(f,
		"Usage: pft [-m SIZE | -g N] [-r N] [-t N | -n N] [-p PATTERN]\n"
		"           [-R | -B] [-H] [-P] [-s | -S] [-h]\n"
		"  -m SIZE     region size per worker, K/M/G suffix allowed (default 128M)\n"
		"  -g N        region size per worker in GiB\n"
		"  -r N        repetitions (default 1)\n"
		"  -t N        threads (default 1)\n"
		"  -n N        processes instead of threads\n"
		"  -p PATTERN  seq (default), stride:K, random, random50\n"
		"  -R          read one byte per page instead of writing\n"
		"  -B          read one byte per page, then write one byte per page\n"
		"  -H          allow THP (default: MADV_NOHUGEPAGE)\n"
		"  -P          MADV_POPULATE_WRITE the region instead of touching it\n"
		"  -s          print the header line\n"
		"  -S          print only a CSV line:\n"
		"              gb,reps,workers,user_s,sys_s,wall_s,flt_per_cpu_s,fault_per_wsec,\n"
		"              minflt_per_page,rss_per_page,pattern,mode\n"
		"  -h          this help\n");
}

static void bad_args(const char *msg)
{
	fprintf(stderr, "pft: %s\n", msg);
	print_usage(stderr);
	exit(2);
}

static long parse_count(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < 1 || v > 1000000)
		bad_args("bad count");
	return v;
}

static unsigned long long parse_size(const char *s)
{
	unsigned long long v, mult = 1;
	char *end;

	if (*s < '0' || *s > '9')
		bad_args("bad size");
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		bad_args("bad size");
	switch (*end) {
	case 'k':
	case 'K':
		mult = 1ULL << 10;
		end++;
		break;
	case 'm':
	case 'M':
		mult = 1ULL << 20;
		end++;
		break;
	case 'g':
	case 'G':
		mult = 1ULL << 30;
		end++;
		break;
	}
	if (*end || !v || v > (1ULL << 50) / mult)
		bad_args("bad size");
	return v * mult;
}

static void parse_pattern(const char *s)
{
	char *end;

	if (!strcmp(s, "seq")) {
		cfg.pattern = PAT_SEQ;
	} else if (!strcmp(s, "random")) {
		cfg.pattern = PAT_RANDOM;
	} else if (!strcmp(s, "random50")) {
		cfg.pattern = PAT_RANDOM50;
	} else if (!strncmp(s, "stride:", 7)) {
		if (s[7] < '0' || s[7] > '9')
			bad_args("bad stride");
		errno = 0;
		cfg.stride = strtoul(s + 7, &end, 0);
		if (errno || *end || !cfg.stride)
			bad_args("bad stride");
		cfg.pattern = PAT_STRIDE;
	} else {
		bad_args("unknown pattern");
	}
	snprintf(cfg.pattern_name, sizeof(cfg.pattern_name), "%s", s);
}

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static unsigned long long tv_us(const struct timeval *tv)
{
	return (unsigned long long)tv->tv_sec * 1000000ULL + tv->tv_usec;
}

/* xorshift64*: deterministic, good enough for shuffling */
static unsigned long long rnd_state = RANDOM_SEED;

static unsigned long rnd(unsigned long n)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return (rnd_state * 0x2545f4914f6cdd1dULL) % n;
}

static void shuffle(unsigned long *a, unsigned long n)
{
	unsigned long i, j, tmp;

	for (i = n - 1; i > 0; i--) {
		j = rnd(i + 1);
		tmp = a[i];
		a[i] = a[j];
		a[j] = tmp;
	}
}

static bool adjacent(unsigned long a, unsigned long b)
{
	return a + 1 == b || b + 1 == a;
}

/*
 * Move entries around until no two consecutive entries are neighbouring
 * pages.  Returns false if that did not work out (tiny selections).
 */
static bool separate_neighbours(unsigned long *a, unsigned long n)
{
	unsigned long i, j, tmp;
	bool clean;
	int pass;

	for (pass = 0; pass < 1000; pass++) {
		clean = true;
		for (i = 1; i < n; i++) {
			if (!adjacent(a[i - 1], a[i]))
				continue;
			clean = false;
			j = rnd(n);
			tmp = a[i];
			a[i] = a[j];
			a[j] = tmp;
		}
		if (clean)
			return true;
	}
	return false;
}

static void setup_pattern(void)
{
	unsigned long i;
	int tries;

	cfg.npages = cfg.size / page_size;
	switch (cfg.pattern) {
	case PAT_SEQ:
		cfg.ntouch = cfg.npages;
		return;
	case PAT_STRIDE:
		cfg.ntouch = (cfg.npages - 1) / cfg.stride + 1;
		return;
	case PAT_RANDOM:
		cfg.ntouch = cfg.npages;
		break;
	case PAT_RANDOM50:
		cfg.ntouch = cfg.npages / 2;
		if (!cfg.ntouch)
			bad_args("random50 needs at least two pages");
		break;
	}

	order = malloc(cfg.npages * sizeof(*order));
	if (!order)
		die("malloc");
	for (tries = 0; tries < 100; tries++) {
		for (i = 0; i < cfg.npages; i++)
			order[i] = i;
		shuffle(order, cfg.npages);
		/* random50: the first half of a shuffle is a random subset */
		if (cfg.pattern == PAT_RANDOM ||
		    separate_neighbours(order, cfg.ntouch))
			return;
	}
	fprintf(stderr, "pft: cannot build a random50 order for %lu pages\n", cfg.npages);
	exit(1);
}

static char *map_region(void)
{
	char *p;

	p = mmap(NULL, cfg.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!cfg.thp && madvise(p, cfg.size, MADV_NOHUGEPAGE)) {
		munmap(p, cfg.size);
		return NULL;
	}
	return p;
}

/* One pass over the pattern's pages: a load or a store of one byte each. */
static unsigned long long touch_pass(char *base, bool write)
{
	unsigned long long sum = 0;
	unsigned long i, step = 1;
	char *p;

	if (cfg.pattern == PAT_STRIDE)
		step = cfg.stride;
	for (i = 0; i < cfg.ntouch; i++) {
		if (order)
			p = base + order[i] * page_size;
		else
			p = base + i * step * page_size;
		if (write)
			__atomic_store_n(p, 1, __ATOMIC_RELAXED);
		else
			sum += __atomic_load_n(p, __ATOMIC_RELAXED);
	}
	return sum;
}

/* The timed part.  Returns 0, or -1 if MADV_POPULATE_WRITE failed. */
static int touch_region(char *base, struct result *res)
{
	if (cfg.populate)
		return madvise(base, cfg.size, MADV_POPULATE_WRITE) ? -1 : 0;

	res->sink = 0;
	if (cfg.read || cfg.read_write)
		res->sink = touch_pass(base, false);
	if (!cfg.read)
		touch_pass(base, true);
	return 0;
}

/* Count the pages of [base, base + size) that pagemap reports present. */
static void count_present(char *base, struct result *res)
{
	unsigned long long ent[PAGEMAP_BATCH];
	unsigned long done = 0, n, i;
	off_t off;
	ssize_t ret;
	int fd;

	res->present = 0;
	res->pagemap_ok = 0;
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return;
	while (done < cfg.npages) {
		n = cfg.npages - done;
		if (n > PAGEMAP_BATCH)
			n = PAGEMAP_BATCH;
		off = ((unsigned long)base / page_size + done) * sizeof(ent[0]);
		ret = pread(fd, ent, n * sizeof(ent[0]), off);
		if (ret != (ssize_t)(n * sizeof(ent[0]))) {
			close(fd);
			return;
		}
		for (i = 0; i < n; i++)
			res->present += (ent[i] >> 63) & 1;
		done += n;
	}
	close(fd);
	res->pagemap_ok = 1;
}

static void *thread_fn(void *arg)
{
	struct result *res = arg;
	struct rusage ru0, ru1;
	char *base;
	int err;

	base = map_region();
	if (!base)
		die("mmap/madvise");

	pthread_barrier_wait(&barrier);		/* all mapped */
	pthread_barrier_wait(&barrier);		/* main sampled rusage: go */
	res->start_ns = now_ns();
	getrusage(RUSAGE_THREAD, &ru0);
	err = touch_region(base, res);
	getrusage(RUSAGE_THREAD, &ru1);
	res->end_ns = now_ns();
	if (err)
		die("MADV_POPULATE_WRITE");
	res->minflt = ru1.ru_minflt - ru0.ru_minflt;
	res->utime_us = tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime);
	res->stime_us = tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime);

	pthread_barrier_wait(&barrier);		/* all done touching */
	pthread_barrier_wait(&barrier);		/* main sampled rusage */
	count_present(base, res);
	munmap(base, cfg.size);
	return NULL;
}

/* One repetition with threads; adds the CPU time of the touch phase. */
static void run_threads(struct result *res, unsigned long long *utime,
			unsigned long long *stime)
{
	pthread_t *tids;
	struct rusage ru0, ru1;
	long i;
	int err;

	tids = calloc(cfg.workers, sizeof(*tids));
	if (!tids)
		die("calloc");
	err = pthread_barrier_init(&barrier, NULL, cfg.workers + 1);
	if (err) {
		errno = err;
		die("pthread_barrier_init");
	}
	for (i = 0; i < cfg.workers; i++) {
		err = pthread_create(&tids[i], NULL, thread_fn, &res[i]);
		if (err) {
			errno = err;
			die("pthread_create");
		}
	}

	pthread_barrier_wait(&barrier);
	getrusage(RUSAGE_SELF, &ru0);
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	getrusage(RUSAGE_SELF, &ru1);
	pthread_barrier_wait(&barrier);

	for (i = 0; i < cfg.workers; i++)
		pthread_join(tids[i], NULL);
	pthread_barrier_destroy(&barrier);
	free(tids);

	*utime += tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime);
	*stime += tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime);
}

static void child_fn(struct proc_sync *sync, struct result *res)
{
	struct rusage ru0, ru1;
	char *base;
	int err;

	base = map_region();
	if (!base) {
		perror("pft: mmap/madvise");
		res->failed = 1;
		__atomic_add_fetch(&sync->ready, 1, __ATOMIC_SEQ_CST);
		_exit(1);
	}
	__atomic_add_fetch(&sync->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&sync->go, __ATOMIC_ACQUIRE))
		sched_yield();

	res->start_ns = now_ns();
	getrusage(RUSAGE_SELF, &ru0);
	err = touch_region(base, res);
	getrusage(RUSAGE_SELF, &ru1);
	res->end_ns = now_ns();
	if (err) {
		perror("pft: MADV_POPULATE_WRITE");
		res->failed = 1;
		_exit(1);
	}
	res->minflt = ru1.ru_minflt - ru0.ru_minflt;
	res->utime_us = tv_us(&ru1.ru_utime) - tv_us(&ru0.ru_utime);
	res->stime_us = tv_us(&ru1.ru_stime) - tv_us(&ru0.ru_stime);
	count_present(base, res);
	munmap(base, cfg.size);
	_exit(0);
}

/* One repetition with processes; res and sync are MAP_SHARED. */
static void run_processes(struct result *res, struct proc_sync *sync,
			  unsigned long long *utime, unsigned long long *stime)
{
	bool failed = false;
	pid_t *pids;
	long i, j;
	int status;

	pids = calloc(cfg.workers, sizeof(*pids));
	if (!pids)
		die("calloc");
	__atomic_store_n(&sync->ready, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&sync->go, 0, __ATOMIC_SEQ_CST);
	fflush(NULL);
	for (i = 0; i < cfg.workers; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("pft: fork");
			for (j = 0; j < i; j++)
				kill(pids[j], SIGKILL);
			exit(1);
		}
		if (!pids[i])
			child_fn(sync, &res[i]);
	}

	while (__atomic_load_n(&sync->ready, __ATOMIC_ACQUIRE) < cfg.workers)
		sched_yield();
	__atomic_store_n(&sync->go, 1, __ATOMIC_RELEASE);

	for (i = 0; i < cfg.workers; i++) {
		if (waitpid(pids[i], &status, 0) < 0)
			die("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status) || res[i].failed)
			failed = true;
		*utime += res[i].utime_us;
		*stime += res[i].stime_us;
	}
	free(pids);
	if (failed) {
		fprintf(stderr, "pft: a worker process failed\n");
		exit(1);
	}
}

static void report(unsigned long long utime_us, unsigned long long stime_us,
		   unsigned long long wall_ns, unsigned long long minflt,
		   unsigned long long present, bool rss_ok)
{
	double pages = (double)cfg.ntouch * cfg.workers * cfg.reps;
	double gb = (double)cfg.size * cfg.workers / (1ULL << 30);
	double user = utime_us / 1e6, sys = stime_us / 1e6, wall = wall_ns / 1e9;
	double cpu_rate = user + sys > 0 ? pages / (user + sys) : 0;
	double wall_rate = wall > 0 ? pages / wall : 0;
	const char *mode;
	char rss[32];

	if (rss_ok)
		snprintf(rss, sizeof(rss), "%.2f", present / pages);
	else
		snprintf(rss, sizeof(rss), "-");

	if (cfg.populate)
		mode = "populate";
	else
		mode = cfg.read ? "read" : cfg.read_write ? "read-write" : "write";

	if (cfg.csv) {
		printf("%.2f,%ld,%ld,%.3f,%.3f,%.3f,%.0f,%.0f,%.4f,%s,%s,%s\n",
		       gb, cfg.reps, cfg.workers, user, sys, wall, cpu_rate,
		       wall_rate, minflt / pages, rss, cfg.pattern_name, mode);
		return;
	}
	if (cfg.header)
		puts(header);
	printf("%3.2f %3ld %7ld %6.3fs %10.3fs %7.3fs %9.0f %10.0f %12.4f %9s\n",
	       gb, cfg.reps, cfg.workers, user, sys, wall, cpu_rate, wall_rate,
	       minflt / pages, rss);
}

int main(int argc, char **argv)
{
	unsigned long long utime = 0, stime = 0, wall = 0, minflt = 0, present = 0;
	unsigned long long start, end;
	struct proc_sync *sync = NULL;
	struct result *res;
	bool rss_ok = true;
	long threads = 1;
	long r, i;
	int opt;

	cfg.size = 128ULL << 20;
	cfg.reps = 1;
	cfg.workers = 1;
	snprintf(cfg.pattern_name, sizeof(cfg.pattern_name), "seq");

	while ((opt = getopt(argc, argv, "m:g:r:t:n:p:RBHPsSh")) != -1) {
		switch (opt) {
		case 'm':
			cfg.size = parse_size(optarg);
			break;
		case 'g':
			cfg.size = (unsigned long long)parse_count(optarg) << 30;
			break;
		case 'r':
			cfg.reps = parse_count(optarg);
			break;
		case 't':
			threads = parse_count(optarg);
			break;
		case 'n':
			cfg.workers = parse_count(optarg);
			cfg.processes = true;
			break;
		case 'p':
			parse_pattern(optarg);
			break;
		case 'R':
			cfg.read = true;
			break;
		case 'B':
			cfg.read_write = true;
			break;
		case 'H':
			cfg.thp = true;
			break;
		case 'P':
			cfg.populate = true;
			break;
		case 's':
			cfg.header = true;
			break;
		case 'S':
			cfg.csv = true;
			break;
		case 'h':
			print_usage(stdout);
			return 0;
		default:
			bad_args("bad option");
		}
	}
	if (optind != argc)
		bad_args("unexpected argument");
	if (cfg.processes && threads > 1)
		bad_args("-n and -t are mutually exclusive");
	if (!cfg.processes)
		cfg.workers = threads;
	if (cfg.read && cfg.read_write)
		bad_args("-R and -B are mutually exclusive");
	if (cfg.populate && (cfg.read || cfg.read_write || cfg.pattern != PAT_SEQ))
		bad_args("-P cannot be combined with -R, -B or -p");

	page_size = sysconf(_SC_PAGESIZE);
	cfg.size = (cfg.size + page_size - 1) / page_size * page_size;
	setup_pattern();

	if (cfg.processes) {
		res = mmap(NULL, cfg.workers * sizeof(*res), PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		sync = mmap(NULL, sizeof(*sync), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (res == MAP_FAILED || sync == MAP_FAILED)
			die("mmap");
	} else {
		res = calloc(cfg.workers, sizeof(*res));
		if (!res)
			die("calloc");
	}

	for (r = 0; r < cfg.reps; r++) {
		memset(res, 0, cfg.workers * sizeof(*res));
		if (cfg.processes)
			run_processes(res, sync, &utime, &stime);
		else
			run_threads(res, &utime, &stime);

		start = res[0].start_ns;
		end = res[0].end_ns;
		for (i = 0; i < cfg.workers; i++) {
			if (res[i].start_ns < start)
				start = res[i].start_ns;
			if (res[i].end_ns > end)
				end = res[i].end_ns;
			minflt += res[i].minflt;
			present += res[i].present;
			if (!res[i].pagemap_ok)
				rss_ok = false;
		}
		wall += end - start;
	}

	report(utime, stime, wall, minflt, present, rss_ok);
	return 0;
}
