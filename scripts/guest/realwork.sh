#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Real programs, run in the guest by "make run" after bench.sh (job "run"):
# Debian's programs, copied into the initramfs with their libraries.
#   cc    make -jNCPU with gcc over preprocessed kernel sources of mm/,
#         kernel/, fs/ and lib/ (the kernel's own flags): a kernbench proxy
#   sh    dash running a configure-style script (real-configure.sh): many
#         short sed, grep, awk, expr, tr and cat processes
#   py    python3.11 building, sorting and serialising lists and dicts
#   sort  GNU sort over a generated text file
#   xz    xz -6 compressing a generated text file
# Modes off, on, mthp64k, mthp64k+on and auto64k+on (modes.sh). In each round every
# workload runs once in every mode, the order of the modes rotating from
# round to round; a warm-up round 0 runs each workload once, prefault
# off, and is discarded. Each run prints
#   real,WORKLOAD,MODE,ROUND,wall_s,minflt,majflt,maxrss_kb,user_s,sys_s,
#        ap_fault,ap_page,ap_fallback
# (ap_real: wait4() rusage of the whole process tree, /proc/vmstat
# deltas). Every run must produce the same output (cksum) as the first
# run of its workload: one TAP result per workload.

# $1: rounds (jobs.sh passes ap.real_rounds=, REAL_ROUNDS= of make run).
ROUNDS=${1:-3}
# The largest window (on-max) is measured by the benchmark only: each
# mode here adds a quarter to the time of this section.
MODES="off on mthp64k mthp64k+on auto64k+on"
WORKLOADS="cc sh py sort xz"
NCPU=$(grep -c ^processor /proc/cpuinfo)
SH_CHECKS=${AP_REAL_SH:-40}
PY_RECORDS=${AP_REAL_PY:-200000}
SORT_MIB=${AP_REAL_SORT:-32}
XZ_MIB=${AP_REAL_XZ:-1}
# Runs per measurement: the shell script runs for under a second, where
# the placement of its 400 processes (ASLR) shows; the others run for a
# few seconds each.
REPS_sh=4 REPS_py=1 REPS_sort=1 REPS_xz=1
W=/tmp/real
. /ap/modes.sh
# Debian's programs before busybox's.
PATH=/usr/bin:$PATH
export PATH

# run_workload NAME: runs it; sets OUT (ap_real's line) and SUM (cksum
# of what it produced).
run_workload() {
	case $1 in
	cc)
		make -s -C $W/cc clean >/dev/null 2>&1
		OUT=$(/ap/ap_real $W/cc make -s -j"$NCPU") || return 1
		SUM=$(cat $W/cc/*.o | cksum) ;;
	sh)
		rm -f $W/sh/config.*
		OUT=$(/ap/ap_real -n $REPS_sh $W/sh dash /ap/real-configure.sh "$SH_CHECKS") ||
			return 1
		SUM=$(cat $W/sh/config.h $W/sh/config.mk | cksum) ;;
	py)
		# One string hash seed in every run: with a random one, dict
		# and set orders and so the interpreter's own work differ from
		# run to run (1.4% between two boots). -I would ignore it;
		# -s -P is the rest of -I.
		OUT=$(PYTHONHASHSEED=0 /ap/ap_real -n $REPS_py $W/py \
			python3.11 -s -P /ap/real-python.py "$PY_RECORDS") ||
			return 1
		SUM=$(cksum <$W/py/out.log) ;;
	sort)
		rm -f $W/sort/sorted
		OUT=$(/ap/ap_real -n $REPS_sort $W/sort sort -o sorted ../sort.in) ||
			return 1
		SUM=$(cksum <$W/sort/sorted) ;;
	xz)
		OUT=$(/ap/ap_real -n $REPS_xz $W/xz xz -6 -T1 -c ../xz.in) || return 1
		SUM=$(cksum <$W/xz/out.log) ;;
	esac
	return 0
}

echo "TAP version 13"
n=0
for w in $WORKLOADS; do n=$((n + 1)); done
echo "1..$n"
if ! [ -f $PF ]; then
	i=0
	for w in $WORKLOADS; do
		i=$((i + 1))
		echo "ok $i $w # SKIP vm.anon_prefault not in this kernel"
	done
	exit 0
fi
for w in $WORKLOADS; do mkdir -p $W/$w; done
cp /ap/real/cc/* $W/cc/
/ap/ap_real -g "$SORT_MIB" >$W/sort.in
/ap/ap_real -g "$XZ_MIB" >$W/xz.in
CLOCK=${AP_CLOCK:-wall}
echo "# real ($CLOCK clock): $NCPU CPUs, $ROUNDS rounds, modes $MODES;" \
	"cc: $(ls $W/cc/*.i | wc -l) files, sh: $SH_CHECKS checks x $REPS_sh," \
	"py: $PY_RECORDS records x $REPS_py, sort: $SORT_MIB MiB x $REPS_sort," \
	"xz: $XZ_MIB MiB x $REPS_xz"
echo "meta,real_clock,$CLOCK"
echo "meta,real_rounds,$ROUNDS"
echo "meta,real_modes,$MODES"
echo "meta,real_workloads,$WORKLOADS"

# bad_WORKLOAD: why the workload failed; ref_WORKLOAD: its first output.
r=0
while [ $r -le "$ROUNDS" ]; do
	# Round 0 runs every workload once with prefault off, to warm up the
	# page cache and the guest's caches (and, on the wall clock, the
	# translator: a program's second run under TCG is faster than its
	# first). Its outputs are the references; its times are discarded.
	modes=off
	[ $r -gt 0 ] && modes=$(rotated "$r" $MODES)
	for m in $modes; do
		mode "$m" >/dev/null
		for w in $WORKLOADS; do
			if ! run_workload "$w"; then
				eval "bad_$w=\"\$bad_$w $m/round $r failed ($(tail -c 300 $W/$w/out.log | tr '\n' ' '));\""
				continue
			fi
			eval "ref=\$ref_$w"
			if [ -z "$ref" ]; then
				eval "ref_$w=\"\$SUM\""
			elif [ "$ref" != "$SUM" ]; then
				eval "bad_$w=\"\$bad_$w $m/round $r output differs;\""
			fi
			[ $r -gt 0 ] && echo "real,$w,$m,$r,$(echo $OUT | tr ' ' ',')"
		done
	done
	r=$((r + 1))
done
mode on >/dev/null

i=0
for w in $WORKLOADS; do
	i=$((i + 1))
	eval "bad=\$bad_$w"
	if [ -z "$bad" ]; then
		echo "ok $i $w: every run produced the same output"
	else
		echo "not ok $i $w:$bad"
	fi
done
