/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM anon_prefault

#if !defined(_TRACE_ANON_PREFAULT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_ANON_PREFAULT_H

#include <linux/tracepoint.h>

/*
 * One anonymous fault that mapped a window, folios beyond the faulting
 * one: the faulting address, the PTEs it set (the faulting folio's
 * included) and the order of the folios it mapped.
 */
TRACE_EVENT(anon_prefault,
	    TP_PROTO(unsigned long address, unsigned int nr_pages,
		     unsigned int folio_order),
	    TP_ARGS(address, nr_pages, folio_order),
	    TP_STRUCT__entry(__field(unsigned long, address)
			     __field(unsigned int, nr_pages)
			     __field(unsigned int, folio_order)),
	    TP_fast_assign(__entry->address = address;
			   __entry->nr_pages = nr_pages;
			   __entry->folio_order = folio_order;),
	    TP_printk("address=0x%lx nr_pages=%u folio_order=%u",
		      __entry->address, __entry->nr_pages,
		      __entry->folio_order)
);

#endif /* _TRACE_ANON_PREFAULT_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
