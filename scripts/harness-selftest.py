#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Check that the harness's own checks fail when they should.

Usage: harness-selftest.py TOP
Feeds made-up guest reports to scripts/parse-results.py,
scripts/compare-upstream.py and scripts/lock-report.py, made-up console
lines to the console check of scripts/lib.sh and SMP values to its
check_smp, and prints one line per case:
  PASS<TAB>harness: WHAT
  FAIL<TAB>harness: WHAT: got ...
A case passes when the check reaches the verdict it must (FAIL for a
broken run, PASS for a good one).
"""
import os
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
case('... unless the README excuses it', 'PASS', 'compare-upstream.py',
     ['--readme', '@README'], frame('upstream', FLAKY),
     {'README': '- upstream: x flaky made-up reason\n'})
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
        for line in CONSOLE + ['[    1.0] Run /init as init process']:
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


def main():
    for what, want, script, args, text, extra in CASES:
        got, out = verdict(run_script(script, args, text, extra))
        if got == want:
            print('PASS\tharness: %s: %s says %s' % (script, what, want))
        else:
            print('FAIL\tharness: %s: %s: want %s, got %s: %s'
                  % (script, what, want, got, out.strip().replace('\n', ' | ')[:300]))
    for st, what in (console_check() + patch_check() + lock_check() +
                     smp_check()):
        print('%s\tharness: %s' % (st, what))
    return 0


if __name__ == '__main__':
    sys.exit(main())
