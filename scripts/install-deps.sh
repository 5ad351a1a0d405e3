#!/usr/bin/env bash
# Installs the Debian 12 or Debian 13 packages rig needs, by profile:
#   scripts/install-deps.sh          build and run rig (the `run` profile)
#   scripts/install-deps.sh --test   also test, fuzz and benchmark it
# Idempotent: packages already present are skipped; apt-get runs only when
# something is missing. Run as root (or with sudo available). The release
# (/etc/os-release) picks the names where Debian 12 and 13 differ.
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

# Debian 12 "bookworm" and Debian 13 "trixie" (and Raspberry Pi OS on them).
# A later Debian (testing and unstable have no VERSION_ID) gets Debian 13's
# names, with a note.
ID=unknown VERSION_ID="" PRETTY_NAME="an unknown system"
# shellcheck disable=SC1091
if [[ -r /etc/os-release ]]; then . /etc/os-release; fi
os_major=${VERSION_ID%%.*}
if [[ $ID == debian || $ID == raspbian ]] && [[ $os_major == 12 ]]; then
  release=12
elif [[ $ID == debian || $ID == raspbian ]] && [[ $os_major == 13 ]]; then
  release=13
elif [[ $ID == debian || $ID == raspbian ]] && [[ -z $os_major || $os_major =~ ^[0-9]+$ && $os_major -gt 13 ]]; then
  release=13
  echo "install-deps: $PRETTY_NAME is newer than Debian 13; trying Debian 13's package names" >&2
else
  release=12
  echo "install-deps: $PRETTY_NAME is neither Debian 12 nor 13; trying Debian 12's package names" >&2
fi

# Building and running.
packages=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libopencv-dnn-dev libonnx-dev libprotobuf-dev protobuf-compiler
  libcli11-dev nlohmann-json3-dev libexpected-dev libsqlite3-dev
  gnuplot-nox  # rig report's plots (rig report still writes every table without it)
)
# ONNX Runtime, the cpu device's default runtime where it is built, is
# packaged from Debian 13 on.
if ((release >= 13)); then packages+=(libonnxruntime-dev); fi
# The sanitizer and libFuzzer runtimes of the release's default clang.
case $release in
  12) clang_rt=libclang-rt-14-dev ;;
  *) clang_rt=libclang-rt-19-dev ;;
esac
# Tests, sanitizers, fuzzing, formatting and benchmarks only (python3: the
# tests of the C ABI's Python binding and of rig.sigs; Debian's, /usr/bin/python3).
test_packages=(
  clang "$clang_rt" clang-format python3
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-html5lib  # strict HTML5 parse of rig report's page
  chromium python3-pil  # the report's headless browser test and its screenshot check
  libgrpc++-dev protobuf-compiler-grpc  # bench/wire's gRPC reference (wire_bench)
)
# HailoRT's host library as built in ../shared/hailort (the real-client
# tests, tests/hailort) needs these at run time; it is built on Debian 12, so
# only there (on Debian 13 the real-client tests are not built).
if ((release == 12)); then test_packages+=(libprotobuf-lite32 libspdlog1.10 libfmt9 libxxhash-dev); fi
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
  echo "install-deps: all ${#packages[@]} packages of the $profile profile for Debian $release present"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "install-deps ($profile profile, Debian $release): installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
