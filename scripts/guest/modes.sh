# SPDX-License-Identifier: GPL-2.0
# Benchmark modes of make run, sourced by bench.sh and realwork.sh:
#   off            vm.anon_prefault=0, THP never
#   on             vm.anon_prefault=1, the default window cap (16)
#   on-max         vm.anon_prefault=1, window cap PAGEVEC_SIZE (31)
#   mthp64k        vm.anon_prefault=0, 64K mTHP always
#   mthp64k+on     vm.anon_prefault=1, window cap 16, 64K mTHP always
#   auto64k+on     vm.anon_prefault=1, window cap 16, 64K mTHP auto
#   populate       vm.anon_prefault=0, THP never (pft maps with
#                  MADV_POPULATE_WRITE)

THP=/sys/kernel/mm/transparent_hugepage
PF=/proc/sys/vm/anon_prefault
MAXP=/proc/sys/vm/anon_prefault_max_pages

thp_set() { # $1: never|always|auto for 64K; everything else never
	for f in $THP/enabled $THP/hugepages-*/enabled; do
		[ -w "$f" ] && echo never >"$f"
	done
	[ "$1" = never ] || echo "$1" >$THP/hugepages-64kB/enabled
}

# mode NAME: switch the knobs; prints the pft flags the mode needs
mode() {
	case $1 in
	off) echo 0 >$PF; thp_set never; echo "" ;;
	on) echo 1 >$PF; echo 16 >$MAXP; thp_set never; echo "" ;;
	on-max) echo 1 >$PF; echo 31 >$MAXP; thp_set never; echo "" ;;
	mthp64k) echo 0 >$PF; thp_set always; echo "-H" ;;
	mthp64k+on) echo 1 >$PF; echo 16 >$MAXP; thp_set always; echo "-H" ;;
	auto64k+on) echo 1 >$PF; echo 16 >$MAXP; thp_set auto; echo "-H" ;;
	populate) echo 0 >$PF; thp_set never; echo "-P" ;;
	esac
}

# rotated ROUND MODE...: the modes, starting with the ROUND-th (1-based,
# wrapping around).
rotated() {
	k=$((($1 - 1) % ($# - 1)))
	shift
	head="" tail=""
	i=0
	for m in "$@"; do
		if [ $i -lt $k ]; then tail="$tail $m"; else head="$head $m"; fi
		i=$((i + 1))
	done
	echo $head $tail
}
