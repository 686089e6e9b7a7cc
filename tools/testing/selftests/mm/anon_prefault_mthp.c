// SPDX-License-Identifier: GPL-2.0
/*
 * Anticipatory anonymous prefault with mTHP: a size set to "auto" is used
 * where the predictor sees a stream, and a size enabled "always" gives
 * every fault the folio mTHP alone gives it, and a stream more folios of
 * that size per fault. Either way a fault maps at most
 * vm.anon_prefault_max_pages pages more than with the sysctl off.
 *
 * With only the 64 KiB size enabled ("auto" or "always"), every test runs
 * an access pattern on a fresh PMD aligned region and reads what the
 * kernel did: minor faults (getrusage), the pages populated (pagemap), the
 * order and alignment of the folio of every page (pagemap and
 * /proc/kpageflags), the mTHP statistics of the 64 KiB size and the
 * anon_prefault counters of /proc/vmstat. It asserts properties, not a
 * copy of the predictor: every page written is populated, the counters
 * account for every page and folio populated, bounds on faults and on the
 * pages mapped singly, and, where a configuration must behave as another
 * (mTHP alone, the order-0 window), the same writes measured in that
 * configuration, page for page and count for count.
 *
 *  - seq_order: with "auto", a sequential writer is mapped in 64 KiB
 *    folios after at most 128 KiB of single pages (its ramp, and a stream
 *    that starts off the 64 KiB alignment maps single pages up to it),
 *    no fault maps more than max_pages pages, and with the default cap
 *    the writer takes the faults of the order-0 window.
 *  - sparse: stride 2, stride 4 and random pages, no two of them
 *    neighbours: "always" maps with the predictor on the folios and the
 *    pages it maps with it off (64 KiB per fault), in no more faults;
 *    "auto" maps only the pages touched.
 *  - fallback: a populated page in the way of a 64 KiB folio makes the
 *    fault map single pages instead; the stream goes on past it.
 *  - eligibility: "always", "inherit" and "madvise" give a sequential
 *    writer at least mTHP alone's folios, page for page, in fewer faults,
 *    and are mTHP alone under MADV_RANDOM; "auto" maps single pages with
 *    the sysctl off, under MADV_RANDOM and in mlocked regions, with or
 *    without MADV_HUGEPAGE, which changes nothing for it, and order-0
 *    windows under MADV_NOHUGEPAGE and PR_SET_THP_DISABLE;
 *    MADV_NOPREFAULT and PR_SET_ANON_PREFAULT_DISABLE leave "always" mTHP
 *    alone and "auto" single pages.
 *  - smaps: THPeligible is 1 exactly where a sequential writer gets
 *    64 KiB folios, "auto" included.
 *  - sysfs: "auto" is offered and read back for the 64 KiB size, and
 *    refused (EINVAL) for the PMD size.
 *  - cap: with 16, 64, 256 and 1024 KiB "auto", a stream that stops
 *    leaves at most max_pages - 1 untouched pages mapped, never more than
 *    it had written, and none past its page table; with 16, 64, 128, 256
 *    and 1024 KiB "always", one size at a time and together, at most
 *    max_pages pages beyond what mTHP alone maps, none with a size larger
 *    than max_pages pages.
 *  - tail_zero: the pages a window maps ahead of a stream that stops read
 *    zero, and the data written survives fork.
 *  - edges: "always" in a VMA that starts or ends inside a 64 KiB block
 *    gets mTHP alone's folios.
 *  - stats: the 64 KiB size's anon_fault_alloc and anon_prefault_alloc
 *    add up to what its nr_anon gains, and to the folios pagemap shows.
 *  - swap: an "auto" folio swapped out comes back as a 64 KiB folio where
 *    "auto" applies (the sysctl on), as single pages where it does not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "vm_util.h"
#include "anon_prefault_util.h"

#define PMD_SZ			(2UL << 20)
#define FOLIO_KB		64
#define STATS_DIR		"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/"

#ifndef MADV_NOPREFAULT
#define MADV_NOPREFAULT		26
#endif
#ifndef PR_SET_ANON_PREFAULT_DISABLE
#define PR_SET_ANON_PREFAULT_DISABLE	0x41504653	/* "APFS" */
#endif

#define KPF_COMPOUND_HEAD	15
#define KPF_COMPOUND_TAIL	16

#define poke(addr, val)	__atomic_store_n((char *)(addr), (char)(val), __ATOMIC_RELAXED)
#define peek(addr)	__atomic_load_n((const char *)(addr), __ATOMIC_RELAXED)

static size_t pagesize;
static unsigned int forder;	/* order of a 64 KiB folio */
static int pagemap_fd = -1, kpageflags_fd = -1;

/* ------------------------------------------------------------------------ */
/* What the kernel reports                                                   */
/* ------------------------------------------------------------------------ */

struct counts {
	long minflt;
	long long ap_fault, ap_page, lowered, large;	/* /proc/vmstat */
	long long alloc, fallback, pf_alloc;		/* 64 KiB mTHP stats */
};

static long long vmstat_get(const char *key)
{
	char line[128];
	size_t len = strlen(key);
	long long v = -1;
	FILE *f;

	f = fopen("/proc/vmstat", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/vmstat");
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ' ') {
			v = atoll(line + len + 1);
			break;
		}
	fclose(f);
	if (v < 0)
		ksft_exit_fail_msg("%s not in /proc/vmstat\n", key);
	return v;
}

static long long stat_get(const char *name)
{
	char path[160], buf[32];

	snprintf(path, sizeof(path), STATS_DIR "%s", name);
	if (ap_read_file(path, buf, sizeof(buf)))
		ksft_exit_fail_msg("cannot read %s\n", path);
	return atoll(buf);
}

static void counts_read(struct counts *c)
{
	struct rusage ru;

	c->ap_fault = vmstat_get("anon_prefault_fault");
	c->ap_page = vmstat_get("anon_prefault_page");
	c->lowered = vmstat_get("anon_prefault_order_lowered");
	c->large = vmstat_get("anon_prefault_large_folio");
	c->alloc = stat_get("anon_fault_alloc");
	c->fallback = stat_get("anon_fault_fallback");
	c->pf_alloc = stat_get("anon_prefault_alloc");
	if (getrusage(RUSAGE_SELF, &ru))
		ksft_exit_fail_perror("getrusage");
	c->minflt = ru.ru_minflt;
}

/* ------------------------------------------------------------------------ */
/* Regions and checks                                                        */
/* ------------------------------------------------------------------------ */

/* @len bytes, PMD aligned, a VMA of its own (a PROT_NONE guard follows). */
static char *map_region(size_t len)
{
	const char *what;
	char *p = ap_map_region(len, PROT_READ | PROT_WRITE, &what);

	if (!p)
		ksft_exit_fail_perror(what);
	return p;
}

static void unmap_region(char *p, size_t len)
{
	if (munmap(p, len + pagesize))
		ksft_exit_fail_perror("munmap");
}

static uint64_t kpageflags(unsigned long pfn)
{
	uint64_t fl;

	if (pread(kpageflags_fd, &fl, sizeof(fl), pfn * sizeof(fl)) !=
	    sizeof(fl))
		ksft_exit_fail_perror("pread of the page's flags");
	return fl;
}

/*
 * The order of the folio that maps page @i of @p (0 for a single page), -1
 * if the page is not populated, -2 if it is part of a large folio that is
 * not a naturally aligned 64 KiB one, in the region and in physical memory.
 */
static int page_order(char *p, unsigned long i)
{
	unsigned long head = i & ~((1UL << forder) - 1), pfn, hpfn;
	uint64_t fl;

	if (!pagemap_is_populated(pagemap_fd, p + i * pagesize))
		return -1;
	pfn = pagemap_get_pfn(pagemap_fd, p + i * pagesize);
	fl = kpageflags(pfn);
	if (!(fl & ((1ULL << KPF_COMPOUND_HEAD) | (1ULL << KPF_COMPOUND_TAIL))))
		return 0;
	if (!(fl & (1ULL << (i == head ? KPF_COMPOUND_HEAD :
				 KPF_COMPOUND_TAIL))))
		return -2;
	if (!pagemap_is_populated(pagemap_fd, p + head * pagesize))
		return -2;
	hpfn = pagemap_get_pfn(pagemap_fd, p + head * pagesize);
	if (pfn != hpfn + (i - head) || (hpfn & ((1UL << forder) - 1)) ||
	    !(kpageflags(hpfn) & (1ULL << KPF_COMPOUND_HEAD)))
		return -2;
	return forder;
}

static bool cmp_count(const char *name, const char *what, long long got,
		      long long want)
{
	if (got == want)
		return true;
	ksft_print_msg("%s: %s %lld, expected %lld\n", name, what, got, want);
	return false;
}

/* ------------------------------------------------------------------------ */
/* What a pattern did                                                        */
/* ------------------------------------------------------------------------ */

/* A region after an access pattern, as pagemap and the counters show it. */
struct obs {
	unsigned long npages;	/* the region, PMD aligned, a VMA of its own */
	int *ord;		/* page_order() of every page of the region */
	unsigned long pop;	/* pages populated */
	unsigned long pre;	/* of which populated before the pattern */
	unsigned long big;	/* 64 KiB folios */
	struct counts d;	/* what the counters moved by */
};

/* Read @p's pages into @o, and the counters' moves since @before. */
static void observe(struct obs *o, char *p, unsigned long npages,
		    struct counts *before)
{
	struct counts after;
	unsigned long i;

	counts_read(&after);
	memset(o, 0, sizeof(*o));
	o->d.minflt = after.minflt - before->minflt;
	o->d.ap_fault = after.ap_fault - before->ap_fault;
	o->d.ap_page = after.ap_page - before->ap_page;
	o->d.lowered = after.lowered - before->lowered;
	o->d.large = after.large - before->large;
	o->d.alloc = after.alloc - before->alloc;
	o->d.fallback = after.fallback - before->fallback;
	o->d.pf_alloc = after.pf_alloc - before->pf_alloc;
	o->npages = npages;
	o->ord = calloc(npages, sizeof(*o->ord));
	if (!o->ord)
		ksft_exit_fail_perror("calloc");
	for (i = 0; i < npages; i++) {
		o->ord[i] = page_order(p, i);
		o->pop += o->ord[i] >= 0;
		o->big += o->ord[i] == (int)forder &&
			  !(i & ((1UL << forder) - 1));
	}
}

/*
 * What every pattern must leave, whatever the configuration: the pages
 * written (@ord[0..n)) are populated, every large folio is a naturally
 * aligned 64 KiB one, and the counters account for every page and folio
 * the pattern populated. A fault maps one page, or one 64 KiB folio that
 * mTHP's anon_fault_alloc counts; anon_prefault_page counts the pages a
 * window mapped beyond that, the 64 KiB size's anon_prefault_alloc and
 * anon_prefault_large_folio the 64 KiB folios among them. No allocation
 * fails in these tests.
 */
static bool consistent(const char *name, struct obs *o,
		       const unsigned long *ord, unsigned long n)
{
	long long fsz = 1LL << forder;
	unsigned long i, lost = 0, odd = 0;
	bool ok = true;

	for (i = 0; i < n; i++)
		lost += o->ord[ord[i]] < 0;
	for (i = 0; i < o->npages; i++)
		odd += o->ord[i] == -2;
	if (lost || odd) {
		ksft_print_msg("%s: %lu pages written not populated, %lu in odd folios\n",
			       name, lost, odd);
		ok = false;
	}
	ok &= cmp_count(name, "pages populated",
			o->pop - o->pre,
			o->d.minflt + (fsz - 1) * o->d.alloc + o->d.ap_page);
	ok &= cmp_count(name, "64 KiB folios", o->big,
			o->d.alloc + o->d.pf_alloc);
	ok &= cmp_count(name, "anon_prefault_large_folio", o->d.large,
			o->d.pf_alloc);
	ok &= cmp_count(name, "64kB anon_fault_fallback", o->d.fallback, 0);
	ksft_print_msg("%s: %ld faults, %lu pages (%.2f per page), %lu folios\n",
		       name, o->d.minflt, o->pop - o->pre,
		       (double)(o->pop - o->pre) / n, o->big);
	return ok;
}

/* @o is, page for page and count for count, what @ref measured. */
static bool same(const char *name, struct obs *o, struct obs *ref)
{
	unsigned long i, bad = 0;
	bool ok;

	for (i = 0; i < o->npages; i++)
		if (o->ord[i] != ref->ord[i] && bad++ < 4)
			ksft_print_msg("%s: page %lu: order %d, %d in the reference\n",
				       name, i, o->ord[i], ref->ord[i]);
	if (bad)
		ksft_print_msg("%s: %lu pages differ from the reference\n",
			       name, bad);
	ok = !bad;
	ok &= cmp_count(name, "minor faults", o->d.minflt, ref->d.minflt);
	ok &= cmp_count(name, "64kB anon_fault_alloc", o->d.alloc,
			ref->d.alloc);
	ok &= cmp_count(name, "anon_prefault_fault", o->d.ap_fault,
			ref->d.ap_fault);
	ok &= cmp_count(name, "anon_prefault_page", o->d.ap_page,
			ref->d.ap_page);
	ok &= cmp_count(name, "anon_prefault_order_lowered", o->d.lowered,
			ref->d.lowered);
	return ok;
}

/*
 * @o, the same writes as @ref with the sysctl on, gives every page that
 * @ref populated a folio at least as large, and does it in no more faults,
 * of which no more map less than a 64 KiB folio: mTHP's sizes are never
 * lowered, fault for fault. What a window adds beyond that is pages mapped
 * ahead (counted in consistent()); with @same_rss there are none.
 */
static bool at_least(const char *name, struct obs *o, struct obs *ref,
		     bool same_rss)
{
	unsigned long i, bad = 0;
	bool ok;

	for (i = 0; i < o->npages; i++)
		if (ref->ord[i] >= 0 && o->ord[i] < ref->ord[i] && bad++ < 4)
			ksft_print_msg("%s: page %lu: order %d, %d with the sysctl off\n",
				       name, i, o->ord[i], ref->ord[i]);
	if (bad)
		ksft_print_msg("%s: %lu pages in smaller folios than with the sysctl off\n",
			       name, bad);
	ok = !bad;
	if (o->d.minflt > ref->d.minflt ||
	    o->d.minflt - o->d.alloc > ref->d.minflt - ref->d.alloc) {
		ksft_print_msg("%s: %ld faults (%lld not 64 KiB), off %ld (%lld)\n",
			       name, o->d.minflt, o->d.minflt - o->d.alloc,
			       ref->d.minflt, ref->d.minflt - ref->d.alloc);
		ok = false;
	}
	if (same_rss)
		ok &= cmp_count(name, "pages populated", o->pop, ref->pop);
	return ok;
}

/* One page per fault, as without the series and without mTHP. */
static bool single_pages(const char *name, struct obs *o, unsigned long n)
{
	bool ok;

	ok = cmp_count(name, "minor faults", o->d.minflt, n);
	ok &= cmp_count(name, "pages populated", o->pop - o->pre, n);
	ok &= cmp_count(name, "64 KiB folios", o->big, 0);
	return ok;
}

/*
 * The 64 KiB blocks of pages [@from, @to) that are not one 64 KiB folio.
 * A stream (re)started at page s maps its first pages singly while it
 * ramps up and up to the next 64 KiB boundary; from s + 2 * 64 KiB on,
 * with "auto", it is mapped in 64 KiB folios.
 */
static unsigned long not_folios(struct obs *o, unsigned long from,
				unsigned long to)
{
	unsigned long fsz = 1UL << forder, b, n = 0;

	for (b = (from + fsz - 1) & ~(fsz - 1); b + fsz <= to; b += fsz)
		n += o->ord[b] != (int)forder;
	return n;
}

/*
 * A fault that lands where nothing predicted it, so that the next access
 * of a test is a miss: one page of a scratch region, with a stride of two.
 */
static void reset_prediction(void)
{
	static char *scratch;
	static unsigned long idx;

	if (!scratch) {
		scratch = map_region(PMD_SZ);
		if (madvise(scratch, PMD_SZ, MADV_NOHUGEPAGE))
			ksft_exit_fail_perror("MADV_NOHUGEPAGE");
	}
	if (idx >= PMD_SZ / pagesize) {
		if (madvise(scratch, PMD_SZ, MADV_DONTNEED))
			ksft_exit_fail_perror("MADV_DONTNEED");
		idx = 0;
	}
	poke(scratch + idx * pagesize, 1);
	idx += 2;
}

/* Flags of measure()'s @advice, beside an madvise() advice */
#define ADV_HUGE	0x10000		/* MADV_HUGEPAGE as well */
#define ADV_MLOCK	0x20000		/* mlock2(MLOCK_ONFAULT) as well */
#define ADV_NONE	0xffff		/* no other advice */

static void advise(char *p, size_t len, int advice)
{
	int adv = advice & 0xffff;

	if ((advice & ADV_HUGE) && madvise(p, len, MADV_HUGEPAGE))
		ksft_exit_fail_perror("MADV_HUGEPAGE");
	if ((advice & ADV_MLOCK) && mlock2(p, len, MLOCK_ONFAULT))
		ksft_exit_fail_perror("mlock2");
	if (adv != ADV_NONE && madvise(p, len, adv))
		ksft_exit_fail_perror("madvise");
}

/*
 * On a fresh region of @npages pages (advise()d @advice unless it is -1),
 * write pages @ord[0..n) in that order and observe the region into @o.
 */
static void measure(struct obs *o, unsigned long npages,
		    const unsigned long *ord, unsigned long n, int advice)
{
	size_t len = npages * pagesize;
	struct counts before;
	unsigned long i;
	char *p;

	p = map_region(len);
	if (advice >= 0)
		advise(p, len, advice);
	reset_prediction();
	counts_read(&before);
	for (i = 0; i < n; i++)
		poke(p + ord[i] * pagesize, 1);
	observe(o, p, npages, &before);
	unmap_region(p, len);
}

static unsigned long *seq_order(unsigned long first, unsigned long last)
{
	unsigned long *o = malloc((last - first) * sizeof(*o)), i;

	if (!o)
		ksft_exit_fail_perror("malloc");
	for (i = first; i < last; i++)
		o[i - first] = i;
	return o;
}

/* Only the 64 KiB size, set to @policy ("auto", "always") */
static void mthp_64k(const char *policy)
{
	int ret = ap_mthp_only(FOLIO_KB, policy);

	if (ret)
		ksft_exit_fail_msg("64 KiB mTHP %s: %s\n", policy,
				   strerror(-ret));
}

/* ------------------------------------------------------------------------ */
/* The tests                                                                 */
/* ------------------------------------------------------------------------ */

#define REGION_PAGES	(2 * PMD_SZ / pagesize)

/*
 * 1. Sequential writers with "auto": after at most 128 KiB of single pages
 * (the ramp, then up to the 64 KiB alignment of a stream that starts off
 * it) the stream is mapped in 64 KiB folios, no fault maps more than
 * max_pages pages, and with the default cap, a multiple of 64 KiB, the
 * writer takes no more faults than the order-0 window (no mTHP size
 * enabled) takes for the same writes, but for the one that maps single
 * pages up to the first folio's alignment. Nothing is mapped but the pages
 * written (the stream ends at the end of its VMA), and every fault that
 * mapped no 64 KiB folio counts as lowered.
 */
static void test_seq_order(void)
{
	static const unsigned int offs[] = { 0, 3, 9 };
	static const unsigned int maxp[] = { 16, 31 };
	unsigned long fsz = 1UL << forder;
	unsigned int a, b;
	char name[64];

	for (b = 0; b < 2; b++) {
		for (a = 0; a < 3; a++) {
			unsigned long n = REGION_PAGES - offs[a], *o, late;
			struct obs r, win;
			bool ok;

			snprintf(name, sizeof(name), "seq_order max_pages %u offset %u",
				 maxp[b], offs[a]);
			ap_set_sysctls(1, maxp[b]);
			o = seq_order(offs[a], REGION_PAGES);
			mthp_64k("never");
			measure(&win, REGION_PAGES, o, n, -1);
			mthp_64k("auto");
			measure(&r, REGION_PAGES, o, n, -1);
			ok = consistent(name, &r, o, n);
			ok &= cmp_count(name, "pages populated", r.pop, n);
			ok &= cmp_count(name, "anon_prefault_order_lowered",
					r.d.lowered, r.d.minflt - r.d.alloc);
			late = not_folios(&r, offs[a] + 2 * fsz, REGION_PAGES);
			if (late || r.d.minflt * (long)maxp[b] < (long)n ||
			    (maxp[b] % fsz == 0 &&
			     r.d.minflt > win.d.minflt + 1)) {
				ksft_print_msg("%s: %lu not folios, %ld faults, %ld order-0\n",
					       name, late, r.d.minflt,
					       win.d.minflt);
				ok = false;
			}
			free(win.ord);
			free(r.ord);
			free(o);
			ksft_test_result(ok, "%s\n", name);
		}
	}
}

/* The random pattern's generator state (ap_rng(), fixed seed) */
static uint64_t rng_state = 0x2545f4914f6cdd1dULL;

/*
 * Pages of a pattern: "stride2", "stride4" or "random": pages chosen at
 * random, no two of them neighbours, in random order, so that no fault
 * lands next to an earlier one.
 */
static unsigned long *pattern(const char *pat, unsigned long pages,
			      unsigned long *n)
{
	unsigned long *o = malloc(pages * sizeof(*o)), i;

	if (!o)
		ksft_exit_fail_perror("malloc");
	*n = 0;
	if (!strcmp(pat, "random")) {
		*n = ap_random_apart(o, pages, &rng_state);
		return o;
	}
	for (i = 0; i < pages; i += pat[6] - '0')
		o[(*n)++] = i;
	return o;
}

/*
 * 2. Sparse access, no page next to an earlier one. mTHP alone ("always",
 * the sysctl off) maps a 64 KiB folio per fault; "always" with the sysctl
 * on gives every page the folio mTHP alone gave it, in no more faults, and
 * populates exactly the same pages (a stride that faults once per 64 KiB
 * is a stream of folios; the patterns write up to the region's end); "auto"
 * maps exactly the pages touched, one per fault, and counts every fault as
 * lowered.
 */
static void test_sparse(void)
{
	static const char * const pats[] = { "stride2", "stride4", "random" };
	unsigned long pages = REGION_PAGES, n;
	struct obs ref, r;
	unsigned int a;
	char name[64];
	bool ok;

	for (a = 0; a < 3; a++) {
		unsigned long *o = pattern(pats[a], pages, &n);

		snprintf(name, sizeof(name), "sparse %s always prefault off",
			 pats[a]);
		mthp_64k("always");
		ap_set_sysctls(0, 16);
		measure(&ref, pages, o, n, -1);
		ok = consistent(name, &ref, o, n);
		ok &= cmp_count(name, "64kB anon_fault_alloc", ref.d.alloc,
				ref.d.minflt);
		ok &= cmp_count(name, "anon_prefault_page", ref.d.ap_page, 0);
		ksft_test_result(ok, "%s\n", name);

		snprintf(name, sizeof(name), "sparse %s always prefault on",
			 pats[a]);
		ap_set_sysctls(1, 16);
		measure(&r, pages, o, n, -1);
		ok = consistent(name, &r, o, n) &&
		     at_least(name, &r, &ref, true);
		free(r.ord);
		ksft_test_result(ok, "%s\n", name);

		snprintf(name, sizeof(name), "sparse %s auto prefault on",
			 pats[a]);
		mthp_64k("auto");
		measure(&r, pages, o, n, -1);
		ok = consistent(name, &r, o, n) && single_pages(name, &r, n);
		ok &= cmp_count(name, "anon_prefault_order_lowered",
				r.d.lowered, n);
		free(r.ord);
		free(ref.ord);
		free(o);
		ksft_test_result(ok, "%s\n", name);
	}
}

/*
 * 3. Populated pages where a 64 KiB folio would go: the faults whose folio
 * they are in map single pages instead (counted neither as 64 KiB
 * allocations nor as lowered), the pages keep their data, and the stream
 * goes on in 64 KiB folios past them, as a stream started afresh would.
 */
static void test_fallback(void)
{
	static const unsigned long busy[] = { 40, 100, 250 };
	unsigned long pages = REGION_PAGES, fsz = 1UL << forder, i, k;
	unsigned long pfn[3], *o, n = 0, late = 0, split = 0, from = 0;
	size_t len = pages * pagesize;
	struct counts before;
	long long fell;
	struct obs r;
	bool ok;
	char *p;

	ap_set_sysctls(1, 16);
	o = malloc(pages * sizeof(*o));
	if (!o)
		ksft_exit_fail_perror("malloc");
	p = map_region(len);
	for (k = 0; k < 3; k++) {
		reset_prediction();
		poke(p + busy[k] * pagesize, 0x5a);
		pfn[k] = pagemap_get_pfn(pagemap_fd, p + busy[k] * pagesize);
	}
	for (i = 0, k = 0; i < pages; i++)
		if (k < 3 && i == busy[k])
			k++;
		else
			o[n++] = i;
	reset_prediction();
	counts_read(&before);
	for (i = 0; i < n; i++)
		poke(p + o[i] * pagesize, 1);
	observe(&r, p, pages, &before);
	r.pre = 3;
	ok = consistent("fallback", &r, o, n);
	ok &= cmp_count("fallback", "pages populated", r.pop, pages);
	for (k = 0; k < 3; k++) {
		unsigned long b = busy[k] & ~(fsz - 1);

		if (peek(p + busy[k] * pagesize) != 0x5a ||
		    pagemap_get_pfn(pagemap_fd, p + busy[k] * pagesize) !=
		    pfn[k]) {
			ksft_print_msg("fallback: page %lu lost its data\n",
				       busy[k]);
			ok = false;
		}
		for (i = b; i < b + fsz; i++)
			split += r.ord[i] != 0;
		late += not_folios(&r, from + 2 * fsz, b);
		from = busy[k] + 1;
	}
	late += not_folios(&r, from + 2 * fsz, pages);
	/* Faults that chose 64 KiB and found a populated page in the way */
	fell = r.d.minflt - r.d.alloc - r.d.lowered;
	ksft_print_msg("fallback: %lld faults chose 64 KiB, mapped pages\n",
		       fell);
	if (fell < 1 || late || split) {
		ksft_print_msg("fallback: %lu blocks not folios, %lu busy block pages in one\n",
			       late, split);
		ok = false;
	}
	unmap_region(p, len);
	free(r.ord);
	free(o);
	ksft_test_result(ok, "fallback: populated pages in the way\n");
}

#define THP_ENABLED	"/sys/kernel/mm/transparent_hugepage/enabled"

/* The global THP setting ("inherit" sizes follow it) as found, or "" */
static char thp_global[32];

static void thp_global_restore(void)
{
	if (thp_global[0])
		ap_write_file(THP_ENABLED, thp_global);
}

/* Set the global THP setting to @v; the first call saves it for exit. */
static void thp_global_set(const char *v)
{
	int ret;

	if (!thp_global[0]) {
		ret = ap_sysfs_selected(THP_ENABLED, thp_global,
					sizeof(thp_global));
		if (ret)
			ksft_exit_fail_msg("read %s: %s\n", THP_ENABLED,
					   strerror(-ret));
		atexit(thp_global_restore);
	}
	if (ap_write_file(THP_ENABLED, v))
		ksft_exit_fail_msg("cannot set %s to %s\n", THP_ENABLED, v);
}

/*
 * One eligibility case: @o[0..n) with @policy, the sysctl @on, @advice,
 * does page for page and count for count what @ref measured, or maps one
 * page per fault if @ref is NULL.
 */
static void eligible(const char *name, const char *policy, int on,
		     int advice, unsigned long *o, unsigned long n,
		     struct obs *ref)
{
	struct obs r;
	bool ok;

	mthp_64k(policy);
	ap_set_sysctls(on, 16);
	measure(&r, REGION_PAGES, o, n, advice);
	ok = consistent(name, &r, o, n);
	ok &= ref ? same(name, &r, ref) : single_pages(name, &r, n);
	free(r.ord);
	ksft_test_result(ok, "eligibility: %s\n", name);
}

/*
 * One eligibility case of a size mTHP enabled, with the sysctl on: the
 * sequential writes @o[0..n) get, page for page, at least the folios of
 * mTHP alone (@ref, the same policy and advice with the sysctl off), in
 * fewer faults (the stream's windows add folios of that size), populating
 * no page more (the stream ends at its VMA's end).
 */
static void eligible_more(const char *name, const char *policy, int advice,
			  unsigned long *o, unsigned long n, struct obs *ref)
{
	struct obs r;
	bool ok;

	mthp_64k(policy);
	ap_set_sysctls(1, 16);
	measure(&r, REGION_PAGES, o, n, advice);
	ok = consistent(name, &r, o, n) && at_least(name, &r, ref, true);
	if (r.d.minflt >= ref->d.minflt || !r.d.large) {
		ksft_print_msg("%s: %ld faults, off %ld, %lld folios ahead\n",
			       name, r.d.minflt, ref->d.minflt, r.d.large);
		ok = false;
	}
	free(r.ord);
	ksft_test_result(ok, "eligibility: %s\n", name);
}

/* @policy and @advice with vm.anon_prefault=0: mTHP as it is alone */
static void mthp_alone(struct obs *ref, const char *policy, int advice,
		       unsigned long *o, unsigned long n)
{
	mthp_64k(policy);
	ap_set_sysctls(0, 16);
	measure(ref, REGION_PAGES, o, n, advice);
}

/*
 * 4. mTHP's eligibility rules and the administrator's sizes stay the gate.
 * Each case is measured against the same writes in a configuration that
 * is what the case must be, or must at least give: mTHP alone (the same
 * policy and advice, the sysctl off), the order-0 window (no mTHP size
 * enabled), or one page per fault.
 */
static void test_eligibility(void)
{
	unsigned long pages = REGION_PAGES, *o = seq_order(0, pages);
	unsigned long *s, n;
	struct obs mthp, win, ref;
	bool ok;

	/* mTHP alone: a 64 KiB folio per fault, nothing mapped ahead */
	mthp_alone(&mthp, "always", -1, o, pages);
	ok = consistent("mTHP alone", &mthp, o, pages);
	ok &= cmp_count("mTHP alone", "64 KiB folios", mthp.big,
			pages >> forder);
	ok &= cmp_count("mTHP alone", "minor faults", mthp.d.minflt,
			pages >> forder);
	ksft_test_result(ok, "eligibility: always, vm.anon_prefault=0: 64 KiB per fault\n");
	/* The order-0 window: no mTHP size enabled */
	if (ap_mthp_only(0, "never") != -ENOENT)
		ksft_exit_fail_msg("cannot disable mTHP\n");
	ap_set_sysctls(1, 16);
	measure(&win, pages, o, pages, -1);
	ok = consistent("mTHP never", &win, o, pages);
	ok &= cmp_count("mTHP never", "64 KiB folios", win.big, 0);
	ok &= cmp_count("mTHP never", "anon_prefault_order_lowered",
			win.d.lowered, 0);
	if (win.d.minflt * 8 >= (long)pages) {
		ksft_print_msg("mTHP never: %ld faults for %lu pages\n",
			       win.d.minflt, pages);
		ok = false;
	}
	ksft_test_result(ok, "eligibility: no mTHP size maps order-0 windows\n");

	/*
	 * "always" is the administrator's: at least mTHP's folios, fault for
	 * fault, with the predictor; under MADV_RANDOM exactly mTHP alone
	 */
	eligible_more("always, vm.anon_prefault=1: mTHP's folios, more per fault",
		      "always", -1, o, pages, &mthp);
	s = pattern("stride4", pages, &n);
	mthp_alone(&ref, "always", MADV_RANDOM, s, n);
	eligible("always, MADV_RANDOM is mTHP alone", "always", 1,
		 MADV_RANDOM, s, n, &ref);
	free(ref.ord);
	/* "auto" needs the predictor: single pages without it */
	eligible("auto, vm.anon_prefault=0 maps single pages", "auto", 0, -1,
		 o, pages, NULL);
	eligible("auto, MADV_RANDOM maps single pages", "auto", 1,
		 MADV_RANDOM, s, n, NULL);
	free(s);
	/*
	 * MADV_HUGEPAGE changes nothing for "auto": the predictor's size,
	 * where the predictor may act, and nowhere else
	 */
	mthp_64k("auto");
	ap_set_sysctls(1, 16);
	measure(&ref, pages, o, pages, -1);
	eligible("auto, MADV_HUGEPAGE is auto without it", "auto", 1,
		 MADV_HUGEPAGE, o, pages, &ref);
	free(ref.ord);
	eligible("auto, MADV_HUGEPAGE, vm.anon_prefault=0 maps single pages",
		 "auto", 0, MADV_HUGEPAGE, o, pages, NULL);
	eligible("auto, MADV_HUGEPAGE and MADV_RANDOM map single pages",
		 "auto", 1, ADV_HUGE | MADV_RANDOM, o, pages, NULL);
	eligible("auto, MADV_HUGEPAGE, mlocked maps single pages", "auto", 1,
		 ADV_HUGE | ADV_MLOCK | ADV_NONE, o, pages, NULL);
	/* "inherit" follows the global setting, "madvise" MADV_HUGEPAGE */
	thp_global_set("always");
	mthp_alone(&ref, "inherit", -1, o, pages);
	eligible_more("inherit, THP always: mTHP's folios, more per fault",
		      "inherit", -1, o, pages, &ref);
	free(ref.ord);
	thp_global_set("never");
	eligible("inherit, THP never maps order-0 windows", "inherit", 1, -1,
		 o, pages, &win);
	mthp_alone(&ref, "madvise", MADV_HUGEPAGE, o, pages);
	eligible_more("madvise, MADV_HUGEPAGE: mTHP's folios, more per fault",
		      "madvise", MADV_HUGEPAGE, o, pages, &ref);
	free(ref.ord);
	eligible("madvise without MADV_HUGEPAGE maps order-0 windows",
		 "madvise", 1, -1, o, pages, &win);
	eligible("auto, MADV_NOHUGEPAGE maps order-0 windows", "auto", 1,
		 MADV_NOHUGEPAGE, o, pages, &win);

	/* PR_SET_THP_DISABLE: as MADV_NOHUGEPAGE, for the whole process */
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_THP_DISABLE");
	eligible("auto, PR_SET_THP_DISABLE maps order-0 windows", "auto", 1,
		 -1, o, pages, &win);
	if (prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_THP_DISABLE");

	/*
	 * The opt-outs of prefault change nothing else: "always" is mTHP
	 * alone, "auto" maps single pages, as with the sysctl off.
	 */
	eligible("always, MADV_NOPREFAULT is mTHP alone", "always", 1,
		 MADV_NOPREFAULT, o, pages, &mthp);
	eligible("auto, MADV_NOPREFAULT maps single pages", "auto", 1,
		 MADV_NOPREFAULT, o, pages, NULL);
	eligible("auto, MADV_HUGEPAGE and MADV_NOPREFAULT map single pages",
		 "auto", 1, ADV_HUGE | MADV_NOPREFAULT, o, pages, NULL);
	if (prctl(PR_SET_ANON_PREFAULT_DISABLE, 1, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_ANON_PREFAULT_DISABLE");
	eligible("always, PR_SET_ANON_PREFAULT_DISABLE is mTHP alone",
		 "always", 1, -1, o, pages, &mthp);
	eligible("auto, PR_SET_ANON_PREFAULT_DISABLE maps single pages",
		 "auto", 1, -1, o, pages, NULL);
	if (prctl(PR_SET_ANON_PREFAULT_DISABLE, 0, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_ANON_PREFAULT_DISABLE");
	mthp_64k("auto");
	free(mthp.ord);
	free(win.ord);
	free(o);
}

/* smaps' THPeligible of the VMA that starts at @p */
static int thp_eligible(char *p)
{
	unsigned long start, end;
	char line[256];
	bool in = false;
	int v = -1;
	FILE *f;

	f = fopen("/proc/self/smaps", "r");
	if (!f)
		ksft_exit_fail_perror("open /proc/self/smaps");
	while (v < 0 && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start == (uintptr_t)p;
		else if (in && !strncmp(line, "THPeligible:", 12))
			v = atoi(line + 12);
	}
	fclose(f);
	if (v < 0)
		ksft_exit_fail_msg("no THPeligible for %p in smaps\n", p);
	return v;
}

static const struct {
	const char *name, *policy;
	int on, advice;
} smaps_cases[] = {
	{ "auto", "auto", 1, -1 },
	{ "auto, vm.anon_prefault=0", "auto", 0, -1 },
	{ "auto, MADV_HUGEPAGE, vm.anon_prefault=0", "auto", 0, MADV_HUGEPAGE },
	{ "auto, MADV_RANDOM", "auto", 1, MADV_RANDOM },
	{ "auto, MADV_NOHUGEPAGE", "auto", 1, MADV_NOHUGEPAGE },
	{ "never", "never", 1, -1 },
};

/*
 * 5. smaps' THPeligible of a region agrees with the fault: with only the
 * 64 KiB size enabled, it is 1 exactly where a sequential writer gets
 * 64 KiB folios, "auto" included, whether the region was advised
 * MADV_HUGEPAGE or not.
 */
static void test_smaps(void)
{
	unsigned long pages = REGION_PAGES, i, j, big;
	size_t len = pages * pagesize;
	bool ok = true;
	int elig;
	char *p;

	for (i = 0; i < ARRAY_SIZE(smaps_cases); i++) {
		mthp_64k(smaps_cases[i].policy);
		ap_set_sysctls(smaps_cases[i].on, 16);
		p = map_region(len);
		if (smaps_cases[i].advice >= 0)
			advise(p, len, smaps_cases[i].advice);
		elig = thp_eligible(p);
		reset_prediction();
		for (j = 0; j < pages; j++)
			poke(p + j * pagesize, 1);
		for (j = 0, big = 0; j < pages; j += 1UL << forder)
			big += page_order(p, j) == (int)forder;
		unmap_region(p, len);
		ksft_print_msg("smaps: %s: THPeligible %d, %lu 64 KiB folios\n",
			       smaps_cases[i].name, elig, big);
		ok &= elig == (big > 0);
	}
	mthp_64k("auto");
	ksft_test_result(ok, "smaps: THPeligible where 64 KiB folios come\n");
}

/* 6. "auto" in sysfs: offered below the PMD size, refused at it. */
static void test_sysfs(void)
{
	char path[128], buf[128], before[128];
	bool ok;
	int ret;

	snprintf(path, sizeof(path), AP_THP_DIR "/hugepages-%ukB/enabled",
		 FOLIO_KB);
	mthp_64k("auto");
	ok = !ap_read_file(path, buf, sizeof(buf)) &&
	     !strcmp(buf, "always inherit madvise [auto] never");
	if (!ok)
		ksft_print_msg("sysfs: %s reads \"%s\"\n", path, buf);
	snprintf(path, sizeof(path), AP_THP_DIR "/hugepages-%lukB/enabled",
		 PMD_SZ >> 10);
	if (ap_read_file(path, before, sizeof(before)) ||
	    strstr(before, "auto")) {
		ksft_print_msg("sysfs: %s reads \"%s\"\n", path, before);
		ok = false;
	}
	ret = ap_write_file(path, "auto");
	if (ret != -EINVAL || ap_read_file(path, buf, sizeof(buf)) ||
	    strcmp(buf, before)) {
		ksft_print_msg("sysfs: \"auto\" for the PMD size: %s, reads \"%s\"\n",
			       strerror(-ret), buf);
		ok = false;
	}
	ksft_test_result(ok, "sysfs: auto below the PMD size only\n");
}

static const unsigned int cap_kb[] = { 16, 64, 256, 1024 };
static const unsigned long cap_more[] = { 100, 300, 600, 773, 1000 };

/*
 * A fresh region where pages @off..@last were written upwards, after a
 * fault elsewhere: its pagemap entries into @pm.
 */
static void cap_stream(unsigned long off, unsigned long last, uint64_t *pm)
{
	unsigned long pages = REGION_PAGES, j;
	size_t len = pages * pagesize;
	char *p = map_region(len);

	reset_prediction();
	for (j = off; j <= last; j++)
		poke(p + j * pagesize, 1);
	if (pread(pagemap_fd, pm, pages * sizeof(*pm),
		  (uintptr_t)p / pagesize * sizeof(*pm)) !=
	    (ssize_t)(pages * sizeof(*pm)))
		ksft_exit_fail_perror("pread of pagemap");
	unmap_region(p, len);
}

/*
 * 7. With 16, 64, 256 and 1024 KiB "auto", sequential writers that start
 * at each page of a 64 KiB block and stop after 1 to 64 pages, or after
 * 100, 300, 600, 773 or 1000: a window of "auto" folios holds at most
 * max_pages pages, the faulting page included, so what they leave mapped
 * and untouched is at most max_pages - 1 pages, never more than they
 * wrote, nothing below their first page and nothing past the page table
 * of their last page.
 */
static void test_cap(void)
{
	unsigned long pages = REGION_PAGES, pmd = PMD_SZ / pagesize;
	unsigned long cap = 16, fsz = 1UL << forder;
	unsigned long off, k, j, runs = 0, worst = 0, bad = 0;
	uint64_t *pm;
	int ret;

	ret = ap_mthp_set(cap_kb, 4, "auto");
	if (ret) {
		ksft_test_result_skip("cap: 16/64/256/1024 KiB mTHP: %s\n",
				      strerror(-ret));
		mthp_64k("auto");
		return;
	}
	pm = malloc(pages * sizeof(*pm));
	if (!pm)
		ksft_exit_fail_perror("malloc");
	ap_set_sysctls(1, 16);
	for (off = 0; off < fsz; off++) {
		for (k = 0; k < 64 + ARRAY_SIZE(cap_more); k++) {
			unsigned long stop = k < 64 ? k + 1 : cap_more[k - 64];
			unsigned long last = off + stop - 1;
			unsigned long extra = 0, far = 0, below = 0;

			cap_stream(off, last, pm);
			for (j = 0; j < pages; j++) {
				if (!(pm[j] & PM_PRESENT) ||
				    (j >= off && j <= last))
					continue;
				below += j < off;
				extra += j > last;
				far += j > last && j / pmd != last / pmd;
			}
			if (!off && k >= 64)
				ksft_print_msg("cap: stop after %lu pages: %lu untouched\n",
					       stop, extra);
			runs++;
			worst = extra > worst ? extra : worst;
			if ((extra > stop || extra > cap - 1 || far ||
			     below) && bad++ < 4)
				ksft_print_msg("cap: %lu from %lu: %lu ahead, %lu far, %lu below\n",
					       stop, off, extra, far, below);
		}
	}
	ksft_print_msg("cap: %lu streams, at most %lu untouched pages mapped, %lu over the bound\n",
		       runs, worst, bad);
	free(pm);
	mthp_64k("auto");
	ksft_test_result(!bad, "cap: a stream that stops, 16K to 1M auto\n");
}

/*
 * A stream of test_cap_always() from page @off to page @last, with the
 * sysctl off (@pm[0]) and on (@pm[1]): sets *@extra to the pages populated
 * on and not off, and returns whether it kept to the bound, @bound pages.
 */
static bool cap_always_ok(uint64_t **pm, unsigned long off,
			  unsigned long last, unsigned long bound,
			  unsigned long *extra)
{
	unsigned long pmd = PMD_SZ / pagesize, stop = last - off + 1, j;
	unsigned long lost = 0, far = 0, below = 0;

	*extra = 0;
	for (j = 0; j < REGION_PAGES; j++) {
		bool off_has = pm[0][j] & PM_PRESENT;
		bool on_has = pm[1][j] & PM_PRESENT;

		lost += off_has && !on_has;
		if (!on_has || off_has)
			continue;
		(*extra)++;
		below += j < off;
		far += j / pmd != last / pmd;
	}
	if (!lost && *extra <= stop && *extra <= bound && !far && !below)
		return true;
	ksft_print_msg("cap always: %lu from %lu: %lu lost, %lu more, %lu far, %lu below\n",
		       stop, off, lost, *extra, far, below);
	return false;
}

/*
 * One setting of test_cap_always(): @n sizes of @kb set to "always", at
 * most @bound pages mapped beyond mTHP's own folios. Returns the most
 * pages a stream populated with the sysctl on and not with it off; counts
 * streams in *@runs and those over the bound in *@bad.
 */
static unsigned long cap_always(const unsigned int *kb, unsigned int n,
				unsigned long bound, uint64_t **pm,
				unsigned long *runs, unsigned long *bad)
{
	static const unsigned long offs[] = { 0, 5 };
	unsigned long a, k, extra, worst = 0;
	int ret, on;

	ret = ap_mthp_set(kb, n, "always");
	if (ret)
		ksft_exit_fail_msg("%u mTHP sizes always: %s\n", n,
				   strerror(-ret));
	for (a = 0; a < ARRAY_SIZE(offs); a++) {
		for (k = 0; k < 64 + ARRAY_SIZE(cap_more); k++) {
			unsigned long stop = k < 64 ? k + 1 : cap_more[k - 64];
			unsigned long last = offs[a] + stop - 1;

			for (on = 0; on < 2; on++) {
				ap_set_sysctls(on, 16);
				cap_stream(offs[a], last, pm[on]);
			}
			if (!cap_always_ok(pm, offs[a], last, bound, &extra))
				(*bad)++;
			(*runs)++;
			worst = extra > worst ? extra : worst;
		}
	}
	ksft_print_msg("cap always: %u sizes from %u KiB: at most %lu pages more than mTHP alone\n",
		       n, kb[0], worst);
	return worst;
}

static const unsigned int cap_always_kb[] = { 16, 64, 128, 256, 1024 };

/*
 * 8. With 16, 64, 128, 256 and 1024 KiB "always", one size at a time and
 * then all of them, the writers of test_cap() from the first and the
 * sixth page of a 64 KiB block, with the sysctl off and on: on populates
 * every page that mTHP alone populates, and beyond that at most max_pages
 * (16) pages, never more than the stream wrote, nothing below its first
 * page and nothing past the page table of its last page. A size of more
 * than 16 pages gets nothing beyond mTHP's own folios; with each smaller
 * size alone some stream has a window ahead when it stops.
 */
static void test_cap_always(void)
{
	unsigned int n = ARRAY_SIZE(cap_always_kb), i;
	unsigned long runs = 0, bad = 0, worst, bound;
	uint64_t *pm[2];
	int ret;

	ret = ap_mthp_set(cap_always_kb, n, "always");
	if (ret) {
		ksft_test_result_skip("cap always: 16 to 1024 KiB mTHP: %s\n",
				      strerror(-ret));
		mthp_64k("auto");
		return;
	}
	pm[0] = malloc(REGION_PAGES * sizeof(*pm[0]));
	pm[1] = malloc(REGION_PAGES * sizeof(*pm[1]));
	if (!pm[0] || !pm[1])
		ksft_exit_fail_perror("malloc");
	for (i = 0; i < n; i++) {
		bound = cap_always_kb[i] * 1024 / pagesize > 16 ? 0 : 16;
		worst = cap_always(&cap_always_kb[i], 1, bound, pm, &runs,
				   &bad);
		if (bound && !worst) {
			ksft_print_msg("cap always: %u KiB: no window ahead\n",
				       cap_always_kb[i]);
			bad++;
		}
	}
	cap_always(cap_always_kb, n, 16, pm, &runs, &bad);
	ksft_print_msg("cap always: %lu streams, %lu over the bound\n",
		       runs, bad);
	free(pm[0]);
	free(pm[1]);
	mthp_64k("auto");
	ksft_test_result(!bad,
			 "cap: a stream that stops, 16K to 1M always, max_pages beyond mTHP\n");
}

/*
 * 9. Pages mapped ahead read zero; the data survives fork. The window the
 * last fault mapped is what pagemap shows populated past the last page
 * written.
 */
static void test_tail_zero(void)
{
	unsigned long pages = REGION_PAGES, stop = 300, i, bad = 0;
	size_t len = pages * pagesize;
	int status;
	pid_t pid;
	char *p;

	ap_set_sysctls(1, 16);
	p = map_region(len);
	reset_prediction();
	for (i = 0; i < stop; i++)
		memset(p + i * pagesize, (int)(i % 251) + 1, pagesize);
	for (i = stop; i < pages &&
	     pagemap_is_populated(pagemap_fd, p + i * pagesize); i++) {
		unsigned long j;

		for (j = 0; j < pagesize; j++)
			if (p[i * pagesize + j])
				bad++;
	}
	ksft_print_msg("tail_zero: pages %lu..%lu mapped ahead, %lu bad bytes\n",
		       stop, i, bad);
	/* A stream 300 pages long was mapping ahead when it stopped */
	if (i == stop)
		bad++;
	pid = fork();
	if (pid < 0)
		ksft_exit_fail_perror("fork");
	if (!pid) {
		unsigned long cbad = 0;

		for (i = 0; i < stop; i++)
			if (p[i * pagesize] != (char)(i % 251 + 1) ||
			    p[(i + 1) * pagesize - 1] != (char)(i % 251 + 1))
				cbad++;
		_exit(cbad ? 1 : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		bad++;
	for (i = 0; i < stop; i++)
		if (p[i * pagesize] != (char)(i % 251 + 1))
			bad++;
	unmap_region(p, len);
	ksft_test_result(!bad, "tail_zero: ahead pages zero, data kept over fork\n");
}

/*
 * One writer of test_edges(): the VMA is pages [@first, @last) of a fresh
 * PMD aligned region; its first @reads pages are read upwards (read faults
 * map the zero page), then every page is written once, upwards, or
 * downwards if @down, with vm.anon_prefault=@on. Observes the region
 * into @o.
 */
static void edge_run(unsigned long first, unsigned long last, bool down,
		     unsigned long reads, int on, struct obs *o)
{
	size_t len = REGION_PAGES * pagesize;
	struct counts before;
	unsigned long i;
	char *p;

	ap_set_sysctls(on, 16);
	p = map_region(len);
	if (first && munmap(p, first * pagesize))
		ksft_exit_fail_perror("munmap");
	if (last < REGION_PAGES &&
	    munmap(p + last * pagesize, (REGION_PAGES - last) * pagesize))
		ksft_exit_fail_perror("munmap");
	reset_prediction();
	counts_read(&before);
	for (i = 0; i < reads; i++)
		if (peek(p + (first + i) * pagesize))
			ksft_exit_fail_msg("a fresh page reads non-zero\n");
	for (i = 0; i < last - first; i++)
		poke(p + (down ? last - 1 - i : first + i) * pagesize, 1);
	observe(o, p, REGION_PAGES, &before);
	unmap_region(p, len);
}

/*
 * 10. "always" in a VMA that starts or ends inside a 64 KiB block: mTHP maps
 * single pages in that partial block and a 64 KiB folio in each whole one.
 * The order-0 windows of the sysctl on must stay inside the partial block:
 * every page gets the folio it gets with the sysctl off, measured, not
 * modelled, and the writer takes no more faults. (A window that ran on
 * populated the next block before its fault, and mTHP mapped single pages
 * from there on.)
 */
static void test_edges(void)
{
	static const struct {
		unsigned long first, last;
		bool down;
		unsigned long reads;
	} c[] = {
		{ 3, 0, false, 0 },
		{ 5, 0, false, 0 },
		{ 0, 9, true, 0 },	/* @last 9 pages into the last block */
		{ 3, 0, false, 10 },	/* zero-page windows, then writes */
	};
	unsigned long n = REGION_PAGES, i, k, bad, big;
	struct obs r[2];
	int on;

	mthp_64k("always");
	for (k = 0; k < ARRAY_SIZE(c); k++) {
		unsigned long first = c[k].first;
		unsigned long last = c[k].last ?
			n - (1UL << forder) + c[k].last : n;

		for (on = 0; on < 2; on++)
			edge_run(first, last, c[k].down, c[k].reads, on,
				 &r[on]);
		for (bad = 0, big = 0, i = first; i < last; i++) {
			big += r[0].ord[i] == (int)forder;
			if (r[1].ord[i] != r[0].ord[i] && bad++ < 4)
				ksft_print_msg("edges %lu: page %lu: order %d on, %d off\n",
					       k, i, r[1].ord[i], r[0].ord[i]);
		}
		ksft_print_msg("edges %lu: pages %lu..%lu %s: %ld faults on, %ld off\n",
			       k, first, last, c[k].down ? "down" : "up",
			       r[1].d.minflt, r[0].d.minflt);
		ksft_print_msg("edges %lu: %lu pages in 64 KiB folios off, %lu differ on\n",
			       k, big, bad);
		ksft_test_result(!bad && big && r[1].d.minflt <= r[0].d.minflt,
				 "edges: always, VMA %s %lu pages into a 64 KiB block, %swritten %s: folios as mTHP alone\n",
				 c[k].last ? "ending" : "starting",
				 c[k].last ? c[k].last : first,
				 c[k].reads ? "read, then " : "",
				 c[k].down ? "downwards" : "upwards");
		free(r[0].ord);
		free(r[1].ord);
	}
	mthp_64k("auto");
}

/* Pin the test to one CPU of those it may run on; returns the old set. */
static void pin_one_cpu(cpu_set_t *old)
{
	cpu_set_t one;
	int cpu = 0;

	if (sched_getaffinity(0, sizeof(*old), old))
		ksft_exit_fail_perror("sched_getaffinity");
	while (!CPU_ISSET(cpu, old))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		ksft_exit_fail_perror("sched_setaffinity");
}

/*
 * 11. The 64 KiB size's statistics add up. Pinned to one CPU, so that
 * munmap() drains the per-cpu LRU batch that may still hold the region's
 * folios: a sequential writer with "always" and then "auto", the sysctl
 * on, gets 64 KiB folios at its faults (anon_fault_alloc) and, with
 * "always", ahead of them (anon_prefault_alloc); nr_anon grows by the sum,
 * which is the number of 64 KiB folios pagemap shows, and drops back by as
 * much when the region is unmapped.
 */
static void test_stats(void)
{
	static const char * const policies[] = { "always", "auto" };
	unsigned long pages = REGION_PAGES, i, j, big;
	long long nr0, nr1, nr2, fa, pa;
	size_t len = pages * pagesize;
	cpu_set_t old;
	bool ok = true;
	char *p;

	pin_one_cpu(&old);
	ap_set_sysctls(1, 16);
	for (i = 0; i < ARRAY_SIZE(policies); i++) {
		mthp_64k(policies[i]);
		p = map_region(len);
		reset_prediction();
		nr0 = stat_get("nr_anon");
		fa = stat_get("anon_fault_alloc");
		pa = stat_get("anon_prefault_alloc");
		for (j = 0; j < pages; j++)
			poke(p + j * pagesize, 1);
		nr1 = stat_get("nr_anon");
		fa = stat_get("anon_fault_alloc") - fa;
		pa = stat_get("anon_prefault_alloc") - pa;
		for (j = 0, big = 0; j < pages; j += 1UL << forder)
			big += page_order(p, j) == (int)forder;
		unmap_region(p, len);
		nr2 = stat_get("nr_anon");
		ksft_print_msg("stats: %s: %lu folios, %lld + %lld, nr_anon +%lld -%lld\n",
			       policies[i], big, fa, pa, nr1 - nr0, nr1 - nr2);
		ok &= cmp_count("stats", "nr_anon's growth", nr1 - nr0,
				fa + pa);
		ok &= cmp_count("stats", "64 KiB folios", big, fa + pa);
		ok &= cmp_count("stats", "nr_anon after munmap", nr2, nr0);
		if (!i && !pa) {
			ksft_print_msg("stats: always: no folio ahead\n");
			ok = false;
		}
	}
	if (sched_setaffinity(0, sizeof(old), &old))
		ksft_exit_fail_perror("sched_setaffinity");
	mthp_64k("auto");
	ksft_test_result(ok, "stats: anon_fault_alloc + anon_prefault_alloc = nr_anon\n");
}

/*
 * 12. "auto" folios swapped out and faulted back. With swap on a RAM disk
 * (synchronous, as zram is), MADV_PAGEOUT swaps a sequential writer's
 * 64 KiB "auto" folios out whole (swpout), and a read of a page of one of
 * them swaps in a 64 KiB folio with the sysctl on, where "auto" applies,
 * and a single page with it off, where it does not: the rule of a fresh
 * fault. The data comes back either way. On one CPU, so that
 * MADV_PAGEOUT drains the per-cpu LRU batch that holds the new folios.
 */
static void test_swap(void)
{
	unsigned long pages = REGION_PAGES, fsz = 1UL << forder, j, b = 0;
	size_t len = pages * pagesize;
	long long out;
	const char *why;
	cpu_set_t old;
	bool ok = true;
	int on, ret;
	char *p;

	ret = ap_swap_on(AP_SWAP_DEV, &why);
	if (ret) {
		ksft_test_result_skip("swap: %s: %s\n", why, strerror(-ret));
		return;
	}
	pin_one_cpu(&old);
	mthp_64k("auto");
	for (on = 1; on >= 0; on--) {
		ap_set_sysctls(1, 16);
		p = map_region(len);
		reset_prediction();
		for (j = 0; j < pages; j++)
			poke(p + j * pagesize, j % 251 + 1);
		/* A 64 KiB folio in the second half of the region */
		for (b = pages / 2; b < pages; b += fsz)
			if (page_order(p, b) == (int)forder)
				break;
		out = stat_get("swpout");
		if (b >= pages || madvise(p, len, MADV_PAGEOUT)) {
			ksft_print_msg("swap: no 64 KiB folio, or MADV_PAGEOUT: %s\n",
				       strerror(errno));
			ok = false;
			unmap_region(p, len);
			break;
		}
		out = stat_get("swpout") - out;
		ap_set_sysctls(on, 16);
		if (!out || !pagemap_is_swapped(pagemap_fd, p + b * pagesize)) {
			ksft_print_msg("swap: %lld 64 KiB folios swapped out, page %lu %s\n",
				       out, b, "not swapped");
			ok = false;
		} else if (peek(p + (b + 3) * pagesize) != (char)((b + 3) % 251 + 1) ||
			   page_order(p, b + 3) != (on ? (int)forder : 0)) {
			ksft_print_msg("swap: vm.anon_prefault=%d: page %lu: order %d\n",
				       on, b + 3, page_order(p, b + 3));
			ok = false;
		}
		for (j = 0; j < pages; j++)
			if (peek(p + j * pagesize) != (char)(j % 251 + 1)) {
				ksft_print_msg("swap: page %lu lost its data\n", j);
				ok = false;
				break;
			}
		unmap_region(p, len);
	}
	ap_set_sysctls(1, 16);
	ap_swap_off();
	if (sched_setaffinity(0, sizeof(old), &old))
		ksft_exit_fail_perror("sched_setaffinity");
	ksft_test_result(ok, "swap: an auto folio comes back as auto applies\n");
}

#define NR_TESTS	(6 + 9 + 1 + 21 + 1 + 1 + 1 + 1 + 1 + 4 + 1 + 1)

static void skip_all(const char *why)
{
	unsigned int i;

	for (i = 0; i < NR_TESTS; i++)
		ksft_test_result_skip("%s\n", why);
	ksft_finished();
}

int main(void)
{
	struct counts warm;

	ksft_print_header();
	ksft_set_plan(NR_TESTS);
	pagesize = getpagesize();
	forder = __builtin_ctzl(FOLIO_KB * 1024 / pagesize);
	if (access(SYSCTL_ENABLE, F_OK))
		skip_all(SYSCTL_ENABLE " not present");
	if (access(STATS_DIR, F_OK))
		skip_all("no 64 KiB mTHP size");
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	kpageflags_fd = open("/proc/kpageflags", O_RDONLY);
	if (pagemap_fd < 0 || kpageflags_fd < 0)
		skip_all("needs /proc/self/pagemap and /proc/kpageflags (root)");
	ap_save_sysctls();
	mthp_64k("auto");
	/* The helpers' own memory in place before anything is counted */
	counts_read(&warm);
	reset_prediction();

	test_seq_order();
	test_sparse();
	test_fallback();
	test_eligibility();
	test_smaps();
	test_sysfs();
	test_cap();
	test_cap_always();
	test_tail_zero();
	test_edges();
	test_stats();
	test_swap();
	ksft_finished();
}
