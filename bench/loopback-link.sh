#!/usr/bin/env bash
# Characterizes this machine's loopback link through `rig serve`, beside the
# raw-socket reference measured in the same run (docs/benchmarks.md).
#
# The server hosts a sim device with negligible compute and no pacing, so the
# device answers at once and what the client times is the link: the kernel's
# loopback, the protocol and both processes. `rig ladder` fits bandwidth and
# fixed latency; `rig sweep` finds the pipelining knee; `wire_bench` measures
# raw TCP for the same 4K frames and a raw 64-byte ping-pong.
#
# usage: bench/loopback-link.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
build=${1:-build}
out=${2:-$(mktemp -d)}
rig="$build/src/cli/rig"
mkdir -p "$out"

log="$out/serve.log"
"$rig" serve -d "sim:compute=1us,depth=32" --listen 127.0.0.1:0 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  addr=$(sed -n 's/.*clients use -d \([^;]*\);.*/\1/p' "$log")
  [[ -n "$addr" ]] && break
  sleep 0.1
done
[[ -n "$addr" ]] || { cat "$log"; exit 1; }
echo "server: $addr"

"$rig" model transport --frame 64x64 -o "$out/t64.onnx" >/dev/null
echo; echo "== rig ladder over $addr"
"$rig" ladder -d "$addr" --repeats 3 --json "$out/ladder.json"
echo; echo "== rig sweep over $addr"
"$rig" sweep "$out/t64.onnx" -d "$addr" --depth 1..32 --json "$out/sweep.json"
echo; echo "== raw-socket reference (same run)"
"$build/bench/wire/wire_bench"
echo; echo "results in $out"
