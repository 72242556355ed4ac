"""Stages 3–4 together: locate the board and fit its lattice, looking again when the fit is doubtful.

The tile-top network reads the photo shrunk to :data:`scanner.locate.WORK_SIDE`
pixels, where tiles of a typical photo are 10–30 pixels across. Far from that
it can go wrong two ways: tiles of a close-up are so large that it finds
several "centres" on each, and a lattice far finer than the tiles fits them;
tiles of a small, far board are so small that too few centres are found. A
lattice that lies on the real tiles has its tiles' edges where the tiles'
edges are (:attr:`scanner.lattice.LatticeFit.supported_share`), so when too few
of the first look's tiles are supported, the photo is looked at again, shrunk
further (for close-ups) and cropped to the board at three sizes (for small boards), and the
look to keep is chosen by :func:`choose_look`. Where the first look is not
believed, :func:`find_lattices` leaves the choice among the looks to what the
reader makes of each. The reader then looks again, from straight above on
the board plane of each look, the one it reads surest first
(:mod:`scanner.rectified`, where every tile is one size however low the
camera), and on a believed first look too, which can miss tiles that view
finds (:meth:`scanner.pipeline.Scanner.scan`); :func:`find_lattice` takes
that view on :func:`choose_look`'s look only where the first look is not
believed, for the geometry benchmarks.
"""

from __future__ import annotations

import numpy as np

from scanner.lattice import GOOD_SUPPORT, LatticeFit, converge, fit_lattice
from scanner.locate import WORK_SIDE, BoardRegion, NoBoardFound, TileTopNet, locate_board
from scanner.rectified import rectified_look

#: Sides the whole photo is shrunk to for the looks at close-ups.
ZOOM_OUT_SIDES = (384, 256)
#: Margin around the board's box kept by the cropped look, as a share of the box's longer side.
CROP_MARGIN = 0.15
#: The cropped look is taken only when the board's box is at most this share of the photo's area.
CROP_MAX_AREA = 0.5
#: Sides the board's box is scaled to for the cropped looks. One size is not enough: on a small board the network can
#: put several centres on each tile at one size and a centre on each at another (models/README.md, sixty-third
#: session), and every look is left to the reader.
CROP_SIDES = (WORK_SIDE, 384, 640)
#: Two looks whose tiles' radii differ by less than this share see the board at the same scale.
SAME_SCALE = 0.15
#: Share of supported tiles at which a photo's first look is kept without looking again. Below it every look is
#: read against the first: a lattice at the wrong scale can find a fifth of its tiles' edges on a busy print, and
#: a look at the right scale with a third of them was often read worse than another look (models/README.md).
FIRST_LOOK_SUPPORT = 0.5


def find_lattice(image_bgr: np.ndarray, net: TileTopNet, *, previous: LatticeFit | None = None) -> LatticeFit:
    """The lattice of the board in a photo, from the look whose tiles sit best on tile edges.

    Where the first look is not believed, the look from straight above (:mod:`scanner.rectified`) on the board
    plane of the look :func:`choose_look` keeps competes with the others. (:meth:`scanner.pipeline.Scanner.scan`
    takes it on every look, the one read surest first, instead.)

    Parameters
    ----------
    image_bgr : ndarray (H, W, 3)
    net : TileTopNet
    previous : LatticeFit, optional
        The previous video frame's fit (see :func:`scanner.lattice.fit_lattice`).

    Raises
    ------
    NoBoardFound
        When the first look finds no board, or no look finds a lattice.
    """
    looks = _looks(image_bgr, net, previous)
    if len(looks) > 1:
        rectified = rectified_look(image_bgr, net, choose_look(looks))
        looks += [rectified] if rectified is not None else []
    return converge(image_bgr, choose_look(looks))


def find_lattices(image_bgr: np.ndarray, net: TileTopNet, *,
                  previous: LatticeFit | None = None) -> list[LatticeFit]:
    """The lattices worth reading: the first look's where it is believed, otherwise every look's.

    The first look alone is returned where :func:`find_lattice` keeps it without choosing (half its tiles on
    edges, :data:`FIRST_LOOK_SUPPORT`). Otherwise the edges judge the looks poorly: where no look
    has :data:`scanner.lattice.GOOD_SUPPORT` of its tiles supported they cannot tell the real lattice from one of
    half tiles, every other tile or a wild lens, and a lattice at the wrong scale can find a fifth of its tiles'
    edges on a busy print. What the reader makes of each look can: a lattice off the tiles cuts patches that are
    no sector, which the sector model reads unsure. So every look is returned, first look first, each refitted
    to convergence, for the reader to keep the one it reads surest (:meth:`scanner.pipeline.Scanner.scan`).
    Parameters and errors as :func:`find_lattice`'s.
    """
    return [converge(image_bgr, fit) for fit in _looks(image_bgr, net, previous)]


def _looks(image_bgr: np.ndarray, net: TileTopNet, previous: LatticeFit | None) -> list[LatticeFit]:
    """The looks taken, first look first: the first alone where it is believed without the others."""
    region = locate_board(image_bgr, net)
    try:
        first: LatticeFit | None = fit_lattice(image_bgr, region, previous=previous)
    except NoBoardFound:
        first = None
    # A video frame starts from the previous frame's lattice, a look already chosen: looking again would cost
    # every such frame the further looks.
    believed = GOOD_SUPPORT if previous is not None else FIRST_LOOK_SUPPORT
    if first is not None and first.supported_share >= believed:
        return [first]
    others = []
    for side in ZOOM_OUT_SIDES:
        others.extend(_look(image_bgr, net, side))
    box = crop_box(region, image_bgr.shape)
    if box is not None:
        x0, y0, x1, y1 = box
        crop = np.ascontiguousarray(image_bgr[y0:y1, x0:x1])
        for side in CROP_SIDES:
            others.extend(fit.translated((x0, y0)) for fit in _look(crop, net, side))
    looks = ([first] if first is not None else []) + others
    if not looks:
        raise NoBoardFound("no lattice of tiles found in the photo: is the whole board in the picture?")
    return looks


def choose_look(looks: list[LatticeFit]) -> LatticeFit:
    """The look to keep, of ``looks`` in the order they were taken (the first look first).

    Among looks with at least :data:`scanner.lattice.GOOD_SUPPORT` of their tiles
    supported, the one with the most supported tiles. Where none has, a few supported
    tiles more is chance (tiles can show their edges too faintly for any look), and the
    look that other looks agree with is kept: the real lattice is found at several
    sizes of the photo, while a lattice of half tiles (a close-up) or of every other
    tile (a far board) belongs to one size. Then the most supported tiles, then the
    look taken first.
    """
    well = [fit for fit in looks if fit.supported_share >= GOOD_SUPPORT]
    if well:
        return max(well, key=lambda fit: (fit.supported_tiles, fit.supported_share))
    # max() keeps the first of equals: the look taken first.
    return max(looks, key=lambda fit: (sum(_same_scale(fit, other) for other in looks if other is not fit),
                                       fit.supported_tiles))


def _same_scale(a: LatticeFit, b: LatticeFit) -> bool:
    return abs(b.tile_radius_px / a.tile_radius_px - 1.0) < SAME_SCALE


def _look(image_bgr: np.ndarray, net: TileTopNet, side: int) -> list[LatticeFit]:
    """The fit of one look, or nothing when that look finds no board."""
    try:
        return [fit_lattice(image_bgr, locate_board(image_bgr, net, side))]
    except NoBoardFound:
        return []


def crop_box(region: BoardRegion, image_shape: tuple[int, ...]) -> tuple[int, int, int, int] | None:
    """The board's box with a margin, in whole pixels, or None when it covers most of the photo."""
    height, width = image_shape[:2]
    x0, y0, x1, y1 = region.bbox_px
    margin = CROP_MARGIN * max(x1 - x0, y1 - y0)
    box = (max(0, int(x0 - margin)), max(0, int(y0 - margin)),
           min(width, int(np.ceil(x1 + margin))), min(height, int(np.ceil(y1 + margin))))
    area = (box[2] - box[0]) * (box[3] - box[1])
    if area > CROP_MAX_AREA * width * height or min(box[2] - box[0], box[3] - box[1]) < 32:
        return None
    return box
