#!/usr/bin/env bash
# Builds the fuzzers with clang 19 (libFuzzer + ASan + UBSan) in build-fuzz/ and runs each: the
# network's frame decoder (what any peer sends) and the WAL's segment scanner (what a crash left).
#   tests/fuzz/run.sh [seconds]      default 30 each; extra arguments go to libFuzzer (e.g. -jobs=2)
# New inputs go to build-fuzz/corpus/<name> (the checked-in seeds stay as they are); a crash leaves
# its input in build-fuzz/ and the script fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds="${1:-30}"
shift || true
dir=build-fuzz

CXX=clang++-19 cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DELFIN_BUILD_FUZZERS=ON \
  -DELFIN_BUILD_TESTS=OFF -DELFIN_BUILD_EXAMPLES=OFF > /dev/null
cmake --build "$dir" --target elfin_frame_decoder_fuzzer elfin_wal_segment_fuzzer
for pair in frame:elfin_frame_decoder_fuzzer wal:elfin_wal_segment_fuzzer; do
  corpus="${pair%%:*}"
  mkdir -p "$dir/corpus/$corpus"
  UBSAN_OPTIONS="halt_on_error=1 print_stacktrace=1" \
    "$dir/tests/fuzz/${pair#*:}" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -print_final_stats=1 -artifact_prefix="$dir/" "$@" "$dir/corpus/$corpus" "tests/fuzz/corpus/$corpus"
done
