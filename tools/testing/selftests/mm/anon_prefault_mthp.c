// SPDX-License-Identifier: GPL-2.0
/*
 * Anticipatory anonymous prefault with mTHP: a size set to "auto" is used
 * where the predictor sees a stream, and a size enabled "always" is used
 * exactly as mTHP alone uses it.
 *
 * With only the 64 KiB size enabled ("auto" or "always"), every test runs
 * an access pattern on a fresh PMD aligned region and compares what the
 * kernel did with what mTHP alone, the order-0 window or the predictor
 * would have done: minor faults (getrusage), the pages populated
 * (pagemap), the order and alignment of the folio of every page (pagemap
 * and /proc/kpageflags), the mTHP statistics of the 64 KiB size and the
 * anon_prefault counters of /proc/vmstat. All of them are exact.
 *
 *  - seq_order: with "auto", a sequential writer ramps up through single
 *    pages to one 64 KiB folio per fault and then to two; a stream that
 *    starts off the 64 KiB alignment maps single pages up to it.
 *  - sparse: stride 2, stride 4 and random pages, no two of them
 *    neighbours: "always" maps 64 KiB per fault with the predictor on as
 *    with it off; "auto" maps only the pages touched.
 *  - fallback: a populated page in the way of a 64 KiB folio makes the
 *    fault map single pages instead; windows stop in front of them.
 *  - eligibility: "always" is mTHP alone with vm.anon_prefault on or off
 *    and under MADV_RANDOM; "auto" maps single pages with the sysctl off
 *    and under MADV_RANDOM, 64 KiB folios under MADV_HUGEPAGE, order-0
 *    windows under MADV_NOHUGEPAGE and PR_SET_THP_DISABLE.
 *  - sysfs: "auto" is offered and read back for the 64 KiB size, and
 *    refused (EINVAL) for the PMD size.
 *  - cap: with 16, 64, 256 and 1024 KiB "auto", a stream that stops
 *    leaves no more untouched pages mapped than the documented cap allows,
 *    nor than it had written, and none past its page table.
 *  - tail_zero: the pages a window maps ahead of a stream that stops read
 *    zero, and the data written survives fork.
 */
#define _GNU_SOURCE
#include <errno.h>
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
#define MAX_ORDER_0		5	/* order_base_2(31), the largest max_pages */
#define STATS_DIR		"/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/"

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
	long long alloc, fallback;			/* 64 KiB mTHP stats */
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
	if (getrusage(RUSAGE_SELF, &ru))
		ksft_exit_fail_perror("getrusage");
	c->minflt = ru.ru_minflt;
}

/* ------------------------------------------------------------------------ */
/* Model of the predictor and of mTHP                                        */
/* ------------------------------------------------------------------------ */

enum model_kind {
	M_PREFAULT,	/* "auto": the predictor sizes the fault */
	M_MTHP,		/* mTHP alone: "always", or "auto" under MADV_HUGEPAGE */
	M_ORDER0,	/* the predictor, with no large folio allowed */
	M_NONE,		/* one page per fault */
};

struct model {
	enum model_kind kind;
	unsigned int max_pages;	/* vm.anon_prefault_max_pages */
	unsigned long npages;	/* the region, PMD aligned, a VMA of its own */
	unsigned char *pg;	/* per page: 0 not populated, else order + 1 */
	unsigned long next;	/* the predicted page */
	unsigned int order;	/* the predictor's order */
	bool hit;		/* the stream has had its first hit */
	unsigned long fell_back; /* 64 KiB faults that mapped pages instead */
	struct counts c;	/* expected deltas (minflt: faults) */
};

static void model_init(struct model *m, enum model_kind kind,
		       unsigned int max_pages,
		       unsigned long npages)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->max_pages = max_pages;
	m->npages = npages;
	m->next = ULONG_MAX;
	m->pg = calloc(npages, 1);
	if (!m->pg)
		ksft_exit_fail_perror("calloc");
}

static bool model_none(struct model *m, unsigned long p, unsigned long n)
{
	unsigned long i;

	for (i = p; i < p + n; i++)
		if (m->pg[i])
			return false;
	return true;
}

static void model_map(struct model *m, unsigned long p, unsigned int order)
{
	memset(m->pg + p, order + 1, 1UL << order);
}

/* A write fault at page @p, which is not populated. */
static void model_fault(struct model *m, unsigned long p)
{
	unsigned long fsz = 1UL << forder, end, nr, i, n, cap;
	unsigned int k, fo = 0, max;

	m->c.minflt++;
	if (m->kind == M_NONE) {
		model_map(m, p, 0);
		return;
	}
	if (m->kind == M_MTHP) {
		unsigned long a = p & ~(fsz - 1);

		if (model_none(m, a, fsz)) {
			model_map(m, a, forder);
			m->c.alloc++;
		} else {
			model_map(m, p, 0);
		}
		return;
	}
	/* anon_prefault_window() */
	if (p != m->next) {
		m->order = 0;
		m->hit = false;
		nr = 1;
		m->next = p + 1;
	} else {
		/* The ramp ends at windows of two 64 KiB folios */
		max = m->kind == M_PREFAULT && forder + 1 > MAX_ORDER_0 ?
		      forder + 1 : MAX_ORDER_0;
		k = m->order + 1 < max ? m->order + 1 : max;
		/* A stream's first hit maps one page */
		if (!m->hit)
			k = 0;
		m->hit = true;
		if (m->kind == M_PREFAULT && k >= forder)
			fo = forder;
		end = (p / (PMD_SZ / pagesize) + 1) * (PMD_SZ / pagesize);
		if (end > m->npages)
			end = m->npages;
		if (fo && (p & (fsz - 1))) {
			unsigned long al = (p + fsz - 1) & ~(fsz - 1);

			if (al < end)
				end = al;
			/* The order does not grow past the pages mapped */
			k = m->order;
			fo = 0;
		}
		nr = 1UL << (k - fo);
		/* max_pages pages, or two folios where that is more */
		cap = m->max_pages >> fo;
		if (fo && cap < 2)
			cap = 2;
		if (nr > cap)
			nr = cap;
		if (nr > (end - p) >> fo)
			nr = (end - p) >> fo;
		m->order = k;
		m->next = p + (nr << fo);
	}
	if (m->kind == M_PREFAULT && fo < forder)
		m->c.lowered++;
	/* alloc_anon_folio(): the folio's PTEs must all be none */
	if (fo && !model_none(m, p, 1UL << fo)) {
		m->fell_back++;
		fo = 0;
		m->next = p + nr;
	}
	/* anon_prefault_alloc(): up to the first folio in the way */
	n = 1UL << fo;
	for (i = 1; i < nr; i++)
		if (!model_none(m, p + i * n, n))
			break;
	if (i < nr) {
		nr = i;
		m->next = p + nr * n;
	}
	for (i = 0; i < nr; i++)
		model_map(m, p + i * n, fo);
	if (nr > 1) {
		m->c.ap_fault++;
		m->c.ap_page += (nr - 1) * n;
	}
	/* mTHP's statistics count the faulting folio only */
	if (fo) {
		m->c.alloc++;
		m->c.large += nr - 1;
	}
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

/*
 * Compare the region with the model: every page's state and folio order,
 * and every count. Prints the first few differences.
 */
static bool check(const char *name, char *p, struct model *m,
		  struct counts *before, struct counts *after)
{
	struct counts *e = &m->c;
	unsigned long i, bad = 0, pop = 0;
	bool ok = true;

	for (i = 0; i < m->npages; i++) {
		int want = (int)m->pg[i] - 1, got = page_order(p, i);

		pop += got >= 0;
		if (got != want && bad++ < 4)
			ksft_print_msg("%s: page %lu: order %d, expected %d\n",
				       name, i, got, want);
	}
	if (bad) {
		ksft_print_msg("%s: %lu pages differ from the model\n", name, bad);
		ok = false;
	}
	ok &= cmp_count(name, "minor faults", after->minflt - before->minflt,
			e->minflt);
	ok &= cmp_count(name, "anon_prefault_fault",
			after->ap_fault - before->ap_fault, e->ap_fault);
	ok &= cmp_count(name, "anon_prefault_page",
			after->ap_page - before->ap_page, e->ap_page);
	ok &= cmp_count(name, "anon_prefault_order_lowered",
			after->lowered - before->lowered, e->lowered);
	ok &= cmp_count(name, "anon_prefault_large_folio",
			after->large - before->large, e->large);
	ok &= cmp_count(name, "64kB anon_fault_alloc",
			after->alloc - before->alloc, e->alloc);
	ok &= cmp_count(name, "64kB anon_fault_fallback",
			after->fallback - before->fallback, e->fallback);
	ksft_print_msg("%s: %ld faults, %lu pages populated, %lld 64 KiB folios\n",
		       name, after->minflt - before->minflt, pop,
		       after->alloc - before->alloc + after->large - before->large);
	return ok;
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

/*
 * On a fresh region (madvise()d @advice unless it is -1), touch pages
 * @ord[0..n) in that order, let the model do the same, and check.
 */
static bool run_pattern(const char *name, struct model *m, unsigned long *ord,
			unsigned long n, int advice)
{
	size_t len = m->npages * pagesize;
	struct counts before, after;
	unsigned long i;
	bool ok;
	char *p;

	p = map_region(len);
	if (advice >= 0 && madvise(p, len, advice))
		ksft_exit_fail_perror("madvise");
	reset_prediction();
	counts_read(&before);
	for (i = 0; i < n; i++)
		poke(p + ord[i] * pagesize, 1);
	counts_read(&after);
	for (i = 0; i < n; i++)
		if (!m->pg[ord[i]])
			model_fault(m, ord[i]);
	ok = check(name, p, m, &before, &after);
	unmap_region(p, len);
	return ok;
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

/* 1. Sequential writers: the ramp, several folios per fault, alignment. */
static void test_seq_order(void)
{
	static const unsigned int offs[] = { 0, 3, 9 };
	static const unsigned int maxp[] = { 16, 31 };
	unsigned int a, b;
	char name[64];

	for (b = 0; b < 2; b++) {
		for (a = 0; a < 3; a++) {
			unsigned long n = REGION_PAGES - offs[a], *o;
			struct model m;
			bool ok;

			snprintf(name, sizeof(name), "seq_order max_pages %u offset %u",
				 maxp[b], offs[a]);
			ap_set_sysctls(1, maxp[b]);
			model_init(&m, M_PREFAULT, maxp[b], REGION_PAGES);
			o = seq_order(offs[a], REGION_PAGES);
			ok = run_pattern(name, &m, o, n, -1);
			free(m.pg);
			free(o);
			/* Fewer faults per page than mTHP alone's 1 in 16 */
			if (ok && m.c.minflt * (1L << forder) >= (long)n) {
				ksft_print_msg("%s: %ld faults for %lu pages\n",
					       name, m.c.minflt, n);
				ok = false;
			}
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
 * 2. Sparse access: "always" maps 64 KiB per fault whether the predictor is
 * on or off; "auto" maps only the pages touched.
 */
static void test_sparse(void)
{
	static const char * const pats[] = { "stride2", "stride4", "random" };
	static const struct {
		const char *policy;
		int on;
		enum model_kind kind;
	} modes[] = {
		{ "always", 0, M_MTHP },
		{ "always", 1, M_MTHP },
		{ "auto", 1, M_PREFAULT },
	};
	unsigned long pages = REGION_PAGES, n, i;
	unsigned int a, b;
	char name[64];

	for (a = 0; a < 3; a++) {
		for (b = 0; b < 3; b++) {
			struct model m;
			unsigned long *o = pattern(pats[a], pages, &n);
			unsigned long pop = 0;
			bool ok;

			snprintf(name, sizeof(name), "sparse %s %s prefault %s",
				 pats[a], modes[b].policy,
				 modes[b].on ? "on" : "off");
			mthp_64k(modes[b].policy);
			ap_set_sysctls(modes[b].on, 16);
			model_init(&m, modes[b].kind, 16, pages);
			ok = run_pattern(name, &m, o, n, -1);
			for (i = 0; i < pages; i++)
				pop += !!m.pg[i];
			ksft_print_msg("%s: RSS per touched page %.2f\n", name,
				       (double)pop / n);
			/* "auto" maps exactly the pages touched here */
			if (modes[b].kind == M_PREFAULT && pop != n)
				ok = false;
			free(m.pg);
			free(o);
			ksft_test_result(ok, "%s\n", name);
		}
	}
	mthp_64k("auto");
}

/* 3. A populated page where a 64 KiB folio would go. */
static void test_fallback(void)
{
	static const unsigned long busy[] = { 40, 100, 250 };
	unsigned long pages = REGION_PAGES, i;
	struct counts before, after;
	size_t len = pages * pagesize;
	struct model m;
	bool ok;
	char *p;

	ap_set_sysctls(1, 16);
	model_init(&m, M_PREFAULT, 16, pages);
	p = map_region(len);
	/* The busy pages first (their folios are part of the model) */
	for (i = 0; i < 3; i++) {
		reset_prediction();
		poke(p + busy[i] * pagesize, 1);
		m.next = ULONG_MAX;
		model_fault(&m, busy[i]);
	}
	memset(&m.c, 0, sizeof(m.c));
	reset_prediction();
	counts_read(&before);
	for (i = 0; i < pages; i++)
		poke(p + i * pagesize, 1);
	counts_read(&after);
	m.next = ULONG_MAX;
	for (i = 0; i < pages; i++)
		if (!m.pg[i])
			model_fault(&m, i);
	ok = check("fallback", p, &m, &before, &after);
	/* The case must have come up: a 64 KiB fault that mapped pages */
	ksft_print_msg("fallback: %lu faults chose 64 KiB and mapped pages\n",
		       m.fell_back);
	if (!m.fell_back)
		ok = false;
	unmap_region(p, len);
	free(m.pg);
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

/* One eligibility case: @o[0..n) with @policy, the sysctl @on, @advice. */
static void eligible(const char *name, const char *policy, int on,
		     enum model_kind kind, unsigned long *o, unsigned long n,
		     int advice)
{
	struct model m;
	bool ok;

	mthp_64k(policy);
	ap_set_sysctls(on, 16);
	model_init(&m, kind, 16, REGION_PAGES);
	ok = run_pattern(name, &m, o, n, advice);
	free(m.pg);
	ksft_test_result(ok, "eligibility: %s\n", name);
}

/* 4. mTHP's eligibility rules and the administrator's sizes stay the gate. */
static void test_eligibility(void)
{
	unsigned long pages = REGION_PAGES, *o = seq_order(0, pages);
	unsigned long *s;
	struct model m;
	unsigned long n;
	bool ok;

	/* "always" is the administrator's: mTHP alone, predictor or not */
	eligible("always, vm.anon_prefault=0 is mTHP alone", "always", 0,
		 M_MTHP, o, pages, -1);
	eligible("always, vm.anon_prefault=1 is mTHP alone", "always", 1,
		 M_MTHP, o, pages, -1);
	s = pattern("stride4", pages, &n);
	eligible("always, MADV_RANDOM is mTHP alone", "always", 1, M_MTHP,
		 s, n, MADV_RANDOM);
	/* "auto" needs the predictor: single pages without it */
	eligible("auto, vm.anon_prefault=0 maps single pages", "auto", 0,
		 M_NONE, o, pages, -1);
	eligible("auto, MADV_RANDOM maps single pages", "auto", 1, M_NONE,
		 s, n, MADV_RANDOM);
	free(s);
	/* MADV_HUGEPAGE asked for large folios: "auto" is used as "always" */
	eligible("auto, MADV_HUGEPAGE is mTHP alone", "auto", 1, M_MTHP,
		 o, pages, MADV_HUGEPAGE);
	/* "inherit" follows the global setting, "madvise" MADV_HUGEPAGE */
	thp_global_set("always");
	eligible("inherit, THP always, vm.anon_prefault=1 is mTHP alone",
		 "inherit", 1, M_MTHP, o, pages, -1);
	thp_global_set("never");
	eligible("inherit, THP never maps order-0 windows", "inherit", 1,
		 M_ORDER0, o, pages, -1);
	eligible("madvise, MADV_HUGEPAGE, vm.anon_prefault=1 is mTHP alone",
		 "madvise", 1, M_MTHP, o, pages, MADV_HUGEPAGE);
	eligible("madvise without MADV_HUGEPAGE maps order-0 windows",
		 "madvise", 1, M_ORDER0, o, pages, -1);
	mthp_64k("auto");

	/* MADV_NOHUGEPAGE: no large folio, the order-0 window */
	model_init(&m, M_ORDER0, 16, pages);
	ok = run_pattern("MADV_NOHUGEPAGE", &m, o, pages, MADV_NOHUGEPAGE);
	free(m.pg);
	ksft_test_result(ok, "eligibility: MADV_NOHUGEPAGE maps order-0 windows\n");

	/* PR_SET_THP_DISABLE: as MADV_NOHUGEPAGE, for the whole process */
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_THP_DISABLE");
	model_init(&m, M_ORDER0, 16, pages);
	ok = run_pattern("PR_SET_THP_DISABLE", &m, o, pages, -1);
	free(m.pg);
	if (prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0))
		ksft_exit_fail_perror("PR_SET_THP_DISABLE");
	ksft_test_result(ok, "eligibility: PR_SET_THP_DISABLE maps order-0 windows\n");

	/* No mTHP size enabled: the order-0 window, nothing lowered */
	if (ap_mthp_only(0, "never") != -ENOENT)
		ksft_exit_fail_msg("cannot disable mTHP\n");
	model_init(&m, M_ORDER0, 16, pages);
	ok = run_pattern("mTHP never", &m, o, pages, -1);
	free(m.pg);
	mthp_64k("auto");
	ksft_test_result(ok, "eligibility: no mTHP size maps order-0 windows\n");
	free(o);
}

/* 5. "auto" in sysfs: offered below the PMD size, refused at it. */
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

/*
 * 6. With 16, 64, 256 and 1024 KiB "auto", sequential writers that stop
 * after @stop pages: what they leave mapped and untouched is at most the
 * documented cap (max_pages pages, or two of the largest folios), never
 * more than they wrote, and nothing past the page table of their last page.
 */
static void test_cap(void)
{
	static const unsigned int kb[] = { 16, 64, 256, 1024 };
	static const unsigned long stops[] = { 1, 2, 5, 17, 100, 300, 773, 1000 };
	unsigned long pages = REGION_PAGES, i, j, pmd = PMD_SZ / pagesize;
	unsigned long cap = 2 * (1024 * 1024 / pagesize);
	size_t len = pages * pagesize;
	bool ok = true;
	int ret;
	char *p;

	ret = ap_mthp_set(kb, 4, "auto");
	if (ret) {
		ksft_test_result_skip("cap: 16/64/256/1024 KiB mTHP: %s\n",
				      strerror(-ret));
		mthp_64k("auto");
		return;
	}
	ap_set_sysctls(1, 16);
	for (i = 0; i < ARRAY_SIZE(stops); i++) {
		unsigned long stop = stops[i], extra = 0, far = 0;

		p = map_region(len);
		reset_prediction();
		for (j = 0; j < stop; j++)
			poke(p + j * pagesize, 1);
		for (j = stop; j < pages; j++) {
			if (!pagemap_is_populated(pagemap_fd, p + j * pagesize))
				continue;
			extra++;
			far += j / pmd != (stop - 1) / pmd;
		}
		ksft_print_msg("cap: stop after %lu pages: %lu untouched pages mapped\n",
			       stop, extra);
		if (extra > stop || extra > cap - 1 || far) {
			ksft_print_msg("cap: %lu untouched (bound %lu), %lu past the page table\n",
				       extra, stop < cap - 1 ? stop : cap - 1, far);
			ok = false;
		}
		unmap_region(p, len);
	}
	mthp_64k("auto");
	ksft_test_result(ok, "cap: a stream that stops, 16K to 1M auto\n");
}

/* 7. Pages mapped ahead read zero; the data survives fork. */
static void test_tail_zero(void)
{
	unsigned long pages = REGION_PAGES, stop = 300, i, bad = 0;
	size_t len = pages * pagesize;
	struct model m;
	int status;
	pid_t pid;
	char *p;

	ap_set_sysctls(1, 16);
	model_init(&m, M_PREFAULT, 16, pages);
	for (i = 0; i < stop; i++)
		model_fault(&m, i), i = m.next - 1;
	p = map_region(len);
	reset_prediction();
	for (i = 0; i < stop; i++)
		memset(p + i * pagesize, (int)(i % 251) + 1, pagesize);
	/* The window the last fault mapped ends past @stop */
	for (i = stop; i < pages && m.pg[i]; i++) {
		unsigned long j;

		if (!pagemap_is_populated(pagemap_fd, p + i * pagesize))
			bad++;
		for (j = 0; j < pagesize; j++)
			if (p[i * pagesize + j])
				bad++;
	}
	ksft_print_msg("tail_zero: pages %lu..%lu mapped ahead, %lu bad bytes\n",
		       stop, i, bad);
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
	free(m.pg);
	ksft_test_result(!bad, "tail_zero: ahead pages zero, data kept over fork\n");
}

/*
 * One writer of test_edges(): the VMA is pages [@first, @last) of a fresh
 * PMD aligned region; its first @reads pages are read upwards (read faults
 * map the zero page), then every page is written once, upwards, or
 * downwards if @down, with vm.anon_prefault=@on. Sets @ord[i] to the folio
 * order of page i (page_order()) and returns the minor faults taken.
 */
static long edge_run(unsigned long first, unsigned long last, bool down,
		     unsigned long reads, int on, int *ord)
{
	size_t len = REGION_PAGES * pagesize;
	struct counts before, after;
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
	counts_read(&after);
	for (i = first; i < last; i++)
		ord[i] = page_order(p, i);
	unmap_region(p, len);
	return after.minflt - before.minflt;
}

/*
 * 8. "always" in a VMA that starts or ends inside a 64 KiB block: mTHP maps
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
	int *ord[2];
	long flt[2];
	int on;

	ord[0] = calloc(n, sizeof(int));
	ord[1] = calloc(n, sizeof(int));
	if (!ord[0] || !ord[1])
		ksft_exit_fail_perror("calloc");
	mthp_64k("always");
	for (k = 0; k < ARRAY_SIZE(c); k++) {
		unsigned long first = c[k].first;
		unsigned long last = c[k].last ?
			n - (1UL << forder) + c[k].last : n;

		for (on = 0; on < 2; on++)
			flt[on] = edge_run(first, last, c[k].down, c[k].reads,
					   on, ord[on]);
		for (bad = 0, big = 0, i = first; i < last; i++) {
			big += ord[0][i] == (int)forder;
			if (ord[1][i] != ord[0][i] && bad++ < 4)
				ksft_print_msg("edges %lu: page %lu: order %d on, %d off\n",
					       k, i, ord[1][i], ord[0][i]);
		}
		ksft_print_msg("edges %lu: pages %lu..%lu %s: %ld faults on, %ld off\n",
			       k, first, last, c[k].down ? "down" : "up",
			       flt[1], flt[0]);
		ksft_print_msg("edges %lu: %lu pages in 64 KiB folios off, %lu differ on\n",
			       k, big, bad);
		ksft_test_result(!bad && big && flt[1] <= flt[0],
				 "edges: always, VMA %s %lu pages into a 64 KiB block, %swritten %s: folios as mTHP alone\n",
				 c[k].last ? "ending" : "starting",
				 c[k].last ? c[k].last : first,
				 c[k].reads ? "read, then " : "",
				 c[k].down ? "downwards" : "upwards");
	}
	mthp_64k("auto");
	free(ord[0]);
	free(ord[1]);
}

#define NR_TESTS	(6 + 9 + 1 + 13 + 1 + 1 + 1 + 4)

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
	test_sysfs();
	test_cap();
	test_tail_zero();
	test_edges();
	ksft_finished();
}
