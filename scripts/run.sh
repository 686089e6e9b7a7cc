#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run: build the patched kernel (=y), boot it in QEMU, run the
# benchmark job in the guest and print its report. The measured boot runs
# on CLOCK (run_clock: the instruction clock under TCG, with one virtual
# CPU); the thread table needs SMP virtual CPUs that run in parallel and
# gets a boot of its own on the wall clock when CLOCK is icount.
. "$(dirname "$0")/lib.sh"

REAL_ROUNDS=${REAL_ROUNDS:-3}
need_count REAL_ROUNDS "a number of rounds"
check_smp
CLOCK=$(run_clock) || exit 1
ensure_packages
lock_build
PRISTINE=$(pristine_tree) || exit 1
step space "checking free space in $BUILD"
need_space "$BUILD" 2560

prepare_src "$PRISTINE"

step configure "tinyconfig + configs/test.config, CONFIG_ANON_PREFAULT=y"
configure_kernel "$OBJ_Y" y
step build "building bzImage (log: $OBJ_Y/build.log)"
build_kernel "$OBJ_Y" || die "kernel build failed (see $OBJ_Y/build.log)"
step guest "building the guest programs and the initramfs"
rm -rf "$BUILD/guest"
build_guest_programs "$OBJ_Y" "$BUILD/guest"
REAL=0
if [ -f "$SRC/mm/anon_prefault.c" ] && [ "${AP_REAL:-1}" != 0 ]; then
	step real "preprocessing the compiler workload ($(echo $REAL_CC_FILES))"
	python3 "$TOP/scripts/real-prep.py" "$OBJ_Y" "$BUILD/guest/real/cc" $REAL_CC_FILES ||
		die "cannot prepare the compiler workload"
	REAL=1
fi
# shellcheck disable=SC2086
make_initramfs "$BUILD/guest" "$BUILD/initramfs.cpio.gz" \
	$([ $REAL = 1 ] && echo $REAL_PROGRAMS)
# The sections of bench.sh in the measured boot; threads joins them on
# the wall clock.
sections=seq:sparse:churn:frag:pressure:readwrite
[ "$CLOCK" = wall ] && sections=$sections:threads
# On the instruction clock the measured boot has one virtual CPU: with
# several, they take turns on one host thread, and a task's CPU time
# (rusage) would also count the other CPUs' turns.
msmp=$SMP
[ "$CLOCK" = icount ] && msmp=1
step boot "booting the guest (job: run, $CLOCK clock, $msmp CPU(s))"
out=$BUILD/boot-run
SMP=$msmp BOOT_CLOCK=$CLOCK GUEST_APPEND="${GUEST_APPEND:-} ap.real_rounds=$REAL_ROUNDS ap.bench=$sections" \
boot_clean "$OBJ_Y/arch/x86/boot/bzImage" "$BUILD/initramfs.cpio.gz" "$out" run
logs=$out/results.log
# The same sequential, sparse and real-program measurements on the
# instruction clock without ERMS, where a page clear costs 512 instead of
# 4096 instructions (qemu_accel): the two clocks bracket hardware.
stosq=
if [ "$CLOCK" = icount ] && [ -f "$SRC/mm/anon_prefault.c" ]; then
	step stosq "booting the guest (job: run, instruction clock without ERMS, 1 CPU)"
	stosq=$BUILD/boot-run-stosq
	SMP=1 BOOT_CLOCK=icount-stosq GUEST_APPEND="${GUEST_APPEND:-} ap.real_rounds=$REAL_ROUNDS ap.bench=seq:sparse:readwrite" \
	boot_clean "$OBJ_Y/arch/x86/boot/bzImage" "$BUILD/initramfs.cpio.gz" "$stosq" run
fi
if [ "$CLOCK" = icount ] && [ -f "$SRC/mm/anon_prefault.c" ]; then
	step threads "booting the guest (job: threads, wall clock)"
	BOOT_CLOCK=wall boot_clean "$OBJ_Y/arch/x86/boot/bzImage" \
		"$BUILD/initramfs.cpio.gz" "$BUILD/boot-threads" threads
	logs="$logs $BUILD/boot-threads/results.log"
fi

step report "guest report"
for s in feature; do
	python3 "$TOP/scripts/parse-results.py" --dump "$s" "$out/results.log" |
		sed -n 's/^# \{0,1\}//p'
done | tee "$BUILD/report.txt"
if ! [ -f "$SRC/mm/anon_prefault.c" ]; then
	log "the series has no anon_prefault yet: no benchmark"
elif ! grep -q '^data,' "$out/results.log"; then
	python3 "$TOP/scripts/parse-results.py" --dump bench "$out/results.log" | tail -20
	die "the guest benchmark produced no data (report: $out/results.log)"
else
	# shellcheck disable=SC2086
	python3 "$TOP/scripts/bench-report.py" $logs "$BUILD" |
		tee -a "$BUILD/report.txt" ||
		die "the benchmark report is incomplete or bench-report.py failed (see above)"
	if [ -n "$stosq" ]; then
		printf '\n== The same on the instruction clock without ERMS (CSV in %s) ==\n' \
			"$BUILD/stosq" | tee -a "$BUILD/report.txt"
		mkdir -p "$BUILD/stosq"
		python3 "$TOP/scripts/bench-report.py" "$stosq/results.log" "$BUILD/stosq" |
			tee -a "$BUILD/report.txt" ||
			die "the report of the boot without ERMS is incomplete or bench-report.py failed (see above)"
	fi
fi
# The lock profile (make locks) on its own kernel; AP_LOCKS=0 leaves it out.
if [ -f "$SRC/mm/anon_prefault.c" ] && [ "${AP_LOCKS:-1}" != 0 ]; then
	"$TOP/scripts/locks.sh" || die "the lock profile failed (see above)"
	cat "$BUILD/locks.txt" >>"$BUILD/report.txt"
fi
log "report: $BUILD/report.txt, console: $out/console.log"
