#!/usr/bin/env bash
# Every accuracy figure of the scanner's section in docs/benchmarks.md, from a fresh machine.
#
#   benchmarks/measure_scanner.sh SETS_DIR RESULTS_DIR [DEV_DIR]
#
# Renders the held-out sets into SETS_DIR where they are missing (the 200 renders of seeds
# 1,000,000-1,000,199, 40 bold prints of seeds 1,400,000-1,400,039 and the three held-out calibration
# copies; about 12 min on 2 cores), then
# writes one JSON per benchmark into RESULTS_DIR (25-35 min on 2 cores, by machine). DEV_DIR defaults to
# ../shared/photos/dev. RESULTS_DIR/versions.json records the libraries' versions (the figures of
# docs/benchmarks.md need those of benchmarks/constraints.txt), RESULTS_DIR/fingerprints.json whether this
# machine draws the held-out photos as the one they were measured on did (render_fingerprint.py). Speed is measured apart, on an idle machine
# (benchmarks/bench_scan_speed.py SETS_DIR/render200 --limit 100 --repeat 1: ten photos say little of a median);
# a change's speed against the code before it: benchmarks/compare_scan_speed.py OLD_CHECKOUT NEW_CHECKOUT
# SETS_DIR/render200 --limit 100 (paired, photo by photo: the machine's speed moves more between runs).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 SETS_DIR RESULTS_DIR [DEV_DIR]" >&2; exit 2; }
sets=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
dev=${3:-$here/../../shared/photos/dev}
[ -d "$dev" ] || { echo "$0: no dev photos at $dev" >&2; exit 2; }
mkdir -p "$sets" "$results"
# The renders' pixels depend on OpenCV's version: record the versions, and warn where they are not the pinned ones.
python "$here/library_versions.py" --check > "$results/versions.json"
python "$here/render_fingerprint.py" --json > "$results/fingerprints.json"

# shellcheck source=render_once.sh
. "$here/render_once.sh"

render_once "$sets/render200" 200 1000000
render_once "$sets/patchwork40" 40 1400000 --style patchwork
for copy in 1 2 3; do
    render_once "$sets/copy$copy" 20 $((1200000 + 100 * copy)) --style vintage --colours orange,purple --copy "$copy"
done

run() {  # NAME COMMAND...: the command's stdout into RESULTS_DIR/NAME.json
    local name=$1
    shift
    echo "$(date -u +%H:%M:%S) $name" >&2
    "$@" > "$results/$name.json"
}

run eval200 fjords eval "$sets/render200" --json
run evaldev fjords eval "$dev" --json
run evalpatchwork fjords eval "$sets/patchwork40" --json
run bench200 python "$here/bench_scan.py" "$sets/render200" --json
run inview python "$here/bench_scan.py" "$sets/render200" --in-view 0.95 --json
run truth60 python "$here/bench_scan.py" "$sets/render200" --truth-geometry --limit 60 --json
run benchdev python "$here/bench_scan.py" "$dev" --json
run stability200 python "$here/bench_stability.py" "$sets/render200" --json
run stabilitydev python "$here/bench_stability.py" "$dev" --json
run rule_breaks python "$here/bench_rule_breaks.py" --count 20 --json
for copy in 1 2 3; do
    run "copy$copy" python "$here/bench_calibration.py" "$sets/copy$copy" --json
    run "copy$copy-inview" python "$here/bench_calibration.py" "$sets/copy$copy" --in-view 0.95 --json
done
run devcalib python "$here/bench_calibration.py" "$dev" --calibrate-on fjords_02000.jpg --json
echo "$(date -u +%H:%M:%S) done: $results" >&2
