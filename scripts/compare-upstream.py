#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the upstream mm selftests run with vm.anon_prefault=1 and =0,
and against the stock (CONFIG_ANON_PREFAULT=n) kernel.

Usage: compare-upstream.py [--readme README] [--stock N_RESULTS_LOG] RESULTS_LOG
Reads the guest suite "upstream" (see scripts/guest/upstream.sh): for each
binary the last pair of runs, on and off, and how many times the pair was
run again because it disagreed. With --stock, the same suite of the =n
kernel's report (one run per binary, mode "stock"). Prints one line per
test binary:
  PASS<TAB>upstream: NAME: same results on and off (...)
  FAIL<TAB>upstream: NAME: differs: CASE on=X off=Y; ...
A binary fails when its cases differ on and off, when either run exits
other than 0 (pass) or 4 (skip), when a run's results do not match its
TAP plan, when it was stopped by the time limit, when the pair agreed only
on a retry (flaky), or when a case that fails on the =y kernel (on or off)
passes on the stock kernel. The README may excuse the exit status, the
plan or flakiness of a named binary, with the reason, in lines
  - upstream: NAME KIND[,KIND] why     (KIND: exit, plan, flaky)
and those excuses are named in the PASS line. Cases that fail both on and
off are listed in the PASS line, not hidden.
"""
import re
import sys

TAP = re.compile(r'^(?:# )?(not ok|ok)\s+(\d+)\s*-?\s*(.*)$')
PLAN = re.compile(r'^(?:# )?1\.\.(\d+)')
# uffd-unit-tests: "Testing NAME on MEM... done|skipped [...]|failed"
UFFD = re.compile(r'^Testing (.+?)\.\.\. ?(done|skipped|failed|ERROR)?')
TIMEOUT_RC = (124, 143)
OK_RC = (0, 4)          # kselftest: pass, skip
EXCUSES = ('exit', 'plan', 'flaky')


def suite_text(text, name):
    m = re.search(r'^@@AP BEGIN %s\n(.*?)^@@AP END %s rc=' % (name, name),
                  text, re.S | re.M)
    return m.group(1) if m else None


def parse_run(text, rc, secs):
    cases = {}
    plan = None
    ntap = 0
    for line in text.split('\n'):
        line = line.strip()
        u = UFFD.match(line)
        if u:
            st = {'done': 'pass', 'skipped': 'skip', 'failed': 'fail',
                  'ERROR': 'error'}.get(u.group(2), 'timeout')
            cases[u.group(1)] = st
            continue
        p = PLAN.match(line)
        if p and plan is None:
            plan = int(p.group(1))
            continue
        t = TAP.match(line)
        if not t:
            continue
        ntap += 1
        ok, num, desc = t.groups()
        desc = desc.strip()
        if re.search(r'#\s*SKIP', desc, re.I):
            st = 'skip'
        elif ok == 'ok':
            st = 'pass'
        else:
            st = 'fail'
        key = re.sub(r'\s*#.*$', '', desc) or num
        while key in cases:
            key += "'"
        cases[key] = st
    return {'cases': cases, 'rc': rc, 'secs': secs, 'plan': plan, 'ntap': ntap}


def binaries(body, mode):
    out = {}
    for m in re.finditer(r'^@@T BEGIN (\S+) %s\n(.*?)^@@T END \1 %s rc=(\d+) secs=(\d+)'
                         % (mode, mode), body, re.S | re.M):
        out.setdefault(m.group(1), []).append(
            parse_run(m.group(2), int(m.group(3)), m.group(4)))
    return out


def case_differences(a, b):
    """The cases whose results differ between runs @a (on) and @b (off)."""
    return ['%s on=%s off=%s' % (k, a['cases'].get(k, 'missing'),
                                 b['cases'].get(k, 'missing'))
            for k in sorted(set(a['cases']) | set(b['cases']))
            if a['cases'].get(k, 'missing') != b['cases'].get(k, 'missing')]


def differences(a, b):
    return case_differences(a, b) or \
        ['exit status on %d off %d' % (a['rc'], b['rc'])]


def read_excuses(path):
    exc = {}
    if not path:
        return exc
    with open(path, encoding='utf-8') as f:
        for line in f:
            m = re.match(r'^- upstream: (\S+) ((?:%s)(?:,(?:%s))*)\s+(.*)$'
                         % ('|'.join(EXCUSES), '|'.join(EXCUSES)), line.rstrip())
            if m:
                for kind in m.group(2).split(','):
                    exc[(m.group(1), kind)] = m.group(3)
    return exc


def run_problems(run, mode):
    """Exit status and plan problems of one run, as (kind, text)."""
    out = []
    if run['rc'] in TIMEOUT_RC:
        out.append(('timeout', '%s stopped by the time limit after %ss'
                    % (mode, run['secs'])))
    elif run['rc'] not in OK_RC:
        out.append(('exit', '%s exited %d' % (mode, run['rc'])))
    if run['plan'] is not None and run['plan'] != run['ntap']:
        out.append(('plan', '%s planned %d results, got %d'
                    % (mode, run['plan'], run['ntap'])))
    elif run['plan'] is None and run['ntap']:
        out.append(('plan', '%s printed %d results without a plan'
                    % (mode, run['ntap'])))
    return out


def main():
    args = sys.argv[1:]
    readme = stock_log = None
    while len(args) > 1 and args[0] in ('--readme', '--stock'):
        if args[0] == '--readme':
            readme = args[1]
        else:
            stock_log = args[1]
        args = args[2:]
    text = open(args[0], encoding='utf-8', errors='replace').read()
    text = text.replace('\r', '')
    excuses = read_excuses(readme)
    body = suite_text(text, 'upstream')
    if body is None:
        print('FAIL\tupstream: the upstream suite did not finish')
        return 0
    stock = None
    if stock_log:
        stext = open(stock_log, encoding='utf-8', errors='replace').read()
        sbody = suite_text(stext.replace('\r', ''), 'upstream')
        if sbody is None:
            print('FAIL\tupstream: the stock (=n) kernel\'s upstream suite did not finish')
        else:
            stock = {k: v[-1] for k, v in binaries(sbody, 'stock').items()}
    on_runs, off_runs = binaries(body, 'on'), binaries(body, 'off')
    on = {k: v[-1] for k, v in on_runs.items()}
    off = {k: v[-1] for k, v in off_runs.items()}
    retries = {}
    for m in re.finditer(r'^@@T RETRY (\S+)', body, re.M):
        retries[m.group(1)] = retries.get(m.group(1), 0) + 1
    for name in sorted(set(on) | set(off)):
        a, b = on.get(name), off.get(name)
        if a is None or b is None:
            print('FAIL\tupstream: %s: ran only %s' % (name, 'on' if a else 'off'))
            continue
        bad, excused = [], {}
        problems = run_problems(a, 'on') + run_problems(b, 'off')
        if retries.get(name):
            first = differences(on_runs[name][0], off_runs[name][0])
            problems.append(('flaky', 'the on/off pair disagreed %d time(s) '
                             'before agreeing, first: %s'
                             % (retries[name], '; '.join(first[:3]))))
        s = stock.get(name) if stock is not None else None
        if stock is not None and s is None:
            bad.append('did not run on the stock (=n) kernel')
        if s is not None:
            problems += [(k, 'stock ' + t) for k, t in run_problems(s, '')]
        for kind, msg in problems:
            why = excuses.get((name, kind))
            if why:
                excused.setdefault(why, []).append(msg)
            else:
                bad.append(msg)
        diff = case_differences(a, b)
        if diff:
            bad.insert(0, 'differs%s: %s'
                       % (' after %d retries' % retries[name]
                          if retries.get(name) else '', '; '.join(diff[:8])))
        # A case the series breaks whatever the sysctl says: it fails on
        # the =y kernel and passes on the stock one.
        if s is not None:
            worse = [k for k in sorted(set(a['cases']) | set(b['cases']))
                     if 'fail' in (a['cases'].get(k), b['cases'].get(k)) and
                     s['cases'].get(k) == 'pass']
            if worse:
                bad.append('fails on =y but passes on the stock kernel: %s'
                           % '; '.join(worse[:8]))
        if bad:
            print('FAIL\tupstream: %s: %s' % (name, '; '.join(bad)))
            continue
        cnt = {st: sum(1 for v in a['cases'].values() if v == st)
               for st in ('pass', 'skip', 'fail')}
        both = [k for k, v in a['cases'].items()
                if v == 'fail' and b['cases'].get(k) == 'fail']
        msg = ('same results on and off%s: %d pass, %d skip, %d fail (%ss/%ss)'
               % (' and stock' if s is not None else '',
                  cnt['pass'], cnt['skip'], cnt['fail'], a['secs'], b['secs']))
        if both:
            msg += '; fails on both (stock behaviour here): ' + '; '.join(both[:6])
        if excused:
            msg += ''.join('; excused by the README: %s (%s)'
                           % (', '.join(v), k.rstrip('.'))
                           for k, v in excused.items())
        print('PASS\tupstream: %s: %s' % (name, msg))
    if stock is not None:
        for name in sorted(set(stock) - set(on) - set(off)):
            print('FAIL\tupstream: %s: ran only on the stock kernel' % name)
    return 0


if __name__ == '__main__':
    sys.exit(main())
