#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the figures quoted outside RESULTS are RESULTS' figures.

Usage: check-figures.py TOP

RESULTS holds every measured figure with the commit, configuration and
clock it came from; README, HARNESS, the cover letter and the changelogs
quote them. A figure here is a decimal ratio ("1.343x"), a percentage
("3.6%") or an instruction count ("5259 instr/page", "600 instructions").
Each quoted one must occur, as the same figure, in RESULTS. Prints one
line per document:
  PASS<TAB>figures: README: 16 quoted, each in RESULTS
  FAIL<TAB>figures: README: not in RESULTS: 1.44x, 12%
Exits non-zero when a document cannot be read.
"""
import glob
import os
import re
import sys

FIGURE = re.compile(r'(?<![\w.])(?:\d+\.\d+x'
                    r'|\d+(?:\.\d+)?%'
                    r'|\d[\d,]* (?:instr/page|instructions))(?![\w])')


def figures(text):
    """The figures of a text, instruction counts without their unit."""
    out = []
    for m in FIGURE.finditer(text):
        f = m.group(0)
        if f.endswith(('instr/page', 'instructions')):
            f = f.split()[0].replace(',', '') + ' instr'
        out.append(f)
    return out


def changelog(path):
    """A patch's commit message: the text before its first '---' line."""
    with open(path, encoding='utf-8') as f:
        text = f.read()
    return text.split('\n---\n', 1)[0]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    top = sys.argv[1]
    with open(os.path.join(top, 'RESULTS'), encoding='utf-8') as f:
        known = set(figures(f.read()))
    docs = []
    for name in ('README', 'HARNESS'):
        with open(os.path.join(top, name), encoding='utf-8') as f:
            docs.append((name, f.read()))
    patches = sorted(glob.glob(os.path.join(top, 'patches', '*.patch')))
    if not patches:
        sys.exit('check-figures.py: no patches in %s/patches' % top)
    for p in patches:
        docs.append(('patches/' + os.path.basename(p), changelog(p)))
    for name, text in docs:
        quoted = figures(text)
        missing = sorted(set(f for f in quoted if f not in known))
        if missing:
            print('FAIL\tfigures: %s: not in RESULTS: %s'
                  % (name, ', '.join(missing)))
        elif quoted:
            print('PASS\tfigures: %s: %d quoted, each in RESULTS'
                  % (name, len(quoted)))
        else:
            print('PASS\tfigures: %s: no figure quoted' % name)


if __name__ == '__main__':
    main()
