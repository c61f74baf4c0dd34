#!/usr/bin/env bash
# BabelStream's own models beside ew-babelstream (its driver on our API, Dot through
# ew::dot), same machine, same driver options, interleaved: ours, theirs, `rounds` times,
# in double and in float. BabelStream is not part of this repository: pass a checkout of
# it (docs/reductions.md names the commit measured). Models run where they can: cuda when
# nvcc and a GPU are there, omp always (all cores, OMP_PROC_BIND=spread).
# Usage: bash bench/babelstream/compare.sh <babelstream-source> <ew-build-dir> [rounds]
# Logs go to $OUT (default ./out), one file per run, and a summary table to stdout.
set -uo pipefail
src=${1:?BabelStream source directory}
ew_build=${2:?elementwise build directory (with bench/babelstream/ew-babelstream)}
rounds=${3:-3}
out=${OUT:-$PWD/out}/babelstream
mkdir -p "$out"
size=${BS_SIZE:-33554432}  # BabelStream's default
times=${BS_TIMES:-100}
ew="$ew_build/bench/babelstream/ew-babelstream"
[[ -x $ew ]] || { echo "no $ew"; exit 1; }
bs_build=$(mktemp -d)/bs

models=(omp)
cmake -S "$src" -B "$bs_build/omp" -DMODEL=omp -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=g++ \
  -DCMAKE_CXX_FLAGS="-O3 -march=native" > "$out/build-omp.log" 2>&1 &&
  cmake --build "$bs_build/omp" -j > "$out/build-omp.log" 2>&1 || { echo "omp model did not build"; models=(); }
if command -v nvcc > /dev/null && command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
  if cmake -S "$src" -B "$bs_build/cuda" -DMODEL=cuda -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" \
      -DCUDA_ARCH="sm_$arch" > "$out/build-cuda.log" 2>&1 && cmake --build "$bs_build/cuda" -j >> "$out/build-cuda.log" 2>&1; then
    models+=(cuda)
  else
    echo "cuda model did not build (see build-cuda.log)"
  fi
fi
# The commit: from the checkout's own .git, or a COMMIT file beside an exported tree.
commit=unknown
if [[ -e $src/.git ]]; then commit=$(git -C "$src" rev-parse HEAD); elif [[ -f $src/COMMIT ]]; then commit=$(cat "$src/COMMIT"); fi
echo "models: ${models[*]}; BabelStream at $commit"
nproc_all=$(nproc)

run_pair() {  # model precision round
  local model=$1 prec=$2 r=$3 flag=()
  [[ $prec == float ]] && flag=(--float)
  local backend=$model
  [[ $model == omp ]] && backend=highway
  OMP_NUM_THREADS=$nproc_all OMP_PROC_BIND=spread OMP_PLACES=cores \
    "$bs_build/$model/$model-stream" --arraysize $size --numtimes $times "${flag[@]}" > "$out/$model-$prec-bs-run$r.txt" 2>&1
  "$ew" --backend "$backend" -s $size -n $times "${flag[@]}" > "$out/$model-$prec-ew-$backend-run$r.txt" 2>&1
}

for model in "${models[@]}"; do
  for prec in double float; do
    for r in $(seq 1 "$rounds"); do run_pair "$model" "$prec" "$r"; done
  done
done

# Median MB/s per kernel over the rounds (BabelStream prints "Kernel MBytes/sec ...").
python3 - "$out" "$rounds" "${models[@]}" <<'EOF'
import glob, re, statistics, sys
out, rounds, models = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def rates(path):
    r = {}
    for line in open(path, errors="replace"):
        m = re.match(r"^(Copy|Mul|Add|Triad|Dot)\s+([0-9.]+)\s+[0-9.]+\s+", line)
        if m: r[m.group(1)] = float(m.group(2))
    return r
for model in models:
    backend = "highway" if model == "omp" else model
    for prec in ("double", "float"):
        ours = [rates(f) for f in sorted(glob.glob(f"{out}/{model}-{prec}-ew-{backend}-run*.txt"))]
        theirs = [rates(f) for f in sorted(glob.glob(f"{out}/{model}-{prec}-bs-run*.txt"))]
        print(f"\n{prec}: ew {backend} against BabelStream {model} (MB/s, median of {rounds})")
        print("| kernel | ew | BabelStream | ratio |")
        for k in ("Copy", "Mul", "Add", "Triad", "Dot"):
            a = [r[k] for r in ours if k in r]; b = [r[k] for r in theirs if k in r]
            if a and b:
                ma, mb = statistics.median(a), statistics.median(b)
                print(f"| {k} | {ma:.0f} | {mb:.0f} | {ma / mb:.3f} |")
            else:
                print(f"| {k} | {'-' if not a else round(statistics.median(a))} | {'-' if not b else round(statistics.median(b))} | - |")
EOF
grep -l -iE "fail" "$out"/*-run*.txt 2>/dev/null | sed 's/^/verification or run problem: /'
exit 0
