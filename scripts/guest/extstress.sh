#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# External stress in the guest, with programs nobody here wrote (Debian's
# stress-ng and trinity, copied into the initramfs with their libraries).
#
#   extstress.sh stress-ng SECS MODES   mm stressors of stress-ng with
#                                       --verify, once per mode (on, off)
#   extstress.sh trinity SEED COUNT     trinity fuzzing the mm syscalls with
#                                       vm.anon_prefault=1, unprivileged
#
# Prints TAP. Pass: every stress-ng run exits 0 (no stressor failed, none
# skipped, no verification error) and, with prefault on, windows were
# mapped; trinity completes its COUNT syscalls and leaves the kernel
# untainted. The kernel console is checked by the host.
PF=/proc/sys/vm/anon_prefault
CG=/sys/fs/cgroup/ap-extstress

vmstat() { sed -n "s/^$1 //p" /proc/vmstat; }

set_pf() { echo "$1" >$PF; }

# The memory cgroup the external programs run in: a bound for bigheap and
# friends, and the memcg charge path under pressure.
enter_cgroup() {
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir -p $CG
	echo "$1" >$CG/memory.max
	echo $$ >$CG/cgroup.procs
}

leave_cgroup() {
	echo $$ >/sys/fs/cgroup/cgroup.procs
	rmdir $CG 2>/dev/null
}

# The stressors: anonymous memory in every way stress-ng knows, with the
# syscalls that change its mappings under it. SNG_LIST names them all, each
# must report bogo-ops.
SNG_LIST="vm vm-rw mmap mmapfork madvise mremap fault pagemove bigheap brk
stack fork userfaultfd mlock"
SNG_ARGS="--vm 2 --vm-bytes 64M --vm-method all --vm-rw 1 --vm-rw-bytes 4M
--mmap 1 --mmap-bytes 32M --mmapfork 1 --madvise 1 --mremap 1
--mremap-bytes 32M --fault 1 --pagemove 1 --pagemove-bytes 16M --bigheap 1
--bigheap-growth 64K --brk 1 --stack 1 --stack-fill --fork 1 --fork-vm
--userfaultfd 1 --mlock 1"

# The stressors of SNG_LIST missing from the metrics of run $1.
sng_missing() {
	for s in $SNG_LIST; do
		grep -qE "metrc: \[[0-9]+\] $s +[0-9]+ " "$1" || printf ' %s' "$s"
	done
}

stress_ng() {
	secs=$1
	modes=$2
	n=0
	for m in $modes; do n=$((n + 2)); done
	echo "TAP version 13"
	echo "1..$n"
	if ! [ -f $PF ]; then
		i=0
		while [ $i -lt $n ]; do
			i=$((i + 1))
			echo "ok $i # SKIP vm.anon_prefault not in this kernel"
		done
		return 0
	fi
	old=$(cat $PF)
	mkdir -p /tmp/sng
	enter_cgroup 1G
	i=0
	for m in $modes; do
		case $m in on) set_pf 1 ;; *) set_pf 0 ;; esac
		before=$(vmstat anon_prefault_page)
		# shellcheck disable=SC2086
		stress-ng $SNG_ARGS --verify --timeout "${secs}s" \
			--metrics-brief --temp-path /tmp/sng >/tmp/sng.$m 2>&1
		rc=$?
		after=$(vmstat anon_prefault_page)
		sed 's/^/# /' /tmp/sng.$m | grep -vE 'metrc: .*(nanosecs|per sec|miscellaneous)'
		missing=$(sng_missing /tmp/sng.$m)
		i=$((i + 1))
		if [ $rc -eq 0 ] && [ -z "$missing" ]; then
			echo "ok $i stress-ng $(echo $SNG_LIST | wc -w) mm stressors, --verify, ${secs}s, prefault $m: exit 0"
		else
			echo "not ok $i stress-ng, prefault $m: exit $rc${missing:+, no bogo-ops from:$missing}"
		fi
		i=$((i + 1))
		mapped=$((after - before))
		if [ $m = on ]; then
			if [ $mapped -gt 0 ]; then
				echo "ok $i stress-ng, prefault on: windows mapped $mapped pages"
			else
				echo "not ok $i stress-ng, prefault on: no page mapped ahead (anon_prefault_page +0)"
			fi
		elif [ $mapped -eq 0 ]; then
			echo "ok $i stress-ng, prefault $m: no page mapped ahead"
		else
			echo "not ok $i stress-ng, prefault $m: $mapped pages mapped ahead"
		fi
	done
	leave_cgroup
	set_pf "$old"
	# Information, not a check: bogo-ops per stressor, on against off.
	if [ -f /tmp/sng.on ] && [ -f /tmp/sng.off ]; then
		echo "# bogo-ops (on/off, ${secs}s each; TCG, not a benchmark):"
		for f in on off; do
			sed -n 's/.*metrc: \[[0-9]*\] \([a-z-]*\) *\([0-9][0-9]*\) .*/\1 \2/p' \
				/tmp/sng.$f >/tmp/sng.$f.ops
		done
		join /tmp/sng.on.ops /tmp/sng.off.ops | while read -r s a b; do
			echo "#   $s: $a / $b"
		done
	fi
	rm -rf /tmp/sng
	return 0
}

TRINITY_CALLS="mmap munmap mremap mprotect madvise brk mlock mlock2 munlock
mlockall munlockall msync mincore userfaultfd process_madvise remap_file_pages
fork"

trinity_run() {
	seed=$1
	count=$2
	echo "TAP version 13"
	echo "1..2"
	if ! [ -f $PF ]; then
		echo "ok 1 # SKIP vm.anon_prefault not in this kernel"
		echo "ok 2 # SKIP vm.anon_prefault not in this kernel"
		return 0
	fi
	old=$(cat $PF)
	set_pf 1
	before=$(vmstat anon_prefault_page)
	taint0=$(cat /proc/sys/kernel/tainted)
	# A throwaway directory and an unprivileged user (see /etc/passwd).
	rm -rf /tmp/trinity
	mkdir -p /tmp/trinity
	chown 1000:1000 /tmp/trinity
	calls=""
	for c in $TRINITY_CALLS; do calls="$calls -c $c"; done
	echo "# trinity seed $seed, $count syscalls, 2 children, as uid 1000:$calls"
	enter_cgroup 1G
	# shellcheck disable=SC2086
	su -s /bin/sh ap -c "cd /tmp/trinity && exec trinity -q -l off \
		-s $seed -N $count -C 2 -a 64 --disable-fds=sockets,perf,drm \
		$calls" </dev/null >/tmp/trinity.log 2>&1
	rc=$?
	leave_cgroup
	after=$(vmstat anon_prefault_page)
	set_pf "$old"
	grep -vE "Couldn't open socket|Can't do protocol|futex: 0 owner|Marking syscall|AVOID" \
		/tmp/trinity.log | tail -15 | sed 's/^/# /'
	ran=$(sed -n 's/.*Ran \([0-9]*\) syscalls.*/\1/p' /tmp/trinity.log | tail -1)
	taint=$(cat /proc/sys/kernel/tainted)
	if [ $rc -eq 0 ] && [ "${ran:-0}" -ge "$count" ] && [ "$taint" = "$taint0" ] &&
	   ! grep -qi 'tainted' /tmp/trinity.log; then
		echo "ok 1 trinity seed $seed: ${ran} mm syscalls, kernel untainted"
	else
		echo "not ok 1 trinity seed $seed: exit $rc, ran ${ran:-0} of $count syscalls, taint $taint0 -> $taint (replay: ap.trinity=$seed)"
	fi
	if [ $((after - before)) -gt 0 ]; then
		echo "ok 2 trinity: windows mapped $((after - before)) pages meanwhile"
	else
		echo "not ok 2 trinity: no page mapped ahead during the run"
	fi
	rm -rf /tmp/trinity
	return 0
}

case $1 in
stress-ng) stress_ng "${2:-20}" "${3:-on off}" ;;
trinity) trinity_run "${2:-1}" "${3:-20000}" ;;
*) echo "usage: extstress.sh stress-ng SECS MODES | trinity SEED COUNT" >&2; exit 2 ;;
esac
