#!/usr/bin/env bash
# cmake --install into a temporary prefix, then use what it installed: a tiny
# C program built with find_package(rig) -> rig::rig_c and again with
# pkg-config, the Python package, and the rig executable.
#   install_test.sh BUILD_DIR CMAKE GENERATOR [SANITIZE_FLAGS]
set -euo pipefail
build=$1
cmake=$2
generator=$3
sanitize=${4:-}

work=$(mktemp -d "${TMPDIR:-/tmp}/rig-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"

mkdir -p "$work/consumer"
cat > "$work/consumer/hello.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <rig/rig.h>
int main(void) {
  rig_device* device = NULL;
  if (rig_abi_version() != RIG_ABI_VERSION) return 1;
  if (rig_device_open("sim:compute=1ms", &device) != RIG_OK) return 2;
  rig_device_close(device);
  if (rig_device_open("warp:9", &device) != RIG_ERROR_INVALID_ARGUMENT) return 3;
  if (strlen(rig_last_error()) == 0) return 4;
  printf("hello rig abi %d\n", (int)rig_abi_version());
  return 0;
}
C
cat > "$work/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.25)
project(hello C)
find_package(rig CONFIG REQUIRED)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE rig::rig_c)
CM
"$cmake" -S "$work/consumer" -B "$work/consumer/build" -G "$generator" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_FLAGS="$sanitize" > "$work/consumer.log"
"$cmake" --build "$work/consumer/build" > "$work/consumer-build.log"
"$work/consumer/build/hello"

libdir=$(dirname "$(find "$prefix" -name 'librig_c.so' | head -1)")
pc=$(find "$prefix" -name rig.pc | head -1)
PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --exists rig
cc $sanitize "$work/consumer/hello.c" -o "$work/hello-pc" \
  $(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs rig)
LD_LIBRARY_PATH=$libdir "$work/hello-pc"

for f in include/rig/rig.h include/rig/rig.sigs bin/rig; do
  test -e "$prefix/$f" || { echo "install_test: $f was not installed" >&2; exit 1; }
done
"$prefix/bin/rig" --version

pydir=$(dirname "$(find "$prefix" -path '*/rig/__init__.py' | head -1)")
preload=()
if [[ -n $sanitize ]]; then preload=(env "LD_PRELOAD=$(gcc -print-file-name=libasan.so)" ASAN_OPTIONS=detect_leaks=0); fi
env -u RIG_LIBRARY -u RIG_SIGS PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "$pydir")" \
  "${preload[@]}" /usr/bin/python3 -c \
  'import rig, sys; d = rig.Device("sim:compute=1ms"); print("python: rig abi", rig.abi_version(), "from", rig.library_path); sys.exit(0 if rig.library_path.startswith(sys.argv[1]) else 1)' \
  "$prefix"
echo "install_test: ok"
