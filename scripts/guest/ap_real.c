// SPDX-License-Identifier: GPL-2.0
/*
 * Runs one real-program workload and measures it (make run, real-workload
 * section). "ap_real [-n N] DIR CMD [ARG...]" runs CMD in DIR N times (1)
 * one after another, its output sent to DIR/out.log (the last run's stays),
 * waits for each with wait4() and prints one line, per run (the means of
 * the N runs; maxrss_kb the largest):
 *   wall_s minflt majflt maxrss_kb user_s sys_s ap_fault ap_page ap_fallback
 * The rusage covers CMD and every descendant it waited for (ru_maxrss is
 * the largest of them); the ap_* fields are the deltas of the
 * /proc/vmstat counters anon_prefault_{fault,page,fallback} (0 when absent).
 * Short programs are run several times per measurement so that one
 * measurement is long against the clock's and the scheduler's granularity.
 * Exits 1 when a run of CMD fails or is killed.
 * "ap_real -g MIB" writes MIB MiB of text lines to stdout, made of words
 * of a small vocabulary chosen by a fixed pseudo-random sequence (input
 * for the sort and compressor workloads; the same bytes on every run).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char * const counters[] = {
	"anon_prefault_fault", "anon_prefault_page", "anon_prefault_fallback",
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

static void read_counters(unsigned long long *val)
{
	char name[64];
	unsigned long long v;
	size_t i;
	FILE *f = fopen("/proc/vmstat", "r");

	memset(val, 0, NCOUNTERS * sizeof(*val));
	if (!f)
		return;
	while (fscanf(f, "%63s %llu", name, &v) == 2)
		for (i = 0; i < NCOUNTERS; i++)
			if (!strcmp(name, counters[i]))
				val[i] = v;
	fclose(f);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double tv(struct timeval t)
{
	return t.tv_sec + t.tv_usec / 1e6;
}

static int generate(long mib)
{
	static const char * const words[] = {
		"anon", "page", "fault", "window", "folio", "memory", "zone",
		"order", "stream", "predict", "map", "pte", "lock", "cgroup",
		"charge", "reclaim", "swap", "fork", "exec", "heap", "stack",
		"batch", "zero", "node",
	};
	unsigned long long x = 42, left = (unsigned long long)mib << 20;
	char line[128];
	int len, k;

	while (left) {
		len = 0;
		for (k = 0; k < 6; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			len += snprintf(line + len, sizeof(line) - len, "%s%s%llu",
					k ? " " : "", words[(x >> 33) % 24],
					(x >> 40) % 1000);
		}
		line[len++] = '\n';
		if ((unsigned long long)len > left)
			len = left;
		if (fwrite(line, 1, len, stdout) != (size_t)len)
			return 1;
		left -= len;
	}
	return fflush(stdout) ? 1 : 0;
}

struct usage {
	double user, sys;
	long minflt, majflt, maxrss;
};

/* Runs argv[0..] in @dir once; adds its rusage to @sum. */
static int run_once(const char *dir, char **argv, struct usage *sum)
{
	struct rusage ru;
	int status, fd;
	pid_t pid;

	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		if (chdir(dir)) {
			perror(dir);
			_exit(127);
		}
		fd = open("out.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		close(fd);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("wait4");
		return 1;
	}
	sum->minflt += ru.ru_minflt;
	sum->majflt += ru.ru_majflt;
	if (ru.ru_maxrss > sum->maxrss)
		sum->maxrss = ru.ru_maxrss;
	sum->user += tv(ru.ru_utime);
	sum->sys += tv(ru.ru_stime);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "ap_real: %s: %s %d\n", argv[0],
			WIFEXITED(status) ? "exit status" : "killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long before[NCOUNTERS], after[NCOUNTERS];
	struct usage ru;
	double t0, wall;
	long n = 1, i;

	if (argc == 3 && !strcmp(argv[1], "-g"))
		return generate(atol(argv[2]));
	if (argc > 2 && !strcmp(argv[1], "-n")) {
		n = atol(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || n < 1) {
		fprintf(stderr, "usage: ap_real [-n N] DIR CMD [ARG...] | ap_real -g MIB\n");
		return 2;
	}
	memset(&ru, 0, sizeof(ru));
	read_counters(before);
	t0 = now();
	for (i = 0; i < n; i++)
		if (run_once(argv[1], argv + 2, &ru))
			return 1;
	wall = now() - t0;
	read_counters(after);
	printf("%.4f %.1f %.1f %ld %.4f %.4f %.1f %.1f %.1f\n", wall / n,
	       (double)ru.minflt / n, (double)ru.majflt / n, ru.maxrss,
	       ru.user / n, ru.sys / n,
	       (double)(after[0] - before[0]) / n,
	       (double)(after[1] - before[1]) / n,
	       (double)(after[2] - before[2]) / n);
	return 0;
}
