#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in their own build directory and
# runs each for a short smoke period, starting from a generated seed corpus.
#   RIG_FUZZ_BUILD_DIR  build directory (default build-fuzz)
#   RIG_FUZZ_SECONDS    seconds per target (default 60: 9 targets, about 9 min of
#                       fuzzing in CI on top of the build)
set -euo pipefail
cd "$(dirname "$0")/.."

build=${RIG_FUZZ_BUILD_DIR:-build-fuzz}
seconds=${RIG_FUZZ_SECONDS:-60}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
targets=(fuzz_frame_parser fuzz_server_dispatch fuzz_remote_replies fuzz_model_inspect fuzz_text_inputs
         fuzz_npy fuzz_result_reports fuzz_hailo_log fuzz_model_weights)

CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DRIG_BUILD_FUZZ=ON -DRIG_BUILD_TESTS=OFF -DRIG_BUILD_BENCH=OFF \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags"
cmake --build "$build" -j2 --target "${targets[@]}"

for target in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  echo "fuzz: $target for ${seconds}s"
  RIG_FUZZ_SEEDS="$corpus" ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1 \
    "$build/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$corpus"
done
