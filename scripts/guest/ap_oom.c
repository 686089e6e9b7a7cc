// SPDX-License-Identifier: GPL-2.0
/*
 * anon-prefault: the OOM killer behaves as without prefault.
 *
 * With vm.anon_prefault=1 the pages of a prefault window beyond the
 * faulting one are allocated and charged with a gfp mask that neither
 * reclaims nor invokes the OOM killer.  When memory runs out a speculative
 * allocation fails, the window ends and /proc/vmstat anon_prefault_fallback
 * goes up; the faulting page itself is allocated as without prefault, so the
 * OOM killer picks the same victim at about the same point.
 *
 * A "hog" child writes one byte per page of a huge MAP_NORESERVE region
 * until it is OOM-killed, publishing the number of pages written so far in
 * a MAP_SHARED counter.  In the global cases a "bystander" child holding
 * 4 MiB with oom_score_adj -1000 must survive with its data intact.  In the
 * memcg cases the hog runs alone in a memory cgroup with memory.max set;
 * the number of pages the hog wrote must not depend on the sysctl by more
 * than about one window.
 *
 * Runs as root in a small guest (e.g. 256 MiB, no swap); the kernel logs
 * OOM reports on the console, that is expected.  If /proc/sys/vm/anon_prefault
 * does not exist every case is skipped.
 *
 * Usage: ap_oom [-m MEMCG_MAX_MIB]    (default 64)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "ap_util.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif
#define CGROUP_ROOT		"/sys/fs/cgroup"
#define CGROUP_TEST		CGROUP_ROOT "/ap_oom"

#define NR_CASES		5
#define HOG_SIZE		(4UL << 30)
#define BYSTANDER_SIZE		(4UL << 20)
#define HOG_TIMEOUT_MS		120000
/* one window of the largest size (PAGEVEC_SIZE) plus the page being counted */
#define MEMCG_MAX_DIFF		32

/* Exit codes of the children other than death by SIGKILL. */
#define CHILD_OK		0
#define CHILD_BAD_DATA		1
#define CHILD_SETUP		2
#define CHILD_MMAP		3
#define CHILD_NO_OOM		4

/* One MAP_SHARED page, written by the children, read by the parent. */
struct shared {
	unsigned long hog_pages;	/* pages the hog has written */
	int by_ready;			/* bystander has written its 4 MiB */
	unsigned long by_checks;	/* bystander verifications done */
	unsigned long by_bad;		/* bytes found corrupted */
};

struct vmstat {
	long fault, page, fallback, oom_kill;
};

static struct shared *shm;
static size_t pagesize;

static const char * const case_desc[NR_CASES] = {
	"global OOM, prefault on: hog killed, bystander intact, fallbacks counted",
	"global OOM, prefault off: hog killed, bystander intact",
	"memcg OOM, prefault on: hog killed by the memcg OOM killer",
	"memcg OOM, prefault off: hog killed by the memcg OOM killer",
	"memcg OOM: pages written before the kill equal on and off",
};

static void read_vmstat(struct vmstat *v)
{
	v->fault = read_key("/proc/vmstat", "anon_prefault_fault");
	v->page = read_key("/proc/vmstat", "anon_prefault_page");
	v->fallback = read_key("/proc/vmstat", "anon_prefault_fallback");
	v->oom_kill = read_key("/proc/vmstat", "oom_kill");
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static unsigned char pattern(unsigned long i)
{
	return (i ^ (i >> 8) ^ (i >> 16) ^ 0x5a) & 0xff;
}

static unsigned long verify(const unsigned char *p, size_t size)
{
	unsigned long i, bad = 0;

	for (i = 0; i < size; i++)
		if (p[i] != pattern(i))
			bad++;
	return bad;
}

/*
 * Bystander: hold BYSTANDER_SIZE of written memory and check it every
 * 100 ms until the read end of @stop_fd sees EOF, then check it once more.
 */
static void bystander(int stop_fd)
{
	unsigned long i, bad;
	unsigned char *p;
	struct pollfd pfd = { .fd = stop_fd, .events = POLLIN };
	char c;

	if (write_file("/proc/self/oom_score_adj", "-1000"))
		_exit(CHILD_SETUP);
	p = mmap(NULL, BYSTANDER_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(CHILD_MMAP);
	for (i = 0; i < BYSTANDER_SIZE; i++)
		p[i] = pattern(i);
	__atomic_store_n(&shm->by_ready, 1, __ATOMIC_RELEASE);

	for (;;) {
		int ret = poll(&pfd, 1, 100);

		bad = verify(p, BYSTANDER_SIZE);
		__atomic_store_n(&shm->by_bad, bad, __ATOMIC_RELAXED);
		__atomic_add_fetch(&shm->by_checks, 1, __ATOMIC_RELAXED);
		if (bad)
			_exit(CHILD_BAD_DATA);
		if (ret > 0 && read(stop_fd, &c, 1) <= 0)
			break;
	}
	_exit(CHILD_OK);
}

/*
 * Hog: optionally join the cgroup @procs, then write one byte per page of
 * a HOG_SIZE region until the OOM killer ends us.  shm->hog_pages is
 * updated after every page write.
 */
static void hog(const char *procs, int close_fd)
{
	unsigned long i, nr = HOG_SIZE / pagesize;
	char *p;

	if (close_fd >= 0)
		close(close_fd);
	if (write_file("/proc/self/oom_score_adj", "1000"))
		_exit(CHILD_SETUP);
	if (procs) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%d", getpid());
		if (write_file(procs, buf))
			_exit(CHILD_SETUP);
	}
	p = mmap(NULL, HOG_SIZE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		_exit(CHILD_MMAP);
	madvise(p, HOG_SIZE, MADV_NOHUGEPAGE);
	for (i = 0; i < nr; i++) {
		__atomic_store_n(p + i * pagesize, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&shm->hog_pages, i + 1, __ATOMIC_RELAXED);
	}
	_exit(CHILD_NO_OOM);
}

static const char *child_exit_str(int code)
{
	switch (code) {
	case CHILD_OK:
		return "ok";
	case CHILD_BAD_DATA:
		return "data corrupted";
	case CHILD_SETUP:
		return "setup (oom_score_adj or cgroup.procs) failed";
	case CHILD_MMAP:
		return "mmap failed";
	case CHILD_NO_OOM:
		return "wrote the whole region without being OOM-killed";
	}
	return "unexpected exit code";
}

static void describe_status(const char *who, int status)
{
	if (WIFSIGNALED(status))
		diag("%s: killed by signal %d\n", who, WTERMSIG(status));
	else if (WIFEXITED(status))
		diag("%s: exit %d (%s)\n", who, WEXITSTATUS(status),
		     child_exit_str(WEXITSTATUS(status)));
	else
		diag("%s: wait status 0x%x\n", who, status);
}

/*
 * Wait up to HOG_TIMEOUT_MS for @pid; on timeout SIGKILL and reap it.
 * Returns true if it ended within the timeout.
 */
static bool wait_hog(pid_t pid, int *status)
{
	long end = now_ms() + HOG_TIMEOUT_MS;
	pid_t ret;

	for (;;) {
		ret = waitpid(pid, status, WNOHANG);
		if (ret == pid)
			return true;
		if (ret < 0 && errno != EINTR) {
			diag("waitpid: %s\n", strerror(errno));
			*status = 0;
			return false;
		}
		if (now_ms() > end)
			break;
		sleep_ms(20);
	}
	diag("hog still running after %d s (%lu pages written), killing it\n",
	     HOG_TIMEOUT_MS / 1000, __atomic_load_n(&shm->hog_pages, __ATOMIC_RELAXED));
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	return false;
}

static bool hog_oom_killed(bool in_time, int status)
{
	describe_status("hog", status);
	return in_time && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

static void reset_shared(void)
{
	memset(shm, 0, pagesize);
}

static void print_vmstat_delta(const char *tag, const struct vmstat *a, const struct vmstat *b)
{
	if (a->fault < 0 || a->page < 0 || a->fallback < 0)
		diag("%s: anon_prefault counters missing from /proc/vmstat\n", tag);
	diag("%s: vmstat delta: anon_prefault_fault +%ld anon_prefault_page +%ld\n",
	     tag, b->fault - a->fault, b->page - a->page);
	diag("%s: vmstat delta: anon_prefault_fallback +%ld oom_kill +%ld\n",
	     tag, b->fallback - a->fallback, b->oom_kill - a->oom_kill);
}

/* Cases 1 and 2: global OOM with a protected bystander. */
static void test_global(int on, unsigned long *hog_pages)
{
	const char *tag = on ? "global on" : "global off";
	const char *desc = case_desc[!on];
	int stop[2], status, by_status;
	struct vmstat v0, v1;
	pid_t by, hg;
	bool ok = true, in_time, by_alive;
	long end;

	*hog_pages = 0;
	if (!write_long(SYSCTL_ENABLE, on)) {
		result(false, desc);
		return;
	}
	reset_shared();
	read_vmstat(&v0);
	if (v0.oom_kill < 0) {
		diag("%s: oom_kill missing from /proc/vmstat\n", tag);
		result(false, desc);
		return;
	}
	if (pipe(stop)) {
		diag("pipe: %s\n", strerror(errno));
		result(false, desc);
		return;
	}

	by = fork();
	if (by < 0) {
		diag("fork: %s\n", strerror(errno));
		close(stop[0]);
		close(stop[1]);
		result(false, desc);
		return;
	}
	if (!by) {
		close(stop[1]);
		bystander(stop[0]);
	}
	close(stop[0]);
	end = now_ms() + 10000;
	while (!__atomic_load_n(&shm->by_ready, __ATOMIC_ACQUIRE) && now_ms() < end &&
	       waitpid(by, &by_status, WNOHANG) == 0)
		sleep_ms(10);
	if (!__atomic_load_n(&shm->by_ready, __ATOMIC_ACQUIRE)) {
		diag("%s: bystander did not get ready\n", tag);
		kill(by, SIGKILL);
		waitpid(by, &by_status, 0);
		close(stop[1]);
		result(false, desc);
		return;
	}

	hg = fork();
	if (hg < 0) {
		diag("fork: %s\n", strerror(errno));
		ok = false;
	} else if (!hg) {
		hog(NULL, stop[1]);
	} else {
		in_time = wait_hog(hg, &status);
		*hog_pages = __atomic_load_n(&shm->hog_pages, __ATOMIC_RELAXED);
		ok &= hog_oom_killed(in_time, status);
	}

	/* The bystander must have lived through the OOM kill. */
	by_alive = waitpid(by, &by_status, WNOHANG) == 0;
	if (!by_alive) {
		diag("%s: bystander died during the OOM\n", tag);
		describe_status("bystander", by_status);
		ok = false;
	}
	/* EOF on the pipe: the bystander verifies once more and exits. */
	close(stop[1]);
	if (by_alive) {
		end = now_ms() + 10000;
		while (waitpid(by, &by_status, WNOHANG) == 0) {
			if (now_ms() > end) {
				diag("%s: bystander does not exit, killing it\n", tag);
				kill(by, SIGKILL);
				waitpid(by, &by_status, 0);
				break;
			}
			sleep_ms(10);
		}
		describe_status("bystander", by_status);
		if (!WIFEXITED(by_status) || WEXITSTATUS(by_status) != CHILD_OK)
			ok = false;
	}
	diag("%s: bystander verified its %lu MiB %lu times, %lu bad bytes\n", tag,
	     BYSTANDER_SIZE >> 20, __atomic_load_n(&shm->by_checks, __ATOMIC_RELAXED),
	     __atomic_load_n(&shm->by_bad, __ATOMIC_RELAXED));

	read_vmstat(&v1);
	print_vmstat_delta(tag, &v0, &v1);
	diag("%s: hog wrote %lu pages (%lu MiB) before the kill\n", tag,
	     *hog_pages, *hog_pages * pagesize >> 20);
	if (v1.oom_kill - v0.oom_kill < 1) {
		diag("%s: oom_kill did not increase\n", tag);
		ok = false;
	}
	/* Near the limit speculative allocations fail instead of reclaiming. */
	if (on && v0.fallback < 0) {
		diag("%s: anon_prefault_fallback missing from /proc/vmstat\n", tag);
		ok = false;
	} else if (on && v1.fallback - v0.fallback <= 0) {
		diag("%s: anon_prefault_fallback did not increase\n", tag);
		ok = false;
	}
	result(ok, desc);
}

/* Make sure the memory controller can be used; NULL or the reason why not. */
static const char *memcg_setup(void)
{
	static char reason[128];
	struct statfs sfs;
	char buf[512], *s;
	bool found = false;
	int err;

	mkdir(CGROUP_ROOT, 0755);
	if (statfs(CGROUP_ROOT, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC) {
		if (mount("none", CGROUP_ROOT, "cgroup2", 0, NULL)) {
			snprintf(reason, sizeof(reason), "cannot mount cgroup2: %s",
				 strerror(errno));
			return reason;
		}
	}
	if (read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)) < 0)
		return "no cgroup.controllers";
	for (s = strtok(buf, "\n "); s; s = strtok(NULL, "\n "))
		if (!strcmp(s, "memory"))
			found = true;
	if (!found)
		return "memory controller unavailable";
	err = write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
	if (err) {
		snprintf(reason, sizeof(reason), "cannot enable +memory: %s",
			 strerror(-err));
		return reason;
	}
	return NULL;
}

static bool rmdir_cgroup(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (!rmdir(CGROUP_TEST) || errno == ENOENT)
			return true;
		sleep_ms(10);
	}
	diag("rmdir %s: %s\n", CGROUP_TEST, strerror(errno));
	return false;
}

/*
 * Cases 3 and 4: the hog alone in a fresh memcg with memory.max =
 * @max_mib MiB and no swap.  Returns the pages it wrote before the kill
 * in @hog_pages; returns whether the case passed.
 */
static bool test_memcg(int on, long max_mib, unsigned long *hog_pages)
{
	const char *tag = on ? "memcg on" : "memcg off";
	struct vmstat v0, v1;
	bool ok = true, in_time;
	long oom_kill;
	int status, err;
	pid_t hg;

	*hog_pages = 0;
	if (!write_long(SYSCTL_ENABLE, on))
		return false;
	if (!rmdir_cgroup())
		return false;
	if (mkdir(CGROUP_TEST, 0755)) {
		diag("mkdir %s: %s\n", CGROUP_TEST, strerror(errno));
		return false;
	}
	if (!write_long(CGROUP_TEST "/memory.max", max_mib << 20)) {
		ok = false;
		goto out;
	}
	err = write_file(CGROUP_TEST "/memory.swap.max", "0");
	if (err && err != -ENOENT) {
		diag("writing 0 to memory.swap.max: %s\n", strerror(-err));
		ok = false;
		goto out;
	}
	reset_shared();
	read_vmstat(&v0);

	hg = fork();
	if (hg < 0) {
		diag("fork: %s\n", strerror(errno));
		ok = false;
		goto out;
	}
	if (!hg)
		hog(CGROUP_TEST "/cgroup.procs", -1);
	in_time = wait_hog(hg, &status);
	*hog_pages = __atomic_load_n(&shm->hog_pages, __ATOMIC_RELAXED);
	ok &= hog_oom_killed(in_time, status);

	read_vmstat(&v1);
	print_vmstat_delta(tag, &v0, &v1);
	oom_kill = read_key(CGROUP_TEST "/memory.events", "oom_kill");
	diag("%s: memory.max %ld MiB, memory.events oom_kill %ld, memory.peak %ld KiB\n",
	     tag, max_mib, oom_kill, read_long(CGROUP_TEST "/memory.peak") >> 10);
	diag("%s: hog wrote %lu pages (%lu MiB) before the kill\n", tag,
	     *hog_pages, *hog_pages * pagesize >> 20);
	if (oom_kill < 1) {
		diag("%s: memory.events oom_kill is not >= 1\n", tag);
		ok = false;
	}
out:
	if (!rmdir_cgroup())
		ok = false;
	return ok;
}

static void print_help(const char *prog)
{
	fprintf(stderr, "usage: %s [-m MEMCG_MAX_MIB]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long global_on, global_off, memcg_on, memcg_off, diff;
	long max_mib = 64, old_enable, old_adj;
	bool ok_on, ok_off;
	const char *why;
	char buf[32];
	int opt, i;

	while ((opt = getopt(argc, argv, "m:")) != -1) {
		switch (opt) {
		case 'm':
			max_mib = strtol(optarg, NULL, 0);
			if (max_mib <= 0)
				print_help(argv[0]);
			break;
		default:
			print_help(argv[0]);
		}
	}

	printf("TAP version 13\n1..%d\n", NR_CASES);
	fflush(stdout);

	if (access(SYSCTL_ENABLE, F_OK)) {
		for (i = 0; i < NR_CASES; i++)
			skip(case_desc[i], "feature absent");
		return 0;
	}
	if (geteuid()) {
		for (i = 0; i < NR_CASES; i++)
			skip(case_desc[i], "must run as root");
		return 0;
	}

	pagesize = sysconf(_SC_PAGESIZE);
	shm = mmap(NULL, pagesize, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED) {
		printf("Bail out! mmap shared page: %s\n", strerror(errno));
		return 1;
	}
	/* Populate the shared page here so it is charged to our cgroup. */
	reset_shared();

	old_enable = read_long(SYSCTL_ENABLE);
	old_adj = read_long("/proc/self/oom_score_adj");
	diag("vm.anon_prefault %ld, vm.anon_prefault_max_pages %ld, page size %zu\n",
	     old_enable, read_long(SYSCTL_MAX_PAGES), pagesize);
	/* Keep the test runner itself out of the OOM killer's way. */
	if (write_file("/proc/self/oom_score_adj", "-1000"))
		diag("cannot set own oom_score_adj to -1000\n");

	test_global(1, &global_on);
	test_global(0, &global_off);
	diag("global: hog wrote %lu pages with prefault on, %lu off (noisy, not checked)\n",
	     global_on, global_off);

	why = memcg_setup();
	if (why) {
		for (i = 2; i < NR_CASES; i++)
			skip(case_desc[i], why);
	} else {
		ok_on = test_memcg(1, max_mib, &memcg_on);
		result(ok_on, case_desc[2]);
		ok_off = test_memcg(0, max_mib, &memcg_off);
		result(ok_off, case_desc[3]);
		/*
		 * The memcg holds the hog alone and its limit is exact, so
		 * the OOM kill comes at the same usage either way.  With
		 * prefault on, the speculative pages of the last window are
		 * charged without reclaim and fail at the limit, so the
		 * faulting page after them meets the same OOM as it would
		 * without prefault.  The hog may have been killed holding up
		 * to one window of mapped but not yet written pages (at most
		 * 31), and the counter is bumped after each write, so allow
		 * one window plus one page of difference.
		 */
		diff = memcg_on > memcg_off ? memcg_on - memcg_off : memcg_off - memcg_on;
		diag("memcg: hog wrote %lu pages with prefault on, %lu off: diff %lu (max %d)\n",
		     memcg_on, memcg_off, diff, MEMCG_MAX_DIFF);
		if (ok_on && ok_off)
			result(diff <= MEMCG_MAX_DIFF, case_desc[4]);
		else
			skip(case_desc[4], "a memcg OOM run failed");
	}

	if (old_enable >= 0)
		write_long(SYSCTL_ENABLE, old_enable);
	if (old_adj >= -1000) {
		snprintf(buf, sizeof(buf), "%ld", old_adj);
		write_file("/proc/self/oom_score_adj", buf);
	}
	return failed ? 1 : 0;
}
