#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Upstream mm selftests as a regression suite: each binary of /ap/upstream
# runs with vm.anon_prefault=1, then =0; on a kernel without the sysctl
# (the stock baseline, CONFIG_ANON_PREFAULT=n) once, as mode "stock". Each run's output is framed by
# "@@T BEGIN name on|off" / "@@T END name on|off rc=N secs=S" for the host
# to compare case by case (scripts/compare-upstream.py). When the two runs
# of a binary disagree, both run again (up to $AP_UPSTREAM_RETRIES times,
# default 2, each announced by "@@T RETRY name"): the host compares the
# last pair, so a flaky case passes only if it agrees on a later try.
# Per-binary time limit: the second word of its LIST line, else
# $AP_UPSTREAM_TIMEOUT seconds (default 300).
# A binary named in /ap/upstream/AUTO runs a third time, mode "auto":
# prefault on with the 64 KiB mTHP size at "auto", as an administrator may
# leave it; after the run "@@T STATE name auto VALUE" gives the size's
# setting (the tests that save and restore the THP settings must give
# "auto" back), and the host compares its cases with the on run's. Those
# binaries test THPs, so every run of theirs (stock included) has THP
# "madvise" and the PMD size "inherit", as a default kernel has them, where
# the others keep the guest's "never".
PF=/proc/sys/vm/anon_prefault
THP=/sys/kernel/mm/transparent_hugepage
AUTO_SIZE=$THP/hugepages-64kB/enabled
PMD_SIZE=$THP/hugepages-$(($(cat $THP/hpage_pmd_size 2>/dev/null || echo 2097152) / 1024))kB/enabled

# selected FILE: the value a THP "enabled" file has selected
selected() {
	sed -n 's/.*\[\(.*\)\].*/\1/p' "$1"
}
LIMIT=${AP_UPSTREAM_TIMEOUT:-300}
RETRIES=${AP_UPSTREAM_RETRIES:-2}

# The same address-space layout for every run: some tests place mappings
# with MAP_FIXED_NOREPLACE and fail or not depending on where ASLR put
# earlier ones.
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 >/proc/sys/kernel/randomize_va_space

# run NAME LIMIT on|off|auto|stock: one framed run; its result lines go
# to /tmp/up.MODE
run() {
	thp=$(selected $THP/enabled) pmd=$(selected $PMD_SIZE) size=$(selected $AUTO_SIZE)
	case $3 in
	on) echo 1 >$PF ;;
	off) echo 0 >$PF ;;
	auto) echo 1 >$PF; echo auto >$AUTO_SIZE ;;
	esac
	if grep -qx "$1" /ap/upstream/AUTO 2>/dev/null; then
		echo madvise 2>/dev/null >$THP/enabled
		echo inherit 2>/dev/null >$PMD_SIZE
	fi
	start=$(date +%s)
	timeout "$2" "./$1" </dev/null >/tmp/up.out 2>&1
	rc=$?
	echo "$thp" 2>/dev/null >$THP/enabled
	echo "$pmd" 2>/dev/null >$PMD_SIZE
	echo "@@T BEGIN $1 $3"
	cat /tmp/up.out
	echo "@@T END $1 $3 rc=$rc secs=$(($(date +%s) - start))"
	if [ "$3" = auto ]; then
		echo "@@T STATE $1 auto $(selected $AUTO_SIZE)"
		echo "$size" >$AUTO_SIZE
	fi
	{
		echo "rc=$rc"
		grep -E '^(# )?(not )?ok [0-9]|^Testing .*\.\.\.' /tmp/up.out |
			sed -e 's/^# //' -e 's/ *# *SKIP.*/ # SKIP/'
	} >"/tmp/up.$3"
}

cd /ap/upstream || exit 1
if ! [ -f $PF ]; then
	echo "# upstream mm selftests on the stock kernel (no vm.anon_prefault)"
	while read -r t limit; do
		[ -x "./$t" ] && run "$t" "${limit:-$LIMIT}" stock
	done </ap/upstream/LIST
	echo "$aslr" >/proc/sys/kernel/randomize_va_space
	exit 0
fi
# until_agree NAME LIMIT TAG MODE...: runs NAME in each MODE, and again
# (each time announced by "@@T TAG NAME", up to $RETRIES times) while the
# last MODE's results differ from the on run's.
until_agree() {
	name=$1 limit=$2 tag=$3
	shift 3
	try=0
	while :; do
		for m in "$@"; do
			run "$name" "$limit" "$m"
		done
		cmp -s /tmp/up.on "/tmp/up.$m" && break
		try=$((try + 1))
		[ $try -gt "$RETRIES" ] && break
		echo "@@T $tag $name"
	done
}

echo "# upstream mm selftests, each with vm.anon_prefault=1 then =0"
while read -r t limit; do
	[ -x "./$t" ] || continue
	until_agree "$t" "${limit:-$LIMIT}" RETRY on off
	grep -qx "$t" /ap/upstream/AUTO 2>/dev/null &&
		until_agree "$t" "${limit:-$LIMIT}" RETRY-AUTO auto
done </ap/upstream/LIST
echo 1 >$PF
echo "$aslr" >/proc/sys/kernel/randomize_va_space
exit 0
