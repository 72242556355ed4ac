# Sourced by the benchmark scripts that render their sets (measure_scanner.sh, choosing_sets.sh).

render_once() {  # DIR COUNT SEED [fjords render options]: render unless DIR already holds COUNT photos
    local dir=$1 count=$2 seed=$3
    shift 3
    # -H: DIR may be a link to a folder rendered before, whose photos must be counted, not rendered again over.
    if [ "$(find -H "$dir" -name '*.jpg' 2>/dev/null | wc -l)" -lt "$count" ]; then
        fjords render --count "$count" --seed "$seed" --out "$dir" --force "$@"
    fi
}
