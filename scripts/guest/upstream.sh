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
PF=/proc/sys/vm/anon_prefault
LIMIT=${AP_UPSTREAM_TIMEOUT:-300}
RETRIES=${AP_UPSTREAM_RETRIES:-2}

# The same address-space layout for every run: some tests place mappings
# with MAP_FIXED_NOREPLACE and fail or not depending on where ASLR put
# earlier ones.
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 >/proc/sys/kernel/randomize_va_space

# run NAME LIMIT on|off|stock: one framed run; its result lines go to
# /tmp/up.MODE
run() {
	case $3 in
	on) echo 1 >$PF ;;
	off) echo 0 >$PF ;;
	esac
	start=$(date +%s)
	timeout "$2" "./$1" </dev/null >/tmp/up.out 2>&1
	rc=$?
	echo "@@T BEGIN $1 $3"
	cat /tmp/up.out
	echo "@@T END $1 $3 rc=$rc secs=$(($(date +%s) - start))"
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
echo "# upstream mm selftests, each with vm.anon_prefault=1 then =0"
while read -r t limit; do
	[ -x "./$t" ] || continue
	try=0
	while :; do
		run "$t" "${limit:-$LIMIT}" on
		run "$t" "${limit:-$LIMIT}" off
		cmp -s /tmp/up.on /tmp/up.off && break
		try=$((try + 1))
		[ $try -gt "$RETRIES" ] && break
		echo "@@T RETRY $t"
	done
done </ap/upstream/LIST
echo 1 >$PF
echo "$aslr" >/proc/sys/kernel/randomize_va_space
exit 0
