#!/usr/bin/env bash
# Issue #39: the GPU path on a real GPU, in one run (about 4 minutes).
#   benchmarks/gpu/h200_check.sh          on the GPU machine (carry .whl: the packages its image lacks)
#   benchmarks/gpu/h200_check.sh --fake   here: FakeNVML and a CPU stand-in, to test the plumbing
# 1. nvidia-smi -q / -q -d PCIE / topo -m; 2. measure.py: NVML's PCIe call, GPM, the collector's
# cost, the exposition's DCGM series; 3. the workload (busy -> cpu preprocessing -> h2d copies)
# with `inferwatch exporter` and `inferwatch serve` at 1 s, `inferwatch diagnose gpu --json` at the
# end of the cpu phase; 4. everything into $OUT/h200.tar.gz (+ log.txt and the small reports).
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
FAKE=0; [ "${1:-}" = "--fake" ] && FAKE=1
OUT=${OUT:-/tmp/iw-h200-out}
W=${W:-/tmp/iw-h200}
BUSY=${BUSY:-60}; CPU=${CPU:-60}; H2D=${H2D:-20}
rm -rf "$W"; mkdir -p "$W" "$OUT"
export PYTHONUNBUFFERED=1
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; PIDS=(); }

main() {
  trap cleanup EXIT  # main runs in the pipeline's subshell: its PIDS are only seen here
  echo "=== start $(date -u +%FT%TZ) fake=$FAKE phases busy=$BUSY cpu=$CPU h2d=$H2D"
  if [ "$FAKE" = 1 ]; then
    PY=${PY:-/work/main/.venv/bin/python}
    export PYTHONPATH=$ROOT/src:$ROOT
  else
    PY=python3
    timeout 120 python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .whl/*.whl || { echo "wheel install failed"; return 1; }
    export PYTHONPATH=$ROOT/src:/tmp/site:$ROOT
    timeout 20 nvidia-smi -q > "$W/nvidia-smi-q.txt" 2>&1
    timeout 20 nvidia-smi -q -d PCIE > "$W/nvidia-smi-q-pcie.txt" 2>&1
    timeout 20 nvidia-smi topo -m > "$W/nvidia-smi-topo.txt" 2>&1
    head -20 "$W/nvidia-smi-q-pcie.txt"
  fi
  timeout 30 $PY -c "import sys, inferwatch, pydantic, starlette, uvicorn, re2, cramjam; print('python', sys.version.split()[0], 'imports ok')" \
    || { echo "imports failed"; return 1; }
  [ "$FAKE" = 1 ] || timeout 30 $PY -c "import torch, pynvml; print('torch', torch.__version__, torch.cuda.get_device_name(0), 'nvidia-ml-py', getattr(pynvml, '__version__', '?'))"

  echo "=== measure ($(date -u +%T))"
  timeout 90 $PY -m benchmarks.gpu.measure --out "$W" $([ "$FAKE" = 1 ] && echo --fake)
  echo "=== measure rc=$?"

  cat > "$W/iw.yaml" <<EOF
server: {listen: "127.0.0.1:9464", data_dir: "$W/data"}
collect: {interval: 1s}
scrape:
  targets:
    - {job: exporter, url: "http://127.0.0.1:9400/metrics", dimension: infrastructure, interval: 1s, timeout: 1s}
    - {job: gpu-bench, url: "http://127.0.0.1:8001/metrics", dimension: service, interval: 1s, timeout: 1s}
EOF
  local total=$((BUSY + CPU + H2D + 120))
  # not under `timeout`: the exporter must watch the workload's own pid; a watchdog bounds it instead
  $PY benchmarks/gpu/workload.py --phases "busy:$BUSY,cpu:$CPU,h2d:$H2D" --port 8001 \
    --log "$W/workload.jsonl" $([ "$FAKE" = 1 ] && echo "--fake --cpu-threads 1") > "$W/workload.out" 2>&1 &
  local wpid=$!; PIDS+=("$wpid")
  (sleep $total; kill "$wpid" 2>/dev/null) &
  PIDS+=("$!")
  if [ "$FAKE" = 1 ]; then
    timeout $total $PY -m benchmarks.gpu.fake_exporter --port 9400 --pid "$wpid" --phase-log "$W/workload.jsonl" \
      > "$W/exporter.out" 2>&1 &
  else
    timeout $total $PY -m inferwatch exporter --port 9400 --pid "$wpid" -c "$W/iw.yaml" > "$W/exporter.out" 2>&1 &
  fi
  PIDS+=("$!")
  timeout $total $PY -m inferwatch serve -c "$W/iw.yaml" > "$W/serve.out" 2>&1 &
  local spid=$!; PIDS+=("$spid")

  wait_for "phase.*busy" 90 || return 1
  sleep $((BUSY / 2)); scrape busy
  wait_for "phase.*cpu" $((BUSY + 30)) || return 1
  sleep $((CPU / 2)); scrape cpu
  sleep $((CPU / 2 - 4))
  local since=$((BUSY + CPU - 6))
  echo "=== diagnose gpu --since ${since}s ($(date -u +%T))"
  timeout 60 $PY -m inferwatch diagnose gpu -c "$W/iw.yaml" --since "${since}s" --service gpu-bench --json \
    > "$W/diagnose-cpu.json" 2> "$W/diagnose-cpu.err"
  echo "=== diagnose rc=$? at $(date +%s.%N)" | tee "$W/diagnose-at.txt"
  timeout 60 $PY -m inferwatch diagnose gpu -c "$W/iw.yaml" --since "${since}s" --service gpu-bench \
    > "$W/diagnose-cpu.txt" 2>&1
  cat "$W/diagnose-cpu.txt"
  wait_for "phase.*h2d" 30 && sleep 6 && scrape h2d
  [ "$FAKE" = 1 ] || timeout 30 $PY -m benchmarks.gpu.measure --out "$W" --pcie-only
  timeout $((H2D + 60)) tail --pid="$wpid" -f /dev/null
  sleep 2
  kill "$spid" 2>/dev/null; timeout 20 tail --pid="$spid" -f /dev/null
  timeout 60 $PY -m benchmarks.gpu.dump_series --data-dir "$W/data" --workload-log "$W/workload.jsonl" \
    --out "$W/series.json.gz"
  tail -n 5 "$W/serve.out" "$W/exporter.out" "$W/workload.out"
  cat "$W/workload.jsonl"
}

wait_for() {  # wait_for REGEX SECONDS: until the workload logged it
  local i
  for ((i = 0; i < $2 * 2; i++)); do
    grep -q "$1" "$W/workload.jsonl" 2>/dev/null && { echo "=== $1 ($(date -u +%T))"; return 0; }
    sleep 0.5
  done
  echo "=== timed out waiting for $1"; tail -n 20 "$W/workload.out" "$W/serve.out" "$W/exporter.out"; return 1
}

scrape() {  # scrape NAME: the exporter's exposition now
  timeout 10 $PY -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:9400/metrics', timeout=5).read().decode())" \
    > "$W/exposition-$1.prom" && echo "=== scraped exposition-$1.prom ($(grep -c '^DCGM' "$W/exposition-$1.prom") DCGM lines)"
  grep -E '^DCGM_FI_(DEV_GPU_UTIL|PROF_SM_ACTIVE|PROF_PIPE_TENSOR_ACTIVE|PROF_PCIE_RX_BYTES)' "$W/exposition-$1.prom" | sed 's/{.*}/ /'
}

main 2>&1 | tee "$OUT/log.txt"
rc=${PIPESTATUS[0]}
rm -rf "$W/data"
tar -C "$(dirname "$W")" -czf "$OUT/h200.tar.gz" "$(basename "$W")"
cp "$W"/measure*.json "$W"/diagnose-cpu.* "$OUT/" 2>/dev/null
ls -la "$OUT"
exit "$rc"
