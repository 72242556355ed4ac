#!/usr/bin/env bash
# The renders that changes are chosen on (training seeds, never trained on; never the held-out sets).
#
#   benchmarks/choosing_sets.sh DIR
#
# Renders, where missing, the 260 choosing renders that models/README.md's decisions are judged on:
# DIR/cache900 (80, seeds 900,000-900,079), DIR/val900200 (40, 900,200-900,239), DIR/val900300
# (80, 900,300-900,379) and DIR/pw60b (60 bold prints, 900,600-900,659); two renders at a time, about
# 25 min on 2 cores. The held-out sets are benchmarks/measure_scanner.sh's.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
dir=$1
mkdir -p "$dir"
# The renders' pixels depend on OpenCV's version: warn where it is not the pinned one (benchmarks/constraints.txt).
python "$(dirname "$0")/library_versions.py" --check > /dev/null

render_once() {  # NAME COUNT SEED [fjords render options]: render unless DIR/NAME already holds COUNT photos
    local out=$dir/$1 count=$2 seed=$3
    shift 3
    if [ "$(find "$out" -name '*.jpg' 2>/dev/null | wc -l)" -lt "$count" ]; then
        fjords render --count "$count" --seed "$seed" --out "$out" --force "$@" > /dev/null
    fi
}

{ render_once cache900 80 900000; render_once val900200 40 900200; } &
first=$!
render_once val900300 80 900300
render_once pw60b 60 900600 --style patchwork
wait "$first"
