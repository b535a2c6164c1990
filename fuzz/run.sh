#!/usr/bin/env bash
# `make fuzz`: builds the libFuzzer binary (debug, AddressSanitizer, libFuzzer's coverage; its own
# scratch path) and runs each target in turn, one at a time, for FUZZ_SECONDS (default 60) from
# its seed corpus. New inputs go to fuzz/out/<target>/corpus, findings to
# fuzz/out/<target>/crashes; a summary line per target (runs, seconds, exec/s, result) ends the
# output and fuzz/out/summary.txt. Exit status 1 when any target found something.
# FUZZ_TARGETS="host-name doh-json" limits the run; FUZZ_SCRATCH moves the build, FUZZ_OUT the
# output directory (fuzz/out).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
scratch=${FUZZ_SCRATCH:-$PWD/.build-fuzz}
targets=${FUZZ_TARGETS:-$(for d in fuzz/*/corpus; do basename "$(dirname "$d")"; done)}

# libFuzzer without its main(): httpdnsd-fuzz has its own (SwiftPM renames an executable's entry
# point, so libFuzzer's main would clash) and calls LLVMFuzzerRunDriver.
swiftc=$(command -v swiftc)
runtime=$(ls "$(dirname "$swiftc")"/../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-"$(uname -m)".a 2>/dev/null | head -n 1)
if [[ -z $runtime ]]; then
    echo "fuzz: libclang_rt.fuzzer_no_main not found beside $swiftc (a toolchain with libFuzzer is needed)" >&2
    exit 2
fi
build=(swift build --package-path fuzz --scratch-path "$scratch" --product httpdnsd-fuzz
    -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table
    -Xswiftc -DFUZZING -Xlinker "$runtime" -Xlinker -lstdc++)
"${build[@]}" 2>&1 | grep -v "Cannot export local symbol" || true
[[ ${PIPESTATUS[0]} -eq 0 ]] || exit 1
bin="$(swift build --package-path fuzz --scratch-path "$scratch" --show-bin-path)/httpdnsd-fuzz"

outroot=${FUZZ_OUT:-fuzz/out}
mkdir -p "$outroot"
summary=()
failed=0
for target in $targets; do
    out=$outroot/$target
    mkdir -p "$out/corpus" "$out/crashes"
    echo "fuzz: $target for ${seconds}s"
    start=$(date +%s)
    status=0
    FUZZ_TARGET=$target SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} \
        "$bin" -max_total_time="$seconds" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$out/crashes/" "$out/corpus" "fuzz/$target/corpus" > "$out/log" 2>&1 || status=$?
    elapsed=$(( $(date +%s) - start ))
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/log" | tail -n 1)
    if [[ $status -eq 0 ]]; then result=clean; else result="FOUND (exit $status, see $out/log and $out/crashes)"; failed=1; fi
    summary+=("$target: ${runs:-?} runs in ${elapsed}s (${rate:-?} exec/s), $result")
    echo "  ${summary[-1]}"
done
printf '%s\n' "${summary[@]}" | tee "$outroot/summary.txt"
exit $failed
