/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Anticipatory prefault of sequential anonymous page faults.
 *
 * See Documentation/admin-guide/mm/anon_prefault.rst.
 */
#ifndef _LINUX_ANON_PREFAULT_H
#define _LINUX_ANON_PREFAULT_H

#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/vmstat.h>

/* Default of vm.anon_prefault_max_pages: 64 KiB with 4 KiB pages. */
#define ANON_PREFAULT_DEFAULT_PAGES	16

/*
 * vm.anon_prefault_lazyfree: how a write fault maps the pages of its window
 * that follow the faulting page.
 */
enum anon_prefault_lazyfree {
	/* Dirty, swap-backed: ordinary anonymous pages. */
	ANON_PREFAULT_DIRTY,
	/*
	 * Clean and lazily freeable, as after MADV_FREE: reclaim drops them
	 * without I/O unless they were written. Young, unless the
	 * architecture prefers prefaulted PTEs old.
	 */
	ANON_PREFAULT_CLEAN,
	/* Clean and lazily freeable, and always old. */
	ANON_PREFAULT_CLEAN_OLD,
};

#ifdef CONFIG_ANON_PREFAULT
DECLARE_STATIC_KEY_TRUE(anon_prefault_key);
extern int sysctl_anon_prefault_lazyfree;

unsigned int anon_prefault_window(struct vm_area_struct *vma,
				  unsigned long address);
void anon_prefault_cut(unsigned long address, unsigned int nr);
void anon_prefault_mapped(unsigned long address, unsigned int nr);

/*
 * How many pages a fault at @vmf->address should map, the faulting page
 * included: 1 unless the faulting task is walking memory sequentially.
 */
static inline unsigned int anon_prefault_pages(struct vm_fault *vmf)
{
	if (!static_branch_likely(&anon_prefault_key))
		return 1;
	/* The predictor belongs to current, not to a remote GUP target. */
	if (vmf->flags & FAULT_FLAG_REMOTE)
		return 1;
	return anon_prefault_window(vmf->vma, vmf->address);
}

/* How a write fault in @vma maps the speculative pages of its window. */
static inline int anon_prefault_lazyfree(struct vm_area_struct *vma)
{
	/* Folios of VM_DROPPABLE mappings are dropped even when dirty. */
	if (vma->vm_flags & VM_DROPPABLE)
		return ANON_PREFAULT_DIRTY;
	return READ_ONCE(sysctl_anon_prefault_lazyfree);
}

/* A new task (fork, clone) starts with no prediction. */
static inline void anon_prefault_init_task(struct task_struct *p)
{
	p->anon_prefault_next = 0;
	p->anon_prefault_order = 0;
}

/* Reclaim freed @folio without I/O: count it if prefault mapped it ahead. */
static inline void anon_prefault_count_reclaimed(struct folio *folio,
						 unsigned int nr)
{
	if (folio_test_anon_prefault(folio))
		count_vm_events(ANON_PREFAULT_RECLAIMED, nr);
}
#else
static inline unsigned int anon_prefault_pages(struct vm_fault *vmf)
{
	return 1;
}

static inline void anon_prefault_init_task(struct task_struct *p)
{
}

static inline void anon_prefault_mapped(unsigned long address,
					unsigned int nr)
{
}

static inline void anon_prefault_count_reclaimed(struct folio *folio,
						 unsigned int nr)
{
}
#endif /* CONFIG_ANON_PREFAULT */

#endif /* _LINUX_ANON_PREFAULT_H */
