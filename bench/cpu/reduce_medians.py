#!/usr/bin/env python3
"""Reads the logs of `AB_PROGRAM=bench/cpu/ew-reduce-bench bench/cpu/ab_compare.sh` (TREE-runK.txt)
and prints, per tree, reduction, dtype and size, the median over the runs of a method's ratio to
the OpenMP reduction loop in the data's type (taken inside each run, so the machine's drift
between runs cancels), with the lowest and highest run, and the method's median GB/s.
Usage: bench/cpu/reduce_medians.py OUTDIR [METHOD]   (METHOD: highway by default)"""
import collections
import glob
import os
import statistics
import sys


def read(outdir, method):
    """tree -> {(op, dtype, size): [(ratio, GB/s) per run]} from the METHOD rows."""
    trees = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(glob.glob(os.path.join(outdir, "*-run*.txt"))):
        tree = os.path.basename(path)[:-4].rsplit("-run", 1)[0]
        for line in open(path):
            # "sum  f32 2^22  highway   66.10 GB/s   0.73x openmp"
            f = line.split()
            if len(f) >= 7 and f[3] == method and f[5] == "GB/s" and f[6].endswith("x"):
                trees[tree][(f[0], f[1], f[2])].append((float(f[6][:-1]), float(f[4])))
    return trees


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    outdir, method = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "highway"
    trees = read(outdir, method)
    if not trees:
        sys.exit(f"no '{method}' rows in {outdir}/*-run*.txt")
    print(f"{method} over the OpenMP loop: median of the runs [lowest, highest], median GB/s")
    for tree, points in sorted(trees.items()):
        below = 0
        for key in sorted(points, key=lambda k: (k[0], k[1], int(k[2].split("^")[1]))):
            ratios = [r for r, _ in points[key]]
            median = statistics.median(ratios)
            below += median < 0.95
            print(f"{tree:10} {' '.join(key):15} {median:5.2f} [{min(ratios):.2f}, {max(ratios):.2f}]  "
                  f"{statistics.median(g for _, g in points[key]):7.1f} GB/s  ({len(ratios)} runs)")
        print(f"{tree:10} medians below 0.95: {below} of {len(points)}")


if __name__ == "__main__":
    main()
