#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the upstream mm selftests run with vm.anon_prefault=1 and =0,
and against the stock (CONFIG_ANON_PREFAULT=n) kernel.

Usage: compare-upstream.py [--exceptions FILE] [--stock N_RESULTS_LOG] RESULTS_LOG
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
passes on the stock kernel. configs/exceptions may excuse the exit
status, the plan or flakiness of a named binary, with the reason, or
(differs) a case whose result the series changes, where the reason says
why that is the series' behaviour and not a bug; FILE holds its
"upstream" lines (scripts/lib.sh's exceptions upstream):
  NAME KIND[,KIND] why     (KIND: exit, plan, flaky, differs)
and those excuses are named in the PASS line. Cases that fail both on and
off are listed in the PASS line, not hidden. A binary that also ran with
the 64 KiB size at "auto" (mode auto) gets a line of its own: its cases
must have the results of the on run, and the size must read "auto" after
it ("@@T STATE NAME auto VALUE").
"""
import re
import sys

TAP = re.compile(r'^(?:# )?(not ok|ok)\s+(\d+)\s*-?\s*(.*)$')
PLAN = re.compile(r'^(?:# )?1\.\.(\d+)')
# uffd-unit-tests: "Testing NAME on MEM... done|skipped [...]|failed"
UFFD = re.compile(r'^Testing (.+?)\.\.\. ?(done|skipped|failed|ERROR)?')
# khugepaged: "Run test: NAME (CONTEXT:OPS)", then "STEP... <colour>WORD"
# with green for a pass, red for a failure, yellow for a skip.
KHP_TEST = re.compile(r'^Run test: (.+)$')
KHP = re.compile(r'^(.*?)\s*\x1b\[(3[123])m(.*?)\x1b\[0m$')
TIMEOUT_RC = (124, 143)
OK_RC = (0, 4)          # kselftest: pass, skip
EXCUSES = ('exit', 'plan', 'flaky', 'differs')


def read_report(path):
    """A guest report with its serial line ends (CR LF, and a bare CR of a
    progress line) as newlines."""
    with open(path, encoding='utf-8', errors='replace') as f:
        return f.read().replace('\r\n', '\n').replace('\r', '\n')


def retry_counts(body, tag):
    """How many times each binary was run again: its "@@T TAG NAME" lines."""
    counts = {}
    for m in re.finditer(r'^@@T %s (\S+)$' % re.escape(tag), body, re.M):
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return counts


def suite_text(text, name):
    m = re.search(r'^@@AP BEGIN %s\n(.*?)^@@AP END %s rc=' % (name, name),
                  text, re.S | re.M)
    return m.group(1) if m else None


def parse_run(text, rc, secs):
    cases = {}
    plan = None
    ntap = 0
    test = ''
    for line in text.split('\n'):
        line = line.strip()
        k = KHP_TEST.match(line)
        if k:
            test = k.group(1) + ': '
            continue
        k = KHP.match(line)
        if k:
            key = test + (k.group(1) or k.group(3))
            while key in cases:
                key += "'"
            cases[key] = {'32': 'pass', '31': 'fail', '33': 'skip'}[k.group(2)]
            continue
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


def case_differences(a, b, names=('on', 'off')):
    """The cases whose results differ between runs @a and @b, named
    @names (on and off unless said)."""
    return ['%s %s=%s %s=%s' % (k, names[0], a['cases'].get(k, 'missing'),
                                names[1], b['cases'].get(k, 'missing'))
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
            m = re.match(r'^(\S+) ((?:%s)(?:,(?:%s))*)\s+(.*)$'
                         % ('|'.join(EXCUSES), '|'.join(EXCUSES)), line.rstrip())
            if not m:
                sys.exit('compare-upstream.py: an exception that is not '
                         '"NAME KIND[,KIND] why": %r' % line.rstrip())
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
    exc_file = stock_log = None
    while len(args) > 1 and args[0] in ('--exceptions', '--stock'):
        if args[0] == '--exceptions':
            exc_file = args[1]
        else:
            stock_log = args[1]
        args = args[2:]
    text = read_report(args[0])
    excuses = read_excuses(exc_file)
    body = suite_text(text, 'upstream')
    if body is None:
        print('FAIL\tupstream: the upstream suite did not finish')
        return 0
    stock = None
    if stock_log:
        sbody = suite_text(read_report(stock_log), 'upstream')
        if sbody is None:
            print('FAIL\tupstream: the stock (=n) kernel\'s upstream suite did not finish')
        else:
            stock = {k: v[-1] for k, v in binaries(sbody, 'stock').items()}
    on_runs, off_runs = binaries(body, 'on'), binaries(body, 'off')
    on = {k: v[-1] for k, v in on_runs.items()}
    off = {k: v[-1] for k, v in off_runs.items()}
    retries = retry_counts(body, 'RETRY')
    for name in sorted(set(on) | set(off)):
        a, b = on.get(name), off.get(name)
        if a is None or b is None:
            print('FAIL\tupstream: %s: ran only %s' % (name, 'on' if a else 'off'))
            continue
        bad, excused = [], {}
        problems = run_problems(a, 'on') + run_problems(b, 'off')
        agreed = not case_differences(a, b) and a['rc'] == b['rc']
        if retries.get(name) and agreed:
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
        if diff and excuses.get((name, 'differs')):
            excused.setdefault(excuses[(name, 'differs')], []).append(
                'on/off differ: ' + '; '.join(diff[:8]))
        elif diff:
            bad.insert(0, 'differs%s: %s'
                       % (' after %d retries' % retries[name]
                          if retries.get(name) else '', '; '.join(diff[:8])))
        # A case the series breaks whatever the sysctl says: it fails on
        # the =y kernel and passes on the stock one.
        if s is not None:
            worse = [k for k in sorted(set(a['cases']) | set(b['cases']))
                     if 'fail' in (a['cases'].get(k), b['cases'].get(k)) and
                     s['cases'].get(k) == 'pass']
            if worse and excuses.get((name, 'differs')):
                excused.setdefault(excuses[(name, 'differs')], []).append(
                    'fails on =y, passes on the stock kernel: ' + '; '.join(worse[:8]))
            elif worse:
                bad.append('fails on =y but passes on the stock kernel: %s'
                           % '; '.join(worse[:8]))
        if bad:
            print('FAIL\tupstream: %s: %s' % (name, '; '.join(bad)))
            continue
        cnt = {st: sum(1 for v in a['cases'].values() if v == st)
               for st in ('pass', 'skip', 'fail')}
        both = [k for k, v in a['cases'].items()
                if v == 'fail' and b['cases'].get(k) == 'fail']
        msg = ('%s%s: %d pass, %d skip, %d fail (%ss/%ss)'
               % ('results on and off differ as configs/exceptions says'
                  if diff else 'same results on and off',
                  ' and stock' if s is not None and not diff else '',
                  cnt['pass'], cnt['skip'], cnt['fail'], a['secs'], b['secs']))
        if both:
            msg += '; fails on both (stock behaviour here): ' + '; '.join(both[:6])
        if excused:
            msg += ''.join('; excused by configs/exceptions: %s (%s)'
                           % (', '.join(v), k.rstrip('.'))
                           for k, v in excused.items())
        print('PASS\tupstream: %s: %s' % (name, msg))
    if stock is not None:
        for name in sorted(set(stock) - set(on) - set(off)):
            print('FAIL\tupstream: %s: ran only on the stock kernel' % name)
    compare_auto(body, on, excuses)
    return 0


def compare_auto(body, on, excuses):
    """The runs with the 64 KiB size at "auto" against the on runs: the same
    cases, and the size's setting "auto" again after the binary."""
    auto_runs = binaries(body, 'auto')
    state = dict(re.findall(r'^@@T STATE (\S+) auto (.*)$', body, re.M))
    retries = retry_counts(body, 'RETRY-AUTO')
    for name in sorted(auto_runs):
        x, a = auto_runs[name][-1], on.get(name)
        if a is None:
            print('FAIL\tupstream: %s: auto: ran without an on run' % name)
            continue
        bad, excused = [], []
        problems = run_problems(x, 'auto')
        diff = case_differences(a, x, ('on', 'auto'))
        if retries.get(name) and not diff and a['rc'] == x['rc']:
            problems.append(('flaky', 'auto agreed with on only after %d '
                             'retries' % retries[name]))
        for kind, msg in problems:
            if excuses.get((name, kind)):
                excused.append(msg)
            else:
                bad.append(msg)
        if diff:
            bad.insert(0, 'differs: %s' % '; '.join(diff[:8]))
        if state.get(name) != 'auto':
            bad.append('hugepages-64kB/enabled reads %r after it, not "auto"'
                       % state.get(name))
        if bad:
            print('FAIL\tupstream: %s: with 64K "auto": %s' % (name, '; '.join(bad)))
        else:
            print('PASS\tupstream: %s: with 64K "auto": the same %d case results '
                  'as on, and the size is "auto" after it%s'
                  % (name, len(x['cases']),
                     '; excused: ' + ', '.join(excused) if excused else ''))


if __name__ == '__main__':
    sys.exit(main())
