#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the guest report (results.log) into one line per test result.

Input: the text the guest wrote on its report port, framed as
  @@AP BEGIN <suite> ... TAP ... @@AP END <suite> rc=<n> ... @@AP DONE
Output lines (tab separated): STATUS<TAB>suite: description
STATUS is PASS, FAIL or SKIP. A suite whose TAP plan and results disagree,
or that exited non-zero without a failing result, yields a FAIL line too.
Every suite must print a TAP plan. With --expect A,B,... each named suite
must be in the report. With --suite NAME, only that suite is reported;
with --dump NAME the raw text of that suite is printed instead.
"""
import re
import sys

TAP = re.compile(r'^(not ok|ok)\s+(\d+)\s*-?\s*(.*)$')
PLAN = re.compile(r'^1\.\.(\d+)')


def suites(text):
    cur = None
    out = {}
    order = []
    for line in text.replace('\r', '').split('\n'):
        m = re.match(r'^@@AP BEGIN (\S+)', line)
        if m:
            cur = m.group(1)
            out[cur] = {'lines': [], 'rc': None}
            order.append(cur)
            continue
        m = re.match(r'^@@AP END (\S+) rc=(-?\d+)', line)
        if m and cur == m.group(1):
            out[cur]['rc'] = int(m.group(2))
            cur = None
            continue
        if cur is not None:
            out[cur]['lines'].append(line)
    return order, out


def report(name, s):
    res = []
    plan = None
    for line in s['lines']:
        m = PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
        m = TAP.match(line)
        if not m:
            continue
        ok, _, desc = m.groups()
        skip = re.search(r'#\s*SKIP', desc, re.I)
        if ok == 'not ok':
            st = 'FAIL'
        elif skip:
            st = 'SKIP'
        else:
            st = 'PASS'
        res.append((st, '%s: %s' % (name, desc.strip())))
    if s['rc'] is None:
        res.append(('FAIL', '%s: did not finish (crash or hang)' % name))
    elif plan is None:
        res.append(('FAIL', '%s: printed no TAP plan (%d results)' %
                    (name, len(res))))
    elif plan != len(res):
        res.append(('FAIL', '%s: planned %d results, got %d' %
                    (name, plan, len(res))))
    elif s['rc'] != 0 and not any(r[0] == 'FAIL' for r in res):
        res.append(('FAIL', '%s: exited with %d' % (name, s['rc'])))
    elif not res:
        res.append(('FAIL', '%s: reported no result' % name))
    return res


def main():
    args = sys.argv[1:]
    only = dump = None
    expect = []
    if len(args) >= 2 and args[0] == '--expect':
        expect, args = [e for e in args[1].split(',') if e], args[2:]
    if len(args) >= 2 and args[0] == '--suite':
        only, args = args[1], args[2:]
    elif len(args) >= 2 and args[0] == '--dump':
        dump, args = args[1], args[2:]
    text = open(args[0], encoding='utf-8', errors='replace').read()
    order, data = suites(text)
    if dump:
        if dump in data:
            print('\n'.join(data[dump]['lines']))
        return 0
    for name in order:
        if name == 'dmesg' or (only and name != only):
            continue
        if name == 'upstream' and not only:
            continue  # compared on/off by compare-upstream.py
        for st, desc in report(name, data[name]):
            print('%s\t%s' % (st, desc))
    if only and only not in data:
        print('FAIL\t%s: suite missing from the report' % only)
    for name in expect:
        if name not in data:
            print('FAIL\t%s: suite missing from the report (expected in '
                  'this boot)' % name)
    return 0


if __name__ == '__main__':
    sys.exit(main())
