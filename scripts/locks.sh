#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make locks: the lock profile. Builds the patched kernel with lock
# statistics (configs/lockstat.config, CONFIG_ANON_PREFAULT=y), boots it,
# runs a sequential writer with one thread per CPU in the modes off, on and
# on-max, and prints what the PTE, lruvec, zone and per-cpu page locks
# cost per page touched (scripts/lock-report.py). make run runs it last.
. "$(dirname "$0")/lib.sh"

LOCK_SIZE=${LOCK_SIZE:-64}
LOCK_ROUNDS=${LOCK_ROUNDS:-5}
need_count LOCK_SIZE "a number of MiB"
need_count LOCK_ROUNDS "a number of rounds"
check_smp
ensure_packages
lock_build
PRISTINE=$(pristine_tree) || exit 1
step space "checking free space in $BUILD"
need_space "$BUILD" 1536
prepare_src "$PRISTINE"
[ -f "$SRC/mm/anon_prefault.c" ] ||
	die "the series has no anon_prefault yet: nothing to profile"

step configure "tinyconfig + configs/test.config + configs/lockstat.config, CONFIG_ANON_PREFAULT=y"
EXTRA_CONFIGS="$TOP/configs/lockstat.config" configure_kernel "$OBJ_L" y
step build "building the lock-statistics bzImage (log: $OBJ_L/build.log)"
build_kernel "$OBJ_L" || die "kernel build failed (see $OBJ_L/build.log)"
step guest "building the guest programs and the initramfs"
rm -rf "$BUILD/guest-locks"
build_guest_programs "$OBJ_L" "$BUILD/guest-locks"
make_initramfs "$BUILD/guest-locks" "$BUILD/initramfs-locks.cpio.gz"
step boot "booting the guest (job: locks)"
out=$BUILD/boot-locks
GUEST_APPEND="${GUEST_APPEND:-} ap.lock_size=$LOCK_SIZE ap.lock_rounds=$LOCK_ROUNDS" \
boot_clean "$OBJ_L/arch/x86/boot/bzImage" "$BUILD/initramfs-locks.cpio.gz" "$out" locks
step report "lock profile"
python3 "$TOP/scripts/lock-report.py" "$out/results.log" | tee "$BUILD/locks.txt" ||
	die "the lock profile is incomplete (report: $out/results.log)"
log "lock profile: $BUILD/locks.txt, console: $out/console.log"
