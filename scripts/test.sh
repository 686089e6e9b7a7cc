#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make test: apply, checkpatch, copies, build after every patch (=y) and at
# the top (=n), boot both kernels and run the guest tests. Prints one
# PASS/FAIL/SKIP line per check and ends with "N passed, N failed, N skipped".
. "$(dirname "$0")/lib.sh"

PASSED=0 FAILED=0 SKIPPED=0 SUMMARY_DONE=0
pass() { PASSED=$((PASSED + 1)); printf 'PASS: %s\n' "$*"; }
fail() { FAILED=$((FAILED + 1)); printf 'FAIL: %s\n' "$*"; }
skip() { SKIPPED=$((SKIPPED + 1)); printf 'SKIP: %s\n' "$*"; }
# tally [PREFIX [SUFFIX]]: a PASS or a FAIL for each "STATUS<TAB>description"
# line of a checker on standard input (SUFFIX on the FAILs alone).
tally() {
	local st desc
	while IFS=$'\t' read -r st desc; do
		if [ "$st" = PASS ]; then pass "${1:-}$desc"; else fail "${1:-}$desc${2:-}"; fi
	done
}
summary() {
	[ $SUMMARY_DONE = 1 ] && return
	SUMMARY_DONE=1
	echo "Where the time went (seconds since the start):"
	step_table
	echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
}
on_exit() {
	local rc=$?
	stop_background
	if [ $SUMMARY_DONE = 0 ]; then
		[ $rc -ne 0 ] && fail "step ${CURRENT_STEP:-setup} aborted the run (see the error above)"
		summary
		[ $FAILED -eq 0 ] || exit 1
	fi
}
trap on_exit EXIT

mkdir -p "$BUILD" && export AP_STEPS=$BUILD/steps.tsv && : >"$AP_STEPS" ||
	die "cannot create $BUILD"
ensure_packages
lock_build
PRISTINE=$(pristine_tree) || exit 1
step space "checking free space in $BUILD"
need_space "$BUILD" 6144
PATCHES=$(series_patches)
NPATCH=$(printf '%s' "$PATCHES" | grep -c . || true)

# 0. The harness's own checks fail on made-up broken runs.
step harness "checking that the harness's checks fail when they should"
tally < <(checker_lines harness python3 "$TOP/scripts/harness-selftest.py" "$TOP")
# ... and the documents: configs/exceptions holds only known kinds, and
# every figure quoted outside RESULTS is one of RESULTS' figures.
tally < <(exceptions_check)
tally < <(checker_lines figures python3 "$TOP/scripts/check-figures.py" "$TOP")

# 1. The series applies to the pristine tree exactly.
step apply "copying the pristine tree and applying $NPATCH patches"
copy_tree "$PRISTINE" "$SRC"
apply_ok=1 offsets=
tree_ver=$(make -s -C "$PRISTINE" kernelversion)
for p in $PATCHES; do
	[ -f "$TOP/patches/$p" ] || { fail "apply: $p is listed in series but missing"; apply_ok=0; break; }
	quilt_push_one
	case $? in
	0) ;;
	2)
		# Offsets are expected on another point release than the
		# series' base (Debian moved on), never on the base itself.
		if offsets_allowed "$tree_ver"; then
			offsets="$offsets ${p%%-*}"
		else
			fail "apply: $p applies only with offsets to $tree_ver, the release it was exported on"
			apply_ok=0
			break
		fi ;;
	*) fail "apply: $p does not apply"; apply_ok=0; break ;;
	esac
done
if [ $apply_ok = 1 ] && [ -n "$offsets" ]; then
	pass "apply: $NPATCH patches apply with no fuzz; offsets in$offsets: the tree is $tree_ver, the series was exported on $(series_base) (make tree && make export refreshes it)"
elif [ $apply_ok = 1 ]; then
	pass "apply: $NPATCH patches apply to $tree_ver with no fuzz and no offsets"
fi
[ $apply_ok = 1 ] || { summary; exit 1; }

# 2. checkpatch --strict, run from the base tree.
step checkpatch "scripts/checkpatch.pl --strict on every patch"
for p in $PATCHES; do
	out=$(cd "$PRISTINE" && perl scripts/checkpatch.pl --strict --show-types \
		"$TOP/patches/$p" 2>&1)
	total=$(printf '%s\n' "$out" | grep -E '^total:' | tail -1)
	allowed=$(exceptions checkpatch | sed -n "s/^$p \([A-Z_]*\) .*/\1/p")
	bad=$(printf '%s\n' "$out" | grep -E '^(ERROR|WARNING|CHECK):' |
		sed 's/^\([A-Z]*\):\([A-Z_]*\):.*/\2/' | sort -u |
		grep -vxF -f <(printf '%s\n' $allowed @none@))
	if [ -z "$total" ]; then
		fail "checkpatch: $p: checkpatch did not run"
	elif [ -n "$bad" ]; then
		printf '%s\n' "$out" | grep -E -A4 '^(ERROR|WARNING|CHECK):' | head -40
		fail "checkpatch: $p: $total ($(echo $bad))"
	else
		pass "checkpatch: $p: $total${allowed:+ (configs/exceptions: $(echo $allowed))}"
	fi
done

# 3. The kernel-layout copies are the files the series adds, byte for byte.
step copies "comparing kernel-layout copies with the files the series adds"
added=$(cd "$TOP/patches" && [ -n "$PATCHES" ] && awk '
	/^--- \/dev\/null/ { n = 1; next }
	n && /^\+\+\+ b\// { sub(/^\+\+\+ b\//, ""); print; }
	{ n = 0 }' $PATCHES | sort -u)
copies=$(cd "$TOP" && find mm include tools Documentation -type f 2>/dev/null | sort)
drift=""
for f in $added; do
	if ! [ -f "$TOP/$f" ]; then drift="$drift missing:$f"
	elif ! cmp -s "$TOP/$f" "$SRC/$f"; then drift="$drift differs:$f"
	fi
done
for f in $copies; do
	grep -qxF "$f" <<<"$added" || drift="$drift not-added-by-series:$f"
done
if [ -z "$drift" ]; then
	pass "copies: $(printf '%s' "$added" | grep -c .) added files match their copies"
else
	fail "copies:$drift (run make export)"
fi

HAS_FEATURE=0
[ -f "$SRC/mm/anon_prefault.c" ] && HAS_FEATURE=1
tally < <(feature_lines "$NPATCH" "$HAS_FEATURE")
DEBUG=0
[ $HAS_FEATURE = 1 ] && [ "${SKIP_DEBUG:-0}" != 1 ] && DEBUG=1
ARM64=0
[ $HAS_FEATURE = 1 ] && [ "${SKIP_ARM64:-0}" != 1 ] && ARM64=1
# The Debian-configured kernel: Debian's own values (package
# linux-config-6.12) of the options in configs/debian.list, on the test
# base.
DEBIAN=0
[ $HAS_FEATURE = 1 ] && [ "${SKIP_DEBIAN:-0}" != 1 ] && DEBIAN=1
if [ $DEBIAN = 1 ]; then
	step debian "Debian's kernel configuration (linux-config-6.12)"
	debian_config
	debian_fragment >"$BUILD/debian.config" ||
		die "cannot write $BUILD/debian.config"
fi
OBJ_D=$BUILD/obj-debug

# The debug kernel, the =n kernel and the arm64 kernel (=y, cross-built)
# of the top of the series build
# in a copy of the patched tree ($SRC_TOP), in the background at nice 19
# from before the per-patch builds on: they take the host time that those
# builds (their links) and the guests leave idle, and the per-patch
# builds and the guests' vCPUs come first. The debug kernel comes first
# because its boots are the longest: the =n build then uses the time its
# vCPUs leave idle, and the short =n boot comes last. Each build leaves
# its exit status in $BUILD/bg-NAME.rc and its progress in
# $BUILD/bg-builds.log.
SRC_TOP=$BUILD/src-top
OBJ_NP=$BUILD/obj-n-patches
step build-bg "copying the patched tree to $SRC_TOP, the debug and =n builds start in the background (log: $BUILD/bg-builds.log)"
rm -rf "$OBJ_N" "$OBJ_D" "$OBJ_A" "$SRC_TOP" "$BUILD"/bg-*.rc
cp -a "$SRC" "$SRC_TOP" || die "cannot copy $SRC to $SRC_TOP"
(
	renice -n 19 -p $BASHPID >/dev/null
	SRC=$SRC_TOP
	if [ $DEBUG = 1 ]; then
		t=$(date +%s)
		(EXTRA_CONFIGS="$TOP/configs/debug.config" configure_kernel "$OBJ_D" y &&
			build_kernel "$OBJ_D")
		echo $? >"$BUILD/bg-debug.rc"
		bg_step build-debug $((t - AP_T0)) "background: the debug kernel (nice 19)"
		log "debug build finished after $(( $(date +%s) - t ))s"
	fi
	t=$(date +%s)
	(configure_kernel "$OBJ_N" n && build_kernel "$OBJ_N")
	echo $? >"$BUILD/bg-n.rc"
	bg_step build-n $((t - AP_T0)) "background: the =n kernel (nice 19)"
	log "=n build finished after $(( $(date +%s) - t ))s"
	if [ $ARM64 = 1 ]; then
		t=$(date +%s)
		(export KARCH=arm64
		 configure_kernel "$OBJ_A" y && build_kernel "$OBJ_A")
		echo $? >"$BUILD/bg-arm64.rc"
		bg_step build-arm64 $((t - AP_T0)) "background: the arm64 kernel (nice 19)"
		log "arm64 build finished after $(( $(date +%s) - t ))s"
	fi
	# Kept from run to run: only what the series changed is rebuilt.
	if [ $DEBIAN = 1 ]; then
		t=$(date +%s)
		(EXTRA_CONFIGS="$TOP/configs/debian.config $BUILD/debian.config" \
		 configure_kernel "$OBJ_DEB" y && build_kernel "$OBJ_DEB")
		echo $? >"$BUILD/bg-debian.rc"
		bg_step build-debian $((t - AP_T0)) "background: the Debian-configured kernel (nice 19)"
		log "Debian-configured build finished after $(( $(date +%s) - t ))s"
	fi
) >"$BUILD/bg-builds.log" 2>&1 &
BG_BUILDS=$!
AP_BGPIDS="$AP_BGPIDS $BG_BUILDS"

# 4. Build after every patch with =y (incremental) and compile what it
# changes with =n; the =n kernel of the top is built in the background.
step build "building after each of $NPATCH patches (CONFIG_ANON_PREFAULT=y; its objects =n)"
(cd "$SRC" && quilt pop -a -q >/dev/null 2>&1)
i=0
if [ "$NPATCH" = 0 ]; then
	configure_kernel "$OBJ_Y" y
	if build_kernel "$OBJ_Y"; then pass "build: base tree (empty series), =y"
	else fail "build: base tree does not build (see $OBJ_Y/build.log)"; fi
fi
# A patch that changes nothing the kernel build reads (documentation,
# selftests) leaves the kernel of the patch before it: it is not rebuilt,
# and the series' kselftests are built at that patch instead (against the
# uapi headers of that kernel, installed once).
# Each object tree is configured at its first build and again after a
# patch that changes a Kconfig file; in between the configuration cannot
# change (kbuild's syncconfig keeps it in step, as in any incremental
# build).
kernel_ok=1 kernel_at=0 headers_at=0 y_stale=1 np_stale=1
for p in $PATCHES; do
	i=$((i + 1))
	(cd "$SRC" && quilt push -q --fuzz=0 >/dev/null) || die "re-applying $p"
	if patch_changes_kconfig "$TOP/patches/$p"; then y_stale=1 np_stale=1; fi
	if [ $kernel_at -gt 0 ] && patch_outside_kernel_build "$TOP/patches/$p"; then
		step "build-$i" "$p: no kernel build input, the kselftests"
		ks=$BUILD/kselftests-at-$i
		rm -rf "$ks" && mkdir -p "$ks"
		if [ $kernel_ok = 0 ]; then
			fail "build: $i/$NPATCH $p (=y): the kernel of patch $kernel_at did not build"
		elif [ $headers_at != $kernel_at ] &&
		     ! make -s -C "$SRC" O="$OBJ_Y" headers >"$OBJ_Y/headers.log" 2>&1; then
			fail "build: $i/$NPATCH $p (=y): make headers failed (see $OBJ_Y/headers.log)"
		elif headers_at=$kernel_at && build_kselftests "$OBJ_Y" "$ks"; then
			pass "build: $i/$NPATCH $p (=y): kernel unchanged since patch $kernel_at (no kernel build input touched), kselftests build"
		else
			fail "build: $i/$NPATCH $p (=y): kselftest $BAD_KSELFTEST does not build (see $ks/$BAD_KSELFTEST.log)"
		fi
		continue
	fi
	step "build-$i" "$p (=y, and its objects =n)"
	if [ $y_stale = 1 ]; then configure_kernel "$OBJ_Y" y && y_stale=0; fi
	kernel_at=$i
	if build_kernel "$OBJ_Y"; then
		kernel_ok=1
		pass "build: $i/$NPATCH $p (=y)"
	else
		kernel_ok=0
		fail "build: $i/$NPATCH $p (=y) does not build (see $OBJ_Y/build.log)"
		continue
	fi
	# The same patch with CONFIG_ANON_PREFAULT=n: the objects it can
	# change (patch_objects_n), compiled in a tree of their own; the =n
	# kernel itself is linked at the top of the series (background).
	objs=$(patch_objects_n "$TOP/patches/$p")
	[ -n "$objs" ] || continue
	if [ $np_stale = 1 ]; then configure_kernel "$OBJ_NP" n && np_stale=0; fi
	# shellcheck disable=SC2086
	if make_targets "$OBJ_NP" $objs; then
		pass "build: $i/$NPATCH $p (=n): ${objs//$'\n'/ }"
	else
		fail "build: $i/$NPATCH $p (=n): ${objs//$'\n'/ } (see $OBJ_NP/build.log)"
	fi
done
cp "$OBJ_Y/build.log" "$BUILD/build-y.log" 2>/dev/null
log "=y builds done at +$(( $(date +%s) - AP_T0 ))s"

# 4b. The build matrix (scripts/matrix.sh): the top of the series in the
# configurations and on the architectures of configs/matrix/, the feature
# on and off, then sparse and W=1 against the base tree. Objects only, in
# the background at nice 19, one job: it takes the host time the guests
# leave idle; its lines are counted at the end.
MATRIX=0
[ $HAS_FEATURE = 1 ] && [ "${SKIP_MATRIX:-0}" != 1 ] && MATRIX=1
if [ $MATRIX = 1 ]; then
	step matrix-bg "the build matrix starts in the background (log: $BUILD/matrix.log)"
	rm -f "$BUILD/matrix.tsv" "$BUILD/matrix.rc"
	(
		renice -n 19 -p $BASHPID >/dev/null
		t=$(date +%s)
		MATRIX_JOBS=${MATRIX_JOBS:-1} "$TOP/scripts/matrix.sh" "$SRC_TOP" \
			"$PRISTINE" "$BUILD/matrix" >"$BUILD/matrix.tsv.tmp" 2>"$BUILD/matrix.log"
		echo $? >"$BUILD/matrix.rc"
		mv "$BUILD/matrix.tsv.tmp" "$BUILD/matrix.tsv"
		bg_step matrix $((t - AP_T0)) "background: the build matrix (nice 19)"
	) &
	MATRIX_PID=$!
	AP_BGPIDS="$AP_BGPIDS $MATRIX_PID"
fi


# wait_build NAME: waits for the background build NAME (n|debug) and
# returns its exit status.
wait_build() {
	local rc
	step "build-$1" "waiting for the background build of the $1 kernel"
	while ! [ -f "$BUILD/bg-$1.rc" ]; do
		kill -0 $BG_BUILDS 2>/dev/null || break
		sleep 5
	done
	rc=$(cat "$BUILD/bg-$1.rc" 2>/dev/null)
	log "$1 kernel: build status ${rc:-none} at +$(( $(date +%s) - AP_T0 ))s"
	[ "$rc" = 0 ] && return 0
	tail -n 30 "$BUILD/bg-builds.log" >&2
	return 1
}

# 5./6. Boot the kernels; the guest runs the tests.
step guest "building the guest programs and the initramfs"
rm -rf "$BUILD/guest"
build_guest_programs "$OBJ_Y" "$BUILD/guest"
build_upstream_tests "$OBJ_Y" "$BUILD/guest"
make_initramfs "$BUILD/guest" "$BUILD/initramfs.cpio.gz"
# The boots that run the external stress carry stress-ng and trinity too.
# shellcheck disable=SC2086
make_initramfs "$BUILD/guest" "$BUILD/initramfs-ext.cpio.gz" $EXTERNAL_PROGRAMS

# SKIPs allowed on a =y kernel, configs/exceptions' "- skip: SUITE WORD why":
# prints the reason when $1 ("SUITE: description") names WORD.
skip_allowed() {
	local suite word why
	while read -r suite word why; do
		case $1 in "$suite: "*"$word"*) echo "$why"; return 0 ;; esac
	done < <(exceptions skip)
	return 1
}

# count_results LABEL LOG [SUITES]: counts every TAP result of the report
# as one check, "LABEL: ..." each; SUITES (comma separated) must all be
# in the report. On a =y kernel a SKIP is a FAIL unless configs/exceptions
# lists it: a test that cannot run there proves nothing.
count_results() {
	local label=$1 log=$2 expect=${3:-} st desc why
	while IFS=$'\t' read -r st desc; do
		case $st in
		PASS) pass "$label: $desc" ;;
		SKIP)
			if [ "$label" = guest-n ]; then
				skip "$label: $desc"
			elif why=$(skip_allowed "$desc"); then
				skip "$label: $desc (configs/exceptions: $why)"
			else
				fail "$label: $desc (a SKIP on the =y kernel; configs/exceptions must list it to allow it)"
			fi ;;
		*) fail "$label: $desc" ;;
		esac
	done < <(checker_lines "$label" python3 "$TOP/scripts/parse-results.py" \
		--expect "$expect" "$log")
}

# boot_and_check LABEL OBJ JOB [VAR=value...]: boot, check the console,
# count the results. The variables (SMP, MEM, GUEST_APPEND) apply to this
# boot only.
boot_and_check() {
	local label=$1 obj=$2 job=$3 out=$BUILD/boot-$1
	shift 3
	step "$label" "booting $(basename "$obj") with job '$job' $*"
	local img
	img=$( ([ $# -eq 0 ] || export "$@"; kernel_image "$obj") )
	if ! [ -f "$img" ]; then
		fail "$label: no $(basename "$img") (the build failed)"
		return 1
	fi
	if ([ $# -eq 0 ] || export "$@"; boot_guest "$img" \
		"${INITRD:-$BUILD/initramfs.cpio.gz}" "$out" "$job"); then
		pass "$label: guest booted and reported DONE"
	else
		fail "$label: guest failed (see $out/console.log)"
	fi
	suite_times "$out/results.log"
	local bad
	bad=$( ([ $# -eq 0 ] || export "$@"; console_problems "$out/console.log") )
	if [ -n "$bad" ]; then
		printf '%s\n' "$bad"
		fail "$label: kernel reported problems on the console"
	else
		pass "$label: console clean (no BUG/WARNING/Oops/KASAN/lockdep)"
	fi
	[ -f "$out/results.log" ]
}

# The suites a job must report (scripts/guest/jobs.sh), $1 = job. The
# mTHP ones once the series has the mTHP kselftest.
suites_of() {
	local s="smoke,feature" m=""
	[ $HAS_FEATURE = 1 ] || { echo "$s"; return; }
	[ -x "$BUILD/guest/anon_prefault_mthp" ] &&
		m=",anon_prefault_mthp,anon_prefault_stress_mthp"
	case $1 in
	test) echo "$s,anon_prefault,upstream,anon_prefault_stress,stress-ng$m" ;;
	test-n) echo "$s,anon_prefault,upstream,anon_prefault_stress$m" ;;
	debug) echo "$s,anon_prefault,anon_prefault_stress,stress-ng,trinity$m" ;;
	bulk) echo "$s,anon_prefault,anon_prefault_stress$m" ;;
	arm64) echo "$s,cpu,anon_prefault,upstream,anon_prefault_stress$m" ;;
	limits) echo "$s,oom,numa" ;;
	case) echo "$s,anon_prefault" ;;
	debian) echo "$s,debian,anon_prefault" ;;
	clock) echo "smoke,clock,clear_page,bench" ;;
	esac
}

# =y: the kselftests, the race stress test at -smp 4, the upstream mm
# selftests on and off.
if INITRD=$BUILD/initramfs-ext.cpio.gz boot_and_check guest-y "$OBJ_Y" test \
	SMP="${TEST_SMP:-4}" GUEST_APPEND="ap.stress=${STRESS_SECS:-30} ap.sng=${SNG_SECS:-20}"; then
	count_results guest-y "$BUILD/boot-guest-y/results.log" \
		"$(suites_of test)"
	if [ $HAS_FEATURE = 1 ] &&
	   ! grep -q 'feature present' "$BUILD/boot-guest-y/results.log"; then
		fail "guest-y: vm.anon_prefault missing from the =y kernel"
	fi
fi

# OOM and NUMA placement: the =y kernel in a small guest with two nodes,
# where an OOM victim's own faulting page may warn (OOM_VICTIM_WARNING).
if [ $HAS_FEATURE = 1 ] &&
   boot_and_check guest-limits "$OBJ_Y" limits SMP=2 MEM=256M GUEST_APPEND="numa=fake=2" \
	CONSOLE_ALLOW="$OOM_VICTIM_WARNING"; then
	count_results guest-limits "$BUILD/boot-guest-limits/results.log" \
		"$(suites_of limits)"
fi

# A movable zone: the =y kernel with movablecore=, where the functional
# test's longterm_pin case runs (a FOLL_LONGTERM pin gets no page from
# ZONE_MOVABLE, mapped ahead or not); the other boots have no movable zone
# and report it as SKIP (configs/exceptions). The same boot sets the mTHP
# sizes with thp_anon=, "auto" among them once the series offers it, and
# checks them (thp_boot) before the job sets every size to never.
if [ $HAS_FEATURE = 1 ] && [ -x "$BUILD/guest/anon_prefault" ]; then
	thp="thp_anon=64K:always ap.thp_expect=64kB:always,2048kB:never"
	if grep -qs 'strcmp(policy, "auto")' "$SRC/mm/huge_memory.c"; then
		thp="thp_anon=32K:auto;64K:always thp_anon=2M:auto"
		thp="$thp ap.thp_expect=32kB:auto,64kB:always,2048kB:never ap.thp_refused=2M:auto"
	fi
	# Nothing on the command line sets vm.anon_prefault here: the build's
	# default (configs/test.config: off) must leave it at 0.
	if boot_and_check guest-pin "$OBJ_Y" case SMP=2 MEM=512M \
		AP_BOOT_PREFAULT="ap.prefault_boot=0" \
		GUEST_APPEND="movablecore=50% ap.case=longterm_pin $thp"; then
		count_results guest-pin "$BUILD/boot-guest-pin/results.log" \
			"$(suites_of case),thp_boot"
	fi
fi

# make run's instruction clocks (QEMU -icount, always TCG, one virtual
# CPU as make run boots it), with ERMS (icount) and without (icount-stosq):
# the =y kernel boots on each, the guest clock counts guest instructions
# (ap_clock), the kernel clears pages as the clock's CPU model says
# (clear_page), and a short benchmark runs in every mode and reports that
# clock.
for c in icount icount-stosq; do
	[ $HAS_FEATURE = 1 ] || break
	b=guest-clock
	[ $c = icount ] || b=guest-clock-stosq
	boot_and_check $b "$OBJ_Y" clock SMP=1 MEM=512M ACCEL=tcg BOOT_CLOCK=$c || continue
	clog=$BUILD/boot-$b/results.log
	count_results $b "$clog" "$(suites_of clock)"
	# Whole-file reads only: under pipefail, a reader that stops early
	# (grep -q, grep -m1) can kill the writer with SIGPIPE and fail the
	# pipeline, depending on timing.
	rows=$(tr -d '\r' <"$clog" | grep -c '^data,seq,' || true)
	clock=$(tr -d '\r' <"$clog" | awk '/^meta,clock,/ && !n++')
	if [ "$clock" = meta,clock,$c ] && [ "$rows" = 14 ]; then
		pass "$b: the benchmark reports the $c clock (14 of 14 runs)"
	else
		fail "$b: want meta,clock,$c and 14 sequential runs, got $rows runs and '${clock:-no clock line}'"
	fi
done

# init_on_alloc_in_effect LABEL on|off: the boot's console says so.
init_on_alloc_in_effect() {
	if grep -q "mem auto-init:.*heap alloc:$2" \
		"$BUILD/boot-$1/console.log" 2>/dev/null; then
		pass "$1: booted with init_on_alloc $2"
	else
		fail "$1: init_on_alloc $2 is not in effect (no 'heap alloc:$2' in the console)"
	fi
}

# The debug kernel: KASAN, lockdep, DEBUG_VM, DEBUG_PAGEALLOC.
if [ $DEBUG = 1 ]; then
	if wait_build debug; then
		pass "build: top of series, debug kernel (KASAN, lockdep, DEBUG_VM)"
		# configs/debug.config builds the feature on by default:
		# nothing on the command line sets vm.anon_prefault.
		if INITRD=$BUILD/initramfs-ext.cpio.gz boot_and_check guest-debug \
			"$OBJ_D" debug SMP=2 AP_BOOT_PREFAULT="ap.prefault_boot=1" \
			GUEST_APPEND="init_on_alloc=1 \
ap.stress=${DEBUG_STRESS_SECS:-60} ap.sng=${SNG_SECS:-20} \
ap.trinity=${TRINITY_SEED:-1} ap.trinity_n=${TRINITY_CALLS:-20000}"; then
			count_results guest-debug "$BUILD/boot-guest-debug/results.log" \
				"$(suites_of debug)"
		fi
		# The page allocator zeroes the faulting page of a window there,
		# the =y boot (init_on_alloc off) has do_anonymous_window() zero it.
		init_on_alloc_in_effect guest-debug on
		# Without init_on_alloc a window's pages come from the bulk
		# allocation and the window zeroes them: the same kernel again.
		if INITRD=$BUILD/initramfs-ext.cpio.gz boot_and_check guest-debug-bulk \
			"$OBJ_D" bulk SMP=2 GUEST_APPEND="init_on_alloc=0 \
ap.stress=${BULK_STRESS_SECS:-30}"; then
			count_results guest-debug-bulk "$BUILD/boot-guest-debug-bulk/results.log" \
				"$(suites_of bulk)"
		fi
		init_on_alloc_in_effect guest-debug-bulk off
	else
		fail "build: debug kernel does not build (see $OBJ_D/build.log)"
	fi
fi

# =n: the kernel boots, the sysctl is absent, the feature's tests SKIP.
if ! wait_build n; then
	fail "build: top of series (=n) does not build (see $OBJ_N/build.log)"
elif pass "build: top of series (=n)" &&
	boot_and_check guest-n "$OBJ_N" test AP_BOOT_PREFAULT=; then
	res=$(checker_lines checker python3 "$TOP/scripts/parse-results.py" \
		--expect "$(suites_of test-n)" "$BUILD/boot-guest-n/results.log")
	while IFS=$'\t' read -r st desc; do
		case $desc in
		smoke:*) [ "$st" = PASS ] && pass "guest-n: $desc" || fail "guest-n: $desc" ;;
		*": suite missing"*|*": did not finish"*|*": printed no TAP plan"*|*": planned "*|checker:*)
			fail "guest-n: $desc" ;;
		esac
	done <<<"$res"
	if [ $HAS_FEATURE = 1 ]; then
		if grep -q 'feature present' "$BUILD/boot-guest-n/results.log"; then
			fail "guest-n: vm.anon_prefault exists in the =n kernel"
		else
			pass "guest-n: vm.anon_prefault absent"
		fi
		for t in anon_prefault anon_prefault_mthp anon_prefault_stress; do
			[ -x "$BUILD/guest/$t" ] || continue
			nfail=$(printf '%s\n' "$res" | grep -c "^FAIL	$t:" || true)
			nrun=$(printf '%s\n' "$res" | grep -c "^PASS	$t:" || true)
			nskip=$(printf '%s\n' "$res" | grep -c "^SKIP	$t:" || true)
			if [ "$nfail" = 0 ] && [ "$nrun" = 0 ] && [ "$nskip" -gt 0 ]; then
				pass "guest-n: all $nskip $t cases report SKIP"
			else
				fail "guest-n: $t: $nskip SKIP, $nrun PASS, $nfail FAIL (want all SKIP)"
			fi
		done
	fi
fi

# The upstream mm selftests: the same results with the sysctl on and off,
# and nothing that passes on the stock (=n) kernel fails on =y.
if [ $HAS_FEATURE = 1 ] && [ -f "$BUILD/boot-guest-y/results.log" ]; then
	stock=()
	[ -f "$BUILD/boot-guest-n/results.log" ] &&
		stock=(--stock "$BUILD/boot-guest-n/results.log")
	tally "guest-y: " < <(checker_lines upstream python3 "$TOP/scripts/compare-upstream.py" \
		--exceptions <(exceptions upstream) "${stock[@]}" "$BUILD/boot-guest-y/results.log")
	for t in $UPSTREAM_FAILED_BUILD; do
		fail "guest-y: upstream: $t: did not build (see $BUILD/guest/upstream/build.log)"
	done
fi

# mte_passed LABEL: the functional test's mte case passed in that boot
# (configs/exceptions lets it SKIP, which it does where there is no MTE).
mte_passed() {
	if tr -d '\r' <"$BUILD/boot-$1/results.log" |
	   grep -E '^ok [0-9]+ mte$' >/dev/null; then
		pass "$1: the mte case ran (the guest has MTE) and passed"
	else
		fail "$1: the mte case did not pass (no MTE in the guest, or it failed)"
	fi
}

# arm64: the =y kernel of the top, cross-built in the background, boots on
# QEMU's virt machine with MTE and runs the kselftests (the functional
# test's mte case must pass there, not SKIP), the upstream mm selftests on
# and off and the stress test.
if [ $ARM64 = 1 ]; then
	if wait_build arm64; then
		pass "build: top of series, arm64 (CONFIG_ANON_PREFAULT=y, cross-built)"
		step guest-arm64-programs "the arm64 guest programs (cross-built) and initramfs"
		arm64_busybox
		rm -rf "$BUILD/guest-arm64"
		KARCH=arm64 SRC=$SRC_TOP build_guest_programs "$OBJ_A" "$BUILD/guest-arm64"
		KARCH=arm64 SRC=$SRC_TOP build_upstream_tests "$OBJ_A" "$BUILD/guest-arm64"
		KARCH=arm64 make_initramfs "$BUILD/guest-arm64" "$BUILD/initramfs-arm64.cpio.gz"
		if INITRD=$BUILD/initramfs-arm64.cpio.gz boot_and_check guest-arm64 \
			"$OBJ_A" arm64 KARCH=arm64 SMP=2 MEM=2G \
			GUEST_APPEND="ap.stress=${ARM64_STRESS_SECS:-30}"; then
			alog=$BUILD/boot-guest-arm64/results.log
			count_results guest-arm64 "$alog" "$(suites_of arm64)"
			mte_passed guest-arm64
			# The upstream mm selftests on and off (no stock arm64
			# kernel to compare with).
			tally "guest-arm64: " < <(checker_lines upstream python3 \
				"$TOP/scripts/compare-upstream.py" --exceptions <(exceptions upstream) "$alog")
		fi
		for t in $UPSTREAM_FAILED_BUILD; do
			fail "guest-arm64: upstream: $t: did not build (see $BUILD/guest-arm64/upstream/build.log)"
		done
		# With init_on_alloc the page allocator zeroes a window's pages
		# too (not their tags); in both boots set_ptes() clears the
		# tags of a page mapped ahead, as it does for an mTHP folio.
		if INITRD=$BUILD/initramfs-arm64.cpio.gz boot_and_check guest-arm64-mte \
			"$OBJ_A" case KARCH=arm64 SMP=2 MEM=1G \
			GUEST_APPEND="init_on_alloc=1 ap.case=mte"; then
			count_results guest-arm64-mte "$BUILD/boot-guest-arm64-mte/results.log" \
				"$(suites_of case)"
			mte_passed guest-arm64-mte
			init_on_alloc_in_effect guest-arm64-mte on
		fi
	else
		fail "build: arm64 kernel does not build (see $OBJ_A/build.log)"
	fi
fi

# The Debian-configured kernel (Debian's values of configs/debian.list on
# the test base), booted with Debian's runtime defaults: THP "always", the
# multi-gen LRU and init_on_alloc on, all from its configuration. The
# functional test, its accounting, memcg and reclaim cases included.
if [ $DEBIAN = 1 ]; then
	wait_build debian
	drc=$?
	tally < <(checker_lines debian debian_check "$OBJ_DEB/.config")
	if [ $drc = 0 ]; then
		pass "build: top of series, Debian-configured kernel"
		if boot_and_check guest-debian "$OBJ_DEB" debian SMP=2; then
			count_results guest-debian "$BUILD/boot-guest-debian/results.log" \
				"$(suites_of debian)"
			init_on_alloc_in_effect guest-debian on
		fi
	else
		fail "build: the Debian-configured kernel does not build (see $OBJ_DEB/build.log, $OBJ_DEB/config.log)"
	fi
fi

wait $BG_BUILDS 2>/dev/null

# The build matrix's lines.
if [ $MATRIX = 1 ]; then
	step matrix "waiting for the build matrix"
	wait "$MATRIX_PID" 2>/dev/null
	[ "$(cat "$BUILD/matrix.rc" 2>/dev/null)" = 0 ] ||
		tail -n 20 "$BUILD/matrix.log" >&2
	tally "" " (see $BUILD/matrix.log)" < <(matrix_lines "$BUILD/matrix.tsv" "$BUILD/matrix.rc")
fi
AP_BGPIDS=""

log "make test took $(( $(date +%s) - AP_T0 ))s"
summary
[ $FAILED -eq 0 ]
