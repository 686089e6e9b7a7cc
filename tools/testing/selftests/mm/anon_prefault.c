// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for anonymous page fault prefaulting ("anon-prefault").
 *
 * do_anonymous_page() follows, per task, a few streams of faults, each with
 * a predicted next fault address, an order and a direction.  A fault where a
 * stream predicted it is a hit.  A stream's first hit maps only the faulting
 * page; from its second hit on, the stream's order grows by one at each hit
 * and the fault maps a window of min(1 << order, vm.anon_prefault_max_pages)
 * pages from the faulting page on, upwards (or downwards for a stream walking
 * down): 1, 2, 4, 8, 16 pages.  Any other fault is a miss: it maps a single
 * page and starts a stream of its own, which the next fault continues if it
 * lands on a neighbouring page.  After each hit the stream's prediction is
 * the page after the window.  The window never crosses the VMA nor a PMD
 * boundary.  Extra pages are freshly zeroed pages on write faults and the
 * shared zero page on read faults.  There is no prefault for MADV_RANDOM,
 * userfaultfd-armed or mlocked VMAs.  MADV_SEQUENTIAL skips the ramp: a hit
 * maps the full window at once, a miss still maps one page.
 *
 * The tests assert what these rules promise, not a copy of them: bounds on
 * the faults of a stream (at least one per max_pages pages, at most the
 * ramp's log2(max_pages) + 2 more), the pages a fault populated as pagemap
 * shows them, that nothing is mapped past a VMA or page table boundary and
 * no more than max_pages - 1 pages past the last one written.  Every test
 * region is PMD (2 MiB) aligned, MADV_NOHUGEPAGE and followed by a PROT_NONE
 * guard page, so that it is a VMA of its own and the test knows where the
 * VMA and PMD boundaries are.  Before each measurement the task takes one
 * fault in a scratch area, with a stride of two, and a stream whose last
 * page was unmapped is not followed, so the first access to a fresh region
 * is a miss.
 *
 * Pages mapped ahead must be ordinary anonymous memory: "accounting" checks
 * /proc/meminfo and memory.stat against a run with prefault off, and the
 * reclaim_* tests check that data written into them by every kind of
 * writer survives reclaim through swap.  Those need swap: if none is
 * active they enable it on the RAM disk AP_SWAP_DEV (/dev/ram0) and
 * disable it again; the O_DIRECT source of the io_uring writer is
 * /dev/ram1 (CONFIG_BLK_DEV_RAM, see config). "longterm_pin" checks that a
 * FOLL_LONGTERM pin faulting fresh memory in gets no page, mapped ahead or
 * not, from ZONE_MOVABLE; it needs a movable zone (movablecore=). "lru_gen"
 * checks that under MGLRU the pages mapped ahead do not join the youngest
 * generation, as the pages a task touched do.  "mte" (arm64 with the memory
 * tagging extension) checks that pages mapped ahead into a PROT_MTE region
 * have their allocation tags cleared, as a faulted page has.  "old_ptes"
 * checks that pages mapped ahead are old where fault-around maps the pages
 * around a fault old (arm64 with a hardware access flag), so that reclaim
 * takes them before the pages a task touched.  "noprefault" and "prctl"
 * check the opt-outs, MADV_NOPREFAULT and PR_SET_ANON_PREFAULT_DISABLE
 * (across threads, fork and exec), and "noprefault_reclaim" that reclaim
 * sees a region opted out as it sees it with prefault off.
 *
 * If /proc/sys/vm/anon_prefault does not exist the kernel lacks the feature
 * and every test is reported as skipped.
 *
 * Usage: anon_prefault [-h] [-t test]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#ifdef __aarch64__
#include <sys/auxv.h>
#endif
#include <linux/io_uring.h>
#include <linux/magic.h>
#include <linux/userfaultfd.h>

#include "../kselftest.h"
#include "vm_util.h"
#include "anon_prefault_util.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT		0x01
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY	1
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC	0x63677270
#endif
#ifndef SYSFS_MAGIC
#define SYSFS_MAGIC		0x62656572
#endif
#ifndef RUSAGE_THREAD
#define RUSAGE_THREAD		1
#endif
#ifndef MADV_NOPREFAULT
#define MADV_NOPREFAULT		26
#define MADV_PREFAULT		27
#endif
#ifndef PR_SET_ANON_PREFAULT_DISABLE
#define PR_SET_ANON_PREFAULT_DISABLE	0x41504653	/* "APFS" */
#define PR_GET_ANON_PREFAULT_DISABLE	0x41504647	/* "APFG" */
#endif

#define CGROUP_ROOT		"/sys/fs/cgroup"
#define CGROUP_TEST		CGROUP_ROOT "/anon_prefault_test"
#define CGROUP_LEAF		CGROUP_TEST "/leaf"

#define SZ_1M			0x100000UL
#define PMD_SZ			(2UL << 20)
#define DEF_MAX_PAGES		16

/*
 * Every access must reach memory, once and in program order, or the fault
 * counts would not be what the test expects: the compiler may neither drop
 * nor merge these.
 */
#define poke(addr, val)	__atomic_store_n((char *)(addr), (char)(val), __ATOMIC_RELAXED)
#define peek(addr)	__atomic_load_n((const char *)(addr), __ATOMIC_RELAXED)

static size_t pagesize;
static int pagemap_fd = -1;
static bool have_sysctl;

/* Failure diagnostics: "# <test>: <message>" */
#define tmsg(name, fmt, ...)	ksft_print_msg("%s: " fmt, name, ##__VA_ARGS__)

/* ------------------------------------------------------------------------ */
/* Memory helpers                                                            */
/* ------------------------------------------------------------------------ */

/*
 * The @field line ("Anonymous", "Referenced", ...) of the VMA that starts at
 * @addr in /proc/self/smaps, in kB.
 */
static unsigned long region_smaps_kb(void *addr, const char *field)
{
	char line[256], start[32];
	size_t flen = strlen(field);
	unsigned long kb = 0;
	bool found = false;
	FILE *f;

	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	f = fopen("/proc/self/smaps", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/self/smaps");
	while (fgets(line, sizeof(line), f)) {
		if (!found) {
			found = !strncmp(line, start, strlen(start));
			continue;
		}
		if (!strncmp(line, field, flen) && line[flen] == ':' &&
		    sscanf(line + flen + 1, "%lu kB", &kb) == 1)
			break;
	}
	fclose(f);
	if (!found)
		ksft_exit_fail_msg("no VMA at %p in /proc/self/smaps\n", addr);
	return kb;
}

/*
 * Anonymous memory of the VMA that starts at @addr, in kB: exact for the
 * test region whatever the rest of the process (stack, heap, stdio
 * buffers) faults in meanwhile, which the process-wide RssAnon would count
 * too.
 */
static unsigned long region_anon_kb(void *addr)
{
	return region_smaps_kb(addr, "Anonymous");
}

/*
 * The minor faults of @who. getrusage() is called twice: in a child of
 * fork, the first call may take a copy-on-write fault on the stack page
 * that receives its result, after it has read the count, and that fault
 * belongs to no access of the test; the second call counts it.
 */
static long minflt(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru) || getrusage(who, &ru))
		ksft_exit_fail_perror("getrusage");
	return ru.ru_minflt;
}

/*
 * Map @len bytes of private anonymous memory at a PMD aligned address,
 * MADV_NOHUGEPAGE, followed by a PROT_NONE guard page so that the region is
 * a VMA of its own that cannot merge with a later mapping.
 */
static char *map_region(size_t len)
{
	const char *what;
	char *p = ap_map_region(len, PROT_READ | PROT_WRITE, &what);

	if (!p)
		ksft_exit_fail_perror(what);
	if (madvise(p, len, MADV_NOHUGEPAGE))
		ksft_exit_fail_perror("MADV_NOHUGEPAGE");
	return p;
}

static void unmap_region(char *p, size_t len)
{
	if (munmap(p, len + pagesize))
		ksft_exit_fail_perror("munmap");
}

static bool populated(char *p, unsigned long page)
{
	return pagemap_is_populated(pagemap_fd, p + page * pagesize);
}

/* Number of populated pages in [first, last) of the region at @p. */
static unsigned long count_populated(char *p, unsigned long first,
				     unsigned long last)
{
	unsigned long i, n = 0;

	for (i = first; i < last; i++)
		if (populated(p, i))
			n++;
	return n;
}

/* True if bytes [from, to) at @p are all zero. */
static bool range_is_zero(const char *p, size_t from, size_t to)
{
	const unsigned long *w;
	size_t i = from;

	while (i < to && (i % sizeof(long)))
		if (p[i++])
			return false;
	for (w = (const unsigned long *)(p + i);
	     i + sizeof(long) <= to; i += sizeof(long), w++)
		if (*w)
			return false;
	while (i < to)
		if (p[i++])
			return false;
	return true;
}

/*
 * Point the task's fault prediction away from any test region: take one
 * fault on a fresh page of a scratch area.  Pages are used with a stride of
 * two so the scratch fault itself is always a miss (maps one page).
 */
static void reset_prediction(void)
{
	static const unsigned long scratch_pages = 256;
	static unsigned long idx;
	static char *scratch;

	if (!scratch) {
		scratch = map_region(scratch_pages * pagesize);
		idx = 0;
	} else if (idx >= scratch_pages - 1) {
		if (madvise(scratch, scratch_pages * pagesize, MADV_DONTNEED))
			ksft_exit_fail_perror("MADV_DONTNEED");
		idx = 0;
	}
	poke(scratch + idx * pagesize, 1);
	idx += 2;
}

/* Set both sysctls (fatal on error) and reset the task's prediction. */
static void set_prefault(int enable, int max_pages)
{
	if (have_sysctl)
		ap_set_sysctls(enable, max_pages);
	reset_prediction();
}

/* ------------------------------------------------------------------------ */
/* What the rules promise                                                   */
/* ------------------------------------------------------------------------ */

/*
 * The faults one task may take writing @pages pages upwards from a miss,
 * none of them populated before: no window holds more than @max_pages
 * pages, so at least one fault per @max_pages pages; the ramp (a miss, a
 * first hit of one page, then windows of 2, 4, ... pages) reaches full
 * windows within log2(@max_pages) + 2 faults, or 2 under MADV_SEQUENTIAL
 * (@madv_seq), so at most that many more, and one more for each of @cuts
 * page table boundaries that end a window early.
 */
static bool stream_faults_ok(const char *name, const char *what, long faults,
			     unsigned long pages, unsigned int max_pages,
			     unsigned long cuts, bool madv_seq)
{
	unsigned long lo = (pages + max_pages - 1) / max_pages, hi;

	hi = lo + cuts + (madv_seq ? 2 : 31 - __builtin_clz(max_pages) + 2);
	if (faults >= (long)lo && faults <= (long)hi)
		return true;
	tmsg(name, "%s: %ld faults for %lu pages, expected %lu to %lu\n",
	     what, faults, pages, lo, hi);
	return false;
}

/* The first page from @first on that is not populated, or @pages. */
static unsigned long first_unpopulated(char *p, unsigned long first,
				       unsigned long pages)
{
	while (first < pages && populated(p, first))
		first++;
	return first;
}

/* What the faults of write_observed() populated, as pagemap shows it */
struct fault_obs {
	long faults;		/* faults taken */
	unsigned long multi;	/* faults that populated more than one page */
	unsigned long ahead;	/* pages populated beyond the faulting ones */
	unsigned long widest;	/* the most pages one fault populated */
};

#define OBS_PAGES	1024
static bool obs_had[OBS_PAGES];	/* touched by main() before any count */

/*
 * Write pages [@first, @last) of the @pages-page region at @p upwards, one
 * at a time, and after each fault count the pages it populated: the page
 * written and the pages after it that pagemap shows populated and that
 * were not before.
 */
static struct fault_obs write_observed(char *p, unsigned long pages,
				       unsigned long first,
				       unsigned long last)
{
	struct fault_obs o = { 0 };
	unsigned long i, j;
	long f;

	if (pages > OBS_PAGES)
		ksft_exit_fail_msg("%s: %lu pages\n", __func__, pages);
	for (i = 0; i < pages; i++)
		obs_had[i] = populated(p, i);
	for (i = first; i < last; i++) {
		f = minflt(RUSAGE_SELF);
		poke(p + i * pagesize, (char)i);
		if (minflt(RUSAGE_SELF) == f)
			continue;
		o.faults++;
		for (j = i + 1; j < pages && !obs_had[j] && populated(p, j); j++)
			obs_had[j] = true;
		j -= i;
		if (j > 1) {
			o.multi++;
			o.ahead += j - 1;
		}
		if (j > o.widest)
			o.widest = j;
	}
	return o;
}

/* Write one byte (page index) at offset 0 of pages [first, last). */
static long write_seq(char *p, unsigned long first, unsigned long last)
{
	unsigned long i;
	long f0;

	f0 = minflt(RUSAGE_SELF);
	for (i = first; i < last; i++)
		poke(p + i * pagesize, (char)i);
	return minflt(RUSAGE_SELF) - f0;
}

/* ------------------------------------------------------------------------ */
/* 1. seq_write_64M                                                          */
/* ------------------------------------------------------------------------ */

#define PAT0(i)		((char)((i) & 0xff))
#define PAT100(i)	((char)((((i) >> 8) & 0xff) ^ 0x5a))

static long write_pattern_64M(char *p, unsigned long pages)
{
	unsigned long i;
	long f0;

	f0 = minflt(RUSAGE_SELF);
	for (i = 0; i < pages; i++) {
		char *q = p + i * pagesize;

		poke(q, PAT0(i));
		poke(q + 100, PAT100(i));
	}
	return minflt(RUSAGE_SELF) - f0;
}

static unsigned long verify_pattern_64M(char *p, unsigned long pages)
{
	unsigned long i, bad = 0;

	for (i = 0; i < pages; i++) {
		const char *q = p + i * pagesize;

		if (q[0] != PAT0(i) || q[100] != PAT100(i) ||
		    !range_is_zero(q, 1, 100) ||
		    !range_is_zero(q, 101, pagesize)) {
			if (!bad)
				ksft_print_msg("first bad page %lu\n", i);
			bad++;
		}
	}
	return bad;
}

static void test_seq_write_64M(const char *name)
{
	const size_t len = 64 * SZ_1M;
	const unsigned long pages = len / pagesize;
	unsigned long bad;
	long f_on, f_off;
	bool ok = true;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	f_on = write_pattern_64M(p, pages);
	ok = stream_faults_ok(name, "prefault on", f_on, pages, DEF_MAX_PAGES,
			      len / PMD_SZ - 1, false);
	bad = verify_pattern_64M(p, pages);
	if (bad) {
		tmsg(name, "prefault on: %lu of %lu pages with wrong content\n",
		     bad, pages);
		ok = false;
	}
	unmap_region(p, len);

	set_prefault(0, DEF_MAX_PAGES);
	p = map_region(len);
	f_off = write_pattern_64M(p, pages);
	if (f_off != (long)pages) {
		tmsg(name, "prefault off: minor faults %ld, expected %lu\n",
		     f_off, pages);
		ok = false;
	}
	bad = verify_pattern_64M(p, pages);
	if (bad) {
		tmsg(name, "prefault off: %lu of %lu pages with wrong content\n",
		     bad, pages);
		ok = false;
	}
	unmap_region(p, len);

	tmsg(name, "%lu pages: %ld faults with prefault, %ld without\n",
	     pages, f_on, f_off);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 2. spec_zero                                                              */
/* ------------------------------------------------------------------------ */

/*
 * A writer that stops while its last window maps pages ahead of it: it
 * writes at least 64 pages, then on until the page after its last write
 * is populated. The pages past it are one run of at most max_pages - 1,
 * no more than it wrote, and read zero; the pages written keep their data.
 */
static void test_spec_zero(const char *name)
{
	const unsigned long pages = 256;
	unsigned long i, written, end;
	bool ok = true;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);
	for (written = 0; written < pages - 1; written++) {
		poke(p + written * pagesize, (char)(written + 1));
		if (written >= 63 && populated(p, written + 1))
			break;
	}
	written++;

	/* Look at pagemap first: reading an absent page would fault it in. */
	end = first_unpopulated(p, written, pages);
	if (end == written || end - written > DEF_MAX_PAGES - 1 ||
	    count_populated(p, 0, pages) != end) {
		tmsg(name, "%lu pages written, pages %lu..%lu populated past them, %lu in all\n",
		     written, written, end - 1, count_populated(p, 0, pages));
		ok = false;
	}
	for (i = 0; i < written; i++) {
		const char *q = p + i * pagesize;

		if (q[0] != (char)(i + 1) || !range_is_zero(q, 1, pagesize)) {
			tmsg(name, "written page %lu: bad content\n", i);
			ok = false;
		}
	}
	for (i = written; i < end; i++) {
		if (!range_is_zero(p + i * pagesize, 0, pagesize)) {
			tmsg(name, "prefaulted page %lu is not zero\n", i);
			ok = false;
		}
	}
	tmsg(name, "%lu pages written, %lu mapped ahead\n", written,
	     end - written);
	unmap_region(p, pages * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 3. vma_end                                                                */
/* ------------------------------------------------------------------------ */

/*
 * Write pages [0, @written) of @p, a VMA of exactly that size, and check
 * the fault count against the bounds, that every written page is populated
 * and that nothing is populated in [@next, @end), the VMA that follows.
 */
static bool vma_end_one(const char *name, const char *what, char *p,
			unsigned long written, unsigned long next,
			unsigned long end)
{
	unsigned long n;
	long faults;
	bool ok;

	faults = write_seq(p, 0, written);
	ok = stream_faults_ok(name, what, faults, written, DEF_MAX_PAGES, 0,
			      false);
	n = count_populated(p, 0, written);
	if (n != written) {
		tmsg(name, "%s: populated %lu of %lu written pages\n", what,
		     n, written);
		ok = false;
	}
	n = count_populated(p, next, end);
	if (n) {
		tmsg(name, "%s: %lu pages populated in the next VMA, expected 0\n",
		     what, n);
		ok = false;
	}
	return ok;
}

static void test_vma_end(const char *name)
{
	bool ok;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);

	/* 64 pages, the last 16 read-only: two VMAs of 48 and 16 pages. */
	p = map_region(64 * pagesize);
	if (mprotect(p + 48 * pagesize, 16 * pagesize, PROT_READ))
		ksft_exit_fail_perror("mprotect");
	ok = vma_end_one(name, "48+16", p, 48, 48, 64);
	unmap_region(p, 64 * pagesize);

	/* 37 pages, a hole of one page, then a 16-page neighbour VMA. */
	reset_prediction();
	p = map_region(54 * pagesize);
	if (munmap(p + 37 * pagesize, pagesize))
		ksft_exit_fail_perror("munmap");
	ok &= vma_end_one(name, "37+hole+16", p, 37, 38, 54);
	unmap_region(p, 54 * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 4. pmd_boundary                                                           */
/* ------------------------------------------------------------------------ */

static void test_pmd_boundary(const char *name)
{
	const unsigned long pages = 2 * PMD_SZ / pagesize;
	const unsigned long pmd_pages = PMD_SZ / pagesize;
	const unsigned long first = pmd_pages - 12;
	unsigned long n, end;
	bool ok = true;
	long faults;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);

	/* Pages 500..511: a stream whose windows meet the boundary */
	faults = write_seq(p, first, pmd_pages);
	ok &= stream_faults_ok(name, "up to the boundary", faults,
			       pmd_pages - first, DEF_MAX_PAGES, 1, false);
	n = count_populated(p, first, pmd_pages);
	if (n != pmd_pages - first) {
		tmsg(name, "populated %lu of %lu written pages\n",
		     n, pmd_pages - first);
		ok = false;
	}
	n = count_populated(p, 0, first);
	if (n) {
		tmsg(name, "%lu pages populated below page %lu\n", n, first);
		ok = false;
	}
	n = count_populated(p, pmd_pages, pages);
	if (n) {
		tmsg(name, "%lu pages populated past the PMD boundary, expected 0\n",
		     n);
		ok = false;
	}

	/*
	 * The stream goes on across the boundary: touching the first page
	 * of the next PMD is a hit and maps a window there, one run of at
	 * most max_pages pages from that page.
	 */
	faults = write_seq(p, pmd_pages, pmd_pages + 1);
	n = count_populated(p, pmd_pages, pages);
	end = first_unpopulated(p, pmd_pages, pages);
	if (faults != 1 || n < 2 || n > DEF_MAX_PAGES ||
	    end != pmd_pages + n) {
		tmsg(name,
		     "after touching page %lu: %ld faults, %lu pages populated in the next PMD, pages %lu..%lu in a run; expected 1 fault and a window\n",
		     pmd_pages, faults, n, pmd_pages, end - 1);
		ok = false;
	}
	unmap_region(p, pages * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 5. madvise                                                                */
/* ------------------------------------------------------------------------ */

/*
 * A region advised MADV_SEQUENTIAL but written sparsely, one page per
 * window: every fault is a miss and maps exactly its own page, so the
 * region holds exactly the pages written.
 */
static bool madvise_seq_sparse(const char *name)
{
	const unsigned long pages = 32 * SZ_1M / pagesize;
	const unsigned long touched = pages / DEF_MAX_PAGES;
	unsigned long i, kb, n;
	bool ok = true;
	long faults;
	char *p;

	reset_prediction();
	p = map_region(pages * pagesize);
	if (madvise(p, pages * pagesize, MADV_SEQUENTIAL))
		ksft_exit_fail_perror("MADV_SEQUENTIAL");
	faults = minflt(RUSAGE_SELF);
	for (i = 0; i < pages; i += DEF_MAX_PAGES)
		poke(p + i * pagesize, 1);
	faults = minflt(RUSAGE_SELF) - faults;
	kb = region_anon_kb(p);
	n = count_populated(p, 0, pages);
	if (faults != (long)touched || n != touched ||
	    kb != touched * pagesize / 1024) {
		tmsg(name,
		     "MADV_SEQUENTIAL, one page in %d written: %ld faults, %lu populated, Anonymous %lu kB; expected %lu, %lu and %lu kB\n",
		     DEF_MAX_PAGES, faults, n, kb, touched, touched,
		     touched * pagesize / 1024);
		ok = false;
	}
	unmap_region(p, pages * pagesize);
	return ok;
}

static void test_madvise(const char *name)
{
	const unsigned long pages = 256;
	const size_t len = pages * pagesize;
	unsigned long n, rss0, rss1;
	bool ok = true;
	long faults;
	char *p;

	/* MADV_RANDOM: no prefault. */
	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	if (madvise(p, len, MADV_RANDOM))
		ksft_exit_fail_perror("MADV_RANDOM");
	faults = write_seq(p, 0, pages);
	n = count_populated(p, 0, pages);
	if (faults != (long)pages || n != pages) {
		tmsg(name, "MADV_RANDOM: minor faults %ld, populated %lu, expected %lu and %lu\n",
		     faults, n, pages, pages);
		ok = false;
	}
	unmap_region(p, len);

	/* MADV_RANDOM then MADV_NORMAL: the ramp is back. */
	reset_prediction();
	p = map_region(len);
	if (madvise(p, len, MADV_RANDOM) || madvise(p, len, MADV_NORMAL))
		ksft_exit_fail_perror("madvise");
	faults = write_seq(p, 0, pages);
	n = count_populated(p, 0, pages);
	ok &= stream_faults_ok(name, "MADV_NORMAL", faults, pages,
			       DEF_MAX_PAGES, 0, false);
	if (n != pages) {
		tmsg(name, "MADV_NORMAL: populated %lu of %lu pages\n", n,
		     pages);
		ok = false;
	}
	unmap_region(p, len);

	/*
	 * MADV_SEQUENTIAL: the first fault is a miss and maps one page, the
	 * first hit maps the full window at once, without the ramp.
	 */
	reset_prediction();
	p = map_region(len);
	if (madvise(p, len, MADV_SEQUENTIAL))
		ksft_exit_fail_perror("MADV_SEQUENTIAL");
	rss0 = region_anon_kb(p);
	faults = write_seq(p, 0, 2);
	rss1 = region_anon_kb(p);
	n = count_populated(p, 0, pages);
	if (faults != 2 || n != DEF_MAX_PAGES + 1 ||
	    count_populated(p, 0, DEF_MAX_PAGES + 1) != DEF_MAX_PAGES + 1) {
		tmsg(name,
		     "MADV_SEQUENTIAL pages 0 and 1: %ld faults, %lu pages populated, expected 2 faults and pages 0..%d\n",
		     faults, n, DEF_MAX_PAGES);
		ok = false;
	}
	if (rss1 - rss0 != (DEF_MAX_PAGES + 1) * pagesize / 1024) {
		tmsg(name,
		     "MADV_SEQUENTIAL: the region's Anonymous grew by %lu kB, expected %lu kB\n",
		     rss1 - rss0, (DEF_MAX_PAGES + 1) * pagesize / 1024);
		ok = false;
	}
	/* The rest of the region: full windows, no ramp. */
	faults += write_seq(p, 2, pages);
	n = count_populated(p, 0, pages);
	ok &= stream_faults_ok(name, "MADV_SEQUENTIAL", faults, pages,
			       DEF_MAX_PAGES, 0, true);
	if (n != pages) {
		tmsg(name, "MADV_SEQUENTIAL: populated %lu of %lu pages\n", n,
		     pages);
		ok = false;
	}
	unmap_region(p, len);
	ok &= madvise_seq_sparse(name);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 6. sparse                                                                 */
/* ------------------------------------------------------------------------ */

/* The random patterns' generator state (ap_rng(), fixed seed) */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

/*
 * Touch @order[0..n) of a fresh 1024-page region; the pages touched must be
 * exactly the pages populated and the region's anonymous memory must grow
 * by exactly n pages.  If @all_misses, no access is at the page after the
 * previous one, so there can be no hit and the fault count must be n too.
 */
static bool sparse_one(const char *name, const char *what,
		       const unsigned long *order, unsigned long n,
		       bool all_misses)
{
	const unsigned long pages = 1024;
	unsigned long i, pop, wrong = 0, rss0, rss1;
	bool touched[1024] = { false };
	bool ok = true;
	long f0, faults;
	char *p;

	for (i = 0; i < n; i++)
		touched[order[i]] = true;

	reset_prediction();
	p = map_region(pages * pagesize);
	rss0 = region_anon_kb(p);
	f0 = minflt(RUSAGE_SELF);
	for (i = 0; i < n; i++)
		poke(p + order[i] * pagesize, 1);
	faults = minflt(RUSAGE_SELF) - f0;
	rss1 = region_anon_kb(p);

	for (i = 0, pop = 0; i < pages; i++) {
		bool pr = populated(p, i);

		pop += pr;
		if (pr != touched[i])
			wrong++;
	}
	if (pop != n || wrong) {
		tmsg(name,
		     "%s: populated %lu pages (%lu differ from the touched set), expected %lu\n",
		     what, pop, wrong, n);
		ok = false;
	}
	if (rss1 - rss0 != n * pagesize / 1024) {
		tmsg(name, "%s: the region's Anonymous grew by %lu kB, expected %lu kB\n",
		     what, rss1 - rss0, n * pagesize / 1024);
		ok = false;
	}
	if ((all_misses && faults != (long)n) || faults > (long)n) {
		tmsg(name, "%s: minor faults %ld, expected %s%lu\n", what,
		     faults, all_misses ? "" : "<= ", n);
		ok = false;
	}
	unmap_region(p, pages * pagesize);
	return ok;
}

static void test_sparse(const char *name)
{
	const unsigned long pages = 1024;
	unsigned long *order, i, n;
	bool ok = true;

	order = malloc(pages * sizeof(*order));
	if (!order)
		ksft_exit_fail_msg("malloc failed\n");
	set_prefault(1, DEF_MAX_PAGES);

	for (n = 0, i = 0; i < pages; i += 2)
		order[n++] = i;
	ok &= sparse_one(name, "stride-2", order, n, true);

	for (n = 0, i = 0; i < pages; i += 4)
		order[n++] = i;
	ok &= sparse_one(name, "stride-4", order, n, true);

	/* Every page in random order: hits are possible, populated = all. */
	for (i = 0; i < pages; i++)
		order[i] = i;
	ap_shuffle(order, pages, &rng_state);
	ok &= sparse_one(name, "permutation", order, pages, false);

	/*
	 * Pages chosen at random, no two of them neighbours, in random order:
	 * no fault lands next to an earlier one, so none can continue a
	 * stream in either direction and every fault is a miss.
	 */
	n = ap_random_apart(order, pages, &rng_state);
	ok &= sparse_one(name, "random-apart", order, n, true);
	free(order);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 7. seq_read_zero                                                          */
/* ------------------------------------------------------------------------ */

static void test_seq_read_zero(const char *name)
{
	const unsigned long pages = 1024;
	const size_t len = pages * pagesize;
	unsigned long i, n, rss0, rss1, bad = 0;
	long f0, faults;
	bool ok = true;
	char sum = 0;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);

	rss0 = region_anon_kb(p);
	f0 = minflt(RUSAGE_SELF);
	for (i = 0; i < pages; i++)
		sum |= peek(p + i * pagesize);
	faults = minflt(RUSAGE_SELF) - f0;
	rss1 = region_anon_kb(p);

	if (sum || !range_is_zero(p, 0, len)) {
		tmsg(name, "read: memory is not zero\n");
		ok = false;
	}
	ok &= stream_faults_ok(name, "read", faults, pages, DEF_MAX_PAGES, 0,
			       false);
	/* Zero page mappings are present in pagemap but not anon RSS. */
	n = count_populated(p, 0, pages);
	if (n != pages) {
		tmsg(name, "read: populated %lu, expected %lu\n", n, pages);
		ok = false;
	}
	if (rss1 != rss0) {
		tmsg(name, "read: the region's Anonymous changed by %ld kB, expected 0\n",
		     (long)(rss1 - rss0));
		ok = false;
	}

	/* Writes now COW every page away from the zero page: one fault each. */
	rss0 = region_anon_kb(p);
	f0 = minflt(RUSAGE_SELF);
	for (i = 0; i < pages; i++) {
		char *q = p + i * pagesize;

		poke(q, (char)(i | 1));
		poke(q + pagesize - 1, (char)(i >> 2));
	}
	faults = minflt(RUSAGE_SELF) - f0;
	rss1 = region_anon_kb(p);
	for (i = 0; i < pages; i++) {
		const char *q = p + i * pagesize;

		if (q[0] != (char)(i | 1) || q[pagesize - 1] != (char)(i >> 2) ||
		    !range_is_zero(q, 1, pagesize - 1))
			bad++;
	}
	if (bad) {
		tmsg(name, "write: %lu pages with wrong content\n", bad);
		ok = false;
	}
	if (faults != (long)pages) {
		tmsg(name, "write: minor faults %ld, expected %lu\n",
		     faults, pages);
		ok = false;
	}
	if (rss1 - rss0 != len / 1024) {
		tmsg(name, "write: the region's Anonymous grew by %lu kB, expected %zu kB\n",
		     rss1 - rss0, len / 1024);
		ok = false;
	}
	unmap_region(p, len);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 8. fork                                                                   */
/* ------------------------------------------------------------------------ */

#define FORK_PAT(c, i)	((char)((c) ^ (i)))

static void fork_fill(char *p, unsigned long pages, char c)
{
	unsigned long i;

	for (i = 0; i < pages; i++) {
		char *q = p + i * pagesize;

		poke(q, FORK_PAT(c, i));
		poke(q + 2048, FORK_PAT(c, i + 1));
	}
}

static unsigned long fork_check(char *p, unsigned long pages, char c)
{
	unsigned long i, bad = 0;

	for (i = 0; i < pages; i++) {
		const char *q = p + i * pagesize;

		if (q[0] != FORK_PAT(c, i) || q[2048] != FORK_PAT(c, i + 1))
			bad++;
	}
	return bad;
}

static int fork_child(char *r1, unsigned long r1_pages, char *r2,
		      unsigned long next)
{
	unsigned long bad;
	int fd, rc = 0;

	/* First thing: the fault the parent would have predicted. */
	poke(r2 + next * pagesize, 1);

	/* The inherited fd would show the parent's page tables. */
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0)
		return 0x80;
	if (!pagemap_is_populated(fd, r2 + next * pagesize)) {
		ksft_print_msg("child: page %lu not populated\n", next);
		rc |= 0x1;
	}
	if (pagemap_is_populated(fd, r2 + (next + 1) * pagesize)) {
		ksft_print_msg("child: fault at page %lu also mapped page %lu: %s\n",
			       next, next + 1, "prediction inherited");
		rc |= 0x2;
	}
	close(fd);

	bad = fork_check(r1, r1_pages, 'A');
	if (bad) {
		ksft_print_msg("child: %lu pages do not show pattern A\n", bad);
		rc |= 0x4;
	}
	fork_fill(r1, r1_pages, 'B');
	bad = fork_check(r1, r1_pages, 'B');
	if (bad) {
		ksft_print_msg("child: %lu pages do not show pattern B\n", bad);
		rc |= 0x8;
	}
	fflush(stdout);
	return rc;
}

static void test_fork(const char *name)
{
	const unsigned long r1_pages = 128, r2_pages = 64, r2_touch = 8;
	unsigned long next, n, bad;
	bool ok = true;
	char *r1, *r2;
	int status;
	pid_t pid;

	set_prefault(1, DEF_MAX_PAGES);
	r1 = map_region(r1_pages * pagesize);
	r2 = map_region(r2_pages * pagesize);
	fork_fill(r1, r1_pages, 'A');

	/*
	 * Write pages 0..7 of R2: the stream's prediction is the page after
	 * its last window, the first page not populated.
	 */
	reset_prediction();
	write_seq(r2, 0, r2_touch);
	next = first_unpopulated(r2, r2_touch, r2_pages);
	n = count_populated(r2, 0, r2_pages);
	if (n != next || next >= r2_pages - DEF_MAX_PAGES) {
		tmsg(name, "setup: %lu pages of R2 populated, pages 0..%lu in a run\n",
		     n, next - 1);
		ok = false;
	}

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid)
		_exit(fork_child(r1, r1_pages, r2, next));

	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_perror("waitpid");

	/*
	 * The parent kept its prediction: the page is a hit for it and maps
	 * a window, one run from that page.
	 */
	write_seq(r2, next, next + 1);
	n = count_populated(r2, next, r2_pages);
	if (n < 2 || first_unpopulated(r2, next, r2_pages) != next + n) {
		tmsg(name, "parent: fault at page %lu populated %lu pages, not a window\n",
		     next, n);
		ok = false;
	}

	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tmsg(name, "child failed: %s %d\n",
		     WIFEXITED(status) ? "exit status" : "signal",
		     WIFEXITED(status) ? WEXITSTATUS(status) :
					 WTERMSIG(status));
		ok = false;
	}
	bad = fork_check(r1, r1_pages, 'A');
	if (bad) {
		tmsg(name, "parent: %lu pages lost pattern A\n", bad);
		ok = false;
	}
	fork_fill(r1, r1_pages, 'C');
	bad = fork_check(r1, r1_pages, 'C');
	if (bad) {
		tmsg(name, "parent: %lu pages do not show pattern C\n", bad);
		ok = false;
	}
	unmap_region(r1, r1_pages * pagesize);
	unmap_region(r2, r2_pages * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 9. uffd_missing                                                           */
/* ------------------------------------------------------------------------ */

struct uffd_ctx {
	int uffd;
	int stop_fd;
	char *src;
	unsigned long count;
	unsigned long errors;
};

static void *uffd_handler(void *arg)
{
	struct uffd_ctx *ctx = arg;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = ctx->uffd, .events = POLLIN },
			{ .fd = ctx->stop_fd, .events = POLLIN },
		};
		struct uffdio_copy copy = { 0 };
		struct uffd_msg msg;
		ssize_t ret;

		if (poll(pfd, 2, 1000) < 0) {
			if (errno == EINTR)
				continue;
			ctx->errors++;
			break;
		}
		if (pfd[0].revents & POLLIN) {
			ret = read(ctx->uffd, &msg, sizeof(msg));
			if (ret < 0 && errno == EAGAIN)
				continue;
			if (ret != sizeof(msg) ||
			    msg.event != UFFD_EVENT_PAGEFAULT) {
				ctx->errors++;
				continue;
			}
			copy.dst = msg.arg.pagefault.address &
				   ~((uint64_t)pagesize - 1);
			copy.src = (uintptr_t)ctx->src;
			copy.len = pagesize;
			copy.mode = 0;
			if (ioctl(ctx->uffd, UFFDIO_COPY, &copy) &&
			    errno != EEXIST)
				ctx->errors++;
			ctx->count++;
			continue;
		}
		if (pfd[1].revents & POLLIN)
			break;
	}
	return NULL;
}

static void test_uffd_missing(const char *name)
{
	const unsigned long pages = 64;
	const size_t len = pages * pagesize;
	struct uffdio_api api = { .api = UFFD_API };
	struct uffd_ctx ctx = { 0 };
	unsigned long i, bad = 0;
	pthread_t thread;
	int pipefd[2];
	bool ok = true;
	int uffd, ret;
	char *p;

	uffd = syscall(__NR_userfaultfd,
		       O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (uffd < 0 && errno == EINVAL)
		uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0) {
		ksft_test_result_skip("%s: userfaultfd unavailable: %s\n",
				      name, strerror(errno));
		return;
	}
	if (ioctl(uffd, UFFDIO_API, &api)) {
		ksft_test_result_skip("%s: UFFDIO_API failed: %s\n",
				      name, strerror(errno));
		close(uffd);
		return;
	}

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	ret = uffd_register(uffd, p, len, true, false, false);
	if (ret) {
		ksft_test_result_skip("%s: UFFDIO_REGISTER failed: %s\n",
				      name, strerror(-ret));
		unmap_region(p, len);
		close(uffd);
		return;
	}
	ctx.src = mmap(NULL, pagesize, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ctx.src == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	memset(ctx.src, 0xab, pagesize);
	if (pipe(pipefd))
		ksft_exit_fail_perror("pipe");
	ctx.uffd = uffd;
	ctx.stop_fd = pipefd[0];
	if (pthread_create(&thread, NULL, uffd_handler, &ctx))
		ksft_exit_fail_msg("pthread_create failed\n");

	for (i = 0; i < pages; i++)
		poke(p + i * pagesize, (char)(i + 1));

	if (write(pipefd[1], "x", 1) != 1)
		ksft_exit_fail_perror("write");
	pthread_join(thread, NULL);

	/* Every page must come from UFFDIO_COPY, none from a prefault. */
	for (i = 0; i < pages; i++) {
		const unsigned char *q = (unsigned char *)p + i * pagesize;
		size_t j;

		if (q[0] != (unsigned char)(i + 1)) {
			bad++;
			continue;
		}
		for (j = 1; j < pagesize; j++)
			if (q[j] != 0xab)
				break;
		if (j != pagesize)
			bad++;
	}
	if (ctx.count != pages) {
		tmsg(name, "handler resolved %lu faults, expected %lu\n",
		     ctx.count, pages);
		ok = false;
	}
	if (ctx.errors) {
		tmsg(name, "handler saw %lu errors\n", ctx.errors);
		ok = false;
	}
	if (bad) {
		tmsg(name, "%lu pages not filled by UFFDIO_COPY\n", bad);
		ok = false;
	}
	uffd_unregister(uffd, p, len);
	close(pipefd[0]);
	close(pipefd[1]);
	close(uffd);
	munmap(ctx.src, pagesize);
	unmap_region(p, len);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 10. memcg                                                                 */
/* ------------------------------------------------------------------------ */

/* Returns NULL if cgroup2 with the memory controller is usable. */
static const char *cgroup_setup(void)
{
	char buf[512];
	struct statfs st;

	if (statfs(CGROUP_ROOT, &st)) {
		if (mkdir(CGROUP_ROOT, 0755) && errno != EEXIST)
			return "cannot create " CGROUP_ROOT;
		if (statfs(CGROUP_ROOT, &st))
			return "cannot statfs " CGROUP_ROOT;
	}
	if (st.f_type != CGROUP2_SUPER_MAGIC) {
		/* Do not hide a cgroup v1 (tmpfs) hierarchy. */
		if (st.f_type != SYSFS_MAGIC)
			return CGROUP_ROOT " holds something else than cgroup2";
		if (mount("none", CGROUP_ROOT, "cgroup2", 0, NULL))
			return "cannot mount cgroup2";
	}
	if (ap_read_file(CGROUP_ROOT "/cgroup.controllers", buf, sizeof(buf)))
		return "cannot read cgroup.controllers";
	if (!strstr(buf, "memory"))
		return "memory controller not available";
	if (ap_write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory"))
		return "cannot enable the memory controller";
	return NULL;
}

/* The cgroups removed but not yet freed, or -1. */
static long cgroup_dying(void)
{
	static const char key[] = "nr_dying_descendants ";
	char buf[1024], *s;

	if (ap_read_file(CGROUP_ROOT "/cgroup.stat", buf, sizeof(buf)))
		return -1;
	s = strstr(buf, key);
	return s ? strtol(s + strlen(key), NULL, 10) : -1;
}

/*
 * Remove CGROUP_LEAF and CGROUP_TEST, then wait (two seconds at most)
 * until they are freed: a memory cgroup going offline drains the per-cpu
 * charge stock of every CPU that held some of it, whatever that stock
 * holds by the time the drain runs, and so would take back the stock of a
 * cgroup created meanwhile (memcg_high and memcg_high_cpus depend on it).
 */
static void cgroup_remove(void)
{
	long dying = cgroup_dying();
	int i;

	for (i = 0; i < 200; i++) {
		if (rmdir(CGROUP_LEAF) && errno != ENOENT)
			goto retry;
		if (!rmdir(CGROUP_TEST) || errno == ENOENT)
			break;
retry:
		usleep(10000);
	}
	if (i == 200) {
		ksft_print_msg("cannot remove %s: %s\n", CGROUP_TEST,
			       strerror(errno));
		return;
	}
	for (i = 0; i < 200 && cgroup_dying() > dying; i++)
		usleep(10000);
	if (i == 200)
		ksft_print_msg("removed cgroups not freed after 2 s\n");
}

/* The value of @key in CGROUP_TEST's flat keyed file @file, or -1. */
static long memcg_key(const char *file, const char *key)
{
	char path[128], buf[8192], *s;
	size_t klen = strlen(key);

	snprintf(path, sizeof(path), CGROUP_TEST "/%s", file);
	if (ap_read_file(path, buf, sizeof(buf)))
		return -1;
	for (s = buf; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (!strncmp(s, key, klen) && s[klen] == ' ')
			return strtol(s + klen + 1, NULL, 10);
	return -1;
}

static long memcg_events(const char *key)
{
	return memcg_key("memory.events", key);
}

/*
 * Anonymous memory charged to CGROUP_TEST, in pages: memory.stat's "anon",
 * read after cpu.stat, whose read flushes the statistics of the whole
 * hierarchy (memory.stat alone may show them a flush batch late).
 */
static long memcg_anon_pages(void)
{
	char buf[1024];

	if (ap_read_file(CGROUP_TEST "/cpu.stat", buf, sizeof(buf)))
		return -1;
	return memcg_key("memory.stat", "anon") / (long)pagesize;
}

static long memcg_current(void)
{
	char buf[64];

	if (ap_read_file(CGROUP_TEST "/memory.current", buf, sizeof(buf)))
		ksft_exit_fail_perror("read memory.current");
	return strtol(buf, NULL, 10);
}

/* Child: join the cgroup @dir, or exit with status 2. */
static void join_cgroup(const char *dir)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(buf, sizeof(buf), "%d", getpid());
	if (ap_write_file(path, buf))
		_exit(2);
}

/*
 * A child that says on its end of @ready when it is ready and waits for a
 * byte on @go before it goes on; hs_fork() returns the parent's ends.
 */
struct hs_child {
	pid_t pid;
	int ready;
	int go;
};

/* Fork a child that runs @fn; wait until it is ready. */
static struct hs_child hs_fork(void (*fn)(int ready, int go),
			       const char *what)
{
	int ready[2], go[2];
	struct hs_child c;
	char b;

	if (pipe(ready) || pipe(go))
		ksft_exit_fail_perror("pipe");
	fflush(stdout);
	fflush(stderr);
	c.pid = fork();
	if (c.pid < 0)
		ksft_exit_fail_perror("fork");
	if (!c.pid) {
		close(ready[0]);
		close(go[1]);
		fn(ready[1], go[0]);
	}
	close(ready[1]);
	close(go[0]);
	c.ready = ready[0];
	c.go = go[1];
	if (read(c.ready, &b, 1) != 1)
		ksft_exit_fail_msg("%s: the child died before it was ready\n",
				   what);
	return c;
}

/* Close the parent's ends and reap the child; returns its wait status. */
static int hs_wait(struct hs_child *c)
{
	int status;

	close(c->go);
	close(c->ready);
	if (waitpid(c->pid, &status, 0) != c->pid)
		ksft_exit_fail_perror("waitpid");
	return status;
}

#define MC_LEN		(56 * SZ_1M)		/* the child's region */
/* Pages it writes: its last write is the first page of a 16-page window */
#define MC_WRITTEN	(MC_LEN / pagesize - 2 * DEF_MAX_PAGES + 1)
#define MC_SLACK	(DEF_MAX_PAGES / 2)	/* memory.max above them, pages */

/*
 * Child: join CGROUP_TEST, map MC_LEN bytes, say so on @ready, write the
 * first MC_WRITTEN pages when told on @go, then report on @ready how many
 * pages of the region are populated.
 */
static void memcg_child(int ready, int go)
{
	unsigned long n;
	size_t off;
	char c = 0;
	char *p;

	join_cgroup(CGROUP_TEST);
	close(pagemap_fd);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		_exit(3);
	p = map_region(MC_LEN);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(4);
	for (off = 0; off < MC_WRITTEN * pagesize; off += pagesize)
		poke(p + off, 1);
	n = count_populated(p, 0, MC_LEN / pagesize);
	if (write(ready, &n, sizeof(n)) != sizeof(n))
		_exit(5);
	_exit(0);
}

/*
 * A sequential writer whose memory cgroup's memory.max sits half a window
 * above what the write needs (its usage when it starts, the pages it
 * writes and their page tables), and whose region goes on for a window
 * past its last write in the same PMD, so that the last window the ramp
 * predicts would end 15 pages past it: with prefault on as off it is
 * never OOM-killed, never makes the cgroup reclaim at memory.max (no
 * "max" event: no speculative charge may wait for reclaim) and ends with
 * exactly the pages it wrote (no page mapped ahead is charged across the
 * limit).
 */
static void test_memcg(const char *name)
{
	const unsigned long pages = MC_WRITTEN;
	const unsigned long tables = MC_LEN / PMD_SZ + 3;
	const char *err;
	bool ok = true;
	int enable;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}

	for (enable = 1; enable >= 0; enable--) {
		long oom_kill, max_events, cur, n = -1;
		struct hs_child c;
		char buf[64];
		int status;

		set_prefault(enable, DEF_MAX_PAGES);
		cgroup_remove();
		if (mkdir(CGROUP_TEST, 0755))
			ksft_exit_fail_perror("mkdir " CGROUP_TEST);
		c = hs_fork(memcg_child, "memcg");
		cur = memcg_current();
		snprintf(buf, sizeof(buf), "%ld",
			 cur + (long)((pages + tables + MC_SLACK) * pagesize));
		if (ap_write_file(CGROUP_TEST "/memory.max", buf)) {
			hs_wait(&c);
			cgroup_remove();
			ksft_test_result_skip("%s: cannot set memory.max\n",
					      name);
			return;
		}
		if (write(c.go, "g", 1) != 1 ||
		    read(c.ready, &n, sizeof(n)) != sizeof(n))
			n = -1;
		status = hs_wait(&c);
		oom_kill = memcg_events("oom_kill");
		max_events = memcg_events("max");
		tmsg(name,
		     "anon_prefault=%d: %lu pages under memory.max = usage + %lu pages, populated %ld, oom_kill %ld, max events %ld\n",
		     enable, pages, pages + tables + MC_SLACK, n, oom_kill,
		     max_events);
		if (!WIFEXITED(status) || WEXITSTATUS(status) || oom_kill ||
		    max_events || n != (long)pages) {
			tmsg(name,
			     "anon_prefault=%d: child %s %d, expected exit status 0, %lu pages populated, no oom_kill and no max event\n",
			     enable, WIFEXITED(status) ? "exit status" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) :
						 WTERMSIG(status), pages);
			ok = false;
		}
		cgroup_remove();
	}
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

#define MH_PAGES	256	/* a writer's region */
#define MH_WRITTEN	24	/* pages it writes */
#define MH_SLACK	32	/* memory.high above memory.current, pages */
#define MH_TRIES	4	/* runs under the limit, at most */
#define MH_WRITERS	4	/* writers of memcg_high_cpus, at most */
#define MH_BATCH	64	/* the kernel's MEMCG_CHARGE_BATCH */
#define MH_ROOM		20	/* memory.high above usage, less MH_BATCH */

/* The CPU the next writer runs on; -1: the one it starts on. */
static int mh_cpu = -1;
/* The writer's region takes mTHP sizes and is advised MADV_SEQUENTIAL. */
static bool mh_seq_thp;

/* What a writer reports once it has written. */
struct mh_report {
	unsigned long populated;	/* pages of its region populated */
	long faults;			/* page faults its write took */
};

/*
 * Child: join the leaf cgroup, map the region, say so on @ready, write
 * MH_WRITTEN pages when told on @go, report on @ready how many pages of
 * the region are populated and how many faults the write took, and exit
 * on a byte or the end of @go. It stays on one CPU (mh_cpu): a memory
 * cgroup charges pages from a per-cpu stock refilled MH_BATCH pages at a
 * time, and a refill on another CPU would take the cgroup above
 * memory.high by itself.
 */
static void memcg_high_child(int ready, int go)
{
	struct mh_report rep;
	cpu_set_t cpus;
	char c = 0;
	char *p;

	CPU_ZERO(&cpus);
	CPU_SET(mh_cpu >= 0 ? mh_cpu : sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		_exit(6);
	join_cgroup(CGROUP_LEAF);
	close(pagemap_fd);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		_exit(3);
	p = map_region(MH_PAGES * pagesize);
	if (mh_seq_thp &&
	    (madvise(p, MH_PAGES * pagesize, MADV_HUGEPAGE) ||
	     madvise(p, MH_PAGES * pagesize, MADV_SEQUENTIAL)))
		_exit(7);
	reset_prediction();
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(4);
	rep.faults = minflt(RUSAGE_SELF);
	write_seq(p, 0, MH_WRITTEN);
	rep.faults = minflt(RUSAGE_SELF) - rep.faults;
	rep.populated = count_populated(p, 0, MH_PAGES);
	if (write(ready, &rep, sizeof(rep)) != sizeof(rep) ||
	    read(go, &c, 1) < 0)
		_exit(5);
	_exit(0);
}

struct mh_run {
	long populated;		/* pages of the region populated, or -1 */
	long anon;		/* pages memory.stat counts as anon, or -1 */
	long faults;		/* faults the write took */
	long high;		/* "high" events of CGROUP_TEST */
	bool moved;		/* memory.current moved during the write */
};

/* CGROUP_TEST with the memory controller for CGROUP_LEAF; prefault @enable. */
static void mh_cgroups(int enable)
{
	set_prefault(enable, DEF_MAX_PAGES);
	cgroup_remove();
	if (mkdir(CGROUP_TEST, 0755) ||
	    ap_write_file(CGROUP_TEST "/cgroup.subtree_control", "+memory") ||
	    mkdir(CGROUP_LEAF, 0755))
		ksft_exit_fail_perror("creating " CGROUP_LEAF);
}

/* memory.high of CGROUP_TEST @pages above its usage; returns the usage. */
static long mh_set_high(long pages)
{
	long cur = memcg_current();
	char buf[64];

	snprintf(buf, sizeof(buf), "%ld", cur + pages * (long)pagesize);
	if (ap_write_file(CGROUP_TEST "/memory.high", buf))
		ksft_exit_fail_msg("cannot set memory.high\n");
	return cur;
}

/*
 * One run of memcg_high: the writer in CGROUP_LEAF, memory.high of its
 * parent CGROUP_TEST MH_SLACK pages above memory.current when @limit is
 * set. Under the limit, memory.current is read again once the writer has
 * reported and before it exits: the writer's charges come out of the
 * stock its CPU holds for the leaf, so while no page is mapped ahead
 * memory.current stays where it was. It moves when that stock is drained
 * during the write (an offline of a cgroup removed earlier drains every
 * CPU that held a stock of it, whatever the stock holds when the work
 * runs); the refill after it takes up to 64 pages at once, above
 * memory.high, and counts "high" events that no charge of the run caused.
 */
static struct mh_run memcg_high_run(int enable, bool limit)
{
	struct mh_run r = { .populated = -1 };
	struct mh_report rep;
	struct hs_child c;
	long cur = 0;
	int status;

	mh_cgroups(enable);
	c = hs_fork(memcg_high_child, "memcg_high");
	if (limit)
		cur = mh_set_high(MH_SLACK);
	rep.populated = -1;
	r.anon = -1;
	if (write(c.go, "g", 1) == 1 &&
	    read(c.ready, &rep, sizeof(rep)) == sizeof(rep)) {
		r.moved = limit && memcg_current() != cur;
		/* The writer's pages are still mapped: all of them charged */
		r.anon = memcg_anon_pages();
	}
	status = hs_wait(&c);
	r.high = memcg_events("high");
	cgroup_remove();
	if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		r.populated = rep.populated;
		r.faults = rep.faults;
	}
	return r;
}

/*
 * A run under the limit, run again (MH_TRIES times at most) while
 * memory.current moved during it: such a run's "high" events say nothing
 * of prefault. Pages populated beyond those written end it at once.
 */
static struct mh_run memcg_high_limited(const char *name, int enable)
{
	struct mh_run r;
	int i;

	for (i = 0; i < MH_TRIES; i++) {
		r = memcg_high_run(enable, true);
		if (!r.moved || r.populated != MH_WRITTEN)
			break;
		tmsg(name,
		     "anon_prefault=%d: memory.current moved during the write (%ld high events); run again\n",
		     enable, r.high);
	}
	return r;
}

/*
 * A speculative charge that takes a memory cgroup or an ancestor above
 * memory.high schedules reclaim and throttling on the way back to user
 * space, whatever its gfp mask: with memory.high of the writer's parent
 * cgroup a few pages above its usage, no page is mapped ahead, so the
 * region holds exactly the pages written and the cgroup counts no more
 * "high" events than with prefault off; every page written takes its own
 * fault. Without the limit the same write maps its windows, with fewer
 * faults than pages (the check is not vacuous). In every run each page
 * populated is charged: memory.stat's "anon" of the cgroup counts at
 * least the pages populated, whether the fault or a window mapped them.
 */
static void test_memcg_high(const char *name)
{
	struct mh_run on, unlimited, off;
	const char *err;
	bool ok = true;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	on = memcg_high_limited(name, 1);
	unlimited = memcg_high_run(1, false);
	off = memcg_high_limited(name, 0);
	set_prefault(1, DEF_MAX_PAGES);
	tmsg(name,
	     "%d pages written: populated %ld with prefault under memory.high, %ld without the limit, %ld with prefault off; faults %ld, %ld, %ld; high events %ld, %ld, %ld; anon %ld, %ld, %ld pages\n",
	     MH_WRITTEN, on.populated, unlimited.populated, off.populated,
	     on.faults, unlimited.faults, off.faults,
	     on.high, unlimited.high, off.high,
	     on.anon, unlimited.anon, off.anon);
	/*
	 * Under the limit every page written took its own fault; without
	 * it some fault mapped a window (fewer faults than pages), which
	 * left at most max_pages - 1 pages past the last one written.
	 */
	if (on.populated != MH_WRITTEN || off.populated != MH_WRITTEN ||
	    on.faults != MH_WRITTEN || unlimited.faults >= MH_WRITTEN ||
	    unlimited.populated < MH_WRITTEN ||
	    unlimited.populated >= MH_WRITTEN + DEF_MAX_PAGES) {
		tmsg(name, "expected %d pages and faults, unlimited fewer faults, %d to %d pages\n",
		     MH_WRITTEN, MH_WRITTEN, MH_WRITTEN + DEF_MAX_PAGES - 1);
		ok = false;
	} else if (on.anon < on.populated || off.anon < off.populated ||
		   unlimited.anon < unlimited.populated) {
		tmsg(name, "populated pages not charged: memory.stat anon below them\n");
		ok = false;
	} else if (on.moved || off.moved) {
		tmsg(name, "memory.current moved during the write in %d runs with prefault %s\n",
		     MH_TRIES, on.moved && off.moved ? "on and off" :
		     on.moved ? "on" : "off");
		ok = false;
	} else if (on.high > off.high) {
		tmsg(name, "more high events with prefault (%ld) than without (%ld)\n",
		     on.high, off.high);
		ok = false;
	}
	ksft_test_result(ok, "%s\n", name);
}

/*
 * A 64 KiB "auto" folio is mostly mapped ahead of the access, so it is as
 * speculative as a window's pages: with memory.high of the writer's parent
 * cgroup a few pages above its usage, a writer in a region advised
 * MADV_SEQUENTIAL, whose stream the predictor gives a 64 KiB folio at its
 * first aligned hit (page 16), gets single pages instead, and the region
 * holds exactly the pages written, each charged. Without the limit the same
 * write gets the folio: more pages populated than written (the check is
 * not vacuous).
 */
static void test_memcg_high_auto(const char *name)
{
	struct mh_run on, unlimited;
	const char *err;
	bool ok = true;
	int ret;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	ret = ap_mthp_only(64, "auto");
	if (ret) {
		ksft_test_result_skip("%s: no 64 KiB mTHP (%s)\n", name,
				      strerror(-ret));
		return;
	}
	mh_seq_thp = true;
	on = memcg_high_limited(name, 1);
	unlimited = memcg_high_run(1, false);
	mh_seq_thp = false;
	ap_mthp_restore();
	set_prefault(1, DEF_MAX_PAGES);
	tmsg(name,
	     "64 KiB auto, %d pages written: populated %ld under memory.high, %ld without the limit; faults %ld, %ld; anon %ld, %ld pages\n",
	     MH_WRITTEN, on.populated, unlimited.populated, on.faults,
	     unlimited.faults, on.anon, unlimited.anon);
	if (on.populated != MH_WRITTEN || unlimited.populated <= MH_WRITTEN) {
		tmsg(name, "expected %d pages populated under the limit, more without it\n",
		     MH_WRITTEN);
		ok = false;
	} else if (on.anon < on.populated || unlimited.anon < unlimited.populated) {
		tmsg(name, "populated pages not charged: memory.stat anon below them\n");
		ok = false;
	}
	ksft_test_result(ok, "%s\n", name);
}

/*
 * One run of memcg_high_cpus: @nw writers, one on each CPU of @cpus, told to
 * write at once. Returns the pages they mapped ahead together (populated
 * less faults), or -1 if a writer failed; in @moved whether memory.current
 * moved meanwhile, in @high the "high" events of CGROUP_TEST.
 */
static long memcg_high_cpus_run(const char *name, int nw, const int *cpus,
				bool *moved, long *high)
{
	struct hs_child c[MH_WRITERS];
	struct mh_report rep;
	long cur, ahead = 0;
	int i, status;

	mh_cgroups(1);
	for (i = 0; i < nw; i++) {
		mh_cpu = cpus[i];
		c[i] = hs_fork(memcg_high_child, name);
	}
	mh_cpu = -1;
	cur = mh_set_high(MH_BATCH + MH_ROOM);
	for (i = 0; i < nw; i++)
		if (write(c[i].go, "g", 1) != 1)
			ahead = -1;
	for (i = 0; i < nw; i++) {
		if (read(c[i].ready, &rep, sizeof(rep)) != sizeof(rep) ||
		    rep.faults < 1 || rep.populated < MH_WRITTEN ||
		    rep.populated < (unsigned long)rep.faults) {
			tmsg(name, "writer %d on CPU %d reported nothing sound\n",
			     i, cpus[i]);
			ahead = -1;
		} else if (ahead >= 0) {
			ahead += rep.populated - rep.faults;
		}
	}
	*moved = memcg_current() != cur;
	/*
	 * A byte on @go each, not the end of the pipe: every writer holds the
	 * write ends of the pipes of the writers forked before it.
	 */
	for (i = 0; i < nw; i++)
		if (write(c[i].go, "x", 1) != 1)
			ahead = -1;
	for (i = 0; i < nw; i++) {
		status = hs_wait(&c[i]);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			ahead = -1;
	}
	*high = memcg_events("high");
	cgroup_remove();
	return ahead;
}

/*
 * Windows near memory.high take their charge as a fault does, from the
 * charge stock of their CPU: writers on several CPUs, in one cgroup whose
 * parent's memory.high is MH_BATCH + MH_ROOM pages above its usage, write
 * at once, each from a stock of the cgroup its CPU filled before the
 * write. There is a batch of room below memory.high, so windows are
 * mapped (fewer faults than pages populated), yet memory.current does not
 * move and the cgroup counts no "high" event: no page mapped ahead went
 * through the page counters. A window whose pages the stock does not hold
 * would need a batch, for which there is no room (MH_ROOM < MH_BATCH), so
 * it is not mapped; a run in which memory.current moved all the same (a
 * writer's own fault refilled its stock) is run again, MH_TRIES times at
 * most.
 */
static void test_memcg_high_cpus(const char *name)
{
	int cpus[MH_WRITERS], nw = 0, i, cpu;
	long ahead = -1, high = 0;
	bool moved = false;
	cpu_set_t mask;
	const char *err;
	bool ok = true;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	if (sched_getaffinity(0, sizeof(mask), &mask))
		ksft_exit_fail_perror("sched_getaffinity");
	for (cpu = 0; cpu < CPU_SETSIZE && nw < MH_WRITERS; cpu++)
		if (CPU_ISSET(cpu, &mask))
			cpus[nw++] = cpu;
	for (i = 0; i < MH_TRIES; i++) {
		ahead = memcg_high_cpus_run(name, nw, cpus, &moved, &high);
		tmsg(name,
		     "%d writers of %d pages each, memory.high %d pages above usage: %ld mapped ahead, %ld high events%s\n",
		     nw, MH_WRITTEN, MH_BATCH + MH_ROOM, ahead, high,
		     moved ? ", memory.current moved" : "");
		if (ahead < 0 || !moved)
			break;
	}
	set_prefault(1, DEF_MAX_PAGES);
	if (ahead < 0) {
		tmsg(name, "a writer failed\n");
		ok = false;
	} else if (moved) {
		tmsg(name, "memory.current moved in %d runs\n", MH_TRIES);
		ok = false;
	} else if (ahead == 0 || high) {
		tmsg(name, "expected pages mapped ahead and no high event\n");
		ok = false;
	}
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 11. threads                                                               */
/* ------------------------------------------------------------------------ */

#define THR_PAGES	1024
#define THR_ROUNDS	4

struct thr_arg {
	int id;
	char *p;
	bool same_pages;
	pthread_barrier_t *barrier;
	long faults;
};

static char thr_val(int t, unsigned long page, unsigned int j)
{
	return (char)(((t * 97 + page * 13 + j) % 255) + 1);
}

static void *thr_fn(void *arg)
{
	struct thr_arg *a = arg;
	unsigned long i, step = a->same_pages ? 1 : 2;
	unsigned long start = a->same_pages ? 0 : a->id;
	unsigned int off = a->same_pages ? a->id * 64 : 0;
	unsigned int j;
	long f0;

	pthread_barrier_wait(a->barrier);
	f0 = minflt(RUSAGE_THREAD);
	for (i = start; i < THR_PAGES; i += step) {
		char *q = a->p + i * pagesize + off;

		for (j = 0; j < 64; j++)
			poke(q + j, thr_val(a->id, i, j));
	}
	a->faults = minflt(RUSAGE_THREAD) - f0;
	return NULL;
}

static bool thr_run(char *p, bool same_pages, struct thr_arg *args)
{
	pthread_barrier_t barrier;
	pthread_t th[2];
	int t;

	if (pthread_barrier_init(&barrier, NULL, 2))
		ksft_exit_fail_msg("pthread_barrier_init failed\n");
	for (t = 0; t < 2; t++) {
		args[t] = (struct thr_arg){ .id = t, .p = p,
					    .same_pages = same_pages,
					    .barrier = &barrier };
		if (pthread_create(&th[t], NULL, thr_fn, &args[t]))
			ksft_exit_fail_msg("pthread_create failed\n");
	}
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&barrier);
	return true;
}

static unsigned long thr_verify(char *p, bool same_pages)
{
	unsigned long i, bad = 0;
	unsigned int j;
	int t;

	for (i = 0; i < THR_PAGES; i++) {
		const char *q = p + i * pagesize;
		size_t used = same_pages ? 128 : 64;
		bool good = true;

		for (j = 0; j < used; j++) {
			t = same_pages ? j / 64 : (int)(i & 1);
			if (q[j] != thr_val(t, i, j % 64))
				good = false;
		}
		if (!range_is_zero(q, used, pagesize))
			good = false;
		if (!good) {
			if (!bad)
				ksft_print_msg("first bad page %lu\n", i);
			bad++;
		}
	}
	return bad;
}

static void test_threads(const char *name)
{
	const size_t len = THR_PAGES * pagesize;
	struct thr_arg args[2];
	unsigned long bad, n;
	bool ok = true;
	int round, t;
	char *p;

	/* (a) interleaved pages: per-task predictions never hit. */
	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	thr_run(p, false, args);
	bad = thr_verify(p, false);
	if (bad) {
		tmsg(name, "interleaved: %lu pages with wrong content\n", bad);
		ok = false;
	}
	for (t = 0; t < 2; t++) {
		if (args[t].faults != THR_PAGES / 2) {
			tmsg(name, "interleaved: thread %d took %ld faults, expected %d\n",
			     t, args[t].faults, THR_PAGES / 2);
			ok = false;
		}
	}
	n = count_populated(p, 0, THR_PAGES);
	if (n != THR_PAGES) {
		tmsg(name, "interleaved: populated %lu, expected %d\n",
		     n, THR_PAGES);
		ok = false;
	}
	unmap_region(p, len);

	/* (b) both threads walk the same pages, writing different bytes. */
	for (round = 0; round < THR_ROUNDS; round++) {
		p = map_region(len);
		thr_run(p, true, args);
		bad = thr_verify(p, true);
		if (bad) {
			tmsg(name, "same pages, round %d: %lu pages with wrong content\n",
			     round, bad);
			ok = false;
		}
		unmap_region(p, len);
	}
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 12. sysctl_input                                                          */
/* ------------------------------------------------------------------------ */

static bool sysctl_reject(const char *name, const char *path, const char *in)
{
	char before[64], after[64];
	int ret;

	if (ap_read_file(path, before, sizeof(before))) {
		tmsg(name, "cannot read %s\n", path);
		return false;
	}
	ret = ap_write_file(path, in);
	if (ap_read_file(path, after, sizeof(after))) {
		tmsg(name, "cannot read %s\n", path);
		return false;
	}
	if (ret != -EINVAL || strcmp(before, after)) {
		tmsg(name,
		     "writing '%s' to %s: %s, value '%s' -> '%s'; expected EINVAL and no change\n",
		     in, path, ret ? strerror(-ret) : "success", before, after);
		return false;
	}
	return true;
}

static bool sysctl_accept(const char *name, const char *path, const char *in)
{
	char after[64];
	int ret;

	ret = ap_write_file(path, in);
	if (ret || ap_read_file(path, after, sizeof(after)) || strcmp(after, in)) {
		tmsg(name, "writing '%s' to %s: %s, read back '%s'\n", in, path,
		     ret ? strerror(-ret) : "success", ret ? "" : after);
		return false;
	}
	return true;
}

static void test_sysctl_input(const char *name)
{
	static const char * const bad_enable[] = { "-1", "2", "abc" };
	static const char * const bad_max[] = {
		"0", "32", "99999999999999999999"
	};
	bool ok = true;
	unsigned int i;

	if (!have_sysctl) {
		ksft_test_result_skip("%s: sysctls not present\n", name);
		return;
	}
	set_prefault(1, DEF_MAX_PAGES);
	for (i = 0; i < ARRAY_SIZE(bad_enable); i++)
		ok &= sysctl_reject(name, SYSCTL_ENABLE, bad_enable[i]);
	for (i = 0; i < ARRAY_SIZE(bad_max); i++)
		ok &= sysctl_reject(name, SYSCTL_MAX_PAGES, bad_max[i]);
	ok &= sysctl_accept(name, SYSCTL_ENABLE, "0");
	ok &= sysctl_accept(name, SYSCTL_ENABLE, "1");
	ok &= sysctl_accept(name, SYSCTL_MAX_PAGES, "1");
	ok &= sysctl_accept(name, SYSCTL_MAX_PAGES, "31");
	/* Rejections must also leave a non-default value alone. */
	ok &= sysctl_reject(name, SYSCTL_MAX_PAGES, "32");
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 13. vmstat                                                                */
/* ------------------------------------------------------------------------ */

struct ap_vmstat {
	long fault, page, fallback;
};

static char vmstat_buf[32768];

/* Returns false if a counter is missing. */
static bool read_vmstat(struct ap_vmstat *v)
{
	ssize_t ret, len = 0;
	char *s;
	int fd;

	v->fault = -1;
	v->page = -1;
	v->fallback = -1;
	fd = open("/proc/vmstat", O_RDONLY);
	if (fd < 0)
		ksft_exit_fail_perror("open /proc/vmstat");
	while ((ret = read(fd, vmstat_buf + len,
			   sizeof(vmstat_buf) - 1 - len)) > 0)
		len += ret;
	close(fd);
	vmstat_buf[len] = '\0';
	for (s = vmstat_buf; *s; ) {
		char key[64];
		long val;

		if (sscanf(s, "%63s %ld", key, &val) == 2) {
			if (!strcmp(key, "anon_prefault_fault"))
				v->fault = val;
			else if (!strcmp(key, "anon_prefault_page"))
				v->page = val;
			else if (!strcmp(key, "anon_prefault_fallback"))
				v->fallback = val;
		}
		s = strchr(s, '\n');
		if (!s)
			break;
		s++;
	}
	return v->fault >= 0 && v->page >= 0 && v->fallback >= 0;
}

static void test_vmstat(const char *name)
{
	const unsigned long pages = PMD_SZ / pagesize;
	struct ap_vmstat v0, v1;
	long faults, dfault, dpage, dfallback;
	struct fault_obs o;
	bool ok = true;
	char *p;

	if (!read_vmstat(&v0)) {
		ksft_test_result_fail("%s: %s missing from /proc/vmstat\n", name,
				      "anon_prefault_{fault,page,fallback}");
		return;
	}

	/*
	 * Prefault on: one 512-page PMD written sequentially, one page at a
	 * time, each fault's pages seen in pagemap. Exact in a quiet system:
	 * nothing else in the guest takes anonymous faults meanwhile. The
	 * counters count what the faults did: the faults that populated more
	 * than their own page and the pages they populated beyond it.
	 */
	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);
	read_vmstat(&v0);
	o = write_observed(p, pages, 0, pages);
	read_vmstat(&v1);
	dfault = v1.fault - v0.fault;
	dpage = v1.page - v0.page;
	dfallback = v1.fallback - v0.fallback;
	tmsg(name,
	     "on: faults %ld (%lu mapped a window, %lu pages ahead, at most %lu pages), anon_prefault_fault +%ld, anon_prefault_page +%ld, anon_prefault_fallback +%ld\n",
	     o.faults, o.multi, o.ahead, o.widest, dfault, dpage, dfallback);
	ok &= stream_faults_ok(name, "on", o.faults, pages, DEF_MAX_PAGES, 0,
			       false);
	if (dfault != (long)o.multi || dpage != (long)o.ahead || dfallback ||
	    o.faults + o.ahead != pages || o.widest > DEF_MAX_PAGES) {
		tmsg(name,
		     "on: anon_prefault_fault, _page, _fallback deltas %ld, %ld, %ld; expected %lu, %lu, 0, every page once and windows of at most %d pages\n",
		     dfault, dpage, dfallback, o.multi, o.ahead,
		     DEF_MAX_PAGES);
		ok = false;
	}
	unmap_region(p, pages * pagesize);

	/*
	 * A page someone else populated ends a window, but nothing was short:
	 * not a fallback. Page 40 is written first, then pages 0..39; the
	 * windows do not map page 40 again nor go past it.
	 */
	reset_prediction();
	p = map_region(pages * pagesize);
	poke(p + 40 * pagesize, 1);
	reset_prediction();
	read_vmstat(&v0);
	o = write_observed(p, pages, 0, 40);
	read_vmstat(&v1);
	dfallback = v1.fallback - v0.fallback;
	dpage = v1.page - v0.page;
	if (count_populated(p, 0, pages) != 41 || dfallback ||
	    dpage != (long)o.ahead || o.faults + o.ahead != 40) {
		tmsg(name,
		     "populated page 40 in the way: %lu pages populated, %ld faults, anon_prefault_page +%ld, anon_prefault_fallback +%ld; expected 41, %lu and 0\n",
		     count_populated(p, 0, pages), o.faults, dpage, dfallback,
		     40 - o.faults);
		ok = false;
	}
	unmap_region(p, pages * pagesize);

	/* Prefault off: no counter moves. */
	set_prefault(0, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);
	read_vmstat(&v0);
	faults = write_seq(p, 0, pages);
	read_vmstat(&v1);
	dfault = v1.fault - v0.fault;
	dpage = v1.page - v0.page;
	if (faults != (long)pages || dfault || dpage) {
		tmsg(name,
		     "off: faults %ld, anon_prefault_fault +%ld, anon_prefault_page +%ld, expected %lu, 0, 0\n",
		     faults, dfault, dpage, pages);
		ok = false;
	}
	unmap_region(p, pages * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 14. mlock_populate                                                        */
/* ------------------------------------------------------------------------ */

static void test_mlock_populate(const char *name)
{
	const unsigned long pages = 256, touched = 100;
	const size_t len = pages * pagesize;
	unsigned long n, rss0, rss1;
	long faults[2];
	bool ok = true;
	int enable;
	char *p;

	/* (a) mlock() populates everything: writes take no fault. */
	for (enable = 1; enable >= 0; enable--) {
		set_prefault(enable, DEF_MAX_PAGES);
		p = map_region(len);
		if (mlock(p, len)) {
			ksft_test_result_skip("%s: mlock: %s\n", name,
					      strerror(errno));
			unmap_region(p, len);
			set_prefault(1, DEF_MAX_PAGES);
			return;
		}
		n = count_populated(p, 0, pages);
		faults[enable] = write_seq(p, 0, pages);
		if (n != pages || faults[enable]) {
			tmsg(name,
			     "mlock, anon_prefault=%d: populated %lu, faults %ld, expected %lu and 0\n",
			     enable, n, faults[enable], pages);
			ok = false;
		}
		munlock(p, len);
		unmap_region(p, len);
	}
	if (faults[0] != faults[1]) {
		tmsg(name, "mlock: faults %ld with prefault, %ld without\n",
		     faults[1], faults[0]);
		ok = false;
	}

	/* (b) MAP_POPULATE: no fault on write, RSS exactly the region. */
	for (enable = 1; enable >= 0; enable--) {
		char *q;

		set_prefault(enable, DEF_MAX_PAGES);
		/* Reserve an aligned, guarded slot; 1 MiB can't hold a THP. */
		p = map_region(len);
		rss0 = region_anon_kb(p);
		q = mmap(p, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_POPULATE,
			 -1, 0);
		if (q != p)
			ksft_exit_fail_perror("mmap MAP_POPULATE");
		faults[enable] = write_seq(p, 0, pages);
		rss1 = region_anon_kb(p);
		if (faults[enable] || rss1 - rss0 != len / 1024) {
			tmsg(name,
			     "MAP_POPULATE, anon_prefault=%d: faults %ld, Anonymous +%lu kB, expected 0 and %zu kB\n",
			     enable, faults[enable], rss1 - rss0, len / 1024);
			ok = false;
		}
		unmap_region(p, len);
	}

	/* (c) MLOCK_ONFAULT: locked VMA, no prefault past the touched pages. */
	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	if (syscall(__NR_mlock2, p, len, MLOCK_ONFAULT)) {
		tmsg(name, "mlock2(MLOCK_ONFAULT): %s\n", strerror(errno));
		ok = false;
	} else {
		faults[0] = write_seq(p, 0, touched);
		n = count_populated(p, 0, pages);
		if (faults[0] != (long)touched || n != touched ||
		    count_populated(p, 0, touched) != touched) {
			tmsg(name,
			     "MLOCK_ONFAULT: faults %ld, populated %lu, expected %lu and %lu (pages 0..%lu)\n",
			     faults[0], n, touched, touched, touched - 1);
			ok = false;
		}
		munlock(p, len);
	}
	unmap_region(p, len);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 15. waste_bound                                                           */
/* ------------------------------------------------------------------------ */

/*
 * A stream that stops anywhere leaves at most max_pages - 1 pages mapped
 * and never touched, in its last window: write pages [0, n) of a fresh
 * region for every n up to several full windows, so that the stream stops
 * at every offset of a window of every size of the ramp, and count the
 * populated pages after the last written one (pagemap). They must be one
 * run from the page after it, never more than max_pages - 1 nor than the
 * pages written, and some stream must leave some (the test is not
 * vacuous).
 */
static void test_waste_bound(const char *name)
{
	static const unsigned int caps[] = { DEF_MAX_PAGES, 31 };
	const unsigned long pages = 256;
	unsigned long n, pop, inside, waste;
	bool ok = true;
	unsigned int k;
	char *p;

	for (k = 0; k < ARRAY_SIZE(caps); k++) {
		unsigned long worst = 0, stops = 0;

		set_prefault(1, caps[k]);
		for (n = 1; n <= 5 * caps[k]; n++) {
			reset_prediction();
			p = map_region(pages * pagesize);
			write_seq(p, 0, n);
			pop = count_populated(p, 0, pages);
			inside = count_populated(p, 0, n);
			waste = pop - inside;
			if (inside != n || waste + 1 > caps[k] || waste > n ||
			    first_unpopulated(p, n, pages) != n + waste) {
				if (ok)
					tmsg(name,
					     "max_pages %u, stream of %lu pages: %lu populated, expected %lu to %lu in a run\n",
					     caps[k], n, pop, n,
					     n + (n < caps[k] ? n : caps[k] - 1));
				ok = false;
			}
			if (waste > worst)
				worst = waste;
			stops++;
			unmap_region(p, pages * pagesize);
		}
		tmsg(name,
		     "max_pages %u: %lu stops, at most %lu pages mapped past the last one written\n",
		     caps[k], stops, worst);
		if (!worst) {
			tmsg(name, "max_pages %u: no stream mapped ahead\n",
			     caps[k]);
			ok = false;
		}
	}
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 16. accounting                                                            */
/* ------------------------------------------------------------------------ */

#define ACCT_LEN	(64 * SZ_1M)

/* The counters of /proc/meminfo and memory.stat that the test compares. */
struct acct {
	long anon, inactive_file, file, available;	/* meminfo, kB */
	long pcp;			/* per-cpu free lists, kB (zoneinfo) */
	long cg_anon, cg_inactive_file, cg_file;	/* memory.stat, kB */
};

/*
 * Free pages on the per-cpu lists of every zone, in kB. MemAvailable counts
 * only the buddy allocator's free pages, so a page taken from a per-cpu
 * list, where the pages earlier tests freed may wait, does not lower it.
 */
static long pcp_free_kb(void)
{
	char line[256];
	long n = 0, c;
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/zoneinfo");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " count: %ld", &c) == 1)
			n += c;
	fclose(f);
	return n * (pagesize / 1024);
}

/* The value of the "@key" line of @buf ("key: N" or "key N"), or -1. */
static long stat_field(const char *buf, const char *key)
{
	size_t klen = strlen(key);
	const char *s;

	for (s = buf; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (!strncmp(s, key, klen) && (s[klen] == ':' || s[klen] == ' '))
			return strtol(s + klen + 1, NULL, 10);
	return -1;
}

/*
 * Read the counters, after folding every CPU's pending vmstat deltas
 * (vm.stat_refresh), so that they are exact.
 */
/*
 * memory.stat of CGROUP_TEST, exact. Reading memory.stat flushes the
 * per-cpu counters only when more than a batch per CPU is pending, so up
 * to 64 pages per CPU could be missing from it; reading cpu.stat flushes
 * all of the cgroup's per-cpu statistics, memcg's included.
 */
static void read_cg_acct(struct acct *a)
{
	static char buf[16384];

	if (ap_read_file(CGROUP_TEST "/cpu.stat", buf, sizeof(buf)))
		ksft_exit_fail_perror("read " CGROUP_TEST "/cpu.stat");
	if (ap_read_file(CGROUP_TEST "/memory.stat", buf, sizeof(buf)))
		ksft_exit_fail_perror("read " CGROUP_TEST "/memory.stat");
	a->cg_anon = stat_field(buf, "anon") / 1024;
	a->cg_inactive_file = stat_field(buf, "inactive_file") / 1024;
	a->cg_file = stat_field(buf, "file") / 1024;
}

/*
 * The counters, with /proc/meminfo read between two reads of the per-cpu
 * lists that agree: the vmstat worker returns pages from the per-cpu lists
 * to the buddy allocator as their high mark decays, and a return between
 * the two files would count its pages in neither.
 */
static void read_acct(struct acct *a)
{
	static char buf[16384];
	long pcp;
	int ret, i;

	ret = ap_write_file("/proc/sys/vm/stat_refresh", "1");
	if (ret)
		ksft_exit_fail_msg("vm.stat_refresh: %s\n", strerror(-ret));
	for (i = 0; i < 10; i++) {
		pcp = pcp_free_kb();
		if (ap_read_file("/proc/meminfo", buf, sizeof(buf)))
			ksft_exit_fail_perror("read /proc/meminfo");
		a->pcp = pcp_free_kb();
		if (a->pcp == pcp)
			break;
	}
	if (i == 10)
		ksft_exit_fail_msg("the per-cpu free lists never held still\n");
	a->anon = stat_field(buf, "AnonPages");
	a->inactive_file = stat_field(buf, "Inactive(file)");
	a->file = a->inactive_file + stat_field(buf, "Active(file)");
	a->available = stat_field(buf, "MemAvailable");
	read_cg_acct(a);
}

/*
 * Child: join the test cgroup, map ACCT_LEN bytes, say so on @ready, write
 * them sequentially when told on @go, say so on @ready and wait for @go to
 * close before exiting, so that the parent can read the counters while the
 * pages are mapped.
 */
static void acct_child(int ready, int go)
{
	char *p, c = 0;
	size_t off;

	join_cgroup(CGROUP_TEST);
	p = map_region(ACCT_LEN);
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(3);
	for (off = 0; off < ACCT_LEN; off += pagesize)
		poke(p + off, 1);
	if (write(ready, &c, 1) != 1)
		_exit(4);
	while (read(go, &c, 1) > 0)
		;
	_exit(0);
}

/*
 * Pages mapped ahead are ordinary anonymous memory in every counter: a
 * 64 MiB sequential write grows AnonPages and the memory cgroup's anon by
 * the same amount with prefault on as off (to within one window), moves
 * no file LRU counter, and lowers MemAvailable as much (counting the free
 * pages of the per-cpu lists as available too, since the allocations
 * drain them first).
 */
static void test_accounting(const char *name)
{
	const long win_kb = DEF_MAX_PAGES * pagesize / 1024;
	const long len_kb = ACCT_LEN / 1024;
	struct acct d[2];
	const char *err;
	bool ok = true;
	int enable;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	for (enable = 1; enable >= 0; enable--) {
		struct acct a0, a1;
		struct hs_child c;
		int status;
		char b;

		set_prefault(enable, DEF_MAX_PAGES);
		cgroup_remove();
		if (mkdir(CGROUP_TEST, 0755))
			ksft_exit_fail_perror("mkdir " CGROUP_TEST);
		c = hs_fork(acct_child, "accounting");
		read_acct(&a0);
		if (write(c.go, "g", 1) != 1 || read(c.ready, &b, 1) != 1)
			ksft_exit_fail_msg("accounting child died while writing\n");
		read_acct(&a1);
		status = hs_wait(&c);
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			tmsg(name, "anon_prefault=%d: child status %#x\n",
			     enable, status);
			ok = false;
		}
		cgroup_remove();
		d[enable].anon = a1.anon - a0.anon;
		d[enable].inactive_file = a1.inactive_file - a0.inactive_file;
		d[enable].file = a1.file - a0.file;
		/* Free pages taken from per-cpu lists are gone too. */
		d[enable].available = a1.available - a0.available +
				      a1.pcp - a0.pcp;
		d[enable].cg_anon = a1.cg_anon - a0.cg_anon;
		d[enable].cg_inactive_file = a1.cg_inactive_file -
					     a0.cg_inactive_file;
		d[enable].cg_file = a1.cg_file - a0.cg_file;
		tmsg(name,
		     "anon_prefault=%d, %ld kB written: AnonPages %+ld kB, Inactive(file) %+ld kB, file LRU %+ld kB, MemAvailable (with per-cpu free lists) %+ld kB; memcg anon %+ld kB, inactive_file %+ld kB, file %+ld kB\n",
		     enable, len_kb, d[enable].anon, d[enable].inactive_file,
		     d[enable].file, d[enable].available, d[enable].cg_anon,
		     d[enable].cg_inactive_file, d[enable].cg_file);
	}
	set_prefault(1, DEF_MAX_PAGES);

	/* The cgroup's anon is the child's: exactly the region, +- a window. */
	for (enable = 1; enable >= 0; enable--) {
		if (labs(d[enable].cg_anon - len_kb) > win_kb) {
			tmsg(name, "anon_prefault=%d: memcg anon %+ld kB, expected %ld kB +- %ld\n",
			     enable, d[enable].cg_anon, len_kb, win_kb);
			ok = false;
		}
	}
	if (labs(d[1].anon - d[0].anon) > win_kb) {
		tmsg(name,
		     "AnonPages grew by %ld kB with prefault, %ld kB without: more than one window apart\n",
		     d[1].anon, d[0].anon);
		ok = false;
	}
	if (d[1].inactive_file >= 1024 || d[1].file >= 1024 ||
	    d[1].cg_inactive_file >= 1024 || d[1].cg_file >= 1024) {
		tmsg(name,
		     "the file LRU grew with prefault (Inactive(file) %+ld kB, file %+ld kB, memcg %+ld and %+ld kB), expected < 1024 kB\n",
		     d[1].inactive_file, d[1].file, d[1].cg_inactive_file,
		     d[1].cg_file);
		ok = false;
	}
	if (d[0].available >= 0 || -d[1].available < -d[0].available * 9 / 10) {
		tmsg(name,
		     "MemAvailable %+ld kB with prefault, %+ld kB without: expected a fall of at least 90%% as much\n",
		     d[1].available, d[0].available);
		ok = false;
	}
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 17. reclaim_pageout, 18. reclaim_memcg                                    */
/* ------------------------------------------------------------------------ */

/*
 * Data must survive reclaim of pages mapped ahead whatever wrote it: a CPU
 * store, read() from a pipe, pread() from a file, process_vm_writev() from
 * another process, and a device writing through an io_uring fixed buffer
 * (pinned by pin_user_pages(), filled by an O_DIRECT read from a RAM disk,
 * unpinned without a store through the page tables). Each path fills a
 * fresh region of RP_PAGES pages whose first RP_INIT pages the program
 * initialised itself first, so that faults mapped pages after them ahead.
 * Swap on a RAM disk (AP_SWAP_DEV) lets reclaim move written anonymous
 * pages out and back; the O_DIRECT source is AP_DIO_DEV.
 */
#define AP_DIO_DEV	"/dev/ram1"
#define RP_PAGES	(PMD_SZ / pagesize)
#define RP_LEN		PMD_SZ
#define RP_INIT		10
#define RP_WORD(tag, page, w) \
	((uint64_t)(tag) << 56 | (uint64_t)(page) << 16 | (uint64_t)(w))

enum rp_path { RP_STORE, RP_READ, RP_PREAD, RP_VM_WRITEV, RP_IO_URING,
	       NR_RP_PATHS };

static const char * const rp_names[NR_RP_PATHS] = {
	"store", "read", "pread", "process_vm_writev", "io_uring",
};

/* Fill @pages pages at @p with the pattern of @tag. */
static void rp_fill(char *p, unsigned long pages, unsigned int tag)
{
	const unsigned long words = pagesize / sizeof(uint64_t);
	unsigned long i, w;

	for (i = 0; i < pages; i++)
		for (w = 0; w < words; w++)
			((uint64_t *)(p + i * pagesize))[w] =
				RP_WORD(tag, i, w);
}

/* Pages of the region at @p that do not hold the pattern of @tag. */
static unsigned long rp_bad_pages(const char *name, const char *what,
				  char *p, unsigned int tag)
{
	const unsigned long words = pagesize / sizeof(uint64_t);
	unsigned long i, w, bad = 0;

	for (i = 0; i < RP_PAGES; i++) {
		const uint64_t *q = (const uint64_t *)(p + i * pagesize);

		for (w = 0; w < words; w++)
			if (q[w] != RP_WORD(tag, i, w))
				break;
		if (w == words)
			continue;
		if (!bad)
			tmsg(name, "%s: page %lu word %lu is %#llx, expected %#llx\n",
			     what, i, w, (unsigned long long)q[w],
			     (unsigned long long)RP_WORD(tag, i, w));
		bad++;
	}
	return bad;
}

/*
 * The program initialises the first RP_INIT pages of the fresh region at
 * @p; returns how many pages after them its faults mapped ahead, which
 * rp_ahead_ok() bounds.
 */
static unsigned long rp_prepare(char *p)
{
	reset_prediction();
	rp_fill(p, RP_INIT, 0xa0);
	return count_populated(p, RP_INIT, RP_PAGES);
}

/*
 * rp_prepare() mapped @n pages ahead: none with prefault off, else at
 * least one (the writers' paths then meet pages mapped ahead), at most
 * max_pages - 1.
 */
static bool rp_ahead_ok(int enable, unsigned long n)
{
	return enable ? n && n < DEF_MAX_PAGES : !n;
}

/* A child writes RP_LEN bytes of @src to the pipe that read() empties. */
static int rp_read(char *p, const char *src)
{
	size_t done = 0;
	int fds[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(fds))
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(fds[0]);
		while (done < RP_LEN) {
			n = write(fds[1], src + done, RP_LEN - done);
			if (n <= 0)
				_exit(1);
			done += n;
		}
		_exit(0);
	}
	close(fds[1]);
	while (done < RP_LEN) {
		n = read(fds[0], p + done, RP_LEN - done);
		if (n <= 0)
			break;
		done += n;
	}
	close(fds[0]);
	if (waitpid(pid, &status, 0) != pid || status || done != RP_LEN)
		return -1;
	return 0;
}

static int rp_pread(char *p, const char *src)
{
	int fd, ret = -1;

	fd = memfd_create("anon_prefault", 0);
	if (fd < 0)
		return -1;
	if (pwrite(fd, src, RP_LEN, 0) == (ssize_t)RP_LEN &&
	    pread(fd, p, RP_LEN, 0) == (ssize_t)RP_LEN)
		ret = 0;
	close(fd);
	return ret;
}

/* Another process writes @src into this one's region at @p. */
static int rp_vm_writev(char *p, const char *src)
{
	struct iovec local = { (void *)src, RP_LEN }, remote = { p, RP_LEN };
	pid_t parent = getpid(), pid;
	int status;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid)
		_exit(process_vm_writev(parent, &local, 1, &remote, 1, 0) !=
		      (ssize_t)RP_LEN);
	if (waitpid(pid, &status, 0) != pid || status)
		return -1;
	return 0;
}

static int uring_setup(unsigned int entries, struct io_uring_params *par)
{
	return syscall(__NR_io_uring_setup, entries, par);
}

static int uring_enter(int fd, unsigned int submit, unsigned int wait)
{
	return syscall(__NR_io_uring_enter, fd, submit, wait,
		       IORING_ENTER_GETEVENTS, NULL, 0);
}

static int uring_register(int fd, unsigned int op, void *arg,
			  unsigned int nr)
{
	return syscall(__NR_io_uring_register, fd, op, arg, nr);
}

/*
 * A ring of one entry with the region at @p registered as its fixed
 * buffer: every page of it is pinned with FOLL_LONGTERM (faulted in first
 * where it is not present). Returns the ring, whose close() unpins them,
 * and its parameters in @par, or -1.
 */
static int uring_pin(char *p, size_t len, struct io_uring_params *par)
{
	struct iovec iov = { p, len };
	int ring;

	memset(par, 0, sizeof(*par));
	ring = uring_setup(1, par);
	if (ring < 0)
		return -1;
	if (uring_register(ring, IORING_REGISTER_BUFFERS, &iov, 1)) {
		close(ring);
		return -1;
	}
	return ring;
}

/*
 * Register the region as an io_uring fixed buffer, read RP_LEN bytes of
 * @src into it from AP_DIO_DEV with O_DIRECT (IORING_OP_READ_FIXED), and
 * unregister it. The device writes the pages through the pin: no store
 * through the page tables dirties their PTEs.
 */
static int rp_io_uring(char *p, const char *src)
{
	struct io_uring_params par;
	size_t sq_len, cq_len, sqe_len;
	char *sq = MAP_FAILED, *cq = MAP_FAILED;
	struct io_uring_sqe *sqe = MAP_FAILED;
	struct io_uring_cqe *cqe;
	int ring = -1, dev, ret = -1;
	unsigned int tail, head;

	dev = open(AP_DIO_DEV, O_RDWR);
	if (dev < 0)
		return -1;
	if (pwrite(dev, src, RP_LEN, 0) != (ssize_t)RP_LEN || fsync(dev))
		goto out;
	close(dev);
	dev = open(AP_DIO_DEV, O_RDONLY | O_DIRECT);
	if (dev < 0)
		return -1;
	ring = uring_pin(p, RP_LEN, &par);
	if (ring < 0)
		goto out;
	sq_len = par.sq_off.array + par.sq_entries * sizeof(unsigned int);
	cq_len = par.cq_off.cqes + par.cq_entries * sizeof(*cqe);
	sqe_len = par.sq_entries * sizeof(*sqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		  IORING_OFF_CQ_RING);
	sqe = mmap(NULL, sqe_len, PROT_READ | PROT_WRITE, MAP_SHARED, ring,
		   IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqe == MAP_FAILED)
		goto unregister;
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ_FIXED;
	sqe->fd = dev;
	sqe->addr = (unsigned long)p;
	sqe->len = RP_LEN;
	sqe->buf_index = 0;
	tail = *(unsigned int *)(sq + par.sq_off.tail);
	((unsigned int *)(sq + par.sq_off.array))
		[tail & *(unsigned int *)(sq + par.sq_off.ring_mask)] = 0;
	__atomic_store_n((unsigned int *)(sq + par.sq_off.tail), tail + 1,
			 __ATOMIC_RELEASE);
	if (uring_enter(ring, 1, 1) != 1)
		goto unregister;
	head = __atomic_load_n((unsigned int *)(cq + par.cq_off.head),
			       __ATOMIC_ACQUIRE);
	if (head == __atomic_load_n((unsigned int *)(cq + par.cq_off.tail),
				    __ATOMIC_ACQUIRE))
		goto unregister;
	cqe = (struct io_uring_cqe *)(cq + par.cq_off.cqes) +
	      (head & *(unsigned int *)(cq + par.cq_off.ring_mask));
	if (cqe->res == (int)RP_LEN)
		ret = 0;
	else
		errno = cqe->res < 0 ? -cqe->res : EIO;
	__atomic_store_n((unsigned int *)(cq + par.cq_off.head), head + 1,
			 __ATOMIC_RELEASE);
unregister:
	if (uring_register(ring, IORING_UNREGISTER_BUFFERS, NULL, 0))
		ret = -1;
out:
	if (sqe != MAP_FAILED)
		munmap(sqe, sqe_len);
	if (cq != MAP_FAILED)
		munmap(cq, cq_len);
	if (sq != MAP_FAILED)
		munmap(sq, sq_len);
	if (ring >= 0)
		close(ring);
	close(dev);
	return ret;
}

/* Write the pattern of @tag into the region at @p by @path. */
static int rp_write(enum rp_path path, char *p, unsigned int tag)
{
	static char *src;
	int ret;

	if (path == RP_STORE) {
		rp_fill(p, RP_PAGES, tag);
		return 0;
	}
	if (!src) {
		src = mmap(NULL, RP_LEN, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (src == MAP_FAILED)
			ksft_exit_fail_perror("mmap");
	}
	rp_fill(src, RP_PAGES, tag);
	switch (path) {
	case RP_READ:
		ret = rp_read(p, src);
		break;
	case RP_PREAD:
		ret = rp_pread(p, src);
		break;
	case RP_VM_WRITEV:
		ret = rp_vm_writev(p, src);
		break;
	default:
		ret = rp_io_uring(p, src);
		break;
	}
	return ret;
}

/* Pages of the region at @p that are in swap now. */
static unsigned long rp_swapped(char *p)
{
	unsigned long i, n = 0;

	for (i = 0; i < RP_PAGES; i++)
		n += pagemap_is_swapped(pagemap_fd, p + i * pagesize);
	return n;
}

/*
 * The reclaim tests need swap (on the RAM disk AP_SWAP_DEV unless swap is
 * active already) and the RAM disk AP_DIO_DEV. False, with the test
 * reported as skipped, if they cannot be had.
 */
static bool rp_usable(const char *name)
{
	const char *why = "";
	int ret;

	if (access(AP_DIO_DEV, R_OK | W_OK)) {
		ksft_test_result_skip("%s: %s: %s\n", name, AP_DIO_DEV,
				      strerror(errno));
		return false;
	}
	ret = ap_swap_on(AP_SWAP_DEV, &why);
	if (ret) {
		ksft_test_result_skip("%s: needs swap: %s: %s\n", name, why,
				      strerror(-ret));
		return false;
	}
	return true;
}

/*
 * MADV_PAGEOUT: every page of the region, those mapped ahead included, goes
 * to swap (pagemap says so before anything touches them again) and comes
 * back with the data the path wrote, prefault on and off. The test runs on
 * one CPU, whose per-CPU LRU batches MADV_PAGEOUT drains, so that no page
 * is out of reach of reclaim.
 */
static void test_reclaim_pageout(const char *name)
{
	cpu_set_t cpus, old;
	bool ok = true;
	int enable, path;

	if (!rp_usable(name))
		return;
	if (sched_getaffinity(0, sizeof(old), &old))
		ksft_exit_fail_perror("sched_getaffinity");
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		ksft_exit_fail_perror("sched_setaffinity");

	for (enable = 1; enable >= 0; enable--) {
		for (path = 0; path < NR_RP_PATHS; path++) {
			unsigned long n, swapped, bad;
			char what[64];
			int tries;
			char *p;

			snprintf(what, sizeof(what), "anon_prefault=%d %s",
				 enable, rp_names[path]);
			set_prefault(enable, DEF_MAX_PAGES);
			p = map_region(RP_LEN);
			n = rp_prepare(p);
			if (!rp_ahead_ok(enable, n)) {
				tmsg(name, "%s: %lu pages mapped ahead, expected %s\n",
				     what, n, enable ? "1 to 15" : "none");
				ok = false;
			}
			if (rp_write(path, p, 0x10 + path)) {
				tmsg(name, "%s: writing the region failed: %s\n",
				     what, strerror(errno));
				ok = false;
				unmap_region(p, RP_LEN);
				continue;
			}
			swapped = 0;
			for (tries = 0; tries < 3 && swapped < RP_PAGES; tries++) {
				if (madvise(p, RP_LEN, MADV_PAGEOUT))
					ksft_exit_fail_perror("MADV_PAGEOUT");
				swapped = rp_swapped(p);
			}
			bad = rp_bad_pages(name, what, p, 0x10 + path);
			if (swapped != RP_PAGES || bad) {
				tmsg(name,
				     "%s: %lu of %lu pages swapped out, %lu pages with wrong data after\n",
				     what, swapped, RP_PAGES, bad);
				ok = false;
			}
			unmap_region(p, RP_LEN);
		}
	}
	if (sched_setaffinity(0, sizeof(old), &old))
		ksft_exit_fail_perror("sched_setaffinity");
	ap_swap_off();
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

#define RPM_MAX		(12 * SZ_1M)	/* memory.max */
#define RPM_PRESSURE	(32 * SZ_1M)	/* written after the paths */

struct rpm_result {
	unsigned long ahead[NR_RP_PATHS];	/* pages mapped ahead */
	unsigned long swapped[NR_RP_PATHS];	/* pages in swap after */
	unsigned long bad[NR_RP_PATHS];		/* pages with wrong data */
	int failed[NR_RP_PATHS];		/* errno of a failed path */
};

/*
 * Child in the test cgroup: fill one region by each path, write
 * RPM_PRESSURE bytes more than memory.max leaves room for, then count the
 * regions' pages in swap and check their data.
 */
static void rpm_child(struct rpm_result *r)
{
	char *p[NR_RP_PATHS], *q;
	size_t off;
	int path;

	join_cgroup(CGROUP_TEST);
	close(pagemap_fd);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		_exit(3);
	for (path = 0; path < NR_RP_PATHS; path++) {
		p[path] = map_region(RP_LEN);
		r->ahead[path] = rp_prepare(p[path]);
		if (rp_write(path, p[path], 0x20 + path))
			r->failed[path] = errno ? errno : EIO;
	}
	/*
	 * get_user_pages() marks what it touches accessed, which keeps the
	 * regions of the pinning writers on the active list; the program
	 * says they are cold, as it would of a buffer it is done with.
	 */
	for (path = 0; path < NR_RP_PATHS; path++)
		if (madvise(p[path], RP_LEN, MADV_COLD))
			_exit(5);
	q = map_region(RPM_PRESSURE);
	for (off = 0; off < RPM_PRESSURE; off += pagesize)
		poke(q + off, 1);
	for (path = 0; path < NR_RP_PATHS; path++) {
		if (r->failed[path])
			continue;
		r->swapped[path] = rp_swapped(p[path]);
		r->bad[path] = rp_bad_pages("reclaim_memcg", rp_names[path],
					    p[path], 0x20 + path);
	}
	fflush(stdout);
	_exit(0);
}

/*
 * A memory cgroup pushed to its limit: a process fills a region by each
 * path, advises them MADV_COLD, then writes more than memory.max leaves
 * room for, so that reclaim swaps the regions out. Nobody is OOM-killed,
 * every page of the regions went to swap, those mapped ahead included,
 * and every byte comes back. The process runs on one CPU, so that
 * MADV_COLD finds every page on the LRU (it drains that CPU's batches).
 */
static void test_reclaim_memcg(const char *name)
{
	struct rpm_result *r;
	cpu_set_t cpus;
	const char *err;
	bool ok = true;
	int enable, path;

	if (!rp_usable(name))
		return;
	err = cgroup_setup();
	if (err) {
		ap_swap_off();
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_perror("mmap");

	for (enable = 1; enable >= 0; enable--) {
		char buf[32];
		long oom_kill;
		int status;
		pid_t pid;

		set_prefault(enable, DEF_MAX_PAGES);
		memset(r, 0, sizeof(*r));
		cgroup_remove();
		if (mkdir(CGROUP_TEST, 0755))
			ksft_exit_fail_perror("mkdir " CGROUP_TEST);
		snprintf(buf, sizeof(buf), "%lu", RPM_MAX);
		if (ap_write_file(CGROUP_TEST "/memory.max", buf))
			ksft_exit_fail_msg("cannot set memory.max\n");
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0)
			ksft_exit_fail_perror("fork");
		if (!pid) {
			CPU_ZERO(&cpus);
			CPU_SET(sched_getcpu(), &cpus);
			if (sched_setaffinity(0, sizeof(cpus), &cpus))
				_exit(6);
			rpm_child(r);
		}
		if (waitpid(pid, &status, 0) != pid)
			ksft_exit_fail_perror("waitpid");
		oom_kill = memcg_events("oom_kill");
		cgroup_remove();
		if (!WIFEXITED(status) || WEXITSTATUS(status) || oom_kill) {
			tmsg(name,
			     "anon_prefault=%d: child status %#x, oom_kill %ld; expected exit 0 and no OOM kill\n",
			     enable, status, oom_kill);
			ok = false;
			continue;
		}
		for (path = 0; path < NR_RP_PATHS; path++) {
			tmsg(name,
			     "anon_prefault=%d %s: %lu pages mapped ahead, %lu of %lu swapped out, %lu bad\n",
			     enable, rp_names[path], r->ahead[path],
			     r->swapped[path], RP_PAGES, r->bad[path]);
			if (r->failed[path]) {
				tmsg(name, "anon_prefault=%d %s: writing the region failed: %s\n",
				     enable, rp_names[path],
				     strerror(r->failed[path]));
				ok = false;
			}
			if (!rp_ahead_ok(enable, r->ahead[path]) ||
			    r->swapped[path] != RP_PAGES || r->bad[path]) {
				tmsg(name,
				     "anon_prefault=%d %s: %lu pages mapped ahead, expected %s, all swapped out, none bad\n",
				     enable, rp_names[path], r->ahead[path],
				     enable ? "1 to 15" : "none");
				ok = false;
			}
		}
	}
	munmap(r, sizeof(*r));
	ap_swap_off();
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 20. longterm_pin                                                          */
/* ------------------------------------------------------------------------ */

/*
 * A FOLL_LONGTERM pin that faults fresh memory in (here io_uring's fixed
 * buffer registration) runs under memalloc_pin_save(): its pages must not
 * come from ZONE_MOVABLE (or CMA), or GUP has to migrate them before it
 * can pin them. Pages that a window maps ahead during the pin are pinned
 * too, and must obey the same allocation scope. Needs a movable zone
 * (movablecore= on the kernel command line); without one, SKIP.
 */
#define PIN_LEN		PMD_SZ
#define PIN_MAX_ZONES	8

struct pfn_range {
	unsigned long start, end;
};

/* The PFN ranges of the populated movable zones, from /proc/zoneinfo. */
static unsigned int movable_zones(struct pfn_range *r)
{
	unsigned long spanned = 0, present = 0, v;
	bool movable = false;
	unsigned int n = 0;
	char line[256], zone[32];
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/zoneinfo");
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %*d, zone %31s", zone) == 1) {
			movable = !strcmp(zone, "Movable");
			spanned = 0;
			present = 0;
		} else if (!movable) {
			continue;
		} else if (sscanf(line, " spanned %lu", &v) == 1) {
			spanned = v;
		} else if (sscanf(line, " present %lu", &v) == 1) {
			present = v;
		} else if (sscanf(line, " start_pfn: %lu", &v) == 1 &&
			   present && n < PIN_MAX_ZONES) {
			r[n].start = v;
			r[n].end = v + spanned;
			n++;
		}
	}
	fclose(f);
	return n;
}

/* pgmigrate_success of /proc/vmstat (read_vmstat() fills vmstat_buf). */
static long pages_migrated(void)
{
	struct ap_vmstat v;

	read_vmstat(&v);
	return stat_field(vmstat_buf, "pgmigrate_success");
}

/*
 * Proactive compaction migrates pages on its own schedule: off while
 * pgmigrate_success is watched, then restored.
 */
#define COMPACTION_PROACTIVENESS "/proc/sys/vm/compaction_proactiveness"

static char saved_proactiveness[16];

static void compaction_off(void)
{
	int err;

	/* Without CONFIG_COMPACTION there is nothing to turn off. */
	if (!saved_proactiveness[0] &&
	    ap_read_file(COMPACTION_PROACTIVENESS, saved_proactiveness,
			 sizeof(saved_proactiveness)))
		return;
	err = ap_write_file(COMPACTION_PROACTIVENESS, "0");
	if (err)
		ksft_exit_fail_msg("writing %s: %s\n", COMPACTION_PROACTIVENESS,
				   strerror(-err));
}

static void compaction_restore(void)
{
	int err;

	if (!saved_proactiveness[0])
		return;
	err = ap_write_file(COMPACTION_PROACTIVENESS, saved_proactiveness);
	if (err)
		ksft_exit_fail_msg("restoring %s: %s\n",
				   COMPACTION_PROACTIVENESS, strerror(-err));
	saved_proactiveness[0] = '\0';
}

/*
 * Pin a fresh region with prefault @enable: every page is pinned outside
 * the movable zones @mz, no page had to be migrated for it, and with
 * prefault on, windows mapped some of the pinned pages ahead.
 */
static bool pin_one(const char *name, int enable, const struct pfn_range *mz,
		    unsigned int nmz)
{
	const unsigned long pages = PIN_LEN / pagesize;
	unsigned long i, in_movable = 0, present;
	long mig0, mig1, ahead;
	struct io_uring_params par;
	struct ap_vmstat v0, v1;
	unsigned int z;
	char *p;
	int ring;
	bool ok = true;

	p = map_region(PIN_LEN);
	compaction_off();
	set_prefault(enable, DEF_MAX_PAGES);
	read_vmstat(&v0);
	mig0 = stat_field(vmstat_buf, "pgmigrate_success");
	ring = uring_pin(p, PIN_LEN, &par);
	if (ring < 0)
		ksft_exit_fail_perror("io_uring buffer registration");
	read_vmstat(&v1);
	mig1 = stat_field(vmstat_buf, "pgmigrate_success");
	ahead = v1.page - v0.page;
	present = count_populated(p, 0, pages);
	for (i = 0; i < pages; i++) {
		unsigned long pfn = pagemap_get_pfn(pagemap_fd,
						    p + i * pagesize);

		for (z = 0; z < nmz; z++)
			if (pfn >= mz[z].start && pfn < mz[z].end)
				in_movable++;
	}
	close(ring);
	unmap_region(p, PIN_LEN);

	tmsg(name, "prefault %s: %lu of %lu pages present, %ld mapped ahead\n",
	     enable ? "on" : "off", present, pages, ahead);
	tmsg(name, "prefault %s: %lu in ZONE_MOVABLE, %ld migrated\n",
	     enable ? "on" : "off", in_movable, mig1 - mig0);
	if (present != pages || in_movable || mig1 != mig0) {
		tmsg(name, "a longterm pin got pages that it may not hold\n");
		ok = false;
	}
	if (enable && ahead <= 0) {
		tmsg(name, "no page was mapped ahead during the pin\n");
		ok = false;
	}
	return ok;
}

static void test_longterm_pin(const char *name)
{
	struct pfn_range mz[PIN_MAX_ZONES];
	unsigned int nmz = movable_zones(mz);
	bool ok;

	if (!nmz) {
		ksft_test_result_skip("%s: no ZONE_MOVABLE (boot with movablecore=)\n",
				      name);
		return;
	}
	if (pages_migrated() < 0) {
		ksft_test_result_skip("%s: no pgmigrate_success (CONFIG_MIGRATION)\n",
				      name);
		return;
	}
	ok = pin_one(name, 0, mz, nmz);
	ok &= pin_one(name, 1, mz, nmz);
	compaction_restore();
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 21. lru_gen                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Under MGLRU a folio added to the LRU during a fault goes into the
 * youngest generation, as the page the task touched. A page mapped ahead
 * has not been touched and must not go there: after a task wrote a fresh
 * region in a memory cgroup of its own, the youngest generation of that
 * cgroup holds at most as many anonymous pages as the task took faults
 * there, prefault on and off. Needs CONFIG_LRU_GEN (switched on for the
 * test and back) and debugfs.
 */
#define LRU_GEN_ENABLED	"/sys/kernel/mm/lru_gen/enabled"
#define LRU_GEN_DEBUGFS	"/sys/kernel/debug/lru_gen"
#define LRU_LEN		(4 * SZ_1M)

/* A cgroup per run, so that no earlier one, maybe not yet freed, is read */
static char lru_cg[64];

/*
 * Anonymous pages of the memory cgroup at @path (as cgroup_path() gives
 * it) in the youngest generation of each node, and in all of them, from
 * the lru_gen debugfs file. False if the cgroup is not listed.
 */
static bool lru_gen_anon(const char *path, long *youngest, long *total)
{
	unsigned long seq, age, max_seq = 0;
	long anon, young = 0;
	bool in = false, found = false;
	char line[256], p[256];
	FILE *f;
	int nid;

	*youngest = 0;
	*total = 0;
	f = fopen(LRU_GEN_DEBUGFS, "r");
	if (!f)
		ksft_exit_fail_perror("open " LRU_GEN_DEBUGFS);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "memcg %*u %255s", p) == 1) {
			*youngest += young;
			young = 0;
			max_seq = 0;
			in = !strcmp(p, path);
			found |= in;
		} else if (!in) {
			continue;
		} else if (sscanf(line, " node %d", &nid) == 1) {
			*youngest += young;
			young = 0;
			max_seq = 0;
		} else if (sscanf(line, " %lu %lu %ld", &seq, &age, &anon) == 3) {
			*total += anon;
			if (seq >= max_seq) {
				max_seq = seq;
				young = anon;
			}
		}
	}
	*youngest += young;
	fclose(f);
	return found;
}

/*
 * Child: join the cgroup lru_cg, map a fresh region, say so on @ready, write
 * every page of it when told on @go, report on @ready the faults it took
 * since it joined, and exit when told again.
 */
static void lru_gen_child(int ready, int go)
{
	long faults = minflt(RUSAGE_SELF);
	size_t off;
	char c = 0;
	char *p;

	join_cgroup(lru_cg);
	p = map_region(LRU_LEN);
	reset_prediction();
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(4);
	for (off = 0; off < LRU_LEN; off += pagesize)
		poke(p + off, 1);
	faults = minflt(RUSAGE_SELF) - faults;
	if (write(ready, &faults, sizeof(faults)) != sizeof(faults) ||
	    read(go, &c, 1) != 1)
		_exit(5);
	_exit(0);
}

static bool lru_gen_one(const char *name, int enable)
{
	const long pages = LRU_LEN / pagesize;
	/* Folios that may still wait in a per-cpu LRU batch */
	const long batched = 31 * sysconf(_SC_NPROCESSORS_ONLN);
	long faults, youngest, total;
	struct hs_child c;
	bool ok = true;
	char b = 0;

	snprintf(lru_cg, sizeof(lru_cg), CGROUP_ROOT "/anon_prefault_lru%d",
		 enable);
	if (mkdir(lru_cg, 0755) && errno != EEXIST)
		ksft_exit_fail_perror("mkdir");
	set_prefault(enable, DEF_MAX_PAGES);
	c = hs_fork(lru_gen_child, name);
	if (write(c.go, &b, 1) != 1 ||
	    read(c.ready, &faults, sizeof(faults)) != sizeof(faults))
		ksft_exit_fail_msg("%s: the child died\n", name);
	if (!lru_gen_anon(lru_cg + strlen(CGROUP_ROOT), &youngest, &total))
		ksft_exit_fail_msg("%s: %s does not list the cgroup\n", name,
				   LRU_GEN_DEBUGFS);
	if (write(c.go, &b, 1) != 1 || hs_wait(&c))
		ksft_exit_fail_msg("%s: the child failed\n", name);
	if (rmdir(lru_cg))
		ksft_print_msg("cannot remove %s: %s\n", lru_cg, strerror(errno));

	tmsg(name, "prefault %s: %ld faults, anonymous pages: %ld youngest, %ld in all\n",
	     enable ? "on" : "off", faults, youngest, total);
	if (total < pages - batched) {
		tmsg(name, "the region is not on the cgroup's LRU\n");
		ok = false;
	}
	if (youngest > faults) {
		tmsg(name, "more pages in the youngest generation than faults\n");
		ok = false;
	}
	return ok;
}

static void test_lru_gen(const char *name)
{
	char saved[32];
	const char *err;
	bool ok;

	if (ap_read_file(LRU_GEN_ENABLED, saved, sizeof(saved))) {
		ksft_test_result_skip("%s: no %s (CONFIG_LRU_GEN)\n", name,
				      LRU_GEN_ENABLED);
		return;
	}
	if (access(LRU_GEN_DEBUGFS, R_OK) &&
	    mount("none", "/sys/kernel/debug", "debugfs", 0, NULL)) {
		ksft_test_result_skip("%s: cannot mount debugfs\n", name);
		return;
	}
	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	if (ap_write_file(LRU_GEN_ENABLED, "y"))
		ksft_exit_fail_msg("%s: cannot enable MGLRU\n", name);
	ok = lru_gen_one(name, 0);
	ok &= lru_gen_one(name, 1);
	if (ap_write_file(LRU_GEN_ENABLED, saved))
		ksft_exit_fail_msg("%s: cannot restore %s\n", name,
				   LRU_GEN_ENABLED);
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------ */
/* 22. streams                                                               */
/* ------------------------------------------------------------------------ */

#define ST_PAGES	1024UL

/*
 * Fault counts of the access patterns real programs make, each in a fresh
 * region of ST_PAGES pages (two page tables) written once per page: the
 * bound is what a predictor following the pattern meets (its streams ramp
 * to 16-page windows) and one that follows a single ascending stream per
 * task misses by far (0.25 to 1.00 faults per page). Every page must hold
 * what was written, and the region must hold exactly the pages written.
 */
struct st_pattern {
	const char *what;
	/* Page written by access @i of ST_PAGES */
	unsigned long (*page)(unsigned long i);
	/* Faults per page allowed */
	double bound;
};

/* Downwards from the top: a stack, a top-down allocation */
static unsigned long st_down(unsigned long i)
{
	return ST_PAGES - 1 - i;
}

/* Two and four arrays filled in turn, each upwards */
static unsigned long st_two(unsigned long i)
{
	return (i % 2) * (ST_PAGES / 2) + i / 2;
}

static unsigned long st_four(unsigned long i)
{
	return (i % 4) * (ST_PAGES / 4) + i / 4;
}

/* One buffer filled from both ends: text upwards, records downwards */
static unsigned long st_updown(unsigned long i)
{
	return i % 2 ? ST_PAGES - 1 - i / 2 : i / 2;
}

static const struct st_pattern st_patterns[] = {
	{ "descending",		st_down,	0.07 },
	{ "2 interleaved",	st_two,		0.10 },
	{ "4 interleaved",	st_four,	0.10 },
	{ "up and down",	st_updown,	0.10 },
};

/* Write the pages st->page(0..n) of @p in order; returns the faults taken */
static long st_write(char *p, const struct st_pattern *st, unsigned long n)
{
	unsigned long i;
	long f0;

	f0 = minflt(RUSAGE_SELF);
	for (i = 0; i < n; i++) {
		unsigned long page = st->page(i);

		poke(p + page * pagesize, (char)(page + 1));
	}
	return minflt(RUSAGE_SELF) - f0;
}

/* Pages of [0, @pages) that do not hold their index + 1 and zeroes after it */
static unsigned long st_bad(char *p, unsigned long pages)
{
	unsigned long i, bad = 0;

	for (i = 0; i < pages; i++)
		if (p[i * pagesize] != (char)(i + 1) ||
		    !range_is_zero(p + i * pagesize, 1, pagesize))
			bad++;
	return bad;
}

static bool st_pattern_one(const char *name, const struct st_pattern *st)
{
	unsigned long bad, pop;
	bool ok = true;
	long faults;
	char *p;

	reset_prediction();
	p = map_region(ST_PAGES * pagesize);
	faults = st_write(p, st, ST_PAGES);
	bad = st_bad(p, ST_PAGES);
	pop = count_populated(p, 0, ST_PAGES);
	tmsg(name, "%s: %ld faults for %lu pages (%.4f per page, at most %.2f)\n",
	     st->what, faults, ST_PAGES, (double)faults / ST_PAGES, st->bound);
	if (faults > st->bound * ST_PAGES) {
		tmsg(name, "%s: %ld faults, more than %.2f per page\n",
		     st->what, faults, st->bound);
		ok = false;
	}
	if (bad || pop != ST_PAGES) {
		tmsg(name, "%s: %lu pages with wrong content, %lu populated of %lu\n",
		     st->what, bad, pop, ST_PAGES);
		ok = false;
	}
	unmap_region(p, ST_PAGES * pagesize);
	return ok;
}

/*
 * Back-fill: a stream writes the upper half of the region upwards while,
 * after every 8 of its pages, the task writes a page of the lower half,
 * never next to one written before (an allocator filling the holes it
 * left). Each of those is a miss and maps only itself; the stream must
 * keep its windows: at most 0.10 faults per page of its own.
 */
static bool st_backfill(const char *name)
{
	const unsigned long half = ST_PAGES / 2;
	bool filled[ST_PAGES / 2] = { false };
	unsigned long i, fills = 0, low;
	bool ok = true;
	long faults;
	char *p;

	reset_prediction();
	p = map_region(ST_PAGES * pagesize);
	faults = minflt(RUSAGE_SELF);
	for (i = 0; i < half; i++) {
		poke(p + (half + i) * pagesize, 1);
		if (i % 8 == 7) {
			/* Pages 0, 3, 6, ... of the lower half, in random order */
			low = (ap_rng(&rng_state) % (half / 3)) * 3;
			fills += !filled[low];
			filled[low] = true;
			poke(p + low * pagesize, 1);
		}
	}
	faults = minflt(RUSAGE_SELF) - faults;
	low = count_populated(p, 0, half);
	tmsg(name,
	     "back-fill: %ld faults for a stream of %lu pages and %lu pages filled below it\n",
	     faults, half, fills);
	if (faults - (long)fills > 0.10 * half) {
		tmsg(name,
		     "back-fill: %ld faults for the stream's %lu pages, more than 0.10 per page\n",
		     faults - (long)fills, half);
		ok = false;
	}
	if (low != fills || count_populated(p, half, ST_PAGES) != half) {
		tmsg(name, "back-fill: %lu pages populated below the stream for %lu filled\n",
		     low, fills);
		ok = false;
	}
	unmap_region(p, ST_PAGES * pagesize);
	return ok;
}

/*
 * A stream walking downwards that stops anywhere leaves at most
 * max_pages - 1 pages below the last page it wrote mapped and never
 * touched: write the top n pages of a fresh region downwards for every n
 * up to several full windows. The bound must be reached (it is tight).
 */
static bool st_down_waste(const char *name)
{
	const unsigned long pages = 256;
	unsigned long n, i, worst = 0, inside, waste;
	bool ok = true;
	char *p;

	for (n = 1; n <= 5 * DEF_MAX_PAGES; n++) {
		reset_prediction();
		p = map_region(pages * pagesize);
		for (i = 0; i < n; i++)
			poke(p + (pages - 1 - i) * pagesize, 1);
		inside = count_populated(p, pages - n, pages);
		waste = count_populated(p, 0, pages - n);
		if (inside != n || waste + 1 > DEF_MAX_PAGES) {
			if (ok)
				tmsg(name,
				     "downwards, stream of %lu pages: %lu of them populated, %lu below\n",
				     n, inside, waste);
			ok = false;
		}
		if (waste > worst)
			worst = waste;
		unmap_region(p, pages * pagesize);
	}
	tmsg(name, "downwards: at most %lu pages mapped below the last one written\n",
	     worst);
	if (worst != DEF_MAX_PAGES - 1) {
		tmsg(name, "downwards: the worst stop left %lu untouched pages, expected %u\n",
		     worst, DEF_MAX_PAGES - 1);
		ok = false;
	}
	return ok;
}

/* Two threads, each with a stream of its own in one region */
struct st_thread {
	char *p;
	int id;
	pthread_barrier_t *barrier;
	long faults;
};

/* Thread 0 writes the lower half upwards, thread 1 the upper half downwards */
static void *st_thread_fn(void *arg)
{
	struct st_thread *a = arg;
	const unsigned long half = ST_PAGES / 2;
	unsigned long i, page;
	long f0;

	pthread_barrier_wait(a->barrier);
	f0 = minflt(RUSAGE_THREAD);
	for (i = 0; i < half; i++) {
		page = a->id ? ST_PAGES - 1 - i : i;
		poke(a->p + page * pagesize, (char)(page + 1));
	}
	a->faults = minflt(RUSAGE_THREAD) - f0;
	return NULL;
}

static bool st_threads(const char *name)
{
	const unsigned long half = ST_PAGES / 2;
	pthread_barrier_t barrier;
	struct st_thread a[2];
	pthread_t th[2];
	unsigned long bad;
	bool ok = true;
	int t;
	char *p;

	p = map_region(ST_PAGES * pagesize);
	if (pthread_barrier_init(&barrier, NULL, 2))
		ksft_exit_fail_msg("pthread_barrier_init failed\n");
	for (t = 0; t < 2; t++) {
		a[t] = (struct st_thread){ .p = p, .id = t, .barrier = &barrier };
		if (pthread_create(&th[t], NULL, st_thread_fn, &a[t]))
			ksft_exit_fail_msg("pthread_create failed\n");
	}
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&barrier);
	bad = st_bad(p, ST_PAGES);
	tmsg(name, "2 threads: %ld and %ld faults for %lu pages each\n",
	     a[0].faults, a[1].faults, half);
	for (t = 0; t < 2; t++) {
		if (a[t].faults > 0.10 * half) {
			tmsg(name,
			     "2 threads: thread %d took %ld faults, more than 0.10 per page\n",
			     t, a[t].faults);
			ok = false;
		}
	}
	if (bad || count_populated(p, 0, ST_PAGES) != ST_PAGES) {
		tmsg(name, "2 threads: %lu pages with wrong content\n", bad);
		ok = false;
	}
	unmap_region(p, ST_PAGES * pagesize);
	return ok;
}

static void test_streams(const char *name)
{
	unsigned int i;
	bool ok = true;

	set_prefault(1, DEF_MAX_PAGES);
	for (i = 0; i < ARRAY_SIZE(st_patterns); i++)
		ok &= st_pattern_one(name, &st_patterns[i]);
	ok &= st_backfill(name);
	ok &= st_down_waste(name);
	ok &= st_threads(name);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 23. mte                                                                   */
/* ------------------------------------------------------------------------ */

#define MTE_PAGES	256	/* one stream, within a PMD */
#define MTE_DIRTY	4096	/* pages freed with stale tags before it */
#define MTE_GRANULE	16	/* bytes per allocation tag */
#define MTE_STALE	0xaUL	/* the tag left in freed pages */

#ifdef __aarch64__

static sigjmp_buf mte_jmp;

static void mte_segv(int sig)
{
	siglongjmp(mte_jmp, 1);
}

/* @p with allocation tag @tag in its top byte. */
static char *mte_tag_ptr(char *p, unsigned long tag)
{
	return (char *)(((uintptr_t)p & ~(0xfUL << 56)) | (tag << 56));
}

/* Set the tag of the granule at @p to the tag of the pointer. */
static void mte_stg(char *p)
{
	asm volatile(".arch armv8.5-a+memtag\n\tstg %0, [%0]"
		     : : "r"(p) : "memory");
}

/* The allocation tag of the granule at @p. */
static unsigned long mte_ldg(char *p)
{
	uintptr_t t = (uintptr_t)p;

	asm volatile(".arch armv8.5-a+memtag\n\tldg %0, [%0]"
		     : "+r"(t) : : "memory");
	return (t >> 56) & 0xf;
}

/*
 * A region of @len bytes that is PROT_MTE; with @large not MADV_NOHUGEPAGE,
 * so that where 64 KiB mTHP is enabled, windows map 64 KiB folios.
 */
static char *mte_region(size_t len, bool large)
{
	const char *what;
	char *p;

	if (large) {
		p = ap_map_region(len, PROT_READ | PROT_WRITE, &what);
		if (!p)
			ksft_exit_fail_perror(what);
	} else {
		p = map_region(len);
	}
	if (mprotect(p, len, PROT_READ | PROT_WRITE | PROT_MTE))
		ksft_exit_fail_perror("mprotect PROT_MTE");
	return p;
}

/* Large folios windows mapped ahead of their faulting folio (vmstat). */
static long mte_large_folios(void)
{
	static char buf[32768];

	if (ap_read_file("/proc/vmstat", buf, sizeof(buf)))
		ksft_exit_fail_perror("read /proc/vmstat");
	return stat_field(buf, "anon_prefault_large_folio");
}

static unsigned long mte_dirty_pfn[MTE_DIRTY];

static int mte_cmp_pfn(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a;
	unsigned long y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

/*
 * Free MTE_DIRTY pages whose granules all carry MTE_STALE, their page frames
 * sorted in mte_dirty_pfn[], in 64 KiB folios with @large; false if the tags
 * did not read back (then a zero tag later would prove nothing).
 */
static bool mte_leave_stale_tags(const char *name, bool large)
{
	size_t len = MTE_DIRTY * pagesize, off;
	char *p = mte_region(len, large);
	unsigned long i;
	bool ok = true;

	for (off = 0; off < len; off += MTE_GRANULE)
		mte_stg(mte_tag_ptr(p + off, MTE_STALE));
	for (off = 0; off < len && ok; off += MTE_GRANULE)
		ok = mte_ldg(p + off) == MTE_STALE;
	if (!ok)
		tmsg(name, "tag %#lx written with stg did not read back at +%#zx\n",
		     MTE_STALE, off - MTE_GRANULE);
	for (i = 0; i < MTE_DIRTY; i++)
		mte_dirty_pfn[i] = pagemap_get_pfn(pagemap_fd, p + i * pagesize);
	qsort(mte_dirty_pfn, MTE_DIRTY, sizeof(*mte_dirty_pfn), mte_cmp_pfn);
	unmap_region(p, len);
	return ok;
}

/* Write a byte at @p; false if that faulted (on a tag: SIGSEGV). */
static bool mte_write(char *p)
{
	if (sigsetjmp(mte_jmp, 1))
		return false;
	poke(p, 1);
	return true;
}

/*
 * Write the first byte of each page of a fresh PROT_MTE region through an
 * untagged pointer with synchronous tag checks (a page with stale tags
 * faults), then read back the tag of every granule: all must be 0. Counts
 * in @recycled the pages that had stale tags before. With @large, 64 KiB
 * mTHP is enabled and the windows must have mapped such folios.
 */
static bool mte_one(const char *name, int enable, bool large,
		    unsigned long *recycled)
{
	size_t len = MTE_PAGES * pagesize, off;
	unsigned long bad = 0, first_bad = 0, tagged = 0, pfn;
	long f0, faults, folios;
	unsigned long i;
	char *p;

	if (!mte_leave_stale_tags(name, large))
		return false;
	set_prefault(enable, DEF_MAX_PAGES);
	p = mte_region(len, large);
	folios = mte_large_folios();
	f0 = minflt(RUSAGE_SELF);
	for (i = 0; i < MTE_PAGES; i++)
		if (!mte_write(p + i * pagesize) && !bad++)
			first_bad = i;
	faults = minflt(RUSAGE_SELF) - f0;
	folios = mte_large_folios() - folios;
	*recycled = 0;
	for (i = 0; i < MTE_PAGES; i++) {
		pfn = pagemap_get_pfn(pagemap_fd, p + i * pagesize);
		if (bsearch(&pfn, mte_dirty_pfn, MTE_DIRTY,
			    sizeof(*mte_dirty_pfn), mte_cmp_pfn))
			(*recycled)++;
	}
	for (off = 0; off < len; off += MTE_GRANULE)
		if (mte_ldg(p + off))
			tagged++;
	unmap_region(p, len);
	tmsg(name,
	     "anon_prefault=%d%s: %lu pages written in %ld faults, %lu of them freed with stale tags before; %lu writes faulted on a tag, %lu granules tagged\n",
	     enable, large ? ", 64 KiB mTHP" : "", (unsigned long)MTE_PAGES,
	     faults, *recycled, bad, tagged);
	if (bad || tagged) {
		tmsg(name, "anon_prefault=%d: stale tags (first write faulting: page %lu)\n",
		     enable, first_bad);
		return false;
	}
	if (large && folios < 1) {
		tmsg(name, "no large folio mapped ahead: windows of large folios not tested\n");
		return false;
	}
	/*
	 * The region is one stream: windows must have mapped most of it, and
	 * pages that had stale tags, or the zero tags prove nothing.
	 */
	if (enable && (faults > MTE_PAGES / 4 || !*recycled)) {
		tmsg(name,
		     "%ld faults for %lu pages, %lu pages with stale tags before: the windows were not tested\n",
		     faults, (unsigned long)MTE_PAGES, *recycled);
		return false;
	}
	return true;
}

static void test_mte(const char *name)
{
	struct sigaction sa = { .sa_handler = mte_segv }, old;
	unsigned long ctrl = PR_TAGGED_ADDR_ENABLE | PR_MTE_TCF_SYNC |
			     (0xfffeUL << PR_MTE_TAG_SHIFT);
	unsigned long recycled;
	bool ok;
	int ret;

	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE)) {
		ksft_test_result_skip("%s: no memory tagging extension (MTE) on this CPU\n",
				      name);
		return;
	}
	if (prctl(PR_SET_TAGGED_ADDR_CTRL, ctrl, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_TAGGED_ADDR_CTRL");
	sa.sa_flags = SA_NODEFER;
	if (sigaction(SIGSEGV, &sa, &old))
		ksft_exit_fail_perror("sigaction");
	ok = mte_one(name, 0, false, &recycled);
	ok &= mte_one(name, 1, false, &recycled);
	/* Windows of 64 KiB folios: a stream's "always" folio and one ahead */
	ret = ap_mthp_only(64, "always");
	if (ret)
		tmsg(name, "no 64 KiB mTHP (%s): windows of large folios not tested\n",
		     strerror(-ret));
	else
		ok &= mte_one(name, 1, true, &recycled);
	ap_mthp_restore();
	sigaction(SIGSEGV, &old, NULL);
	prctl(PR_SET_TAGGED_ADDR_CTRL, 0, 0, 0, 0);
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

#else

static void test_mte(const char *name)
{
	ksft_test_result_skip("%s: needs the memory tagging extension (MTE) of arm64\n",
			      name);
}

#endif

/* ------------------------------------------------------------------------ */
/* 24. old_ptes                                                              */
/* ------------------------------------------------------------------------ */

/*
 * Fault-around maps the pages around a read fault old where the architecture
 * wants it (arch_wants_old_prefaulted_pte(): arm64 with a hardware access
 * flag), so that reclaim can tell them from the pages a task touched; a
 * window's pages must be old there too, and young where fault-around's are.
 * The test asks fault-around which it is, then has a task in a memory cgroup
 * write OLD_WRITTEN pages of each of OLD_STREAMS streams, OLD_GAP pages apart
 * in one region: each stream stops, leaving pages mapped ahead that it never
 * touched. smaps must count as referenced exactly the pages written where
 * prefaulted pages are old, every page mapped where they are young. Where
 * they are old, memory.reclaim of half the untouched pages (to swap) must
 * take untouched pages only.
 */
#define OLD_STREAMS	64
#define OLD_WRITTEN	17	/* pages each stream writes */
#define OLD_GAP		64	/* pages from a stream's start to the next's */
#define OLD_PROBE	16	/* pages of the fault-around probe: 64 KiB */

struct old_result {
	unsigned long mapped;		/* pages populated in the region */
	unsigned long referenced;	/* pages smaps counts as referenced */
	unsigned long swapped_touched;	/* written pages reclaimed */
	unsigned long swapped_ahead;	/* untouched pages reclaimed */
	int reclaim_err;		/* errno of memory.reclaim, or 0 */
};

/*
 * 1 if fault-around maps the pages around a read fault old, 0 if young, -1
 * if it mapped none: OLD_PROBE pages of a tmpfs file, read once through a
 * mapping, made cold (MADV_COLD: no young PTE, not referenced) and unmapped
 * (MADV_DONTNEED: still in the page cache), are mapped again at an address
 * aligned to their size, and one of them is read; smaps then counts one
 * referenced page of those mapped if the others are old.
 */
static int fault_around_old(const char *name)
{
	size_t len = OLD_PROBE * pagesize, i;
	char path[] = "/tmp/anon_prefault_XXXXXX";
	unsigned long kb = pagesize / 1024, rss, ref;
	char *area, *p, *buf;
	int fd;

	fd = mkstemp(path);
	if (fd < 0)
		ksft_exit_fail_perror("mkstemp");
	unlink(path);
	buf = malloc(len);
	if (!buf)
		ksft_exit_fail_perror("malloc");
	memset(buf, 1, len);
	if (write(fd, buf, len) != (ssize_t)len)
		ksft_exit_fail_perror("write");
	free(buf);
	area = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	p = (char *)(((uintptr_t)area + len - 1) & ~(uintptr_t)(len - 1));
	if (mmap(p, len, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) != p)
		ksft_exit_fail_perror("mmap the probe file");
	for (i = 0; i < len; i += pagesize)
		peek(p + i);
	if (madvise(p, len, MADV_COLD) || madvise(p, len, MADV_DONTNEED))
		ksft_exit_fail_perror("MADV_COLD, MADV_DONTNEED");
	peek(p);
	rss = region_smaps_kb(p, "Rss") / kb;
	ref = region_smaps_kb(p, "Referenced") / kb;
	munmap(area, 2 * len);
	close(fd);
	tmsg(name, "fault-around: a read fault mapped %lu pages, %lu of them referenced\n",
	     rss, ref);
	if (rss < 2)
		return -1;
	return ref == 1;
}

/* What the child found, in memory it shares with the parent */
static struct old_result *old_res;
static bool old_reclaim;

/*
 * Child: join CGROUP_TEST, write the streams in a fresh region, count what
 * is mapped and referenced; with old_reclaim, reclaim half of the pages
 * mapped ahead from the cgroup and count which pages went to swap. Says
 * on @ready when it is done.
 */
static void old_child(int ready, int go)
{
	const unsigned long pages = OLD_STREAMS * OLD_GAP;
	struct old_result *r = old_res;
	unsigned long s, i, ahead;
	char buf[32], *p, b = 0;

	join_cgroup(CGROUP_TEST);
	/* The parent's pagemap_fd reads the parent. */
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		_exit(3);
	p = map_region(pages * pagesize);
	for (s = 0; s < OLD_STREAMS; s++)
		for (i = 0; i < OLD_WRITTEN; i++)
			poke(p + (s * OLD_GAP + i) * pagesize, 1);
	r->mapped = count_populated(p, 0, pages);
	r->referenced = region_smaps_kb(p, "Referenced") / (pagesize / 1024);
	ahead = r->mapped - OLD_STREAMS * OLD_WRITTEN;
	if (!old_reclaim)
		goto done;
	snprintf(buf, sizeof(buf), "%lu", ahead / 2 * pagesize);
	r->reclaim_err = -ap_write_file(CGROUP_TEST "/memory.reclaim", buf);
	for (i = 0; i < pages; i++) {
		if (!pagemap_is_swapped(pagemap_fd, p + i * pagesize))
			continue;
		if (i % OLD_GAP < OLD_WRITTEN)
			r->swapped_touched++;
		else
			r->swapped_ahead++;
	}
done:
	_exit(write(ready, &b, 1) != 1);
}

static void test_old_ptes(const char *name)
{
	const unsigned long written = OLD_STREAMS * OLD_WRITTEN;
	const char *err, *why = "";
	unsigned long ahead;
	struct old_result *r;
	struct hs_child c;
	bool ok = true;
	int old, status;

	old = fault_around_old(name);
	if (old < 0) {
		ksft_test_result_skip("%s: fault-around mapped nothing around a read fault\n",
				      name);
		return;
	}
	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	/* Reclaim says something only where the pages ahead are old. */
	old_reclaim = old;
	if (old_reclaim && ap_swap_on(AP_SWAP_DEV, &why)) {
		ksft_test_result_skip("%s: needs swap: %s\n", name, why);
		return;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	memset(r, 0, sizeof(*r));
	old_res = r;
	set_prefault(1, DEF_MAX_PAGES);
	cgroup_remove();
	if (mkdir(CGROUP_TEST, 0755))
		ksft_exit_fail_perror("mkdir " CGROUP_TEST);
	c = hs_fork(old_child, name);
	status = hs_wait(&c);
	cgroup_remove();
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ksft_exit_fail_msg("%s: child status %#x\n", name, status);

	ahead = r->mapped - written;
	tmsg(name, "prefaulted PTEs %s: %lu pages written, %lu mapped ahead, %lu referenced\n",
	     old ? "old" : "young", written, ahead, r->referenced);
	if (r->mapped < written || !ahead) {
		tmsg(name, "expected pages mapped ahead of every stream\n");
		ok = false;
	} else if (r->referenced != (old ? written : r->mapped)) {
		tmsg(name,
		     "expected %lu referenced pages: the pages mapped ahead are %s, as fault-around's\n",
		     old ? written : r->mapped, old ? "old" : "young");
		ok = false;
	}
	if (old_reclaim) {
		tmsg(name,
		     "memory.reclaim of %lu pages: %s; swapped out: %lu pages mapped ahead, %lu written\n",
		     ahead / 2, r->reclaim_err ? strerror(r->reclaim_err) : "done",
		     r->swapped_ahead, r->swapped_touched);
		if (r->reclaim_err || !r->swapped_ahead || r->swapped_touched) {
			tmsg(name, "expected reclaim to take untouched pages mapped ahead only\n");
			ok = false;
		}
	}
	munmap(r, sizeof(*r));
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 25. noprefault                                                            */
/* ------------------------------------------------------------------------ */

/*
 * The VmFlags line of the VMA that starts at @addr in /proc/self/smaps, in
 * @buf, with a space before and after every mnemonic.
 */
static void region_vmflags(void *addr, char *buf, size_t size)
{
	char line[256], start[32];
	bool found = false;
	FILE *f;

	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	f = fopen("/proc/self/smaps", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/self/smaps");
	buf[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!found) {
			found = !strncmp(line, start, strlen(start));
			continue;
		}
		if (!strncmp(line, "VmFlags:", 8)) {
			line[strcspn(line, "\n")] = 0;
			snprintf(buf, size, "%s ", line + 8);
			break;
		}
	}
	fclose(f);
	if (!found)
		ksft_exit_fail_msg("no VMA at %p in /proc/self/smaps\n", addr);
}

static bool has_vmflag(const char *flags, const char *mnemonic)
{
	char m[8];

	snprintf(m, sizeof(m), " %s ", mnemonic);
	return strstr(flags, m);
}

#define NP_PAGES	256	/* pages of the opt-out tests' regions */

/*
 * A fresh region of NP_PAGES pages, advised @advice (MADV_NOPREFAULT, or
 * MADV_PREFAULT after MADV_NOPREFAULT), or not at all (-1).
 */
static char *np_region(int advice)
{
	const size_t len = NP_PAGES * pagesize;
	char *p;

	reset_prediction();
	p = map_region(len);
	if (advice == MADV_PREFAULT && madvise(p, len, MADV_NOPREFAULT))
		ksft_exit_fail_perror("MADV_NOPREFAULT");
	if (advice >= 0 && madvise(p, len, advice))
		ksft_exit_fail_perror("madvise");
	return p;
}

/*
 * Write np_region(@advice) upwards, after a miss elsewhere: with prefault
 * opted out, one fault per page and exactly the pages written populated.
 * @who: RUSAGE_SELF, or RUSAGE_THREAD in a thread.
 */
static bool one_page_per_fault(const char *name, const char *what, int who,
			       int advice)
{
	const size_t len = NP_PAGES * pagesize;
	char *p = np_region(advice);
	unsigned long i, n;
	long faults;

	faults = minflt(who);
	for (i = 0; i < NP_PAGES; i++)
		poke(p + i * pagesize, 1);
	faults = minflt(who) - faults;
	n = count_populated(p, 0, NP_PAGES);
	unmap_region(p, len);
	if (faults == NP_PAGES && n == NP_PAGES)
		return true;
	tmsg(name, "%s: %ld faults, %lu pages populated, expected %d and %d: one page per fault\n",
	     what, faults, n, NP_PAGES, NP_PAGES);
	return false;
}

/* The same with prefault in force: the stream's windows. */
static bool prefault_ramps(const char *name, const char *what, int advice)
{
	const size_t len = NP_PAGES * pagesize;
	char *p = np_region(advice);
	unsigned long n;
	long faults;
	bool ok;

	faults = write_seq(p, 0, NP_PAGES);
	n = count_populated(p, 0, NP_PAGES);
	unmap_region(p, len);
	ok = stream_faults_ok(name, what, faults, NP_PAGES, DEF_MAX_PAGES, 0,
			      false);
	if (n != NP_PAGES) {
		tmsg(name, "%s: %lu of %d pages populated\n", what, n,
		     NP_PAGES);
		ok = false;
	}
	return ok;
}

/*
 * MADV_NOPREFAULT: one page per fault, shown as "np" and nothing else in
 * VmFlags (not the "rr" or "sr" of MADV_RANDOM and MADV_SEQUENTIAL), kept
 * by a child of fork; MADV_PREFAULT brings the windows back; an advice
 * value the kernel does not know still fails with EINVAL.
 */
static void test_noprefault(const char *name)
{
	const size_t len = NP_PAGES * pagesize;
	char flags[256], before[256];
	bool ok = true;
	long faults;
	int status;
	pid_t pid;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	ok &= prefault_ramps(name, "no advice", -1);

	p = map_region(len);
	region_vmflags(p, before, sizeof(before));
	if (madvise(p, len, MADV_NOPREFAULT)) {
		tmsg(name, "MADV_NOPREFAULT: %s\n", strerror(errno));
		ksft_test_result_fail("%s\n", name);
		unmap_region(p, len);
		return;
	}
	region_vmflags(p, flags, sizeof(flags));
	if (!has_vmflag(flags, "np") || has_vmflag(flags, "rr") ||
	    has_vmflag(flags, "sr") ||
	    strlen(flags) != strlen(before) + strlen("np ")) {
		tmsg(name,
		     "VmFlags:%s after MADV_NOPREFAULT, VmFlags:%s before: expected \"np\" added and nothing else\n",
		     flags, before);
		ok = false;
	}
	unmap_region(p, len);

	ok &= one_page_per_fault(name, "MADV_NOPREFAULT", RUSAGE_SELF,
				 MADV_NOPREFAULT);

	/* MADV_PREFAULT undoes it. */
	p = np_region(MADV_PREFAULT);
	region_vmflags(p, flags, sizeof(flags));
	if (strcmp(flags, before)) {
		tmsg(name, "VmFlags:%s after MADV_PREFAULT, expected VmFlags:%s\n",
		     flags, before);
		ok = false;
	}
	unmap_region(p, len);
	ok &= prefault_ramps(name, "MADV_PREFAULT", MADV_PREFAULT);

	/* A child of fork inherits the advice with the region. */
	p = map_region(len);
	if (madvise(p, len, MADV_NOPREFAULT))
		ksft_exit_fail_perror("MADV_NOPREFAULT");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid) {
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
		reset_prediction();
		faults = write_seq(p, 0, NP_PAGES);
		if (pagemap_fd < 0 || faults != NP_PAGES ||
		    count_populated(p, 0, NP_PAGES) != NP_PAGES) {
			tmsg(name,
			     "child of fork: %ld faults in the region advised MADV_NOPREFAULT, expected %d\n",
			     faults, NP_PAGES);
			_exit(1);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_perror("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tmsg(name, "the child of fork failed (status %#x)\n", status);
		ok = false;
	}

	/* An advice value the kernel does not know: EINVAL, as before. */
	if (madvise(p, len, MADV_PREFAULT + 1) != -1 || errno != EINVAL) {
		tmsg(name, "madvise(%d), a value the kernel does not know: %s, expected EINVAL\n",
		     MADV_PREFAULT + 1, strerror(errno));
		ok = false;
	}
	unmap_region(p, len);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 26. noprefault_reclaim                                                    */
/* ------------------------------------------------------------------------ */

/*
 * An opt-out must not change how reclaim sees the region. A task in a memory
 * cgroup writes a hot region H, then a cold region C, of RV_PAGES pages
 * each, clears the accessed bits of its page table entries
 * (/proc/self/clear_refs), reads H again (after a TLB flush), and reclaims
 * RV_PAGES pages of the cgroup (memory.reclaim, to swap). H's pages are the
 * older on the LRU, so reclaim meets them first, and keeps them for their
 * accessed bits: C goes to swap. Reclaim ignores those bits in a region
 * advised MADV_RANDOM (vma_has_recency()), so there it takes H. H advised
 * MADV_NOPREFAULT with prefault on must keep as many pages resident as H
 * with no advice and prefault off, and the MADV_RANDOM run shows that the
 * test can see the difference.
 */
#define RV_PAGES	512

struct rv_result {
	unsigned long hot;	/* pages of H resident after reclaim */
	unsigned long cold;	/* pages of C resident after reclaim */
	int reclaim_err;	/* errno of memory.reclaim, or 0 */
};

static struct rv_result *rv_res;
static int rv_advice;		/* the advice for H, or -1 */

static bool resident(char *p, unsigned long page)
{
	return populated(p, page) &&
	       !pagemap_is_swapped(pagemap_fd, p + page * pagesize);
}

static void rv_child(int ready, int go)
{
	const size_t len = RV_PAGES * pagesize;
	struct rv_result *r = rv_res;
	char buf[32], *h, *c, b = 0;
	unsigned long i;
	cpu_set_t cpus;

	/* One CPU: its LRU batches are the ones reclaim drains first */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		_exit(7);
	join_cgroup(CGROUP_TEST);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		_exit(3);
	h = map_region(len);
	c = map_region(len);
	if (rv_advice >= 0 && madvise(h, len, rv_advice))
		_exit(4);
	reset_prediction();
	for (i = 0; i < RV_PAGES; i++)
		poke(h + i * pagesize, 1);
	for (i = 0; i < RV_PAGES; i++)
		poke(c + i * pagesize, 1);
	if (ap_write_file("/proc/self/clear_refs", "1"))
		_exit(5);
	/*
	 * clear_refs does not flush the TLB, and a read through a cached
	 * translation sets no accessed bit: mprotect() H, which flushes its
	 * range, so that the reads walk the page tables and mark H young.
	 */
	if (mprotect(h, len, PROT_READ) ||
	    mprotect(h, len, PROT_READ | PROT_WRITE))
		_exit(6);
	for (i = 0; i < RV_PAGES; i++)
		peek(h + i * pagesize);
	snprintf(buf, sizeof(buf), "%zu", len);
	r->reclaim_err = -ap_write_file(CGROUP_TEST "/memory.reclaim", buf);
	for (i = 0; i < RV_PAGES; i++) {
		r->hot += resident(h, i);
		r->cold += resident(c, i);
	}
	_exit(write(ready, &b, 1) != 1);
}

static struct rv_result rv_run(const char *name, int enable, int advice)
{
	struct rv_result *r, res;
	struct hs_child c;
	int status;

	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	memset(r, 0, sizeof(*r));
	rv_res = r;
	rv_advice = advice;
	set_prefault(enable, DEF_MAX_PAGES);
	cgroup_remove();
	if (mkdir(CGROUP_TEST, 0755))
		ksft_exit_fail_perror("mkdir " CGROUP_TEST);
	c = hs_fork(rv_child, name);
	status = hs_wait(&c);
	cgroup_remove();
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		ksft_exit_fail_msg("%s: child status %#x\n", name, status);
	res = *r;
	munmap(r, sizeof(*r));
	return res;
}

static void test_noprefault_reclaim(const char *name)
{
	static const struct {
		const char *what;
		int enable;
		int advice;
	} runs[3] = {
		{ "prefault off, no advice", 0, -1 },
		{ "prefault on, MADV_NOPREFAULT", 1, MADV_NOPREFAULT },
		{ "prefault off, MADV_RANDOM", 0, MADV_RANDOM },
	};
	struct rv_result r[3];
	const char *err, *why = "";
	char lru_gen[32] = "";
	bool ok = true;
	int i;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	if (ap_swap_on(AP_SWAP_DEV, &why)) {
		ksft_test_result_skip("%s: needs swap: %s\n", name, why);
		return;
	}
	/*
	 * The check needs the classic LRU, where H, the older, is met first
	 * and kept for its accessed bits. The multi-gen LRU (on by default in
	 * distribution kernels) went by generation and took H without advice
	 * too (2 of 512 pages kept), so the runs could not tell the advice
	 * apart: they run with it off, and the lru_gen case checks the
	 * generations.
	 */
	if (!ap_read_file(LRU_GEN_ENABLED, lru_gen, sizeof(lru_gen)) &&
	    ap_write_file(LRU_GEN_ENABLED, "n"))
		ksft_exit_fail_msg("%s: cannot turn MGLRU off\n", name);
	for (i = 0; i < 3; i++) {
		r[i] = rv_run(name, runs[i].enable, runs[i].advice);
		tmsg(name,
		     "%s: resident after reclaim: %lu of %d hot pages, %lu of %d cold (memory.reclaim: %s)\n",
		     runs[i].what, r[i].hot, RV_PAGES, r[i].cold, RV_PAGES,
		     r[i].reclaim_err ? strerror(r[i].reclaim_err) : "done");
	}
	if (lru_gen[0] && ap_write_file(LRU_GEN_ENABLED, lru_gen))
		ksft_exit_fail_msg("%s: cannot restore %s\n", name,
				   LRU_GEN_ENABLED);
	if (r[0].hot < r[2].hot + RV_PAGES / 2) {
		tmsg(name,
		     "reclaim took as much of the hot region without advice as with MADV_RANDOM: the test cannot tell them apart\n");
		ok = false;
	}
	if (r[1].hot + RV_PAGES / 8 < r[0].hot) {
		tmsg(name,
		     "MADV_NOPREFAULT lost %lu more hot pages than no advice with prefault off: reclaim sees the region differently\n",
		     r[0].hot - r[1].hot);
		ok = false;
	}
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 27. prctl                                                                 */
/* ------------------------------------------------------------------------ */

static long get_disable(void)
{
	return prctl(PR_GET_ANON_PREFAULT_DISABLE, 0, 0, 0, 0);
}

/*
 * @what: the process reads @want back, and its faults behave so: one page
 * per fault when opted out, the windows of a stream when not.
 */
static bool prctl_state_ok(const char *name, const char *what, long want,
			   int who)
{
	long got = get_disable();
	bool ok = got == want;

	if (!ok)
		tmsg(name, "%s: PR_GET_ANON_PREFAULT_DISABLE returned %ld (%s), expected %ld\n",
		     what, got, got < 0 ? strerror(errno) : "", want);
	/* The faults tell, whatever PR_GET says. */
	if (want)
		ok &= one_page_per_fault(name, what, who, -1);
	else
		ok &= prefault_ramps(name, what, -1);
	return ok;
}

static const char *prctl_name;

static void *prctl_thread(void *arg)
{
	bool *ok = arg;

	*ok = prctl_state_ok(prctl_name, "a thread of the process", 1,
			     RUSAGE_THREAD);
	return NULL;
}

/* Fork a child that runs @fn; its exit status, 0 if it passed. */
static int prctl_fork(const char *name, int (*fn)(const char *name))
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid) {
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
		_exit(pagemap_fd < 0 ? 3 : fn(name));
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_perror("waitpid");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* A child of an opted-out process: opted out, then back in by itself. */
static int prctl_grandchild(const char *name)
{
	bool ok = prctl_state_ok(name, "a child of fork", 1, RUSAGE_SELF);

	if (prctl(PR_SET_ANON_PREFAULT_DISABLE, 0, 0, 0, 0)) {
		tmsg(name, "the child: PR_SET_ANON_PREFAULT_DISABLE 0: %s\n",
		     strerror(errno));
		return 1;
	}
	ok &= prctl_state_ok(name, "the child, back in", 0, RUSAGE_SELF);
	return !ok;
}

/* The program a child of an opted-out process executes: -X prctl_exec */
static int prctl_exec_check(void)
{
	return !prctl_state_ok("prctl", "a program executed", 1, RUSAGE_SELF);
}

/* A child of the test, which opts itself out. */
static int prctl_child(const char *name)
{
	static char *const argv[] = { "anon_prefault", "-X", "prctl_exec", NULL };
	bool ok, tok = false;
	pthread_t t;
	int status;
	pid_t pid;

	reset_prediction();
	ok = prctl_state_ok(name, "a child of the test", 0, RUSAGE_SELF);
	if (prctl(PR_SET_ANON_PREFAULT_DISABLE, 1, 0, 0, 0)) {
		tmsg(name, "PR_SET_ANON_PREFAULT_DISABLE 1: %s\n",
		     strerror(errno));
		return 1;
	}
	ok &= prctl_state_ok(name, "after PR_SET_ANON_PREFAULT_DISABLE 1", 1,
			     RUSAGE_SELF);

	prctl_name = name;
	if (pthread_create(&t, NULL, prctl_thread, &tok) ||
	    pthread_join(t, NULL))
		ksft_exit_fail_msg("%s: pthread\n", name);
	ok &= tok;

	if (prctl_fork(name, prctl_grandchild)) {
		tmsg(name, "a child of fork failed\n");
		ok = false;
	}
	ok &= prctl_state_ok(name, "after its child switched itself back on",
			     1, RUSAGE_SELF);

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_perror("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tmsg(name, "the program executed by a child failed (status %#x)\n",
		     status);
		ok = false;
	}

	if (prctl(PR_SET_ANON_PREFAULT_DISABLE, 0, 0, 0, 0))
		return 1;
	ok &= prctl_state_ok(name, "after PR_SET_ANON_PREFAULT_DISABLE 0", 0,
			     RUSAGE_SELF);
	return !ok;
}

/* prctl(op, a2..a5) must fail with EINVAL. */
static bool prctl_einval(const char *name, int op, unsigned long a2,
			 unsigned long a3)
{
	if (prctl(op, a2, a3, 0, 0) == -1 && errno == EINVAL)
		return true;
	tmsg(name, "prctl(%d, %lu, %lu, 0, 0): %s, expected EINVAL\n", op, a2,
	     a3, strerror(errno));
	return false;
}

/*
 * PR_SET_ANON_PREFAULT_DISABLE: read back, shared by the threads,
 * inherited by a child of fork, kept across exec, switched back on by a
 * child for itself alone; bad arguments fail with EINVAL and change
 * nothing. The test's own process is never opted out.
 */
static void test_prctl(const char *name)
{
	bool ok = true;

	set_prefault(1, DEF_MAX_PAGES);
	ok &= prctl_einval(name, PR_SET_ANON_PREFAULT_DISABLE, 2, 0);
	ok &= prctl_einval(name, PR_SET_ANON_PREFAULT_DISABLE, 1, 1);
	ok &= prctl_einval(name, PR_GET_ANON_PREFAULT_DISABLE, 1, 0);
	ok &= prctl_state_ok(name, "the test after bad arguments", 0,
			     RUSAGE_SELF);
	if (prctl_fork(name, prctl_child)) {
		tmsg(name, "the child that opted out failed\n");
		ok = false;
	}
	ok &= prctl_state_ok(name, "the test, whose child opted out", 0,
			     RUSAGE_SELF);
	ksft_test_result(ok, "%s\n", name);
}

static const struct {
	const char *name;
	void (*fn)(const char *name);
} tests[] = {
	{ "seq_write_64M",	test_seq_write_64M },
	{ "spec_zero",		test_spec_zero },
	{ "vma_end",		test_vma_end },
	{ "pmd_boundary",	test_pmd_boundary },
	{ "madvise",		test_madvise },
	{ "sparse",		test_sparse },
	{ "seq_read_zero",	test_seq_read_zero },
	{ "fork",		test_fork },
	{ "uffd_missing",	test_uffd_missing },
	{ "memcg",		test_memcg },
	{ "memcg_high",		test_memcg_high },
	{ "memcg_high_auto",	test_memcg_high_auto },
	{ "memcg_high_cpus",	test_memcg_high_cpus },
	{ "threads",		test_threads },
	{ "sysctl_input",	test_sysctl_input },
	{ "vmstat",		test_vmstat },
	{ "mlock_populate",	test_mlock_populate },
	{ "waste_bound",	test_waste_bound },
	{ "accounting",		test_accounting },
	{ "reclaim_pageout",	test_reclaim_pageout },
	{ "reclaim_memcg",	test_reclaim_memcg },
	{ "longterm_pin",	test_longterm_pin },
	{ "lru_gen",		test_lru_gen },
	{ "streams",		test_streams },
	{ "mte",		test_mte },
	{ "old_ptes",		test_old_ptes },
	{ "noprefault",		test_noprefault },
	{ "noprefault_reclaim",	test_noprefault_reclaim },
	{ "prctl",		test_prctl },
};

static void usage(const char *prog)
{
	unsigned int i;

	printf("Usage: %s [-h] [-t test]\n", prog);
	printf("  -h       show this help\n");
	printf("  -t test  run only this test\n");
	printf("Tests:");
	for (i = 0; i < ARRAY_SIZE(tests); i++)
		printf(" %s", tests[i].name);
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *only = NULL, *exec_check = NULL;
	struct ap_vmstat v;
	bool force = false;
	unsigned int i;
	int opt;

	/* -f (undocumented): run even without the sysctls, for debugging. */
	/* -X prctl_exec: the program test_prctl() executes, see there. */
	while ((opt = getopt(argc, argv, "hft:X:")) != -1) {
		switch (opt) {
		case 'h':
			usage(argv[0]);
			return 0;
		case 'f':
			force = true;
			break;
		case 't':
			only = optarg;
			break;
		case 'X':
			exec_check = optarg;
			break;
		default:
			usage(argv[0]);
			return KSFT_FAIL;
		}
	}

	if (exec_check) {
		pagesize = getpagesize();
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
		if (pagemap_fd < 0 || strcmp(exec_check, "prctl_exec"))
			return 2;
		return prctl_exec_check();
	}

	for (i = 0; only && i < ARRAY_SIZE(tests); i++)
		if (!strcmp(only, tests[i].name))
			break;
	if (only && i == ARRAY_SIZE(tests)) {
		fprintf(stderr, "%s: no test '%s'\n", argv[0], only);
		usage(argv[0]);
		return KSFT_FAIL;
	}

	ksft_print_header();
	ksft_set_plan(only ? 1 : ARRAY_SIZE(tests));

	have_sysctl = !access(SYSCTL_ENABLE, F_OK);
	if (!have_sysctl && !force) {
		for (i = 0; i < ARRAY_SIZE(tests); i++)
			if (!only || !strcmp(only, tests[i].name))
				ksft_test_result_skip("%s: %s not present\n",
						      tests[i].name,
						      SYSCTL_ENABLE);
		ksft_finished();
	}

	pagesize = getpagesize();
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		ksft_exit_fail_perror("open /proc/self/pagemap");

	if (have_sysctl)
		ap_save_sysctls();

	/* Warm up the helpers so their own memory is in place. */
	memset(obs_had, 1, sizeof(obs_had));
	rss_anon();
	read_vmstat(&v);
	reset_prediction();

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (only && strcmp(only, tests[i].name))
			continue;
		ksft_print_msg("[RUN] %s\n", tests[i].name);
		tests[i].fn(tests[i].name);
	}

	ap_restore_sysctls();
	ksft_finished();
}
