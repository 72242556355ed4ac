"""The lattice maths: camera model, fitting, and axial assignment of tile centres."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fjords.geometry import DIRECTIONS, Hex
from scanner.lattice_assign import lattice_hypotheses
from scanner.lattice_model import (
    DIRECTION_STEPS,
    LatticeModel,
    fit_model,
    hex_centres,
    hex_corners,
    nearest_hex,
)

SIZE = (2016, 1512)


def _model(angle_deg=20.0, scale=70.0, tilt=(4e-4, -3e-4), k1=-0.06):
    a = np.radians(angle_deg)
    c, s = np.cos(a), np.sin(a)
    # A rotation (no mirror: positive determinant) plus perspective.
    h = np.array([[scale * c, scale * s, 1000.0], [-scale * s, scale * c, 760.0], [tilt[0], tilt[1], 1.0]])
    return LatticeModel.for_image(h, SIZE, k1)


def _disc(radius=4):
    return np.array([(q, r) for q in range(-radius, radius + 1) for r in range(-radius, radius + 1)
                     if abs(q + r) <= radius])


def test_hex_centres_follow_the_spec():
    for h in (Hex(0, 0), Hex(2, -1), Hex(-3, 4)):
        np.testing.assert_allclose(hex_centres([h])[0], h.pixel_center(1.0))


def test_direction_steps_point_counter_clockwise():
    for d, (dq, dr) in enumerate(DIRECTIONS):
        step = DIRECTION_STEPS[d]
        angle = np.degrees(np.arctan2(-step[1], step[0])) % 360  # y grows downwards
        assert angle == pytest.approx(60 * d)
        np.testing.assert_allclose(step, hex_centres([Hex(dq, dr)])[0])


def test_corners_run_counter_clockwise_at_30_plus_60k():
    corners = hex_corners([Hex(0, 0)])[0]
    angles = np.degrees(np.arctan2(-corners[:, 1], corners[:, 0])) % 360
    np.testing.assert_allclose(angles, [30, 90, 150, 210, 270, 330])
    # Shared corners: corner 0 of (0,0) is corner 2 of its east neighbour... across edge 0 it is corner 4 of (1,-1).
    np.testing.assert_allclose(hex_corners([Hex(1, 0)])[0][2], corners[0], atol=1e-12)
    np.testing.assert_allclose(hex_corners([Hex(1, -1)])[0][4], corners[0], atol=1e-12)


@settings(max_examples=50, deadline=None)
@given(st.floats(-20, 20), st.floats(-20, 20))
def test_nearest_hex_inverts_hex_centres(x, y):
    axial = nearest_hex(np.array([[x, y]]))[0]
    centre = hex_centres(axial[None])[0]
    # No other lattice centre is closer than the chosen one.
    for dq, dr in DIRECTIONS:
        other = hex_centres(np.array([[axial[0] + dq, axial[1] + dr]]))[0]
        assert np.hypot(*(centre - (x, y))) <= np.hypot(*(other - (x, y))) + 1e-9


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.2, 0.0), st.floats(0, 360))
def test_model_round_trip(k1, angle):
    model = _model(angle_deg=angle, k1=k1)
    board = hex_centres(_disc(4)) + 0.3
    np.testing.assert_allclose(model.image_to_board(model.board_to_image(board)), board, atol=1e-6)
    assert not model.is_mirrored(board[0])


@settings(max_examples=40, deadline=None)
@given(st.floats(-0.25, 0.0), st.floats(0, 360), st.floats(20.0, 150.0), st.floats(-8.0, 8.0), st.floats(-8.0, 8.0),
       st.floats(5.0, 60.0))
def test_grid_to_image_maps_a_grid_as_board_to_image_maps_its_points(k1, angle, scale, x0, y0, per_unit):
    model = _model(angle_deg=angle, scale=scale, k1=k1)
    xs, ys = x0 + np.arange(37) / per_unit, y0 + np.arange(23) / per_unit
    grid = np.stack(np.meshgrid(xs, ys), axis=-1)
    photo = model.grid_to_image(xs, ys)
    assert photo.dtype == np.float32 and photo.shape == (23, 37, 2)
    # To float32 precision: the views from above sample the photo at these points with cv2.remap.
    np.testing.assert_allclose(photo, model.board_to_image(grid), rtol=0, atol=2e-3)


def test_fit_model_recovers_homography_and_distortion():
    truth = _model(k1=-0.08)
    board = hex_corners(_disc(5)).reshape(-1, 2)
    image = truth.board_to_image(board)
    fitted = fit_model(board, image, SIZE)
    np.testing.assert_allclose(fitted.board_to_image(board), image, atol=1e-4)
    assert fitted.k1 == pytest.approx(-0.08, abs=1e-3)


@settings(max_examples=30, deadline=None)
@given(st.floats(-0.2, 0.0), st.floats(0, 360), st.booleans(), st.integers(0, 2**16))
def test_fit_model_finds_the_weighted_least_squares_view(k1, angle, fit_distortion, seed):
    """With noise and weights, no view fits better than the one found: not even the one the points were made
    with (the solver follows the residuals' analytic derivatives, which must be theirs)."""
    truth = _model(angle_deg=angle, k1=k1 if fit_distortion else 0.0)
    board = hex_corners(_disc(3)).reshape(-1, 2)
    rng = np.random.default_rng(seed)
    image = truth.board_to_image(board) + rng.normal(0.0, 0.7, board.shape)
    weights = rng.uniform(0.2, 3.0, len(board))

    def cost(model):
        return float(np.sum(weights[:, None] * (model.board_to_image(board) - image) ** 2))

    fitted = fit_model(board, image, SIZE, fit_distortion=fit_distortion, weights=weights)
    assert cost(fitted) <= cost(truth) * (1.0 + 1e-9)


def test_fit_model_is_robust_to_a_wrong_point():
    truth = _model(k1=0.0)
    board = hex_centres(_disc(3))
    image = truth.board_to_image(board)
    image[0] += (60.0, -40.0)
    fitted = fit_model(board, image, SIZE, fit_distortion=False, loss_scale_px=2.0)
    errors = np.linalg.norm(fitted.board_to_image(board) - truth.board_to_image(board), axis=1)
    assert np.median(errors) < 0.5


@pytest.mark.parametrize("fit_distortion", [False, True])
def test_fit_model_of_points_that_fit_no_view_of_a_plane_is_all_nan_not_an_error(fit_distortion):
    """Four centres of a rectified look (render 982 053) whose least-squares map sends the board's origin to
    infinity: the fit says so with NaN, as direct_homography does, instead of failing inside the solver."""
    board = np.array([[1.732, 0.0], [0.866, 1.5], [1.732, 3.0], [0.0, 0.0]])
    image = np.array([[819.3, 409.4], [596.1, 502.0], [538.3, 681.9], [646.7, 281.1]])
    fitted = fit_model(board, image, SIZE, fit_distortion=fit_distortion)
    assert np.isnan(fitted.homography).all() and not fitted.fits_a_view


def _best_lattice(points, weights):
    ranked = lattice_hypotheses(points, weights, SIZE)
    return ranked[0] if ranked else None


def _is_rotation_and_translation(found: np.ndarray, true: np.ndarray) -> bool:
    """Whether one rotation and translation map the found positions onto the true ones, row by row."""
    for k in range(6):
        turned = np.array([Hex(int(q), int(r)).rotated(k) for q, r in found])
        if len(np.unique(true - turned, axis=0)) == 1:
            return True
    return False


def _same_layout(found, true) -> bool:
    """Whether a rotation and translation map the set of found positions onto the set of true ones."""
    found = [Hex(int(q), int(r)) for q, r in found]
    true = {Hex(int(q), int(r)) for q, r in true}
    for k in range(6):
        turned = [h.rotated(k) for h in found]
        anchor = min(turned)
        for target in true:
            moved = {h.translated(target.q - anchor.q, target.r - anchor.r) for h in turned}
            if moved == true:
                return True
    return False


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10_000))
def test_assignment_finds_every_tile_and_never_mirrors(seed):
    rng = np.random.default_rng(seed)
    model = _model(angle_deg=rng.uniform(0, 360), scale=rng.uniform(35, 80),
                   tilt=rng.uniform(-8e-4, 8e-4, 2), k1=rng.uniform(-0.12, 0.0))
    # Seen from as low as 40 degrees, one direction of the table shrinks to sin(40°) ≈ 0.64.
    squash, turn = rng.uniform(0.64, 1.0), rng.uniform(0, np.pi)
    c, s = np.cos(turn), np.sin(turn)
    foreshorten = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ np.diag([1.0, squash, 1.0]) @ np.array(
        [[c, s, 0], [-s, c, 0], [0, 0, 1]])
    centre = np.array([[1, 0, 1000.0], [0, 1, 760.0], [0, 0, 1]])
    model = LatticeModel.for_image(centre @ foreshorten @ np.linalg.inv(centre) @ model.homography, SIZE, model.k1)
    hexes = _disc(4)
    hexes = hexes[rng.random(len(hexes)) < 0.75]  # holes and ragged borders
    points = model.board_to_image(hex_centres(hexes)) + rng.normal(0, 1.5, (len(hexes), 2))
    found = _best_lattice(points, np.ones(len(points)))
    assert found is not None
    assert found.inlier.all()
    assert _is_rotation_and_translation(found.axial, hexes)
    assert not found.model.is_mirrored(hex_centres(found.axial).mean(axis=0))


def test_assignment_of_a_mirrored_photo_is_mirrored_too():
    """A mirror image of the table must give mirrored axial positions (we never silently un-mirror)."""
    model = _model()
    hexes = _disc(3)
    points = model.board_to_image(hex_centres(hexes))
    points[:, 0] = SIZE[0] - 1 - points[:, 0]
    found = _best_lattice(points, np.ones(len(points)))
    assert found is not None and found.inlier.all()
    mirrored = np.stack([hexes[:, 0] + hexes[:, 1], -hexes[:, 1]], axis=1)  # x -> -x in axial terms
    assert _is_rotation_and_translation(found.axial, mirrored)
    assert not _is_rotation_and_translation(found.axial, hexes)


def test_assignment_ignores_far_outliers():
    model = _model(k1=0.0)
    hexes = _disc(3)
    points = np.vstack([model.board_to_image(hex_centres(hexes)), [[30.0, 30.0], [1990.0, 40.0]]])
    found = _best_lattice(points, np.r_[np.ones(len(hexes)), 0.3, 0.3])
    assert found.inlier[: len(hexes)].all()
    assert not found.inlier[len(hexes):].any()



@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-2, 2), st.integers(-2, 2), st.floats(-0.4, 0.4), st.floats(-0.4, 0.4),
                          st.floats(0.1, 1.0)), min_size=1, max_size=30))
def test_match_keeps_the_closest_candidate_of_each_position(candidates):
    from scanner.lattice_assign import MATCH_TOLERANCE, _match

    axial = np.array([(q, r) for q, r, *_ in candidates])
    board = hex_centres(axial) + np.array([(dx, dy) for _, _, dx, dy, _ in candidates])
    weights = np.array([w for *_, w in candidates])
    found, residual, inlier = _match(board, weights)
    assert (found == axial).all()
    for position in {tuple(a) for a in axial}:
        claim = (axial == position).all(axis=1) & (residual < MATCH_TOLERANCE)
        if not claim.any():
            assert not inlier[(axial == position).all(axis=1)].any()
            continue
        assert inlier[claim].sum() == 1
        kept = np.flatnonzero(claim & inlier)[0]
        best = min(np.flatnonzero(claim), key=lambda i: (residual[i], -weights[i]))
        assert (residual[kept], weights[kept]) == (residual[best], weights[best])


# -- fit_lattice on a drawn board (no network: the region is drawn from the known tiles) -----------------

import cv2  # noqa: E402

from scanner.lattice import converge, fit_lattice  # noqa: E402
from scanner.locate import OUTPUT_STRIDE, BoardRegion, NoBoardFound, work_size  # noqa: E402

PHOTO = (1008, 756)


def _drawn_board(model, hexes, jitter_rng=None, candidate_spread=1.0):
    """A photo of flat hexagons of random colours on a table, its region maps, and the true corners.

    ``candidate_spread`` scales the board-plane positions of the centre candidates (the heat map's peaks) about
    the origin: above 1, the candidates put the lattice off the tiles, more so the farther out.
    """
    rng = np.random.default_rng(1)
    image = np.full((PHOTO[1], PHOTO[0], 3), (60, 90, 120), np.uint8)
    corners_board = hex_corners(hexes) * 0.98  # gaps between the tiles
    centres = hex_centres(hexes)
    corners_board = corners_board + (centres - centres * 0.98)[:, None, :]
    if jitter_rng is not None:
        corners_board += jitter_rng.normal(0, 0.02, (len(hexes), 1, 2))
    corners = model.board_to_image(corners_board)
    for polygon in corners:
        colour = rng.integers(120, 255, 3).tolist()
        cv2.fillPoly(image, [np.round(polygon * 16).astype(np.int32)], colour, cv2.LINE_AA, shift=4)
    size = work_size(*PHOTO)
    scale = size[0] / PHOTO[0] / OUTPUT_STRIDE
    h, w = size[1] // OUTPUT_STRIDE, size[0] // OUTPUT_STRIDE
    mask = np.zeros((h, w), np.float32)
    heat = np.zeros((h, w), np.float32)
    ys, xs = np.mgrid[0:h, 0:w]
    for polygon in corners:
        in_map = (polygon + 0.5) * scale - 0.5
        cv2.fillPoly(mask, [np.round(in_map * 16).astype(np.int32)], 1.0, cv2.LINE_AA, shift=4)
    board_centres = corners_board.mean(axis=1)
    misplaced = model.board_to_image(board_centres * candidate_spread) - model.board_to_image(board_centres)
    for polygon, offset in zip(corners, misplaced):
        c = (polygon.mean(axis=0) + offset + 0.5) * scale - 0.5
        heat = np.maximum(heat, np.exp(-((xs - c[0]) ** 2 + (ys - c[1]) ** 2) / (2 * 2.0 ** 2)))
    region = BoardRegion(mask, heat.astype(np.float32), scale, (0, 0, PHOTO[0], PHOTO[1]), PHOTO)
    return image, region, corners


def _photo_model(angle_deg=25.0, distortion=-0.03):
    a = np.radians(angle_deg)
    h = np.array([[38 * np.cos(a), 38 * np.sin(a), 500.0], [-38 * np.sin(a), 30 * np.cos(a), 380.0],
                  [0.0, 2e-4, 1.0]])
    return LatticeModel.for_image(h, PHOTO, distortion)


def test_fit_lattice_finds_every_drawn_tile_with_accurate_corners():
    hexes = _disc(3)
    hexes = hexes[[i for i in range(len(hexes)) if i not in (4, 17)]]  # two holes
    image, region, true_corners = _drawn_board(_photo_model(), hexes)
    fit = fit_lattice(image, region)
    assert len(fit.cells) == len(hexes)
    assert _same_layout(list(fit.cells), hexes)
    radius = fit.tile_radius_px
    errors = []
    for cell in fit.cells.values():
        j = np.argmin(np.linalg.norm(true_corners.mean(axis=1) - cell.center_px, axis=1))
        shift = min(range(6), key=lambda k: np.abs(np.roll(cell.corners_px, k, 0) - true_corners[j]).sum())
        errors.append(np.linalg.norm(np.roll(cell.corners_px, shift, 0) - true_corners[j], axis=1).max())
        assert cell.visible > 0.9 and cell.confidence > 0.9
    assert np.median(errors) < 0.04 * radius
    # Corners run counter-clockwise on screen (negative signed area with y down).
    some = next(iter(fit.cells.values())).corners_px
    assert 0.5 * np.sum(some[:, 0] * np.roll(some[:, 1], -1) - np.roll(some[:, 0], -1) * some[:, 1]) < 0


def test_tiles_with_soft_edges_are_supported():
    """An edge blurred over a few pixels (focus, a tile's side in perspective) fills much of its search line;
    measured against the line's median it was no edge at all, and no tile was supported."""
    hexes = _disc(3)
    image, region, _ = _drawn_board(_photo_model(), hexes)
    fit = fit_lattice(cv2.GaussianBlur(image, (0, 0), 2.0), region)
    assert fit.supported_share > 0.8 and _same_layout(list(fit.cells), hexes)


def _centre_errors(fit, true_corners):
    """Distance of each fitted tile's centre from the nearest true tile's centre, pixels."""
    true_centres = true_corners.mean(axis=1)
    return np.array([np.linalg.norm(true_centres - c.center_px, axis=1).min() for c in fit.cells.values()])


@pytest.mark.parametrize("spread", [1.07, 1.08, 1.09])
def test_a_lattice_far_off_the_tiles_is_refitted_until_it_sits_on_their_edges(spread):
    """Candidates that put the outer tiles a third of a radius off (beyond the edge search's reach): one refit
    on the edges found moves the lattice only part of the way; further refits bring it onto the tiles."""
    hexes = _disc(3)
    image, region, true_corners = _drawn_board(_photo_model(), hexes, candidate_spread=spread)
    once = fit_lattice(image, region)
    assert _centre_errors(once, true_corners).max() > 0.1 * once.tile_radius_px
    fit = converge(image, once)
    assert len(fit.cells) == len(hexes) and _same_layout(list(fit.cells), hexes)
    assert _centre_errors(fit, true_corners).max() < 0.05 * fit.tile_radius_px
    assert fit.supported_tiles > once.supported_tiles


def test_a_lattice_on_the_tiles_is_left_as_it_is():
    hexes = _disc(3)
    image, region, _ = _drawn_board(_photo_model(), hexes)
    fit = fit_lattice(image, region)
    assert converge(image, fit) is fit
    # Even when told its last refit moved it far, a lattice on the tiles gains only small moves from further
    # refits: those are the edges' noise and are not kept.
    far = replace(fit, refit_move=1.0)
    assert converge(image, far) is far


def test_converge_keeps_the_refit_on_the_most_edge_though_one_on_the_way_found_less(monkeypatch):
    """Refits are made until one barely moves the lattice, and the one whose tiles find the most edge is kept:
    a refit that loses a little support does not end the search when the next ones gain more."""
    import scanner.lattice as lattice
    from scanner.lattice_refine import TilePoses

    hexes = _disc(2)
    image, region, _ = _drawn_board(_photo_model(), hexes)
    fit = replace(fit_lattice(image, region), refit_move=1.0)
    # Mean edge support of the start, then of each further refit (EXTRA_REFITS of them).
    supports = iter([0.60, 0.58, 0.66, 0.71, 0.69])
    refits = []

    def refit(model, *_args):
        refits.append(replace(model, k1=model.k1 + 1e-4))
        return refits[-1], None

    def poses(_gradients, _origin, centres, **_kwargs):
        n = len(centres)
        return TilePoses(np.zeros((n, 2)), np.zeros(n), 1.0, np.full(n, next(supports)))

    monkeypatch.setattr(lattice, "_refit_on_edges", refit)
    monkeypatch.setattr(lattice, "_move", lambda *_args: 1.0)
    monkeypatch.setattr(lattice, "refine_poses", poses)
    kept = converge(image, fit)
    assert len(refits) == lattice.EXTRA_REFITS
    assert kept.model is refits[2] and kept.supported_tiles == len(hexes)
    # Refits that never gain on the start leave the fit as it was.
    supports = iter([0.60, 0.58, 0.55, 0.59, 0.52])
    assert converge(image, fit) is fit


def test_fit_lattice_follows_the_previous_frame():
    hexes = _disc(2)
    image, region, _ = _drawn_board(_photo_model(), hexes)
    first = fit_lattice(image, region)
    moved_image, moved_region, _ = _drawn_board(_photo_model(angle_deg=27.0), hexes)
    second = fit_lattice(moved_image, moved_region, previous=first)
    # Tracking keeps the previous frame's axial frame: same positions, not re-labelled.
    assert set(second.cells) == set(first.cells)


def _fit_of(model, hexes):
    from scanner.lattice import CellGeometry, LatticeFit

    cells = {}
    for (q, r), corners in zip(hexes, model.board_to_image(hex_corners(hexes))):
        h = Hex(int(q), int(r))
        cells[h] = CellGeometry(h, tuple(corners.mean(axis=0)), corners, 1.0, 1.0)
    return LatticeFit(cells, model, 38.0)


def test_empty_positions_ring_the_tiles_and_share_their_edges():
    fit = _fit_of(_photo_model(), _disc(1))
    empty = fit.empty_positions(PHOTO)
    assert {c.hex for c in empty} == {Hex(q, r) for q, r in _disc(2)} - set(fit.cells)
    centre = fit.cells[Hex(0, 0)]
    for position in empty:
        assert position.hex not in fit.cells and position.visible == pytest.approx(1.0)
        touching = [c for c in fit.cells.values() if c.hex.distance(position.hex) == 1]
        assert touching
        # Two corners of each tile beside it are corners of the position too.
        for tile in touching:
            gaps = np.linalg.norm(tile.corners_px[:, None] - position.corners_px[None], axis=-1).min(axis=1)
            assert np.sum(gaps < 1e-6) == 2
        assert np.linalg.norm(np.mean(position.corners_px, axis=0) - centre.center_px) > 1.5 * 38.0 * 0.7


def test_empty_positions_outside_the_frame_are_left_out():
    fit = _fit_of(_photo_model(), _disc(1))
    inside_all = fit.empty_positions(PHOTO)
    narrow = fit.empty_positions((540, PHOTO[1]))  # the right part of the ring is cut off
    assert 0 < len(narrow) < len(inside_all)
    assert all(np.mean(c.corners_px[:, 0] < 540) >= 0.5 for c in narrow)
    assert all(c.visible >= 0.75 for c in narrow)


def test_cells_the_lens_model_throws_out_of_shape_are_left_out():
    from scanner.lattice import MAX_CELL_SIZE_RATIO, _plausible, _radius

    sane = _fit_of(_photo_model(), _disc(3)).cells
    assert set(_plausible(sane)) == set(sane)
    # A lens model extrapolated far past its tiles folds the lattice over: such cells are no tiles.
    fit = _fit_of(_photo_model(distortion=-1.0), _disc(14))
    kept = _plausible(fit.cells)
    assert {Hex(int(q), int(r)) for q, r in _disc(3)} <= set(kept) and len(kept) < len(fit.cells)
    median = float(np.median([_radius(c.corners_px) for c in fit.cells.values()]))
    for cells in (kept.values(), fit.empty_positions(PHOTO)):
        for cell in cells:
            assert cv2.isContourConvex(cell.corners_px.astype(np.float32))
            assert median / MAX_CELL_SIZE_RATIO <= _radius(cell.corners_px) <= median * MAX_CELL_SIZE_RATIO


def test_cells_left_out_are_not_counted_as_supported():
    """A folded cell left out must not lift the supported share of the tiles kept (which compares lattices)."""
    from scanner.lattice import _posed
    from scanner.lattice_refine import TilePoses

    fit = _fit_of(_photo_model(distortion=-1.0), _disc(14))
    n = len(fit.cells)
    support = np.ones(n)
    support[::2] = 0.0  # every other tile finds no edge
    poses = TilePoses(np.zeros((n, 2)), np.zeros(n), 0.97, support)
    centres = hex_centres(list(fit.cells))
    kept, supported = _posed(fit.cells, fit.model, poses, centres)
    assert len(kept) < n
    assert supported == sum(1 for h, s in zip(fit.cells, support) if h in kept and s > 0)
    assert supported < int(support.sum())


def test_same_tiles_are_told_by_where_they_lie_not_by_their_numbering():
    fit = _fit_of(_photo_model(), _disc(2))
    renumbered = replace(fit, cells={Hex(h.q + 5, h.r - 3): c for h, c in fit.cells.items()})
    assert fit.same_tiles(renumbered) and renumbered.same_tiles(fit)
    assert fit.same_tiles(fit.translated((0.1 * fit.tile_radius_px, 0.0)))
    assert not fit.same_tiles(fit.translated((0.5 * fit.tile_radius_px, 0.0)))
    fewer = replace(fit, cells=dict(list(fit.cells.items())[1:]))
    assert not fit.same_tiles(fewer) and not fewer.same_tiles(fit)


def _sheared(hexes, points):
    """A hypothesis through the same centres on a sheared lattice: (q, r) → (q + r, r) fits them as well."""
    from scanner.lattice_assign import Assignment
    from scanner.lattice_model import direct_homography

    axial = np.stack([hexes[:, 0] + hexes[:, 1], hexes[:, 1]], axis=1)
    model = LatticeModel.for_image(direct_homography(hex_centres(axial), points), PHOTO, 0.0)
    return Assignment(model, axial, np.ones(len(hexes), bool), np.zeros(len(hexes)))


def test_a_sheared_best_hypothesis_gives_way_to_the_one_on_the_tile_edges(monkeypatch):
    """The candidates cannot tell a sheared lattice from the real one; the drawn tiles' edges can."""
    import scanner.lattice as lattice

    hexes = _disc(3)
    image, region, _ = _drawn_board(_photo_model(), hexes)
    points, weights = region.centre_candidates()
    real = lattice_hypotheses(points, weights, PHOTO)[0]
    wrong = _sheared(real.axial, points)
    monkeypatch.setattr(lattice, "lattice_hypotheses", lambda *a, **k: [wrong])
    alone = fit_lattice(image, region)
    assert alone.supported_share < lattice.GOOD_SUPPORT
    monkeypatch.setattr(lattice, "lattice_hypotheses", lambda *a, **k: [wrong, real])
    fit = fit_lattice(image, region)
    assert fit.supported_share > 0.8 and _same_layout(list(fit.cells), hexes)


def test_runners_up_are_other_lattices():
    from scanner.lattice_assign import _same_lattice

    hexes = _disc(3)
    model = _model(k1=0.0)
    rng = np.random.default_rng(3)
    points = model.board_to_image(hex_centres(hexes)) + rng.normal(0, 4.0, (len(hexes), 2))
    ranked = lattice_hypotheses(points, np.ones(len(points)), SIZE, limit=3)
    assert ranked and _is_rotation_and_translation(ranked[0].axial[ranked[0].inlier], hexes[ranked[0].inlier])
    for n, a in enumerate(ranked):
        assert not any(_same_lattice(a, b) for b in ranked[n + 1:])
    assert _same_lattice(ranked[0], ranked[0])
    assert not _same_lattice(ranked[0], _sheared(hexes, points))


def test_fit_lattice_without_tiles_raises_no_board():
    image = np.zeros((PHOTO[1], PHOTO[0], 3), np.uint8)
    size = work_size(*PHOTO)
    empty = np.zeros((size[1] // 2, size[0] // 2), np.float32)
    region = BoardRegion(empty, empty, size[0] / PHOTO[0] / 2, (0, 0, PHOTO[0], PHOTO[1]), PHOTO)
    with pytest.raises(NoBoardFound) as info:
        fit_lattice(image, region)
    assert info.value.exit_code == 3


# -- locate: heat-map peaks and map coordinates -------------------------------------------------------

from scanner.locate import heat_peaks  # noqa: E402


def test_heat_peaks_are_found_to_a_fraction_of_a_pixel():
    ys, xs = np.mgrid[0:60, 0:80].astype(np.float32)
    centres = [(20.3, 15.6), (55.8, 40.2)]
    heat = np.zeros((60, 80), np.float32)
    for cx, cy in centres:
        heat = np.maximum(heat, np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * 2.5 ** 2)))
    points, heights = heat_peaks(heat, 0.25, lambda p: p)
    order = np.argsort(points[:, 0])
    np.testing.assert_allclose(points[order], centres, atol=0.15)
    assert np.all(heights > 0.5)


def test_map_and_photo_coordinates_invert_each_other():
    size = work_size(2016, 1512)
    assert size == (512, 384)
    region = BoardRegion(np.zeros((192, 256), np.float32), np.zeros((192, 256), np.float32),
                         size[0] / 2016 / 2, (0, 0, 2016, 1512), (2016, 1512))
    photo = np.array([[0.0, 0.0], [1007.5, 755.5], [2015.0, 1511.0]])
    np.testing.assert_allclose(region.to_photo(region.to_map(photo)), photo)
    # The centre of the photo is the centre of the map.
    np.testing.assert_allclose(region.to_map([[1007.5, 755.5]]), [[127.5, 95.5]])


class _FixedMaps:
    """Stands in for the network: returns given maps (the real one needs the trained model)."""

    def __init__(self, probability, heat, scale):
        self.result = (probability, heat, scale)

    def maps(self, image_bgr, side=512):
        return self.result


def test_locate_board_keeps_the_tiles_bounding_box():
    from scanner.locate import locate_board

    probability = np.zeros((96, 128), np.float32)
    probability[30:60, 40:90] = 0.9
    probability[5:7, 5:7] = 0.9  # a speck of clutter, far smaller than the board
    region = locate_board(np.zeros((384, 512, 3), np.uint8), _FixedMaps(probability, probability, 0.25))
    # Map pixels 40..89 cover photo pixels 160..359 (4 photo pixels each); edges at pixel borders.
    np.testing.assert_allclose(region.bbox_px, (159.5, 119.5, 359.5, 239.5))


def test_tile_top_maps_of_a_mirrored_photo_are_mirrored():
    from scanner.locate import TileTopNet

    # The network alone reads a mirrored photo a little differently; the mean of both views does not.
    photo = cv2.resize(cv2.imread(str(Path(__file__).parent.parent / "sample_images" / "table-classic.jpg")),
                       PHOTO)
    net = TileTopNet()
    probability, heat, _ = net.maps(photo)
    mirrored_probability, mirrored_heat, _ = net.maps(np.ascontiguousarray(photo[:, ::-1]))
    np.testing.assert_allclose(mirrored_probability[:, ::-1], probability, atol=1e-6)
    np.testing.assert_allclose(mirrored_heat[:, ::-1], heat, atol=1e-6)


def test_locate_board_without_tiles_says_no_board():
    from scanner.locate import locate_board

    empty = np.zeros((96, 128), np.float32)
    with pytest.raises(NoBoardFound):
        locate_board(np.zeros((384, 512, 3), np.uint8), _FixedMaps(empty, empty, 0.25))


def _view_points(model, low, shape):
    """Photo pixels (float32) of a rectified view's pixels, as rectify samples them."""
    from scanner.lattice_refine import RECTIFIED_SCALE

    ys, xs = np.mgrid[0:shape[0], 0:shape[1]].astype(np.float64)
    photo = model.board_to_image(np.stack([xs / RECTIFIED_SCALE + low[0], ys / RECTIFIED_SCALE + low[1]], -1))
    return photo.astype(np.float32)


@pytest.mark.parametrize("centre, scale", [((1000.0, 760.0), 70.0), ((150.0, 120.0), 90.0), ((1900.0, 1450.0), 40.0),
                                           ((1001.0, 759.0), 150.0)])
def test_rectify_reads_the_part_of_the_photo_as_the_whole_photo_would(centre, scale):
    from scanner.lattice_refine import RECTIFIED_SCALE, anti_aliased, blur_halvings, rectify

    image = np.random.default_rng(3).integers(0, 256, (SIZE[1], SIZE[0], 3), dtype=np.uint8)
    h = np.array([[scale, 0.0, centre[0]], [0.0, scale, centre[1]], [2e-4, -1e-4, 1.0]])
    model = LatticeModel.for_image(h, SIZE, -0.05)
    low, high = np.array([-4.0, -3.0]), np.array([4.0, 3.5])
    rectified, inside, origin = rectify(image, model, low, high)
    # The whole photo, halved and blurred as rectify does for a view shrunk this much, sampled at the same points.
    shrink = model.scale_px((low + high) / 2.0) / RECTIFIED_SCALE
    sigma = 0.5 * shrink if shrink > 1.5 else 0.0
    source = anti_aliased(image, sigma)
    photo = _view_points(model, low, rectified.shape) / 2 ** blur_halvings(sigma)
    whole = cv2.remap(source, photo[..., 0], photo[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    # To float32 precision: the filter's vectorised passes round the last digit by where a row starts.
    np.testing.assert_allclose(rectified, whole.reshape(rectified.shape), rtol=0, atol=1e-3)
    assert (origin == low).all() and inside.any()


@pytest.mark.parametrize("scale", [50.0, 70.0, 100.0, 150.0])
def test_rectify_blurs_as_a_gaussian_of_half_the_shrink_would(scale):
    """The halvings stand in for part of the anti-alias blur: the view of a photo is close to the photo blurred by
    that Gaussian and sampled (a table photo: its tile edges are where the two differ most)."""
    from scanner.lattice_refine import RECTIFIED_SCALE, blurred, rectify

    image = cv2.resize(cv2.imread(str(Path(__file__).parent.parent / "sample_images" / "table-classic.jpg")), SIZE)
    h = np.array([[scale, 0.0, 1000.0], [0.0, scale * 0.8, 760.0], [1e-4, -1e-4, 1.0]])
    model = LatticeModel.for_image(h, SIZE, -0.05)
    low, high = np.array([-4.0, -3.0]), np.array([4.0, 3.5])
    rectified, inside, _ = rectify(image, model, low, high)
    shrink = model.scale_px((low + high) / 2.0) / RECTIFIED_SCALE
    photo = _view_points(model, low, rectified.shape)
    gaussian = cv2.remap(blurred(image, 0.5 * shrink), photo[..., 0], photo[..., 1], cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE).reshape(rectified.shape)
    difference = np.abs(rectified - gaussian)[inside]
    assert difference.mean() < 0.8 and np.quantile(difference, 0.99) < 7.0


@pytest.mark.parametrize("halvings", [1, 2, 3])
def test_halved_variance_is_what_pyrdown_leaves(halvings):
    from scanner.lattice_refine import blur_halvings, halved_variance

    impulse = np.zeros((129, 129), np.float64)
    impulse[64, 64] = 1.0
    for _ in range(halvings):
        impulse = cv2.pyrDown(impulse)
    # Pixel i of the last halving is photo pixel i * 2**halvings: the impulse's spread, in photo pixels².
    xs = np.arange(impulse.shape[1]) * 2.0 ** halvings
    weights = impulse.sum(axis=0) / impulse.sum()
    mean = (weights * xs).sum()
    assert mean == pytest.approx(64.0)
    assert (weights * (xs - mean) ** 2).sum() == pytest.approx(halved_variance(halvings), rel=0.05)
    assert blur_halvings(np.sqrt(halved_variance(halvings))) == halvings
    assert blur_halvings(np.sqrt(halved_variance(halvings)) - 1e-6) == halvings - 1


@pytest.mark.parametrize("sigma", [0.0, 0.8, 1.6, 3.3])
def test_blurred_is_the_float_photo_blurred_as_opencv_blurs_it(sigma):
    from scanner.lattice_refine import blurred

    image = np.random.default_rng(5).integers(0, 256, (90, 130, 3), dtype=np.uint8)
    expected = image.astype(np.float32)
    if sigma > 0.0:
        expected = cv2.GaussianBlur(expected, (0, 0), sigma)
    result = blurred(image, sigma)
    assert result.dtype == np.float32 and result.shape == image.shape
    np.testing.assert_allclose(result, expected, rtol=0, atol=1e-3)


def test_points_that_fit_no_view_of_the_table_give_no_homography_and_no_warning():
    """A least-squares map that sends the board's origin to infinity is marked NaN, not divided by zero."""
    import warnings

    from scanner.lattice_model import direct_homography

    board = np.array([[1.0, 0.0], [2.0, 1.0], [3.0, -1.0], [1.5, 2.0], [2.5, -2.0], [4.0, 0.5]])
    image = np.stack([np.ones(len(board)), board[:, 1] / board[:, 0]], axis=1)  # (x, y) -> (1, y / x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        h = direct_homography(board, image)
    assert np.isnan(h).all()
    ordinary = direct_homography(board, board * 30.0 + 100.0)
    assert np.allclose(ordinary, [[30.0, 0.0, 100.0], [0.0, 30.0, 100.0], [0.0, 0.0, 1.0]])
