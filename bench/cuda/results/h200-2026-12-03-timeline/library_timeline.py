#!/usr/bin/env python3
"""The library's staged kernel under library-timeline.patch: the stamps it dumps at exit
($EW_TIMELINE_OUT), summarized as ew-cuda-reduce-bench --timeline summarizes the bench kernels
(means over the calls, from the second; us). Usage: python3 library_timeline.py FILE.bin [...]"""
import struct
import sys

for path in sys.argv[1:]:
    data = open(path, 'rb').read()
    calls, ctas, slots = struct.unpack_from('3I', data)
    st = struct.unpack_from(f'{calls * ctas * slots}Q', data, 12)
    at = lambda c, b, s: st[(c * ctas + b) * slots + s]
    results = [max(at(c, b, 26) for b in range(ctas)) for c in range(calls)]
    rows = []
    for c in range(1, calls):
        if not results[c] or not results[c - 1]:
            continue
        starts = [at(c, b, w) for b in range(ctas) for w in range(8) if at(c, b, w)]
        dones = [at(c, b, 16 + w) for b in range(ctas) for w in range(8) if at(c, b, 16 + w)]
        stored = max(at(c, b, 24) for b in range(ctas))
        arrived = max(at(c, b, 25) for b in range(ctas))
        t0 = min(starts)
        rows.append([(max(dones) - t0) / 1e3, (stored - max(dones)) / 1e3, (arrived - stored) / 1e3,
                     (results[c] - arrived) / 1e3, (t0 - results[c - 1]) / 1e3, (results[c] - results[c - 1]) / 1e3,
                     sum(1 for b in range(ctas) if at(c, b, 16))])
    m = [sum(col) / len(col) for col in zip(*rows)]
    print(f'{path}: {len(rows)} calls, grid {int(m[6])} | last warp done {m[0]:.2f} | units stored +{m[1]:.2f} | '
          f'counter answered +{m[2]:.2f} | value +{m[3]:.2f} | gap {m[4]:.2f} | period {m[5]:.2f} us')
