#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Benchmark driver run in the guest by "make run" (job "run"). Prints raw
# results as "data,..." lines that scripts/bench-report.py turns into the
# tables, ratios, CSV and plot; everything else is a "# " comment.
# Modes: see modes.sh (off, on, on-max, mthp64k, mthp64k+on,
# auto64k+on, populate). Modes alternate inside every round and their
# order rotates from round to round; after every mode switch a short run
# (8 MiB) is made and discarded, so that no measured run is the first one
# after a sysctl flip.
# $1: the sections to run (default all): seq (sequential write, 1 thread),
# threads (sequential write, 1..nproc threads), sparse, churn, frag,
# pressure, readwrite (read every page, then write it: 1 and 4 threads).
# make run runs threads in a boot of its own on the wall clock when the
# others run on the instruction clock (ap.clock=).

SECTIONS=${1:-"seq threads sparse churn frag pressure readwrite"}
CLOCK=${AP_CLOCK:-wall}
ROUNDS=${AP_ROUNDS:-5}
SIZE=${AP_SIZE:-64M}
CHURN=${AP_CHURN:-300}
NCPU=$(grep -c ^processor /proc/cpuinfo)
MODES="off on on-max mthp64k mthp64k+on auto64k+on populate"
. /ap/modes.sh

pft_run() { # section mode threads round [pft args...]
	sec=$1 m=$2 t=$3 r=$4
	shift 4
	flags=$(mode "$m")
	# shellcheck disable=SC2086
	[ "$sec" = warmup ] || /ap/pft -S $flags -m 8M -t "$t" >/dev/null 2>&1
	# shellcheck disable=SC2086
	out=$(/ap/pft -S $flags "$@") || { echo "# pft failed: $sec $m $*"; return 1; }
	echo "data,$sec,$m,$t,$r,$out"
}

echo "TAP version 13"
echo "1..1"
if ! [ -f $PF ]; then
	echo "ok 1 # SKIP vm.anon_prefault not in this kernel"
	exit 0
fi
echo "# bench ($CLOCK clock): $NCPU CPUs, $(grep MemTotal /proc/meminfo | tr -s ' '), size $SIZE per worker, $ROUNDS rounds, sections: $SECTIONS"
echo "# kernel $(uname -r), sysctl anon_prefault=$(cat $PF) max_pages=$(cat $MAXP)"
echo "meta,ncpu,$NCPU"
echo "meta,size,$SIZE"
echo "meta,rounds,$ROUNDS"
echo "meta,modes,$MODES"
echo "meta,clock,$CLOCK"
echo "meta,sections,$(echo $SECTIONS | tr ' ' ':')"

has() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }

# Warm-up: the translator is slow on the first round after boot.
for m in $MODES; do pft_run warmup "$m" 1 0 -m "$SIZE" >/dev/null; done

# Sequential write: 1 thread (seq), 1..nproc threads (threads); the
# modes alternate inside a round.
for sec in seq threads; do
	has $sec || continue
	tmax=1
	[ $sec = threads ] && tmax=$NCPU
	r=1
	while [ $r -le "$ROUNDS" ]; do
		t=1
		while [ $t -le "$tmax" ]; do
			for m in $(rotated "$r" $MODES); do
				pft_run $sec "$m" "$t" "$r" -m "$SIZE" -t "$t"
			done
			t=$((t + 1))
		done
		r=$((r + 1))
	done
done

# Sparse patterns: RSS per touched page is exact; their speed is compared
# with off round by round, the modes rotating as in the sequential write.
has sparse && for p in stride:2 stride:4 random50; do
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for m in $(rotated "$r" off on on-max mthp64k mthp64k+on auto64k+on); do
			pft_run "sparse-$p" "$m" 1 "$r" -m 16M -p "$p"
		done
		r=$((r + 1))
	done
done

# Read, then write (pft -B): each page's read fault maps the zero page (a
# read window maps it ahead), its write copies it; with and without 64K
# mTHP "always", 1 and 4 threads (on one virtual CPU on the instruction
# clock: they take turns).
has readwrite && for t in 1 4; do
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for m in $(rotated "$r" off on mthp64k mthp64k+on); do
			pft_run readwrite "$m" "$t" "$r" -m 16M -t "$t" -B
		done
		r=$((r + 1))
	done
done

# Fork/exec churn: short-lived programs that touch 256 KiB each.
churn_section() {
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for m in $(rotated "$r" off on on-max mthp64k mthp64k+on auto64k+on); do
			mode "$m" >/dev/null
			/ap/ap_churn 20 256 >/dev/null 2>&1
			out=$(/ap/ap_churn "$CHURN" 256) || { echo "# churn failed"; continue; }
			echo "churn,$m,$r,$(echo "$out" | awk '{print $2","$4","$6","$8","$10","$12}')"
		done
		r=$((r + 1))
	done
}
has churn && churn_section

# Fragmented memory: every other order-0 page of most of memory is held.
frag_section() {
	mode off >/dev/null
	/ap/ap_frag 24 >/tmp/frag.out &
	fpid=$!
	while ! grep -q ready /tmp/frag.out 2>/dev/null; do
		kill -0 $fpid 2>/dev/null || break
		sleep 1
	done
	echo "# fragmented: $(cat /tmp/frag.out)"
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for m in $(rotated "$r" off on mthp64k mthp64k+on auto64k+on); do
			pft_run frag "$m" 1 "$r" -m "$SIZE"
		done
		r=$((r + 1))
	done
	kill $fpid
	wait $fpid 2>/dev/null
}
has frag && frag_section

# Memory pressure: a holder advises 32 MiB MADV_SEQUENTIAL and writes one
# page per 64 KiB, then 32 MiB more is written in the same memory cgroup
# with memory.max 48 MiB (no swap).
pressure_section() {
	r=1
	while [ $r -le "$ROUNDS" ]; do
		for m in $(rotated "$r" off on on-max); do
			mode "$m" >/dev/null
			out=$(/ap/ap_pressure 48 32 32) || { echo "# pressure failed: $m"; continue; }
			echo "pressure,$m,$r,$(echo "$out" | awk '{print $2","$4","$6","$8","$10}')"
		done
		r=$((r + 1))
	done
}
has pressure && pressure_section
mode on >/dev/null
echo "ok 1 benchmark finished"
