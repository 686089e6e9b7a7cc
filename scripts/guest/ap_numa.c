// SPDX-License-Identifier: GPL-2.0
/*
 * anon-prefault: NUMA placement per address is the same with prefault on
 * and off.
 *
 * The extra pages of a prefault window are allocated one by one, each with
 * the mempolicy of its own address.  For each policy below, an 8 MiB region
 * (2 MiB aligned, MADV_NOHUGEPAGE) is written one byte per page with
 * vm.anon_prefault=0 and a fresh one with vm.anon_prefault=1 and
 * vm.anon_prefault_max_pages=16, and the node of every page is read back
 * with get_mempolicy(MPOL_F_NODE | MPOL_F_ADDR):
 *
 *  - MPOL_INTERLEAVE over nodes 0 and 1: the node of a page follows from
 *    its interleave index, which for an anonymous VMA is its virtual page
 *    number; both regions start on a 2 MiB boundary, so the node sequences
 *    must be equal page by page, and both nodes must be used.
 *  - MPOL_BIND to node 1, then to node 0: every page on that node.
 *
 * The minor faults of the "on" run must be fewer than a quarter of those
 * of the "off" run, or the windows were not active and the comparison
 * proves nothing.
 *
 * Then node 1 is filled below its high watermark but not below its low one
 * (by a child bound to it, which holds its pages; vm.watermark_scale_factor
 * is raised for the test so that the gap between the two is wider than the
 * batches the per-cpu lists take from the zone, and watermark boosting is
 * off), while node 0 keeps plenty free, and a writer bound
 * to node 1 writes a few pages with prefault on: the allocator gives it
 * its own pages, but no speculative page may come from a zone below its
 * high watermark, so every page takes its own fault and anon_prefault_page
 * does not move, whatever node 0 has free. The same writer bound to node
 * 0 does get windows.
 *
 * Needs two online NUMA nodes; otherwise, or if /proc/sys/vm/anon_prefault
 * does not exist, every case is skipped.  No libnuma: raw syscalls.
 *
 * Usage: ap_numa
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "ap_util.h"

#ifndef MPOL_BIND
#define MPOL_BIND		2
#endif
#ifndef MPOL_INTERLEAVE
#define MPOL_INTERLEAVE		3
#endif
#ifndef MPOL_F_NODE
#define MPOL_F_NODE		1
#endif
#ifndef MPOL_F_ADDR
#define MPOL_F_ADDR		2
#endif
#define NODE1_DIR		"/sys/devices/system/node/node1"

#define NR_CASES		4
#define REGION_SIZE		(8UL << 20)
#define REGION_ALIGN		(2UL << 20)
#define MAX_PAGES		16
#define MAX_NODES		64
#define LW_DESC	"node 1 below its high watermark: no speculative page from it, though node 0 has plenty"
#define BOOST_FACTOR		"/proc/sys/vm/watermark_boost_factor"
#define SCALE_FACTOR		"/proc/sys/vm/watermark_scale_factor"
#define LW_PAGES		24	/* pages the writer writes */

static size_t pagesize;
/* -f: run without the sysctl (host testing of the logic only). */
static bool force;

static long sys_mbind(void *addr, unsigned long len, int mode,
		      const unsigned long *nodemask, unsigned long maxnode,
		      unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, nodemask, maxnode, flags);
}

static long sys_get_mempolicy(int *mode, unsigned long *nodemask,
			      unsigned long maxnode, void *addr,
			      unsigned long flags)
{
	return syscall(SYS_get_mempolicy, mode, nodemask, maxnode, addr, flags);
}

/* Set a sysctl, unless -f said to leave them alone. */
static bool set_sysctl(const char *path, long val)
{
	return force || write_long(path, val);
}

static long minflt(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	return ru.ru_minflt;
}

/* An REGION_SIZE mapping starting on a REGION_ALIGN boundary. */
static char *map_region(void)
{
	size_t len = REGION_SIZE + REGION_ALIGN;
	unsigned long start, end;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = ((unsigned long)p + REGION_ALIGN - 1) & ~(REGION_ALIGN - 1);
	end = start + REGION_SIZE;
	if (start > (unsigned long)p)
		munmap(p, start - (unsigned long)p);
	if ((unsigned long)p + len > end)
		munmap((char *)end, (unsigned long)p + len - end);
	return (char *)start;
}

struct policy_case {
	const char *desc;
	int mode;
	unsigned long nodemask;
	int want_node;		/* every page on this node, -1: interleave */
};

static const struct policy_case cases[NR_CASES - 1] = {
	{ "MPOL_INTERLEAVE 0,1: same node for every page with prefault on and off",
	  MPOL_INTERLEAVE, 0x3UL, -1 },
	{ "MPOL_BIND 1: every page on node 1 with prefault on and off",
	  MPOL_BIND, 0x2UL, 1 },
	{ "MPOL_BIND 0: every page on node 0 with prefault on and off",
	  MPOL_BIND, 0x1UL, 0 },
};

/*
 * Map a fresh region with the policy of @pc, write it sequentially with
 * vm.anon_prefault=@on and store the node of each page in @nodes.  Returns
 * the minor faults taken by the writes, -1 on error.
 */
static long run_one(const struct policy_case *pc, int on, int *nodes)
{
	unsigned long i, nr = REGION_SIZE / pagesize;
	long f0, f1;
	char *p;

	if (!set_sysctl(SYSCTL_ENABLE, on))
		return -1;
	p = map_region();
	if (!p) {
		diag("mmap: %s\n", strerror(errno));
		return -1;
	}
	if (madvise(p, REGION_SIZE, MADV_NOHUGEPAGE)) {
		diag("MADV_NOHUGEPAGE: %s\n", strerror(errno));
		goto err;
	}
	if (sys_mbind(p, REGION_SIZE, pc->mode, &pc->nodemask, MAX_NODES, 0)) {
		diag("mbind mode %d mask 0x%lx: %s\n", pc->mode, pc->nodemask,
		     strerror(errno));
		goto err;
	}

	f0 = minflt();
	for (i = 0; i < nr; i++)
		__atomic_store_n(p + i * pagesize, 1, __ATOMIC_RELAXED);
	f1 = minflt();

	for (i = 0; i < nr; i++) {
		int node = -1;

		if (sys_get_mempolicy(&node, NULL, 0, p + i * pagesize,
				      MPOL_F_NODE | MPOL_F_ADDR)) {
			diag("get_mempolicy page %lu: %s\n", i, strerror(errno));
			goto err;
		}
		nodes[i] = node;
	}
	munmap(p, REGION_SIZE);
	return f1 - f0;
err:
	munmap(p, REGION_SIZE);
	return -1;
}

static void count_nodes(const int *nodes, unsigned long nr, unsigned long *cnt)
{
	unsigned long i;

	memset(cnt, 0, MAX_NODES * sizeof(*cnt));
	for (i = 0; i < nr; i++)
		if (nodes[i] >= 0 && nodes[i] < MAX_NODES)
			cnt[nodes[i]]++;
}

static void test_policy(const struct policy_case *pc, int *on_nodes, int *off_nodes)
{
	unsigned long i, nr = REGION_SIZE / pagesize;
	unsigned long cnt_on[MAX_NODES], cnt_off[MAX_NODES];
	unsigned long diff = 0, wrong_on = 0, wrong_off = 0;
	long faults_on, faults_off;
	bool ok = true;

	faults_off = run_one(pc, 0, off_nodes);
	faults_on = run_one(pc, 1, on_nodes);
	if (faults_off < 0 || faults_on < 0) {
		result(false, pc->desc);
		return;
	}

	count_nodes(on_nodes, nr, cnt_on);
	count_nodes(off_nodes, nr, cnt_off);
	diag("%lu pages, on: node0 %lu node1 %lu; off: node0 %lu node1 %lu\n",
	     nr, cnt_on[0], cnt_on[1], cnt_off[0], cnt_off[1]);
	diag("minor faults: on %ld, off %ld\n", faults_on, faults_off);

	for (i = 0; i < nr; i++) {
		if (on_nodes[i] != off_nodes[i]) {
			if (!diff)
				diag("first difference at page %lu: node %d on, %d off\n",
				     i, on_nodes[i], off_nodes[i]);
			diff++;
		}
		if (pc->want_node >= 0) {
			wrong_on += on_nodes[i] != pc->want_node;
			wrong_off += off_nodes[i] != pc->want_node;
		}
	}
	if (diff) {
		diag("%lu pages on a different node with prefault on and off\n", diff);
		ok = false;
	}
	if (pc->want_node < 0) {
		if (!cnt_on[0] || !cnt_on[1] || !cnt_off[0] || !cnt_off[1]) {
			diag("interleave did not use both nodes\n");
			ok = false;
		}
	} else if (wrong_on || wrong_off) {
		diag("pages not on node %d: %lu on, %lu off\n", pc->want_node,
		     wrong_on, wrong_off);
		ok = false;
	}
	/* Without active windows the comparison above proves nothing. */
	if (force) {
		diag("fault ratio not checked (-f)\n");
	} else if (faults_on >= faults_off / 4) {
		diag("prefault not active: %ld faults on, not < %ld / 4\n",
		     faults_on, faults_off);
		ok = false;
	}
	result(ok, pc->desc);
}

/* Free pages and watermarks of node @nid's largest zone (/proc/zoneinfo). */
struct zone_wmark {
	long free, min, low, high, managed;
};

static bool node_wmark(int nid, struct zone_wmark *w)
{
	static char buf[65536];
	char head[32], *s, *end;
	bool found = false;

	if (read_file("/proc/zoneinfo", buf, sizeof(buf)) <= 0)
		return false;
	snprintf(head, sizeof(head), "Node %d, zone", nid);
	memset(w, 0, sizeof(*w));
	for (s = strstr(buf, head); s; s = strstr(end, head)) {
		struct zone_wmark z = { 0 };
		char *l;

		end = strstr(s + 1, "Node ");
		if (!end)
			end = s + strlen(s);
		for (l = s; l && l < end; l = strchr(l, '\n'), l = l ? l + 1 : l) {
			sscanf(l, "  pages free %ld", &z.free);
			sscanf(l, " min %ld", &z.min);
			sscanf(l, " low %ld", &z.low);
			sscanf(l, " high %ld", &z.high);
			sscanf(l, " managed %ld", &z.managed);
		}
		if (z.managed > w->managed) {
			*w = z;
			found = true;
		}
	}
	return found;
}

/* The "@key" counter of /proc/vmstat. */
static long vmstat(const char *key)
{
	return read_key("/proc/vmstat", key);
}

/*
 * Child: write pages of memory bound to node 1 until its zone is below
 * the high watermark, say so on @ready (its free pages), hold them until
 * @go closes.
 */
static void lw_filler(int ready, int go)
{
	const unsigned long mask = 0x2UL, len = 1UL << 30;
	struct zone_wmark w;
	unsigned long i;
	char c;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED || madvise(p, len, MADV_NOHUGEPAGE) ||
	    sys_mbind(p, len, MPOL_BIND, &mask, MAX_NODES, 0) ||
	    !node_wmark(1, &w))
		_exit(2);
	for (i = 0; i < len / pagesize; i++) {
		__atomic_store_n(p + i * pagesize, 1, __ATOMIC_RELAXED);
		/* Close to the high watermark, look after every page. */
		if (w.free > w.high + 256 && i % 64)
			continue;
		if (!node_wmark(1, &w))
			_exit(3);
		if (w.free < w.high)
			break;
	}
	if (write(ready, &w, sizeof(w)) != sizeof(w))
		_exit(4);
	while (read(go, &c, 1) > 0)
		;
	_exit(0);
}

/*
 * Write @n pages of a fresh region bound to node @nid, prefault on;
 * returns the minor faults and the anon_prefault_page and
 * anon_prefault_fallback deltas, or false.
 */
static bool lw_write(int nid, unsigned long n, long *faults, long *pages,
		     long *fallback)
{
	unsigned long mask = 1UL << nid, i;
	long f0, p0, b0;
	char *p;

	p = map_region();
	if (!p || madvise(p, REGION_SIZE, MADV_NOHUGEPAGE) ||
	    sys_mbind(p, REGION_SIZE, MPOL_BIND, &mask, MAX_NODES, 0)) {
		diag("mapping the writer's region: %s\n", strerror(errno));
		return false;
	}
	p0 = vmstat("anon_prefault_page");
	b0 = vmstat("anon_prefault_fallback");
	f0 = minflt();
	for (i = 0; i < n; i++)
		__atomic_store_n(p + i * pagesize, 1, __ATOMIC_RELAXED);
	*faults = minflt() - f0;
	*pages = vmstat("anon_prefault_page") - p0;
	*fallback = vmstat("anon_prefault_fallback") - b0;
	munmap(p, REGION_SIZE);
	return true;
}

static void test_high_wmark(void)
{
	long faults, pages, fallback, f0, p0, b0, boost, scale;
	int ready[2], go[2], status;
	struct zone_wmark w, w1;
	bool ok = true;
	long n;
	pid_t pid;

	if (pipe(ready) || pipe(go)) {
		result(false, LW_DESC);
		return;
	}
	boost = read_long(BOOST_FACTOR);
	scale = read_long(SCALE_FACTOR);
	if (!set_sysctl(SYSCTL_ENABLE, 0) || !write_long(BOOST_FACTOR, 0) ||
	    !write_long(SCALE_FACTOR, 1000))
		ok = false;
	fflush(stdout);
	pid = ok ? fork() : -1;
	if (pid < 0) {
		ok = false;
		goto out;
	}
	if (!pid) {
		close(ready[0]);
		close(go[1]);
		lw_filler(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	if (read(ready[0], &w, sizeof(w)) != sizeof(w)) {
		diag("the filler of node 1 died\n");
		ok = false;
		goto out;
	}
	/* The writer's pages, and any window, stay above the low watermark. */
	n = (w.free - w.low) / 4;
	if (n > LW_PAGES)
		n = LW_PAGES;
	diag("node 1: %ld pages free, min %ld, low %ld, high %ld; writing %ld pages\n",
	     w.free, w.min, w.low, w.high, n);
	if (n < 4 || !set_sysctl(SYSCTL_ENABLE, 1) ||
	    !lw_write(1, n, &faults, &pages, &fallback)) {
		ok = false;
		goto out;
	}
	node_wmark(1, &w1);
	diag("bound to node 1: %ld faults for %ld pages, anon_prefault_page +%ld, anon_prefault_fallback +%ld; node 1 free %ld after\n",
	     faults, n, pages, fallback, w1.free);
	if (faults != n || pages) {
		diag("expected %ld faults and no page mapped ahead\n", n);
		ok = false;
	}
	/* The control: node 0 has the room, windows are mapped there. */
	if (!lw_write(0, n, &f0, &p0, &b0)) {
		ok = false;
		goto out;
	}
	diag("bound to node 0: %ld faults for %ld pages, anon_prefault_page +%ld\n",
	     f0, n, p0);
	if (f0 >= n || !p0) {
		diag("expected windows on node 0: prefault not active\n");
		ok = false;
	}
out:
	close(go[1]);
	close(ready[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (boost >= 0)
		write_long(BOOST_FACTOR, boost);
	if (scale > 0)
		write_long(SCALE_FACTOR, scale);
	result(ok, LW_DESC);
}

int main(int argc, char **argv)
{
	unsigned long nr;
	long old_enable, old_max;
	int *on_nodes, *off_nodes;
	const char *why = NULL;
	int opt, i, mode;

	while ((opt = getopt(argc, argv, "f")) != -1) {
		switch (opt) {
		case 'f':
			force = true;
			break;
		default:
			fprintf(stderr, "usage: %s\n", argv[0]);
			return 2;
		}
	}

	printf("TAP version 13\n1..%d\n", NR_CASES);
	fflush(stdout);

	if (!force && access(SYSCTL_ENABLE, F_OK))
		why = "feature absent";
	else if (!force && geteuid())
		why = "must run as root";
	else if (access(NODE1_DIR, F_OK))
		why = "fewer than 2 NUMA nodes";
	else if (sys_get_mempolicy(&mode, NULL, 0, NULL, 0))
		why = "get_mempolicy failed: no NUMA support";
	if (why) {
		for (i = 0; i < NR_CASES - 1; i++)
			skip(cases[i].desc, why);
		skip(LW_DESC, why);
		return 0;
	}

	pagesize = sysconf(_SC_PAGESIZE);
	nr = REGION_SIZE / pagesize;
	on_nodes = calloc(nr, sizeof(*on_nodes));
	off_nodes = calloc(nr, sizeof(*off_nodes));
	if (!on_nodes || !off_nodes) {
		printf("Bail out! out of memory\n");
		return 1;
	}

	old_enable = read_long(SYSCTL_ENABLE);
	old_max = read_long(SYSCTL_MAX_PAGES);
	diag("vm.anon_prefault %ld, vm.anon_prefault_max_pages %ld%s\n",
	     old_enable, old_max, force ? " (-f: sysctl not touched)" : "");
	if (!set_sysctl(SYSCTL_MAX_PAGES, MAX_PAGES)) {
		printf("Bail out! cannot set %s\n", SYSCTL_MAX_PAGES);
		return 1;
	}

	for (i = 0; i < NR_CASES - 1; i++)
		test_policy(&cases[i], on_nodes, off_nodes);
	test_high_wmark();

	if (old_max > 0)
		set_sysctl(SYSCTL_MAX_PAGES, old_max);
	if (old_enable >= 0)
		set_sysctl(SYSCTL_ENABLE, old_enable);
	free(on_nodes);
	free(off_nodes);
	return failed ? 1 : 0;
}
