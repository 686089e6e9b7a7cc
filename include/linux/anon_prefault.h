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
#include <linux/sched/coredump.h>

/* Default of vm.anon_prefault_max_pages: 64 KiB with 4 KiB pages. */
#define ANON_PREFAULT_DEFAULT_PAGES	16
/*
 * The largest vm.anon_prefault_max_pages the sysctl accepts, part of its
 * ABI; a fault keeps the pages of its window in an on-stack array of this
 * size.
 */
#define ANON_PREFAULT_MAX_PAGES		31

#ifdef CONFIG_ANON_PREFAULT
DECLARE_STATIC_KEY_MAYBE(CONFIG_ANON_PREFAULT_DEFAULT_ON, anon_prefault_key);

unsigned int anon_prefault_window(struct vm_fault *vmf, unsigned long orders,
				  unsigned int *forder);
unsigned int anon_prefault_folios(struct vm_fault *vmf, unsigned int order);
unsigned int anon_prefault_cut(unsigned long address, unsigned int nr,
			       bool fallback);
void anon_prefault_mapped(unsigned long address, unsigned int nr,
			  unsigned int order);

/*
 * Whether the predictor of current sizes a fault: the feature is on, the
 * fault is current's own, not one of a remote GUP target, and neither its
 * region (MADV_NOPREFAULT) nor its process (PR_SET_ANON_PREFAULT_DISABLE)
 * opted out.
 */
static __always_inline bool anon_prefault_active(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;

	if (!static_branch_maybe(CONFIG_ANON_PREFAULT_DEFAULT_ON,
				 &anon_prefault_key))
		return false;
	if (vmf->flags & FAULT_FLAG_REMOTE)
		return false;
	return !(vma->vm_flags & VM_NOPREFAULT) &&
	       !test_bit(MMF_DISABLE_ANON_PREFAULT, &vma->vm_mm->flags);
}

/*
 * How many pages a fault at @vmf->address should map, the faulting page
 * included: 1 unless the faulting task is walking memory sequentially.
 */
static __always_inline unsigned int anon_prefault_pages(struct vm_fault *vmf)
{
	unsigned int order;

	if (!anon_prefault_active(vmf))
		return 1;
	return anon_prefault_window(vmf, 0, &order);
}

/*
 * Whether the window of current's last fault, sized by
 * anon_prefault_window(), lies below the faulting page: its stream walks
 * memory downwards.
 */
static inline bool anon_prefault_down(void)
{
	return current->anon_prefault[0].dir < 0;
}

/* A new task (fork, clone) or program (exec) starts with no prediction. */
static inline void anon_prefault_reset(struct task_struct *p)
{
	memset(p->anon_prefault, 0, sizeof(p->anon_prefault));
}
#else
static inline bool anon_prefault_active(struct vm_fault *vmf)
{
	return false;
}

static inline unsigned int anon_prefault_window(struct vm_fault *vmf,
						unsigned long orders,
						unsigned int *forder)
{
	*forder = 0;
	return 0;
}

static inline unsigned int anon_prefault_folios(struct vm_fault *vmf,
						unsigned int order)
{
	return 1;
}

static inline unsigned int anon_prefault_cut(unsigned long address,
					     unsigned int nr, bool fallback)
{
	return nr;
}

static inline unsigned int anon_prefault_pages(struct vm_fault *vmf)
{
	return 1;
}

static inline bool anon_prefault_down(void)
{
	return false;
}

static inline void anon_prefault_reset(struct task_struct *p)
{
}

static inline void anon_prefault_mapped(unsigned long address,
					unsigned int nr, unsigned int order)
{
}
#endif /* CONFIG_ANON_PREFAULT */

#endif /* _LINUX_ANON_PREFAULT_H */
