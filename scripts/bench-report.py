#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tables, ratios, CSV and plot from the guest benchmark (make run).

Usage: bench-report.py RESULTS_LOG... OUTDIR
Reads the "bench" suite of each guest report (make run's measured boot,
and the wall-clock boot of the thread table when the measured one ran on
the instruction clock; each names its clock), prints per mode the seed-style tables of the
sequential write with 1 thread (section seq) and with 1..nproc threads
(section threads), each saying which clock timed it (medians over rounds),
a summary with the median of the per-round ratios to "off" (min-max,
number of rounds),
sparse-pattern RSS, fork/exec churn, the fragmented-memory case and the
memory-cgroup pressure case and the real programs (suite "real": wall
time, minor faults and peak RSS of each workload, ratios to off); for the
modes with prefault on over 64K mTHP (MTHP_ON) also ratios to mthp64k,
mTHP alone in the same boot (sequential fault/wsec and minor faults per
page, sparse RSS per touched page, churn execs/s, fragmented fault/wsec),
and
writes OUTDIR/bench-raw.csv, OUTDIR/bench-summary.csv, OUTDIR/real-raw.csv
and, when gnuplot is installed, OUTDIR/bench.png (fault/wsec against
threads, one line a mode) and OUTDIR/real.png (speed of each real
workload relative to off, one bar a mode).
Exits 1 when a mode of a section produced fewer rows than it has rounds.
"""
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys

FIELDS = ['gb', 'reps', 'workers', 'user_s', 'sys_s', 'wall_s',
          'flt_per_cpu_s', 'fault_per_wsec', 'minflt_per_page',
          'rss_per_page', 'pattern', 'pmode']
# The modes of scripts/guest/bench.sh, in table order, and the modes of
# its sections other than the sequential one.
MODES = ['off', 'on', 'on-max', 'mthp64k', 'mthp64k+on', 'auto64k+on',
         'populate']
SPARSE_MODES = ['off', 'on', 'on-max', 'mthp64k', 'mthp64k+on',
                'auto64k+on']
CHURN_MODES = SPARSE_MODES
FRAG_MODES = ['off', 'on', 'mthp64k', 'mthp64k+on', 'auto64k+on']
PRESSURE_MODES = ['off', 'on', 'on-max']
# Prefault on over 64K mTHP, and their same-boot baseline, mTHP alone.
MTHP, MTHP_ON = 'mthp64k', ['mthp64k+on', 'auto64k+on']
# Width of a mode name in the one-line-per-mode tables.
MODE_W = max(len(m) for m in MODES)
PRESSURE = ['rss_before_kb', 'rss_after_kb', 'oom_kill', 'pressure_ms',
            'holder']
REAL = ['wall_s', 'minflt', 'majflt', 'maxrss_kb', 'user_s', 'sys_s',
        'ap_fault', 'ap_page', 'ap_fallback']


def bench_lines(path, suite='bench'):
    text = open(path, encoding='utf-8', errors='replace').read()
    text = text.replace('\r', '')
    m = re.search(r'^@@AP BEGIN %s\n(.*?)^@@AP END %s' % (suite, suite), text,
                  re.S | re.M)
    return m.group(1).split('\n') if m else []


def num(x):
    try:
        return float(x)
    except ValueError:
        return float('nan')


def med(rows, key):
    vals = [num(r[key]) for r in rows]
    vals = [v for v in vals if v == v]
    return statistics.median(vals) if vals else float('nan')


def parse(lines):
    data, churn, pressure, meta, notes = [], [], [], {}, []
    for line in lines:
        f = line.strip().split(',')
        if f[0] == 'data' and len(f) == 5 + len(FIELDS):
            row = dict(zip(['section', 'mode', 'threads', 'round'], f[1:5]))
            row.update(zip(FIELDS, f[5:]))
            data.append(row)
        elif f[0] == 'churn' and len(f) == 9:
            churn.append(dict(zip(['mode', 'round', 'execs', 'wall_s',
                                   'execs_per_s', 'minflt_per_child',
                                   'user_s', 'sys_s'], f[1:])))
        elif f[0] == 'pressure' and len(f) == 3 + len(PRESSURE):
            pressure.append(dict(zip(['mode', 'round'] + PRESSURE, f[1:])))
        elif f[0] == 'meta' and len(f) == 3:
            meta[f[1]] = f[2]
        elif line.startswith('# '):
            notes.append(line[2:])
    return data, churn, pressure, meta, notes


def parse_real(lines):
    """The rows and meta lines of the real-workload suite."""
    rows, meta, notes = [], {}, []
    for line in lines:
        f = line.strip().split(',')
        if f[0] == 'real' and len(f) == 4 + len(REAL):
            rows.append(dict(zip(['workload', 'mode', 'round'] + REAL, f[1:])))
        elif f[0] == 'meta' and len(f) == 3:
            meta[f[1]] = f[2]
        elif line.startswith('# '):
            notes.append(line[2:])
    return rows, meta, notes


def ratio(a, b):
    return a / b if b and b == b and a == a else float('nan')


def medians(rows):
    return {k: med(rows, k) for k in FIELDS[:10]}


def modes_in(rows):
    """The modes that have rows, in MODES order."""
    return [m for m in MODES if any(r['mode'] == m for r in rows)]


def round_ratios(rows, mode, key, base='off'):
    """Per-round ratios of @key, @mode to @base in the same round."""
    off = {r['round']: num(r[key]) for r in rows if r['mode'] == base}
    vals = [ratio(num(r[key]), off[r['round']]) for r in rows
            if r['mode'] == mode and r['round'] in off]
    return [v for v in vals if v == v]


def mthp_ratios(rows, mode, key):
    """Per-round ratios of @key, @mode to mthp64k; none unless @mode is
    one of MTHP_ON."""
    return round_ratios(rows, mode, key, MTHP) if mode in MTHP_ON else []


def put_ratios(row, vals, name, lo, hi):
    """Stores the median, min and max of the per-round ratios @vals in @row
    as @name, @lo and @hi (NaN when there are none)."""
    row[name] = statistics.median(vals) if vals else float('nan')
    row[lo] = min(vals) if vals else float('nan')
    row[hi] = max(vals) if vals else float('nan')


def put_mthp_ratios(row, vals, name):
    """put_ratios() as @name, @name_min and @name_max."""
    put_ratios(row, vals, name, name + '_min', name + '_max')


def fmt_ratios(vals, digits=2):
    """Median of per-round ratios with min-max and the number of rounds."""
    if not vals:
        return '-'
    return '%.*fx (%.*f-%.*f, %d)' % (digits, statistics.median(vals), digits,
                                      min(vals), digits, max(vals), len(vals))


def summary_at(summary, section, mode, threads=1):
    """The summary row of @section, @mode at @threads, or None."""
    return next((s for s in summary if s['section'] == section and
                 s['mode'] == mode and s['threads'] == threads), None)


def mthp_modes(modes):
    """The modes of MTHP_ON in @modes, none when @modes lacks mthp64k."""
    return [m for m in MTHP_ON if m in modes] if MTHP in modes else []


def to_mthp(rows, mode, key):
    """", %s to mthp64k" for a mode of MTHP_ON, else ""."""
    if mode not in MTHP_ON:
        return ''
    return ', %s to %s' % (fmt_ratios(mthp_ratios(rows, mode, key)), MTHP)


ALL_SECTIONS = ['seq', 'threads', 'sparse', 'churn', 'frag', 'pressure',
                'readwrite']
READWRITE_MODES = ['off', 'on', 'mthp64k', 'mthp64k+on']


def missing_cells(data, churn, pressure, meta):
    """The (section, mode) cells of the benchmark that produced no data."""
    modes = meta.get('modes', ' '.join(MODES)).split()
    rounds = int(meta.get('rounds', '1'))
    ncpu = int(meta.get('threads_ncpu', meta.get('ncpu', '1')))
    sections = meta.get('sections', ALL_SECTIONS)
    want = []
    if 'seq' in sections:
        want += [('seq', m, 1) for m in modes]
    if 'threads' in sections:
        want += [('threads', m, t) for m in modes for t in range(1, ncpu + 1)]
    if 'sparse' in sections:
        want += [('sparse-' + p, m, 1)
                 for p in ('random50', 'stride:2', 'stride:4')
                 for m in SPARSE_MODES]
    if 'frag' in sections:
        want += [('frag', m, 1) for m in FRAG_MODES]
    if 'readwrite' in sections:
        want += [('readwrite', m, t) for m in READWRITE_MODES for t in (1, 4)]
    out = []
    for sec, m, t in want:
        n = sum(1 for r in data if r['section'] == sec and r['mode'] == m and
                int(r['threads']) == t)
        if n < rounds:
            out.append('%s %s %d thread(s): %d of %d rounds' % (sec, m, t, n, rounds))
    for name, rows, modes in (('churn', churn, CHURN_MODES),
                              ('pressure', pressure, PRESSURE_MODES)):
        if name not in sections:
            continue
        for m in modes:
            n = sum(1 for r in rows if r['mode'] == m)
            if n < rounds:
                out.append('%s %s: %d of %d rounds' % (name, m, n, rounds))
    return out


def clock_name(clock):
    """How a table names the clock that timed it."""
    return {'icount': 'instruction clock: 1 ns per guest instruction, -cpu'
                      ' max: ERMS, a page clear is rep stosb, 4096 of them',
            'icount-stosq': 'instruction clock: 1 ns per guest instruction,'
                            ' -cpu max,-erms,-fsrm: a page clear is rep'
                            ' stosq, 512 of them',
            'wall': 'wall clock'}.get(clock, clock + ' clock')


def read_logs(paths):
    """The benchmark rows of every report in @paths, merged; each data row
    carries the clock of its boot, meta['clocks'] maps each section to it,
    meta['sections'] lists the sections run in any of them and
    meta['threads_ncpu'] is the CPU count of the boot that ran threads."""
    data, churn, pressure, meta, notes = [], [], [], {}, []
    sections, clocks = [], {}
    for path in paths:
        d, c, p, m, n = parse(bench_lines(path))
        clock = m.get('clock', 'wall')
        secs = m.get('sections', ':'.join(ALL_SECTIONS)).split(':')
        for r in d:
            r['clock'] = clock
        data += d
        churn += c
        pressure += p
        notes += n
        for k, v in m.items():
            meta.setdefault(k, v)
        if 'threads' in secs:
            meta['threads_ncpu'] = m.get('ncpu', '1')
        for sec in secs:
            if sec not in sections:
                sections.append(sec)
            clocks.setdefault(sec, clock)
    meta['sections'] = sections
    meta['clocks'] = clocks
    return data, churn, pressure, meta, notes


def real_missing(rows, meta):
    """The (workload, mode) cells of the real section with missing rounds."""
    rounds = int(meta.get('real_rounds', '1'))
    out = []
    for w in meta.get('real_workloads', '').split():
        for m in meta.get('real_modes', '').split():
            n = sum(1 for r in rows if r['workload'] == w and r['mode'] == m)
            if n < rounds:
                out.append('real %s %s: %d of %d rounds' % (w, m, n, rounds))
    return out


def real_ratios(rows, workload, mode, key, invert=False):
    """Per-round ratios of @key of @workload, @mode to off (off to @mode
    when @invert: a speed from times)."""
    sel = [r for r in rows if r['workload'] == workload]
    vals = round_ratios(sel, mode, key)
    return [1 / v for v in vals if v] if invert else vals


# Per-row ratio kinds of the real section: (name, key, inverted).
REAL_RATIOS = [('speed', 'wall_s', True), ('user', 'user_s', False),
               ('sys', 'sys_s', False), ('minflt', 'minflt', False),
               ('maxrss', 'maxrss_kb', False)]


def real_targets(summary, workloads):
    """Lines checking the targets for the modes of the series: median
    speed >= 0.99x (the compiler >= 1.00x, with less kernel time than off),
    peak RSS within +1%, fewer minor faults for the compiler and the
    interpreter."""
    out = []
    for m in ('on', 'on-max'):
        for w in workloads:
            s = next((x for x in summary if x['workload'] == w and x['mode'] == m), None)
            if not s or s['speed_ratio'] != s['speed_ratio']:
                continue
            miss = []
            floor = 1.00 if w == 'cc' else 0.99
            if s['speed_ratio'] < floor:
                miss.append('median speed %.3fx < %.2fx' % (s['speed_ratio'], floor))
            if w == 'cc' and not s['sys_ratio'] < 1:
                miss.append('kernel time %.3fx of off' % s['sys_ratio'])
            if s['maxrss_ratio'] > 1.01:
                miss.append('peak RSS %+.1f%%' % (100 * (s['maxrss_ratio'] - 1)))
            if w in ('cc', 'py') and not s['minflt_ratio'] < 1:
                miss.append('minor faults %.2fx of off' % s['minflt_ratio'])
            out.append('  %-7s %-5s %s' % (m, w, 'met' if not miss else
                                          'MISSED: ' + '; '.join(miss)))
    return out


def gnuplot(script, png):
    """Runs a gnuplot script that writes @png; says where it is."""
    r = subprocess.run(['gnuplot'], input=script, text=True,
                       capture_output=True)
    if r.returncode == 0:
        print('Plot: %s' % png)
    else:
        print('gnuplot failed: %s' % r.stderr.strip(), file=sys.stderr)


def real_report(rows, meta, notes, out):
    """Prints the real-workload tables, writes real-raw.csv and real.png;
    returns the summary rows."""
    workloads = meta.get('real_workloads', '').split()
    modes = [m for m in meta.get('real_modes', '').split() if m != 'off']
    summary = []
    for n in notes:
        print(n)
    print('\nReal programs (Debian\'s binaries in the guest; %s): off in'
          ' absolute terms (medians, per run), the other modes as the median'
          ' of per-round ratios to off (min-max, rounds)'
          % clock_name(meta.get('real_clock', 'wall')))
    tables = [('speed: wall time of off / wall time of the mode (above 1.00x'
               ' is faster; off: its wall time)', 'wall_s', '%7.3fs', True),
              ('user time of the process tree, ratio to off (below 1.00x is'
               ' less)', 'user_s', '%7.3fs', False),
              ('system (kernel) time of the process tree, ratio to off (below'
               ' 1.00x is less; sampled at each timer tick)', 'sys_s',
               '%7.3fs', False),
              ('minor faults (whole process tree), ratio to off', 'minflt',
               '%8.0f', False),
              ('peak RSS (largest process, KiB), ratio to off', 'maxrss_kb',
               '%8.0f', False)]
    for title, key, fmt, inv in tables:
        print('\n%s' % title)
        print('%-6s %10s' % ('', 'off') + ''.join('%24s' % m for m in modes))
        for w in workloads:
            off = [r for r in rows if r['workload'] == w and r['mode'] == 'off']
            cells = [fmt % med(off, key) if off else '-']
            for m in modes:
                cells.append('%24s' % fmt_ratios(real_ratios(rows, w, m, key,
                                                             inv), 3))
            print('%-6s %10s' % (w, cells[0]) + ''.join(cells[1:]))
    print('\npages mapped ahead per run (anon_prefault_page), median; for on'
          ' and on-max in brackets those never touched: mapped ahead less'
          ' the faults saved against off (medians of the exact counts)')
    print('%-6s' % '' + ''.join('%*s' % (MODE_W + 10, m) for m in ['off'] + modes))
    for w in workloads:
        cells = []
        off = [r for r in rows if r['workload'] == w and r['mode'] == 'off']
        for m in ['off'] + modes:
            sel = [r for r in rows if r['workload'] == w and r['mode'] == m]
            if not sel:
                cells.append('%*s' % (MODE_W + 10, '-'))
                continue
            ahead = med(sel, 'ap_page')
            cell = '%.0f' % ahead
            if off and m in ('on', 'on-max'):
                saved = med(off, 'minflt') - med(sel, 'minflt')
                cell += ' (%.0f)' % (ahead - saved)
            cells.append('%*s' % (MODE_W + 10, cell))
        print('%-6s' % w + ''.join(cells))
    for w in workloads:
        for m in ['off'] + modes:
            sel = [r for r in rows if r['workload'] == w and r['mode'] == m]
            if not sel:
                continue
            row = dict(workload=w, mode=m, rounds=len(sel))
            row.update({k: med(sel, k) for k in REAL})
            for name, k, inv in REAL_RATIOS:
                rr = real_ratios(rows, w, m, k, inv) if m != 'off' else []
                row[name + '_ratio'] = statistics.median(rr) if rr else float('nan')
                row[name + '_ratio_min'] = min(rr) if rr else float('nan')
                row[name + '_ratio_max'] = max(rr) if rr else float('nan')
            summary.append(row)
    targets = real_targets(summary, workloads)
    if targets:
        print('\nTargets (speed median >= 0.99x, cc >= 1.00x with less kernel'
              ' time than off; peak RSS within +1%; fewer minor faults for cc'
              ' and py):')
        print('\n'.join(targets))
    with open(os.path.join(out, 'real-raw.csv'), 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(['workload', 'mode', 'round'] + REAL)
        for r in rows:
            w.writerow([r['workload'], r['mode'], r['round']] + [r[k] for k in REAL])
    with open(os.path.join(out, 'real-summary.csv'), 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=list(summary[0]) if summary else ['workload'])
        w.writeheader()
        for row in summary:
            w.writerow(row)
    print('\nCSV: %s/real-raw.csv, %s/real-summary.csv' % (out, out))
    if shutil.which('gnuplot') and summary and modes:
        dat = os.path.join(out, 'real-plot.dat')
        with open(dat, 'w') as fh:
            fh.write('workload %s\n' % ' '.join(modes))
            for wl in workloads:
                vals = []
                for m in modes:
                    v = next((x['speed_ratio'] for x in summary
                              if x['workload'] == wl and x['mode'] == m), float('nan'))
                    vals.append('%.4f' % v if v == v else '?')
                fh.write('%s %s\n' % (wl, ' '.join(vals)))
        png = os.path.join(out, 'real.png')
        cols = ', '.join("'%s' using %d:xtic(1) title columnheader(%d)"
                         % (dat, i + 2, i + 2) for i in range(len(modes)))
        script = ("set terminal pngcairo size 800,500 noenhanced\n"
                  "set output '%s'\n"
                  "set title 'Real programs: speed relative to off "
                  "(median of per-round ratios; above 1 is faster)'\n"
                  "set style data histogram\nset style histogram cluster gap 1\n"
                  "set style fill solid border -1\nset boxwidth 0.9\n"
                  "set ylabel 'off wall time / mode wall time'\nset yrange [0:*]\n"
                  "set key outside right top\nset grid ytics\n"
                  "plot %s, 1 with lines lt 0 notitle\n" % (png, cols))
        gnuplot(script, png)
    return summary


def seq_report(data, section, title, summary):
    """Prints the tables of the sequential-write @section (seq: 1 thread,
    threads: 1..nproc threads) under @title, adds its rows to @summary;
    returns the modes that have rows."""
    seq = [r for r in data if r['section'] == section]
    threads = sorted({int(r['threads']) for r in seq})
    modes = modes_in(seq)
    if not seq:
        return modes
    print(title)
    for m in modes:
        print('\nmode %s' % m)
        print(' Gb Rep Threads   User      System     Wall flt/cpu/s '
              'fault/wsec  minflt/page  rss/page')
        for t in threads:
            rows = [r for r in seq if r['mode'] == m and int(r['threads']) == t]
            if not rows:
                continue
            s = medians(rows)
            print('%4.2f %3d %7d %7.3fs %10.3fs %7.3fs %9.0f %10.0f %12.4f %9.2f'
                  % (s['gb'], s['reps'], t, s['user_s'], s['sys_s'],
                     s['wall_s'], s['flt_per_cpu_s'], s['fault_per_wsec'],
                     s['minflt_per_page'], s['rss_per_page']))
            summary.append(dict(section=section, mode=m, threads=t,
                                rounds=len(rows), **s))

    print('\nSummary: fault/wsec (pages touched per second of this clock,'
          ' median);'
          ' median of the per-round ratios to off (min-max, rounds);'
          ' minor faults per page')
    hdr = 'threads ' + ''.join('%26s' % m for m in modes)
    print(hdr)
    for t in threads:
        cells = []
        rows_t = [r for r in seq if int(r['threads']) == t]
        for m in modes:
            s = summary_at(summary, section, m, t)
            if s is None:
                cells.append('%26s' % '-')
                continue
            rr = round_ratios(rows_t, m, 'fault_per_wsec')
            put_ratios(s, rr, 'ratio_off', 'ratio_min', 'ratio_max')
            cells.append('%26s' % ('%.0f' % s['fault_per_wsec'] if m == 'off'
                                   else fmt_ratios(rr)))
        print('%7d ' % t + ''.join(cells))
    for t in threads:
        cells = []
        for m in modes:
            s = summary_at(summary, section, m, t)
            cells.append('%26s' % ('-' if s is None else
                                    '%.4f flt/pg' % s['minflt_per_page']))
        print('%7d ' % t + ''.join(cells))
    mmodes = mthp_modes(modes)
    if mmodes:
        print('\nAgainst mTHP alone: median of the per-round ratios to %s'
              ' (the same boot; min-max, rounds)' % MTHP)
        for key, name, what, digits in (
                ('fault_per_wsec', 'ratio_mthp64k', 'fault/wsec', 2),
                ('minflt_per_page', 'minflt_ratio_mthp64k',
                 'minor faults per page', 3)):
            print('%s\nthreads ' % what + ''.join('%26s' % m for m in mmodes))
            for t in threads:
                cells = []
                rows_t = [r for r in seq if int(r['threads']) == t]
                for m in mmodes:
                    s = summary_at(summary, section, m, t)
                    rr = mthp_ratios(rows_t, m, key)
                    if s is not None:
                        put_mthp_ratios(s, rr, name)
                    cells.append('%26s' % ('-' if s is None else
                                            fmt_ratios(rr, digits)))
                print('%7d ' % t + ''.join(cells))

    return modes


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().split('\n')[2], file=sys.stderr)
        return 2
    logs, out = sys.argv[1:-1], sys.argv[-1]
    data, churn, pressure, meta, notes = read_logs(logs)
    if not data:
        print('bench-report: no benchmark data in %s' % ' '.join(logs),
              file=sys.stderr)
        return 1
    for n in notes:
        print(n)
    missing = missing_cells(data, churn, pressure, meta)
    clocks = meta['clocks']
    summary = []
    modes = seq_report(
        data, 'seq', '\nSequential write, 1 thread, %s, medians of %s rounds'
        ' (%s)' % (meta.get('size', '?'), meta.get('rounds', '?'),
                   clock_name(clocks.get('seq', 'wall'))), summary)
    tmodes = seq_report(
        data, 'threads', '\nSequential write, %s per thread, 1 to %s threads,'
        ' medians of %s rounds (%s: the threads run in parallel)'
        % (meta.get('size', '?'), meta.get('threads_ncpu', '?'),
           meta.get('rounds', '?'),
           clock_name(clocks.get('threads', 'wall'))), summary)

    seq_report(
        data, 'readwrite', '\nRead every page, then write it (pft -B), 16M per'
        ' thread, 1 and 4 threads, medians of %s rounds (%s)'
        % (meta.get('rounds', '?'), clock_name(clocks.get('readwrite', 'wall'))),
        summary)

    sparse = [r for r in data if r['section'].startswith('sparse-')]
    if sparse:
        print('\nSparse patterns (16M, 1 thread; %s): RSS per touched page, '
              'minor faults per touched page (medians of %s rounds)'
              % (clock_name(clocks.get('sparse', 'wall')),
                 meta.get('rounds', '?')))
        pats = sorted({r['section'][7:] for r in sparse})
        smodes = modes_in(sparse)
        print('%-10s' % 'pattern' + ''.join('%18s' % m for m in smodes))
        for p in pats:
            cells = []
            for m in smodes:
                rows = [r for r in sparse
                        if r['section'] == 'sparse-' + p and r['mode'] == m]
                if rows:
                    cells.append('%9.2f / %6.4f' % (med(rows, 'rss_per_page'),
                                                    med(rows, 'minflt_per_page')))
                    summary.append(dict(section='sparse-' + p, mode=m,
                                        threads=1, rounds=len(rows),
                                        **medians(rows)))
                else:
                    cells.append('%18s' % '-')
            print('%-10s' % p + ''.join(cells))
        mmodes = mthp_modes(smodes)
        if mmodes:
            print('RSS per touched page, ratio to %s (the same boot)' % MTHP)
            print('%-10s' % 'pattern' + ''.join('%18s' % m for m in mmodes))
            for p in pats:
                cells = []
                rows = [r for r in sparse if r['section'] == 'sparse-' + p]
                for m in mmodes:
                    rr = mthp_ratios(rows, m, 'rss_per_page')
                    s = summary_at(summary, 'sparse-' + p, m)
                    if s is not None and rr:
                        s['rss_ratio_mthp64k'] = statistics.median(rr)
                    cells.append('%18s' % ('%.2fx' % statistics.median(rr)
                                           if rr else '-'))
                print('%-10s' % p + ''.join(cells))
        print('Speed (pages touched per second of this clock), ratio to off: '
              'median of per-round ratios (min-max, rounds)')
        print('%-10s' % 'pattern' + ''.join('%24s' % m for m in smodes
                                              if m != 'off'))
        for p in pats:
            rows = [r for r in sparse if r['section'] == 'sparse-' + p]
            cells = []
            for m in smodes:
                if m == 'off':
                    continue
                rr = round_ratios(rows, m, 'fault_per_wsec')
                s = summary_at(summary, 'sparse-' + p, m)
                if s is not None:
                    put_ratios(s, rr, 'ratio_off', 'ratio_min', 'ratio_max')
                cells.append('%24s' % fmt_ratios(rr, 3))
            print('%-10s' % p + ''.join(cells))

    if churn:
        print('\nFork/exec churn (short-lived programs touching 256 KiB; %s):'
              ' execs/s and the children\'s system time (medians; ratios are'
              ' medians of per-round ratios to off, min-max, rounds)'
              % clock_name(clocks.get('churn', 'wall')))
        for m in modes_in(churn):
            rows = [c for c in churn if c['mode'] == m]
            e = med(rows, 'execs_per_s')
            rr = round_ratios(churn, m, 'execs_per_s')
            sr = round_ratios(churn, m, 'sys_s')
            print('%-*s %8.1f execs/s, %s to off, %6.1f minor faults per child,'
                  ' system %.3fs%s%s'
                  % (MODE_W, m, e, fmt_ratios(rr), med(rows, 'minflt_per_child'),
                     med(rows, 'sys_s'),
                     ' (%s of off)' % fmt_ratios(sr) if m != 'off' else '',
                     to_mthp(churn, m, 'execs_per_s')))
            row = dict(section='churn', mode=m, threads=1, rounds=len(rows),
                       execs_per_s=e,
                       minflt_per_child=med(rows, 'minflt_per_child'),
                       sys_s=med(rows, 'sys_s'),
                       sys_ratio_off=statistics.median(sr) if sr else float('nan'))
            put_ratios(row, rr, 'ratio_off', 'ratio_min', 'ratio_max')
            if m in MTHP_ON:
                put_mthp_ratios(row, mthp_ratios(churn, m, 'execs_per_s'),
                                'ratio_mthp64k')
            summary.append(row)

    frag = [r for r in data if r['section'] == 'frag']
    if frag:
        print('\nFragmented memory (every other order-0 page held): '
              'sequential write, 1 thread (%s)'
              % clock_name(clocks.get('frag', 'wall')))
        for m in modes_in(frag):
            rows = [r for r in frag if r['mode'] == m]
            f = med(rows, 'fault_per_wsec')
            rr = round_ratios(frag, m, 'fault_per_wsec')
            print('%-*s %10.0f fault/wsec, %s to off, %.4f minor faults/page,'
                  ' rss/page %.2f%s' % (MODE_W, m, f, fmt_ratios(rr),
                                        med(rows, 'minflt_per_page'),
                                        med(rows, 'rss_per_page'),
                                        to_mthp(frag, m, 'fault_per_wsec')))
            row = dict(section='frag', mode=m, threads=1, rounds=len(rows),
                       **medians(rows))
            put_ratios(row, rr, 'ratio_off', 'ratio_min', 'ratio_max')
            if m in MTHP_ON:
                put_mthp_ratios(row, mthp_ratios(frag, m, 'fault_per_wsec'),
                                'ratio_mthp64k')
            summary.append(row)

    if pressure:
        print('\nMemory cgroup pressure (memory.max 48M, no swap): a holder'
              ' advises 32M MADV_SEQUENTIAL and writes 1 page per 64K,'
              ' then 32M more is written; medians (%s)'
              % clock_name(clocks.get('pressure', 'wall')))
        print('%-9s %12s %12s %9s %12s  %s' % (
            'mode', 'RSS before', 'RSS after', 'OOM kills', 'pressure ms',
            'holder'))
        for m in modes_in(pressure):
            rows = [p for p in pressure if p['mode'] == m]
            v = {k: med(rows, k) for k in PRESSURE[:4]}
            kills = sum(int(num(p['oom_kill']) > 0) for p in rows)
            states = sorted({p['holder'] for p in rows})
            print('%-9s %10.1fM %10.1fM %6d/%-2d %12.0f  %s' % (
                m, v['rss_before_kb'] / 1024, v['rss_after_kb'] / 1024,
                kills, len(rows), v['pressure_ms'], '/'.join(states)))
            summary.append(dict(section='pressure', mode=m, threads=1,
                                rounds=len(rows), oom_rounds=kills, **v))

    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'bench-raw.csv'), 'w', newline='') as fh:
        w = csv.writer(fh)
        w.writerow(['section', 'mode', 'threads', 'round'] + FIELDS)
        for r in data:
            w.writerow([r['section'], r['mode'], r['threads'], r['round']] +
                       [r[k] for k in FIELDS])
    keys = ['section', 'mode', 'threads', 'rounds', 'ratio_off', 'ratio_min',
            'ratio_max', 'ratio_mthp64k', 'ratio_mthp64k_min',
            'ratio_mthp64k_max', 'minflt_ratio_mthp64k',
            'minflt_ratio_mthp64k_min', 'minflt_ratio_mthp64k_max',
            'rss_ratio_mthp64k'] + FIELDS[:10] + \
        ['execs_per_s', 'minflt_per_child', 'sys_ratio_off'] + PRESSURE[:4] + \
        ['oom_rounds']
    with open(os.path.join(out, 'bench-summary.csv'), 'w', newline='') as fh:
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction='ignore')
        w.writeheader()
        for s in summary:
            w.writerow(s)
    print('\nCSV: %s/bench-raw.csv, %s/bench-summary.csv' % (out, out))
    real_rows, real_meta, real_notes = parse_real(bench_lines(sys.argv[1], 'real'))
    if real_meta:
        real_report(real_rows, real_meta, real_notes, out)
        missing += real_missing(real_rows, real_meta)
    if missing:
        print('bench-report: no data for: %s' % ', '.join(missing),
              file=sys.stderr)

    if shutil.which('gnuplot'):
        dat = os.path.join(out, 'bench-plot.dat')
        psec, pmodes = ('threads', tmodes) if tmodes else ('seq', modes)
        with open(dat, 'w') as fh:
            for m in pmodes:
                fh.write('# %s\n' % m)
                for s in summary:
                    if s['section'] == psec and s['mode'] == m:
                        fh.write('%d %f\n' % (s['threads'], s['fault_per_wsec']))
                fh.write('\n\n')
        png = os.path.join(out, 'bench.png')
        plots = ', '.join("'%s' index %d with linespoints title '%s'"
                          % (dat, i, m) for i, m in enumerate(pmodes))
        script = ("set terminal pngcairo size 800,500 noenhanced\n"
                  "set output '%s'\n"
                  "set title 'Sequential anonymous write: pages touched per "
                  "second, %s (median)'\n"
                  "set xlabel 'threads'\nset ylabel 'fault/wsec'\n"
                  "set xtics 1\nset key left top\nset yrange [0:*]\n"
                  "plot %s\n" % (png, clocks.get(psec, 'wall') + ' clock',
                                 plots))
        gnuplot(script, png)
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main())
