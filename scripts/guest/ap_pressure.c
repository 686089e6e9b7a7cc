// SPDX-License-Identifier: GPL-2.0
/*
 * anon-prefault benchmark: what unused speculative pages cost under memory
 * cgroup pressure, for "make run".
 *
 * In a memory cgroup with memory.max = MAX_MIB (no swap in the guest), a
 * holder maps HOLDER_MIB with MADV_SEQUENTIAL and writes one byte at the
 * start of every 64 KiB: a program that advises a sequential walk but
 * writes sparsely, where a window on every fault would map sixteen times
 * what it uses. Then a second process writes PRESSURE_MIB in full in the
 * same cgroup, and the holder checks its bytes.
 *
 * Prints one line:
 *   rss_before_kb N rss_after_kb N oom_kill N pressure_ms N holder OK|BAD|KILLED
 * rss_*: the holder's VmRSS before and after the pressure.
 * Exit status 0 unless the measurement itself failed.
 *
 * Usage: ap_pressure MAX_MIB HOLDER_MIB PRESSURE_MIB
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "ap_util.h"

#define CG		"/sys/fs/cgroup/ap_pressure"
#define STRIDE		(64 * 1024UL)

struct report {
	long rss_kb;
	int ok;
};

static void join(void)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", getpid());
	if (write_file(CG "/cgroup.procs", pid))
		_exit(2);
}

static char *map(size_t len, int advice)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || madvise(p, len, MADV_NOHUGEPAGE) ||
	    (advice && madvise(p, len, advice)))
		_exit(3);
	return p;
}

static void holder(size_t len, int to_parent, int from_parent)
{
	struct report r;
	size_t off;
	char c, *p;

	join();
	p = map(len, MADV_SEQUENTIAL);
	for (off = 0; off < len; off += STRIDE)
		p[off] = (char)(off / STRIDE) | 1;
	r.rss_kb = read_key("/proc/self/status", "VmRSS");
	r.ok = 1;
	if (write(to_parent, &r, sizeof(r)) != sizeof(r) ||
	    read(from_parent, &c, 1) != 1)
		_exit(4);
	for (off = 0; off < len; off += STRIDE)
		if (p[off] != ((char)(off / STRIDE) | 1))
			r.ok = 0;
	r.rss_kb = read_key("/proc/self/status", "VmRSS");
	if (write(to_parent, &r, sizeof(r)) != sizeof(r))
		_exit(4);
	_exit(0);
}

static void pressure(size_t len)
{
	size_t off;
	char *p;

	join();
	p = map(len, 0);
	for (off = 0; off < len; off += 4096)
		p[off] = 1;
	_exit(0);
}

static void die(const char *what)
{
	fprintf(stderr, "ap_pressure: %s: %s\n", what, strerror(errno));
	rmdir(CG);
	exit(1);
}

int main(int argc, char **argv)
{
	int up[2], down[2], status;
	long max_mib;
	struct report before, after = { 0, -1 };
	size_t hold, press;
	pid_t h, pr;
	long t0, t1;
	char buf[32];
	int c = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: %s MAX_MIB HOLDER_MIB PRESSURE_MIB\n",
			argv[0]);
		return 2;
	}
	max_mib = atol(argv[1]);
	hold = atol(argv[2]) << 20;
	press = atol(argv[3]) << 20;
	if (max_mib <= 0 || !hold || !press) {
		fprintf(stderr, "ap_pressure: sizes must be positive\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	rmdir(CG);
	if (mkdir(CG, 0755))
		die("mkdir " CG);
	snprintf(buf, sizeof(buf), "%ld", max_mib << 20);
	if (write_file(CG "/memory.max", buf))
		die("memory.max");
	if (pipe(up) || pipe(down))
		die("pipe");
	fflush(stdout);
	h = fork();
	if (h < 0)
		die("fork");
	if (!h)
		holder(hold, up[1], down[0]);
	close(up[1]);
	close(down[0]);
	if (read(up[0], &before, sizeof(before)) != sizeof(before))
		die("holder did not report");
	t0 = now_ms();
	pr = fork();
	if (pr < 0)
		die("fork");
	if (!pr)
		pressure(press);
	if (waitpid(pr, &status, 0) != pr)
		die("waitpid");
	t1 = now_ms();
	if (write(down[1], "g", 1) != 1 && errno != EPIPE)
		die("write");
	if (read(up[0], &after, sizeof(after)) != sizeof(after))
		after.ok = -1;
	if (waitpid(h, &status, 0) != h)
		die("waitpid");
	printf("rss_before_kb %ld rss_after_kb %ld oom_kill %ld pressure_ms %ld holder %s\n",
	       before.rss_kb, after.rss_kb, read_key(CG "/memory.events", "oom_kill"),
	       t1 - t0,
	       after.ok < 0 ? "KILLED" : after.ok ? "OK" : "BAD");
	/* The cgroup is busy until the exited children are gone. */
	for (c = 0; rmdir(CG) && c < 100; c++)
		usleep(10000);
	if (c == 100)
		die("rmdir " CG);
	return 0;
}
