#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make tree: a git work tree of the base with one commit per patch, for
# editing the series (rebase, fixup); make export writes it back.
. "$(dirname "$0")/lib.sh"

TREE=${TREE:-$BUILD/tree}
ensure_packages
PRISTINE=$(pristine_tree) || exit 1
if [ -d "$TREE/.git" ] && [ -z "${FORCE:-}" ]; then
	die "$TREE exists; use it, or FORCE=1 make tree to start over"
fi
step tree "creating $TREE"
copy_tree "$PRISTINE" "$TREE"
cd "$TREE" || die "no $TREE"
git init -q -b base . && git config user.name "anon-prefault developers" &&
	git config user.email "anon-prefault@example.org" &&
	git config core.abbrev 9 ||
	die "git init failed"
git add -A -f . >/dev/null && git commit -q -m "Linux $(make -s kernelversion) (base)" ||
	die "committing the base failed"
git tag -f ap-base >/dev/null
git checkout -q -b series
for p in $(series_patches); do
	git am -q --whitespace=nowarn "$TOP/patches/$p" || die "git am $p failed"
done
log "done: $TREE, branch 'series' on tag 'ap-base'; edit, commit, then make export"
