"""Compare two runs of ``fjords eval --json`` on the same photos, photo by photo.

    python benchmarks/compare_evals.py BASE.json NEW.json [BASE2.json NEW2.json ...] [--json] [--list N]

Each pair is one set of photos scanned twice (say, by the shipped code and by a candidate change). For every
pair and for all pairs together it prints the totals a decision is judged on (errors, silent sector errors,
unread sectors, pieces matched / scanned / true, boards exact, scores exact) for both runs, how many photos
have fewer or more errors, and the 95 % interval of the change of the errors (a paired bootstrap over photos,
:func:`fjords.compare.paired_change_interval`): where it holds 0, the photos cannot tell the runs apart.
``--list N`` names the N photos whose errors moved most. Photos are paired by name; a photo in only one run is
an error (the runs did not read the same photos).

This is how the changes in ``models/README.md`` are judged against the rules written before each run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fjords.compare import paired_change_interval

TOTALS = ("errors", "silent_sector_errors", "unread_sectors", "matched_pieces", "scanned_pieces",
          "true_pieces", "board_exact", "score_exact")


def photo_rows(path: Path) -> dict[str, dict]:
    """The per-photo results of one ``fjords eval --json`` file, by photo name."""
    try:
        photos = json.loads(path.read_text())["photos"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"compare_evals: {path}: not a `fjords eval --json` file ({exc})")
    return {row["name"]: row for row in photos}


def totals(rows: list[dict]) -> dict[str, int]:
    """Sum the counts (booleans count their true photos)."""
    return {key: int(sum(int(row[key]) for row in rows)) for key in TOTALS}


def compare(base: dict[str, dict], new: dict[str, dict]) -> dict:
    """Totals of both runs over the photos they share, and the photos whose error count moved.

    Parameters
    ----------
    base, new : dict
        Per-photo rows by name, as from :func:`photo_rows`; both must name the same photos.

    Returns
    -------
    dict
        ``photos``, ``base`` and ``new`` totals, ``better`` / ``worse`` photo counts, ``error_change_ci95`` (the
        95 % interval of the change of the errors) and ``moves``, a list of ``(name, base errors, new errors)`` for
        the photos that moved, largest move first.
    """
    if base.keys() != new.keys():
        only = sorted(base.keys() ^ new.keys())
        raise SystemExit(f"compare_evals: the runs read different photos (e.g. {only[0]})")
    names = sorted(base)
    moves = [(name, base[name]["errors"], new[name]["errors"]) for name in names
             if base[name]["errors"] != new[name]["errors"]]
    moves.sort(key=lambda move: -abs(move[2] - move[1]))
    return {
        "photos": len(names),
        "base": totals([base[name] for name in names]),
        "new": totals([new[name] for name in names]),
        "better": sum(1 for _, old, now in moves if now < old),
        "worse": sum(1 for _, old, now in moves if now > old),
        "error_change_ci95": paired_change_interval([base[name]["errors"] for name in names],
                                                    [new[name]["errors"] for name in names]),
        "moves": moves,
    }


def format_comparison(label: str, result: dict, listed: int) -> str:
    low, high = result["error_change_ci95"]
    lines = [f"{label}: {result['photos']} photos, {result['better']} better / {result['worse']} worse; "
             f"change of the errors, 95 % interval [{low:+.0f}, {high:+.0f}]"]
    for key in TOTALS:
        old, now = result["base"][key], result["new"][key]
        lines.append(f"  {key:22s} {old:7d} -> {now:7d}  ({now - old:+d})")
    lines += [f"  {name}: {old} -> {now}" for name, old, now in result["moves"][:listed]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="BASE.json NEW.json pairs")
    parser.add_argument("--list", type=int, default=0, metavar="N", help="name the N photos that moved most")
    parser.add_argument("--json", action="store_true", help="print the comparisons as JSON")
    args = parser.parse_args(argv)
    if len(args.runs) % 2:
        parser.error("give the runs in pairs: BASE.json NEW.json")
    pairs = list(zip(args.runs[::2], args.runs[1::2]))
    merged_base: dict[str, dict] = {}
    merged_new: dict[str, dict] = {}
    results = {}
    for base_path, new_path in pairs:
        base, new = photo_rows(base_path), photo_rows(new_path)
        results[f"{base_path} -> {new_path}"] = compare(base, new)
        # Sets may reuse photo names, so the pooled comparison keys photos by their pair too.
        merged_base.update({f"{base_path}:{name}": row for name, row in base.items()})
        merged_new.update({f"{base_path}:{name}": row for name, row in new.items()})
    if len(pairs) > 1:
        results["all"] = compare(merged_base, merged_new)
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        print()
    else:
        print("\n".join(format_comparison(label, result, args.list) for label, result in results.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
