// SPDX-License-Identifier: GPL-2.0
/*
 * Is this guest on QEMU's instruction clock (-icount shift=0)? There the
 * guest clock advances 1 ns per guest instruction executed, whatever the
 * instruction costs the host. Two loops of a known number of instructions
 * are timed with CLOCK_MONOTONIC: one of register arithmetic (cheap to
 * translate) and one around CPUID (a call out of translated code under
 * TCG, an exit under KVM: hundreds of times dearer on any host clock).
 * Both must take 1 ns per instruction, to within the timer interrupts and
 * the other CPU's housekeeping (+10%); on a host clock the two rates differ
 * by far more than that. x86_64 only (make test's clock boot).
 */
#include <stdio.h>
#include <time.h>

#include "tap.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* 2 instructions per iteration. */
static void arith_loop(unsigned long n)
{
	asm volatile("1: dec %0\n\tjnz 1b" : "+r"(n));
}

/* 4 instructions per iteration. */
static void cpuid_loop(unsigned long n)
{
	asm volatile("1: xor %%eax, %%eax\n\tcpuid\n\tdec %%rsi\n\tjnz 1b"
		     : "+S"(n) : : "eax", "ebx", "ecx", "edx", "memory");
}

static void check(const char *name, void (*loop)(unsigned long),
		  unsigned long n, unsigned long per_iter)
{
	double insns = (double)n * per_iter, t0, ns, rate;
	char desc[160];

	loop(n / 16);			/* translate it before timing it */
	t0 = now_ns();
	loop(n);
	ns = now_ns() - t0;
	rate = ns / insns;
	diag("%s loop: %.0f instructions in %.0f ns of guest time: %.4f ns per instruction\n",
	     name, insns, ns, rate);
	snprintf(desc, sizeof(desc),
		 "%s loop: %.4f ns per instruction, 0.99 to 1.10 on the instruction clock",
		 name, rate);
	result(rate >= 0.99 && rate <= 1.10, desc);
}

int main(void)
{
	printf("TAP version 13\n1..2\n");
	check("arithmetic", arith_loop, 100000000UL, 2);
	check("cpuid", cpuid_loop, 2000000UL, 4);
	return failed;
}
