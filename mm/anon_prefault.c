// SPDX-License-Identifier: GPL-2.0
/*
 * Anticipatory prefault of sequential anonymous page faults: the policy.
 *
 * Each task remembers where its next anonymous fault would land if it
 * keeps walking memory upwards (anon_prefault_next) and how many faults in
 * a row landed where predicted (anon_prefault_order). A fault at the
 * predicted address is a hit: the order grows by one and the fault maps a
 * window of 1 << order pages, the faulting page first. Any other fault is
 * a miss: the order drops to 0 and one page is mapped, as without this
 * code. The window is bounded by vm.anon_prefault_max_pages, the end of the
 * VMA and the end of the page table. The mechanism that maps the window
 * lives in do_anonymous_page() in mm/memory.c.
 *
 * Where mTHP may allocate large folios for a fault, the predictor chooses
 * their order too, the way readahead grows the folios of a file while it
 * keeps hitting: a miss maps one page, and a stream ramps up through single
 * pages to the mTHP orders allowed and then to several large folios per
 * fault. mTHP's own rules decide which orders a VMA may use at all, and a
 * region advised MADV_HUGEPAGE, which asked for large folios, gets them
 * from mTHP as without this code.
 *
 * madvise() steers it per region, reusing the advice that file readahead
 * already reads: MADV_RANDOM (VM_RAND_READ) maps one page per fault,
 * MADV_SEQUENTIAL (VM_SEQ_READ) skips the ramp, so that the first hit maps
 * the full window, and MADV_NORMAL restores the ramp. A miss maps one page
 * whatever the advice: pages are only ever mapped ahead of a fault that
 * landed where the previous window ended.
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

DEFINE_STATIC_KEY_TRUE(anon_prefault_key);

static int sysctl_anon_prefault = 1;
static int sysctl_anon_prefault_max_pages = ANON_PREFAULT_DEFAULT_PAGES;
static int anon_prefault_pages_limit = ANON_PREFAULT_MAX_PAGES;
static DEFINE_MUTEX(anon_prefault_mutex);

/* The order never grows past the one whose window covers the largest cap. */
#define ANON_PREFAULT_MAX_ORDER	order_base_2(ANON_PREFAULT_MAX_PAGES)

static unsigned int anon_prefault_miss(unsigned long addr)
{
	current->anon_prefault_order = 0;
	current->anon_prefault_next = addr + PAGE_SIZE;
	return 1;
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

/**
 * anon_prefault_window - size of the window for an anonymous write fault
 * @vma: the VMA of the fault
 * @address: the faulting address
 * @orders: the large folio orders mTHP would allocate at @address, 0 if none
 * @forder: set to the order of the window's folios
 *
 * Updates current's prediction and returns how many folios of order
 * *@forder, naturally aligned and the first of them holding the faulting
 * page, the fault should map: 1 on a miss, and 0 when the predictor has no
 * say about this VMA (mlocked, userfaultfd or MADV_RANDOM, or with @orders
 * MADV_HUGEPAGE) and mTHP, if @orders allows it, decides alone. The window
 * never passes the end of @vma nor the end of the page table that maps
 * @address, and holds at most vm.anon_prefault_max_pages folios: with
 * order-0 folios that many pages.
 *
 * Without @orders, a hit at order k maps 1 << k pages. With @orders, the
 * order keeps growing past that: a hit at order k uses the largest of
 * @orders not above k and maps 1 << k pages of them, so that a stream
 * ramps up through single pages to one large folio and then to several
 * per fault. A miss maps a single page, and a window that starts before
 * the alignment of its large folios maps single pages up to it. Faults
 * whose folio order is lowered below the largest of @orders are counted.
 */
unsigned int anon_prefault_window(struct vm_area_struct *vma,
				  unsigned long address, unsigned long orders,
				  unsigned int *forder)
{
	struct task_struct *tsk = current;
	unsigned long addr = address & PAGE_MASK;
	unsigned int order, fo = 0, nr;
	/* The largest order mTHP allows, 0 for single pages only */
	unsigned int top = orders ? highest_order(orders) : 0;
	unsigned long end;

	*forder = 0;
	/*
	 * mlocked and userfaultfd VMAs get exactly the pages they fault, and
	 * so does a region advised MADV_RANDOM. Where mTHP may serve the
	 * fault, a region advised MADV_HUGEPAGE asked for large folios: mTHP
	 * gives them as it would.
	 */
	if ((vma->vm_flags & (VM_LOCKED | VM_RAND_READ)) ||
	    (orders && (vma->vm_flags & VM_HUGEPAGE)) ||
	    userfaultfd_armed(vma)) {
		anon_prefault_miss(addr);
		return 0;
	}

	if (addr != tsk->anon_prefault_next) {
		nr = anon_prefault_miss(addr);
		goto out;
	}

	/* MADV_SEQUENTIAL: no ramp, the first hit maps the full window. */
	if (vma->vm_flags & VM_SEQ_READ)
		order = ANON_PREFAULT_MAX_ORDER + top;
	else
		order = min(tsk->anon_prefault_order + 1,
			    ANON_PREFAULT_MAX_ORDER + top);

	end = pmd_addr_end(addr, vma->vm_end);
	fo = anon_prefault_folio_order(orders, order);
	if (fo && !IS_ALIGNED(addr, PAGE_SIZE << fo)) {
		/* Single pages up to the first large folio's alignment */
		end = min(end, ALIGN(addr, PAGE_SIZE << fo));
		fo = 0;
	}
	nr = min_t(unsigned int, 1U << (order - fo),
		   READ_ONCE(sysctl_anon_prefault_max_pages));
	nr = min_t(unsigned long, nr, (end - addr) >> (PAGE_SHIFT + fo));

	tsk->anon_prefault_order = order;
	tsk->anon_prefault_next = addr + ((unsigned long)nr << (PAGE_SHIFT + fo));
out:
	if (fo < top)
		count_vm_event(ANON_PREFAULT_ORDER_LOWERED);
	*forder = fo;
	return nr;
}

/**
 * anon_prefault_cut - the window at @address ended after @nr pages
 * @address: the faulting address the window started at
 * @nr: pages the window holds (at least 1)
 * @fallback: a page could not be had without reclaim
 *
 * The next fault is predicted at the end of what the window holds. When it
 * ended because memory was short, the ramp starts again from one page and
 * the fallback is counted; a window that ended at a PTE someone else had
 * populated keeps its order. Returns @nr.
 *
 * A fault that maps nothing once its window was sized (it is retried
 * after a race with the page table, or fails for want of memory) is not
 * undone: its retry is a miss, the ramp starts again, and no page is
 * mapped for it.
 */
unsigned int anon_prefault_cut(unsigned long address, unsigned int nr,
			       bool fallback)
{
	current->anon_prefault_next = (address & PAGE_MASK) + nr * PAGE_SIZE;
	if (fallback) {
		current->anon_prefault_order = 0;
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
