# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the anon-prefault harness. Sourced by the other scripts.

set -o pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AP_CACHE=${AP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/anon-prefault}
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/src
OBJ_Y=$BUILD/obj-y
OBJ_N=$BUILD/obj-n
JOBS=${JOBS:-$(nproc)}
SMP=${SMP:-$(nproc)}
MEM=${MEM:-2G}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-900}
KSRC=${KSRC:-}
DEB_TARBALL=/usr/src/linux-source-6.12.tar.xz

export CCACHE_DIR=${CCACHE_DIR:-$AP_CACHE/ccache}
export CCACHE_BASEDIR=$BUILD
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-4G}
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026"
export KBUILD_BUILD_USER=anon-prefault KBUILD_BUILD_HOST=anon-prefault
export QUILT_PATCHES=$TOP/patches QUILT_SERIES=$TOP/series
export QUILT_PC=.pc
unset QUILT_REFRESH_ARGS QUILT_PUSH_ARGS

CURRENT_STEP=""

log() { printf '==> %s\n' "$*" >&2; }
step() { CURRENT_STEP=$1; log "[$1] $2"; }
die() {
	printf 'ERROR: step %s failed: %s\n' "${CURRENT_STEP:-setup}" "$*" >&2
	exit 1
}

# Debian packages the harness needs (python3 may come from elsewhere).
PKGS="build-essential flex bison bc libelf-dev libssl-dev cpio qemu-system-x86
busybox-static quilt ccache rsync linux-source-6.12 gnuplot-nox perl git xz-utils"

ensure_packages() {
	step deps "checking Debian packages"
	local missing="" pkg
	for pkg in $PKGS; do
		[ "$pkg" = linux-source-6.12 ] && [ -n "$KSRC" ] && continue
		dpkg-query -W -f='${Status}\n' "$pkg" 2>/dev/null |
			grep -q 'install ok installed' || missing="$missing $pkg"
	done
	command -v python3 >/dev/null || missing="$missing python3"
	[ -z "$missing" ] && return 0
	log "installing:$missing"
	local sudo=""
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			sudo="sudo -n"
		else
			die "missing packages:$missing (not root and no password-less sudo; run: sudo apt-get install$missing)"
		fi
	fi
	command -v apt-get >/dev/null ||
		die "missing packages:$missing (no apt-get on this machine)"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 ||
		die "apt-get update failed; missing packages:$missing"
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >&2 ||
		die "apt-get install failed for:$missing"
}

is_kernel_tree() {
	[ -f "$1/Makefile" ] && [ -f "$1/mm/memory.c" ] && [ -f "$1/Kconfig" ] &&
		grep -q '^VERSION = 6$' "$1/Makefile" &&
		grep -q '^PATCHLEVEL = 12$' "$1/Makefile"
}

# Prints the path of an unpatched 6.12 tree: $KSRC or the cached extract of
# the Debian tarball (extracted once, atomically).
pristine_tree() {
	if [ -n "$KSRC" ]; then
		[ -d "$KSRC" ] || die "KSRC=$KSRC does not exist"
		is_kernel_tree "$KSRC" ||
			die "KSRC=$KSRC is not a Linux 6.12 source tree (no Makefile with VERSION = 6 / PATCHLEVEL = 12 and mm/memory.c)"
		(cd "$KSRC" && pwd)
		return
	fi
	[ -f "$DEB_TARBALL" ] || die "$DEB_TARBALL missing (package linux-source-6.12)"
	local ver dir
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c %Y "$DEB_TARBALL")
	dir=$AP_CACHE/pristine-$ver
	if ! [ -f "$dir/.complete" ]; then
		step extract "extracting $DEB_TARBALL into $dir (once)"
		mkdir -p "$AP_CACHE" || die "cannot create $AP_CACHE"
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -xJf "$DEB_TARBALL" -C "$dir.tmp" --strip-components=1 ||
			die "cannot extract $DEB_TARBALL"
		is_kernel_tree "$dir.tmp" || die "$DEB_TARBALL is not a 6.12 tree"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir" && touch "$dir/.complete"
	fi
	echo "$dir"
}

# Copies a pristine tree to $1 (no .git, no build products).
copy_tree() {
	local from=$1 to=$2
	rm -rf "$to"
	mkdir -p "$to"
	rsync -a --exclude=/.git --exclude=/.pc --exclude=/.complete "$from/" "$to/" ||
		die "cannot copy $from to $to"
}

series_patches() {
	[ -f "$TOP/series" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/series" | awk '{print $1}'
}

# Applies the next patch of the series with quilt in $SRC; fails on fuzz or
# offsets so that the series stays exact against the base.
quilt_push_one() {
	local out
	out=$(cd "$SRC" && quilt push --fuzz=0 2>&1)
	local rc=$?
	printf '%s\n' "$out" >"$BUILD/quilt-push.log"
	if [ $rc -ne 0 ]; then
		printf '%s\n' "$out" | tail -20 >&2
		return 1
	fi
	if printf '%s\n' "$out" | grep -Eq 'offset|fuzz'; then
		printf '%s\n' "$out" | grep -E 'offset|fuzz' >&2
		return 2
	fi
	return 0
}

# $1 = object dir, $2 = y|n: tinyconfig + configs/test.config (+ extra
# fragments in $EXTRA_CONFIGS) with CONFIG_ANON_PREFAULT=$2.
configure_kernel() {
	local obj=$1 opt=$2 frag o
	mkdir -p "$obj"
	make -s -C "$SRC" O="$obj" tinyconfig >"$obj/config.log" 2>&1 ||
		die "make tinyconfig failed (see $obj/config.log)"
	for frag in "$TOP/configs/test.config" $EXTRA_CONFIGS; do
		"$SRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" \
			>>"$obj/config.log" 2>&1 || die "merging $frag failed"
	done
	"$SRC/scripts/config" --file "$obj/.config" \
		"$([ "$opt" = y ] && echo --enable || echo --disable)" ANON_PREFAULT
	make -s -C "$SRC" O="$obj" olddefconfig >>"$obj/config.log" 2>&1 ||
		die "make olddefconfig failed"
	for frag in "$TOP/configs/test.config" $EXTRA_CONFIGS; do
		for o in $(grep -o '^CONFIG_[A-Za-z0-9_]*=[ym]' "$frag"); do
			grep -qx "$o" "$obj/.config" ||
				die "$o from $(basename "$frag") did not survive olddefconfig"
		done
	done
	if grep -rqs '^config ANON_PREFAULT$' "$SRC/mm/Kconfig"; then
		if [ "$opt" = y ]; then
			grep -qx 'CONFIG_ANON_PREFAULT=y' "$obj/.config" ||
				die "CONFIG_ANON_PREFAULT=y could not be set"
		else
			grep -qx '# CONFIG_ANON_PREFAULT is not set' "$obj/.config" ||
				die "CONFIG_ANON_PREFAULT could not be unset"
		fi
	fi
}

# $1 = object dir. Builds bzImage (warnings are errors for the files we add).
build_kernel() {
	local obj=$1
	local cc="gcc"
	command -v ccache >/dev/null && cc="ccache gcc"
	make -C "$SRC" O="$obj" -j"$JOBS" CC="$cc" bzImage >"$obj/build.log" 2>&1
	local rc=$?
	if [ $rc -ne 0 ]; then
		grep -E 'error|Error' "$obj/build.log" | head -30 >&2
		return 1
	fi
	if grep -E '(mm/anon_prefault|anon_prefault\.h|mm/memory\.c).*warning:' "$obj/build.log" >&2; then
		return 1
	fi
	return 0
}

# Statically built test programs for the guest: the kselftests the series
# adds (when present) and the harness's own smoke test.
build_guest_programs() {
	local obj=$1 out=$2
	mkdir -p "$out"
	make -s -C "$SRC" O="$obj" headers >"$obj/headers.log" 2>&1 ||
		die "make headers failed (see $obj/headers.log)"
	# The include flags of the kselftest Makefile (lib.mk): the kernel's
	# UAPI headers, then tools/include/uapi.
	local inc="-isystem $obj/usr/include -isystem $SRC/tools/include/uapi"
	local sel=$SRC/tools/testing/selftests
	local t
	for t in "$TOP"/scripts/guest/*.c; do
		gcc -static -O2 -Wall -Werror -o "$out/$(basename "$t" .c)" "$t" ||
			die "cannot build $(basename "$t")"
	done
	for t in $GUEST_KSELFTESTS; do
		[ -f "$sel/mm/$t.c" ] || continue
		# shellcheck disable=SC2086
		gcc -static -O2 -Wall -Werror $inc -I"$sel" -I"$sel/mm" \
			-o "$out/$t" "$sel/mm/$t.c" "$sel/mm/vm_util.c" -lpthread -lm \
			>"$out/$t.log" 2>&1 || { cat "$out/$t.log" >&2; die "cannot build kselftest $t"; }
	done
}
GUEST_KSELFTESTS=${GUEST_KSELFTESTS:-"anon_prefault anon_prefault_stress pft"}

# Upstream mm selftests run on and off as a regression suite (those that
# need libraries Debian's static toolchain lacks are left out).
# uffd-unit-tests is left out too: its "events" cases fail or hang now and
# then on the CONFIG_ANON_PREFAULT=n kernel here, so on/off differences in
# them say nothing about the series (README, known limits). Add it back
# with UPSTREAM_TESTS="... uffd-unit-tests" to run it anyway.
UPSTREAM_TESTS=${UPSTREAM_TESTS:-"cow madv_populate mlock2-tests
mremap_test mkdirty soft-dirty pagemap_ioctl ksm_functional_tests gup_longterm
map_populate mremap_dontunmap mrelease_test map_fixed_noreplace on-fault-limit"}

# Time limits (seconds) of the binaries that need their own: the last
# uffd-unit-tests case (poison on shmem-private) hangs under TCG here with
# prefault on and off alike.
declare -A UPSTREAM_LIMIT=([uffd-unit-tests]=120)

# $1 = object dir with headers, $2 = output dir: builds them with the mm
# selftest Makefile, statically; writes the list of what built to LIST.
build_upstream_tests() {
	local obj=$1 out=$2/upstream t targets=""
	rm -rf "$out"
	mkdir -p "$out"
	for t in $UPSTREAM_TESTS; do targets="$targets $out/$t"; done
	# shellcheck disable=SC2086
	make -s -C "$SRC/tools/testing/selftests/mm" OUTPUT="$out" \
		KHDR_INCLUDES="-isystem $obj/usr/include" LDFLAGS=-static \
		-j"$JOBS" -k $targets >"$out/build.log" 2>&1
	: >"$out/LIST"
	for t in $UPSTREAM_TESTS; do
		if [ -x "$out/$t" ]; then
			echo "$t${UPSTREAM_LIMIT[$t]:+ ${UPSTREAM_LIMIT[$t]}}" >>"$out/LIST"
		else
			log "upstream selftest $t did not build (see $out/build.log)"
		fi
	done
	[ -s "$out/LIST" ] || die "no upstream mm selftest could be built"
	rm -f "$out"/*.o "$out/build.log"
}

# $1 = program dir, $2 = output cpio.gz
make_initramfs() {
	local progs=$1 out=$2 root
	root=$(mktemp -d "$BUILD/initramfs.XXXXXX")
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,etc,usr/bin,ap}
	cp /bin/busybox "$root/bin/busybox"
	local a
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	cp "$TOP/scripts/guest/init" "$root/init"
	chmod 755 "$root/init"
	cp -r "$TOP/scripts/guest/." "$root/ap/"
	cp -r "$progs"/. "$root/ap/"
	rm -f "$root"/ap/*.log "$root"/ap/*.c "$root"/ap/*.h
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out" ||
		die "cannot pack initramfs"
	rm -rf "$root"
}

qemu_accel() {
	case ${ACCEL:-auto} in
	auto)
		if grep -Eqw 'vmx|svm' /proc/cpuinfo && [ -w /dev/kvm ]; then
			echo "-accel kvm -cpu host"
		else
			echo "-accel tcg,thread=multi -cpu max"
		fi ;;
	kvm) echo "-accel kvm -cpu host" ;;
	*) echo "-accel tcg,thread=multi -cpu max" ;;
	esac
}

# $1 = bzImage, $2 = initramfs, $3 = output dir, $4 = guest job (ap.job=)
# Leaves console.log (kernel) and results.log (guest report) in $3.
boot_guest() {
	local kernel=$1 initrd=$2 out=$3 job=$4
	mkdir -p "$out"
	rm -f "$out/console.log" "$out/results.log"
	local accel
	accel=$(qemu_accel)
	log "booting ($job): qemu $accel -smp $SMP -m $MEM, timeout ${BOOT_TIMEOUT}s, console in $out/console.log"
	# shellcheck disable=SC2086
	timeout --foreground -k 10 "$BOOT_TIMEOUT" qemu-system-x86_64 $accel \
		-smp "$SMP" -m "$MEM" -nodefaults -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 ap.job=$job ${GUEST_APPEND:-}" \
		-serial "file:$out/console.log" -serial "file:$out/results.log" \
		</dev/null >"$out/qemu.log" 2>&1
	local rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		printf 'guest did not finish within %ss (hung?); last 50 console lines:\n' \
			"$BOOT_TIMEOUT" >&2
		tail -n 50 "$out/console.log" >&2
		return 124
	fi
	if [ $rc -ne 0 ]; then
		cat "$out/qemu.log" >&2
		return $rc
	fi
	if ! tr -d '\r' <"$out/results.log" | grep -q '^@@AP DONE'; then
		printf 'guest stopped before reporting DONE; last 50 console lines:\n' >&2
		tail -n 50 "$out/console.log" >&2
		return 1
	fi
	return 0
}

# Kernel reports that fail a run wherever they appear on the console.
CONSOLE_BAD='BUG:|WARNING:|Oops|KASAN|UBSAN|Kernel panic|general protection fault|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|page allocation failure'

# $CONSOLE_ALLOW (an extended regex) names expected lines of one boot.
console_problems() {
	grep -aE "$CONSOLE_BAD" "$1" | grep -avE "${CONSOLE_ALLOW:-^$}" | head -20
}
