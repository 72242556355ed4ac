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

# shellcheck source=render_once.sh
. "$(dirname "$0")/render_once.sh"

{ render_once "$dir/cache900" 80 900000; render_once "$dir/val900200" 40 900200; } > /dev/null &
first=$!
{ render_once "$dir/val900300" 80 900300; render_once "$dir/pw60b" 60 900600 --style patchwork; } > /dev/null
wait "$first"
