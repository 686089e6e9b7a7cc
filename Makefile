# SPDX-License-Identifier: GPL-2.0
# anon-prefault harness. See README.
#   make run    build the patched kernel, boot it in QEMU, run the benchmark
#   make test   apply/checkpatch/copies/build per patch/boot =y and =n
#   make locks  lock profile: the =y kernel with CONFIG_LOCK_STAT, on vs off
#   make tree   git work tree of the base with one commit per patch
#   make export write the work tree back to patches/, series and the copies
# Variables: KSRC, AP_CACHE, BUILD, SMP, MEM, ACCEL (auto|tcg|kvm),
#            CLOCK (icount|wall), JOBS,
#            BOOT_TIMEOUT, TREE, REAL_ROUNDS, AP_LOCKS, LOCK_SIZE, LOCK_ROUNDS.

SHELL := /bin/bash
export KSRC AP_CACHE BUILD SMP MEM ACCEL CLOCK JOBS BOOT_TIMEOUT TREE REAL_ROUNDS
export AP_LOCKS LOCK_SIZE LOCK_ROUNDS

.PHONY: run test locks tree export clean distclean

run:
	@scripts/run.sh

test:
	@scripts/test.sh

locks:
	@scripts/locks.sh

tree:
	@scripts/tree.sh

export:
	@scripts/export.sh

clean:
	rm -rf build

distclean: clean
	rm -rf $${AP_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/anon-prefault}
