/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM anon_prefault

#if !defined(_TRACE_ANON_PREFAULT_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_ANON_PREFAULT_H

#include <linux/tracepoint.h>

/*
 * One anonymous fault that mapped more than one page: the faulting
 * address, the pages whose PTEs it set (the faulting page included) and
 * the predictor's order at that fault.
 */
TRACE_EVENT(anon_prefault,
	    TP_PROTO(unsigned long address, unsigned int nr_pages,
		     unsigned int order),
	    TP_ARGS(address, nr_pages, order),
	    TP_STRUCT__entry(__field(unsigned long, address)
			     __field(unsigned int, nr_pages)
			     __field(unsigned int, order)),
	    TP_fast_assign(__entry->address = address;
			   __entry->nr_pages = nr_pages;
			   __entry->order = order;),
	    TP_printk("address=0x%lx nr_pages=%u order=%u",
		      __entry->address, __entry->nr_pages, __entry->order)
);

#endif /* _TRACE_ANON_PREFAULT_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
