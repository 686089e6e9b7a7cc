# SPDX-License-Identifier: GPL-2.0
# Shared helpers of the anon-prefault harness. Sourced by the other scripts.

set -o pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
AP_CACHE=${AP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/anon-prefault}
BUILD=${BUILD:-$TOP/build}
SRC=$BUILD/src
OBJ_Y=$BUILD/obj-y
OBJ_N=$BUILD/obj-n
OBJ_L=$BUILD/obj-lockstat
OBJ_A=$BUILD/obj-arm64
OBJ_DEB=$BUILD/obj-debian
JOBS=${JOBS:-$(nproc)}
SMP=${SMP:-$(nproc)}
MEM=${MEM:-2G}
BOOT_TIMEOUT=${BOOT_TIMEOUT:-}
KSRC=${KSRC:-}
DEB_TARBALL=/usr/src/linux-source-6.12.tar.xz
# The architecture of the kernels and guests: x86 (x86_64, the host's) or
# arm64 (cross-built, booted on QEMU's "virt" machine). Set per build or
# boot: KARCH=arm64 configure_kernel ...
KARCH=${KARCH:-x86}
# arm64's busybox (Debian's busybox-static:arm64, unpacked by
# arm64_busybox).
ARM64_BUSYBOX=$AP_CACHE/busybox-arm64/bin/busybox
# Debian's own 6.12 amd64 configuration (package linux-config-6.12,
# unpacked by debian_config).
DEBIAN_CONFIG=$AP_CACHE/debian/config.amd64_none_amd64

export CCACHE_DIR=${CCACHE_DIR:-$AP_CACHE/ccache}
export CCACHE_BASEDIR=$BUILD
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-6G}
export KBUILD_BUILD_TIMESTAMP="Thu Jan  1 00:00:00 UTC 2026"
export KBUILD_BUILD_USER=anon-prefault KBUILD_BUILD_HOST=anon-prefault
export QUILT_PATCHES=$TOP/patches QUILT_SERIES=$TOP/series
export QUILT_PC=.pc
unset QUILT_REFRESH_ARGS QUILT_PUSH_ARGS

CURRENT_STEP=""

# Cleanup on SIGINT/SIGTERM: the temporary directories listed in
# AP_TMPDIRS are removed, QEMU and the builds (our children) are stopped.
AP_TMPDIRS=""
# AP_BGPIDS: background jobs (builds) stopped with all their descendants.
AP_BGPIDS=""
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill -TERM "$1" 2>/dev/null
}
stop_background() {
	local p
	for p in $AP_BGPIDS; do kill_tree "$p"; done
	AP_BGPIDS=""
}
on_signal() {
	trap - INT TERM
	log "interrupted: stopping QEMU and builds, removing temporary files"
	stop_background
	pkill -TERM -P $$ 2>/dev/null
	pkill -TERM -f "qemu-system-[a-z0-9_]* .*$BUILD/" 2>/dev/null
	# shellcheck disable=SC2086
	[ -n "$AP_TMPDIRS" ] && rm -rf $AP_TMPDIRS
	exit 130
}
trap on_signal INT TERM

# One harness run per build directory at a time ($BUILD/.lock). A script
# started by one that holds it (make run runs make locks) inherits it.
lock_build() {
	[ "${AP_BUILD_LOCKED:-}" = "$BUILD" ] && return 0
	step lock "taking $BUILD/.lock"
	mkdir -p "$BUILD" || die "cannot create $BUILD"
	exec 8>"$BUILD/.lock"
	flock -n 8 || die "another make run/test is using $BUILD (lock $BUILD/.lock); wait for it or set BUILD="
	export AP_BUILD_LOCKED=$BUILD
}

# need_count NAME WHAT: the variable NAME must hold a number, 1 or more.
need_count() {
	case ${!1} in
	''|*[!0-9]*|0|0*) die "$1=${!1}: want $2, 1 or more" ;;
	esac
}

# The measurements (make run, make locks) refuse more virtual CPUs than
# the host has: under TCG every virtual CPU is a host thread, and with
# more of them than host CPUs a lock holder's thread is preempted and the
# numbers measure the host's scheduler, not the kernel.
check_smp() {
	local host
	host=$(nproc)
	case $SMP in
	''|*[!0-9]*|0|0*) die "SMP=$SMP: want a number of virtual CPUs, 1 to $host" ;;
	esac
	[ "$SMP" -le "$host" ] ||
		die "SMP=$SMP is more than the $host CPUs of this machine: the guest's CPUs would share host CPUs and the benchmark would measure the host's scheduler; use SMP=$host or less, or a machine with $SMP CPUs"
}

# Copies the pristine tree $1 to $SRC and applies the series, unless
# $SRC holds exactly this series on this base already.
prepare_src() {
	local stamp p
	stamp=$( (echo "$1"; cat "$TOP/series" 2>/dev/null;
		  for p in $(series_patches); do cat "$TOP/patches/$p"; done) |
		 sha1sum | cut -c1-40)
	[ "$(cat "$SRC/.ap-stamp" 2>/dev/null)" = "$stamp" ] && return 0
	step apply "copying the pristine tree and applying the series"
	copy_tree "$1" "$SRC"
	local ver rc
	ver=$(make -s -C "$1" kernelversion)
	for p in $(series_patches); do
		quilt_push_one
		rc=$?
		[ $rc = 2 ] && offsets_allowed "$ver" && rc=0
		[ $rc = 0 ] || die "$p does not apply cleanly (see $BUILD/quilt-push.log)"
	done
	echo "$stamp" >"$SRC/.ap-stamp"
}

# The kernel version the series was exported on (the first line of
# series, written by make export); empty when it does not say.
series_base() {
	sed -n '1s/^# anon-prefault series on Linux \([0-9][0-9.]*\);.*/\1/p' \
		"${1:-$TOP/series}"
}

# offsets_allowed TREE_VERSION [SERIES]: whether the patches may apply
# with offsets to a tree of TREE_VERSION. Only to another point release
# than the one the series was exported on (Debian's linux-source moved
# on; make tree && make export refreshes the series), never to that one
# itself; fuzz never (quilt push --fuzz=0 refuses it).
offsets_allowed() {
	local base
	base=$(series_base "${2:-}")
	[ -n "$base" ] && [ "$1" != "$base" ]
}

# $1 = directory, $2 = MiB it needs free.
need_space() {
	local avail
	avail=$(df -Pm "$1" 2>/dev/null | awk 'NR == 2 { print $4 }')
	[ -n "$avail" ] || return 0
	[ "$avail" -ge "$2" ] ||
		die "$1 has $avail MiB free, this step needs about $2 MiB"
}

log() { printf '==> %s\n' "$*" >&2; }
# Every step is logged with the seconds since the harness started.
AP_T0=${AP_T0:-$(date +%s)}
export AP_T0
# With AP_STEPS set, every step is also appended to that file (seconds,
# name, description) for step_table.
step() {
	local t=$(( $(date +%s) - AP_T0 ))
	CURRENT_STEP=$1
	[ -n "${AP_STEPS:-}" ] && printf '%s\t%s\t%s\n' "$t" "$1" "$2" >>"$AP_STEPS"
	log "[$1 +${t}s] $2"
}

# step_table [END]: the steps recorded in $AP_STEPS as a table: each from
# its start to the next step's (the last one to END seconds, default now).
# Background jobs (bg_step: "FROM bg:NAME TO WHAT") are listed at the end,
# outside the sequence.
step_table() {
	[ -s "${AP_STEPS:-}" ] || return 0
	awk -F'\t' -v end="${1:-$(( $(date +%s) - AP_T0 ))}" '
	function row(name, from, to, what) {
		printf "%-16s %6d %6d %6d  %s\n", name, from, to, to - from, substr(what, 1, 64)
	}
	$2 ~ /^bg:/ { bg[++nb] = sprintf("%s\t%s\t%s\t%s", $2, $1, $3, $4); next }
	{ t[++n] = $1; name[n] = $2; what[n] = $3 }
	END {
		printf "%-16s %6s %6s %6s  %s\n", "step", "from", "to", "secs", "what"
		for (i = 1; i <= n; i++)
			row(name[i], t[i], i < n ? t[i + 1] : end, what[i])
		for (i = 1; i <= nb; i++) {
			split(bg[i], f, "\t")
			row(f[1], f[2], f[3], f[4])
		}
	}' "$AP_STEPS"
}

# bg_step NAME FROM WHAT: records a background job NAME that ran from FROM
# (seconds since AP_T0) until now.
bg_step() {
	[ -n "${AP_STEPS:-}" ] || return 0
	printf '%s\tbg:%s\t%s\t%s\n' "$2" "$1" "$(( $(date +%s) - AP_T0 ))" "$3" >>"$AP_STEPS"
}
die() {
	printf 'ERROR: step %s failed: %s\n' "${CURRENT_STEP:-setup}" "$*" >&2
	exit 1
}

# Debian packages the harness needs (python3 may come from elsewhere).
PKGS="build-essential flex bison bc libelf-dev libssl-dev cpio qemu-system-x86
busybox-static quilt ccache rsync linux-source-6.12 gnuplot-nox perl git xz-utils
stress-ng trinity python3.11 gcc-aarch64-linux-gnu libc6-dev-arm64-cross
qemu-system-arm sparse gcc-sparc64-linux-gnu gcc-powerpc64le-linux-gnu
gcc-riscv64-linux-gnu gcc-s390x-linux-gnu gcc-mips64el-linux-gnuabi64 procps"

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

# debian_config: unpacks Debian's own configuration of its 6.12 amd64
# kernel (config.amd64_none_amd64 of the package linux-config-6.12, the
# same source this series patches) into the cache (DEBIAN_CONFIG) once,
# with apt-get download as arm64_busybox fetches busybox.
debian_config() {
	local tmp deb
	[ -s "$DEBIAN_CONFIG" ] && return 0
	mkdir -p "$(dirname "$DEBIAN_CONFIG")" || die "cannot create $(dirname "$DEBIAN_CONFIG")"
	tmp=$(mktemp -d "$AP_CACHE/debian/dl.XXXXXX") || die "cannot create a directory in $AP_CACHE"
	AP_TMPDIRS="$AP_TMPDIRS $tmp"
	# apt-get download runs as _apt where it can: it must see the directory.
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q linux-config-6.12 >&2) ||
		die "Debian's kernel configuration: apt-get download linux-config-6.12 failed"
	deb=$(find "$tmp" -maxdepth 1 -name 'linux-config-6.12_*.deb' | head -1)
	if [ -z "$deb" ] ||
	   ! dpkg-deb --fsys-tarfile "$deb" |
	     tar -xO ./usr/src/linux-config-6.12/config.amd64_none_amd64.xz |
	     xz -dc >"$tmp/config" || ! [ -s "$tmp/config" ]; then
		die "Debian's kernel configuration: cannot unpack config.amd64_none_amd64 from ${deb:-the package}"
	fi
	mv "$tmp/config" "$DEBIAN_CONFIG" || die "cannot write $DEBIAN_CONFIG"
	rm -rf "$tmp"
}

# debian_value OPTION CONFIG: OPTION's value in the .config CONFIG, "n"
# where it is not set.
debian_value() {
	local v
	v=$(sed -n "s/^CONFIG_$1=//p" "$2")
	echo "${v:-n}"
}

# debian_options: the options of configs/debian.list.
debian_options() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/configs/debian.list"
}

# debian_fragment: a config fragment with Debian's value of every option of
# configs/debian.list (DEBIAN_CONFIG), for the Debian-configured kernel.
debian_fragment() {
	local o v
	for o in $(debian_options); do
		v=$(debian_value "$o" "$DEBIAN_CONFIG")
		if [ "$v" = n ]; then
			echo "# CONFIG_$o is not set"
		else
			echo "CONFIG_$o=$v"
		fi
	done
}

# debian_check DOTCONFIG: a PASS or FAIL line for each option of
# configs/debian.list: whether the kernel's .config has Debian's value.
debian_check() {
	local o want got
	for o in $(debian_options); do
		want=$(debian_value "$o" "$DEBIAN_CONFIG")
		got=$(debian_value "$o" "$1")
		if [ "$want" = "$got" ]; then
			printf 'PASS\tdebian: CONFIG_%s=%s, as in Debian'"'"'s configuration\n' "$o" "$got"
		else
			printf 'FAIL\tdebian: CONFIG_%s=%s, Debian'"'"'s configuration has %s\n' "$o" "$got" "$want"
		fi
	done
}

# arm64_busybox: unpacks Debian's busybox-static for arm64 into the cache
# (ARM64_BUSYBOX) once: apt-get download, with arm64 added as a foreign
# architecture of the package lists, so that nothing of the host's own
# busybox changes.
arm64_busybox() {
	local dir tmp deb sudo=""
	[ -x "$ARM64_BUSYBOX" ] && return 0
	dir=$(dirname "$(dirname "$ARM64_BUSYBOX")")
	if ! dpkg --print-foreign-architectures | grep -qx arm64; then
		if [ "$(id -u)" != 0 ]; then
			sudo -n true 2>/dev/null ||
				die "busybox for arm64: dpkg --add-architecture arm64 needs root (or password-less sudo)"
			sudo="sudo -n"
		fi
		if ! $sudo dpkg --add-architecture arm64 ||
		   ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2; then
			die "busybox for arm64: cannot add arm64 to the package lists"
		fi
	fi
	mkdir -p "$AP_CACHE" || die "cannot create $AP_CACHE"
	tmp=$(mktemp -d "$AP_CACHE/busybox-arm64.XXXXXX") || die "cannot create a directory in $AP_CACHE"
	AP_TMPDIRS="$AP_TMPDIRS $tmp"
	# apt-get download runs as _apt where it can: it must see the directory.
	chmod 755 "$tmp"
	(cd "$tmp" && apt-get download -q busybox-static:arm64 >&2) ||
		die "busybox for arm64: apt-get download busybox-static:arm64 failed"
	deb=$(find "$tmp" -maxdepth 1 -name 'busybox-static_*_arm64.deb' | head -1)
	if [ -z "$deb" ] || ! dpkg-deb -x "$deb" "$tmp/root"; then
		die "busybox for arm64: cannot unpack the package (${deb:-not downloaded})"
	fi
	if ! rm -rf "$dir" || ! mkdir -p "$dir/bin" ||
	   ! cp "$tmp/root/bin/busybox" "$ARM64_BUSYBOX"; then
		die "busybox for arm64: cannot install it in $dir"
	fi
	rm -rf "$tmp"
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
		if [ -f "$KSRC/mm/anon_prefault.c" ] || grep -qs anon_prefault "$KSRC/mm/memory.c"; then
			die "KSRC=$KSRC already carries the anon-prefault series (mm/anon_prefault.c); point KSRC at an unpatched 6.12 tree"
		fi
		(cd "$KSRC" && pwd)
		return
	fi
	[ -f "$DEB_TARBALL" ] || die "$DEB_TARBALL missing (package linux-source-6.12)"
	local ver dir
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c %Y "$DEB_TARBALL")
	dir=$AP_CACHE/pristine-$ver
	mkdir -p "$AP_CACHE" || die "cannot create $AP_CACHE"
	# Another run may be extracting the same tree: wait for it.
	exec 7>"$AP_CACHE/.extract.lock"
	flock 7 || die "cannot lock $AP_CACHE/.extract.lock"
	if ! [ -f "$dir/.complete" ]; then
		step extract "extracting $DEB_TARBALL into $dir (once)"
		need_space "$AP_CACHE" 2048
		rm -rf "$dir.tmp"
		mkdir -p "$dir.tmp"
		tar -xJf "$DEB_TARBALL" -C "$dir.tmp" --strip-components=1 ||
			die "cannot extract $DEB_TARBALL"
		is_kernel_tree "$dir.tmp" || die "$DEB_TARBALL is not a 6.12 tree"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir" && touch "$dir/.complete"
	fi
	exec 7>&-
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

# The make variables of $KARCH's kernel build (cross compiler for arm64).
kmake_args() {
	case $KARCH in
	x86) ;;
	arm64) echo "ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-" ;;
	*) die "KARCH=$KARCH: want x86 or arm64" ;;
	esac
}

# The C compiler of $KARCH: kernel and guest programs.
target_cc() {
	case $KARCH in arm64) echo aarch64-linux-gnu-gcc ;; *) echo gcc ;; esac
}

# $1 = object dir: the boot image of $KARCH's kernel there.
kernel_image() {
	case $KARCH in
	arm64) echo "$1/arch/arm64/boot/Image" ;;
	*) echo "$1/arch/x86/boot/bzImage" ;;
	esac
}

# The configuration fragments of $KARCH's test kernel.
config_fragments() {
	echo "$TOP/configs/test.config $TOP/configs/$KARCH.config $EXTRA_CONFIGS"
}

# $1 = object dir, $2 = y|n: tinyconfig + configs/test.config +
# configs/$KARCH.config (+ extra fragments in $EXTRA_CONFIGS) with
# CONFIG_ANON_PREFAULT=$2.
configure_kernel() {
	local obj=$1 opt=$2 frag o
	mkdir -p "$obj"
	# shellcheck disable=SC2046
	make -s -C "$SRC" O="$obj" $(kmake_args) tinyconfig >"$obj/config.log" 2>&1 ||
		die "make tinyconfig failed (see $obj/config.log)"
	for frag in $(config_fragments); do
		"$SRC/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" \
			>>"$obj/config.log" 2>&1 || die "merging $frag failed"
	done
	"$SRC/scripts/config" --file "$obj/.config" \
		"$([ "$opt" = y ] && echo --enable || echo --disable)" ANON_PREFAULT
	# shellcheck disable=SC2046
	make -s -C "$SRC" O="$obj" $(kmake_args) olddefconfig >>"$obj/config.log" 2>&1 ||
		die "make olddefconfig failed"
	for frag in $(config_fragments); do
		for o in $(grep -o '^CONFIG_[A-Za-z0-9_]*=[ym]' "$frag"); do
			grep -qx "$o" "$obj/.config" ||
				die "$o from $(basename "$frag") did not survive olddefconfig"
		done
		for o in $(sed -n 's/^# \(CONFIG_[A-Za-z0-9_]*\) is not set$/\1/p' "$frag"); do
			! grep -Eq "^$o=[ym]$" "$obj/.config" ||
				die "$o, unset in $(basename "$frag"), is selected by another option"
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

# The source files the series touches (from the patches' +++ lines).
series_files() {
	local p
	for p in $(series_patches); do
		[ -f "$TOP/patches/$p" ] && patch_files "$TOP/patches/$p"
	done | sort -u
}

# The files patch $1 changes, adds or deletes (its ---/+++ lines).
patch_files() {
	sed -n -e 's|^+++ b/\([^[:space:]]*\).*|\1|p' \
		-e 's|^--- a/\([^[:space:]]*\).*|\1|p' "$1" | sort -u
}

# $1 = object dir, $2... = make targets, built into $1/build.log; a
# compiler warning in any file the series touches is an error.
make_targets() {
	local obj=$1 f pat=""
	local cc
	shift
	cc=$(target_cc)
	command -v ccache >/dev/null && cc="ccache $cc"
	# shellcheck disable=SC2046
	if ! make -C "$SRC" O="$obj" $(kmake_args) -j"$JOBS" CC="$cc" "$@" \
		>"$obj/build.log" 2>&1; then
		grep -E 'error|Error' "$obj/build.log" | head -30 >&2
		return 1
	fi
	for f in $(series_files); do
		case $f in *.c|*.h) pat="$pat|$(printf '%s' "$f" | sed 's/[.]/[.]/g')" ;; esac
	done
	! { [ -n "$pat" ] &&
	    grep -E "(^|/)(${pat#|}):[0-9]+(:[0-9]+)?: warning:" "$obj/build.log" >&2; }
}

# $1 = object dir. Builds the boot image, bzImage or Image (make_targets).
# A failed build leaves no image behind, so that no later step boots the
# kernel of an earlier build.
build_kernel() {
	local img
	img=$(kernel_image "$1")
	make_targets "$1" "$(basename "$img")" && return 0
	rm -f "$img"
	return 1
}

# $1 = patch file: the objects to compile with CONFIG_ANON_PREFAULT=n once
# it is applied: the kernel C files it changes and the series' kernel C
# files that include a header it changes, each only if the base tree has
# it (files the series adds are built only with =y) and the =y build
# compiled it ($OBJ_Y: the test config builds it).
patch_objects_n() {
	local f c h files
	files=$(series_files)
	for f in $(patch_files "$1"); do
		case $f in
		tools/*|scripts/*|Documentation/*) ;;
		*.c) echo "$f" ;;
		include/*.h)
			h=${f#include/}
			for c in $files; do
				case $c in *.c) grep -qs "#include <$h>" "$SRC/$c" && echo "$c" ;; esac
			done ;;
		*.h)
			h=$(basename "$f")
			for c in $files; do
				case $c in "$(dirname "$f")"/*.c)
					grep -qs "#include \"$h\"" "$SRC/$c" && echo "$c" ;;
				esac
			done ;;
		esac
	done | sort -u | while read -r c; do
		[ -f "$PRISTINE/$c" ] && [ -f "$OBJ_Y/${c%.c}.o" ] && echo "${c%.c}.o"
	done
}

# Statically built test programs for the guest ($KARCH): the kselftests
# the series adds (when present) and the harness's own programs (on arm64
# all but ap_clock, which counts x86 instructions).
build_guest_programs() {
	local obj=$1 out=$2 cc
	cc=$(target_cc)
	mkdir -p "$out"
	# shellcheck disable=SC2046
	make -s -C "$SRC" O="$obj" $(kmake_args) headers >"$obj/headers.log" 2>&1 ||
		die "make headers failed (see $obj/headers.log)"
	local t
	for t in "$TOP"/scripts/guest/*.c; do
		[ "$KARCH" = arm64 ] && [ "$(basename "$t")" = ap_clock.c ] && continue
		$cc -static -O2 -Wall -Werror -o "$out/$(basename "$t" .c)" "$t" ||
			die "cannot build $(basename "$t") ($KARCH)"
	done
	build_kselftests "$obj" "$out" || die "cannot build kselftest $BAD_KSELFTEST"
}
GUEST_KSELFTESTS=${GUEST_KSELFTESTS:-"anon_prefault anon_prefault_mthp anon_prefault_stress pft"}

# $1 = object dir with headers (make headers), $2 = output dir: builds the
# kselftests of GUEST_KSELFTESTS that $SRC has, with the include flags of
# the kselftest Makefile (lib.mk): the UAPI headers, then
# tools/include/uapi. Fails naming the first that did not build in
# BAD_KSELFTEST.
build_kselftests() {
	local obj=$1 out=$2 t
	local inc="-isystem $obj/usr/include -isystem $SRC/tools/include/uapi"
	local sel=$SRC/tools/testing/selftests cc
	cc=$(target_cc)
	for t in $GUEST_KSELFTESTS; do
		[ -f "$sel/mm/$t.c" ] || continue
		# shellcheck disable=SC2086
		$cc -static -O2 -Wall -Werror $inc -I"$sel" -I"$sel/mm" \
			-o "$out/$t" "$sel/mm/$t.c" "$sel/mm/vm_util.c" -lpthread -lm \
			>"$out/$t.log" 2>&1 || { cat "$out/$t.log" >&2; BAD_KSELFTEST=$t; return 1; }
	done
	return 0
}

# build_warnings LOG FILE...: the compiler and sparse warnings (and
# errors) of a build log in the given source files, one "file: message"
# line each, sorted; without line numbers, which a series moves.
build_warnings() {
	local log=$1 pat
	shift
	pat=$(printf '%s\n' "$@" | sed 's/[.]/[.]/g' | paste -sd'|')
	sed -n -E "s#^([^ :]*/)?(${pat}):[0-9]+(:[0-9]+)?: (warning|error): (.*)#\2: \5#p" "$log" |
		sed -E 's/ +$//' | sort
}

# matrix_lines TSV RC: the build matrix's verdict lines, TSV as
# scripts/matrix.sh printed them and RC the file its exit status went to.
# A matrix that did not finish (no RC), exited non-zero (a cell's lines
# may be missing) or printed nothing adds a FAIL line.
matrix_lines() {
	local tsv=$1 rc
	rc=$(cat "$2" 2>/dev/null)
	[ -f "$tsv" ] && cat "$tsv"
	if [ -z "$rc" ]; then
		printf 'FAIL\tmatrix: scripts/matrix.sh did not finish\n'
	elif [ "$rc" != 0 ]; then
		printf 'FAIL\tmatrix: scripts/matrix.sh exited %s\n' "$rc"
	elif ! grep -q . "$tsv" 2>/dev/null; then
		printf 'FAIL\tmatrix: scripts/matrix.sh printed no result\n'
	fi
	return 0
}

# feature_lines NPATCH HAS_FEATURE: a series (NPATCH patches) whose tree
# has no mm/anon_prefault.c (HAS_FEATURE 0) would skip the steps that need
# the feature (the debug, arm64, limits, pin and clock boots, the matrix)
# in silence; a FAIL line says so. An empty series tests the base tree.
feature_lines() {
	[ "$1" != 0 ] && [ "$2" = 0 ] &&
		printf 'FAIL\tfeature: %s patches but no mm/anon_prefault.c in the tree: the steps that need the feature cannot run\n' "$1"
	return 0
}

# exceptions KIND [FILE]: the payload of every "- KIND: ..." line of
# configs/exceptions (what make test lets through, each with its reason).
# The one reader of that file; exceptions_check [FILE] prints a FAIL line
# for a line of a kind nobody reads.
EXCEPTION_KINDS="checkpatch sparse upstream skip"
exceptions() {
	sed -n "s/^- $1: //p" "${2:-$TOP/configs/exceptions}"
}

exceptions_check() {
	local bad f=${1:-$TOP/configs/exceptions}
	bad=$(grep -nvE "^(#.*|[[:space:]]*|- ($(echo $EXCEPTION_KINDS | tr ' ' '|')): .+)$" "$f")
	if [ -n "$bad" ]; then
		printf 'FAIL\texceptions: configs/exceptions: a line of no known kind (%s): %s\n' \
			"$EXCEPTION_KINDS" "$(echo $bad)"
	else
		printf 'PASS\texceptions: configs/exceptions: %d lines, each of a known kind\n' \
			"$(grep -c '^- ' "$f")"
	fi
}

# checker_lines LABEL CMD [ARG...]: runs a checker that prints
# "STATUS<TAB>description" lines and passes them on. A checker that exits
# non-zero (a traceback) or prints no line adds a FAIL line naming LABEL,
# so that a checker that crashes can never pass by saying nothing.
checker_lines() {
	local label=$1 what out rc
	shift
	what=$(basename -- "${2:-$1}")
	out=$("$@")
	rc=$?
	[ -n "$out" ] && printf '%s\n' "$out"
	if [ $rc -ne 0 ]; then
		printf 'FAIL\t%s: %s exited %d\n' "$label" "$what" "$rc"
	elif [ -z "$out" ]; then
		printf 'FAIL\t%s: %s printed no result\n' "$label" "$what"
	fi
	return 0
}

# new_warnings BASE_LOG LOG FILE...: the warnings of LOG in the files
# that BASE_LOG does not have (each as often as LOG has it more often).
new_warnings() {
	local base=$1 log=$2
	shift 2
	comm -13 <(build_warnings "$base" "$@") <(build_warnings "$log" "$@")
}

# $1 = patch file: true when it changes a Kconfig file (the configuration
# of a tree built before it may be out of date).
patch_changes_kconfig() {
	patch_files "$1" | grep -Eq '(^|/)Kconfig[^/]*$'
}

# $1 = patch file: true when it changes nothing the kernel build reads
# (only Documentation/, tools/testing/ and MAINTAINERS), so that the
# kernel after it is the kernel before it. Other parts of tools/ (objtool,
# its headers and libraries) are built with the kernel.
patch_outside_kernel_build() {
	local f files
	files=$(patch_files "$1")
	[ -n "$files" ] || return 1
	for f in $files; do
		case $f in Documentation/*|tools/testing/*|MAINTAINERS) ;; *) return 1 ;; esac
	done
	return 0
}

# Upstream mm selftests run on and off as a regression suite (those that
# need libraries Debian's static toolchain lacks are left out).
# uffd-unit-tests is left out too: its "events" cases fail or hang now and
# then on the CONFIG_ANON_PREFAULT=n kernel here, so on/off differences in
# them say nothing about the series (README, known limits). Add it back
# with UPSTREAM_TESTS="... uffd-unit-tests" to run it anyway.
UPSTREAM_TESTS=${UPSTREAM_TESTS:-"cow madv_populate mlock2-tests
mremap_test mkdirty soft-dirty pagemap_ioctl ksm_functional_tests gup_longterm
map_populate mremap_dontunmap mrelease_test map_fixed_noreplace on-fault-limit
khugepaged"}

# Those of them that also run with the 64 KiB size at "auto" (mode auto
# of scripts/guest/upstream.sh): the ones that save and restore the THP
# settings through thp_settings.c, or split and collapse THPs. The others
# run where UPSTREAM_TESTS names them: split_huge_page_test (about two
# minutes a run under TCG here: 3 cases pass, the 9 that need a file
# system path skip) and uffd-unit-tests (left out above).
UPSTREAM_AUTO=${UPSTREAM_AUTO:-"cow khugepaged split_huge_page_test uffd-unit-tests"}

# Left out on arm64: soft-dirty (arm64 has no soft-dirty tracking in
# 6.12; the binary does not even link there).
ARM64_UPSTREAM_SKIP="soft-dirty"

# Time limits (seconds) of the binaries that need their own: the last
# uffd-unit-tests case (poison on shmem-private) hangs under TCG here with
# prefault on and off alike.
declare -A UPSTREAM_LIMIT=([uffd-unit-tests]=120)

# Extra compiler flags of the binaries that need them: 6.12's khugepaged.c
# uses KSFT_SKIP without including kselftest.h, which its vm_util.h does
# not include in 6.12 (it does in later kernels).
declare -A UPSTREAM_CFLAGS=([khugepaged]="-include ../kselftest.h")

# $1 = object dir with headers, $2 = output dir: builds them for $KARCH
# with the mm selftest Makefile, statically; writes the list of what built
# to LIST.
build_upstream_tests() {
	local obj=$1 out=$2/upstream t targets="" tests="" own=""
	rm -rf "$out"
	mkdir -p "$out"
	for t in $UPSTREAM_TESTS; do
		[ "$KARCH" = arm64 ] && [[ " $ARM64_UPSTREAM_SKIP " == *" $t "* ]] && continue
		tests="$tests $t"
		if [ -n "${UPSTREAM_CFLAGS[$t]:-}" ]; then
			own="$own $t"
		else
			targets="$targets $out/$t"
		fi
	done
	# shellcheck disable=SC2086,SC2046
	make -s -C "$SRC/tools/testing/selftests/mm" $(kmake_args) OUTPUT="$out" \
		KHDR_INCLUDES="-isystem $obj/usr/include" LDFLAGS=-static \
		-j"$JOBS" -k $targets >"$out/build.log" 2>&1
	for t in $own; do
		# shellcheck disable=SC2046
		make -s -C "$SRC/tools/testing/selftests/mm" $(kmake_args) OUTPUT="$out" \
			KHDR_INCLUDES="-isystem $obj/usr/include" LDFLAGS=-static \
			USERCFLAGS="${UPSTREAM_CFLAGS[$t]}" "$out/$t" >>"$out/build.log" 2>&1
	done
	: >"$out/LIST"
	: >"$out/AUTO"
	UPSTREAM_FAILED_BUILD=""
	for t in $tests; do
		if [ -x "$out/$t" ]; then
			echo "$t${UPSTREAM_LIMIT[$t]:+ ${UPSTREAM_LIMIT[$t]}}" >>"$out/LIST"
			[[ " $(echo $UPSTREAM_AUTO) " == *" $t "* ]] && echo "$t" >>"$out/AUTO"
		else
			log "upstream selftest $t did not build (see $out/build.log)"
			UPSTREAM_FAILED_BUILD="$UPSTREAM_FAILED_BUILD $t"
		fi
	done
	[ -s "$out/LIST" ] || die "no upstream mm selftest could be built"
	rm -f "$out"/*.o
	# The log stays for a test that did not build; the guest needs none.
	[ -n "$UPSTREAM_FAILED_BUILD" ] || rm -f "$out/build.log"
}

# Debian's programs the external stress runs in the guest (make test).
EXTERNAL_PROGRAMS="/usr/bin/stress-ng /usr/bin/trinity"

# Debian's programs of make run's real-workload section
# (scripts/guest/realwork.sh): gcc (driver, cc1, as) and make, dash with
# GNU sed, grep, awk (mawk) and coreutils, python3.11 with its standard
# library, sort and xz.
REAL_PROGRAMS="/usr/bin/gcc /usr/lib/gcc/x86_64-linux-gnu/12/cc1 /usr/bin/as
/usr/bin/make /bin/dash /bin/sed /bin/grep /usr/bin/awk /usr/bin/expr
/usr/bin/tr /usr/bin/cat /usr/bin/rm /usr/bin/sort /usr/bin/uniq /usr/bin/wc
/usr/bin/cksum /usr/bin/xz /usr/bin/python3.11 /usr/lib/python3.11"

# The kernel sources the compiler workload compiles (preprocessed on the
# host with the flags of the =y build): a kernbench proxy over the core
# directories, two large files (mostly headers: 3.4 MiB preprocessed
# each) and small ones, as a kernel build has both. About 10 s of guest
# time on the instruction clock, the largest workload.
REAL_CC_FILES=${REAL_CC_FILES:-"mm/mmap.c mm/page_counter.c fs/exec.c
kernel/range.c lib/rbtree.c lib/string.c lib/kstrtox.c lib/cmdline.c
lib/list_sort.c"}

# Parts of a copied directory the guest never needs (Python's test suite,
# GUI, packaging and static library).
HOST_TREE_EXCLUDES="test/ idlelib/ tkinter/ turtledemo/ lib2to3/ ensurepip/
pydoc_data/ distutils/ site-packages/ dist-packages/ config-*/"

# $1 = initramfs root, $2... = programs and directories of the host:
# a program of /bin or /usr/bin goes to /usr/bin under its own name,
# anything else (cc1, a library directory) to the same path; programs
# come with the shared libraries ldd names.
copy_host_programs() {
	local root=$1 prog lib libs dest x ex=()
	shift
	for x in $HOST_TREE_EXCLUDES; do ex+=("--exclude=$x"); done
	for prog in "$@"; do
		if [ -d "$prog" ]; then
			mkdir -p "$root$prog"
			rsync -a "${ex[@]}" "$prog/" "$root$prog/" ||
				die "cannot copy $prog"
			continue
		fi
		[ -x "$prog" ] || die "$prog missing (see PKGS in scripts/lib.sh)"
		libs=$(ldd "$prog" 2>&1)
		case $libs in
		*"not found"*) die "$prog: a shared library is missing on this machine" ;;
		esac
		case $prog in
		/bin/*|/usr/bin/*) dest=/usr/bin/$(basename "$prog") ;;
		*) dest=$prog ;;
		esac
		install -D -m 755 "$(readlink -f "$prog")" "$root$dest" ||
			die "cannot copy $prog"
		for lib in $(printf '%s\n' "$libs" |
			     awk '$2 == "=>" && $3 ~ /^\// { print $3 }
				  $1 ~ /^\// { print $1 }'); do
			[ -f "$root$lib" ] && continue
			install -D -m 755 "$(readlink -f "$lib")" "$root$lib" ||
				die "cannot copy $lib (needed by $prog)"
		done
	done
	return 0
}

# $1 = program dir, $2 = output cpio.gz, $3... = host programs and
# directories to add (copy_host_programs).
make_initramfs() {
	local progs=$1 out=$2 root
	shift 2
	root=$(mktemp -d "$BUILD/initramfs.XXXXXX")
	AP_TMPDIRS="$AP_TMPDIRS $root"
	mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,root,etc,usr/bin,ap}
	chmod 755 "$root"
	chmod 1777 "$root/tmp"
	# root, and an unprivileged user for trinity.
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' \
		'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
		'ap:x:1000:1000:ap:/tmp:/bin/sh' >"$root/etc/passwd"
	printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' 'ap:x:1000:' >"$root/etc/group"
	[ $# -gt 0 ] && copy_host_programs "$root" "$@"
	local a bb=/bin/busybox
	[ "$KARCH" = arm64 ] && bb=$ARM64_BUSYBOX
	cp "$bb" "$root/bin/busybox" || die "cannot copy $bb"
	# The host's busybox names the applets (the arm64 one is the same
	# Debian version).
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$root/bin/$a"
	done
	cp "$TOP/scripts/guest/init" "$root/init"
	chmod 755 "$root/init"
	cp -r "$TOP/scripts/guest/." "$root/ap/"
	cp -r "$progs"/. "$root/ap/"
	rm -f "$root"/ap/*.log "$root"/ap/*/*.log "$root"/ap/*.c "$root"/ap/*.h
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out" ||
		die "cannot pack initramfs"
	rm -rf "$root"
}

# Under TCG the guest CPU is "max" without 5-level paging: with LA57 an
# interrupt taken while identify_cpu() rebuilds the boot CPU's feature
# bits made the debug kernel's KASAN report a direct-map address as a
# wild access (once, at 2.4s, before any test ran); 4-level paging is
# also what most x86 machines run.
kvm_usable() {
	grep -Eqw 'vmx|svm' /proc/cpuinfo && [ -w /dev/kvm ]
}

# guest_accel: kvm or tcg, from ACCEL (auto: kvm where usable).
guest_accel() {
	case ${ACCEL:-auto} in
	auto) if kvm_usable; then echo kvm; else echo tcg; fi ;;
	kvm) echo kvm ;;
	tcg) echo tcg ;;
	*) die "ACCEL=$ACCEL: want auto, tcg or kvm" ;;
	esac
}

# run_clock: the clock of make run's measured boots, from CLOCK: icount
# (QEMU's instruction clock: guest time advances 1 ns per guest
# instruction executed, idle time is skipped; the default under TCG) or
# wall (the host's time; the default under KVM, and the only clock there).
run_clock() {
	local accel
	accel=$(guest_accel) || exit 1
	case ${CLOCK:-auto} in
	auto) if [ "$accel" = kvm ]; then echo wall; else echo icount; fi ;;
	wall) echo wall ;;
	icount)
		[ "$accel" = tcg ] ||
			die "CLOCK=icount needs TCG (QEMU counts instructions only when it translates them): set ACCEL=tcg, or CLOCK=wall"
		echo icount ;;
	*) die "CLOCK=$CLOCK: want icount or wall" ;;
	esac
}

# qemu_accel [CLOCK]: QEMU's accelerator and CPU options. With the
# instruction clock (icount) the virtual CPUs take turns on one host
# thread (thread=single) and the guest clock counts instructions
# (shift=0: 1 ns each; sleep=off: an idle guest jumps to its next timer).
# On that clock the CPU model prices a page clear: "max" has ERMS, so the
# kernel clears a page with rep stosb, 4096 counted instructions; the
# clock icount-stosq boots "max" without ERMS and FSRM, where it clears
# with rep stosq, 512. On hardware a page clear costs about a quarter of
# a fault: the two bracket it.
qemu_accel() {
	local accel
	accel=$(guest_accel) || exit 1
	if [ "$KARCH" = arm64 ]; then
		# Always TCG (the host is x86). "max" has MTE (with the virt
		# machine's mte=on) and the hardware access and dirty flags;
		# pointer authentication with QEMU's own cheap algorithm, not
		# the architected QARMA one that TCG computes slowly.
		case ${1:-wall} in icount*)
			die "the instruction clock is x86 only in this harness" ;;
		esac
		echo "-accel tcg,thread=multi -M virt,mte=on -cpu max,pauth-impdef=on"
	elif [ "${1:-wall}" = icount ] || [ "${1:-wall}" = icount-stosq ]; then
		[ "$accel" = tcg ] || die "the instruction clock needs TCG (ACCEL=tcg)"
		local cpu=max,la57=off
		[ "$1" = icount-stosq ] && cpu=$cpu,-erms,-fsrm
		echo "-accel tcg,thread=single -icount shift=0,sleep=off -cpu $cpu"
	elif [ "$accel" = kvm ]; then
		echo "-accel kvm -cpu host"
	else
		echo "-accel tcg,thread=multi -cpu max,la57=off"
	fi
}

# The guests' RCU CPU stall timeout (seconds; the kernel's default is 21,
# its maximum 300). Under TCG a virtual CPU is a host thread: on a 2-core
# host running 4 virtual CPUs beside builds, one was seen unscheduled
# for more than 21 s, and the kernel reported a stall that was the host's
# (a cold make test, 2026-12). A CPU that really spins with interrupts
# off stays stalled: 120 s still reports it, long before a boot's time
# limit.
RCU_STALL_SECS=${RCU_STALL_SECS:-120}

# The kernel ships vm.anon_prefault off unless built with
# CONFIG_ANON_PREFAULT_DEFAULT_ON (configs/test.config leaves it unset):
# every guest switches it on from the command line, and feature_report
# (scripts/guest/jobs.sh) checks that it is on at boot. A boot that checks
# the build's default instead, or boots a kernel without the sysctl, sets
# AP_BOOT_PREFAULT to its own arguments ("ap.prefault_boot=N" alone, or
# nothing).
AP_BOOT_ON="sysctl.vm.anon_prefault=1 ap.prefault_boot=1"

# $1 = bzImage, $2 = initramfs, $3 = output dir, $4 = guest job (ap.job=)
# Leaves console.log (kernel) and results.log (guest report) in $3.
# BOOT_CLOCK=icount boots on the instruction clock (qemu_accel); the guest
# learns its clock from ap.clock= and reports it. AP_BOOT_PREFAULT: see
# AP_BOOT_ON.
boot_guest() {
	local kernel=$1 initrd=$2 out=$3 job=$4
	mkdir -p "$out"
	rm -f "$out/console.log" "$out/results.log"
	local accel limit=$BOOT_TIMEOUT t0
	# The test and debug jobs run the upstream selftests (each pair may be
	# run three times), the stress tests and stress-ng: 30 minutes; the
	# run job the benchmark and the real programs (42 to 43 minutes on
	# the instruction clock beside a make test): 60; the others 15.
	[ -n "$limit" ] || case $job in test|debug) limit=1800 ;; run) limit=3600 ;; *) limit=900 ;; esac
	local clock=${BOOT_CLOCK:-wall}
	accel=$(qemu_accel "$clock") || return 1
	log "booting ($job, $clock clock): qemu $accel -smp $SMP -m $MEM, timeout ${limit}s, console in $out/console.log"
	t0=$(date +%s)
	# The guest reports on a second port: ttyS1 on x86, a virtio console
	# (hvc0) on arm64's virt machine, which has one UART.
	local qemu=qemu-system-x86_64 ports="console=ttyS0" report
	report=(-serial "file:$out/results.log")
	if [ "$KARCH" = arm64 ]; then
		qemu=qemu-system-aarch64 ports="console=ttyAMA0 ap.report=/dev/hvc0"
		report=(-device virtio-serial-device
			-chardev "file,id=report,path=$out/results.log"
			-device "virtconsole,chardev=report")
	fi
	# shellcheck disable=SC2086
	timeout --foreground -k 10 "$limit" $qemu $accel \
		-smp "$SMP" -m "$MEM" -nodefaults -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "$ports panic=-1 rcupdate.rcu_cpu_stall_timeout=$RCU_STALL_SECS ap.job=$job ap.clock=$clock ${AP_BOOT_PREFAULT-$AP_BOOT_ON} ${GUEST_APPEND:-}" \
		-serial "file:$out/console.log" "${report[@]}" \
		</dev/null >"$out/qemu.log" 2>&1
	local rc=$?
	log "guest ($job) ran $(( $(date +%s) - t0 ))s"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		printf 'guest did not finish within %ss (hung?); last 50 console lines:\n' \
			"$limit" >&2
		tail -n 50 "$out/console.log" >&2
		return 124
	fi
	if [ $rc -ne 0 ]; then
		cat "$out/qemu.log" >&2
		return $rc
	fi
	# grep -c reads to the end: grep -q could stop early and, under
	# pipefail, fail the pipeline through tr's SIGPIPE.
	if ! tr -d '\r' <"$out/results.log" | grep -c '^@@AP DONE' >/dev/null; then
		printf 'guest stopped before reporting DONE; last 50 console lines:\n' >&2
		tail -n 50 "$out/console.log" >&2
		return 1
	fi
	return 0
}

# boot_guest, then the console check: dies naming the console log when
# the guest failed or the kernel reported a problem.
boot_clean() {
	local out=$3
	boot_guest "$@" || die "guest run failed (console: $out/console.log)"
	local bad
	bad=$(console_problems "$out/console.log")
	[ -z "$bad" ] || { printf '%s\n' "$bad"; die "kernel reported problems (console: $out/console.log)"; }
}

# suite_times RESULTS: one line with the seconds each suite of a guest
# report ran (the secs= of its END line).
suite_times() {
	[ -f "$1" ] || return 0
	tr -d '\r' <"$1" | awk '/^@@AP END / {
		for (i = 4; i <= NF; i++) if ($i ~ /^secs=/) t = t " " $3 " " substr($i, 6) "s"
	} END { if (t != "") print "suite times:" t }'
}

# Kernel reports that fail a run wherever they appear on the console.
CONSOLE_BAD='BUG:|WARNING:|Oops|KASAN|UBSAN|Kernel panic|general protection fault|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|blocked for more than|hung_task|soft lockup|rcu.*detected (expedited )?stall|non-static key|Bad page|list_add corruption|list_del corruption|page allocation failure'

# The warning an OOM victim's faulting page may print when it cannot be
# had, expected in the limits boot: the stock fault allocates it zeroed
# (__GFP_ZERO), the faulting page of a window is zeroed after the
# allocation (no __GFP_ZERO); which of the two fails depends on timing.
# Speculative pages carry __GFP_NOWARN and never warn.
OOM_VICTIM_WARNING='page allocation failure: order:0, mode:0x[0-9a-f]+[(]GFP_HIGHUSER_MOVABLE[|]__GFP_COMP([|]__GFP_ZERO)?[)]'

# $CONSOLE_ALLOW (an extended regex) names expected lines of one boot.
console_problems() {
	grep -aE "$CONSOLE_BAD" "$1" | grep -avE "${CONSOLE_ALLOW:-^$}" | head -20
}
