// SPDX-License-Identifier: GPL-2.0
/*
 * Anticipatory prefault of sequential anonymous page faults: the policy.
 *
 * Each task follows up to ANON_PREFAULT_STREAMS streams of faults, in a table
 * ordered from the most recently used: for each, where its next fault would
 * land (the address after its last window, or below it for a stream walking
 * downwards) and the order of its last window. A fault where one of them
 * predicted is a hit. A stream's first hit confirms it and maps only the
 * faulting page: short programs often fault two neighbouring pages and not
 * a third. From its second hit on, each hit grows the stream's order by one
 * and maps a window of 1 << order pages, the faulting page first and the
 * others in the stream's direction. Any other fault is a miss: one page is
 * mapped, as without this code, and it starts a stream of one fault, which
 * the next fault of the task may continue one page above it (upwards) or
 * one page below it (downwards). A miss takes the place of a stream that
 * has missed more often in a row than its order (see anon_prefault_miss()),
 * so that the pages an allocator fills between the faults of a stream, or
 * several arrays filled in turn, do not end it. Before a hit is trusted,
 * the page the stream last mapped must still be mapped (a lockless look at
 * one PTE): a stream whose memory was unmapped or zapped since is a miss.
 * The window is bounded by vm.anon_prefault_max_pages, the VMA and the page
 * table of the fault. The mechanism that maps the window lives in
 * do_anonymous_page() in mm/memory.c.
 *
 * For the mTHP sizes set to "auto", the predictor chooses the folio order
 * too, the way readahead grows the folios of a file while it keeps hitting:
 * a miss maps one page, and a stream ramps up through single pages to a
 * window that one "auto" folio fills. thp_vma_auto_orders() says where
 * "auto" sizes apply at all; mTHP's own rules decide which orders a VMA
 * may use. Sizes enabled otherwise (always, inherit, madvise) are never
 * lowered: a fault they serve gets the folio mTHP allocates, whatever the
 * predictor thinks of it, and where it continues a stream more folios of
 * that size follow it in the same fault (anon_prefault_folios()); a window
 * of single pages never reaches into a block that a folio of such a size
 * may fill. The predictor gives a stream walking downwards no large folio
 * of its own.
 *
 * Whatever the size and the mode, a fault maps at most
 * vm.anon_prefault_max_pages pages more than it would map with the sysctl
 * at 0 (anon_prefault_max_folios()).
 *
 * madvise() steers it per region, reusing the advice that file readahead
 * already reads: MADV_RANDOM (VM_RAND_READ) maps one page per fault,
 * MADV_SEQUENTIAL (VM_SEQ_READ) skips the ramp, so that the first hit maps
 * the full window, and MADV_NORMAL restores the ramp. A miss maps one page
 * whatever the advice: pages are only ever mapped ahead of a fault that
 * landed where a stream predicted it.
 */

#include <linux/anon_prefault.h>
#include <linux/init.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/sysctl.h>
#include <linux/userfaultfd_k.h>
#include <linux/vmstat.h>

#define CREATE_TRACE_POINTS
#include <trace/events/anon_prefault.h>

DEFINE_STATIC_KEY_MAYBE(CONFIG_ANON_PREFAULT_DEFAULT_ON, anon_prefault_key);

static int sysctl_anon_prefault = IS_ENABLED(CONFIG_ANON_PREFAULT_DEFAULT_ON);
static int sysctl_anon_prefault_max_pages = ANON_PREFAULT_DEFAULT_PAGES;
static int anon_prefault_pages_limit = ANON_PREFAULT_MAX_PAGES;
static DEFINE_MUTEX(anon_prefault_mutex);

/* The order never grows past the one whose window covers the largest cap. */
#define ANON_PREFAULT_MAX_ORDER	order_base_2(ANON_PREFAULT_MAX_PAGES)

/*
 * The most folios of order @fo a window holds, the faulting one included,
 * so that a fault maps at most vm.anon_prefault_max_pages pages more than
 * it would map with prefault off. A window of single pages or of "auto"
 * folios, which the predictor chose, holds at most that many pages in all
 * (thp_vma_auto_orders() offers no larger folio). A folio of a size the
 * administrator @enabled, which the fault gets anyway, is followed by at
 * most that many pages of its size: one more 64 KiB folio with the default
 * cap, none for a folio larger than the cap.
 */
static unsigned int anon_prefault_max_folios(unsigned int fo, bool enabled)
{
	unsigned int max = READ_ONCE(sysctl_anon_prefault_max_pages);

	return enabled ? 1 + (max >> fo) : max(max >> fo, 1U);
}

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
/**
 * thp_vma_auto_orders - the "auto" sizes the predictor may choose in a VMA
 * @vma: an anonymous VMA
 * @vm_flags: the flags to judge @vma by
 *
 * The one place that says where the mTHP sizes set to "auto" apply: for
 * thp_vma_allowable_orders(), and so for the fault, swap-in and smaps'
 * THPeligible alike. Returns the "auto" orders of at most
 * vm.anon_prefault_max_pages pages, or none where the predictor has no say:
 * vm.anon_prefault is 0, the region is mlocked, armed by userfaultfd or
 * advised MADV_RANDOM or MADV_NOPREFAULT, or its process opted out with
 * PR_SET_ANON_PREFAULT_DISABLE. MADV_HUGEPAGE changes nothing here.
 * thp_vma_allowable_orders() applies mTHP's own rules on top
 * (MADV_NOHUGEPAGE, PR_SET_THP_DISABLE, the hardware).
 */
unsigned long thp_vma_auto_orders(struct vm_area_struct *vma,
				  unsigned long vm_flags)
{
	unsigned int max = READ_ONCE(sysctl_anon_prefault_max_pages);

	if (!static_branch_maybe(CONFIG_ANON_PREFAULT_DEFAULT_ON,
				 &anon_prefault_key))
		return 0;
	if ((vm_flags & (VM_LOCKED | VM_RAND_READ | VM_NOPREFAULT)) ||
	    userfaultfd_armed(vma) ||
	    test_bit(MMF_DISABLE_ANON_PREFAULT, &vma->vm_mm->flags))
		return 0;
	return thp_anon_auto_orders() & GENMASK(ilog2(max), 0);
}
#endif

/* Move stream @i of @tsk to the front of its table and return it. */
static struct anon_prefault_stream *
anon_prefault_use(struct task_struct *tsk, unsigned int i)
{
	struct anon_prefault_stream *t = tsk->anon_prefault;
	struct anon_prefault_stream s = t[i];

	for (; i; i--)
		t[i] = t[i - 1];
	t[0] = s;
	return t;
}

/* Make @s a stream of one fault, at @addr. */
static void anon_prefault_start(struct anon_prefault_stream *s,
				unsigned long addr)
{
	s->next = addr;
	s->order = 0;
	s->dir = 0;
	s->misses = 0;
}

/*
 * A fault at @addr that no stream predicted: it becomes a stream of one
 * fault. It takes the place of the least recently used stream that has
 * missed more often in a row than its order, the length of its ramp (a
 * stream of one fault after one miss, a stream mapping 16-page windows
 * after five), or of the least recently used stream if every stream is
 * younger than that: misses in a row end at most one stream that is
 * hitting until they outnumber its order, and a stream that stopped
 * leaves the table after as many misses.
 */
static void anon_prefault_miss(struct task_struct *tsk, unsigned long addr)
{
	struct anon_prefault_stream *t = tsk->anon_prefault;
	unsigned int i = ANON_PREFAULT_STREAMS, victim = i - 1;
	bool found = false;

	while (i--) {
		t[i].misses += t[i].misses < U8_MAX;
		if (!found && t[i].misses > t[i].order) {
			victim = i;
			found = true;
		}
	}
	anon_prefault_start(anon_prefault_use(tsk, victim), addr);
}

/*
 * Whether the page at @addr, the last one a stream mapped before the fault
 * @vmf, is still mapped in the VMA of the fault: a lockless look at its
 * PTE, in the page table of the fault or in the one next to it. A stream
 * is not followed into another VMA, where the address it expects may
 * belong to a new mapping; across a PUD boundary, where the page table
 * next to the fault's is not at hand, it is followed unchecked.
 */
static bool anon_prefault_mapped_at(struct vm_fault *vmf, unsigned long addr)
{
	struct vm_area_struct *vma = vmf->vma;
	pmd_t *pmd = vmf->pmd;
	bool mapped;
	pte_t *pte;

	if (addr < vma->vm_start || addr >= vma->vm_end)
		return false;
	if ((addr & PMD_MASK) != (vmf->address & PMD_MASK)) {
		if ((addr & PUD_MASK) != (vmf->address & PUD_MASK))
			return true;
		pmd += addr > vmf->address ? 1 : -1;
	}
	pte = pte_offset_map(pmd, addr);
	if (!pte)
		return false;
	mapped = !pte_none(ptep_get_lockless(pte));
	pte_unmap(pte);
	return mapped;
}

/*
 * The stream of current that predicted a fault at @addr, moved to the
 * front of the table with its direction set, or NULL for a miss (which
 * then heads the table as a stream of one fault). *@first is set when the
 * hit is the stream's first: the stream was a single fault.
 */
static struct anon_prefault_stream *
anon_prefault_find(struct vm_fault *vmf, unsigned long addr, bool *first)
{
	struct task_struct *tsk = current;
	struct anon_prefault_stream *s;
	unsigned long last;
	unsigned int i;
	int dir;

	for (i = 0; i < ANON_PREFAULT_STREAMS; i++) {
		s = &tsk->anon_prefault[i];
		/* Neither at s->next nor a page from it: most faults */
		if (addr - s->next + PAGE_SIZE > 2 * PAGE_SIZE)
			continue;
		if (s->dir) {
			if (addr != s->next)
				continue;
			dir = s->dir;
			last = dir > 0 ? addr - PAGE_SIZE : addr + PAGE_SIZE;
		} else {
			if (!s->next || (addr != s->next + PAGE_SIZE &&
					 addr != s->next - PAGE_SIZE))
				continue;
			dir = addr > s->next ? 1 : -1;
			last = s->next;
		}
		s = anon_prefault_use(tsk, i);
		if (!anon_prefault_mapped_at(vmf, last)) {
			/* Its memory is gone: the fault starts a stream here */
			anon_prefault_start(s, addr);
			return NULL;
		}
		*first = !s->dir;
		s->dir = dir;
		s->misses = 0;
		return s;
	}
	anon_prefault_miss(tsk, addr);
	return NULL;
}

/*
 * The order of the folios a hit uses: the largest of @orders, the large
 * folio orders mTHP allows at the fault, that is not above the hit's @order
 * (0 if there is none), so that large folios come only once a stream has
 * grown a window of that size.
 */
static unsigned int anon_prefault_folio_order(unsigned long orders,
					      unsigned int order)
{
	orders &= GENMASK(order, 0);
	return orders ? highest_order(orders) : 0;
}

/*
 * The order of the smallest mTHP size the administrator enabled for faults
 * in @vma ("always", "inherit", or "madvise" in an MADV_HUGEPAGE region;
 * not "auto"), 0 if none. A window stays inside the naturally aligned block of
 * that order around its fault: a block that a folio of an enabled size may
 * fill at a fault of its own is left to that fault.
 */
static unsigned int anon_prefault_block_order(struct vm_area_struct *vma)
{
	unsigned long orders;

	orders = thp_vma_allowable_orders(vma, vma->vm_flags,
					  TVA_IN_PF | TVA_ENFORCE_SYSFS,
					  BIT(PMD_ORDER) - 1);
	orders &= ~thp_anon_auto_orders();
	return orders ? __ffs(orders) : 0;
}

/**
 * anon_prefault_window - size of the window for an anonymous write fault
 * @vmf: the fault
 * @orders: the "auto" large folio orders the VMA may use at the faulting
 *          address, 0 if none
 * @forder: set to the order of the window's folios
 *
 * Updates current's streams and returns how many folios of order *@forder,
 * naturally aligned, the first of them holding the faulting page and the
 * others above it, or below it for a stream walking downwards
 * (anon_prefault_down()), the fault should map: 1 on a miss and where the
 * predictor has no say about this VMA (mlocked, userfaultfd or
 * MADV_RANDOM). The window never passes the ends of the VMA nor those of
 * the page table that maps the faulting address, nor those of the
 * naturally aligned block around it of the smallest mTHP size enabled for
 * the VMA (anon_prefault_block_order()), and holds at most
 * vm.anon_prefault_max_pages pages.
 *
 * A stream's first hit maps a single page (but for MADV_SEQUENTIAL, whose
 * hits all map full windows). A later hit at order k maps 1 << k pages:
 * with @orders, of the largest of @orders not above k, so that a stream
 * ramps up through single pages to large folios. A miss maps a single
 * page, and so does each folio of a window walking downwards or starting
 * before the alignment of its large folios (up to that alignment; its
 * order does not grow). Faults whose folio order is lowered below the
 * largest of @orders are counted.
 */
unsigned int anon_prefault_window(struct vm_fault *vmf, unsigned long orders,
				  unsigned int *forder)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address & PAGE_MASK;
	/* The largest order mTHP allows, 0 for single pages only */
	unsigned int top = orders ? highest_order(orders) : 0;
	struct anon_prefault_stream *s;
	unsigned int order, fo = 0, nr, bo;
	unsigned long room;
	bool first;

	*forder = 0;
	/*
	 * mlocked and userfaultfd VMAs get exactly the pages they fault, and
	 * so does a region advised MADV_RANDOM.
	 */
	if ((vma->vm_flags & (VM_LOCKED | VM_RAND_READ)) ||
	    userfaultfd_armed(vma)) {
		anon_prefault_miss(current, addr);
		return 1;
	}

	s = anon_prefault_find(vmf, addr, &first);
	if (!s) {
		nr = 1;
		goto out;
	}

	/* MADV_SEQUENTIAL: no ramp, the first hit maps the full window. */
	if (vma->vm_flags & VM_SEQ_READ)
		order = ANON_PREFAULT_MAX_ORDER;
	else if (first)
		order = 0;
	else
		order = min_t(unsigned int, s->order + 1,
			      ANON_PREFAULT_MAX_ORDER);

	/* The block of the smallest mTHP size enabled, if any */
	bo = order ? anon_prefault_block_order(vma) : 0;
	if (s->dir < 0) {
		unsigned long start = max(vma->vm_start, addr & PMD_MASK);

		if (bo)
			start = max(start, ALIGN_DOWN(addr, PAGE_SIZE << bo));
		/* Pages from the fault down to the VMA, page table or block */
		room = (addr - start) / PAGE_SIZE + 1;
	} else {
		unsigned long end = pmd_addr_end(addr, vma->vm_end);

		if (bo)
			end = min(end, ALIGN(addr + PAGE_SIZE, PAGE_SIZE << bo));
		fo = anon_prefault_folio_order(orders, order);
		if (fo && !IS_ALIGNED(addr, PAGE_SIZE << fo)) {
			/*
			 * Single pages up to the first large folio's alignment,
			 * and the order does not grow past what they map.
			 */
			end = min(end, ALIGN(addr, PAGE_SIZE << fo));
			order = s->order;
			fo = 0;
		}
		room = (end - addr) >> (PAGE_SHIFT + fo);
	}
	nr = min(1U << (order - fo), anon_prefault_max_folios(fo, false));
	nr = min_t(unsigned long, nr, room);

	s->order = order;
	anon_prefault_cut(addr, nr << fo, false);
out:
	if (fo < top)
		count_vm_event(ANON_PREFAULT_ORDER_LOWERED);
	*forder = fo;
	return nr;
}

/**
 * anon_prefault_folios - size of the window of a fault mTHP serves
 * @vmf: the write fault
 * @order: the order of the folio mTHP allocated for it, at a size the
 *         administrator enabled (always, inherit, or madvise in an
 *         MADV_HUGEPAGE region)
 *
 * The fault gets mTHP's folio, naturally aligned around the faulting page,
 * whatever the predictor thinks of it. Updates current's streams and returns
 * how many folios of @order the fault should map, mTHP's first and the
 * others above it: 1 on a miss, on a stream's first hit, on a stream walking
 * downwards, at a fault that is not at the start of its folio, and where the
 * predictor has no say about the VMA (mlocked, userfaultfd or MADV_RANDOM).
 * A later hit of an upward stream grows the stream's order by one, to at
 * least @order + 1, and maps 1 << (order - @order) folios: mTHP's own and
 * at most vm.anon_prefault_max_pages pages of folios after it, never past
 * the end of the VMA or of the page table. A stream the folio starts or
 * continues expects its next fault right above it.
 */
unsigned int anon_prefault_folios(struct vm_fault *vmf, unsigned int order)
{
	struct vm_area_struct *vma = vmf->vma;
	unsigned long addr = vmf->address & PAGE_MASK;
	unsigned long start = ALIGN_DOWN(addr, PAGE_SIZE << order);
	unsigned long last = start + (PAGE_SIZE << order) - PAGE_SIZE;
	unsigned int top = max(ANON_PREFAULT_MAX_ORDER, order + 1);
	struct anon_prefault_stream *s;
	unsigned int nr = 1;
	unsigned long room;
	bool first;

	if ((vma->vm_flags & (VM_LOCKED | VM_RAND_READ)) ||
	    userfaultfd_armed(vma)) {
		anon_prefault_miss(current, last);
		return 1;
	}

	s = anon_prefault_find(vmf, addr, &first);
	if (!s) {
		/*
		 * A stream of one fault, whose page is the folio's last: a
		 * fault right above the folio continues it.
		 */
		current->anon_prefault[0].next = last;
		return 1;
	}
	if (s->dir < 0) {
		s->next = start - PAGE_SIZE;
		return 1;
	}

	/* As anon_prefault_window() ramps, from the folio's own order */
	if (vma->vm_flags & VM_SEQ_READ)
		s->order = top;
	else if (first)
		s->order = order;
	else
		s->order = min_t(unsigned int, max_t(unsigned int, s->order,
						     order) + 1, top);
	if (addr == start) {
		room = (pmd_addr_end(addr, vma->vm_end) - addr) >>
		       (PAGE_SHIFT + order);
		nr = min(1U << (s->order - order),
			 anon_prefault_max_folios(order, true));
		nr = min_t(unsigned long, nr, room);
	}
	return anon_prefault_cut(start, nr << order, false) >> order;
}

/**
 * anon_prefault_cut - the window at @address ended after @nr pages
 * @address: the faulting address the window started at
 * @nr: pages the window holds (at least 1)
 * @fallback: a page could not be had without reclaim
 *
 * The next fault of the window's stream is predicted right after what the
 * window holds, in the stream's direction. When the window ended because
 * memory was short, the ramp starts again from one page and the fallback
 * is counted; a window that ended at a PTE someone else had populated
 * keeps its order. Returns @nr.
 *
 * A fault that maps nothing once its window was sized (it is retried
 * after a race with the page table, or fails for want of memory) is not
 * undone: its retry is a miss, the ramp starts again, and no page is
 * mapped for it.
 */
unsigned int anon_prefault_cut(unsigned long address, unsigned int nr,
			       bool fallback)
{
	struct anon_prefault_stream *s = &current->anon_prefault[0];
	unsigned long len = nr * PAGE_SIZE;

	address &= PAGE_MASK;
	s->next = s->dir < 0 ? address - len : address + len;
	if (fallback) {
		s->order = 0;
		count_vm_event(ANON_PREFAULT_FALLBACK);
	}
	return nr;
}

/**
 * anon_prefault_mapped - account a fault that mapped a window
 * @address: the faulting address
 * @nr: PTEs the fault set, the faulting folio's included
 * @order: the order of the folios it mapped
 */
void anon_prefault_mapped(unsigned long address, unsigned int nr,
			  unsigned int order)
{
	if (nr <= 1U << order)
		return;
	count_vm_event(ANON_PREFAULT_FAULT);
	count_vm_events(ANON_PREFAULT_PAGE, nr - (1U << order));
	trace_anon_prefault(address, nr, order);
}

static int anon_prefault_sysctl_handler(const struct ctl_table *table,
					int write, void *buffer, size_t *lenp,
					loff_t *ppos)
{
	int ret;

	mutex_lock(&anon_prefault_mutex);
	ret = proc_dointvec_minmax(table, write, buffer, lenp, ppos);
	if (!ret && write) {
		if (sysctl_anon_prefault)
			static_branch_enable(&anon_prefault_key);
		else
			static_branch_disable(&anon_prefault_key);
	}
	mutex_unlock(&anon_prefault_mutex);
	return ret;
}

static struct ctl_table anon_prefault_sysctls[] = {
	{
		.procname	= "anon_prefault",
		.data		= &sysctl_anon_prefault,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= anon_prefault_sysctl_handler,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	{
		.procname	= "anon_prefault_max_pages",
		.data		= &sysctl_anon_prefault_max_pages,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= &anon_prefault_pages_limit,
	},
};

static int __init anon_prefault_init(void)
{
	register_sysctl_init("vm", anon_prefault_sysctls);
	return 0;
}
subsys_initcall(anon_prefault_init);
