#!/usr/bin/env python3
"""Old against new from reduce_ab.sh's CSV files: the library's time per reduction, dtype and
size, each the mean over the rounds of that form (warm result on the device, cold, value on
the host), and new over old minus 1.
Usage: python3 bench/cuda/reduce_ab_compare.py OUT_DIR
"""
import glob
import os
import statistics
import sys


def times(path):
    t = {}
    with open(path) as f:
        lines = f.read().splitlines()[1:]
    for line in lines:
        f = line.split(',')
        # Method names may hold commas: the last five fields are fixed (see reduce_ratios.py).
        if ','.join(f[3:-5]) in ('ew cuda (default)', 'ew cuda'):  # device forms, host form
            t[(f[0], f[1], int(f[2]))] = float(f[-4])
    return t


def main(out):
    for form in ('device', 'cold', 'host'):
        runs = {w: [times(p) for p in sorted(glob.glob(os.path.join(out, f'{w}-*-{form}.csv')))] for w in ('old', 'new')}
        if not runs['old'] or not runs['new']:
            continue
        print(f'== {form} ({len(runs["old"])} rounds old, {len(runs["new"])} new)')
        # The cells every run has (a run cut short lacks its last sizes).
        keys = set.intersection(*(set(r) for r in runs['old'] + runs['new']))
        for key in sorted(keys):
            old = statistics.mean(r[key] for r in runs['old'])
            new = statistics.mean(r[key] for r in runs['new'])
            red, dtype, n = key
            print(f'{red} {dtype} 2^{n.bit_length() - 1}: old {old * 1e6:.2f} us, new {new * 1e6:.2f} us ({new / old - 1:+.1%})')


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'out')
