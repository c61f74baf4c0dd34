#!/usr/bin/env python3
"""Means over the calls of ew-cuda-reduce-bench --timeline CSV files, per kernel and size.

The GPU's %globaltimer moves in steps of 256 ns on the H200 measured (2026-12-03): a phase
shorter than a microsecond (the finish, the gap between calls) reads as a multiple of that
step in each call, so the program's medians of those phases are coarse; the mean over the
calls dithers them (a call's phase falls at a random place against the step).
Usage: python3 bench/cuda/reduce_timeline.py FILE.csv [...] [--sizes 24,25]
"""
import collections
import sys

COLUMNS = ['done_p50', 'done_p90', 'done_last', 'sm_p10', 'sm_p50', 'sm_idle_share', 'last_adds', 'arrived',
           'value', 'gap', 'period']


def main(args):
    sizes = None
    if '--sizes' in args:
        at = args.index('--sizes')
        sizes = {int(s) for s in args[at + 1].split(',')}
        args = args[:at] + args[at + 2:]
    for path in args:
        calls = collections.defaultdict(list)
        for line in open(path).read().splitlines()[1:]:
            f = line.split(',')
            # Kernel names hold commas: the first three fields and the last twelve are fixed.
            calls[(f[0], f[1], int(f[2]), ','.join(f[3:-12]))].append([float(x) for x in f[-11:]])
        print('==', path)
        for key in sorted(calls, key=lambda k: (k[1], k[0], k[2])):
            red, dtype, n, kernel = key
            if sizes and n.bit_length() - 1 not in sizes:
                continue
            m = dict(zip(COLUMNS, (sum(c) / len(c) for c in zip(*calls[key]))))
            print(f"{red:<3} {dtype} 2^{n.bit_length() - 1} {kernel:<56} reads done p50 {m['done_p50']:7.2f} last "
                  f"{m['done_last']:7.2f} | SM idle {100 * m['sm_idle_share']:4.1f} % | last adds {m['last_adds']:4.2f} | "
                  f"arrived +{m['arrived']:4.2f} value +{m['value']:4.2f} | gap {m['gap']:4.2f} | period {m['period']:7.2f} us")


if __name__ == '__main__':
    main(sys.argv[1:])
