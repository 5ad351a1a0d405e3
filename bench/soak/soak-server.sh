#!/usr/bin/env bash
# Soak of rig serve under honest and hostile clients at once (loopback only,
# wall clock: a benchmark, not a ctest). For SECONDS (default 60) it runs:
#   4 honest `rig bench` clients (each must complete with its verdict),
#   2 clients that send requests and never read the replies,
#   64 idle connections (never say hello), each reopened as soon as the
#   server closes it (handshake renewal), 1 slowloris (a byte per second),
#   1 sender of malformed frames (reconnecting after each close),
#   1 uploader of crafted models (a tensor's data short of its declared
#   shape: refused by name, the server lives on),
#   1 guesser of tokens at full speed (wrong token, new connection each time),
#   2 pre-hello flooders (requests before hello, never reading a refusal).
# The server requires a token (the honest clients have it). It samples the
# server's RSS every second and counts /proc/PID/fd before and after. Exit
# status 0 when every honest bench completed, the peak RSS stayed under
# RIG_SOAK_RSS_MB (default 512) and no fd leaked.
#   bench/soak/soak-server.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-60}
rss_limit_mb=${RIG_SOAK_RSS_MB:-512}
rig="$build/src/cli/rig"
py=/usr/bin/python3
work=$(mktemp -d)
trap 'kill $server_pid 2>/dev/null || true; rm -rf "$work"' EXIT
token=soak-token-of-24-characters

RIG_TOKEN=$token "$rig" serve -d "sim:compute=1ms,bw=1GB/s,depth=8,realtime=1" \
  --listen 127.0.0.1:0 --max-pending-bytes 256MiB --hello-timeout 5s -q >"$work/serve.out" 2>&1 &
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
"$py" - "$addr" "$seconds" "$token" >"$work/hostile.out" 2>&1 <<'PY' &
import socket, struct, sys, threading, time
host, port = sys.argv[1].rsplit(":", 1)
port, seconds, token = int(port), float(sys.argv[2]), sys.argv[3].encode()
end = time.time() + seconds
def frame(mid, action, body, buffers=()):
    return struct.pack("<5I", 0x47495257, len(body), mid, action, 0) + body + b"".join(buffers)
def varint(v):
    out = b""
    while True:
        b = v & 0x7F; v >>= 7
        if v: out += bytes([b | 0x80])
        else: return out + bytes([b])
def field(n, payload):  # length-delimited
    return varint(n << 3 | 2) + varint(len(payload)) + payload
def number(n, v):
    return varint(n << 3) + varint(v)
def hello_with(tok):
    return frame(1, 1, field(10, number(1, 1) + number(2, 1) + field(3, tok)))
hello = hello_with(token)
describe = lambda mid: frame(mid, 3, bytes([0x72, 2, 0x08, 99]))
# y = x + w with w declared 8192 floats and 4 bytes of raw data (issue 26).
def value_info(name, n):
    shape = field(2, field(1, number(1, n)))
    return field(1, name) + field(2, field(1, number(1, 1) + shape))
node = field(1, b"x") + field(1, b"w") + field(2, b"y") + field(4, b"Add")
w = number(1, 8192) + number(2, 1) + field(8, b"w") + field(9, b"\x01" * 4)
graph = field(1, node) + field(2, b"g") + field(5, w) + field(11, value_info(b"x", 8192)) \
    + field(12, value_info(b"y", 8192))
crafted = number(1, 7) + field(8, field(1, b"") + number(2, 13)) + field(7, graph)
counts = {"crafted refused": 0, "guesses": 0, "renewed": 0, "flood sent": 0}
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
def crafted_uploader():
    while time.time() < end:
        try:
            s = conn(); s.sendall(hello); s.recv(65536)
            load = field(12, field(1, b"crafted"))
            body = varint(1 << 3 | 2) + varint(len(varint(len(crafted)))) + varint(len(crafted)) + load
            s.sendall(frame(2, 2, body, [crafted]))
            reply = s.recv(65536)
            if len(reply) >= 20 and struct.unpack("<5I", reply[:20])[4] != 0:
                counts["crafted refused"] += 1
            s.close()
        except OSError: time.sleep(0.01)
def guesser():
    i = 0
    while time.time() < end:
        try:
            s = conn(); s.sendall(hello_with(b"guess-%d" % i)); i += 1
            counts["guesses"] += 1
            s.close()  # the refusal comes late: do not wait for it
        except OSError: time.sleep(0.001)
def pre_hello_flood():
    while time.time() < end:
        try:
            s = conn(); s.setblocking(False); mid = 1
            while time.time() < end:
                try:
                    n = s.send(b"".join(describe(mid + i) for i in range(200))); mid += 200
                    counts["flood sent"] += n
                except BlockingIOError: time.sleep(0.05)
        except OSError: time.sleep(0.01)
idle = []
for _ in range(64):
    try: idle.append(conn())
    except OSError as e: print("idle connect failed:", e)
threads = [threading.Thread(target=f) for f in (never_reads, never_reads, slowloris, malformed,
                                                 crafted_uploader, guesser, pre_hello_flood,
                                                 pre_hello_flood)]
for t in threads: t.start()
# Idle connections are closed at the hello deadline or evicted for a
# newcomer; reopen each as soon as it is (handshake renewal).
while time.time() < end:
    time.sleep(0.01)
    for i, s in enumerate(idle):
        try:
            s.setblocking(False)
            if s.recv(1 << 16) == b"": raise OSError
        except BlockingIOError: pass
        except OSError:
            try: idle[i] = conn(); counts["renewed"] += 1
            except OSError: pass
for t in threads: t.join()
for s in idle: s.close()
print("hostile clients done:", counts)
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
  "$rig" bench "$work/t64.onnx" -d "tcp://$addr?token=$token" --duration 5s --repeats 2 -q --no-history \
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
