#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The lock profile table of make locks.

Usage: lock-report.py RESULTS_LOG
Reads the "locks" suite of the guest report (scripts/guest/locks.sh:
"locks,MODE,ROUND,pages,N", "...,faults,N" and
"...,lock,CLASS,<the 12 columns of /proc/lock_stat>") and prints, per lock
class and mode, medians over the rounds of: acquisitions per page touched,
contentions, average and longest hold (microseconds) and the total hold
time per page touched (nanoseconds); then the per-round ratios of each mode
to off and whether the goals hold: PTE-lock plus lruvec-lock hold time per
page touched below off's, longest PTE-lock hold within 4x off's.
Exits 1 when a mode lacks a round or a round lacks the PTE lock.
"""
import importlib.util
import os
import re
import statistics
import sys

_spec = importlib.util.spec_from_file_location(
    'bench_report', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 'bench-report.py'))
_bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bench)
bench_lines, fmt_ratios, ratio = (_bench.bench_lines, _bench.fmt_ratios,
                                  _bench.ratio)

# /proc/lock_stat class names (a "#N" or "/N" suffix folded in) and the
# names the table gives them, in table order.
CLASSES = [('ptlock_ptr(ptdesc)', 'PTE lock'),
           ('&mm->page_table_lock', 'PMD lock'),
           ('&lruvec->lru_lock', 'lruvec lock'),
           ('&zone->lock', 'zone lock'),
           ('&pcp->lock', 'pcp lock'),
           ('&vma->vm_lock->lock', 'VMA lock'),
           ('&mm->mmap_lock', 'mmap_lock')]
PTL, LRU = 'PTE lock', 'lruvec lock'
# Columns of a lock_stat line after the class name.
COLS = ['con_bounces', 'contentions', 'wait_min', 'wait_max', 'wait_total',
        'wait_avg', 'acq_bounces', 'acquisitions', 'hold_min', 'hold_max',
        'hold_total', 'hold_avg']
MAX_RATIO = 4.0


def label(cls):
    """Table name of a lock_stat class, or None for one not shown."""
    m = re.match(r'^(.*?)(?:#\d+)?(?:/\d+)?(-[RW])?$', cls)
    base, rw = m.group(1), m.group(2) or ''
    for name, lab in CLASSES:
        if base == name:
            return lab + ({'-R': ' (read)', '-W': ' (write)'}[rw] if rw else '')
    return None


def parse(lines):
    """{(mode, round): {'pages': n, 'faults': n, 'locks': {label: stats}}}"""
    runs, meta = {}, {}
    for line in lines:
        f = line.strip().split(',')
        if f[0] == 'meta' and len(f) >= 3:
            meta[f[1]] = f[2]
        if f[0] != 'locks' or len(f) < 5:
            continue
        run = runs.setdefault((f[1], int(f[2])), {'locks': {}})
        if f[3] in ('pages', 'faults'):
            run[f[3]] = int(f[4])
        elif f[3] == 'lock' and len(f) == 5 + len(COLS):
            lab = label(f[4])
            if lab is None:
                continue
            vals = dict(zip(COLS, (float(x) for x in f[5:])))
            old = run['locks'].get(lab)
            if old:         # two classes of one name: add them up
                for k in ('contentions', 'acquisitions', 'hold_total'):
                    old[k] += vals[k]
                old['hold_max'] = max(old['hold_max'], vals['hold_max'])
            else:
                run['locks'][lab] = vals
    return runs, meta


def metrics(run, lab):
    """Per-run numbers of one class (zero when it was not taken)."""
    s = run['locks'].get(lab)
    pages = run['pages']
    if not s:
        return dict(acq=0.0, con=0.0, avg=0.0, max=0.0, ns=0.0)
    return dict(acq=s['acquisitions'] / pages, con=s['contentions'],
                avg=ratio(s['hold_total'], s['acquisitions']),
                max=s['hold_max'], ns=s['hold_total'] * 1000.0 / pages)


def main():
    runs, meta = parse(bench_lines(sys.argv[1], 'locks'))
    modes = meta.get('modes', 'off on on-max').split()
    rounds = int(meta.get('rounds', '0'))
    bad = []
    for m in modes:
        for r in range(1, rounds + 1):
            run = runs.get((m, r))
            if not run or 'pages' not in run:
                bad.append('%s round %d: no run' % (m, r))
            elif PTL not in run['locks']:
                bad.append('%s round %d: no PTE lock in /proc/lock_stat' % (m, r))
    if not runs or bad:
        print('lock profile incomplete: %s' % ('; '.join(bad) or 'no data'))
        return 1
    labs = [lab for _, base in CLASSES for lab in
            sorted({k for run in runs.values() for k in run['locks']
                    if k == base or k.startswith(base + ' (')})]

    def col(m, lab, key):
        return [metrics(runs[(m, r)], lab)[key] for r in range(1, rounds + 1)]

    print('\nLock profile: CONFIG_LOCK_STAT kernel, %s thread(s) writing %s '
          'MiB each, sequentially; medians of %d rounds (worst round in '
          'brackets)' % (meta.get('threads', '?'), meta.get('size', '?'),
                         rounds))
    print('%-20s %-7s %9s %11s %11s %20s %12s' % (
        'lock', 'mode', 'acq/page', 'contentions', 'hold avg us',
        'hold max us', 'hold ns/page'))
    for lab in labs:
        for m in modes:
            mx = col(m, lab, 'max')
            print('%-20s %-7s %9.3f %11.0f %11.2f %9.2f [%8.2f] %12.1f' % (
                lab, m, statistics.median(col(m, lab, 'acq')),
                statistics.median(col(m, lab, 'con')),
                statistics.median(col(m, lab, 'avg')),
                statistics.median(mx), max(mx),
                statistics.median(col(m, lab, 'ns'))))
    for m in modes:
        fpp = [runs[(m, r)].get('faults', 0) / runs[(m, r)]['pages']
               for r in range(1, rounds + 1)]
        print('%-20s %-7s %9.3f' % ('faults/page', m, statistics.median(fpp)))

    def per_round(m, key, labs_):
        return [sum(metrics(runs[(m, r)], lab)[key] for lab in labs_) /
                max(sum(metrics(runs[('off', r)], lab)[key] for lab in labs_),
                    1e-9) for r in range(1, rounds + 1)]

    if 'off' not in modes:
        return 0
    print('\nRatios to off (median of per-round ratios, min-max, rounds):')
    verdict = []
    for m in modes:
        if m == 'off':
            continue
        ns = per_round(m, 'ns', [PTL, LRU])
        mx = per_round(m, 'max', [PTL])
        print('  %-7s PTE+lruvec hold per page %s, longest PTE-lock hold %s'
              % (m, fmt_ratios(ns), fmt_ratios(mx)))
        verdict.append('  %-7s PTE+lruvec hold time per page below off\'s: '
                       '%s; longest PTE-lock hold within %.0fx off\'s: %s' % (
                           m, 'yes' if statistics.median(ns) < 1 else 'NO',
                           MAX_RATIO,
                           'yes' if statistics.median(mx) <= MAX_RATIO
                           else 'NO'))
    print('Goals (medians):')
    print('\n'.join(verdict))
    return 0


if __name__ == '__main__':
    sys.exit(main())
