// SPDX-License-Identifier: GPL-2.0
/*
 * Race stress test for anonymous page fault prefaulting ("anon-prefault").
 *
 * With vm.anon_prefault=1 a task that faults sequentially has each write
 * fault map a window of up to vm.anon_prefault_max_pages pages: the extra
 * pages are allocated and zeroed before the PTE lock is taken and mapped
 * under it, skipping PTEs that were populated meanwhile.  This test races
 * that window mapping against concurrent VMA and page table changes and
 * checks that no page is ever lost, mapped twice, or shows data that
 * belongs to another page.
 *
 * NR_ARENAS arenas of ARENA_SZ bytes (PMD aligned, MADV_NOHUGEPAGE unless
 * -H lets them use 64 KiB mTHP, which the predictor then sizes, each
 * followed by a PROT_NONE guard page) are shared by:
 *
 *  - writer threads (-t): walk a run of pages of an arena in ascending
 *    order and write to every page a header {magic, arena, page index} at
 *    offset 0, {generation, hash} at offset 8 and a check word derived from
 *    both at the end of the page, with atomic exchanges that also check
 *    what they replace, then read the page back.  Runs often start at a
 *    common "hot" spot so that windows of different threads collide.
 *  - NR_MUTATORS mutator threads: MADV_DONTNEED, MADV_RANDOM/SEQUENTIAL,
 *    mprotect(RWX) and MADV_MERGEABLE/UNMERGEABLE (KSM) of sub-ranges (all
 *    of these split VMAs or zap PTEs while the writers fault),
 *    MADV_PAGEOUT, which swaps pages out while windows are mapped around
 *    them, fork() while the writers write, with the child
 *    checking and rewriting its copy, and, with the arena to themselves,
 *    mmap(MAP_FIXED) of fresh memory, mprotect(PROT_READ), MADV_DONTNEED
 *    and mremap() away and back.
 *
 * Each arena has a rwlock: writers and the racing operations take it for
 * read, the operations that would make a writer fault (PROT_READ, mremap)
 * or that check exact contents take it for write.  An arena's generation
 * only changes under the write lock, so all concurrent writers of a page
 * write the same values.
 *
 * Only MADV_DONTNEED (racing, of mutators and of writers that make a run
 * fault again; or exclusive) and the MAP_FIXED replacement may discard a
 * page's contents.  Each of them raises a per page discard count of the
 * pages of its range, and of no other, before and after (seqcount style),
 * so that a writer knows whether one overlapped its access of a page.
 * MADV_PAGEOUT, KSM, mprotect(), madvise() hints, mremap() and fork() keep
 * every byte and raise nothing.  Per page, the test records the generation
 * last written completely (read back exactly) and the discard count when
 * that write began.  What is checked, a mismatch failing the phase:
 *
 *  - whatever races with it, each checked word of a page is zero or
 *    identifies its own arena, page index and a generation that was current
 *    since the page was last known to be zero (per page "floor"), and words
 *    the test never writes are zero: no foreign or stale data;
 *  - a page written and not discarded since holds exactly the data of that
 *    write, never zero: before each write to it (no checked word may be
 *    zero; a concurrent writer may be storing a newer generation), in the
 *    exclusive checks of mprotect(PROT_READ) and before mremap(), and in a
 *    final check of every page at the end of each phase, which scans whole
 *    pages for stray bytes.  These checks accept zero only for a page
 *    discarded after its last write, and only zero for a page not written
 *    since it was known zero;
 *  - every write reads back exactly.  If a discard of that page overlapped
 *    it, it is done again once the discard is over; a write not known
 *    complete after MAX_ZAP_RETRIES tries is a mismatch too;
 *  - data survives mremap() away and back exactly, and the range left
 *    behind, fresh MAP_FIXED memory and an exclusive MADV_DONTNEED read
 *    zero;
 *  - a fork child sees only zero or the parent's data for each page of its
 *    copy, and its own writes read back exactly and never show in the
 *    parent.  A failed child, SIGSEGV or SIGBUS fails the test;
 *  - coverage, one result each per phase: anon_prefault_page in
 *    /proc/vmstat rose (windows were mapped ahead), and every type of
 *    operation ran, MADV_PAGEOUT also swapping pages out; a type that
 *    cannot run here (no KSM, no swap, PROT_EXEC refused) is skipped with
 *    the reason.
 *
 * The run is split into two phases, anon_prefault_max_pages=31 and 16,
 * of half the run time each.  A phase whose planned end comes before every
 * type of operation has had its effect runs on until each has (at most
 * COVER_GRACE seconds more), so that coverage depends on the kernel, not
 * on the speed of the machine.
 * As root, ksmd is started for the run (and put back as it was), and if no
 * swap is active, swap is enabled on the RAM disk AP_SWAP_DEV when there is
 * one (and disabled at the end).  If /proc/sys/vm/anon_prefault does not
 * exist every case is skipped.
 *
 * Usage: anon_prefault_stress [-h] [-d seconds] [-t threads]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "../kselftest.h"
#include "anon_prefault_util.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT		21
#endif

#define KSM_RUN			"/sys/kernel/mm/ksm/run"
#define KSM_SLEEP		"/sys/kernel/mm/ksm/sleep_millisecs"
#define KSM_SCAN		"/sys/kernel/mm/ksm/pages_to_scan"

#define SZ_1M			0x100000UL
#define PMD_SZ			(2UL << 20)
#define NR_ARENAS		8
#define ARENA_SZ		(4 * SZ_1M)
#define CHILD_REGION_SZ		SZ_1M
#define NR_MUTATORS		2
#define MAX_WRITERS		64
#define DEF_DURATION		60
#define DEF_WRITERS		4
#define MAX_RUN_PAGES		256
#define MAX_REPORTS		10
#define MAX_ZAP_RETRIES		64
#define ZAP_BUSY		UINT_MAX	/* a discard is in flight */
#define FORK_INTERVAL		0.25
#define CHILD_GRACE		20.0
/* How long a phase may run past its planned end to cover every operation */
#define COVER_GRACE		60.0
#define THREAD_STACK		(256 * 1024)
#define CHILD_ARENA_ID		0xff
#define CHILD_SEGV		254
#define CHILD_ERROR		255
#define CHILD_MAX_BAD		253

#define NR_PHASES		2
#define VMSTAT_AHEAD		"anon_prefault_page"	/* pages mapped ahead */

#define MAGIC			0x41504653U	/* "APFS" */
#define CHILD_MAGIC		0x43484c44U	/* "CHLD" */

/*
 * All accesses to the arenas are single-copy atomic 64-bit loads, stores and
 * exchanges that the compiler may neither drop, merge nor tear: a word is
 * always either fully old or fully new, whatever races with it.
 */
#define poke(addr, val)	__atomic_store_n((unsigned long long *)(addr), (val), __ATOMIC_RELAXED)
#define peek(addr)	__atomic_load_n((const unsigned long long *)(addr), __ATOMIC_RELAXED)

#define xchg(addr, val)	__atomic_exchange_n((unsigned long long *)(addr), (val), __ATOMIC_RELAXED)

#define inc(var, n)	__atomic_fetch_add(&(var), (n), __ATOMIC_RELAXED)

/*
 * What is known about one page of an arena.  @zstart and @zend count the
 * operations that discarded the page's contents (MADV_DONTNEED, MAP_FIXED
 * replacement): @zstart is raised before and @zend after each of them, so
 * an access of the page between two equal samples of @zstart, taken while
 * @zstart == @zend, overlapped none.  @wgen and @wzap say what the page
 * must hold: the data of generation @wgen (none: zero if @wgen is 0) for
 * as long as @zstart is still @wzap.
 */
struct page_state {
	unsigned int floor;		/* oldest generation it may hold */
	unsigned int wgen;		/* generation last written completely */
	unsigned int wzap;		/* @zstart when that write began */
	unsigned int zstart;		/* discards of this page started */
	unsigned int zend;		/* ... and finished */
};

struct arena {
	pthread_rwlock_t lock;
	char *base;
	unsigned int id;
	unsigned int gen;		/* changes only under the write lock */
	struct page_state *pg;		/* arena_pages entries */
};

enum op {
	OP_ZAP,			/* racing: MADV_DONTNEED */
	OP_ADVISE,		/* racing: MADV_RANDOM/SEQUENTIAL, then NORMAL */
	OP_MPROT_X,		/* racing: mprotect RWX, then RW */
	OP_PAGEOUT,		/* racing: MADV_PAGEOUT */
	OP_KSM,			/* racing: MADV_MERGEABLE, then UNMERGEABLE */
	OP_REPLACE,		/* exclusive: mmap MAP_FIXED fresh memory */
	OP_MPROTECT,		/* exclusive: mprotect PROT_READ, then RW */
	OP_ZAP_LOCKED,		/* exclusive: MADV_DONTNEED, must read zero */
	OP_MREMAP,		/* exclusive: mremap away and back */
	OP_FORK,		/* shared: child checks and rewrites its copy */
	NR_OPS
};

/* anon_prefault_max_pages of each phase. */
static const int phase_max_pages[NR_PHASES] = { 31, 16 };

static const char * const op_names[NR_OPS] = {
	"zap", "advise", "mprot_x", "pageout", "ksm", "replace", "mprotect",
	"zap_locked", "mremap", "fork",
};

/* Percent chance of each operation. */
static const unsigned int op_weight[NR_OPS] = {
	18, 14, 8, 12, 6, 12, 10, 6, 10, 4
};

struct worker {
	pthread_t thread;
	unsigned int id;
	unsigned long long rng;
	unsigned long pages;		/* writers: pages written */
	unsigned long zap_retries;	/* writers: pages rewritten */
	unsigned long ops[NR_OPS];	/* mutators */
	char *scratch;			/* mutators: mremap target */
	unsigned long long *snap;	/* mutators: mremap snapshot */
	double last_fork;
	unsigned int sweep;		/* mutators: next op of the first sweep */
};

struct stats {
	unsigned long mismatches;
	unsigned long gave_up;		/* writes given up (mismatches too) */
	unsigned long checked;		/* pages verified by mutators */
	unsigned long held;		/* ... of which had to hold data */
	unsigned long children;
	unsigned long child_fail;
	unsigned long child_bad;	/* mismatches reported by children */
};

/* Where a page check failed. */
struct pgcheck {
	unsigned int off;
	unsigned long long got;
	unsigned long long want;
	const char *why;
};

static size_t pagesize;
static unsigned long arena_pages;
static unsigned int zero_offs[4];	/* sampled words that must stay zero */
static struct arena arenas[NR_ARENAS];
static struct worker writers[MAX_WRITERS];
static struct worker mutators[NR_MUTATORS];
static struct stats st;			/* this phase */
static struct stats fork_st;		/* all phases */
static unsigned long reports;
static unsigned long long seed;
static double deadline;			/* the phase's planned end */
static bool phase_over;			/* ... and every operation covered */
static long long phase_swpout;		/* pswpout when the phase began */
static unsigned int hot_arena;
static unsigned long hot_start;
static bool mprot_x_ok = true;
static bool dontunmap_ok = true;
static bool pageout_ok = true;
static bool swap_ok;
static bool ksm_ok;
static unsigned long ksm_merged;	/* pages seen merged before unmerging */
static char ksm_saved[3][32];
static bool have_sysctl;
static bool in_child;
static pid_t main_pid;

/* ------------------------------------------------------------------------ */
/* Output and sysctl helpers                                                 */
/* ------------------------------------------------------------------------ */

static void write_all(int fd, const char *s, size_t len)
{
	ssize_t ret;

	while (len) {
		ret = write(fd, s, len);
		if (ret <= 0)
			return;
		s += ret;
		len -= ret;
	}
}

/*
 * "# <message>" as one line.  A forked child of this multithreaded process
 * must not take the stdio lock, which another thread may have held at fork
 * time, so it formats into a buffer and calls write() itself.
 */
static __printf(1, 2) void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(buf + 2, sizeof(buf) - 2, fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if (in_child) {
		buf[0] = '#';
		buf[1] = ' ';
		len += 2;
		if ((size_t)len > sizeof(buf) - 1)
			len = sizeof(buf) - 1;
		write_all(STDOUT_FILENO, buf, len);
		return;
	}
	flockfile(stdout);
	ksft_print_msg("%s", buf + 2);
	funlockfile(stdout);
}

static void set_prefault(int enable, int max_pages)
{
	if (have_sysctl)
		ap_set_sysctls(enable, max_pages);
}

/* Give up on an unexpected system call failure. */
static void die(const char *what)
{
	int err = errno;

	say("%s: %s (%d)\n", what, strerror(err), err);
	if (in_child)
		_exit(CHILD_ERROR);
	ksft_exit_fail_msg("unexpected failure, giving up\n");
}

/*
 * Nothing in this test may fault on an arena legitimately: a SIGSEGV or
 * SIGBUS means the kernel lost a mapping.  Report it and stop at once.
 */
static void fatal_signal(int sig, siginfo_t *si, void *uc)
{
	const char *name = sig == SIGSEGV ? "SIGSEGV" : "SIGBUS";
	char buf[128];
	int len;

	(void)uc;
	if (in_child) {
		len = snprintf(buf, sizeof(buf), "# fork child: %s at %p\n",
			       name, si->si_addr);
		write_all(STDOUT_FILENO, buf, len);
		_exit(CHILD_SEGV);
	}
	len = snprintf(buf, sizeof(buf), "# %s at %p\nBail out!\n", name,
		       si->si_addr);
	write_all(STDOUT_FILENO, buf, len);
	ap_restore_sysctls();
	_exit(KSFT_FAIL);
}

/* ------------------------------------------------------------------------ */
/* Time and randomness                                                      */
/* ------------------------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool expired(void)
{
	return __atomic_load_n(&phase_over, __ATOMIC_RELAXED) ||
	       now() >= deadline + COVER_GRACE;
}

static unsigned long long rnd(unsigned long long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned long rnd_below(unsigned long long *s, unsigned long n)
{
	return rnd(s) % n;
}

/*
 * A random page range of an arena: half of the time short enough to fall
 * inside one prefault window, otherwise up to a quarter of the arena.
 */
static void rnd_range(unsigned long long *s, unsigned long *first,
		      unsigned long *npages)
{
	unsigned long n;

	if (rnd(s) & 1)
		n = 1 + rnd_below(s, 40);
	else
		n = 1 + rnd_below(s, arena_pages / 4);
	if (n > arena_pages)
		n = arena_pages;
	*first = rnd_below(s, arena_pages - n + 1);
	*npages = n;
}

/* ------------------------------------------------------------------------ */
/* Page contents                                                             */
/* ------------------------------------------------------------------------ */

static unsigned long long mix64(unsigned long long x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* Offset 0: who the page belongs to. */
static unsigned long long mk_w0(unsigned int magic, unsigned int id,
				unsigned long idx)
{
	return ((unsigned long long)magic << 32) |
	       ((unsigned long long)id << 24) | idx;
}

/* Offset 8: generation, hash of the owner and the generation. */
static unsigned long long mk_w1(unsigned long long w0, unsigned int gen)
{
	unsigned long long g = (unsigned long long)gen << 32;

	return g | (unsigned int)mix64(w0 ^ g ^ 0x5a5a);
}

/* Last word of the page: generation, check value derived from w0 and w1. */
static unsigned long long mk_wt(unsigned long long w0, unsigned int gen)
{
	unsigned long long g = (unsigned long long)gen << 32;

	return g | (unsigned int)mix64(w0 * 3 + mk_w1(w0, gen));
}

static unsigned long long mk_word(unsigned int off, unsigned long long w0,
				  unsigned int gen)
{
	if (!off)
		return w0;
	if (off == 8)
		return mk_w1(w0, gen);
	return mk_wt(w0, gen);
}

static bool bad_word(struct pgcheck *pc, unsigned int off,
		     unsigned long long got, unsigned long long want,
		     const char *why)
{
	pc->off = off;
	pc->got = got;
	pc->want = want;
	pc->why = why;
	return false;
}

/*
 * Word @v at offset @off (0, 8 or the last word) of the page whose header
 * is @w0: zero, or written for this page in a generation in [lo, hi].
 */
static bool word_ok(unsigned int off, unsigned long long v,
		    unsigned long long w0, unsigned int lo, unsigned int hi)
{
	unsigned int g = v >> 32;

	if (!v)
		return true;
	if (!off)
		return v == w0;
	if (g < lo || g > hi)
		return false;
	return v == mk_word(off, w0, g);
}

/*
 * The invariant that holds whatever races with the page: every checked
 * word is zero or belongs to this page and a valid generation.
 */
static bool check_racy(const char *p, unsigned long long w0, unsigned int lo,
		       unsigned int hi, struct pgcheck *pc)
{
	unsigned int offs[3] = { 0, 8, pagesize - 8 };
	unsigned long long v;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		v = peek(p + offs[i]);
		if (!word_ok(offs[i], v, w0, lo, hi))
			return bad_word(pc, offs[i], v,
					mk_word(offs[i], w0, hi),
					"foreign or stale data");
	}
	for (i = 0; i < ARRAY_SIZE(zero_offs); i++) {
		v = peek(p + zero_offs[i]);
		if (v)
			return bad_word(pc, zero_offs[i], v, 0, "stray data");
	}
	return true;
}

/*
 * Store the word at @off of the page whose header is @w0 for generation @hi
 * and check the value it replaced with word_ok(): the store and the check
 * are one atomic access, so even a page that is written without being read
 * first cannot hide foreign data from the check.
 */
static bool store_checked(char *p, unsigned int off, unsigned long long w0,
			  unsigned int lo, unsigned int hi, struct pgcheck *pc)
{
	unsigned long long want = mk_word(off, w0, hi);
	unsigned long long old = xchg(p + off, want);

	if (!word_ok(off, old, w0, lo, hi))
		return bad_word(pc, off, old, want, "overwrote foreign or stale data");
	return true;
}

/* The page holds exactly what was just written for generation @gen. */
static bool check_exact(const char *p, unsigned long long w0,
			unsigned int gen, struct pgcheck *pc)
{
	unsigned int offs[3] = { 0, 8, pagesize - 8 };
	unsigned long long v, want;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		v = peek(p + offs[i]);
		want = mk_word(offs[i], w0, gen);
		if (v != want)
			return bad_word(pc, offs[i], v, want,
					v ? "wrong data" : "data lost");
	}
	for (i = 0; i < ARRAY_SIZE(zero_offs); i++) {
		v = peek(p + zero_offs[i]);
		if (v)
			return bad_word(pc, zero_offs[i], v, 0, "stray data");
	}
	return true;
}

/*
 * Check a page that nobody writes or discards now against what is known
 * about it (@ps, generation @gen current): if it was written and not
 * discarded since, it holds exactly the data of that write; if it was
 * discarded since it was last written, it reads zero or exactly that data;
 * if it is known zero, it is zero.  @full: scan the whole page for stray
 * bytes, not just the sampled words.
 */
static bool check_quiet(const char *p, unsigned long long w0,
			const struct page_state *ps, unsigned int gen,
			bool full, struct pgcheck *pc)
{
	unsigned long long v0, v1, vt, v;
	size_t off;

	if (!check_racy(p, w0, ps->floor, gen, pc))
		return false;
	v0 = peek(p);
	v1 = peek(p + 8);
	vt = peek(p + pagesize - 8);
	if (ps->zstart != ps->wzap && !v0 && !v1 && !vt) {
		/* Discarded after it was last written. */
	} else if (ps->wgen) {
		if (!check_exact(p, w0, ps->wgen, pc))
			return false;
	} else if (v0 || v1 || vt) {
		off = v0 ? 0 : v1 ? 8 : pagesize - 8;
		return bad_word(pc, off, peek(p + off), 0,
				"data that no write completed");
	}
	if (!full)
		return true;
	for (off = 16; off < pagesize - 8; off += 8) {
		v = peek(p + off);
		if (v)
			return bad_word(pc, off, v, 0, "stray data");
	}
	return true;
}

/* Count and, for the first few, describe a mismatch. */
static void report(const char *what, unsigned int id, unsigned long idx,
		   const char *p, const struct pgcheck *pc)
{
	unsigned int magic = pc->got >> 32;
	char extra[96] = "";

	inc(st.mismatches, 1);
	if (inc(reports, 1) >= MAX_REPORTS)
		return;
	if (!pc->off && (magic == MAGIC || magic == CHILD_MAGIC))
		snprintf(extra, sizeof(extra),
			 " (header of %sarena %u page %llu)",
			 magic == MAGIC ? "" : "fork child's ",
			 (unsigned int)(pc->got >> 24) & 0xff,
			 pc->got & 0xffffff);
	else if (pc->got && (pc->off == 8 || pc->off == pagesize - 8))
		snprintf(extra, sizeof(extra), " (generation %u)",
			 (unsigned int)(pc->got >> 32));
	say("%s: arena %u page %lu at %p, word +%#x: %s: expected %#llx, got %#llx%s\n",
	    what, id, idx, p, pc->off, pc->why, pc->want, pc->got, extra);
}

/* ------------------------------------------------------------------------ */
/* Arenas                                                                    */
/* ------------------------------------------------------------------------ */

static char *page_addr(struct arena *a, unsigned long idx)
{
	return a->base + idx * pagesize;
}

/* -H: 64 KiB mTHP "auto", and no MADV_NOHUGEPAGE on the arenas */
static bool use_mthp;

/* MADV_NOHUGEPAGE, unless the test runs with 64 KiB mTHP (-H). */
static int no_thp(void *p, size_t len)
{
	return use_mthp ? 0 : madvise(p, len, MADV_NOHUGEPAGE);
}

/*
 * Map @len bytes PMD aligned, MADV_NOHUGEPAGE (see no_thp()), followed by a
 * PROT_NONE guard page so that the region is a VMA of its own.
 */
static char *map_region(size_t len, int prot)
{
	const char *what;
	char *p = ap_map_region(len, prot, &what);

	if (!p)
		die(what);
	if (no_thp(p, len))
		die("MADV_NOHUGEPAGE");
	return p;
}

static void setup_arenas(void)
{
	pthread_rwlockattr_t attr;
	unsigned int i;

	pthread_rwlockattr_init(&attr);
	/* Exclusive operations must not starve behind the writers. */
	pthread_rwlockattr_setkind_np(&attr,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (i = 0; i < NR_ARENAS; i++) {
		struct arena *a = &arenas[i];
		unsigned long j;

		if (pthread_rwlock_init(&a->lock, &attr))
			ksft_exit_fail_msg("pthread_rwlock_init\n");
		a->id = i;
		a->gen = 1;
		a->base = map_region(ARENA_SZ, PROT_READ | PROT_WRITE);
		/* Every page known zero, never written or discarded. */
		a->pg = calloc(arena_pages, sizeof(*a->pg));
		if (!a->pg)
			die("calloc");
		for (j = 0; j < arena_pages; j++)
			a->pg[j].floor = 1;
	}
	pthread_rwlockattr_destroy(&attr);
}

/*
 * Before and after discarding the contents of pages [first, first + n):
 * mark each page of the range, and only those, as being discarded.
 */
static void zap_begin(struct arena *a, unsigned long first, unsigned long n)
{
	unsigned long i;

	for (i = first; i < first + n; i++)
		__atomic_fetch_add(&a->pg[i].zstart, 1, __ATOMIC_SEQ_CST);
}

static void zap_end(struct arena *a, unsigned long first, unsigned long n)
{
	unsigned long i;

	for (i = first; i < first + n; i++)
		__atomic_fetch_add(&a->pg[i].zend, 1, __ATOMIC_SEQ_CST);
}

/*
 * Racing MADV_DONTNEED: may zero any page of the range between a writer's
 * store and its read back.  Writers detect the overlap with the counters.
 */
static void zap_racing(struct arena *a, unsigned long first, unsigned long n)
{
	zap_begin(a, first, n);
	if (madvise(page_addr(a, first), n * pagesize, MADV_DONTNEED))
		die("MADV_DONTNEED");
	zap_end(a, first, n);
}

/*
 * Before an access of page @idx: its discard count, or ZAP_BUSY if a
 * discard of it is in flight.
 */
static unsigned int zap_sample(struct arena *a, unsigned long idx)
{
	struct page_state *ps = &a->pg[idx];
	unsigned int end = __atomic_load_n(&ps->zend, __ATOMIC_SEQ_CST);
	unsigned int start = __atomic_load_n(&ps->zstart, __ATOMIC_SEQ_CST);

	return start == end ? start : ZAP_BUSY;
}

/* After it: may page @idx have been discarded during the access? */
static bool zap_raced(struct arena *a, unsigned long idx, unsigned int sample)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return sample == ZAP_BUSY ||
	       __atomic_load_n(&a->pg[idx].zstart, __ATOMIC_SEQ_CST) != sample;
}

/* Wait until no discard of page @idx is in flight. */
static void zap_wait(struct arena *a, unsigned long idx)
{
	while (zap_sample(a, idx) == ZAP_BUSY)
		sched_yield();
}

/*
 * Page @idx was found holding exactly the data of generation @gen, after
 * zap_sample() returned @sample and with no discard since.
 */
static void record_write(struct arena *a, unsigned long idx, unsigned int gen,
			 unsigned int sample)
{
	struct page_state *ps = &a->pg[idx];

	__atomic_store_n(&ps->wgen, gen, __ATOMIC_SEQ_CST);
	__atomic_store_n(&ps->wzap, sample, __ATOMIC_SEQ_CST);
}

/* ------------------------------------------------------------------------ */
/* Writers                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * Before page @idx is written (read lock held, @sample from zap_sample()):
 * if it was written completely and not discarded since, none of its words
 * may read zero, although a concurrent writer may be storing a newer
 * generation.  A page that is known to hold data is mapped (or swapped
 * out), so reading it here does not change how it faults.
 */
static bool check_kept(struct arena *a, unsigned long idx, unsigned int sample,
		       struct pgcheck *pc)
{
	struct page_state *ps = &a->pg[idx];
	unsigned int offs[3] = { 0, 8, pagesize - 8 };
	const char *p = page_addr(a, idx);
	unsigned int wzap, wgen, i;

	wzap = __atomic_load_n(&ps->wzap, __ATOMIC_SEQ_CST);
	wgen = __atomic_load_n(&ps->wgen, __ATOMIC_SEQ_CST);
	if (sample == ZAP_BUSY || !wgen || wzap != sample)
		return true;
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		if (peek(p + offs[i]))
			continue;
		/* Zero is fine only if a discard has started since. */
		if (zap_raced(a, idx, sample))
			return true;
		return bad_word(pc, offs[i], 0,
				mk_word(offs[i], mk_w0(MAGIC, a->id, idx), wgen),
				"written data lost");
	}
	return true;
}

/*
 * Write page @idx of @a (read lock held) and read it back.  @read_first:
 * read (and check) the page before the first store, so that it is faulted
 * in by a read fault.
 */
static void write_page(struct worker *w, struct arena *a, unsigned long idx,
		       bool read_first)
{
	char *p = page_addr(a, idx);
	unsigned long long w0 = mk_w0(MAGIC, a->id, idx);
	unsigned int gen = a->gen, lo = a->pg[idx].floor;
	struct pgcheck pc;
	unsigned int zs;
	bool exact;
	int try;

	for (try = 0; ; try++) {
		/* The first try races any discard of the page in flight. */
		zs = zap_sample(a, idx);
		if (!check_kept(a, idx, zs, &pc)) {
			report("before write", a->id, idx, p, &pc);
			break;
		}
		if (read_first && !check_racy(p, w0, lo, gen, &pc)) {
			report("before write", a->id, idx, p, &pc);
			break;
		}
		/*
		 * The first store faults the page in (a write fault unless
		 * @read_first).  What each store replaces, and the rest of the
		 * page, must be zero or this page's data.
		 */
		if (!store_checked(p, 0, w0, lo, gen, &pc) ||
		    !check_racy(p, w0, lo, gen, &pc) ||
		    !store_checked(p, 8, w0, lo, gen, &pc) ||
		    !store_checked(p, pagesize - 8, w0, lo, gen, &pc)) {
			report("write", a->id, idx, p, &pc);
			break;
		}
		exact = check_exact(p, w0, gen, &pc);
		if (exact && zs != ZAP_BUSY) {
			record_write(a, idx, gen, zs);
			break;
		}
		if (!exact && !zap_raced(a, idx, zs)) {
			report("read back", a->id, idx, p, &pc);
			break;
		}
		/* Zeroed under our feet: what is left must still be ours. */
		if (!exact && !check_racy(p, w0, lo, gen, &pc)) {
			report("read back after zap", a->id, idx, p, &pc);
			break;
		}
		/*
		 * Write it again once the discard is over, so that the write
		 * can be known complete: only a discard that starts during
		 * the next try makes it fail again.
		 */
		w->zap_retries++;
		if (try + 1 >= MAX_ZAP_RETRIES) {
			/* The page is not known written: not an excuse. */
			bad_word(&pc, 0, peek(p), w0,
				 "given up, discarded during every try");
			report("read back", a->id, idx, p, &pc);
			inc(st.gave_up, 1);
			break;
		}
		zap_wait(a, idx);
	}
	w->pages++;
}

/* Read lock an arena, @first if it is free, else another free one. */
static struct arena *lock_any_read(unsigned int first)
{
	unsigned int i;

	for (i = 0; i < NR_ARENAS; i++) {
		struct arena *a = &arenas[(first + i) % NR_ARENAS];

		if (!pthread_rwlock_tryrdlock(&a->lock))
			return a;
	}
	pthread_rwlock_rdlock(&arenas[first].lock);
	return &arenas[first];
}

static void *writer_main(void *arg)
{
	struct worker *w = arg;
	unsigned long runs = 0;

	while (!expired()) {
		unsigned long first, n, i;
		unsigned int want;
		bool hot, read_first;
		struct arena *a;

		if (w->id == 0 && !(runs % 8)) {
			__atomic_store_n(&hot_arena, rnd_below(&w->rng, NR_ARENAS),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&hot_start,
					 rnd_below(&w->rng, arena_pages),
					 __ATOMIC_RELAXED);
		}
		runs++;
		hot = rnd(&w->rng) & 1;
		want = hot ? __atomic_load_n(&hot_arena, __ATOMIC_RELAXED) :
			     rnd_below(&w->rng, NR_ARENAS);
		a = lock_any_read(want);
		if (hot && a->id == want)
			first = __atomic_load_n(&hot_start, __ATOMIC_RELAXED);
		else if (rnd(&w->rng) & 1)
			first = rnd_below(&w->rng, arena_pages);
		else	/* start on a PMD boundary */
			first = rnd_below(&w->rng, ARENA_SZ / PMD_SZ) *
				(PMD_SZ / pagesize);
		n = 16 + rnd_below(&w->rng, MAX_RUN_PAGES - 15);
		if (n > arena_pages - first)
			n = arena_pages - first;
		/*
		 * Make the run fault again: zap it first, racing the other
		 * writers, who may be faulting windows into it right now.
		 */
		if (!(rnd(&w->rng) % (hot ? 4 : 3)))
			zap_racing(a, first, n);
		read_first = !(rnd(&w->rng) % 4);
		for (i = 0; i < n; i++) {
			if (!(i % 16) && expired())
				break;
			write_page(w, a, first + i, read_first);
		}
		pthread_rwlock_unlock(&a->lock);
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* Mutators                                                                  */
/* ------------------------------------------------------------------------ */

/* Write lock an arena, @first if it is free, else another free one. */
static struct arena *lock_any_write(unsigned int first)
{
	unsigned int i;

	for (i = 0; i < NR_ARENAS; i++) {
		struct arena *a = &arenas[(first + i) % NR_ARENAS];

		if (!pthread_rwlock_trywrlock(&a->lock))
			return a;
	}
	pthread_rwlock_wrlock(&arenas[first].lock);
	return &arenas[first];
}

/*
 * Exclusive: check pages [first, first + n) with check_quiet().  Returns
 * how many of them had to hold written data.
 */
static unsigned long check_quiet_range(struct arena *a, unsigned long first,
				       unsigned long n, bool full,
				       const char *what)
{
	unsigned long i, held = 0;
	struct pgcheck pc;

	for (i = first; i < first + n; i++) {
		const struct page_state *ps = &a->pg[i];
		char *p = page_addr(a, i);

		if (ps->wgen && ps->zstart == ps->wzap)
			held++;
		if (!check_quiet(p, mk_w0(MAGIC, a->id, i), ps, a->gen, full,
				 &pc))
			report(what, a->id, i, p, &pc);
	}
	inc(st.checked, n);
	inc(st.held, held);
	return held;
}

/* Exclusive: pages [first, first + n) must read as zero. */
static void check_zero_range(struct arena *a, unsigned long first,
			     unsigned long n, const char *what)
{
	unsigned long i;
	struct pgcheck pc;

	for (i = first; i < first + n; i++) {
		char *p = page_addr(a, i);

		/* An empty generation range admits only zero. */
		if (!check_racy(p, mk_w0(MAGIC, a->id, i), 1, 0, &pc))
			report(what, a->id, i, p, &pc);
	}
	inc(st.checked, n);
}

/*
 * Exclusive, after discarding pages [first, first + n): they are known
 * zero, and older generations may not come back.
 */
static void new_generation(struct arena *a, unsigned long first,
			   unsigned long n)
{
	unsigned long i;

	a->gen++;
	for (i = first; i < first + n; i++) {
		a->pg[i].floor = a->gen;
		a->pg[i].wgen = 0;
		a->pg[i].wzap = a->pg[i].zstart;
	}
}

static void op_replace(struct worker *m, struct arena *a)
{
	unsigned long first, n;
	char *p, *q;

	rnd_range(&m->rng, &first, &n);
	if (!(rnd(&m->rng) % 4)) {
		first = 0;
		n = arena_pages;
	}
	p = page_addr(a, first);
	zap_begin(a, first, n);
	q = mmap(p, n * pagesize, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (q != p)
		die("mmap MAP_FIXED");
	zap_end(a, first, n);
	if (no_thp(p, n * pagesize))
		die("MADV_NOHUGEPAGE");
	new_generation(a, first, n);
	if (rnd(&m->rng) & 1)
		check_zero_range(a, first, n, "fresh mmap");
}

static void op_mprotect(struct worker *m, struct arena *a)
{
	unsigned long first, n;
	char *p;

	rnd_range(&m->rng, &first, &n);
	p = page_addr(a, first);
	if (mprotect(p, n * pagesize, PROT_READ))
		die("mprotect PROT_READ");
	/* Read faults in a read-only VMA split in the middle of a window. */
	check_quiet_range(a, first, n, false, "mprotect PROT_READ");
	if (mprotect(p, n * pagesize, PROT_READ | PROT_WRITE))
		die("mprotect PROT_READ|PROT_WRITE");
	/* Make the writers overwrite what is there. */
	a->gen++;
}

static void op_zap_locked(struct worker *m, struct arena *a)
{
	unsigned long first, n;

	rnd_range(&m->rng, &first, &n);
	zap_begin(a, first, n);
	if (madvise(page_addr(a, first), n * pagesize, MADV_DONTNEED))
		die("MADV_DONTNEED");
	zap_end(a, first, n);
	check_zero_range(a, first, n, "after MADV_DONTNEED");
	new_generation(a, first, n);
}

/* Reserve (again) the part of the scratch area at @off, @len bytes. */
static void reserve_scratch(struct worker *m, size_t off, size_t len)
{
	char *p = m->scratch + off, *q;

	q = mmap(p, len, PROT_NONE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
		 -1, 0);
	if (q == p)
		return;
	if (q != MAP_FAILED)
		munmap(q, len);
	/* Someone else mapped into the hole: leave it, take a new area. */
	m->scratch = map_region(ARENA_SZ, PROT_NONE);
}

/* Compare pages [first, first + n) at @base with the snapshot. */
static void compare_snap(struct worker *m, struct arena *a, char *base,
			 unsigned long first, unsigned long n, const char *what)
{
	unsigned int offs[3] = { 0, 8, pagesize - 8 };
	unsigned long i;
	unsigned int j;
	struct pgcheck pc;

	for (i = 0; i < n; i++) {
		char *p = base + (first + i) * pagesize;
		unsigned long long *s = &m->snap[3 * i];

		for (j = 0; j < 3; j++) {
			unsigned long long v = peek(p + offs[j]);

			if (v != s[j]) {
				bad_word(&pc, offs[j], v, s[j],
					 v ? "wrong data" : "data lost");
				report(what, a->id, first + i, p, &pc);
				break;
			}
		}
	}
	inc(st.checked, n);
}

/*
 * Move a range of the arena to the scratch area and back; the data must
 * survive both moves.  The range must be inside one VMA: on EFAULT try a
 * shorter one.
 */
static void op_mremap(struct worker *m, struct arena *a)
{
	int flags = MREMAP_MAYMOVE | MREMAP_FIXED;
	unsigned long first, n, i;
	char *p, *dst, *q;

	rnd_range(&m->rng, &first, &n);
	p = page_addr(a, first);
	dst = m->scratch + first * pagesize;
	check_quiet_range(a, first, n, false, "before mremap");
	for (i = 0; i < n; i++) {
		char *pg = page_addr(a, first + i);

		m->snap[3 * i] = peek(pg);
		m->snap[3 * i + 1] = peek(pg + 8);
		m->snap[3 * i + 2] = peek(pg + pagesize - 8);
	}
	/* Leave the old range mapped (and empty) so that it cannot be taken. */
	if (__atomic_load_n(&dontunmap_ok, __ATOMIC_RELAXED))
		flags |= MREMAP_DONTUNMAP;
	for (;;) {
		q = mremap(p, n * pagesize, n * pagesize, flags, dst);
		if (q != MAP_FAILED)
			break;
		if (errno == EINVAL && (flags & MREMAP_DONTUNMAP)) {
			__atomic_store_n(&dontunmap_ok, false, __ATOMIC_RELAXED);
			flags &= ~MREMAP_DONTUNMAP;
			continue;
		}
		if (errno != EFAULT || n == 1)
			die("mremap");
		n /= 2;
	}
	if (q != dst)
		ksft_exit_fail_msg("mremap moved to %p, not %p\n", q, dst);
	if (!(flags & MREMAP_DONTUNMAP)) {
		q = mmap(p, n * pagesize, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (q != p)
			ksft_exit_fail_msg("arena %u: hole at %p taken\n",
					   a->id, p);
	}
	compare_snap(m, a, m->scratch, first, n, "mremap away");
	if (flags & MREMAP_DONTUNMAP)
		check_zero_range(a, first, n, "MREMAP_DONTUNMAP source");
	q = mremap(dst, n * pagesize, n * pagesize,
		   MREMAP_MAYMOVE | MREMAP_FIXED, p);
	if (q != p)
		die("mremap back");
	compare_snap(m, a, a->base, first, n, "mremap back");
	reserve_scratch(m, first * pagesize, n * pagesize);
}

/* Racing: split the VMA with a different madvise() hint, then merge. */
static void op_advise(struct worker *m, struct arena *a)
{
	unsigned long first, n;
	int advice = rnd(&m->rng) & 1 ? MADV_RANDOM : MADV_SEQUENTIAL;
	char *p;

	rnd_range(&m->rng, &first, &n);
	p = page_addr(a, first);
	if (madvise(p, n * pagesize, advice))
		die("madvise");
	usleep(rnd_below(&m->rng, 1000));
	if (madvise(p, n * pagesize, MADV_NORMAL))
		die("MADV_NORMAL");
}

/*
 * Racing: split the VMA by protection, writes stay allowed.  Returns false
 * if PROT_EXEC is not allowed here.
 */
static bool op_mprot_x(struct worker *m, struct arena *a)
{
	unsigned long first, n;
	char *p;

	if (!__atomic_load_n(&mprot_x_ok, __ATOMIC_RELAXED))
		return false;
	rnd_range(&m->rng, &first, &n);
	p = page_addr(a, first);
	if (mprotect(p, n * pagesize, PROT_READ | PROT_WRITE | PROT_EXEC)) {
		if (errno != EACCES && errno != EPERM)
			die("mprotect PROT_EXEC");
		say("mprotect(PROT_EXEC) not allowed, skipping it\n");
		__atomic_store_n(&mprot_x_ok, false, __ATOMIC_RELAXED);
		return false;
	}
	usleep(rnd_below(&m->rng, 1000));
	if (mprotect(p, n * pagesize, PROT_READ | PROT_WRITE))
		die("mprotect PROT_READ|PROT_WRITE");
	return true;
}

/*
 * Racing: reclaim a range.  With swap, its pages go to swap and come back
 * when touched again; no written byte may change, so this is no discard.
 * Returns false if MADV_PAGEOUT is not supported.
 */
static bool op_pageout(struct worker *m, struct arena *a)
{
	unsigned long first, n;

	if (!__atomic_load_n(&pageout_ok, __ATOMIC_RELAXED))
		return false;
	rnd_range(&m->rng, &first, &n);
	if (madvise(page_addr(a, first), n * pagesize, MADV_PAGEOUT)) {
		if (errno != EINVAL)
			die("MADV_PAGEOUT");
		say("MADV_PAGEOUT not supported, skipping it\n");
		__atomic_store_n(&pageout_ok, false, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

static unsigned long ksm_full_scans(void)
{
	char buf[32];

	if (ap_read_file("/sys/kernel/mm/ksm/full_scans", buf, sizeof(buf)))
		return 0;
	return strtoul(buf, NULL, 10);
}

/* This process's pages merged by KSM right now (0 if unknown). */
static unsigned long ksm_merged_now(void)
{
	static const char key[] = "ksm_merging_pages ";
	char buf[512], *s;

	if (ap_read_file("/proc/self/ksm_stat", buf, sizeof(buf)))
		return 0;
	s = strstr(buf, key);
	return s ? strtoul(s + strlen(key), NULL, 10) : 0;
}

/*
 * Racing: let ksmd merge the identical (zero) pages of a range for a while,
 * then unmerge them.  Writes to merged pages break COW; no data may change.
 * Returns false without KSM.
 */
static bool op_ksm(struct worker *m, struct arena *a)
{
	unsigned long first, n, target;
	unsigned int i;
	char *p;

	if (!__atomic_load_n(&ksm_ok, __ATOMIC_RELAXED))
		return false;
	rnd_range(&m->rng, &first, &n);
	p = page_addr(a, first);
	if (madvise(p, n * pagesize, MADV_MERGEABLE))
		die("MADV_MERGEABLE");
	/* Merging takes two scans that find a page unchanged. */
	target = ksm_full_scans() + 3;
	for (i = 0; i < 50 && ksm_full_scans() < target && !expired(); i++)
		usleep(10000);
	inc(ksm_merged, ksm_merged_now());
	if (madvise(p, n * pagesize, MADV_UNMERGEABLE))
		die("MADV_UNMERGEABLE");
	return true;
}

static void op_zap(struct worker *m, struct arena *a)
{
	unsigned long first, n;

	rnd_range(&m->rng, &first, &n);
	zap_racing(a, first, n);
}

/* Child: write the child's pattern to @n pages at @base, read it back. */
static unsigned long child_write(char *base, unsigned int id, unsigned long n,
				 unsigned long *done)
{
	unsigned long i, bad = 0;
	struct pgcheck pc;

	for (i = 0; i < n; i++) {
		char *p = base + i * pagesize;
		unsigned long long w0 = mk_w0(CHILD_MAGIC, id, i);

		if (!(i % 16) && expired())
			break;
		poke(p, w0);
		poke(p + 8, mk_w1(w0, 1));
		poke(p + pagesize - 8, mk_wt(w0, 1));
		if (!check_exact(p, w0, 1, &pc)) {
			report("fork child: read back", id, i, p, &pc);
			bad++;
		}
	}
	*done = i;
	return bad;
}

static unsigned long child_verify(char *base, unsigned int id, unsigned long n)
{
	unsigned long i, bad = 0;
	struct pgcheck pc;

	for (i = 0; i < n; i++) {
		char *p = base + i * pagesize;

		if (!check_exact(p, mk_w0(CHILD_MAGIC, id, i), 1, &pc)) {
			report("fork child: final check", id, i, p, &pc);
			bad++;
		}
	}
	return bad;
}

/*
 * The child's copy of @a was taken while the parent's writers were writing
 * it: every page must be zero or the parent's data for that page.  Then
 * the child rewrites its copy (breaking COW while the parent keeps
 * writing) and a fresh region, and checks both.
 */
static void child_main(struct arena *a)
{
	unsigned long pages = CHILD_REGION_SZ / pagesize;
	unsigned long i, done, bad = 0;
	struct pgcheck pc;
	char *region;

	reports = 0;
	for (i = 0; i < arena_pages; i++) {
		char *p = page_addr(a, i);

		if (!check_racy(p, mk_w0(MAGIC, a->id, i), a->pg[i].floor,
				a->gen, &pc)) {
			report("fork child: inherited page", a->id, i, p, &pc);
			bad++;
		}
	}
	bad += child_write(a->base, a->id, arena_pages, &done);
	bad += child_verify(a->base, a->id, done);

	region = mmap(NULL, CHILD_REGION_SZ, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("fork child: mmap");
	no_thp(region, CHILD_REGION_SZ);
	for (i = 0; i < pages; i++) {
		char *p = region + i * pagesize;

		if (!check_racy(p, mk_w0(CHILD_MAGIC, CHILD_ARENA_ID, i), 1,
				0, &pc)) {
			report("fork child: fresh page", CHILD_ARENA_ID, i, p,
			       &pc);
			bad++;
		}
	}
	bad += child_write(region, CHILD_ARENA_ID, pages, &done);
	bad += child_verify(region, CHILD_ARENA_ID, done);
	_exit(bad > CHILD_MAX_BAD ? CHILD_MAX_BAD : bad);
}

/* Shared: fork with @a read locked, wait for the child, check the parent. */
static void op_fork(struct worker *m, struct arena *a)
{
	double give_up = deadline + CHILD_GRACE;
	unsigned long i;
	struct pgcheck pc;
	int status, ret;
	pid_t pid;

	m->last_fork = now();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		in_child = true;
		child_main(a);
	}
	inc(fork_st.children, 1);
	for (;;) {
		ret = waitpid(pid, &status, WNOHANG);
		if (ret == pid)
			break;
		if (ret < 0)
			die("waitpid");
		if (now() > give_up) {
			say("fork child %d did not finish, killing it\n", pid);
			kill(pid, SIGKILL);
			if (waitpid(pid, &status, 0) != pid)
				die("waitpid");
			break;
		}
		usleep(1000);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		inc(fork_st.child_fail, 1);
		if (WIFEXITED(status) && WEXITSTATUS(status) <= CHILD_MAX_BAD)
			inc(fork_st.child_bad, WEXITSTATUS(status));
		if (WIFEXITED(status))
			say("fork child %d of arena %u exited with %d\n", pid,
			    a->id, WEXITSTATUS(status));
		else
			say("fork child %d of arena %u: status %#x\n", pid,
			    a->id, status);
	}
	/* The child's writes must not show up here. */
	for (i = 0; i < arena_pages; i++) {
		char *p = page_addr(a, i);

		if (!check_racy(p, mk_w0(MAGIC, a->id, i), a->pg[i].floor,
				a->gen, &pc))
			report("parent after fork", a->id, i, p, &pc);
	}
	inc(st.checked, arena_pages);
}

static enum op op_missing(void);

/*
 * The first mutator starts each phase with one operation of every type,
 * forks included, so that each type runs in every phase; then the
 * operations are drawn at random.  Past the phase's planned end the first
 * mutator runs the types that have not had their effect yet, and returns
 * NR_OPS once every type has: a slow machine gets a longer phase (up to
 * COVER_GRACE), not a coverage failure.
 */
static enum op pick_op(struct worker *m)
{
	unsigned int r = rnd_below(&m->rng, 100), sum = 0;
	enum op op;

	if (m->id == 0 && m->sweep < NR_OPS)
		return m->sweep++;
	if (m->id == 0 && now() >= deadline)
		return op_missing();
	for (op = 0; op < NR_OPS; op++) {
		sum += op_weight[op];
		if (r < sum)
			break;
	}
	if (op >= NR_OPS || (op == OP_FORK && now() - m->last_fork < FORK_INTERVAL))
		op = OP_ZAP;
	return op;
}

static void *mutator_main(void *arg)
{
	struct worker *m = arg;

	while (!expired()) {
		unsigned int want = rnd_below(&m->rng, NR_ARENAS);
		enum op op = pick_op(m);
		struct arena *a;
		bool ran = true;

		if (op == NR_OPS) {
			__atomic_store_n(&phase_over, true, __ATOMIC_RELAXED);
			break;
		}

		switch (op) {
		case OP_ZAP:
		case OP_ADVISE:
		case OP_MPROT_X:
		case OP_PAGEOUT:
		case OP_KSM:
		case OP_FORK:
			/* Racing the writers, which hold it for read too. */
			pthread_rwlock_rdlock(&arenas[want].lock);
			a = &arenas[want];
			break;
		default:
			a = lock_any_write(want);
			break;
		}
		switch (op) {
		case OP_ZAP:
			op_zap(m, a);
			break;
		case OP_ADVISE:
			op_advise(m, a);
			break;
		case OP_MPROT_X:
			ran = op_mprot_x(m, a);
			break;
		case OP_PAGEOUT:
			ran = op_pageout(m, a);
			break;
		case OP_KSM:
			ran = op_ksm(m, a);
			break;
		case OP_REPLACE:
			op_replace(m, a);
			break;
		case OP_MPROTECT:
			op_mprotect(m, a);
			break;
		case OP_ZAP_LOCKED:
			op_zap_locked(m, a);
			break;
		case OP_MREMAP:
			op_mremap(m, a);
			break;
		default:
			op_fork(m, a);
			break;
		}
		pthread_rwlock_unlock(&a->lock);
		if (ran)
			inc(m->ops[op], 1);
		usleep(100 + rnd_below(&m->rng, 400));
	}
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* KSM                                                                       */
/* ------------------------------------------------------------------------ */

static const char * const ksm_files[3] = { KSM_SLEEP, KSM_SCAN, KSM_RUN };

/* Put ksmd back as ksm_start() found it (main process only). */
static void ksm_restore(void)
{
	int i;

	if (!ksm_ok || getpid() != main_pid)
		return;
	for (i = 0; i < 3; i++)
		ap_write_file(ksm_files[i], ksm_saved[i]);
}

/* Start ksmd, scanning briskly, if this kernel has KSM and we are root. */
static void ksm_start(void)
{
	static const char * const val[3] = { "10", "256", "1" };
	int i;

	for (i = 0; i < 3; i++)
		if (ap_read_file(ksm_files[i], ksm_saved[i],
				 sizeof(ksm_saved[i])))
			break;
	if (i < 3 || ap_write_file(KSM_RUN, ksm_saved[2])) {
		ksft_print_msg("KSM not available, no merge operations\n");
		return;
	}
	ksm_ok = true;
	atexit(ksm_restore);
	for (i = 0; i < 3; i++)
		if (ap_write_file(ksm_files[i], val[i]))
			die("starting ksmd");
}

static void ksm_report(void)
{
	if (!ksm_ok)
		return;
	ksft_print_msg("ksm: %lu full scans, %lu pages found merged before unmerging\n",
		       ksm_full_scans(), ksm_merged);
}

/* ------------------------------------------------------------------------ */
/* Phases                                                                    */
/* ------------------------------------------------------------------------ */

static long minflt(int who)
{
	struct rusage ru;

	if (getrusage(who, &ru))
		die("getrusage");
	return ru.ru_minflt;
}

static void start(struct worker *w, unsigned int id, void *(*fn)(void *))
{
	pthread_attr_t attr;
	int err;

	w->id = id;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	err = pthread_create(&w->thread, &attr, fn, w);
	if (err) {
		errno = err;
		die("pthread_create");
	}
	pthread_attr_destroy(&attr);
}

/* The "@key N" line of /proc/vmstat: N, or -1 if there is none. */
static long long vmstat_get(const char *key)
{
	static char buf[32768];
	size_t klen = strlen(key);
	char *s;

	if (ap_read_file("/proc/vmstat", buf, sizeof(buf)))
		return -1;
	for (s = buf; s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (!strncmp(s, key, klen) && s[klen] == ' ')
			return strtoll(s + klen + 1, NULL, 10);
	return -1;
}

/*
 * Everything joined: every page must be exactly what is known about it,
 * down to its last byte.  Returns how many pages had to hold written data.
 */
static unsigned long final_check(void)
{
	unsigned long held = 0;
	unsigned int i;

	for (i = 0; i < NR_ARENAS; i++)
		held += check_quiet_range(&arenas[i], 0, arena_pages, true,
					  "final check");
	return held;
}

/* Why operations of type @op could not run, or NULL. */
static const char *op_unavailable(enum op op)
{
	switch (op) {
	case OP_MPROT_X:
		return mprot_x_ok ? NULL : "mprotect(PROT_EXEC) not allowed";
	case OP_PAGEOUT:
		if (!pageout_ok)
			return "MADV_PAGEOUT not supported";
		return swap_ok ? NULL : "no swap, MADV_PAGEOUT moves no anonymous page";
	case OP_KSM:
		return ksm_ok ? NULL : "KSM not available";
	default:
		return NULL;
	}
}

/*
 * The first type of operation that can run here and has not had its
 * effect in this phase yet (not run at all, or MADV_PAGEOUT without a page
 * swapped out since the phase began), or NR_OPS.
 */
static enum op op_missing(void)
{
	unsigned long runs;
	unsigned int i;
	enum op op;

	for (op = 0; op < NR_OPS; op++) {
		if (op_unavailable(op))
			continue;
		for (runs = 0, i = 0; i < NR_MUTATORS; i++)
			runs += __atomic_load_n(&mutators[i].ops[op],
						__ATOMIC_RELAXED);
		if (!runs || (op == OP_PAGEOUT &&
			      vmstat_get("pswpout") <= phase_swpout))
			return op;
	}
	return NR_OPS;
}

/*
 * One result each: the phase mapped pages ahead (@ahead, -1 if the counter
 * is missing) and every type of operation ran in it, MADV_PAGEOUT moving
 * pages to swap (@swapped of them).
 */
static void report_coverage(int max_pages, const unsigned long *ops,
			    long long ahead, long long swapped)
{
	const char *why;
	unsigned int op;

	if (!have_sysctl)
		ksft_test_result_skip("prefault (max_pages %d): %s not present\n",
				      max_pages, SYSCTL_ENABLE);
	else if (ahead < 0)
		ksft_test_result_skip("prefault (max_pages %d): no %s in /proc/vmstat\n",
				      max_pages, VMSTAT_AHEAD);
	else
		ksft_test_result(ahead > 0,
				 "prefault (max_pages %d): %lld pages mapped ahead\n",
				 max_pages, ahead);
	for (op = 0; op < NR_OPS; op++) {
		why = op_unavailable(op);
		if (why)
			ksft_test_result_skip("op %s (max_pages %d): %s\n",
					      op_names[op], max_pages, why);
		else if (op == OP_PAGEOUT)
			ksft_test_result(ops[op] && swapped > 0,
					 "op %s (max_pages %d): %lu runs, %lld pages swapped out\n",
					 op_names[op], max_pages, ops[op],
					 swapped);
		else
			ksft_test_result(ops[op],
					 "op %s (max_pages %d): %lu runs\n",
					 op_names[op], max_pages, ops[op]);
	}
}

static void run_phase(unsigned int phase, int max_pages, unsigned int nr_writers,
		      double end)
{
	unsigned long pages = 0, retries = 0, nops = 0, held, final;
	unsigned long ops[NR_OPS] = { 0 };
	long long ahead, swapped;
	long flt, cflt;
	double t0;
	unsigned int i, j;

	set_prefault(1, max_pages);
	memset(&st, 0, sizeof(st));
	reports = 0;
	deadline = end;
	phase_over = false;
	t0 = now();
	flt = minflt(RUSAGE_SELF);
	cflt = minflt(RUSAGE_CHILDREN);
	ahead = vmstat_get(VMSTAT_AHEAD);
	swapped = vmstat_get("pswpout");
	phase_swpout = swapped;
	ksft_print_msg("[RUN] phase %u: max_pages %d, %u writers, %u mutators, %.1f s\n",
		       phase, max_pages, nr_writers, NR_MUTATORS, end - t0);

	for (i = 0; i < nr_writers; i++) {
		writers[i].rng = (seed + 0x9e3779b97f4a7c15ULL * (i + 1) + phase) | 1;
		writers[i].pages = 0;
		writers[i].zap_retries = 0;
		start(&writers[i], i, writer_main);
	}
	for (i = 0; i < NR_MUTATORS; i++) {
		struct worker *m = &mutators[i];

		m->rng = (seed + 0xc2b2ae3d27d4eb4fULL * (i + 1) + phase) | 1;
		memset(m->ops, 0, sizeof(m->ops));
		m->last_fork = 0;
		m->sweep = 0;
		start(m, i, mutator_main);
	}
	for (i = 0; i < nr_writers; i++) {
		pthread_join(writers[i].thread, NULL);
		pages += writers[i].pages;
		retries += writers[i].zap_retries;
	}
	for (i = 0; i < NR_MUTATORS; i++) {
		pthread_join(mutators[i].thread, NULL);
		for (j = 0; j < NR_OPS; j++) {
			ops[j] += mutators[i].ops[j];
			nops += mutators[i].ops[j];
		}
	}
	flt = minflt(RUSAGE_SELF) - flt;
	cflt = minflt(RUSAGE_CHILDREN) - cflt;
	ahead = ahead < 0 ? -1 : vmstat_get(VMSTAT_AHEAD) - ahead;
	swapped = swapped < 0 ? -1 : vmstat_get("pswpout") - swapped;
	held = st.held;
	final = final_check();

	ksft_print_msg("phase %u: %.1f s, %lu pages written, %lu writes redone, %lu given up\n",
		       phase, now() - t0, pages, retries, st.gave_up);
	ksft_print_msg("phase %u: %ld minor faults (%.2f pages/fault), %ld in fork children\n",
		       phase, flt, flt ? (double)pages / flt : 0.0, cflt);
	for (i = 0; i < NR_OPS; i += 5)
		ksft_print_msg("phase %u: ops: %s %lu, %s %lu, %s %lu, %s %lu, %s %lu\n",
			       phase, op_names[i], ops[i], op_names[i + 1],
			       ops[i + 1], op_names[i + 2], ops[i + 2],
			       op_names[i + 3], ops[i + 3], op_names[i + 4],
			       ops[i + 4]);
	ksft_print_msg("phase %u: pages checked by mutators: %lu, %lu holding written data\n",
		       phase, st.checked - NR_ARENAS * arena_pages, held);
	ksft_print_msg("phase %u: pages checked at the end: %lu, %lu holding written data\n",
		       phase, NR_ARENAS * arena_pages, final);
	ksft_test_result(!st.mismatches,
			 "stress: %lu mismatches in %lu pages, %lu ops (max_pages %d)\n",
			 st.mismatches, pages, nops, max_pages);
	report_coverage(max_pages, ops, ahead, swapped);
}

/* Report every result as skipped, for @why, and exit. */
static void skip_all(const char *why)
{
	unsigned int i, op;

	for (i = 0; i < NR_PHASES; i++) {
		ksft_test_result_skip("stress (max_pages %d): %s\n",
				      phase_max_pages[i], why);
		ksft_test_result_skip("prefault (max_pages %d): %s\n",
				      phase_max_pages[i], why);
		for (op = 0; op < NR_OPS; op++)
			ksft_test_result_skip("op %s (max_pages %d): %s\n",
					      op_names[op], phase_max_pages[i],
					      why);
	}
	ksft_test_result_skip("fork: %s\n", why);
	ksft_finished();
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f, "Usage: %s [-h] [-H] [-d seconds] [-t threads]\n", prog);
	fprintf(f, "  -h          show this help\n");
	fprintf(f, "  -H          64 KiB mTHP \"auto\" (other sizes \"never\"),\n");
	fprintf(f, "              arenas without MADV_NOHUGEPAGE\n");
	fprintf(f, "  -d seconds  planned run time, split between the max_pages 31 and 16\n");
	fprintf(f, "              phases (default %d); a phase runs on until\n",
		DEF_DURATION);
	fprintf(f, "              every operation has had its effect\n");
	fprintf(f, "  -t threads  faulting threads, 1..%d (default %d)\n",
		MAX_WRITERS, DEF_WRITERS);
}

/* Parse a decimal number in [min, max], or exit(2). */
static long parse_num(const char *s, long min, long max, const char *prog)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "%s: invalid number '%s' (%ld..%ld)\n", prog,
			s, min, max);
		usage(stderr, prog);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	unsigned int nr_writers = DEF_WRITERS, i;
	long duration = DEF_DURATION;
	struct sigaction sa = { 0 };
	long long swpout, swpin;
	double t0, reserve;
	bool force = false;
	int opt, ret;

	/* -f (undocumented): run even without the sysctls, for debugging. */
	while ((opt = getopt(argc, argv, "hHfd:t:")) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout, argv[0]);
			return 0;
		case 'H':
			use_mthp = true;
			break;
		case 'f':
			force = true;
			break;
		case 'd':
			duration = parse_num(optarg, 1, 86400, argv[0]);
			break;
		case 't':
			nr_writers = parse_num(optarg, 1, MAX_WRITERS, argv[0]);
			break;
		default:
			usage(stderr, argv[0]);
			return 2;
		}
	}
	if (optind < argc) {
		usage(stderr, argv[0]);
		return 2;
	}

	/* Whole lines only, so that a fork child inherits no buffered output. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan(NR_PHASES * (2 + NR_OPS) + 1);

	have_sysctl = !access(SYSCTL_ENABLE, F_OK);
	if (!have_sysctl && !force)
		skip_all(SYSCTL_ENABLE " not present");

	pagesize = getpagesize();
	arena_pages = ARENA_SZ / pagesize;
	zero_offs[0] = 16;
	zero_offs[1] = 24;
	zero_offs[2] = pagesize / 2;
	zero_offs[3] = pagesize - 16;
	main_pid = getpid();

	if (have_sysctl) {
		ap_save_sysctls();
		ret = ap_write_file(SYSCTL_ENABLE, ap_saved.enable);
		if (ret == -EACCES || ret == -EPERM || ret == -EROFS) {
			ksft_print_msg("cannot write %s: %s\n", SYSCTL_ENABLE,
				       strerror(-ret));
			skip_all("needs root");
		}
	} else {
		ksft_print_msg("%s not present, running anyway (-f)\n",
			       SYSCTL_ENABLE);
	}

	if (use_mthp) {
		ret = ap_mthp_only(64, "auto");
		if (ret) {
			ksft_print_msg("64 KiB mTHP: %s\n", strerror(-ret));
			skip_all("64 KiB mTHP not available");
		}
		ksft_print_msg("64 KiB mTHP auto: the predictor sizes the folios\n");
	}
	ksm_start();
	if (have_sysctl) {
		const char *why = "";

		ret = ap_swap_on(AP_SWAP_DEV, &why);
		swap_ok = !ret;
		if (ret)
			ksft_print_msg("no swap (%s: %s): MADV_PAGEOUT cannot move pages\n",
				       why, strerror(-ret));
		else
			ksft_print_msg("swap active: MADV_PAGEOUT swaps pages out\n");
	}

	sa.sa_sigaction = fatal_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, NULL) || sigaction(SIGBUS, &sa, NULL))
		die("sigaction");

	setup_arenas();
	for (i = 0; i < NR_MUTATORS; i++) {
		mutators[i].scratch = map_region(ARENA_SZ, PROT_NONE);
		mutators[i].snap = calloc(3 * arena_pages,
					  sizeof(*mutators[i].snap));
		if (!mutators[i].snap)
			die("calloc");
	}

	/* Leave a little time for the final checks under slow emulation. */
	t0 = now();
	seed = mix64((unsigned long long)(t0 * 1e9) ^ main_pid);
	ksft_print_msg("seed %#llx, %zu KiB pages, %d arenas of %lu MiB\n", seed,
		       pagesize / 1024, NR_ARENAS, ARENA_SZ / SZ_1M);
	reserve = duration / 30.0;
	swpout = vmstat_get("pswpout");
	swpin = vmstat_get("pswpin");
	for (i = 0; i < NR_PHASES; i++)
		run_phase(i + 1, phase_max_pages[i], nr_writers,
			  now() + (duration - reserve) / NR_PHASES);
	ksm_report();
	ksft_print_msg("swap: %lld pages swapped out, %lld swapped in\n",
		       vmstat_get("pswpout") - swpout,
		       vmstat_get("pswpin") - swpin);

	ksft_print_msg("fork: %lu children, %lu failed, %lu mismatches reported by them\n",
		       fork_st.children, fork_st.child_fail, fork_st.child_bad);
	if (!fork_st.child_fail)
		ksft_test_result_pass("fork: %lu children reported 0 mismatches\n",
				      fork_st.children);
	else
		ksft_test_result_fail("fork: %lu of %lu children failed (%lu mismatches)\n",
				      fork_st.child_fail, fork_st.children,
				      fork_st.child_bad);
	ksft_print_msg("total %.1f s\n", now() - t0);

	ap_restore_sysctls();
	ksm_restore();
	ap_swap_off();
	ksft_finished();
}
