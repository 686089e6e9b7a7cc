#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the harness's own checks fail when they should.

Usage: harness-selftest.py TOP
Feeds made-up guest reports to scripts/parse-results.py,
scripts/compare-upstream.py, scripts/lock-report.py and
scripts/bench-report.py, made-up console lines to the console check of
scripts/lib.sh, SMP values to its check_smp and made-up sysfs and sysctl
files to mode() of scripts/guest/modes.sh, and prints one line per case:
  PASS<TAB>harness: WHAT
  FAIL<TAB>harness: WHAT: got ...
A case passes when the check reaches the verdict it must (FAIL for a
broken run, PASS for a good one).
"""
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = sys.argv[1] if len(sys.argv) > 1 else '.'


def frame(suite, body, rc=0, end=True):
    text = '@@AP BEGIN %s\n%s\n' % (suite, body.strip('\n'))
    if end:
        text += '@@AP END %s rc=%d\n' % (suite, rc)
    return text


def up_run(name, mode, lines, rc=0, secs=1):
    return '@@T BEGIN %s %s\n%s\n@@T END %s %s rc=%d secs=%d\n' % (
        name, mode, lines.strip('\n'), name, mode, rc, secs)


GOOD = 'TAP version 13\n1..2\nok 1 a\nok 2 b\n'


def run_script(script, args, text, extra=None):
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, 'results.log')
        with open(log, 'w') as f:
            f.write(text)
        files = []
        for name, body in (extra or {}).items():
            path = os.path.join(d, name)
            with open(path, 'w') as f:
                f.write(body)
            files.append(path)
        argv = [a.replace('@', d + '/') for a in args]
        r = subprocess.run([sys.executable, os.path.join(TOP, 'scripts', script)]
                           + argv + [log], capture_output=True, text=True)
        return r.stdout


def verdict(out):
    lines = [ln for ln in out.split('\n') if ln]
    if not lines:
        return 'none', out
    return ('FAIL' if any(ln.startswith('FAIL') for ln in lines) else 'PASS'), out


CASES = []


def case(what, want, script, args, text, extra=None):
    CASES.append((what, want, script, args, text, extra))


# parse-results.py
case('a suite that passes', 'PASS', 'parse-results.py', [],
     frame('s', GOOD))
case('a crash inside a suite (no END line)', 'FAIL', 'parse-results.py', [],
     frame('s', GOOD, end=False))
case('a suite without a TAP plan', 'FAIL', 'parse-results.py', [],
     frame('s', 'ok 1 a\nok 2 b'))
case('a suite with fewer results than its plan', 'FAIL', 'parse-results.py',
     [], frame('s', 'TAP version 13\n1..3\nok 1 a\nok 2 b'))
case('a suite that exits non-zero with only passes', 'FAIL',
     'parse-results.py', [], frame('s', GOOD, rc=1))
case('an expected suite missing from the report', 'FAIL', 'parse-results.py',
     ['--expect', 's,t'], frame('s', GOOD))

# compare-upstream.py
PAIR = up_run('x', 'on', GOOD) + up_run('x', 'off', GOOD)
case('an upstream binary with the same results on and off', 'PASS',
     'compare-upstream.py', [], frame('upstream', PAIR))
case('an upstream case that differs on and off', 'FAIL',
     'compare-upstream.py', [], frame('upstream', up_run('x', 'on', GOOD) +
                                      up_run('x', 'off', GOOD.replace('ok 2', 'not ok 2'))))
case('an upstream binary that crashes both times without TAP', 'FAIL',
     'compare-upstream.py', [], frame('upstream', up_run('x', 'on', '', 139) +
                                      up_run('x', 'off', '', 139)))
case('an upstream binary stopped by the time limit both times', 'FAIL',
     'compare-upstream.py', [], frame('upstream', up_run('x', 'on', GOOD, 124) +
                                      up_run('x', 'off', GOOD, 124)))
case('an upstream binary with fewer results than its plan', 'FAIL',
     'compare-upstream.py', [],
     frame('upstream', up_run('x', 'on', GOOD.replace('1..2', '1..3')) +
           up_run('x', 'off', GOOD.replace('1..2', '1..3'))))
FLAKY = up_run('x', 'on', GOOD.replace('ok 2', 'not ok 2')) + \
    up_run('x', 'off', GOOD) + '@@T RETRY x\n' + PAIR
case('an upstream pair that agreed only on a retry', 'FAIL',
     'compare-upstream.py', [], frame('upstream', FLAKY))
case('... unless configs/exceptions excuses it', 'PASS', 'compare-upstream.py',
     ['--exceptions', '@exc'], frame('upstream', FLAKY),
     {'exc': 'x flaky made-up reason\n'})
case('an upstream case that differs on and off, excused as the series\' behaviour',
     'PASS', 'compare-upstream.py', ['--exceptions', '@exc'],
     frame('upstream', up_run('x', 'on', GOOD.replace('ok 2', 'not ok 2'), 1) +
           up_run('x', 'off', GOOD)), {'exc': 'x differs,exit made-up reason\n'})
case('... but not another binary\'s difference', 'FAIL',
     'compare-upstream.py', ['--exceptions', '@exc'],
     frame('upstream', up_run('x', 'on', GOOD.replace('ok 2', 'not ok 2'), 1) +
           up_run('x', 'off', GOOD)), {'exc': 'y differs,exit made-up reason\n'})
AUTO_OK = '@@T STATE x auto auto\n'
case('an upstream binary with the same results with 64K "auto"', 'PASS',
     'compare-upstream.py', [],
     frame('upstream', PAIR + up_run('x', 'auto', GOOD) + AUTO_OK))
case('an upstream case that fails only with 64K "auto"', 'FAIL',
     'compare-upstream.py', [],
     frame('upstream', PAIR + up_run('x', 'auto', GOOD.replace('ok 2', 'not ok 2')) +
           AUTO_OK))
case('an upstream binary that leaves the "auto" size at another value', 'FAIL',
     'compare-upstream.py', [],
     frame('upstream', PAIR + up_run('x', 'auto', GOOD) + '@@T STATE x auto never\n'))
case('an upstream binary that dies with 64K "auto"', 'FAIL',
     'compare-upstream.py', [],
     frame('upstream', PAIR + up_run('x', 'auto', '', 1) + AUTO_OK))
KHP_OK = 'Run test: collapse_full (khugepaged:anon)\nAllocate huge page... \x1b[32mOK\x1b[0m\n'
case('khugepaged\'s coloured results, the same on, off and "auto"', 'PASS',
     'compare-upstream.py', [],
     frame('upstream', up_run('x', 'on', KHP_OK) + up_run('x', 'off', KHP_OK) +
           up_run('x', 'auto', KHP_OK) + AUTO_OK))
case('a khugepaged step that fails only with "auto"', 'FAIL',
     'compare-upstream.py', [],
     frame('upstream', up_run('x', 'on', KHP_OK) + up_run('x', 'off', KHP_OK) +
           up_run('x', 'auto', KHP_OK.replace('32mOK', '31mFail'), 1) + AUTO_OK))
case('an upstream case that fails on =y and passes on the stock kernel',
     'FAIL', 'compare-upstream.py', ['--stock', '@n.log'],
     frame('upstream', up_run('x', 'on', GOOD.replace('ok 2', 'not ok 2')) +
           up_run('x', 'off', GOOD.replace('ok 2', 'not ok 2'))),
     {'n.log': frame('upstream', up_run('x', 'stock', GOOD))})
case('an upstream binary that ran on =y but not on the stock kernel', 'FAIL',
     'compare-upstream.py', ['--stock', '@n.log'], frame('upstream', PAIR),
     {'n.log': frame('upstream', '# nothing')})
case('the upstream suite cut short', 'FAIL', 'compare-upstream.py', [],
     frame('upstream', PAIR, end=False))

# The console check of lib.sh.
CONSOLE = [
    'BUG: unable to handle page fault for address: 0000000000000010',
    'WARNING: CPU: 1 PID: 1 at mm/memory.c:100 do_anonymous_page+0x1/0x2',
    'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:',
    'rcu: INFO: rcu_sched self-detected stall on CPU',
    'rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: {',
    'watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [a:1]',
    'INFO: task a:1 blocked for more than 120 seconds.',
    'INFO: trying to register non-static key.',
    'BUG: Bad page state in process a  pfn:01234',
    'list_add corruption. prev->next should be next (0000000000000000)',
    'UBSAN: shift-out-of-bounds in mm/memory.c:1:2',
    'a: page allocation failure: order:0, mode:0x140dca',
]


def console_check():
    res = []
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, 'console.log')
        for line in CONSOLE + ['[    1.0] Run /init as init process',
                               '\tRCU CPU stall warnings timeout set to 120 (rcu_cpu_stall_timeout).']:
            with open(log, 'w') as f:
                f.write('[    0.1] booting\n[    2.0] %s\n' % line)
            r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; console_problems "$2"',
                                'x', TOP, log], capture_output=True, text=True)
            want = line in CONSOLE
            got = bool(r.stdout.strip())
            res.append(('PASS' if got == want else 'FAIL',
                        'console check %s "%s"' % ('flags' if want else 'passes',
                                                    line[:50])))
    return res


# The limits boot's allowance (OOM_VICTIM_WARNING): the OOM victim's
# faulting page, zeroed by the allocator or not, passes; anything else
# that warns is still flagged.
OOM_LINES = [
    ('ap_oom: page allocation failure: order:0, '
     'mode:0x140dca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_ZERO), nodemask=(null)', False),
    ('ap_oom: page allocation failure: order:0, '
     'mode:0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), nodemask=(null)', False),
    ('ap_oom: page allocation failure: order:4, '
     'mode:0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), nodemask=(null)', True),
    ('ap_oom: page allocation failure: order:0, '
     'mode:0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP|__GFP_NOWARN)', True),
    ('ap_oom: page allocation failure: order:0, mode:0xcc0(GFP_KERNEL)', True),
    ('WARNING: CPU: 0 PID: 1 at mm/page_alloc.c:1 warn_alloc+0x1/0x2', True),
]


def oom_allow_check():
    res = []
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, 'console.log')
        for line, want in OOM_LINES:
            with open(log, 'w') as f:
                f.write('[    0.1] booting\n[    2.0] %s\n' % line)
            r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; '
                                'CONSOLE_ALLOW=$OOM_VICTIM_WARNING console_problems "$2"',
                                'x', TOP, log], capture_output=True, text=True)
            got = bool(r.stdout.strip())
            res.append(('PASS' if got == want else 'FAIL',
                        'limits console allowance %s "%s"'
                        % ('flags' if want else 'passes', line[8:75])))
    return res


# step_table: each step lasts until the next one starts, the last until
# the end given; background rows keep their own start and end.
STEPS = ('0\tdeps\tchecking packages\n'
         '5\tbuild-1\tp1 (=y)\n'
         '305\tbuild-2\tp2 (=y)\n'
         '100\tbg:build-n\t700\tbackground: =n\n'
         '340\tguest-y\tbooting\n')
STEP_ROWS = {'deps': (0, 5, 5), 'build-1': (5, 305, 300), 'build-2': (305, 340, 35),
             'guest-y': (340, 1000, 660), 'bg:build-n': (100, 700, 600)}


def step_table_check():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'steps.tsv')
        with open(path, 'w') as f:
            f.write(STEPS)
        r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; AP_STEPS=$2 step_table 1000',
                            'x', TOP, path], capture_output=True, text=True)
    got = {}
    for ln in r.stdout.split('\n')[1:]:
        f = ln.split()
        if len(f) >= 4:
            got[f[0]] = tuple(int(x) for x in f[1:4])
    ok = got == STEP_ROWS
    return [('PASS' if ok else 'FAIL', 'step table: from, to and length of each step'
             + ('' if ok else ': got %r' % got))]


# Patches (the files they touch) and whether the kernel build may skip
# them: only Documentation/, tools/testing/ and MAINTAINERS.
PATCH_FILES = [
    (['Documentation/admin-guide/mm/a.rst', 'MAINTAINERS'], True),
    (['tools/testing/selftests/mm/a.c', 'tools/testing/selftests/mm/Makefile'], True),
    (['tools/testing/selftests/mm/a.c', 'mm/memory.c'], False),
    (['tools/objtool/check.c'], False),
    (['tools/include/linux/a.h'], False),
    (['include/linux/mm.h'], False),
    (['Makefile'], False),
]


def patch_check():
    res = []
    with tempfile.TemporaryDirectory() as d:
        for files, want in PATCH_FILES:
            path = os.path.join(d, 'p.patch')
            with open(path, 'w') as f:
                f.write('Subject: x\n---\n')
                for name in files:
                    f.write('--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-a\n+b\n' % (name, name))
            r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; patch_outside_kernel_build "$2"',
                                'x', TOP, path], capture_output=True, text=True)
            got = r.returncode == 0
            res.append(('PASS' if got == want else 'FAIL',
                        'a patch of %s %s the kernel build'
                        % (' '.join(files), 'skips' if want else 'needs')))
    return res


def lock_log(off, on, rounds=2, skip=None):
    """A locks suite: per mode (PTE-lock hold total us, longest hold us)
    for 1000 pages, and 100 us of lruvec-lock hold; @skip = (mode, round,
    what) leaves out the run ('run') or its PTE-lock line ('ptl')."""
    lines = ['TAP version 13', '1..1', 'meta,threads,2', 'meta,size,4',
             'meta,rounds,%d' % rounds, 'meta,modes,off on']
    for r in range(1, rounds + 1):
        for m, (total, mx) in (('off', off), ('on', on)):
            if skip == (m, r, 'run'):
                continue
            pre = 'locks,%s,%d,' % (m, r)
            acq = 1000 if m == 'off' else 63
            lines += [pre + 'pages,1000', pre + 'faults,%d' % acq]
            if skip != (m, r, 'ptl'):
                lines.append(pre + 'lock,ptlock_ptr(ptdesc),0,1,0.1,0.1,0.1,'
                             '0.1,5,%d,0.1,%.2f,%.2f,0.5' % (acq, mx, total))
            lines.append(pre + 'lock,&lruvec->lru_lock,0,0,0,0,0,0,5,40,'
                         '0.1,3.00,100.00,2.5')
    return frame('locks', '\n'.join(lines + ['ok 1 done']))


# lock-report.py: (what, log, exit status, strings the output must hold)
LOCK_CASES = [
    ('shorter total hold, longest hold 5x off\'s', lock_log((500, 2), (400, 10)),
     0, ["on      PTE+lruvec hold time per page below off's: yes; "
         "longest PTE-lock hold within 4x off's: NO", '0.83x']),
    ('longer total hold, longest hold 3x off\'s', lock_log((500, 2), (600, 6)),
     0, ["below off's: NO; longest PTE-lock hold within 4x off's: yes",
         '1.17x', '3.00x']),
    ('a mode without a round', lock_log((1, 1), (1, 1), skip=('on', 2, 'run')),
     1, ['on round 2: no run']),
    ('a round without the PTE lock', lock_log((1, 1), (1, 1), skip=('off', 1, 'ptl')),
     1, ['off round 1: no PTE lock']),
]


def lock_check():
    res = []
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, 'results.log')
        for what, text, rc, want in LOCK_CASES:
            with open(log, 'w') as f:
                f.write(text)
            r = subprocess.run([sys.executable, os.path.join(TOP, 'scripts', 'lock-report.py'),
                                log], capture_output=True, text=True)
            miss = [w for w in want if w not in r.stdout]
            ok = r.returncode == rc and not miss
            res.append(('PASS' if ok else 'FAIL',
                        'lock-report.py: %s: exit %d%s' % (
                            what, rc, '' if ok else ', got exit %d, missing %s: %s' % (
                                r.returncode, miss, (r.stdout + r.stderr)[-300:]))))
    return res


# A made-up make run (2 CPUs, 2 rounds): the measured boot on the
# instruction clock (bench suite: sequential write with 1 thread, sparse,
# churn, fragmented, pressure; real suite) and the thread table's boot on
# the wall clock (bench suite: 1 and 2 threads). Per mode and round the
# sequential fault/wsec and minor faults per page, sparse RSS per touched
# page, churn execs/s and system time and fragmented fault/wsec.
SEQ_MODES = ['off', 'on', 'on-max', 'mthp64k', 'mthp64k+on',
             'auto64k+on', 'populate']
SEQ = {'off': ((1000, 1000), 1.0), 'on': ((1500, 1500), 0.0625),
       'on-max': ((1700, 1700), 0.0323), 'mthp64k': ((2000, 2000), 0.0625),
       'mthp64k+on': ((3000, 4000), 0.015625),
       'auto64k+on': ((3200, 3200), 0.0125),
       'populate': ((900, 900), 1.0)}
SPARSE = {'off': 1.0, 'on': 1.0, 'on-max': 1.0, 'mthp64k': 2.0,
          'mthp64k+on': 1.0, 'auto64k+on': 1.2}
# Sparse fault/wsec per round: "on" runs at 0.95x and 0.98x of off.
SPARSE_FPW = {'off': (800, 800), 'on': (760, 784), 'on-max': (800, 800),
              'mthp64k': (1600, 1600), 'mthp64k+on': (1600, 1600),
              'auto64k+on': (800, 800)}
CHURN = {'off': 100.0, 'on': 110.0, 'on-max': 112.0, 'mthp64k': 105.0,
         'mthp64k+on': 126.0, 'auto64k+on': 115.5}
CHURN_SYS = {'off': 1.0, 'on': 0.8, 'on-max': 0.85, 'mthp64k': 0.9,
             'mthp64k+on': 0.7, 'auto64k+on': 0.75}
FRAG = {'off': 500, 'on': 700, 'mthp64k': 550, 'mthp64k+on': 825,
        'auto64k+on': 800}
REAL_MODES = ['off', 'on', 'on-max', 'mthp64k', 'mthp64k+on',
              'auto64k+on']


def bench_log(skip=(), cc_sys=None):
    """The reports of a made-up make run: (measured boot, thread boot);
    @skip holds (section, mode, round) of rows to leave out, @cc_sys the
    compiler's system time in every mode (default: 1.0 for off, 0.1 less
    for each further mode)."""
    def pft(fpw, flt, rss, pat='seq'):
        return '0.06,1,1,0.010,0.020,0.030,1000,%.0f,%.4f,%.2f,%s,t' % (
            fpw, flt, rss, pat)

    def head(clock, sections, ncpu):
        return ['TAP version 13', '1..1', '# bench: made up',
                'meta,ncpu,%d' % ncpu,
                'meta,size,64M', 'meta,rounds,2',
                'meta,modes,%s' % ' '.join(SEQ_MODES),
                'meta,clock,%s' % clock, 'meta,sections,%s' % sections]
    # The instruction-clock boot has one CPU, the thread boot two.
    lines = head('icount', 'seq:sparse:churn:frag:pressure', 1)
    threads = head('wall', 'threads', 2)
    for r in (1, 2):
        for m in SEQ_MODES:
            fpw, flt = SEQ[m]
            if ('seq', m, r) not in skip:
                lines.append('data,seq,%s,1,%d,%s' % (
                    m, r, pft(fpw[r - 1], flt, 1.0)))
            for t in (1, 2):
                if ('threads', m, r) not in skip:
                    threads.append('data,threads,%s,%d,%d,%s' % (
                        m, t, r, pft(fpw[r - 1] * t * 0.9, flt, 1.0)))
    for p in ('stride:2', 'stride:4', 'random50'):
        for r in (1, 2):
            for m in SPARSE:
                if ('sparse-' + p, m, r) not in skip:
                    lines.append('data,sparse-%s,%s,1,%d,%s' % (
                        p, m, r, pft(SPARSE_FPW[m][r - 1], 0.5, SPARSE[m], p)))
    for r in (1, 2):
        for m in CHURN:
            if ('churn', m, r) not in skip:
                lines.append('churn,%s,%d,300,3.0,%.1f,40.0,0.5,%.2f' % (
                    m, r, CHURN[m], CHURN_SYS[m]))
        for m in FRAG:
            if ('frag', m, r) not in skip:
                lines.append('data,frag,%s,1,%d,%s' % (m, r, pft(FRAG[m], 0.5, 1.0)))
        for m in ('off', 'on', 'on-max'):
            lines.append('pressure,%s,%d,2560,2560,0,100,OK' % (m, r))
    real = ['TAP version 13', '1..1', 'meta,real_clock,icount',
            'meta,real_rounds,2',
            'meta,real_modes,%s' % ' '.join(REAL_MODES),
            'meta,real_workloads,cc']
    for r in (1, 2):
        for i, m in enumerate(REAL_MODES):
            if ('real', m, r) not in skip:
                real.append('real,cc,%s,%d,%.1f,%d,0,1000,5.0,%.2f,%d,%d,0' % (
                    m, r, 10.0 - i * 0.1, 1000 - i * 100,
                    1.0 - i * 0.1 if cc_sys is None else cc_sys,
                    10 * i, 120 * i))
    return (frame('bench', '\n'.join(lines + ['ok 1 done'])) +
            frame('real', '\n'.join(real + ['ok 1 cc'])),
            frame('bench', '\n'.join(threads + ['ok 1 done'])))


# bench-report.py: (what, logs, exit status, strings its output must hold,
# (CSV file, mode, column, value) its CSV files must hold)
BENCH_CASES = [
    ('a run with the mTHP+prefault modes', bench_log(), 0,
     ['mode mthp64k+on\n', 'mode auto64k+on\n',
      'Sequential write, 1 thread, 64M, medians of 2 rounds (instruction clock',
      '1 to 2 threads, medians of 2 rounds (wall clock',
      '%26s%26s' % ('mthp64k+on', 'auto64k+on'),
      '1.75x (1.50-2.00, 2)', '1.60x (1.60-1.60, 2)',
      '0.250x (0.250-0.250, 2)', '0.200x (0.200-0.200, 2)',
      '%-10s%18s%18s' % ('stride:2', '0.50x', '0.60x'),
      '%-10s%24s%24s' % ('stride:4', '0.965x (0.950-0.980, 2)',
                         '1.000x (1.000-1.000, 2)'),
      '105.0 execs/s, 1.05x (1.05-1.05, 2) to off',
      'system 0.800s (0.80x (0.80-0.80, 2) of off)',
      '1.20x (1.20-1.20, 2) to mthp64k', '1.10x (1.10-1.10, 2) to mthp64k',
      '1.50x (1.50-1.50, 2) to mthp64k', '%24s' % 'auto64k+on',
      'Real programs (Debian\'s binaries in the guest; instruction clock',
      '%24s' % '0.900x (0.900-0.900, 2)', '  on      cc    met',
      '%*s' % (20, '120 (20)')],
     [('bench-summary.csv', ('seq', 'mthp64k+on', '1'), 'ratio_mthp64k', 1.75),
      ('bench-summary.csv', ('threads', 'auto64k+on', '2'),
       'minflt_ratio_mthp64k', 0.2),
      ('bench-summary.csv', ('sparse-stride:2', 'mthp64k+on', '1'),
       'rss_ratio_mthp64k', 0.5),
      ('bench-summary.csv', ('sparse-random50', 'on', '1'), 'ratio_off',
       0.965),
      ('bench-summary.csv', ('churn', 'mthp64k+on', '1'), 'ratio_mthp64k', 1.2),
      ('bench-summary.csv', ('churn', 'on', '1'), 'sys_ratio_off', 0.8),
      ('bench-summary.csv', ('frag', 'mthp64k+on', '1'), 'ratio_mthp64k', 1.5),
      ('bench-raw.csv', ('threads', 'auto64k+on', '2'), 'fault_per_wsec',
       5760),
      ('real-raw.csv', ('cc', 'auto64k+on', '2'), 'minflt', 500),
      ('real-summary.csv', ('cc', 'on'), 'sys_ratio', 0.9)]),
    ('a run whose compile spends as long in the kernel as off',
     bench_log(cc_sys=1.0), 0,
     ['  on      cc    MISSED: kernel time 1.000x of off'], []),
    ('a run without a sequential round of auto64k+on',
     bench_log({('seq', 'auto64k+on', 2), ('threads', 'auto64k+on', 2)}), 1,
     ['seq auto64k+on 1 thread(s): 1 of 2 rounds',
      'threads auto64k+on 2 thread(s): 1 of 2 rounds'], []),
    ('a run without a sparse round of mthp64k+on',
     bench_log({('sparse-stride:4', 'mthp64k+on', 1)}), 1,
     ['sparse-stride:4 mthp64k+on 1 thread(s): 1 of 2 rounds'], []),
    ('a run without the churn rows of mthp64k',
     bench_log({('churn', 'mthp64k', 1), ('churn', 'mthp64k', 2)}), 1,
     ['churn mthp64k: 0 of 2 rounds'], []),
    ('a run without a churn round of auto64k+on',
     bench_log({('churn', 'auto64k+on', 1)}), 1,
     ['churn auto64k+on: 1 of 2 rounds'], []),
    ('a run without a fragmented-memory round of mthp64k+on',
     bench_log({('frag', 'mthp64k+on', 2)}), 1,
     ['frag mthp64k+on 1 thread(s): 1 of 2 rounds'], []),
    ('a run without a real round of mthp64k+on',
     bench_log({('real', 'mthp64k+on', 1)}), 1,
     ['real cc mthp64k+on: 1 of 2 rounds'], []),
]


def csv_value(path, key, column):
    """@column of the first row of @path whose first columns are @key, or
    None when there is no such file, row, column or number."""
    try:
        with open(path, newline='') as fh:
            rows = list(csv.reader(fh))
        row = next(r for r in rows[1:] if tuple(r[:len(key)]) == key)
        return float(row[rows[0].index(column)])
    except (OSError, IndexError, StopIteration, ValueError):
        return None


def bench_check():
    res = []
    plot = bool(shutil.which('gnuplot'))
    for what, texts, rc, want, csvs in BENCH_CASES:
        with tempfile.TemporaryDirectory() as d:
            logs = []
            for i, text in enumerate(texts):
                logs.append(os.path.join(d, 'results-%d.log' % i))
                with open(logs[-1], 'w') as f:
                    f.write(text)
            r = subprocess.run([sys.executable, os.path.join(TOP, 'scripts', 'bench-report.py')] +
                               logs + [d], capture_output=True, text=True)
            out = r.stdout + r.stderr
            miss = [w for w in want if w not in out]
            for name, key, col, val in csvs:
                got = csv_value(os.path.join(d, name), key, col)
                if got is None or abs(got - val) > 1e-6:
                    miss.append('%s %s %s = %s' % (name, ','.join(key), col, val))
            dat = os.path.join(d, 'bench-plot.dat')
            if plot and rc == 0:
                if 'gnuplot failed' in r.stderr or r.stdout.count('Plot: ') != 2:
                    miss.append('both plots')
                elif not os.path.exists(dat) or '# auto64k+on' not in open(dat).read():
                    miss.append('auto64k+on in bench-plot.dat')
            ok = r.returncode == rc and not miss
            res.append(('PASS' if ok else 'FAIL',
                        'bench-report.py: %s: exit %d%s' % (
                            what, rc, '' if ok else ', got exit %d, missing %s: %s' % (
                                r.returncode, miss, out[-300:].replace('\n', ' | ')))))
    return res


# modes.sh: what mode() must leave in vm.anon_prefault, in
# anon_prefault_max_pages (None: left as it was) and in the 64K mTHP
# switch, and the pft flags it must print.
MODE_KNOBS = {'off': ('0', None, 'never', ''), 'on': ('1', '16', 'never', ''),
              'on-max': ('1', '31', 'never', ''),
              'mthp64k': ('0', None, 'always', '-H'),
              'mthp64k+on': ('1', '16', 'always', '-H'),
              'auto64k+on': ('1', '16', 'auto', '-H'),
              'populate': ('0', None, 'never', '-P')}


def modes_check():
    """mode() of modes.sh on made-up sysfs and sysctl files, for every mode
    MODES= of bench.sh and realwork.sh names."""
    res = []
    named = set()
    for name in ('bench.sh', 'realwork.sh'):
        with open(os.path.join(TOP, 'scripts', 'guest', name)) as f:
            m = re.search(r'^MODES="([^"]*)"', f.read(), re.M)
        named.update(m.group(1).split() if m else ['(no MODES= in %s)' % name])
    with tempfile.TemporaryDirectory() as d:
        for sub in ('hugepages-64kB', 'hugepages-2048kB'):
            os.makedirs(os.path.join(d, 'thp', sub))
        for mode in list(MODE_KNOBS) + sorted(named - set(MODE_KNOBS)):
            for path, val in (('thp/enabled', 'x'), ('thp/hugepages-64kB/enabled', 'x'),
                              ('thp/hugepages-2048kB/enabled', 'x'), ('pf', 'x'),
                              ('maxp', '7')):
                with open(os.path.join(d, path), 'w') as f:
                    f.write(val + '\n')
            r = subprocess.run(['sh', '-c', '. "$1/scripts/guest/modes.sh"; '
                                'THP=$2/thp PF=$2/pf MAXP=$2/maxp; f=$(mode "$3"); '
                                'echo "$f|$(cat $PF)|$(cat $MAXP)|'
                                '$(cat $THP/hugepages-64kB/enabled)|'
                                '$(cat $THP/enabled) $(cat $THP/hugepages-2048kB/enabled)"',
                                'x', TOP, d, mode], capture_output=True, text=True)
            knobs = MODE_KNOBS.get(mode)
            if knobs is None:
                res.append(('FAIL', 'modes.sh: %s, named in MODES=, has no known knobs'
                            % mode))
                continue
            pf, maxp, thp, flags = knobs
            want = '%s|%s|%s|%s|never never' % (flags, pf, maxp or '7', thp)
            got = r.stdout.strip()
            res.append(('PASS' if got == want and not r.stderr else 'FAIL',
                        'modes.sh: mode %s sets anon_prefault=%s%s, 64K mTHP %s, '
                        'pft flags "%s"%s' % (
                            mode, pf, ', max_pages=%s' % maxp if maxp else '', thp,
                            flags, '' if got == want and not r.stderr else
                            ': got %s %s' % (got, r.stderr.strip()[:200]))))
    return res


def smp_check():
    """check_smp refuses more virtual CPUs than host CPUs, and nonsense."""
    res = []
    host = os.cpu_count()
    try:
        host = len(os.sched_getaffinity(0))
    except AttributeError:
        pass
    for smp, want in (('1', True), (str(host), True), (str(host + 1), False),
                      ('0', False), ('two', False)):
        r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; SMP=$2 check_smp',
                            'x', TOP, smp], capture_output=True, text=True)
        got = r.returncode == 0
        said = 'SMP=%s' % smp in r.stderr
        ok = got == want and (want or said)
        res.append(('PASS' if ok else 'FAIL',
                     'check_smp %s SMP=%s (host: %d CPUs)%s' % (
                         'takes' if want else 'refuses', smp, host,
                         '' if ok else ': ' + r.stderr.strip()[:200])))
    return res


# run_clock and qemu_accel: (ACCEL, CLOCK, run_clock's answer or None when
# it must refuse, a string qemu_accel "$answer" must print).
CLOCK_CASES = [('tcg', '', 'icount', '-icount shift=0,sleep=off'),
               ('tcg', 'icount', 'icount', '-accel tcg,thread=single'),
               ('tcg', 'wall', 'wall', '-accel tcg,thread=multi'),
               ('kvm', '', 'wall', '-accel kvm'),
               ('kvm', 'icount', None, ''),
               ('tcg', 'cycles', None, ''),
               ('hvf', '', None, '')]


# qemu_accel CLOCK under TCG: the end of what it prints (the CPU model,
# which prices a page clear on the instruction clock).
ACCEL_CASES = [('icount', '-icount shift=0,sleep=off -cpu max,la57=off'),
               ('icount-stosq',
                '-icount shift=0,sleep=off -cpu max,la57=off,-erms,-fsrm')]


def clock_check():
    """make run's clock: icount under TCG unless CLOCK=wall, wall under KVM,
    and the options QEMU gets for each; nonsense is refused by name. The
    second instruction clock boots a CPU model without ERMS."""
    res = []
    for clock, tail in ACCEL_CASES:
        r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; '
                            'ACCEL=tcg qemu_accel "$2"', 'x', TOP, clock],
                           capture_output=True, text=True)
        ok = r.returncode == 0 and r.stdout.strip().endswith(tail)
        res.append(('PASS' if ok else 'FAIL',
                    'qemu_accel %s: ends with %r%s' % (
                        clock, tail, '' if ok else ': got %r' % r.stdout.strip()[:200])))
    for accel, clock, want, opts in CLOCK_CASES:
        r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; c=$(ACCEL=$2 CLOCK=$3 run_clock) '
                            '&& echo "$c" && ACCEL=$2 qemu_accel "$c"',
                            'x', TOP, accel, clock], capture_output=True, text=True)
        lines = r.stdout.split('\n')
        if want is None:
            ok = r.returncode != 0 and ('CLOCK=' in r.stderr or 'ACCEL=' in r.stderr)
        else:
            ok = r.returncode == 0 and lines[0] == want and opts in r.stdout
        res.append(('PASS' if ok else 'FAIL',
                    'run_clock ACCEL=%s CLOCK=%s: %s%s' % (
                        accel, clock or '(unset)', want or 'refused',
                        '' if ok else ': got %r %r' % (r.stdout.strip()[:200],
                                                        r.stderr.strip()[:200]))))
    return res


# (series' first line, tree version, offsets allowed): offsets only on
# another point release than the one the series was exported on.
OFFSET_CASES = [
    ('# anon-prefault series on Linux 6.12.118; generated by make export',
     '6.12.118', False),
    ('# anon-prefault series on Linux 6.12.118; generated by make export',
     '6.12.119', True),
    ('# anon-prefault series on Linux 6.12.118; generated by make export',
     '6.12.117', True),
    ('# anon-prefault series on Linux 6.12; generated by make export',
     '6.12.119', True),
    ('# anon-prefault series on Linux 6.12; generated by make export',
     '6.12', False),
    ('# a series that does not say its base', '6.12.119', False)]


def offsets_check():
    """The apply step accepts offsets only where the tree is another
    release than the series was exported on."""
    res = []
    with tempfile.TemporaryDirectory() as d:
        for head, ver, want in OFFSET_CASES:
            series = os.path.join(d, 'series')
            with open(series, 'w') as f:
                f.write(head + '\n0001-x.patch\n')
            r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; '
                                'offsets_allowed "$2" "$3"', 'x', TOP, ver,
                                series], capture_output=True, text=True)
            got = r.returncode == 0
            res.append(('PASS' if got == want else 'FAIL',
                        'offsets_allowed: tree %s, series %r: %s' % (
                            ver, head[:48], 'allowed' if want else 'refused')))
    return res

# The sparse and W=1 comparison of the build matrix (new_warnings in
# lib.sh): a warning of the series' files that the base log lacks is
# new, wherever the series moved the line; others are not.
BASE_LOG = """\
  CC      mm/memory.o
../../src/mm/memory.c:100:5: warning: symbol 'x' was not declared. Should it be static?
../../src/mm/rmap.c:7:1: warning: context imbalance in 'f' - wrong count at exit
../../src/mm/page_alloc.c:1:1: warning: not ours
"""
WARN_CASES = [
    ('the base log again', BASE_LOG, False),
    ('the same warnings on other lines',
     BASE_LOG.replace(':100:5:', ':180:5:').replace(':7:1:', ':70:2:'), False),
    ('a new warning in a file the series changes',
     BASE_LOG + '../../src-top/mm/memory.c:9:2: warning: unused variable \'addr\' [-Wunused-variable]\n',
     True),
    ('a warning of the base tree twice where the base has it once',
     BASE_LOG + '../../src-top/mm/rmap.c:9:1: warning: context imbalance in \'f\' - wrong count at exit\n',
     True),
    ('an error in a file the series adds',
     BASE_LOG + '/x/mm/anon_prefault.c:3:3: error: implicit declaration of function \'g\'\n',
     True),
    ('a new warning in a file the series does not change',
     BASE_LOG + '../../src/mm/page_alloc.c:2:1: warning: not ours either\n', False),
]


def warnings_check():
    res = []
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, 'base.log')
        top = os.path.join(d, 'top.log')
        with open(base, 'w') as f:
            f.write(BASE_LOG)
        for what, text, want in WARN_CASES:
            with open(top, 'w') as f:
                f.write(text)
            r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; new_warnings "$2" "$3" '
                                'mm/memory.c mm/rmap.c mm/anon_prefault.c',
                                'x', TOP, base, top], capture_output=True, text=True)
            got = bool(r.stdout.strip())
            res.append(('PASS' if got == want else 'FAIL',
                        'matrix warnings: %s: %s' % (what, 'new' if want else 'none new')))
    return res


# Verdicts that cannot be lost (lib.sh): a checker that crashes or says
# nothing, a matrix that dies halfway or prints nothing, and a series whose
# tree lacks the feature each give a FAIL line.
VERDICT_CASES = [
    ('checker that prints its lines', 'checker_lines t python3 -c "print(\'PASS\\tx\')"', False),
    ('checker that crashes after a PASS',
     'checker_lines t python3 -c "print(\'PASS\\tx\'); raise SystemExit(1)"', True),
    ('checker that prints nothing', 'checker_lines t python3 -c "pass"', True),
    ('matrix that finished', 'printf "PASS\\tc\\n" >"$d/t"; echo 0 >"$d/rc"; '
     'matrix_lines "$d/t" "$d/rc"', False),
    ('matrix that died halfway', 'printf "PASS\\tc\\n" >"$d/t"; echo 1 >"$d/rc"; '
     'matrix_lines "$d/t" "$d/rc"', True),
    ('matrix that did not finish', 'rm -f "$d/t" "$d/rc"; matrix_lines "$d/t" "$d/rc"', True),
    ('matrix that printed nothing', ': >"$d/t"; echo 0 >"$d/rc"; matrix_lines "$d/t" "$d/rc"',
     True),
    ('series whose tree lacks the feature', 'feature_lines 17 0', True),
    ('series whose tree has the feature', 'feature_lines 17 1', False),
    ('empty series (the base tree)', 'feature_lines 0 0', False),
    ('configs/exceptions as it is', 'exceptions_check', False),
    ('an exception of a kind nobody reads', 'printf -- "- skpi: a b why\\n" >"$d/e"; '
     'exceptions_check "$d/e"', True),
    ('figures quoted as RESULTS has them',
     'mkdir -p "$d/f/patches"; echo "1.50x, 12%, 5259 instr/page" >"$d/f/RESULTS"; '
     'echo "runs at 1.50x" >"$d/f/README"; echo "12%" >"$d/f/HARNESS"; '
     'printf "Subject: x\\n\\n5259 instructions at 1.50x\\n---\\n 9.99x\\n" '
     '>"$d/f/patches/0001-x.patch"; '
     'checker_lines figures python3 "$TOP/scripts/check-figures.py" "$d/f"', False),
    ('a changelog figure that RESULTS does not have',
     'printf "Subject: x\\n\\nat 1.51x\\n---\\n" >"$d/f/patches/0001-x.patch"; '
     'checker_lines figures python3 "$TOP/scripts/check-figures.py" "$d/f"', True),
    ('a README figure that RESULTS does not have',
     'printf "Subject: x\\n\\nat 1.50x\\n---\\n" >"$d/f/patches/0001-x.patch"; '
     'echo "5260 instructions" >"$d/f/README"; '
     'checker_lines figures python3 "$TOP/scripts/check-figures.py" "$d/f"', True),
    ('a figure check without its documents',
     'rm -f "$d/f/HARNESS"; '
     'checker_lines figures python3 "$TOP/scripts/check-figures.py" "$d/f"', True),
    ('an upstream exception compare-upstream.py reads',
     'checker_lines upstream python3 "$TOP/scripts/compare-upstream.py" '
     '--exceptions <(echo "x flaky why") "$d/up.log"', False),
    ('an upstream exception compare-upstream.py cannot read',
     'checker_lines upstream python3 "$TOP/scripts/compare-upstream.py" '
     '--exceptions <(echo "x sometimes why") "$d/up.log"', True),
]


def verdict_check():
    res = []
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, 'up.log'), 'w') as f:
            f.write(frame('upstream', PAIR))
        for what, cmd, want in VERDICT_CASES:
            r = subprocess.run(['bash', '-c', '. "$1/scripts/lib.sh"; d=$2; ' + cmd,
                                'x', TOP, d], capture_output=True, text=True)
            got = any(l.startswith('FAIL\t') for l in r.stdout.split('\n'))
            ok = r.returncode == 0 and got == want
            res.append(('PASS' if ok else 'FAIL',
                        'verdicts: %s: %s%s' % (what, 'a FAIL line' if want else 'no FAIL line',
                                                '' if ok else ': got %r' % r.stdout.strip()[:200])))
    return res

def main():
    for what, want, script, args, text, extra in CASES:
        got, out = verdict(run_script(script, args, text, extra))
        if got == want:
            print('PASS\tharness: %s: %s says %s' % (script, what, want))
        else:
            print('FAIL\tharness: %s: %s: want %s, got %s: %s'
                  % (script, what, want, got, out.strip().replace('\n', ' | ')[:300]))
    for st, what in (verdict_check() + console_check() + oom_allow_check() + step_table_check() +
                     offsets_check() + warnings_check() +
                     patch_check() + lock_check() +
                     bench_check() + modes_check() + smp_check() +
                     clock_check()):
        print('%s\tharness: %s' % (st, what))
    return 0


if __name__ == '__main__':
    sys.exit(main())
