// SPDX-License-Identifier: GPL-2.0
/*
 * Runs one real-program workload and measures it (make run, real-workload
 * section). "ap_real DIR CMD [ARG...]" runs CMD in DIR with its output sent
 * to DIR/out.log, waits for it with wait4() and prints one line:
 *   wall_s minflt majflt maxrss_kb user_s sys_s ap_fault ap_page ap_fallback
 * The rusage covers CMD and every descendant it waited for (ru_maxrss is
 * the largest of them); the ap_* fields are the deltas of the
 * /proc/vmstat counters anon_prefault_{fault,page,fallback} (0 when absent).
 * Exits 1 when CMD fails or is killed.
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

int main(int argc, char **argv)
{
	unsigned long long before[NCOUNTERS], after[NCOUNTERS];
	struct rusage ru;
	double t0, wall;
	int status, fd;
	pid_t pid;

	if (argc == 3 && !strcmp(argv[1], "-g"))
		return generate(atol(argv[2]));
	if (argc < 3) {
		fprintf(stderr, "usage: ap_real DIR CMD [ARG...] | ap_real -g MIB\n");
		return 2;
	}
	read_counters(before);
	t0 = now();
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (!pid) {
		if (chdir(argv[1])) {
			perror(argv[1]);
			_exit(127);
		}
		fd = open("out.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		close(fd);
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid) {
		perror("wait4");
		return 1;
	}
	wall = now() - t0;
	read_counters(after);
	printf("%.3f %ld %ld %ld %.3f %.3f %llu %llu %llu\n", wall, ru.ru_minflt,
	       ru.ru_majflt, ru.ru_maxrss, tv(ru.ru_utime), tv(ru.ru_stime),
	       after[0] - before[0], after[1] - before[1], after[2] - before[2]);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "ap_real: %s: %s %d\n", argv[2],
			WIFEXITED(status) ? "exit status" : "killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return 1;
	}
	return 0;
}
