// SPDX-License-Identifier: GPL-2.0
/*
 * Fork/exec churn: the worst case for prefault named in review (short
 * shell scripts). "ap_churn N KIB" spawns N short-lived copies of itself
 * one after another; each mallocs KIB KiB, touches every page and exits.
 * Prints: execs N wall_s T execs_per_s E minflt_per_child F user_s U sys_s S
 * (user and system time of all the children together, getrusage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int child(long kib)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)kib << 10, i;
	char *p = malloc(len);

	if (!p)
		return 1;
	for (i = 0; i < len; i += psz)
		p[i] = (char)i;
	return p[len / 2] == (char)(len / 2 / psz * psz) ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	char kibs[32];
	long n, kib, i;
	double t0, t;

	if (argc == 3 && !strcmp(argv[1], "child"))
		return child(atol(argv[2]));
	if (argc != 3 || (n = atol(argv[1])) <= 0 || (kib = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: ap_churn COUNT KIB\n");
		return 2;
	}
	snprintf(kibs, sizeof(kibs), "%ld", kib);
	t0 = now();
	for (i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (!pid) {
			execl("/proc/self/exe", argv[0], "child", kibs, (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "child %ld failed\n", i);
			return 1;
		}
	}
	t = now() - t0;
	getrusage(RUSAGE_CHILDREN, &ru);
	printf("execs %ld wall_s %.3f execs_per_s %.1f minflt_per_child %.1f user_s %.3f sys_s %.3f\n",
	       n, t, n / t, (double)ru.ru_minflt / n,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return 0;
}
