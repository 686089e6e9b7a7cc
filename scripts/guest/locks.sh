#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Lock profile driver run in the guest by "make locks" (job "locks") on the
# CONFIG_LOCK_STAT kernel: ap_locks (one thread per CPU, $1 MiB each,
# sequential write) in the modes off, on and on-max, alternating inside
# every round with the order rotating from round to round. After every
# mode switch a short run is made and discarded. Prints "locks,MODE,ROUND,"
# before each line of ap_locks; scripts/lock-report.py makes the table.

SIZE=${1:-64}
ROUNDS=${2:-5}
NCPU=$(grep -c ^processor /proc/cpuinfo)
MODES="off on on-max"
. /ap/modes.sh

echo "TAP version 13"
echo "1..1"
if ! [ -f $PF ]; then
	echo "ok 1 # SKIP vm.anon_prefault not in this kernel"
	exit 0
fi
if ! [ -w /proc/lock_stat ]; then
	echo "not ok 1 no /proc/lock_stat: not a CONFIG_LOCK_STAT kernel"
	exit 1
fi
echo 1 >/proc/sys/kernel/lock_stat
echo "meta,threads,$NCPU"
echo "meta,size,$SIZE"
echo "meta,rounds,$ROUNDS"
echo "meta,modes,$MODES"
for m in $MODES; do
	mode "$m" >/dev/null
	/ap/ap_locks 8 "$NCPU" >/dev/null || { echo "not ok 1 ap_locks failed"; exit 1; }
done
r=1
while [ "$r" -le "$ROUNDS" ]; do
	for m in $(rotated "$r" $MODES); do
		mode "$m" >/dev/null
		/ap/ap_locks 8 "$NCPU" >/dev/null
		out=$(/ap/ap_locks "$SIZE" "$NCPU") ||
			{ echo "not ok 1 ap_locks failed: $m round $r"; exit 1; }
		echo "$out" | sed "s/^/locks,$m,$r,/"
	done
	r=$((r + 1))
done
mode on >/dev/null
echo "ok 1 lock profile finished"
