#!/usr/bin/env bash
# Soak of rig serve under honest and hostile clients at once (loopback only,
# wall clock: a benchmark, not a ctest). For SECONDS (default 60) it runs:
#   4 honest `rig bench` clients (each must complete with its verdict),
#   2 clients that send requests and never read the replies,
#   64 idle connections (never say hello), 1 slowloris (a byte per second),
#   1 sender of malformed frames (reconnecting after each close).
# It samples the server's RSS every second and counts /proc/PID/fd before
# and after. Exit status 0 when every honest bench completed, the peak RSS
# stayed under RIG_SOAK_RSS_MB (default 512) and no fd leaked.
#   bench/soak/soak-server.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-60}
rss_limit_mb=${RIG_SOAK_RSS_MB:-512}
rig="$build/src/cli/rig"
py=/usr/bin/python3
work=$(mktemp -d)
trap 'kill $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT

"$rig" serve -d "sim:compute=1ms,bw=1GB/s,depth=8,realtime=1" --listen 127.0.0.1:0 \
  --max-pending-bytes 256MiB --hello-timeout 5s -q >"$work/serve.out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "$work/serve.out" 2>/dev/null && break
  sleep 0.1
done
addr=$(sed -n 's/.*listening on tcp:\/\/\([0-9.:]*\),.*/\1/p' "$work/serve.out")
[ -n "$addr" ] || { echo "soak: the server did not start"; cat "$work/serve.out"; exit 1; }
fds_before=$(ls /proc/$server_pid/fd | wc -l)
"$build/src/cli/rig" model transport --frame 64x64 -o "$work/t64.onnx" >/dev/null

# The hostile clients, in one Python process.
"$py" - "$addr" "$seconds" >"$work/hostile.out" 2>&1 <<'PY' &
import socket, struct, sys, threading, time
host, port = sys.argv[1].rsplit(":", 1)
port, seconds = int(port), float(sys.argv[2])
end = time.time() + seconds
def frame(mid, action, body):
    return struct.pack("<5I", 0x47495257, len(body), mid, action, 0) + body
hello = frame(1, 1, bytes([0x52, 4, 0x08, 1, 0x10, 1]))
describe = lambda mid: frame(mid, 3, bytes([0x72, 2, 0x08, 99]))
def conn():
    s = socket.create_connection((host, port)); s.settimeout(5); return s
def never_reads():
    s = conn(); s.sendall(hello); mid = 2
    s.setblocking(False)
    while time.time() < end:
        try: s.send(b"".join(describe(mid + i) for i in range(200))); mid += 200
        except BlockingIOError: time.sleep(0.05)
        except OSError: s = conn(); s.sendall(hello); s.setblocking(False)
def slowloris():
    while time.time() < end:
        try:
            s = conn()
            for b in hello:
                if time.time() > end: return
                s.send(bytes([b])); time.sleep(1)
        except OSError: pass
def malformed():
    sent = 0
    while time.time() < end:
        try:
            s = conn(); s.sendall(hello + b"\x00garbage-not-a-frame" * 50); s.recv(65536); sent += 1
        except OSError: pass
        time.sleep(0.01)
    print("malformed senders:", sent)
idle = []
for _ in range(64):
    try: idle.append(conn())
    except OSError as e: print("idle connect failed:", e)
threads = [threading.Thread(target=f) for f in (never_reads, never_reads, slowloris, malformed)]
for t in threads: t.start()
# Idle connections are closed at the hello deadline; reopen them all along.
while time.time() < end:
    time.sleep(1)
    for i, s in enumerate(idle):
        try:
            s.setblocking(False)
            if s.recv(1 << 16) == b"": raise OSError
        except BlockingIOError: pass
        except OSError:
            try: idle[i] = conn()
            except OSError: pass
for t in threads: t.join()
for s in idle: s.close()
print("hostile clients done")
PY
hostile_pid=$!

peak_kb=0
sample() {
  local kb
  kb=$(awk '/VmRSS/ {print $2}' /proc/$server_pid/status)
  [ "$kb" -gt "$peak_kb" ] && peak_kb=$kb
  return 0
}
honest=()
for i in 1 2 3 4; do
  "$rig" bench "$work/t64.onnx" -d "tcp://$addr" --duration 5s --repeats 2 -q \
    --json "$work/bench$i.json" >"$work/bench$i.out" 2>&1 &
  honest+=($!)
done
start=$(date +%s)
while [ $(( $(date +%s) - start )) -lt "$seconds" ]; do sample; sleep 1; done
completed=0
for i in 1 2 3 4; do
  if wait "${honest[$((i-1))]}" && grep -q '"status"' "$work/bench$i.json"; then
    completed=$((completed + 1))
    echo "soak: honest bench $i: $(grep -o 'verdict: [A-Z]*' "$work/bench$i.out" | head -1)"
  else
    echo "soak: honest bench $i FAILED:"; cat "$work/bench$i.out"
  fi
done
wait $hostile_pid || true
cat "$work/hostile.out"
sleep 7  # past the hello deadline: every hostile connection is closed
sample
fds_after=$(ls /proc/$server_pid/fd | wc -l)
echo "soak: ${seconds}s; honest benches completed: $completed/4"
echo "soak: server peak RSS $((peak_kb / 1024)) MiB (bound ${rss_limit_mb} MiB)"
echo "soak: server fds before $fds_before, after $fds_after"
[ "$completed" -eq 4 ] && [ $((peak_kb / 1024)) -lt "$rss_limit_mb" ] && [ "$fds_after" -le "$fds_before" ]
