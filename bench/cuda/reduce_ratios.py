#!/usr/bin/env python3
"""Same-run ratios from ew-cuda-reduce-bench --device-result CSV files (sum and dot).

For each reduction, dtype and size: cub's time over the library's (as it is and with plain
launches), cuBLAS's likewise (dot), and the cost of reproducibility, the library's time over
the "atomic (not reproducible)" variant's, minus 1, and over the fastest of that variant's
forms with 4, 2 or 1 loads in flight ("best"); the same cost for the library's sum kernels
forced (the register kernel, the staged kernel with 1, 2 and 3 slots, units of 8 and 32 plan blocks).
For norm2 (no atomic variant): the default, the register kernel and the staged kernel against
cub and cuBLAS, and the register kernel's time over the other two.
Usage: python3 bench/cuda/reduce_ratios.py FILE.csv [...]
"""
import collections
import sys


def load(path):
    rows = collections.defaultdict(dict)
    for line in open(path).read().splitlines()[1:]:
        f = line.split(',')
        # Method names may hold commas ("atomic, plan order"): the last five fields are fixed.
        rows[(f[0], f[1], int(f[2]))][','.join(f[3:-5])] = float(f[-4])
    return rows


def main(paths):
    for path in paths:
        print('==', path)
        rows = load(path)
        for key in sorted(rows):
            red, dtype, n = key
            m = rows[key]
            if 'ew cuda (default)' not in m:
                continue
            if red == 'norm2':
                # No atomic variant: the library's kernels against cub, cuBLAS and each other.
                reg = m.get('ew cuda (register kernel)')
                line = f'{red} {dtype} 2^{n.bit_length() - 1}:'
                for name in ('default', 'register kernel', 'staged, 2 slots'):
                    t = m.get(f'ew cuda ({name})')
                    if t:
                        line += f' {name}:' + ''.join(f' {p} {m[k] / t:.3f}' for p, k in (('cub', 'cub::DeviceReduce'), ('cublas', 'cublas dot/nrm2')) if k in m)
                        if reg and name != 'register kernel':
                            line += f' (register/this {reg / t:.3f})'
                        line += ';'
                print(line)
                continue
            ours, plain = m['ew cuda (default)'], m.get('ew cuda (plain launches)')
            cub, cublas = m.get('cub::DeviceReduce'), m.get('cublas dot/nrm2')
            atomic = m.get('atomic (not reproducible)')
            line = f'{red} {dtype} 2^{n.bit_length() - 1}:'
            for name, peer in (('cub', cub), ('cublas', cublas)):
                if peer:
                    line += f' {name} {peer / ours:.3f}' + (f' (plain {peer / plain:.3f})' if plain else '')
            if atomic:
                line += f'  repro cost {ours / atomic - 1:+.1%}' + (f' (plain {plain / atomic - 1:+.1%})' if plain else '')
            forms = [m[k] for k in ('atomic (not reproducible)', 'atomic, 2 loads', 'atomic, 1 load') if k in m]
            if len(forms) > 1:
                line += f', best {ours / min(forms) - 1:+.1%}'
            # The fixed order's finish alone: each bench kernel with its blocks' sums added in block
            # order by the last block, against the same kernel's atomicAdd finish. With the staged
            # one, the cost splits in three: the plan's reading order (the staged bench kernel over
            # the grid-stride one, both finishing with atomicAdd), the ordered finish on it, and
            # what the library does beyond both (its tree's adds and bookkeeping).
            ordered = m.get('ordered finish')
            if atomic and ordered:
                line += f'; ordered finish {ordered / atomic - 1:+.1%} ({(ordered - atomic) * 1e6:+.2f} us)'
            staged, staged_ordered = m.get('atomic, staged plan order'), m.get('ordered finish, staged plan order')
            if atomic and staged and staged_ordered:
                line += (f'; split: reading {staged / atomic - 1:+.1%}, finish {staged_ordered / staged - 1:+.1%}'
                         f' ({(staged_ordered - staged) * 1e6:+.2f} us), library {ours / staged_ordered - 1:+.1%}')
            # The same ordered finish in one warp of the last block, without the block-wide tree's barriers.
            warp_ordered = m.get('ordered finish in one warp, staged plan order')
            if staged and warp_ordered:
                line += f'; finish in one warp {warp_ordered / staged - 1:+.1%} ({(warp_ordered - staged) * 1e6:+.2f} us)'
            # The staged bench kernel's other rings: its reading order in finer steps,
            # ... and with its plan blocks handed out as the warps ask (a counter), not dealt.
            for ring in ('4 KiB x 4', '2 KiB x 8', '4 KiB x 2', 'dynamic', 'dynamic runs of 2', '4 KiB x 4, dynamic',
                         'last piece in 8', 'last piece in 4', 'warp-major deal', '8 KiB x 1',
                         '8 KiB x 1, warp-major deal'):
                t = m.get(f'atomic, staged plan order, {ring}')
                if atomic and t:
                    line += f'; reading, {ring} {t / atomic - 1:+.1%}'
            # Both bench kernels with plain launches: the reading part without the launch overlap.
            atomic_plain, staged_plain = m.get('atomic, plain launches'), m.get('atomic, staged plan order, plain launches')
            if atomic_plain and staged_plain:
                line += f'; plain: reading {staged_plain / atomic_plain - 1:+.1%}'
                if plain:
                    line += f', ours {plain / atomic_plain - 1:+.1%}'
            # The library's kernels forced, against the same atomic variant.
            for name in ('register kernel', 'staged, 2 slots', 'staged, 3 slots', 'staged, 1 slot',
                         'staged, 1 slot, 1 block an SM', 'staged, units of 8', 'staged, units of 32'):
                t = m.get(f'ew cuda ({name})')
                if t and atomic:
                    line += f'; {name} {t / atomic - 1:+.1%}'
            print(line)


if __name__ == '__main__':
    main(sys.argv[1:])
