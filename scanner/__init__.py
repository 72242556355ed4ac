"""The vision pipeline: photo → board. One module per stage (load, quality, locate, lattice, sectors, …).

Names are re-exported lazily so that ``import scanner`` stays cheap and the
rules engine never pulls in the vision stack.
"""

from importlib import import_module

_EXPORTS = {
    "Scanner": "scanner.pipeline",
    "ScanResult": "scanner.pipeline",
    "scan": "scanner.pipeline",
    "load_image": "scanner.load",
    "assess_quality": "scanner.quality",
    "locate_board": "scanner.locate",
    "fit_lattice": "scanner.lattice",
    "find_lattice": "scanner.looks",
    "find_lattices": "scanner.looks",
    "LatticeFit": "scanner.lattice",
    "CellGeometry": "scanner.lattice",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'scanner' has no attribute {name!r}")
