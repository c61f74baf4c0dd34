#!/usr/bin/env python3
# Loads in flight of the cuda reduction kernels, read from their machine code: for each
# sum kernel (reduction, dtype, lanes per thread V, rows U), the vector loads of the
# innermost loop that has any (between a backward branch's target and the branch), and
# the bytes they bring per thread. The kernel is software-pipelined (the loop's loads are
# for the next rows), so all of them are in flight while the loop's adds run. For the
# kernel before it (reduce_kernel, not pipelined) only the loads issued before the first
# DADD/DMUL count: ptxas interleaved the rest with their adds. Reads
# `cuobjdump -sass` output on stdin (nvdisasm must be on PATH).
#   cuobjdump -sass build-gpu/core/libelementwise.so | python3 bench/cuda/reduce_sass.py
import re
import sys

KINDS = {"0": "sum", "1": "asum", "2": "dot", "3": "norm2"}
WIDTH = {"LDG.E.CONSTANT": 4, "LDG.E.64.CONSTANT": 8, "LDG.E.128.CONSTANT": 16}
VECTOR = {("f", "1"): "LDG.E.CONSTANT", ("f", "2"): "LDG.E.64.CONSTANT", ("f", "4"): "LDG.E.128.CONSTANT",
          ("d", "1"): "LDG.E.64.CONSTANT", ("d", "2"): "LDG.E.128.CONSTANT"}

rows = []
for body in re.split(r"\n\s*Function : ", sys.stdin.read())[1:]:
    name = body.split("\n", 1)[0]
    m = re.search(r"sum_kernelILNS0_4plan4KindE(\d)E([fd])Li(\d)ELi(\d+)E", name)
    old = re.search(r"reduce_kernelILNS0_4plan4KindE([0-3])E([fd])EEv", name)
    if not m and not old:
        continue
    kind, dtype, lanes, loads = m.groups() if m else old.groups() + ("1", "16")
    load = VECTOR[(dtype, lanes)]
    code = [(int(a, 16), op) for a, op in re.findall(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*[^;]*);", body)]
    loops = [(int(t, 16), a) for a, op in code for t in re.findall(r"^BRA (0x[0-9a-f]+)", op) if int(t, 16) < a]
    # The kernel is pipelined when its innermost loop's loads are all for the next rows (the
    # adds use the rows loaded one iteration before): then every load of the loop is in
    # flight while the adds run. The previous kernel (reduce_kernel) was not: only loads
    # issued before the first add count there.
    pipelined = "reduce_kernel" not in name
    # The innermost loop holding vector loads: the software-pipelined rows loop.
    inner = sorted((hi - lo, lo, hi) for lo, hi in loops
                   if any(lo <= a <= hi and op.startswith(load + " ") for a, op in code))
    best = run = 0
    if inner:
        _, lo, hi = inner[0]
        for a, op in code:
            if lo <= a <= hi:
                if op.startswith(load + " "):
                    run += 1
                    best = max(best, run)
                elif op.startswith(("DADD", "DMUL")) and not pipelined:
                    run = 0
    rows.append((KINDS[kind], "f32" if dtype == "f" else "f64", int(lanes), int(loads), best, best * WIDTH[load]))
print("%-6s %-4s %5s %5s %22s %16s" % ("kind", "type", "lanes", "rows", "loads in flight", "bytes per thread"))
for r in sorted(rows):
    print("%-6s %-4s %5d %5d %22d %16d" % r)
