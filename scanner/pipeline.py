"""The whole scan: photo → checked, located, fitted, classified and decoded board.

>>> from scanner.pipeline import Scanner
>>> result = Scanner().scan_path("table.jpg")          # doctest: +SKIP
>>> result.board.score(), result.advice                 # doctest: +SKIP

:class:`Scanner` loads its models once, so a phone page or a video overlay can
call :meth:`Scanner.scan` per frame; passing the previous frame's result lets
the lattice fit start from the previous lattice, and the tiles that have not
changed keep what the classifiers read on them (:mod:`scanner.frames`).
"""

from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import numpy as np

from fjords.board import Board
from fjords.geometry import Hex
from fjords.rules import Rules
from scanner.assemble import (DecodeSettings, EmptyPositionEvidence, TileEvidence, assemble, may_be_missed_tile,
                              with_palette_names)
from scanner.calibration import Calibration, load_calibration, sector_features
from scanner.confidence import load_piece_calibration
from scanner.onnx_model import DEFAULT_MODELS_DIR
from scanner.frames import (FrameReadings, PhotoTiles, PositionLook, block_means, merge_reused, still_corners,
                            unchanged)
from scanner.hands import MODEL_FILE as HAND_MODEL_FILE, HandModel, sector_hand_shares
from scanner.patches import Pyramid, hex_homographies, hex_patches, piece_crops
from scanner.pieces import PieceClassifier
from scanner.sectors import SectorClassifier, balance_gains, chosen_network, sector_visibility

if TYPE_CHECKING:  # the lattice stage (scipy's optimiser) loads only when a photo is scanned, as in Scanner.scan
    from scanner.lattice import LatticeFit
    from scanner.quality import QualityReport

UNSURE_LAYOUT = 0.6
"""Mean tile confidence (:func:`mean_tile_confidence`) under which the scan says the layout itself may be misread
(:func:`layout_advice`). Chosen on 520 seen renders (models/README.md, forty-fourth session): of those with at least 15
silent sector errors it names 10 of 22, of those with fewer than 5, 11 of 446 (the edge support it replaces: 9 and
47)."""

BELIEVED_READ = 0.5
"""Least mean tile confidence of a lattice read by the first sector network for the read to take another sector reading
(the second network's, or the balanced photo's) where it agrees better across the tiles' edges
(:func:`scanner.sectors.chosen_network`): below it the lattice more likely lies off the tiles, where any reading's
agreement is noise (models/README.md, fifty-eighth session)."""

VIEW_SUPPORT_TOLERANCE = 0.2
"""How much less of its tiles' edges (:attr:`scanner.lattice.LatticeFit.supported_share`) a view from above may find
than the lattice kept and still be weighed by how sure it reads (:meth:`Scanner.scan`). The forty-sixth session asked
for at least as much: among hopeless looks the reader's sureness is noise. But a view that lies on the tiles can find
a little less of their edges than a lattice a cell off, and with no tolerance 13 of 180 choosing renders kept the worse
of the two (models/README.md, sixtieth session)."""

MIN_GAP_INSIDE = 0.99
"""Least share of an empty lattice position inside the frame for its sectors to be read, as those of a tile the
tile-top model may have missed (:func:`scanner.assemble.with_missed_tiles`): a tile cut off by the frame is often
missed for that, and what shows of it is too little to tell a tile top."""


@contextmanager
def timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the seconds the block takes to ``timings[stage]`` (a stage may run more than once per photo)."""
    start = time.perf_counter()
    yield
    timings[stage] = timings.get(stage, 0.0) + time.perf_counter() - start


@dataclass
class ScanResult:
    """One scanned photo.

    Attributes
    ----------
    board : the board read; per tile ``extra`` holds ``confidence``, ``visible``,
        ``center_px``, ``corners_px`` (original photo pixels); per piece
        ``confidence``, ``base_px``, ``center_px``, ``rgb`` and, on a house or settler, ``segment_confidence``
        (:func:`scanner.assemble.segment_chance`); unread sectors are ``?``;
        the board's ``extra`` holds ``doubtful_pieces`` (piece entries too unsure to
        count, see :class:`scanner.assemble.DecodeSettings`) when there are any.
    advice : sentences for the player (retake hints, unread tiles).
    timings : seconds per stage, measured where each ran: stages on the scan's second thread overlap the others,
        so they add up to more than ``seconds``.
    seconds : how long the scan took (with loading the file, for :meth:`Scanner.scan_path`).
    lattice : the geometry stage's fit (reused by the next frame).
    evidence : what the classifiers read per tile (:class:`TileEvidence`), to decode again
        with other settings without classifying again.
    image_bgr : the photo as scanned (upright, downscaled), so an overlay needs no second decode.
    readings : what the classifiers read per lattice position, with how each looked (reused by the
        next frame where nothing changed, :mod:`scanner.frames`).
    """

    board: Board
    advice: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    lattice: Any = None
    evidence: dict = field(default_factory=dict, repr=False)
    image_bgr: np.ndarray | None = field(default=None, repr=False)
    readings: FrameReadings | None = field(default=None, repr=False)
    seconds: float = 0.0


@dataclass(frozen=True)
class PhotoWide:
    """What a scan reads off the whole photo, whatever lattice it finds (:meth:`Scanner._photo_wide`)."""

    grey: np.ndarray  # scanner.quality.work_grey of the photo
    quality: QualityReport  # blur and light; glare is judged on the board's tiles once they are found
    hand_map: np.ndarray  # scanner.hands.HandModel.read of the photo
    pyramid: Pyramid


class Scanner:
    """Reads photos of Fjords tables; loads every model once.

    Parameters
    ----------
    models_dir : folder with the ONNX models (default: the project's ``models/``).
    calibration : a :class:`scanner.calibration.Calibration` of the table, or its name, file or
        document (see :func:`scanner.calibration.load_calibration`); without one, colours are
        named among the eleven standard names.
    settings : the decoder's constants.
    piece_calibration : use the models' piece confidence calibration (``piece_confidence.json``,
        when fitted for these models); False reports the models' plain probabilities.
    edition : the edition played at the table (``"classic"`` or ``"2022"``), where the player
        says it; otherwise each board's edition is read from its pieces
        (:func:`scanner.assemble.inferred_edition`).
    """

    def __init__(self, models_dir: str | Path | None = None, calibration=None,
                 settings: DecodeSettings = DecodeSettings(), piece_calibration: bool = True,
                 edition: str | None = None):
        if edition is not None:
            Rules.for_edition(edition)  # an unknown edition fails here, not at the first photo
        self.models_dir = Path(models_dir) if models_dir is not None else DEFAULT_MODELS_DIR
        self.settings = settings
        self.edition = edition
        self.calibration = load_calibration(calibration)
        self.sectors = SectorClassifier(self.models_dir)
        self.hands = HandModel(self.models_dir / HAND_MODEL_FILE)
        self.pieces = PieceClassifier(self.models_dir)
        self.palette = self.calibration.palette if self.calibration else None
        # Calibrated on the models' own colour names: a table's calibrated palette names colours otherwise.
        self.piece_calibration = (load_piece_calibration(self.models_dir, self.pieces.versions)
                                  if piece_calibration and not self.palette else None)

    @cached_property
    def tile_tops(self):
        """The geometry stage's network, loaded on first use (reading known tiles does not need it)."""
        from scanner.locate import TileTopNet

        return TileTopNet(self.models_dir / "tile_tops.onnx")

    @property
    def model_versions(self) -> dict[str, str]:
        versions = {"sectors": self.sectors.version, "hands": self.hands.version, "pieces": self.pieces.version}
        if self.piece_calibration is not None:
            versions["piece_confidence"] = self.piece_calibration.version
        if "tile_tops" in self.__dict__:
            versions = {"tile_tops": self.tile_tops.version, **versions}
        return versions

    def scan_path(self, path: str | Path) -> ScanResult:
        """Scan a photo file (JPEG, PNG, WebP, HEIC with pillow-heif)."""
        from scanner.load import load_image

        timings: dict[str, float] = {}
        with timed(timings, "load"):
            loaded = load_image(path)
        result = self.scan(loaded.image_bgr, scale=loaded.scale, original_size=loaded.original_size,
                           file=Path(path).name)
        result.timings = {**timings, **result.timings}
        result.seconds += timings["load"]
        return result

    def scan(self, image_bgr: np.ndarray, *, previous: ScanResult | None = None, scale: float = 1.0,
             original_size: tuple[int, int] | None = None, file: str | None = None) -> ScanResult:
        """Scan a BGR photo; ``scale`` is its size over the original's, for reporting geometry.

        A frame larger than the loader's limit is shrunk first, as :meth:`scan_path` would.

        Work that does not wait on the lattice runs on a second thread of the scan's own (:meth:`_photo_wide`
        while the lattice is searched, then :meth:`_view` of every look while the looks are read): ONNX Runtime,
        OpenCV and numpy's large operations let go of Python's lock, and on two cores one thread left a third of
        the machine idle (models/README.md, seventy-fifth session). Each part is computed as it would be alone, so
        the board is the same bit for bit. The stages' times (``ScanResult.timings``) are measured where they run
        and overlap: they add up to more than the scan took.
        """
        from scanner.load import fit_within
        from scanner.locate import NoBoardFound
        from scanner.looks import find_lattices
        from scanner.quality import check_glare, check_quality, tile_size_advice

        start = time.perf_counter()
        image_bgr, factor = fit_within(image_bgr)
        scale *= factor
        timings: dict[str, float] = {}
        worker_timings: dict[str, float] = {}  # written by the worker alone, added to the scan's once it is done
        worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fjords-scan")
        try:
            photo_wide = worker.submit(self._photo_wide, image_bgr, worker_timings)
            try:
                with timed(timings, "lattice"):
                    lattices = find_lattices(image_bgr, self.tile_tops,
                                             previous=previous.lattice if previous else None)
            except NoBoardFound:
                # A photo too blurred or dark is refused for that first; a board washed out by glare is refused
                # for the glare, not as missing.
                check_quality(image_bgr, grey=photo_wide.result().grey)
                raise
            # More looks, from straight above on the board plane of each look, where the first look is not believed,
            # and on a believed first look too, which misses far tiles of a low photo (models/README.md,
            # forty-sixth session); a video frame that follows another takes none.
            views = ([worker.submit(self._view, image_bgr, look, worker_timings) for look in lattices]
                     if len(lattices) > 1 or previous is None else [])
            photo = photo_wide.result()
            best = self._best_reading(image_bgr, lattices, views, photo, previous=previous, scale=scale,
                                      original_size=original_size, file=file, timings=timings)
        finally:
            worker.shutdown(cancel_futures=True)
        for stage, seconds in worker_timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
        lattice, readings, in_frame, _, network = best
        # The lattices were compared by their tiles alone, as the network reads them (:meth:`comparison_settings`);
        # the pieces of the one kept are read now, and the photo's own terrain look and the reading's own floor of
        # sectors in view decode it.
        readings = self.with_pieces(image_bgr, readings, timings=timings,
                                    previous=previous.readings if previous else None, pyramid=photo.pyramid)
        cells, beside = list(lattice.cells.values()), lattice.empty_positions(image_bgr.shape[1::-1])
        evidence = self.evidence_of(readings, in_frame, cells, beside=beside, scale=scale, network=network)
        with timed(timings, "assemble"):
            board = self.decode(evidence, image_bgr.shape, scale=scale, original_size=original_size, file=file,
                                sector_network=network)
        if not any(letter != "?" for tile in board.tiles.values() for letter in tile.terrain):
            check_quality(image_bgr, grey=photo.grey)  # as where no lattice is found: glare on the photo may be why
            raise NoBoardFound("no Fjords tile could be read in the photo: frame the board so its tiles fill "
                               "most of the picture")
        in_view = [c.corners_px for c in lattice.cells.values() if c.visible >= 0.5]
        with timed(timings, "quality"):
            glare = check_glare(image_bgr, in_view, grey=photo.grey)
        advice = (list(photo.quality.advice) + glare + tile_size_advice(in_view) + layout_advice(board)
                  + unread_advice(board) + frame_advice(board) + hidden_advice(board) + hand_advice(board)
                  + inferred_advice(board) + doubtful_advice(board) + untaught_advice(board) + joined_advice(board)
                  + palette_advice(board, self.calibration))
        return ScanResult(board=board, advice=advice, timings=timings, lattice=lattice, evidence=evidence,
                          image_bgr=image_bgr, readings=readings, seconds=time.perf_counter() - start)

    def _photo_wide(self, image_bgr: np.ndarray, timings: dict[str, float]) -> PhotoWide:
        """What :meth:`scan` reads off the whole photo, whatever lattice it finds; raises
        :class:`scanner.quality.RetakePhoto` for a photo too blurred or dark to read."""
        from scanner.quality import check_quality, work_grey

        with timed(timings, "quality"):  # glare is judged on the board's tiles once they are found
            grey = work_grey(image_bgr)
            report = check_quality(image_bgr, glare=False, grey=grey)
        with timed(timings, "hands"):  # once per photo, for every lattice read on it
            hand_map = self.hands.read(image_bgr)
        with timed(timings, "sectors"):
            pyramid = Pyramid(image_bgr)
        return PhotoWide(grey, report, hand_map, pyramid)

    def _view(self, image_bgr: np.ndarray, look: LatticeFit, timings: dict[str, float]) -> LatticeFit | None:
        """The lattice of the view from straight above on ``look``'s board plane, refitted on the photo's edges
        (:func:`scanner.rectified.rectified_look`, :func:`scanner.lattice.converge`); None where it finds none."""
        from scanner.lattice import converge
        from scanner.rectified import rectified_look

        with timed(timings, "lattice"):
            view = rectified_look(image_bgr, self.tile_tops, look)
            return converge(image_bgr, view) if view is not None else None

    def _best_reading(self, image_bgr: np.ndarray, lattices: list[LatticeFit], views: list[Future],
                      photo: PhotoWide, *, previous: ScanResult | None, scale: float,
                      original_size: tuple[int, int] | None, file: str | None, timings: dict[str, float]) -> tuple:
        """The reading (:meth:`_read_lattice`) read surest among the ``lattices`` found and the ``views`` on them
        (futures of :meth:`_view`, one per lattice, or none).

        Where the first look is not believed, every look's lattice is read (scanner.looks.find_lattices) and the
        one read surest kept: a lattice off the tiles reads patches that are no sector. Read one at a time, so
        that no more than two readings are held; the tiles read (PhotoTiles) keep about 2 kB each. The views are
        weighed the look read surest first (a better anchor than the looks' edges choose), each kept where it is
        read surer. A view on another look must also sit on the tiles' edges about as well as the lattice kept
        (VIEW_SUPPORT_TOLERANCE): among hopeless looks the reader's sureness is noise. So must the view on a
        believed first look.
        """
        def read(lattice: LatticeFit, photo_tiles: PhotoTiles) -> tuple:
            return self._read_lattice(image_bgr, lattice, previous=previous, scale=scale, original_size=original_size,
                                      file=file, timings=timings, hand_map=photo.hand_map, pyramid=photo.pyramid,
                                      photo_tiles=photo_tiles)

        photo_tiles = PhotoTiles()
        best = None
        sureness = []
        for look in lattices:
            reading = read(look, photo_tiles)
            photo_tiles = photo_tiles.plus(reading[1])
            sureness.append(mean_tile_confidence(reading[3]))
            if best is None or sureness[-1] > mean_tile_confidence(best[3]):
                best = reading
        believed = len(lattices) == 1
        for rank, index in enumerate(np.argsort(-np.asarray(sureness), kind="stable") if views else []):
            view = views[index].result()
            if view is None or ((rank > 0 or believed)
                                and view.supported_share < best[0].supported_share - VIEW_SUPPORT_TOLERANCE):
                continue
            if believed and view.same_tiles(lattices[index]):
                continue  # read again, the same tiles would read the same: half the view's cost saved
            reading = read(view, photo_tiles)
            photo_tiles = photo_tiles.plus(reading[1])
            if mean_tile_confidence(reading[3]) > mean_tile_confidence(best[3]):
                best = reading
        return best

    def comparison_settings(self) -> DecodeSettings:
        """The decoder settings the lattices a photo offers are read with to be compared (:meth:`scan`): without
        the photo's own terrain look, and with the floor of sectors in view the comparison was chosen with
        (``choice_sector_visible``). Where they differ from the scanner's settings, the lattice kept is decoded
        again with those."""
        return replace(self.settings, photo_look=0.0, min_sector_visible=self.settings.choice_sector_visible)

    def _read_lattice(self, image_bgr: np.ndarray, lattice: LatticeFit, *, previous: ScanResult | None,
                      scale: float, original_size: tuple[int, int] | None, file: str | None,
                      timings: dict[str, float], hand_map: np.ndarray, pyramid: Pyramid,
                      photo_tiles: PhotoTiles) -> tuple[LatticeFit, FrameReadings, dict, Board, int]:
        """Classify the sectors of one lattice of the photo (:meth:`scan`) and decode its tiles with
        :meth:`comparison_settings`, so without the photo's own terrain look: fitted to the sure reading of a
        lattice off the tiles, it makes that reading surer too, and lattices are compared by how sure their
        reading is. No piece is read: the tiles' reading does not depend on them, and only the lattice kept needs
        them (:meth:`with_pieces`). A tile where one of ``photo_tiles`` lay, read on another lattice of the photo,
        keeps that reading (:meth:`classify`). Returns the lattice, its readings, its sectors' shares in the photo
        (:func:`sectors_in_frame`), the board so decoded and the sector network whose readings the tiles took
        (:meth:`sector_network`)."""
        height, width = image_bgr.shape[:2]
        cells, beside = list(lattice.cells.values()), lattice.empty_positions((width, height))
        readings = self.classify(image_bgr, cells, beside=beside, timings=timings,
                                 previous=previous.readings if previous else None, hand_map=hand_map,
                                 read_pieces=False, pyramid=pyramid, photo_tiles=photo_tiles)
        comparing = self.comparison_settings()
        in_frame = sectors_in_frame(readings, image_bgr.shape, [*cells, *beside])
        evidence = self.evidence_of(readings, in_frame, cells, beside=beside, scale=scale)
        with timed(timings, "assemble"):
            board = self.decode(evidence, image_bgr.shape, scale=scale, original_size=original_size, file=file,
                                settings=comparing)
        # A lattice off the tiles reads noise, whose edges may agree better under either network.
        network = self.sector_network(readings, in_frame, cells)
        if not network or mean_tile_confidence(board) < BELIEVED_READ:
            return lattice, readings, in_frame, board, 0
        evidence = self.evidence_of(readings, in_frame, cells, beside=beside, scale=scale, network=network)
        with timed(timings, "assemble"):
            board = self.decode(evidence, image_bgr.shape, scale=scale, original_size=original_size, file=file,
                                settings=comparing, sector_network=network)
        return lattice, readings, in_frame, board, network

    def read(self, image_bgr: np.ndarray, cells: list, *, scale: float = 1.0,
             original_size: tuple[int, int] | None = None, file: str | None = None,
             timings: dict[str, float] | None = None) -> Board:
        """Classify and decode tiles whose geometry is known (``CellGeometry``-like: ``hex``,
        ``corners_px``, ``visible``), e.g. from the lattice fit or from a render's truth."""
        timings = {} if timings is None else timings
        evidence, network = self.evidence_and_network(image_bgr, cells, scale=scale, timings=timings)
        with timed(timings, "assemble"):
            return self.decode(evidence, image_bgr.shape, scale=scale, original_size=original_size, file=file,
                               sector_network=network)

    def decode(self, evidence: dict, image_shape: tuple[int, ...], *, scale: float = 1.0,
               original_size: tuple[int, int] | None = None, file: str | None = None,
               settings: DecodeSettings | None = None, sector_network: int = 0) -> Board:
        """The board from the classifiers' evidence, with the photo's size, the model versions and the name of the
        sector reading the evidence holds (:attr:`scanner.sectors.SectorClassifier.readings`)."""
        height, width = image_shape[:2]
        size = original_size or (round(width / scale), round(height / scale))
        image_info = {"width": int(size[0]), "height": int(size[1])}
        if file:
            image_info = {"file": file, **image_info}
        scanner_info = {"models": self.model_versions}
        scanner_info["sector_network"] = self.sectors.readings[sector_network]
        return assemble(evidence, edition=self.edition, settings=settings or self.settings,
                        extra={"image": image_info, "scanner": scanner_info}, piece_calibration=self.piece_calibration)

    def evidence(self, image_bgr: np.ndarray, cells: list, *, scale: float = 1.0,
                 timings: dict[str, float] | None = None, beside: list = ()) -> dict:
        """What the classifiers read on each tile (:class:`TileEvidence`, geometry in original pixels).

        ``beside`` are empty lattice positions next to the tiles (``CellGeometry``-like); the piece
        models read them too, for a rune stone standing there (:class:`EmptyPositionEvidence`).
        """
        return self.evidence_and_network(image_bgr, cells, scale=scale, timings=timings, beside=beside)[0]

    def evidence_and_network(self, image_bgr: np.ndarray, cells: list, *, scale: float = 1.0,
                             timings: dict[str, float] | None = None, beside: list = ()) -> tuple[dict, int]:
        """:meth:`evidence`, and the sector network whose readings it holds (:meth:`sector_network`)."""
        readings = self.classify(image_bgr, cells, beside=beside, timings=timings)
        in_frame = sectors_in_frame(readings, image_bgr.shape, [*cells, *beside])
        network = self.sector_network(readings, in_frame, cells)
        return self.evidence_of(readings, in_frame, cells, beside=beside, scale=scale, network=network), network

    def sector_network(self, readings: FrameReadings, in_frame: dict, cells: list) -> int:
        """Which sector reading the tiles ``cells`` take, an index into
        :attr:`scanner.sectors.SectorClassifier.readings` (:func:`scanner.sectors.chosen_network`): a network's, or
        the first network's of the photo balanced to the colours it was taught; ``in_frame`` as
        :func:`sectors_in_frame` gives it."""
        read = [c.hex for c in cells if c.hex in in_frame]
        return chosen_network([({h: readings.looks[h].sectors[k][0] for h in read},
                                {h: in_frame[h] * readings.looks[h].sectors[k][1] for h in read})
                               for k in range(len(self.sectors.readings))])

    def classify(self, image_bgr: np.ndarray, cells: list, *, beside: list = (),
                 timings: dict[str, float] | None = None, previous: FrameReadings | None = None,
                 hand_map: np.ndarray | None = None, read_pieces: bool = True, pyramid: Pyramid | None = None,
                 photo_tiles: PhotoTiles = PhotoTiles()) -> FrameReadings:
        """Run the classifiers on the tiles the lattice sees and the empty positions ``beside`` them.

        ``previous`` is the last video frame's :class:`FrameReadings`: a tile whose sector patch, or a
        position whose piece crop, has not changed since keeps what was read then (:mod:`scanner.frames`).
        ``photo_tiles`` are the tiles other lattices of this photo read: a tile that lies where one of them did keeps
        its corners and sectors' reading (:class:`scanner.frames.PhotoTiles`).
        ``hand_map`` is the hand model's reading of ``image_bgr`` (:meth:`scanner.hands.HandModel.read`), read here
        where not given, and ``pyramid`` its :class:`scanner.patches.Pyramid`. Without ``read_pieces`` no piece is read
        (:meth:`with_pieces` reads them later): a lattice is judged by its tiles alone.
        """
        timings = {} if timings is None else timings
        old = self.reusable_looks(previous)
        # The sectors are read on the tiles and on the empty positions where a tile the tile-top model missed
        # may lie (scanner.assemble.with_missed_tiles): wholly in the photo, touching enough tiles.
        found = {c.hex for c in cells}
        gaps = {c.hex for c in beside if c.visible >= MIN_GAP_INSIDE and may_be_missed_tile(c.hex, found)}
        read_cells = [c for c in cells if c.visible >= self.settings.min_tile_visible]
        tiles = read_cells + [c for c in beside if c.hex in gaps]
        positions = tiles + [c for c in beside if c.hex not in gaps]
        corners = [np.asarray(c.corners_px, dtype=np.float64) for c in positions]
        still = [still_corners(old.get(c.hex), corners[n]) for n, c in enumerate(positions)]
        not_moved = [kept is not None for kept in still]
        corners = [corners[n] if kept is None else kept for n, kept in enumerate(still)]
        # A tile another lattice of this photo read where it lies keeps those corners, as one still since the last
        # frame keeps that frame's, and that reading.
        read_before = {n: look for n in range(len(tiles))
                       if not not_moved[n] and (look := photo_tiles.same_tile(corners[n])) is not None}
        for n, look in read_before.items():
            corners[n] = look.corners_px
        with timed(timings, "sectors"):
            pyramid = Pyramid(image_bgr) if pyramid is None else pyramid
            matrices = hex_homographies(corners[:len(tiles)])
            patches = hex_patches(pyramid, corners[:len(tiles)], matrices=matrices)
            patch_blocks = block_means(patches)
            kept_sectors = [not_moved[n] and unchanged(old[c.hex].patch_blocks, patch_blocks[n])
                            for n, c in enumerate(tiles)]
            # Read already: on the last frame, where the tile has not changed, or on another lattice of this photo.
            taken_over = {n: old[c.hex].sectors for n, c in enumerate(tiles) if kept_sectors[n]}
            taken_over |= {n: look.sectors for n, look in read_before.items()}
            fresh = [n for n in range(len(tiles)) if n not in taken_over]
            # The light's colour is the photo's: measured on all its tiles in view, also where few are read again.
            in_view = [n for n, c in enumerate(read_cells) if c.visible >= 0.5]
            each = self.sectors.predict_each(patches[fresh], gains=balance_gains(patches[in_view]))
            # Every tile's, each frame: the photo's own terrain look (scanner.assemble.with_photo_look) is
            # measured relative to the whole photo.
            features = sector_features(patches)
            sectors = merge_reused([n in taken_over for n in range(len(tiles))], taken_over.__getitem__,
                                   (tuple((probs[m], readable[m]) for probs, readable in each)
                                    for m in range(len(fresh))))
        with timed(timings, "hands"):
            # Every frame's: a hand moves while the tiles under it stand still.
            hand_map = self.hands.read(image_bgr) if hand_map is None else hand_map
            hands = sector_hand_shares(hand_map, (image_bgr.shape[1], image_bgr.shape[0]), corners[:len(tiles)])
        looks = {c.hex: PositionLook(corners[n], None, (),
                                     patch_blocks[n] if n < len(tiles) else None,
                                     sectors[n] if n < len(tiles) else None,
                                     features[n] if n < len(tiles) else None,
                                     hands[n] if n < len(tiles) else None,
                                     matrices[n] if n < len(tiles) else None)
                 for n, c in enumerate(positions)}
        readings = FrameReadings(self.reading_source, looks, {"sectors": sum(kept_sectors), "pieces": 0})
        if not read_pieces:
            return readings
        return self.with_pieces(image_bgr, readings, timings=timings, previous=previous, pyramid=pyramid)

    def with_pieces(self, image_bgr: np.ndarray, readings: FrameReadings, *, timings: dict[str, float] | None = None,
                    previous: FrameReadings | None = None, pyramid: Pyramid | None = None) -> FrameReadings:
        """``readings`` (of :meth:`classify` with ``read_pieces=False``) with the pieces of every position read too.

        ``previous`` is the last video frame's :class:`FrameReadings`, as for :meth:`classify`: a position that has
        not moved and whose piece crop has not changed keeps what was read then. ``pyramid`` is ``image_bgr``'s, where
        the caller has it.
        """
        timings = {} if timings is None else timings
        old = self.reusable_looks(previous)
        positions = list(readings.looks)
        corners = [readings.looks[h].corners_px for h in positions]
        with timed(timings, "pieces"):
            pyramid = Pyramid(image_bgr) if pyramid is None else pyramid
            crops = piece_crops(pyramid, corners)
            crop_blocks = block_means(crops)
            # A position that had not moved took the last frame's corners, so it has not moved from them either.
            kept = [still_corners(old.get(h), corners[n]) is not None and unchanged(old[h].crop_blocks, crop_blocks[n])
                    for n, h in enumerate(positions)]
            fresh = [n for n, keep in enumerate(kept) if not keep]
            read = self.pieces.predict(pyramid, [corners[n] for n in fresh], crops=crops[fresh])
            pieces = merge_reused(kept, lambda n: old[positions[n]].pieces, read)
        looks = {h: replace(readings.looks[h], crop_blocks=crop_blocks[n], pieces=pieces[n])
                 for n, h in enumerate(positions)}
        return FrameReadings(readings.source, looks, {**readings.reused, "pieces": sum(kept)})

    def reusable_looks(self, previous: FrameReadings | None) -> Mapping[Hex, PositionLook]:
        """The last video frame's looks this scanner may reuse: none without a last frame, or where other models or
        another calibration read it."""
        if previous is None or previous.source != self.reading_source:
            return {}
        return previous.looks

    def evidence_of(self, readings: FrameReadings, in_frame: dict, cells: list, *,
                    beside: list = (), scale: float = 1.0, network: int = 0) -> dict:
        """The :class:`TileEvidence` (and :class:`EmptyPositionEvidence`) of what :meth:`classify` read,
        geometry in original pixels, the sectors as sector network ``network`` read them; ``in_frame`` as
        :func:`sectors_in_frame` gives it for the positions read."""

        def as_tile(cell) -> TileEvidence:
            look = readings.looks[cell.hex]
            probs, readable = look.sectors[network]
            return TileEvidence(cell.hex, probs, in_frame[cell.hex] * readable, look.corners_px / scale,
                                float(cell.visible), tuple(_in_original(r, scale) for r in look.pieces),
                                look.sector_features, look.hand_shares)

        evidence = {}
        for cell in beside:
            look = readings.looks[cell.hex]
            evidence[cell.hex] = EmptyPositionEvidence(cell.hex, look.corners_px / scale,
                                                       tuple(_in_original(r, scale) for r in look.pieces),
                                                       as_tile(cell) if cell.hex in in_frame else None)
        for cell in cells:
            if cell.hex in in_frame:
                evidence[cell.hex] = as_tile(cell)
        for cell in cells:
            if cell.hex not in evidence:  # present but hidden: every sector unread
                evidence[cell.hex] = TileEvidence(cell.hex, np.full((12, 3), 1 / 3), np.zeros(12),
                                                  np.asarray(cell.corners_px) / scale, float(cell.visible))
        return with_palette_names(evidence, self.palette) if self.palette else evidence

    @cached_property
    def reading_source(self) -> tuple:
        """What reads the tiles: the reading models' versions and the calibration (see :class:`FrameReadings`)."""
        calibration = json.dumps(self.calibration.to_json(), sort_keys=True) if self.calibration else None
        return self.sectors.version, self.hands.version, self.pieces.version, calibration


def sectors_in_frame(readings: FrameReadings, image_shape: tuple[int, ...], positions: list) -> dict:
    """Position -> (12,) share of each sector inside the photo, for the ``positions`` whose sectors were read."""
    read = [c.hex for c in positions if c.hex in readings.looks and readings.looks[c.hex].sectors is not None]
    return dict(zip(read, sector_visibility([readings.looks[h].corners_px for h in read], image_shape,
                                            [readings.looks[h].patch_matrix for h in read])))


def _in_original(reading, scale: float):
    """A piece reading with its points in original photo pixels."""
    if scale == 1.0:
        return reading
    return replace(reading, base_px=tuple(v / scale for v in reading.base_px),
                   top_px=tuple(v / scale for v in reading.top_px))


def mean_tile_confidence(board: Board) -> float:
    """Mean of the tiles' confidences (the chance their twelve sectors all read right); 0 without tiles."""
    confidences = [tile.extra.get("confidence", 0.0) for tile in board.tiles.values()]
    return float(np.mean(confidences)) if confidences else 0.0


def layout_advice(board: Board) -> list[str]:
    """One sentence when the board's tiles read unsurely on the whole (:data:`UNSURE_LAYOUT`).

    A lattice of the wrong size or slant, or one that numbered part of the board a cell off, cuts patches that are
    no sector, and the whole board reads unsurely: the layout itself, not only some tiles, may be misread.
    """
    mean = mean_tile_confidence(board)
    if not board.tiles or mean >= UNSURE_LAYOUT:
        return []
    return [f"The {len(board.tiles)} tiles found read unsurely (on average {mean:.0%} sure of "
            "all twelve sectors): the layout itself may be misread. Retake the photo with the board larger in it, "
            "sharp, and from higher above."]


def unread_advice(board: Board) -> list[str]:
    """One sentence about tiles the scan could not read completely, if any."""
    unsure = [t for t in board.tiles.values() if not t.known]
    if not unsure:
        return []
    cells = _tile_cells(unsure)
    return [f"{len(unsure)} tile(s) not read with certainty ({cells}): check them, or retake the photo "
            "from straight above without hands or glare over the board."]


#: A tile less of whose area lies inside the photo than this runs past the photo's edge (:func:`frame_advice`).
MIN_INSIDE_FRAME = 0.99


def tiles_past_edge(board: Board) -> list:
    """The board's tiles that run past the edge of its photo (:data:`MIN_INSIDE_FRAME`); none without a photo size."""
    from scanner.lattice import share_inside

    size = board.extra.get("image") or {}
    if not size.get("width") or not size.get("height"):
        return []
    return [t for t in board.tiles.values() if len(t.extra.get("corners_px", ())) == 6 and share_inside(
        np.asarray(t.extra["corners_px"], dtype=np.float64), size["width"], size["height"]) < MIN_INSIDE_FRAME]


def frame_advice(board: Board) -> list[str]:
    """One sentence when tiles run past the edge of the photo: the board may go on beyond it, unseen."""
    cut = tiles_past_edge(board)
    if not cut:
        return []
    cells = _tile_cells(cut)
    return [f"{len(cut)} tile(s) run past the edge of the photo ({cells}): the board may go on beyond it, where the "
            "scan sees nothing. Retake the photo with the whole board in the picture."]


def hidden_advice(board: Board) -> list[str]:
    """One sentence about places beside the board where a hand or an object may hide a tile, if any."""
    hidden = board.extra.get("possibly_hidden_tiles") or []
    if not hidden:
        return []
    cells = _first_few([f"({place['q']},{place['r']})" for place in hidden])
    return [f"{len(hidden)} place(s) beside the tiles read show part of a tile, too little to read it ({cells}): a "
            "hand or an object may hide a tile there, which the board leaves out. Retake the photo without it."]


def hand_advice(board: Board) -> list[str]:
    """One sentence about tiles a hand lies over in part (tile field ``under_hand``, :mod:`scanner.hands`), if any."""
    covered = [t for t in board.tiles.values() if t.extra.get("under_hand")]
    if not covered:
        return []
    cells = _tile_cells(covered)
    return [f"{len(covered)} tile(s) lie partly under a hand or an arm ({cells}): the sectors there may be misread. "
            "Retake the photo without hands over the board."]


def inferred_advice(board: Board) -> list[str]:
    """One sentence about sectors the photo does not show that the edge rule filled in, if any."""
    told = [t for t in board.tiles.values() if t.extra.get("inferred_sectors")]
    if not told:
        return []
    count = sum(len(t.extra["inferred_sectors"]) for t in told)
    cells = _tile_cells(told)
    return [f"{count} sector(s) hidden under a hand or a piece, or outside the photo, were filled in from the "
            f"matching edge of the tile beside them ({cells}): check them if a tile there may be laid wrong."]


def doubtful_advice(board: Board) -> list[str]:
    """One sentence about pieces read too doubtfully to count, if any."""
    doubtful = list(board.extra.get("doubtful_pieces") or ())
    if not doubtful:
        return []
    named = _first_few([f"{p.get('player') or ''} {_place(p)}".strip() for p in doubtful])
    return [f"{len(doubtful)} possible piece(s) not counted, the scan is unsure of them ({named}): "
            "check them on the table."]


def untaught_advice(board: Board) -> list[str]:
    """One sentence per colour named by its paint alone, a paint the models were never taught
    (:func:`scanner.assemble.untaught_paints`), if any."""
    by_colour: dict[str, list] = {}
    for piece in board.pieces:
        if "untaught_paint" in piece.extra:
            by_colour.setdefault(piece.player, []).append(piece)
    return [f"{len(pieces)} piece(s) look {pieces[0].extra['untaught_paint']}, a paint the scanner was never taught "
            f"({_named(pieces, colour=False)}), and were named {name} by their "
            "colour: if that player's paint has another name, calibrate on a photo of this table (fjords calibrate)."
            for name, pieces in by_colour.items()]


def _place(piece: dict) -> str:
    """A piece entry of a board document as "kind at (q,r)"."""
    return f"{piece['kind']} at ({piece['q']},{piece['r']})"


def joined_advice(board: Board) -> list[str]:
    """One sentence about doubtful pieces the connection rule counted (each joins a settler to a house), if any."""
    joined = [p for p in board.pieces if p.extra.get("joined_by_rule")]
    if not joined:
        return []
    return [f"{len(joined)} piece(s) the scan is unsure of were counted because they join a settler to a house of "
            f"its colour ({_named(joined)}): check them on the table."]


def palette_advice(board: Board, calibration: Calibration | None) -> list[str]:
    """One sentence about pieces whose paint fits no player of the calibration (:data:`scanner.pieces.PALETTE_FIT`)."""
    palette = calibration.palette if calibration else None
    if not palette:  # pieces named by the network, as without a calibration
        return []
    strangers = [p for p in board.pieces if p.is_player_piece and p.player not in palette]
    if not strangers:
        return []
    return [f"{len(strangers)} piece(s) match no player colour of calibration {calibration.name} and were named by "
            f"the standard colours ({_named(strangers)}): a player it does not know, or another copy's calibration?"]


def _named(pieces: list, colour: bool = True) -> str:
    """The first few pieces as "colour kind at (q,r)", or "kind at (q,r)" without ``colour`` (:func:`_first_few`)."""
    return _first_few([f"{p.player + ' ' if colour else ''}{p.kind} at ({p.hex.q},{p.hex.r})" for p in pieces])


def _tile_cells(tiles) -> str:
    """The first few tiles' cells as "(q,r)", comma-separated (:func:`_first_few`)."""
    return _first_few([f"({t.hex.q},{t.hex.r})" for t in tiles])


def _first_few(names: list[str], most: int = 6) -> str:
    """The first ``most`` names, comma-separated, with `` …`` when there are more."""
    return ", ".join(names[:most]) + (" …" if len(names) > most else "")


def scan(image_bgr: np.ndarray) -> Board:
    """Convenience: the board of one BGR photo with the default models."""
    return Scanner().scan(image_bgr).board
