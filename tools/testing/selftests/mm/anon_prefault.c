// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for anonymous page fault prefaulting ("anon-prefault").
 *
 * do_anonymous_page() keeps, per task, a predicted next fault address and an
 * order.  A fault at the predicted address is a hit: the order grows by one
 * and the fault maps a window of min(1 << order, vm.anon_prefault_max_pages)
 * pages starting at the faulting page.  A miss resets the order to 0 and maps
 * a single page.  After each fault the prediction is the end of the window.
 * The window never crosses vma->vm_end nor a PMD boundary.  Extra pages are
 * freshly zeroed pages on write faults and the shared zero page on read
 * faults.  There is no prefault for MADV_RANDOM, userfaultfd-armed or mlocked
 * VMAs, and MADV_SEQUENTIAL maps the full window on every fault.
 *
 * The exact fault counts asserted below come from model_seq(), which encodes
 * these rules.  Every test region is PMD (2 MiB) aligned, MADV_NOHUGEPAGE and
 * followed by a PROT_NONE guard page so that it is a VMA of its own and the
 * model knows where the VMA and PMD boundaries are.  Before each measurement
 * the task's prediction is pointed away from the region by one fault in a
 * scratch area, so the first access to a region is always a miss.
 *
 * With vm.anon_prefault_lazyfree (1 by default, 2 maps them old too), the
 * pages a write fault maps beyond the faulting one are clean and lazily
 * freeable: smaps reports them as LazyFree until written, reclaim drops
 * them without swap while unwritten (counted in anon_prefault_reclaimed)
 * and keeps them once written.  The lazyfree_* tests check this, and that
 * 0 maps ordinary dirty pages; they are skipped without that sysctl.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
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

#define CGROUP_ROOT		"/sys/fs/cgroup"
#define CGROUP_TEST		CGROUP_ROOT "/anon_prefault_test"

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
 * The "@key: N kB" line of the VMA that starts at @addr in /proc/self/smaps:
 * exact for the test region whatever the rest of the process (stack, heap,
 * stdio buffers) faults in meanwhile, which process-wide counters such as
 * RssAnon would count too.
 */
static unsigned long region_smaps_kb(void *addr, const char *key)
{
	char line[256], start[32], fmt[64];
	unsigned long kb = 0;
	bool found = false;
	FILE *f;

	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	snprintf(fmt, sizeof(fmt), "%s: %%lu kB", key);
	f = fopen("/proc/self/smaps", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/self/smaps");
	while (fgets(line, sizeof(line), f)) {
		if (!found) {
			found = !strncmp(line, start, strlen(start));
			continue;
		}
		if (sscanf(line, fmt, &kb) == 1)
			break;
	}
	fclose(f);
	if (!found)
		ksft_exit_fail_msg("no VMA at %p in /proc/self/smaps\n", addr);
	return kb;
}

/* Anonymous memory of the VMA that starts at @addr, in kB. */
static unsigned long region_anon_kb(void *addr)
{
	return region_smaps_kb(addr, "Anonymous");
}

static long minflt(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
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
	size_t map_len = len + PMD_SZ + pagesize;
	char *map, *p, *end;

	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	p = (char *)(((uintptr_t)map + PMD_SZ - 1) & ~(PMD_SZ - 1));
	end = p + len + pagesize;
	if (p > map && munmap(map, p - map))
		ksft_exit_fail_perror("munmap");
	if (map + map_len > end && munmap(end, map + map_len - end))
		ksft_exit_fail_perror("munmap");
	if (mprotect(p + len, pagesize, PROT_NONE))
		ksft_exit_fail_perror("mprotect");
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
/* Model of the predictor                                                   */
/* ------------------------------------------------------------------------ */

struct seq_model {
	unsigned long faults;	/* faults taken */
	unsigned long multi;	/* faults that mapped more than one page */
	unsigned long extra;	/* pages mapped beyond the faulting pages */
	unsigned long end;	/* first page after the last window */
};

/*
 * Expected faults when one task accesses pages [first, last) of the region
 * at @base in ascending order, one access per page, none of them populated
 * before and with no other fault of the task in between.  The first access
 * is a miss.  @vma_pages is the number of pages from @base to vma->vm_end.
 * With @madv_seq (MADV_SEQUENTIAL) every fault maps the full window.
 */
static struct seq_model model_seq(char *base, unsigned long vma_pages,
				  unsigned long first, unsigned long last,
				  unsigned int max_pages, bool madv_seq)
{
	unsigned long page = first, predicted = ULONG_MAX;
	struct seq_model m = { 0 };
	unsigned int order = 0;

	while (page < last) {
		uintptr_t addr = (uintptr_t)base + page * pagesize;
		unsigned long win, limit, pmd_end;

		if (madv_seq) {
			win = max_pages;
		} else if (page == predicted) {
			if (order < 20)
				order++;
			win = 1UL << order;
			if (win > max_pages)
				win = max_pages;
		} else {
			order = 0;
			win = 1;
		}
		pmd_end = (((addr | (PMD_SZ - 1)) + 1) - (uintptr_t)base) /
			  pagesize;
		limit = vma_pages < pmd_end ? vma_pages : pmd_end;
		if (page + win > limit)
			win = limit - page;
		m.faults++;
		if (win > 1) {
			m.multi++;
			m.extra += win - 1;
		}
		page += win;
		predicted = page;
	}
	m.end = page;
	return m;
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
	const unsigned long bound = 2 * pages / DEF_MAX_PAGES;
	struct seq_model m;
	unsigned long bad;
	long f_on, f_off;
	bool ok = true;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	m = model_seq(p, pages, 0, pages, DEF_MAX_PAGES, false);
	f_on = write_pattern_64M(p, pages);
	if (f_on > (long)bound) {
		tmsg(name, "prefault on: minor faults %ld, expected <= %lu (model %lu)\n",
		     f_on, bound, m.faults);
		ok = false;
	}
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

	tmsg(name, "%lu pages: %ld faults with prefault (model %lu), %ld without\n",
	     pages, f_on, m.faults, f_off);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 2. spec_zero                                                              */
/* ------------------------------------------------------------------------ */

static void test_spec_zero(const char *name)
{
	const unsigned long pages = 256, written = 64;
	unsigned long i, pop, extra_zero = 0;
	bool present[256];
	struct seq_model m;
	bool ok = true;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);
	m = model_seq(p, pages, 0, written, DEF_MAX_PAGES, false);
	for (i = 0; i < written; i++)
		poke(p + i * pagesize, (char)(i + 1));

	/* Look at pagemap first: reading an absent page would fault it in. */
	for (i = 0, pop = 0; i < pages; i++) {
		present[i] = populated(p, i);
		pop += present[i];
	}
	if (pop != m.end) {
		tmsg(name, "populated pages %lu, expected %lu\n", pop, m.end);
		ok = false;
	}
	for (i = 0; i < written; i++) {
		const char *q = p + i * pagesize;

		if (q[0] != (char)(i + 1) || !range_is_zero(q, 1, pagesize)) {
			tmsg(name, "written page %lu: bad content\n", i);
			ok = false;
		}
	}
	for (i = written; i < pages; i++) {
		if (!present[i])
			continue;
		if (!range_is_zero(p + i * pagesize, 0, pagesize)) {
			tmsg(name, "prefaulted page %lu is not zero\n", i);
			ok = false;
		}
		extra_zero++;
	}
	if (extra_zero != m.end - written) {
		tmsg(name, "prefaulted unwritten pages %lu, expected %lu\n",
		     extra_zero, m.end - written);
		ok = false;
	}
	unmap_region(p, pages * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 3. vma_end                                                                */
/* ------------------------------------------------------------------------ */

/*
 * Write pages [0, @written) of @p, a VMA of exactly that size, and check
 * the fault count against the model, that every written page is populated
 * and that nothing is populated in [@next, @end), the VMA that follows.
 */
static bool vma_end_one(const char *name, const char *what, char *p,
			unsigned long written, unsigned long next,
			unsigned long end)
{
	struct seq_model m;
	unsigned long n;
	bool ok = true;
	long faults;

	m = model_seq(p, written, 0, written, DEF_MAX_PAGES, false);
	faults = write_seq(p, 0, written);
	if (faults != (long)m.faults) {
		tmsg(name, "%s: minor faults %ld, expected %lu\n", what,
		     faults, m.faults);
		ok = false;
	}
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
	struct seq_model m, m2;
	unsigned long n;
	bool ok = true;
	long faults;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);

	/* Pages 500..511: the ramp reaches an 8-page window at page 507. */
	m = model_seq(p, pages, first, pmd_pages, DEF_MAX_PAGES, false);
	faults = write_seq(p, first, pmd_pages);
	if (faults != (long)m.faults) {
		tmsg(name, "minor faults %ld for pages %lu..%lu, expected %lu\n",
		     faults, first, pmd_pages - 1, m.faults);
		ok = false;
	}
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
	 * The prediction is the boundary itself: touching the first page of
	 * the next PMD is a hit and continues the ramp there.
	 */
	m2 = model_seq(p, pages, first, pmd_pages + 1, DEF_MAX_PAGES, false);
	faults = write_seq(p, pmd_pages, pmd_pages + 1);
	n = count_populated(p, pmd_pages, pages);
	if (faults != 1 || n != m2.end - pmd_pages ||
	    count_populated(p, pmd_pages, m2.end) != n) {
		tmsg(name,
		     "after touching page %lu: %ld faults, %lu pages populated in the next PMD, expected 1 fault and pages %lu..%lu\n",
		     pmd_pages, faults, n, pmd_pages, m2.end - 1);
		ok = false;
	}
	unmap_region(p, pages * pagesize);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 5. madvise                                                                */
/* ------------------------------------------------------------------------ */

static void test_madvise(const char *name)
{
	const unsigned long pages = 256;
	const size_t len = pages * pagesize;
	unsigned long n, rss0, rss1;
	struct seq_model m;
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
	m = model_seq(p, pages, 0, pages, DEF_MAX_PAGES, false);
	faults = write_seq(p, 0, pages);
	n = count_populated(p, 0, pages);
	if (faults != (long)m.faults || n != pages) {
		tmsg(name, "MADV_NORMAL: minor faults %ld, populated %lu, expected %lu and %lu\n",
		     faults, n, m.faults, pages);
		ok = false;
	}
	unmap_region(p, len);

	/* MADV_SEQUENTIAL: even the first fault maps the full window. */
	reset_prediction();
	p = map_region(len);
	if (madvise(p, len, MADV_SEQUENTIAL))
		ksft_exit_fail_perror("MADV_SEQUENTIAL");
	rss0 = region_anon_kb(p);
	faults = write_seq(p, 0, 1);
	rss1 = region_anon_kb(p);
	n = count_populated(p, 0, pages);
	if (faults != 1 || n != DEF_MAX_PAGES ||
	    count_populated(p, 0, DEF_MAX_PAGES) != DEF_MAX_PAGES) {
		tmsg(name,
		     "MADV_SEQUENTIAL first fault: %ld faults, %lu pages populated, expected 1 fault and pages 0..%d\n",
		     faults, n, DEF_MAX_PAGES - 1);
		ok = false;
	}
	if (rss1 - rss0 != DEF_MAX_PAGES * pagesize / 1024) {
		tmsg(name,
		     "MADV_SEQUENTIAL: the region's Anonymous grew by %lu kB, expected %lu kB\n",
		     rss1 - rss0, DEF_MAX_PAGES * pagesize / 1024);
		ok = false;
	}
	/* A miss far away still gets the full window. */
	faults = write_seq(p, 100, 101);
	n = count_populated(p, 100, pages);
	if (faults != 1 || n != DEF_MAX_PAGES ||
	    count_populated(p, 100, 100 + DEF_MAX_PAGES) != DEF_MAX_PAGES) {
		tmsg(name,
		     "MADV_SEQUENTIAL fault at page 100: %ld faults, %lu pages populated from 100, expected 1 fault and pages 100..%d\n",
		     faults, n, 100 + DEF_MAX_PAGES - 1);
		ok = false;
	}
	unmap_region(p, len);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 6. sparse                                                                 */
/* ------------------------------------------------------------------------ */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static unsigned long rng(void)
{
	/* xorshift64, fixed seed: runs are reproducible. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned long)rng_state;
}

static void shuffle(unsigned long *a, unsigned long n)
{
	unsigned long i, j, t;

	for (i = n - 1; i > 0; i--) {
		j = rng() % (i + 1);
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

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
	unsigned long *order, i, n, pass;
	bool ok = true, adj;

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
	shuffle(order, pages);
	ok &= sparse_one(name, "permutation", order, pages, false);

	/*
	 * A random half of the pages in random order, never visiting page
	 * p + 1 right after page p: every fault is a miss.
	 */
	for (i = 0; i < pages; i++)
		order[i] = i;
	shuffle(order, pages);
	n = pages / 2;
	for (pass = 0; pass < 1000; pass++) {
		adj = false;
		for (i = 0; i + 1 < n; i++) {
			unsigned long j, t;

			if (order[i + 1] != order[i] + 1)
				continue;
			adj = true;
			j = rng() % n;
			t = order[i + 1];
			order[i + 1] = order[j];
			order[j] = t;
		}
		if (!adj)
			break;
	}
	if (adj) {
		tmsg(name, "could not build a non-adjacent visiting order\n");
		ok = false;
	} else {
		ok &= sparse_one(name, "random-half", order, n, true);
	}
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
	struct seq_model m;
	long f0, faults;
	bool ok = true;
	char sum = 0;
	char *p;

	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(len);
	m = model_seq(p, pages, 0, pages, DEF_MAX_PAGES, false);

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
	if (faults != (long)m.faults) {
		tmsg(name, "read: minor faults %ld, expected %lu\n",
		     faults, m.faults);
		ok = false;
	}
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
	const unsigned long r1_pages = 128, r2_pages = 64, r2_touch = 7;
	struct seq_model m, m2;
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
	 * Write pages 0..6 of R2: the last fault (page 3) mapped 3..6, so the
	 * prediction is page 7, the first page not populated.
	 */
	reset_prediction();
	m = model_seq(r2, r2_pages, 0, r2_touch, DEF_MAX_PAGES, false);
	write_seq(r2, 0, r2_touch);
	next = m.end;
	n = count_populated(r2, 0, r2_pages);
	if (n != next || populated(r2, next)) {
		tmsg(name, "setup: %lu pages of R2 populated, expected %lu\n",
		     n, next);
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

	/* The parent kept its prediction: page 7 is a hit for it. */
	m2 = model_seq(r2, r2_pages, 0, next + 1, DEF_MAX_PAGES, false);
	write_seq(r2, next, next + 1);
	n = count_populated(r2, next, r2_pages);
	if (n != m2.end - next) {
		tmsg(name, "parent: fault at page %lu populated %lu pages, expected %lu (a hit)\n",
		     next, n, m2.end - next);
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

static void cgroup_remove(void)
{
	int i;

	for (i = 0; i < 200; i++) {
		if (!rmdir(CGROUP_TEST) || errno == ENOENT)
			return;
		usleep(10000);
	}
	ksft_print_msg("cannot remove %s: %s\n", CGROUP_TEST, strerror(errno));
}

static long memcg_events(const char *key)
{
	char buf[1024], *s;
	size_t klen = strlen(key);

	if (ap_read_file(CGROUP_TEST "/memory.events", buf, sizeof(buf)))
		return -1;
	for (s = buf; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (!strncmp(s, key, klen) && s[klen] == ' ')
			return strtol(s + klen + 1, NULL, 10);
	return -1;
}

/* Child: join the test cgroup, or exit with status 2. */
static void join_cgroup(void)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", getpid());
	if (ap_write_file(CGROUP_TEST "/cgroup.procs", buf))
		_exit(2);
}

/* Child: join the cgroup and write @len bytes sequentially. */
static void memcg_child(size_t len)
{
	char *p;
	size_t off;

	join_cgroup();
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(3);
	if (madvise(p, len, MADV_NOHUGEPAGE))
		_exit(4);
	for (off = 0; off < len; off += pagesize)
		poke(p + off, 1);
	_exit(0);
}

static void test_memcg(const char *name)
{
	const char *err;
	bool ok = true;
	int enable;

	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}

	for (enable = 1; enable >= 0; enable--) {
		long oom_kill, max_events;
		int status;
		pid_t pid;

		set_prefault(enable, DEF_MAX_PAGES);
		cgroup_remove();
		if (mkdir(CGROUP_TEST, 0755))
			ksft_exit_fail_perror("mkdir " CGROUP_TEST);
		if (ap_write_file(CGROUP_TEST "/memory.max", "67108864")) {
			cgroup_remove();
			ksft_test_result_skip("%s: cannot set memory.max\n",
					      name);
			return;
		}
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0)
			ksft_exit_fail_perror("fork");
		if (!pid)
			memcg_child(56 * SZ_1M);
		if (waitpid(pid, &status, 0) != pid)
			ksft_exit_fail_perror("waitpid");
		oom_kill = memcg_events("oom_kill");
		max_events = memcg_events("max");
		if (!WIFEXITED(status) || WEXITSTATUS(status) || oom_kill) {
			tmsg(name,
			     "anon_prefault=%d: child %s %d, oom_kill %ld, expected exit status 0 and oom_kill 0\n",
			     enable, WIFEXITED(status) ? "exit status" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) :
						 WTERMSIG(status), oom_kill);
			ok = false;
		} else {
			tmsg(name,
			     "anon_prefault=%d: 56 MiB under memory.max=64M, oom_kill 0, max events %ld\n",
			     enable, max_events);
		}
		cgroup_remove();
	}
	set_prefault(1, DEF_MAX_PAGES);
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
	static const char * const bad_lazyfree[] = { "-1", "3", "x1" };
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
	if (ap_saved.have_lazyfree) {
		for (i = 0; i < ARRAY_SIZE(bad_lazyfree); i++)
			ok &= sysctl_reject(name, SYSCTL_LAZYFREE,
					    bad_lazyfree[i]);
		ok &= sysctl_accept(name, SYSCTL_LAZYFREE, "0");
		ok &= sysctl_accept(name, SYSCTL_LAZYFREE, "2");
		ok &= sysctl_reject(name, SYSCTL_LAZYFREE, "3");
		ok &= sysctl_accept(name, SYSCTL_LAZYFREE, "1");
	}
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */
/* 13. vmstat                                                                */
/* ------------------------------------------------------------------------ */

struct ap_vmstat {
	long fault, page, fallback;
	long reclaimed;		/* -1 without vm.anon_prefault_lazyfree */
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
	v->reclaimed = -1;
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
			else if (!strcmp(key, "anon_prefault_reclaimed"))
				v->reclaimed = val;
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
	struct seq_model m;
	long faults, dfault, dpage, dfallback;
	bool ok = true;
	char *p;

	if (!read_vmstat(&v0)) {
		ksft_test_result_fail("%s: %s missing from /proc/vmstat\n", name,
				      "anon_prefault_{fault,page,fallback}");
		return;
	}

	/* Prefault on: one 512-page PMD written sequentially. */
	set_prefault(1, DEF_MAX_PAGES);
	p = map_region(pages * pagesize);
	m = model_seq(p, pages, 0, pages, DEF_MAX_PAGES, false);
	read_vmstat(&v0);
	faults = write_seq(p, 0, pages);
	read_vmstat(&v1);
	dfault = v1.fault - v0.fault;
	dpage = v1.page - v0.page;
	dfallback = v1.fallback - v0.fallback;
	tmsg(name,
	     "on: faults %ld (model %lu), anon_prefault_fault +%ld (model %lu), anon_prefault_page +%ld (model %lu), anon_prefault_fallback +%ld\n",
	     faults, m.faults, dfault, m.multi, dpage, m.extra, dfallback);
	/*
	 * Exact in a quiet system: nothing else in the guest takes anonymous
	 * faults meanwhile.  Every page not mapped by its own fault was
	 * mapped as an extra page of another fault.  Two faults map a single
	 * page: the first (a miss) and the last one, whose window is cut to
	 * one page by the PMD boundary at page 511.
	 */
	if (faults != (long)m.faults) {
		tmsg(name, "on: minor faults %ld, expected %lu\n",
		     faults, m.faults);
		ok = false;
	}
	if (dpage != (long)pages - faults) {
		tmsg(name, "on: anon_prefault_page delta %ld, expected %ld (pages - faults)\n",
		     dpage, (long)pages - faults);
		ok = false;
	}
	if (dfault != (long)m.multi) {
		tmsg(name, "on: anon_prefault_fault delta %ld, expected %lu\n",
		     dfault, m.multi);
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
/* 15. lazyfree_smaps                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Map one PMD of @pages pages, MADV_SEQUENTIAL, and write the first page of
 * every window of @win pages: each write is a fault that maps the full
 * window, so every page is mapped and one in @win is written (by its own
 * fault). Returns the region.
 */
static char *map_spec_windows(unsigned long pages, unsigned int win)
{
	char *p = map_region(pages * pagesize);
	unsigned long i;

	if (madvise(p, pages * pagesize, MADV_SEQUENTIAL))
		ksft_exit_fail_perror("MADV_SEQUENTIAL");
	for (i = 0; i < pages; i += win)
		poke(p + i * pagesize, 1);
	return p;
}

static const char * const lazyfree_names[] = { "dirty", "clean", "clean+old" };

/* True if swap is enabled: written pages could then leave memory too. */
static bool swap_enabled(void)
{
	char buf[4096];

	if (ap_read_file("/proc/swaps", buf, sizeof(buf)))
		return false;
	return !!strchr(buf, '\n');
}

/*
 * False, with the test reported as skipped, if this kernel lacks
 * vm.anon_prefault_lazyfree or, with @no_swap, if swap is enabled.
 */
static bool lazyfree_usable(const char *name, bool no_swap)
{
	if (!ap_saved.have_lazyfree) {
		ksft_test_result_skip("%s: %s not present\n", name,
				      SYSCTL_LAZYFREE);
		return false;
	}
	if (no_swap && swap_enabled()) {
		ksft_test_result_skip("%s: needs a system without swap\n", name);
		return false;
	}
	return true;
}

/* Whether the CPU sets the dirty bit of a writable PTE without a fault. */
static bool hw_dirty_bit(void)
{
	struct utsname u;

	return !uname(&u) && (!strcmp(u.machine, "x86_64") ||
			      !strcmp(u.machine, "i686"));
}

/*
 * In a child, whose soft-dirty state nothing else depends on: clear it,
 * fault a window, write one of its speculative pages without a fault. The
 * page must read as soft-dirty.
 */
static bool lazyfree_softdirty(const char *name)
{
	const unsigned long pages = PMD_SZ / pagesize;
	int status;
	pid_t pid;
	char *p;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid) {
		close(pagemap_fd);
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
		if (pagemap_fd < 0)
			_exit(2);
		p = map_region(pages * pagesize);
		if (madvise(p, pages * pagesize, MADV_SEQUENTIAL))
			_exit(2);
		clear_softdirty();
		poke(p, 1);
		poke(p + 3 * pagesize, 3);
		if (!populated(p, 3) || !pagemap_is_softdirty(pagemap_fd, p) ||
		    !pagemap_is_softdirty(pagemap_fd, p + 3 * pagesize)) {
			tmsg(name,
			     "after clear_refs, written pages 0 and 3 (populated %d): soft-dirty %d and %d, expected 1 and 1\n",
			     populated(p, 3), pagemap_is_softdirty(pagemap_fd, p),
			     pagemap_is_softdirty(pagemap_fd, p + 3 * pagesize));
			_exit(1);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		ksft_exit_fail_perror("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		tmsg(name, "soft-dirty child failed (status %#x)\n", status);
		return false;
	}
	return true;
}

/*
 * vm.anon_prefault_lazyfree = 1 and 2: the pages mapped beyond the
 * faulting ones are reported as LazyFree in smaps until the program writes
 * them, and writing one takes no fault (x86 sets the dirty bit in the page
 * table walk). 0: none is. The PTEs of speculative pages are soft-dirty,
 * so that a write after clear_refs is not missed although it does not
 * fault.
 */
static void test_lazyfree_smaps(const char *name)
{
	const unsigned long pages = PMD_SZ / pagesize;
	const unsigned long kb = pagesize / 1024;
	const unsigned long written = pages / DEF_MAX_PAGES;
	bool ok = true, sd = softdirty_supported();
	int mode;

	if (!lazyfree_usable(name, false))
		return;
	for (mode = 0; mode <= 2; mode++) {
		unsigned long pop, lazy, lazy2, expect;
		long flt;
		char *p, c;

		set_prefault(1, DEF_MAX_PAGES);
		ap_set_lazyfree(mode);
		p = map_spec_windows(pages, DEF_MAX_PAGES);
		pop = count_populated(p, 0, pages);
		lazy = region_smaps_kb(p, "LazyFree");
		expect = mode ? (pages - written) * kb : 0;
		if (pop != pages || lazy != expect) {
			tmsg(name, "%s: populated %lu, LazyFree %lu kB; expected %lu and %lu kB\n",
			     lazyfree_names[mode], pop, lazy, pages, expect);
			ok = false;
		}
		/* Write page 5 (speculative), read page 6 (speculative). */
		flt = minflt(RUSAGE_SELF);
		poke(p + 5 * pagesize, 5);
		c = peek(p + 6 * pagesize);
		flt = minflt(RUSAGE_SELF) - flt;
		if (c) {
			tmsg(name, "%s: speculative page reads %d\n",
			     lazyfree_names[mode], c);
			ok = false;
		}
		lazy2 = region_smaps_kb(p, "LazyFree");
		expect = mode ? lazy - kb : 0;
		if (lazy2 != expect) {
			tmsg(name,
			     "%s: LazyFree %lu kB after a write to a speculative page, expected %lu kB\n",
			     lazyfree_names[mode], lazy2, expect);
			ok = false;
		}
		if (flt && hw_dirty_bit()) {
			tmsg(name, "%s: %ld faults writing and reading mapped pages, expected 0\n",
			     lazyfree_names[mode], flt);
			ok = false;
		}
		unmap_region(p, pages * pagesize);
	}
	ap_set_lazyfree(1);
	if (sd)
		ok &= lazyfree_softdirty(name);
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s%s\n", name, sd ? "" : " (soft-dirty not supported)");
}

/* ------------------------------------------------------------------------ */
/* 16. lazyfree_pageout                                                      */
/* ------------------------------------------------------------------------ */

#define LF_PAT(i)	(0x4c46000000000000ULL | (i))
#define poke64(addr, val) \
	__atomic_store_n((unsigned long long *)(addr), (val), __ATOMIC_RELAXED)
#define peek64(addr) \
	__atomic_load_n((const unsigned long long *)(addr), __ATOMIC_RELAXED)

/*
 * MADV_PAGEOUT reclaims the pages of a region at once, references
 * ignored. Without swap, only the speculative pages the program never
 * wrote, and the pages it gave up with MADV_FREE, can go: exactly those
 * leave, anon_prefault_reclaimed counts exactly the former, the written
 * ones (by their fault or afterwards) keep their data, and a speculative
 * page that was only read reads zeroes again. With
 * vm.anon_prefault_lazyfree = 0 only the MADV_FREE pages go.
 */
static void test_lazyfree_pageout(const char *name)
{
	const unsigned long pages = PMD_SZ / pagesize;
	struct ap_vmstat v0, v1;
	cpu_set_t cpus, old;
	bool ok = true;
	int mode;

	if (!lazyfree_usable(name, true))
		return;
	/* MADV_PAGEOUT drains the LRU batches of this CPU only. */
	if (sched_getaffinity(0, sizeof(old), &old))
		ksft_exit_fail_perror("sched_getaffinity");
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	if (sched_setaffinity(0, sizeof(cpus), &cpus))
		ksft_exit_fail_perror("sched_setaffinity");

	for (mode = 0; mode <= 2; mode++) {
		unsigned long i, nwritten = 0, nfreed = 0, gone = 0, lost = 0;
		unsigned long nonzero = 0, expect;
		long dreclaimed;
		bool was_written;
		char *p;

		set_prefault(1, DEF_MAX_PAGES);
		ap_set_lazyfree(mode);
		p = map_spec_windows(pages, DEF_MAX_PAGES);
		/* Write window page 3, read window page 5: no fault either. */
		for (i = 0; i < pages; i++) {
			if (i % DEF_MAX_PAGES == 0 || i % DEF_MAX_PAGES == 3) {
				poke64(p + i * pagesize, LF_PAT(i));
				nwritten++;
			} else if (i % DEF_MAX_PAGES == 5) {
				nonzero += !!peek(p + i * pagesize);
			}
		}
		/* Window page 7: given up with MADV_FREE, counted as such. */
		for (i = 7; i < pages; i += DEF_MAX_PAGES) {
			if (madvise(p + i * pagesize, pagesize, MADV_FREE))
				ksft_exit_fail_perror("MADV_FREE");
			nfreed++;
		}
		read_vmstat(&v0);
		if (madvise(p, pages * pagesize, MADV_PAGEOUT)) {
			ksft_test_result_skip("%s: MADV_PAGEOUT: %s\n", name,
					      strerror(errno));
			unmap_region(p, pages * pagesize);
			goto out;
		}
		read_vmstat(&v1);
		dreclaimed = v1.reclaimed - v0.reclaimed;
		/* All of pagemap first: reading a page that left faults. */
		for (i = 0; i < pages; i++) {
			was_written = i % DEF_MAX_PAGES == 0 ||
				      i % DEF_MAX_PAGES == 3;
			if (!populated(p, i)) {
				gone++;
				lost += was_written;
			}
		}
		for (i = 0; i < pages; i++) {
			char *pg = p + i * pagesize;

			was_written = i % DEF_MAX_PAGES == 0 ||
				      i % DEF_MAX_PAGES == 3;
			if (was_written &&
			    peek64(pg) != LF_PAT(i))
				lost++;
			else if (!was_written && !range_is_zero(pg, 0, pagesize))
				nonzero++;
		}
		tmsg(name,
		     "%s: %lu pages, %lu written, %lu MADV_FREE, %lu reclaimed (anon_prefault_reclaimed +%ld)\n",
		     lazyfree_names[mode], pages, nwritten, nfreed, gone,
		     dreclaimed);
		if (lost || nonzero) {
			tmsg(name,
			     "%s: %lu written pages lost or changed, %lu unwritten pages not zero\n",
			     lazyfree_names[mode], lost, nonzero);
			ok = false;
		}
		expect = mode ? pages - nwritten : nfreed;
		if (gone != expect || dreclaimed != (long)(expect - nfreed)) {
			tmsg(name, "%s: expected %lu pages reclaimed, %lu counted\n",
			     lazyfree_names[mode], expect, expect - nfreed);
			ok = false;
		}
		unmap_region(p, pages * pagesize);
	}
	ksft_test_result(ok, "%s\n", name);
out:
	if (sched_setaffinity(0, sizeof(old), &old))
		ksft_exit_fail_perror("sched_setaffinity");
	ap_set_lazyfree(1);
	set_prefault(1, DEF_MAX_PAGES);
}

/* ------------------------------------------------------------------------ */
/* 17. lazyfree_memcg                                                        */
/* ------------------------------------------------------------------------ */

#define LFM_MAX		(48 * SZ_1M)	/* memory.max */
#define LFM_HOLDER	(32 * SZ_1M)	/* prefaulted, one page in 16 written */
#define LFM_PRESSURE	(32 * SZ_1M)	/* written in full */

struct lfm_result {
	unsigned long mapped;		/* holder: pages mapped before */
	unsigned long dropped;		/* unwritten pages gone after */
	unsigned long bad;		/* written pages lost or changed */
	unsigned long nonzero;		/* unwritten pages not zero */
};

/*
 * The holder: prefault LFM_HOLDER bytes writing one page per window, tell
 * the parent (one byte on @ready), wait for the pressure to be over (one
 * byte on @go), then check what is left.
 */
static void lfm_holder(int ready, int go, struct lfm_result *r)
{
	const unsigned long pages = LFM_HOLDER / pagesize;
	unsigned long i;
	char *p, c = 0;
	unsigned char *before;

	join_cgroup();
	close(pagemap_fd);
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	before = calloc(pages, 1);
	if (pagemap_fd < 0 || !before)
		_exit(3);
	p = map_spec_windows(pages, DEF_MAX_PAGES);
	for (i = 0; i < pages; i += DEF_MAX_PAGES)
		poke64(p + i * pagesize, LF_PAT(i));
	for (i = 0; i < pages; i++) {
		before[i] = populated(p, i);
		r->mapped += before[i];
	}
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(4);
	/* All of pagemap first: reading a page that left faults. */
	for (i = 0; i < pages; i++)
		if (i % DEF_MAX_PAGES && before[i] && !populated(p, i))
			r->dropped++;
	for (i = 0; i < pages; i++) {
		char *pg = p + i * pagesize;

		if (i % DEF_MAX_PAGES == 0) {
			if (peek64(pg) != LF_PAT(i))
				r->bad++;
		} else if (!range_is_zero(pg, 0, pagesize)) {
			r->nonzero++;
		}
	}
	_exit(0);
}

static const char *exit_str(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else
		snprintf(buf, len, "signal %d", WTERMSIG(status));
	return buf;
}

/*
 * A memory cgroup without swap: a holder prefaults LFM_HOLDER bytes but
 * writes one page in 16; then a second process writes LFM_PRESSURE bytes
 * in the same cgroup, more than memory.max leaves next to the holder's
 * mapped pages. With prefault off, the holder has only its written pages
 * and nobody is OOM-killed. With clean, lazily freeable speculative pages,
 * reclaim drops enough of the holder's unwritten pages: no OOM kill either,
 * anon_prefault_reclaimed rises by at least the pages that left, and the
 * written pages keep their data. With dirty speculative pages
 * (vm.anon_prefault_lazyfree = 0) nothing can be reclaimed, which the
 * OOM kill shows: the scenario does need the pages to be lazily freeable.
 */
static void test_lazyfree_memcg(const char *name)
{
	static const struct {
		int enable, lazyfree;
		bool oom;
	} runs[] = { { 0, 1, false }, { 1, 1, false }, { 1, 2, false },
		     { 1, 0, true } };
	struct lfm_result *r;
	const char *err;
	unsigned int k;
	bool ok = true;

	if (!lazyfree_usable(name, true))
		return;
	err = cgroup_setup();
	if (err) {
		ksft_test_result_skip("%s: %s\n", name, err);
		return;
	}
	r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		ksft_exit_fail_perror("mmap");
	/* An OOM-killed holder must not take the test down with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);

	for (k = 0; k < ARRAY_SIZE(runs); k++) {
		int ready[2], go[2], hst, pst;
		char what[64], b1[32], b2[32], c = 0;
		struct ap_vmstat v0, v1;
		long oom_kill, dreclaimed;
		pid_t holder, pressure;

		snprintf(what, sizeof(what), "anon_prefault=%d lazyfree=%d",
			 runs[k].enable, runs[k].lazyfree);
		set_prefault(runs[k].enable, DEF_MAX_PAGES);
		ap_set_lazyfree(runs[k].lazyfree);
		memset(r, 0, sizeof(*r));
		cgroup_remove();
		if (mkdir(CGROUP_TEST, 0755))
			ksft_exit_fail_perror("mkdir " CGROUP_TEST);
		snprintf(b1, sizeof(b1), "%lu", LFM_MAX);
		if (ap_write_file(CGROUP_TEST "/memory.max", b1))
			ksft_exit_fail_msg("cannot set memory.max\n");
		if (pipe(ready) || pipe(go))
			ksft_exit_fail_perror("pipe");
		fflush(stdout);
		fflush(stderr);
		holder = fork();
		if (holder < 0)
			ksft_exit_fail_perror("fork");
		if (!holder)
			lfm_holder(ready[1], go[0], r);
		close(ready[1]);
		close(go[0]);
		/* EOF instead of a byte: the holder died before it was ready. */
		if (read(ready[0], &c, 1) != 1)
			holder = -holder;
		read_vmstat(&v0);
		pressure = fork();
		if (pressure < 0)
			ksft_exit_fail_perror("fork");
		if (!pressure)
			memcg_child(LFM_PRESSURE);
		if (waitpid(pressure, &pst, 0) != pressure)
			ksft_exit_fail_perror("waitpid");
		read_vmstat(&v1);
		if (write(go[1], &c, 1) != 1 && errno != EPIPE)
			ksft_exit_fail_perror("write");
		close(go[1]);
		close(ready[0]);
		if (holder < 0)
			holder = -holder;
		if (waitpid(holder, &hst, 0) != holder)
			ksft_exit_fail_perror("waitpid");
		oom_kill = memcg_events("oom_kill");
		dreclaimed = v1.reclaimed - v0.reclaimed;
		tmsg(name,
		     "%s: holder %s (%lu pages mapped, %lu unwritten ones dropped), pressure %s, oom_kill %ld, anon_prefault_reclaimed +%ld\n",
		     what, exit_str(hst, b1, sizeof(b1)), r->mapped, r->dropped,
		     exit_str(pst, b2, sizeof(b2)), oom_kill, dreclaimed);
		cgroup_remove();

		if (runs[k].oom) {
			if (oom_kill <= 0) {
				tmsg(name,
				     "%s: expected an OOM kill: the scenario exerts no pressure\n",
				     what);
				ok = false;
			}
			continue;
		}
		if (oom_kill || !WIFEXITED(hst) || WEXITSTATUS(hst) ||
		    !WIFEXITED(pst) || WEXITSTATUS(pst)) {
			tmsg(name, "%s: expected no OOM kill and exit 0 from both\n",
			     what);
			ok = false;
			continue;
		}
		if (r->bad || r->nonzero) {
			tmsg(name,
			     "%s: %lu written pages lost or changed, %lu unwritten pages not zero\n",
			     what, r->bad, r->nonzero);
			ok = false;
		}
		if (runs[k].enable &&
		    (!r->dropped || dreclaimed < (long)r->dropped)) {
			tmsg(name,
			     "%s: expected unwritten pages dropped and anon_prefault_reclaimed to rise by at least as many\n",
			     what);
			ok = false;
		}
	}
	munmap(r, sizeof(*r));
	signal(SIGPIPE, SIG_DFL);
	ap_set_lazyfree(1);
	set_prefault(1, DEF_MAX_PAGES);
	ksft_test_result(ok, "%s\n", name);
}

/* ------------------------------------------------------------------------ */

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
	{ "threads",		test_threads },
	{ "sysctl_input",	test_sysctl_input },
	{ "vmstat",		test_vmstat },
	{ "mlock_populate",	test_mlock_populate },
	{ "lazyfree_smaps",	test_lazyfree_smaps },
	{ "lazyfree_pageout",	test_lazyfree_pageout },
	{ "lazyfree_memcg",	test_lazyfree_memcg },
};

static void usage(const char *prog)
{
	unsigned int i;

	printf("Usage: %s [-h] [-t test]\n", prog);
	printf("  -h       show this help\n");
	printf("  -t test  run only this test (others are reported as skipped)\n");
	printf("Tests:");
	for (i = 0; i < ARRAY_SIZE(tests); i++)
		printf(" %s", tests[i].name);
	printf("\n");
}

int main(int argc, char **argv)
{
	const char *only = NULL;
	struct ap_vmstat v;
	bool force = false;
	unsigned int i;
	int opt;

	/* -f (undocumented): run even without the sysctls, for debugging. */
	while ((opt = getopt(argc, argv, "hft:")) != -1) {
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
		default:
			usage(argv[0]);
			return KSFT_FAIL;
		}
	}

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(tests));

	have_sysctl = !access(SYSCTL_ENABLE, F_OK);
	if (!have_sysctl && !force) {
		for (i = 0; i < ARRAY_SIZE(tests); i++)
			ksft_test_result_skip("%s: %s not present\n",
					      tests[i].name, SYSCTL_ENABLE);
		ksft_finished();
	}

	pagesize = getpagesize();
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		ksft_exit_fail_perror("open /proc/self/pagemap");

	if (have_sysctl)
		ap_save_sysctls();

	/* Warm up the helpers so their own memory is in place. */
	rss_anon();
	read_vmstat(&v);
	reset_prediction();

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		if (only && strcmp(only, tests[i].name)) {
			ksft_test_result_skip("%s: not selected\n",
					      tests[i].name);
			continue;
		}
		ksft_print_msg("[RUN] %s\n", tests[i].name);
		tests[i].fn(tests[i].name);
	}

	ap_restore_sysctls();
	ksft_finished();
}
