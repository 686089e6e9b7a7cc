#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Compare the upstream mm selftests run with vm.anon_prefault=1 and =0.

Usage: compare-upstream.py RESULTS_LOG
Reads the guest suite "upstream" (see scripts/guest/upstream.sh): for each
binary the last pair of runs, on and off, and how many times the pair was
run again because it disagreed. Prints one line per test binary:
  PASS<TAB>upstream: NAME: same results on and off (...)
  FAIL<TAB>upstream: NAME: differs: CASE on=X off=Y; ...
Cases that fail both on and off are listed in the PASS line, not hidden.
A binary without TAP output is compared by its exit status.
"""
import re
import sys

TAP = re.compile(r'^(?:# )?(not ok|ok)\s+(\d+)\s*-?\s*(.*)$')
# uffd-unit-tests: "Testing NAME on MEM... done|skipped [...]|failed"
UFFD = re.compile(r'^Testing (.+?)\.\.\. ?(done|skipped|failed|ERROR)?')
TIMEOUT_RC = (124, 143)


def suite_text(text, name):
    m = re.search(r'^@@AP BEGIN %s\n(.*?)^@@AP END %s rc=' % (name, name),
                  text, re.S | re.M)
    return m.group(1) if m else None


def binaries(body, mode):
    out = {}
    for m in re.finditer(r'^@@T BEGIN (\S+) %s\n(.*?)^@@T END \1 %s rc=(\d+) secs=(\d+)'
                         % (mode, mode), body, re.S | re.M):
        name, text, rc, secs = m.group(1), m.group(2), int(m.group(3)), m.group(4)
        cases = {}
        for line in text.split('\n'):
            u = UFFD.match(line.strip())
            if u:
                st = {'done': 'pass', 'skipped': 'skip', 'failed': 'fail',
                      'ERROR': 'error'}.get(u.group(2), 'timeout')
                cases[u.group(1)] = st
                continue
            t = TAP.match(line.strip())
            if not t:
                continue
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
        out.setdefault(name, []).append({'cases': cases, 'rc': rc, 'secs': secs})
    return out


def differences(a, b):
    return ['%s on=%s off=%s' % (k, a['cases'].get(k, 'missing'),
                                 b['cases'].get(k, 'missing'))
            for k in sorted(set(a['cases']) | set(b['cases']))
            if a['cases'].get(k, 'missing') != b['cases'].get(k, 'missing')] or \
        ['exit status on %d off %d' % (a['rc'], b['rc'])]


def main():
    text = open(sys.argv[1], encoding='utf-8', errors='replace').read()
    text = text.replace('\r', '')
    body = suite_text(text, 'upstream')
    if body is None:
        print('FAIL\tupstream: the upstream suite did not finish')
        return 0
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
        # Both stopped by the time limit: compare what both completed and
        # name where each was stopped.
        hung = []
        if a['rc'] in TIMEOUT_RC and b['rc'] in TIMEOUT_RC:
            hung = ['on at %s' % (k or '?') for k, v in a['cases'].items() if v == 'timeout'] + \
                   ['off at %s' % (k or '?') for k, v in b['cases'].items() if v == 'timeout']
            hung = ['both runs stopped by the time limit (%s), the cases both '
                    'completed compared' % (', '.join(hung) or 'on and off')]
            done = set(k for k, v in a['cases'].items() if v != 'timeout') & \
                set(k for k, v in b['cases'].items() if v != 'timeout')
            a = dict(a, cases={k: a['cases'][k] for k in done})
            b = dict(b, cases={k: b['cases'][k] for k in done})
        elif a['rc'] in TIMEOUT_RC or b['rc'] in TIMEOUT_RC:
            print('FAIL\tupstream: %s: timed out only %s (%ss/%ss)'
                  % (name, 'on' if a['rc'] in TIMEOUT_RC else 'off',
                     a['secs'], b['secs']))
            continue
        if not a['cases'] and not b['cases']:
            st = 'PASS' if a['rc'] == b['rc'] else 'FAIL'
            print('%s\tupstream: %s: exit status on %d, off %d (no TAP; %ss/%ss)'
                  % (st, name, a['rc'], b['rc'], a['secs'], b['secs']))
            continue
        diff = []
        for k in sorted(set(a['cases']) | set(b['cases'])):
            x, y = a['cases'].get(k, 'missing'), b['cases'].get(k, 'missing')
            if x != y:
                diff.append('%s on=%s off=%s' % (k, x, y))
        cnt = {s: sum(1 for v in a['cases'].values() if v == s)
               for s in ('pass', 'skip', 'fail', 'timeout')}
        both = [k for k, v in a['cases'].items()
                if v == 'fail' and b['cases'].get(k) == 'fail']
        if retries.get(name):
            first = differences(on_runs[name][0], off_runs[name][0])
            hung.append('FLAKY: the on/off pair disagreed %d time(s) before '
                        'agreeing, first: %s' % (retries[name], '; '.join(first[:3])))
        if diff:
            print('FAIL\tupstream: %s: differs%s: %s'
                  % (name, ' after %d retries' % retries[name]
                     if retries.get(name) else '', '; '.join(diff[:8])))
        else:
            msg = ('same results on and off: %d pass, %d skip, %d fail (%ss/%ss)'
                   % (cnt['pass'], cnt['skip'], cnt['fail'], a['secs'], b['secs']))
            if both:
                msg += '; fails on both (stock behaviour here): ' + '; '.join(both[:6])
            if hung:
                msg += '; ' + ', '.join(hung)
            print('PASS\tupstream: %s: %s' % (name, msg))
    return 0


if __name__ == '__main__':
    sys.exit(main())
