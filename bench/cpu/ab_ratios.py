#!/usr/bin/env python3
"""Reads the logs of bench/cpu/ab_compare.sh and prints, per tree, op and 16-bit dtype, the
median over the rounds of the 16-bit elements per second over f32's in the same run (the
ratio is taken inside a run, so the machine's drift between runs cancels), and f32's GB/s.
Usage: bench/cpu/ab_ratios.py OUTDIR [cold|warm]"""
import collections
import glob
import os
import statistics
import sys

UNITS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def read(outdir, cache):
    """(tree, run) -> {(op, dtype, n): (seconds, GB/s)} from the highway rows."""
    runs = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(outdir, "*-run*.txt"))):
        tree, run = os.path.basename(path)[:-4].rsplit("-run", 1)
        for line in open(path):
            f = line.split()
            if len(f) > 9 and f[0] == "highway" and f[5] == cache:
                runs[(tree, run)][(f[2], f[3], f[4])] = (float(f[6]) * UNITS[f[7]], float(f[9]))
    return runs


def main():
    outdir, cache = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "cold"
    runs = read(outdir, cache)
    trees = sorted({tree for tree, _ in runs})
    points = {p for m in runs.values() for p in m}
    sizes = sorted({n for _, _, n in points}, key=lambda n: int(n.split("^")[1]))
    ops = sorted({op for op, _, _ in points})
    print(f"{cache}: 16-bit elements/s over f32's (median over runs); f32 GB/s; sizes {' '.join(sizes)}")
    for op in ops:
        for dtype in ("f16", "bf16", "f32"):
            cells = []
            for tree in trees:
                values = []
                for n in sizes:
                    of_tree = [m for (t, _), m in runs.items() if t == tree and (op, dtype, n) in m]
                    if not of_tree:
                        values.append("-")
                    elif dtype == "f32":
                        values.append("%.0f" % statistics.median(m[(op, dtype, n)][1] for m in of_tree))
                    else:
                        values.append("%.2f" % statistics.median(
                            m[(op, "f32", n)][0] / m[(op, dtype, n)][0] for m in of_tree if (op, "f32", n) in m))
                cells.append(f"{tree}: {' '.join(values)}")
            print(f"{op:6} {dtype:5}", " | ".join(cells))


if __name__ == "__main__":
    main()
