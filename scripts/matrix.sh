#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The build matrix of make test: the top of the series compiled where the
# kernel test robot would compile it. Usage:
#   matrix.sh SRC PRISTINE OUTDIR [CELL...]
# SRC is the patched tree, PRISTINE the base tree (for the sparse and W=1
# comparison), OUTDIR gets one object tree per cell and its logs. Prints
# one line per check, "PASS<TAB>matrix: ..." or "FAIL<TAB>matrix: ...".
#
# Cells (configs/matrix/NAME.config, first line "# matrix: ARCH BASE
# LABEL"): BASE "test" is the test kernel's configuration (tinyconfig,
# configs/test.config, configs/ARCH.config) with the fragment on top; any
# other BASE is a defconfig target of ARCH. Each cell is compiled with
# CONFIG_ANON_PREFAULT=y, then =n, with -Werror: the objects the series
# changes, and the objects that depend most on its headers, that the
# configuration builds. No link, no boot.
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 3 ] || die "usage: matrix.sh SRC PRISTINE OUTDIR [CELL...]"
MSRC=$(cd "$1" && pwd) && MPRISTINE=$(cd "$2" && pwd) &&
	mkdir -p "$3" && MOUT=$(cd "$3" && pwd) || die "matrix: bad directories: $*"
shift 3
CELLS=${*:-$(cd "$TOP/configs/matrix" && ls -1 ./*.config | sed 's|^\./||; s|\.config$||')}
MJOBS=${MATRIX_JOBS:-1}

# object:CONFIG gating it (CONFIG_MMU for those every MMU kernel builds):
# the series' C files, then objects that call what the series changes in
# its headers (thp_vma_allowable_orders(), the vm events, the task
# fields). A C file the series touches and this table lacks fails the
# matrix, so that a new patch cannot slip past it.
MATRIX_OBJECTS="mm/memory.o:MMU mm/anon_prefault.o:ANON_PREFAULT
mm/huge_memory.o:TRANSPARENT_HUGEPAGE mm/memcontrol.o:MEMCG mm/rmap.o:MMU
mm/vmstat.o:MMU kernel/fork.o:MMU fs/exec.o:MMU fs/proc/task_mmu.o:PROC_FS
mm/khugepaged.o:TRANSPARENT_HUGEPAGE mm/madvise.o:ADVISE_SYSCALLS
mm/mmap.o:MMU mm/swap_state.o:SWAP mm/mempolicy.o:NUMA kernel/sys.o:MMU
mm/swap.o:MMU"

# cell_make_args ARCH: the make variables of ARCH's (cross) build.
cell_make_args() {
	case $1 in
	x86) ;;
	arm64) echo "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" ;;
	sparc64) echo "ARCH=sparc CROSS_COMPILE=sparc64-linux-gnu-" ;;
	ppc64le) echo "ARCH=powerpc CROSS_COMPILE=powerpc64le-linux-gnu-" ;;
	riscv64) echo "ARCH=riscv CROSS_COMPILE=riscv64-linux-gnu-" ;;
	s390x) echo "ARCH=s390 CROSS_COMPILE=s390x-linux-gnu-" ;;
	mips64) echo "ARCH=mips CROSS_COMPILE=mips64el-linux-gnuabi64-" ;;
	*) return 1 ;;
	esac
}

# cell_cc ARCH: its C compiler.
cell_cc() {
	local p
	p=$(cell_make_args "$1" | sed -n 's/.*CROSS_COMPILE=\([^ ]*\).*/\1/p')
	echo "${p}gcc"
}

say() { printf '%s\tmatrix: %s\n' "$1" "$2"; }

# The options a fragment sets (=y/=m/=n lines and "is not set" lines),
# as "CONFIG_X=y" or "CONFIG_X=n".
fragment_options() {
	sed -n -e 's/^\(CONFIG_[A-Za-z0-9_]*\)=\([ym]\)$/\1=\2/p' \
		-e 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1=n/p' "$1"
}

# configure_cell OBJ ARCH BASE FRAGMENT (make variables in MARGS)
configure_cell() {
	local obj=$1 arch=$2 base=$3 frag=$4 f
	rm -rf "$obj" && mkdir -p "$obj" || return 1
	if [ "$base" = test ]; then
		# shellcheck disable=SC2086
		make -s -C "$MSRC" O="$obj" $MARGS tinyconfig >"$obj/config.log" 2>&1 || return 1
		for f in "$TOP/configs/test.config" "$TOP/configs/$arch.config" "$frag"; do
			"$MSRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$f" \
				>>"$obj/config.log" 2>&1 || return 1
		done
	else
		# shellcheck disable=SC2086
		make -s -C "$MSRC" O="$obj" $MARGS "$base" >"$obj/config.log" 2>&1 || return 1
		"$MSRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" \
			>>"$obj/config.log" 2>&1 || return 1
	fi
	"$MSRC/scripts/config" --file "$obj/.config" --enable ANON_PREFAULT
	# shellcheck disable=SC2086
	make -s -C "$MSRC" O="$obj" $MARGS olddefconfig >>"$obj/config.log" 2>&1
}

# The cell's options that did not survive olddefconfig.
lost_options() {
	local obj=$1 frag=$2 o v
	for o in $(fragment_options "$frag") CONFIG_ANON_PREFAULT=y; do
		v=${o#*=}
		o=${o%%=*}
		if [ "$v" = n ]; then
			grep -Eq "^$o=[ym]$" "$obj/.config" && echo "$o=n"
		else
			grep -qx "$o=$v" "$obj/.config" || echo "$o=$v"
		fi
	done
}

# The objects of MATRIX_OBJECTS that the configuration in OBJ builds.
cell_objects() {
	local e o c
	for e in $MATRIX_OBJECTS; do
		o=${e%%:*} c=${e#*:}
		grep -qx "CONFIG_$c=y" "$1/.config" && echo "$o"
	done
}

# build_objects OBJ LOG OBJECTS...: compiles them (with -Werror unless
# MWERROR is empty).
MWERROR=-Werror
build_objects() {
	local obj=$1 log=$2 cc hostcc=gcc
	shift 2
	cc=$(cell_cc "$ARCH_OF_CELL")
	# The host programs (fixdep, kconfig, objtool) of every cell are
	# the same: ccache serves them after the first cell.
	if command -v ccache >/dev/null; then cc="ccache $cc" hostcc="ccache gcc"; fi
	# shellcheck disable=SC2086
	make -C "$MSRC" O="$obj" $MARGS -j"$MJOBS" CC="$cc" HOSTCC="$hostcc" \
		${MWERROR:+KCFLAGS="$MWERROR $MKCFLAGS"} "$@" >"$log" 2>&1
}

# Every C file the series touches must be in MATRIX_OBJECTS.
check_table() {
	local f missing=""
	for f in $(series_files); do
		case $f in
		tools/*|scripts/*|Documentation/*) continue ;;
		*.c) grep -q "${f%.c}\.o:" <<<"$MATRIX_OBJECTS" || missing="$missing $f" ;;
		esac
	done
	if [ -n "$missing" ]; then
		say FAIL "the series changes$missing, which scripts/matrix.sh does not compile (MATRIX_OBJECTS)"
	else
		say PASS "every C file the series changes is in the matrix's object list"
	fi
}

run_cell() {
	local name=$1 frag=$TOP/configs/matrix/$1.config hdr arch base label obj objs lost t
	hdr=$(sed -n 's/^# matrix: //p' "$frag" | head -1)
	read -r arch base label <<<"$hdr"
	label=${label:-$base}
	if [ -z "$base" ] || ! MARGS=$(cell_make_args "$arch"); then
		say FAIL "$name: bad header '# matrix: $hdr' in configs/matrix/$name.config"
		return
	fi
	ARCH_OF_CELL=$arch
	# A warning the base tree itself has on this architecture, with the
	# reason, as "# matrix-kcflags: -Wno-error=... why" in the fragment.
	MKCFLAGS=$(sed -n 's/^# matrix-kcflags: \(-[^ ]*\).*/\1/p' "$frag" | paste -sd' ')
	if ! command -v "$(cell_cc "$arch")" >/dev/null; then
		say FAIL "$name ($arch $label): no $(cell_cc "$arch") (see PKGS in scripts/lib.sh)"
		return
	fi
	obj=$MOUT/$name
	t=$(date +%s)
	if ! configure_cell "$obj" "$arch" "$base" "$frag"; then
		say FAIL "$name ($arch $label): configuration failed (see $obj/config.log)"
		return
	fi
	lost=$(lost_options "$obj" "$frag")
	if [ -n "$lost" ]; then
		say FAIL "$name ($arch $label): $(echo $lost) did not survive olddefconfig"
		return
	fi
	objs=$(cell_objects "$obj")
	# shellcheck disable=SC2086
	if build_objects "$obj" "$obj/build-y.log" $objs; then
		say PASS "$name: $arch $label, ANON_PREFAULT=y: $(echo $objs | sed 's/\.o//g')"
	else
		grep -E 'error|Error' "$obj/build-y.log" | head -5 >&2
		say FAIL "$name: $arch $label, ANON_PREFAULT=y does not build (see $obj/build-y.log)"
	fi
	"$MSRC/scripts/config" --file "$obj/.config" --disable ANON_PREFAULT
	# shellcheck disable=SC2086
	make -s -C "$MSRC" O="$obj" $MARGS olddefconfig >>"$obj/config.log" 2>&1
	objs=$(cell_objects "$obj")
	# shellcheck disable=SC2086
	if grep -qx 'CONFIG_ANON_PREFAULT=y' "$obj/.config"; then
		say FAIL "$name: $arch $label: CONFIG_ANON_PREFAULT could not be unset"
	elif build_objects "$obj" "$obj/build-n.log" $objs; then
		say PASS "$name: $arch $label, ANON_PREFAULT=n: $(echo $objs | sed 's/\.o//g')"
	else
		grep -E 'error|Error' "$obj/build-n.log" | head -5 >&2
		say FAIL "$name: $arch $label, ANON_PREFAULT=n does not build (see $obj/build-n.log)"
	fi
	log "matrix cell $name took $(( $(date +%s) - t ))s"
	# The object tree is not needed once its lines are printed.
	[ -n "${MATRIX_KEEP:-}" ] || find "$obj" -name '*.o' -delete
}

# sparse and W=1 on x86's test configuration: the patched tree against
# the base. A warning in a file the series changes or adds that the base
# does not have fails.
run_checkers() {
	local top=$MOUT/checkers-top base=$MOUT/checkers-base objs files new t
	t=$(date +%s)
	if ! command -v sparse >/dev/null; then
		say FAIL "sparse and W=1: no sparse (package sparse)"
		return
	fi
	ARCH_OF_CELL=x86 MARGS=""
	local ok=1 o
	for o in "$top:$MSRC" "$base:$MPRISTINE"; do
		local obj=${o%%:*} src=${o#*:}
		rm -rf "$obj" && mkdir -p "$obj"
		if ! (MSRC=$src; configure_cell "$obj" x86 test /dev/null); then
			say FAIL "sparse and W=1: configuration failed (see $obj/config.log)"
			return
		fi
		objs=$(cell_objects "$obj")
		# shellcheck disable=SC2086
		(MSRC=$src MWERROR=; build_objects "$obj" "$obj/check.log" C=2 CHECK=sparse W=1 $objs) ||
			ok=0
	done
	files=$(series_files | grep -E '\.(c|h)$')
	# shellcheck disable=SC2086
	new=$(new_warnings "$base/check.log" "$top/check.log" $files)
	# configs/exceptions: "- sparse: FILE: MESSAGE" (the exact line).
	local listed nlisted=0
	listed=$(exceptions sparse)
	if [ -n "$new" ] && [ -n "$listed" ]; then
		nlisted=$(grep -cxF -f <(printf '%s\n' "$listed") <<<"$new")
		new=$(grep -vxF -f <(printf '%s\n' "$listed") <<<"$new")
	fi
	if [ $ok = 0 ]; then
		say FAIL "sparse and W=1 (x86): the objects do not build (see $top/check.log, $base/check.log)"
	elif [ -n "$new" ]; then
		printf '%s\n' "$new" | head -20 >&2
		say FAIL "sparse and W=1 (x86): $(printf '%s\n' "$new" | wc -l) warnings the base tree does not have (see $top/check.log)"
	else
		say PASS "sparse and W=1 (x86): no warning in the files the series changes that the base tree does not have ($(build_warnings "$top/check.log" $files | wc -l) there: each in the base tree too, or in configs/exceptions: $nlisted)"
	fi
	log "matrix checkers took $(( $(date +%s) - t ))s"
	[ -n "${MATRIX_KEEP:-}" ] || find "$top" "$base" -name '*.o' -delete
}

check_table
for c in $CELLS; do
	case $c in
	checkers) run_checkers ;;
	*)
		if [ -f "$TOP/configs/matrix/$c.config" ]; then
			run_cell "$c"
		else
			say FAIL "$c: no configs/matrix/$c.config"
		fi ;;
	esac
done
[ -n "${*:-}" ] || run_checkers
# It finished: its exit status says so (make test fails a matrix that
# exits otherwise, see matrix_lines in lib.sh).
exit 0
