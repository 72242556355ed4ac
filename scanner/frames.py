"""Video frames: reuse what the classifiers read on tiles that have not changed since the last frame.

A live overlay scans frame after frame of a board that mostly stands still. The
lattice already follows the previous frame's (:func:`scanner.lattice.fit_lattice`);
this module lets the reading stages follow too. A lattice position whose corners
moved less than :data:`STILL_SHARE` of its radius has not moved: the refinement of
each frame's lattice jitters by a pixel or two, and the position keeps its previous
corners, so that the overlay stands still and the same pixels are cut out again. Its
sector patch and piece crop are then compared with the previous frame's: where they
look as they did (every 8×8 block's mean colour within :data:`UNCHANGED_LEVELS`) the
previous readings are kept instead of classifying again. A hand reaching in, a piece
put down or a change of light alters some blocks by far more than a camera's noise,
and the positions concerned are read again.

The kind model reads a close-up around each piece that may reach a little beyond
the piece crop; a change only there is seen when it reaches the crop.

Within one photo, the several lattices the scanner reads (:func:`scanner.looks.find_lattices`)
share tiles the same way (:class:`PhotoTiles`): a tile lying where another lattice's tile was
read keeps those corners and that reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from fjords.geometry import Hex

#: Largest change of an 8×8 block's mean colour (0–255) still taken for camera noise. Sensor
#: noise of a few levels per pixel averages to well under one level over a block; a piece or a
#: finger covering part of a block moves it by tens of levels.
UNCHANGED_LEVELS = 6.0
#: Side of the blocks compared, in patch pixels.
BLOCK = 8
#: Farthest a corner may move, as a share of the tile's radius, for a position to count as not
#: moved. The reading models were trained on corners jittered by 4 % of a radius; a still board's
#: refined corners move by 0.4–2.4 % from frame to frame (``benchmarks/bench_video.py``).
STILL_SHARE = 0.05


def block_means(images: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Mean colour of each ``block``×``block`` block of each image.

    Parameters
    ----------
    images : (n, h, w, c) array
        ``h`` and ``w`` multiples of ``block``.

    Returns
    -------
    (n, h // block, w // block, c) float32 array
    """
    n, h, w, c = images.shape
    blocks = np.asarray(images, dtype=np.float32).reshape(n, h // block, block, w // block, block, c)
    return blocks.mean(axis=(2, 4))


@dataclass(frozen=True)
class PositionLook:
    """How one lattice position looked when it was read, and what was read there.

    ``sectors`` is ``(probs, readable)`` of :meth:`scanner.sectors.SectorClassifier.predict_patches` for a tile,
    one per sector network (:meth:`~scanner.sectors.SectorClassifier.predict_each`), and ``sector_features`` its
    sectors' colour statistics in this frame (:func:`scanner.calibration.sector_features`, measured every frame),
    and ``hand_shares`` the share of each sector a hand covers in this frame (:func:`scanner.hands.sector_hand_shares`,
    measured every frame);
    an empty position beside the tiles has them too where a tile the tile-top model missed may lie
    there (:func:`scanner.assemble.with_missed_tiles`), else no sector patch and no sectors, only its
    pieces are read.
    """

    corners_px: np.ndarray                       # (6, 2) in the scanned image's pixels
    crop_blocks: np.ndarray | None               # block means of the piece crop (None: pieces not read)
    pieces: tuple                                # PieceReadings, points in the scanned image's pixels
    patch_blocks: np.ndarray | None = None       # block means of the sector patch
    sectors: tuple[tuple[np.ndarray, np.ndarray], ...] | None = None
    sector_features: np.ndarray | None = None    # (12, F) colour statistics, relative to this frame
    hand_shares: np.ndarray | None = None        # (12,) share of each sector under a hand, in this frame
    patch_matrix: np.ndarray | None = None       # the sector patch's hex_homography (scanner.patches)


@dataclass(frozen=True)
class FrameReadings:
    """What one frame's classifiers read, per lattice position, for the next frame to reuse.

    ``source`` names the models and calibration that read it: readings are reused only by a
    scanner with the same. ``reused`` counts the positions whose sectors (tiles, and the empty
    positions where a missed tile may lie), and those whose pieces, were taken from the frame before.
    """

    source: tuple
    looks: Mapping[Hex, PositionLook] = field(default_factory=dict)
    reused: Mapping[str, int] = field(default_factory=dict)


def still_corners(previous: PositionLook | None, corners_px: np.ndarray,
                  share: float = STILL_SHARE) -> np.ndarray | None:
    """The previous corners of a position that has not moved (each corner within ``share`` of its radius), or None."""
    if previous is None:
        return None
    radius = float(np.linalg.norm(previous.corners_px - previous.corners_px.mean(axis=0), axis=1).mean())
    moved = float(np.linalg.norm(np.asarray(corners_px) - previous.corners_px, axis=1).max())
    return previous.corners_px if moved < share * radius else None


def unchanged(before: np.ndarray | None, after: np.ndarray, levels: float = UNCHANGED_LEVELS) -> bool:
    """Whether every block mean of ``after`` lies within ``levels`` of ``before`` (False without ``before``)."""
    return before is not None and float(np.abs(after - before).max()) <= levels


def merge_reused(kept: list[bool], previous: Callable[[int], Any], fresh: Iterable) -> list:
    """Per position ``n``: ``previous(n)`` where ``kept[n]``, else the next of ``fresh`` (read in order)."""
    fresh = iter(fresh)
    return [previous(n) if keep else next(fresh) for n, keep in enumerate(kept)]


@dataclass(frozen=True)
class PhotoTiles:
    """The tiles whose sectors earlier lattices of the same photo read, for a later lattice to take over.

    A photo offers several lattices (:func:`scanner.looks.find_lattices`) and every one is read; most of their tiles
    lie where an earlier lattice's did, often with the corners numbered from another one of the six (a lattice
    turned by a multiple of 60 degrees about the board). Such a tile keeps the earlier corners and reading, as a
    tile that has not moved since the last video frame does (:func:`still_corners`), instead of being read again:
    the sector networks were the largest part of a scan's time, and nearly half of the tiles they read had been read
    on another lattice of the photo (models/README.md, seventy-second session).
    """

    looks: tuple[PositionLook, ...] = ()

    def plus(self, readings: FrameReadings) -> PhotoTiles:
        """These tiles and the tiles ``readings`` read (the positions whose sectors it holds)."""
        return PhotoTiles(self.looks + tuple(look for look in readings.looks.values() if look.sectors is not None))

    @cached_property
    def _geometry(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The earlier tiles' corners (k, 6, 2), centres (k, 2) and radii (k,) as :func:`still_corners` takes them."""
        corners = np.array([look.corners_px for look in self.looks], dtype=np.float64).reshape(-1, 6, 2)
        centres = corners.mean(axis=1)
        return corners, centres, np.linalg.norm(corners - centres[:, None], axis=2).mean(axis=1)

    def same_tile(self, corners_px: np.ndarray, share: float = STILL_SHARE) -> PositionLook | None:
        """The look an earlier lattice read of the tile at ``corners_px``, numbered as ``corners_px`` is.

        The earlier tile is the same where each corner lies within ``share`` of its radius of one of
        ``corners_px``, the six taken in turn from any of them (of several such, the nearest). The look returned
        has the earlier corners and sector readings turned to that numbering: a corner further is two sectors
        further. None where no earlier tile is the same.
        """
        if not self.looks:
            return None
        corners = np.asarray(corners_px, dtype=np.float64)
        earlier, centres, radii = self._geometry
        near = np.flatnonzero(np.linalg.norm(centres - corners.mean(axis=0), axis=1) < share * radii)
        if not len(near):
            return None
        # turned[m, j, k]: earlier corner k - j of candidate m, so that turn j numbers it as corners_px does.
        turned = np.stack([np.roll(earlier[near], turn, axis=1) for turn in range(6)], axis=1)
        moved = np.linalg.norm(turned - corners, axis=3).max(axis=2) / radii[near, None]
        candidate, turn = np.unravel_index(int(np.argmin(moved)), moved.shape)
        if moved[candidate, turn] >= share:
            return None
        look = self.looks[near[candidate]]
        sectors = tuple((np.roll(probs, 2 * turn, axis=0), np.roll(readable, 2 * turn, axis=0))
                        for probs, readable in look.sectors)
        return PositionLook(turned[candidate, turn], None, (), sectors=sectors)
