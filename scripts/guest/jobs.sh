# SPDX-License-Identifier: GPL-2.0
# Guest jobs, sourced by /init. Each job runs suites (see suite() in init).

thp_never() {
	for f in /sys/kernel/mm/transparent_hugepage/enabled \
		/sys/kernel/mm/transparent_hugepage/hugepages-*/enabled; do
		[ -w "$f" ] && echo never >"$f"
	done
}

# Boot smoke test: the kernel came up and the interfaces the tests use work.
smoke() {
	echo "TAP version 13"
	echo "1..4"
	v=$(uname -r)
	case $v in
	6.12.*) echo "ok 1 kernel $v booted" ;;
	*) echo "not ok 1 unexpected kernel version $v" ;;
	esac
	if cat /proc/sys/vm/overcommit_memory >/dev/null 2>&1; then
		echo "ok 2 /proc/sys/vm readable"
	else
		echo "not ok 2 /proc/sys/vm not readable"
	fi
	n=$(grep -c ^processor /proc/cpuinfo)
	echo "ok 3 $n CPUs online # $(grep MemTotal /proc/meminfo)"
	if /ap/ap_smoke; then
		echo "ok 4 mmap/madvise/fault work, the opt-outs where the feature is"
	else
		echo "not ok 4 ap_smoke failed"
	fi
}

# The feature's presence, and vm.anon_prefault as the boot left it: the
# value ap.prefault_boot= names, which the build's default
# (CONFIG_ANON_PREFAULT_DEFAULT_ON) or sysctl.vm.anon_prefault= on the
# command line must have set (no job writes it before this runs).
feature_report() {
	want=$(arg prefault_boot "")
	echo "TAP version 13"
	echo "1..2"
	if ! [ -f /proc/sys/vm/anon_prefault ]; then
		echo "ok 1 feature absent # SKIP vm.anon_prefault not in this kernel"
		echo "ok 2 vm.anon_prefault at boot # SKIP not in this kernel"
		return
	fi
	v=$(cat /proc/sys/vm/anon_prefault)
	echo "# vm.anon_prefault = $v"
	echo "# vm.anon_prefault_max_pages = $(cat /proc/sys/vm/anon_prefault_max_pages)"
	grep '^anon_prefault' /proc/vmstat | sed 's/^/# /'
	echo "ok 1 feature present"
	if [ -z "$want" ]; then
		echo "ok 2 vm.anon_prefault at boot # SKIP no ap.prefault_boot="
	elif [ "$v" = "$want" ]; then
		echo "ok 2 vm.anon_prefault at boot is $v, as the build and the command line set it"
	else
		echo "not ok 2 vm.anon_prefault at boot is $v, expected $want (ap.prefault_boot=)"
	fi
}

# ap.job=debian: the runtime defaults of Debian's configuration, as the
# Debian-configured kernel booted with nothing on the command line for
# them: THP "always" and the multi-gen LRU enabled (init_on_alloc, the
# third, is read from the console by make test).
debian_report() {
	echo "TAP version 13"
	echo "1..2"
	t=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)
	case $t in
	*"[always]"*) echo "ok 1 THP is \"always\", Debian's default: $t" ;;
	*) echo "not ok 1 THP is not \"always\": ${t:-no THP}" ;;
	esac
	g=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null)
	case $g in
	""|0x0000) echo "not ok 2 the multi-gen LRU is not enabled (${g:-no lru_gen})" ;;
	*) echo "ok 2 the multi-gen LRU is enabled ($g), Debian's default" ;;
	esac
}

# arm64: the CPU features the tests depend on, as the kernel found them:
# MTE (the functional test's mte case) and the hardware update of the
# access and dirty flags (without it every first write to a clean page is
# a permission fault the kernel resolves).
cpu_report() {
	echo "TAP version 13"
	echo "1..1"
	f=$(sed -n 's/^Features[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "# /proc/cpuinfo Features: $f"
	dmesg | sed -n 's/.*CPU features: detected: /# CPU features: detected: /p'
	case " $f " in *" mte "*) mte=yes ;; *) mte=no ;; esac
	dbm=no
	dmesg | grep -c 'detected: Hardware dirty bit management' >/dev/null && dbm=yes
	echo "ok 1 CPU features reported # MTE: $mte, hardware access/dirty flags: $dbm"
}

# x86: the page clear the CPU model gives the kernel, which the clock of the
# boot ($AP_CLOCK) must have: on the instruction clock with "max" (icount)
# ERMS, so that clear_page() is rep stosb; without ERMS (icount-stosq)
# REP_GOOD, so that it is rep stosq, not the unrolled loop.
clear_page_report() {
	echo "TAP version 13"
	echo "1..1"
	f=" $(sed -n 's/^flags[[:space:]]*: //p' /proc/cpuinfo | head -1) "
	case $f in
	*" erms "*) clear="rep stosb (erms)" ;;
	*" rep_good "*) clear="rep stosq (rep_good, no erms)" ;;
	*) clear="unrolled stores (neither erms nor rep_good)" ;;
	esac
	case $AP_CLOCK in
	icount) want="rep stosb (erms)" ;;
	icount-stosq) want="rep stosq (rep_good, no erms)" ;;
	*) want=$clear ;;
	esac
	if [ "$clear" = "$want" ]; then
		echo "ok 1 clear_page() is $clear on the $AP_CLOCK clock"
	else
		echo "not ok 1 clear_page() is $clear on the $AP_CLOCK clock, want $want"
	fi
}

# The mTHP states the boot's thp_anon= parameters set, read before run_job
# sets every size to never: $1 = SIZE:STATE[,SIZE:STATE...] (SIZE as in
# hugepages-SIZE), each of which hugepages-SIZE/enabled must show
# selected; $2 = a thp_anon= value the kernel must have refused (its
# "error parsing string" message), or empty.
thp_boot() {
	n=$(echo "$1" | tr , ' ' | wc -w)
	[ -n "$2" ] && n=$((n + 1))
	echo "TAP version 13"
	echo "1..$n"
	i=0
	for e in $(echo "$1" | tr , ' '); do
		i=$((i + 1))
		v=$(cat "/sys/kernel/mm/transparent_hugepage/hugepages-${e%%:*}/enabled" 2>&1)
		case $v in
		*"[${e#*:}]"*) echo "ok $i thp_anon= set ${e%%:*} to ${e#*:} ($v)" ;;
		*) echo "not ok $i thp_anon= did not set ${e%%:*} to ${e#*:} ($v)" ;;
		esac
	done
	if [ -n "$2" ]; then
		i=$((i + 1))
		if dmesg | grep -F -q "thp_anon=$2: error parsing string"; then
			echo "ok $i thp_anon=$2 refused"
		else
			echo "not ok $i thp_anon=$2 not refused"
		fi
	fi
}

# Value of ap.NAME= on the kernel command line, or $2.
arg() {
	v=$(sed -n "s/.*ap\.$1=\([^ ]*\).*/\1/p" /proc/cmdline)
	echo "${v:-$2}"
}

# stress-ng's mm stressors for ap.sng= seconds per mode ($1: on, off), when
# the initramfs carries stress-ng (make test adds it to the test and debug
# boots).
ext_stress() {
	command -v stress-ng >/dev/null &&
		suite stress-ng sh /ap/extstress.sh stress-ng "$(arg sng 20)" "$1"
}

# trinity on the mm syscalls: seed ap.trinity=, ap.trinity_n= syscalls.
ext_fuzz() {
	command -v trinity >/dev/null &&
		suite trinity sh /ap/extstress.sh trinity "$(arg trinity 1)" \
			"$(arg trinity_n 20000)"
}

# The race stress test with 64 KiB mTHP "always" (the predictor chooses
# the folio order) for ap.stress_mthp= seconds (default $1).
mthp_stress() {
	[ -x /ap/anon_prefault_stress ] &&
		suite anon_prefault_stress_mthp /ap/anon_prefault_stress -H \
			-d "$(arg stress_mthp "$1")"
	thp_never
}

# The smoke test, the feature report, the functional tests (order-0 and
# mTHP), with $3 = upstream the upstream mm selftests on and off (on a
# kernel without the sysctl: once, the stock baseline), then the race
# stress test for ap.stress= seconds (default $1) and with mTHP for
# ap.stress_mthp= seconds (default $2). The upstream tests come before the
# stress test: uffd-unit-tests' events cases fail now and then after heavy
# memory churn in the same boot, with vm.anon_prefault=0 as with 1 (see
# README).
feature_tests() {
	suite smoke smoke
	suite feature feature_report
	[ -x /ap/anon_prefault ] && suite anon_prefault /ap/anon_prefault
	[ -x /ap/anon_prefault_mthp ] &&
		suite anon_prefault_mthp /ap/anon_prefault_mthp
	[ "${3:-}" = upstream ] && [ -s /ap/upstream/LIST ] &&
		suite upstream sh /ap/upstream.sh
	[ -x /ap/anon_prefault_stress ] &&
		suite anon_prefault_stress /ap/anon_prefault_stress -d "$(arg stress "$1")"
	mthp_stress "$2"
}

# ap.job=test: the feature's kselftests, the race stress test and the
# upstream mm selftests on and off, in one boot.
# Both end with stress-ng (on and off; on the debug kernel on only), the
# debug job with trinity.
# ap.job=debug: the kselftests and the stress test on the debug kernel.
# ap.job=bulk: the functional test and the stress test, for the debug
# kernel booted without init_on_alloc (windows from the bulk allocation).
# ap.job=limits: OOM and NUMA placement (small guest with two nodes).
# ap.job=debian: on the Debian-configured kernel with Debian's runtime
# defaults (THP as it booted, not "never"), the functional test: its
# accounting, memcg and reclaim cases included.
# ap.job=case: the functional test's case named by ap.case= alone (its
# longterm_pin case in a guest booted with a movable zone, its mte case on
# arm64 booted with init_on_alloc=1).
# ap.job=run: the benchmark's sections named by ap.bench= (separated by
# ':', default all), then the real programs (when the initramfs carries
# them: make run adds them).
# ap.job=threads: the benchmark's thread table alone (make run boots it on
# the wall clock when the run job is on the instruction clock).
# ap.job=clock: what make test asks of the instruction clock: that it
# counts instructions (ap_clock), that the CPU model clears pages as the
# clock says (clear_page_report) and that the benchmark runs on it.
# ap.job=locks: the lock profile (CONFIG_LOCK_STAT kernel, make locks).
# ap.job=arm64: the CPU features, then what the test job runs but
# stress-ng (the race stress test 30 s, 10 s with mTHP), on arm64
# (cross-built kernel and programs, QEMU's virt machine with MTE).
run_job() {
	[ -n "$(arg thp_expect "")" ] &&
		suite thp_boot thp_boot "$(arg thp_expect "")" "$(arg thp_refused "")"
	# The Debian-configured kernel keeps Debian's THP default.
	[ "$1" = debian ] || thp_never
	case $1 in
	test)
		feature_tests 30 20 upstream
		ext_stress "on off"
		;;
	debug)
		feature_tests 60 20
		ext_stress on
		ext_fuzz
		;;
	bulk)
		feature_tests 30 10
		;;
	arm64)
		suite cpu cpu_report
		feature_tests 30 10 upstream
		;;
	limits)
		suite smoke smoke
		suite feature feature_report
		suite oom /ap/ap_oom
		suite numa /ap/ap_numa
		;;
	debian)
		suite smoke smoke
		suite feature feature_report
		suite debian debian_report
		suite anon_prefault /ap/anon_prefault
		;;
	case)
		suite smoke smoke
		suite feature feature_report
		suite anon_prefault /ap/anon_prefault -t "$(arg case "")"
		;;
	run)
		suite smoke smoke
		suite feature feature_report
		suite bench sh /ap/bench.sh "$(arg bench "" | tr : ' ')"
		[ -d /ap/real ] && suite real sh /ap/realwork.sh "$(arg real_rounds 3)"
		;;
	threads)
		suite smoke smoke
		suite bench sh /ap/bench.sh threads
		;;
	clock)
		suite smoke smoke
		suite clock /ap/ap_clock
		suite clear_page clear_page_report
		suite bench env AP_ROUNDS=2 AP_SIZE=8M sh /ap/bench.sh seq
		;;
	locks)
		suite smoke smoke
		suite feature feature_report
		suite locks sh /ap/locks.sh "$(arg lock_size 64)" "$(arg lock_rounds 5)"
		;;
	*)
		echo "unknown ap.job '$1'" >$REPORT
		;;
	esac
}
