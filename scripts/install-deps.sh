#!/usr/bin/env bash
# Installs the Debian 12 packages rig needs, by profile:
#   scripts/install-deps.sh          build and run rig (the `run` profile)
#   scripts/install-deps.sh --test   also test, fuzz and benchmark it
# Idempotent: packages already present are skipped; apt-get runs only when
# something is missing. Run as root (or with sudo available).
set -euo pipefail

profile=run
case "${1:-}" in
  "") ;;
  --test) profile=test ;;
  *)
    echo "install-deps: unknown option '$1' (use --test for the test profile)" >&2
    exit 2
    ;;
esac

# Building and running.
packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libopencv-dnn-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libexpected-dev libsqlite3-dev
  gnuplot-nox  # rig report's plots (rig report still writes every table without it)
)
# Tests, sanitizers, fuzzing, formatting and benchmarks only (python3: the
# tests of the C ABI's Python binding and of rig.sigs; Debian's, /usr/bin/python3).
test_packages=(
  clang libclang-rt-14-dev clang-format python3
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-html5lib  # strict HTML5 parse of rig report's page
  chromium python3-pil  # the report's headless browser test and its screenshot check
  libgrpc++-dev protobuf-compiler-grpc  # bench/wire's gRPC reference (wire_bench)
)
if [[ $profile == test ]]; then packages+=("${test_packages[@]}"); fi
# Not installed by either profile: tools/check-torchvision.py (a manual check,
# not CI) needs `apt-get install -y python3-torchvision python3-onnx python3-opencv`.

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#packages[@]} packages of the $profile profile present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps ($profile profile): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
