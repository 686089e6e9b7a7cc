# SPDX-License-Identifier: GPL-2.0
"""Allocation-heavy Python for the real-workload section of make run.

Builds a list of tuples and a dict of strings, sorts them, groups and
serialises them; prints a checksum that does not depend on the kernel.
argv[1]: size (number of records, default 200000).
"""
import json
import sys
import zlib

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
x = 12345
rows = []
for i in range(n):
    x = (x * 1103515245 + 12345) & 0x7fffffff
    rows.append((x % 1000, 'k%08d' % x, i))
rows.sort()
index = {}
for grp, key, i in rows:
    index.setdefault(key[:5], []).append(i)
words = sorted(index, key=lambda k: (-len(index[k]), k))
blob = json.dumps({k: index[k][:8] for k in words}).encode()
print(len(rows), len(index), zlib.crc32(blob))
