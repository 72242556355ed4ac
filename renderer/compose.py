"""Compose one photo of a board: layout, camera, table, tiles, pieces, light, sensor; and its truth.

Drawing order (the painter's algorithm is exact here): the table plane; shadows
of the tiles on it; the tiles' visible side walls; the printed top faces (one
texture, warped by the homography of the plane ``Z = thickness``; a wall is
always below every top, so tops may cover walls but never the reverse); the
pieces' shadows on the tops; the pieces and clutter, far faces first; hands.
All of it happens in an ideal pinhole canvas; the lens distortion is one remap
at the end, and truth points are projected with the same lens model.
"""

from __future__ import annotations

import math
from typing import Mapping

import cv2
import numpy as np

from fjords import Board, Hex
from renderer.camera import Camera, smooth_map
from renderer.clutter import clutter_faces
from renderer.hands import draw_arms
from renderer.layout import SQRT3, TilePose, layout, piece_base
from renderer.mesh import FAR_PX, Face, Light, draw_faces, shadow_outline
from renderer.noise import periodic_noise
from renderer.photo import depth_of_field, sensor
from renderer.pieces import PAINTS, STONE_RGB, crown_height_mm, paint_albedo, piece_faces
from renderer.scene import Scene, kelvin_to_bgr
from renderer.table import draw_table, table_texture
from renderer.tileart import TileStyle, paint_tile, sample_style
from renderer.truth import rounded, truth_document

MAX_TEXTURE_PX = 4096


def aim_camera(points: np.ndarray, scene: Scene, width: int, height: int) -> Camera:
    """A camera at the scene's angles whose view of ``points`` fills ``scene.fill`` of the frame.

    The bounding box of the projected points sits where ``scene.aim_offset``
    says within the margin the fill leaves: ``(0, 0)`` centred, ``±1`` against
    an edge (when the board overfills the frame, ``±1`` moves it half a frame).
    The plain iteration settles for almost every scene; seen low and
    overfilling the frame it can swing until the board passes behind the
    camera, and is then redone with damped steps.
    """
    camera = _aim(points, scene, width, height, max_step=math.inf)
    if not _frames(camera, points, scene, width, height):
        camera = _aim(points, scene, width, height, max_step=1.5, steps=12)
    return camera


def _aim(points: np.ndarray, scene: Scene, width: int, height: int, max_step: float, steps: int = 5) -> Camera:
    """Iterate distance and aim point towards the wanted framing; each distance step within ``max_step``×."""
    target = (points.min(axis=0) + points.max(axis=0)) / 2
    target[2] = 0.0
    radius = float(np.max(np.linalg.norm(points[:, :2] - target[:2], axis=1)))
    distance = radius / math.tan(math.radians(20)) / scene.fill
    margin = 0.95 * (1.0 - scene.fill) if scene.fill < 1.0 else 0.5
    want = np.array([(width - 1) / 2 * (1 + margin * scene.aim_offset[0]),
                     (height - 1) / 2 * (1 + margin * scene.aim_offset[1])])
    camera = None
    for _ in range(steps):
        camera = Camera.looking_at(target, elevation_deg=scene.elevation_deg, azimuth_deg=scene.azimuth_deg,
                                   roll_deg=scene.roll_deg, distance=distance, focal_mm=scene.focal_mm,
                                   width=width, height=height, k1=scene.k1, k2=scene.k2)
        px = camera.project_ideal(points)
        lo, hi = px.min(axis=0), px.max(axis=0)
        extent = max((hi[0] - lo[0]) / width, (hi[1] - lo[1]) / height)
        seen, wanted = camera.plane_point(np.array([(lo + hi) / 2, want]))
        target = target + seen - wanted
        distance *= float(np.clip(extent / scene.fill, 1.0 / max_step, max_step))
    return camera


def _frames(camera: Camera, points: np.ndarray, scene: Scene, width: int, height: int) -> bool:
    """Whether the camera sees all of ``points`` in front of it, filling about ``scene.fill`` of the frame."""
    if camera.to_camera(points)[:, 2].min() <= 0.0:
        return False
    px = camera.project_ideal(points)
    lo, hi = px.min(axis=0), px.max(axis=0)
    extent = max((hi[0] - lo[0]) / width, (hi[1] - lo[1]) / height)
    centre = (lo + hi) / 2
    return 0.5 * scene.fill <= extent <= 2.0 * scene.fill and 0 <= centre[0] < width and 0 <= centre[1] < height


def _direction(elevation_deg: float, azimuth_deg: float) -> np.ndarray:
    """Unit vector toward a light ``elevation_deg`` above the table, at compass ``azimuth_deg``."""
    el, az = math.radians(elevation_deg), math.radians(azimuth_deg)
    return np.array([math.cos(el) * math.cos(az), math.cos(el) * math.sin(az), math.sin(el)])


def _cast_shadows(canvas: "Canvas", casters, meshes: list[list[Face]], z: float) -> None:
    """Shadows of ``meshes`` on the plane ``Z = z`` from each ``(direction, strength, softness)`` light."""
    for direction, strength, softness in casters:
        canvas.cast_shadows([shadow_outline(m, direction, z) for m in meshes], softness, strength)


def key_light(scene: Scene) -> Light:
    direction = _direction(scene.light_elevation_deg, scene.light_azimuth_deg)
    tint = kelvin_to_bgr(scene.kelvin)
    key = scene.key * tint
    ambient = scene.ambient * (0.5 + 0.5 * tint)
    # Expose for a white sheet lying on the table.
    scale = 0.95 / float(np.max(ambient + key * direction[2]))
    return Light(direction, key * scale, ambient * scale)


class Canvas:
    """The ideal (undistorted) image being painted, larger than the photo by the lens margin."""

    def __init__(self, camera: Camera):
        x0, y0, w, h = camera.canvas_box()
        self.camera, self.origin, self.size = camera, (x0, y0), (w, h)
        self.pixels = np.zeros((h, w, 3), np.uint8)

    def project(self, points: np.ndarray) -> np.ndarray:
        return self.camera.project_ideal(points, self.origin)

    def plane_xy(self, z: float) -> np.ndarray:
        """World ``(X, Y)`` of every canvas pixel on the plane ``Z = z``."""
        w, h = self.size
        offset = np.asarray(self.origin, float)
        return smooth_map(lambda px: self.camera.plane_point(px + offset, z)[..., :2], w, h)

    def box(self, points: np.ndarray, margin: int = 8) -> tuple[int, int, int, int] | None:
        """Canvas box ``(x0, y0, x1, y1)`` around the projection of world ``points``; None when off the canvas."""
        px = self.project(points.reshape(-1, 3))
        w, h = self.size
        x0, y0 = np.floor(px.min(0)).astype(int) - margin
        x1, y1 = np.ceil(px.max(0)).astype(int) + margin
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        return (x0, y0, x1, y1) if x1 > x0 and y1 > y0 else None

    def cast_shadows(self, outlines: list[np.ndarray], softness: float, strength: np.ndarray) -> None:
        """Darken the canvas under shadow ``outlines`` (world polygons), only where they fall."""
        if not outlines:
            return
        box = self.box(np.concatenate(outlines), margin=int(3 * softness) + 4)
        if box is None:
            return
        x0, y0, x1, y1 = box
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        shift = np.array([self.origin[0] + x0, self.origin[1] + y0], float)
        polys = [np.round(np.clip(self.camera.project_ideal(o, tuple(shift)), -FAR_PX, FAR_PX) * 16).astype(np.int32)
                 for o in outlines]
        for poly in polys:  # one by one: a single call would cut holes where shadows overlap
            cv2.fillPoly(mask, [poly], 255, cv2.LINE_AA, shift=4)
        region = self.pixels[y0:y1, x0:x1]
        self.pixels[y0:y1, x0:x1] = darken(region, mask.astype(np.float32) / 255.0, softness, strength)


def darken(pixels: np.ndarray, mask: np.ndarray, softness: float, strength: np.ndarray) -> np.ndarray:
    if softness > 0.3:
        mask = cv2.GaussianBlur(mask, (0, 0), softness)
    gain = 1.0 - mask[..., None] * strength[None, None, :].astype(np.float32)
    return np.clip(pixels.astype(np.float32) * gain, 0, 255).astype(np.uint8)


def _albedo(piece, colours: Mapping[str, tuple[int, int, int]] | None, paints: dict, vary: bool,
            rng: np.random.Generator) -> np.ndarray:
    """A piece's paint: one batch per player per photo; each rune stone its own stone."""
    if piece.player is None:
        return paint_albedo(STONE_RGB, rng, vary)
    if piece.player not in paints:
        rgb = (colours or {}).get(piece.player) or PAINTS.get(piece.player)
        if rgb is None:
            raise ValueError(f"no paint for player colour {piece.player!r}: give its RGB in colours= "
                             f"or use one of {', '.join(PAINTS)}")
        paints[piece.player] = paint_albedo(rgb, rng, vary)
    return paints[piece.player]


def render_scene(board: Board, scene: Scene, rng: np.random.Generator, width: int, height: int,
                 colours: Mapping[str, tuple[int, int, int]] | None,
                 print_seed: int | None = None) -> tuple[np.ndarray, dict, np.ndarray]:
    """The photo (8-bit BGR), its truth document and its hand mask of ``board`` seen as ``scene`` says.

    The hand mask (float32, the photo's size, 0..1) is the share of each pixel an arm covers: what a scanner's
    hand model learns to see (:mod:`scanner.train_hands`).

    ``print_seed``, when given, draws the tile printing from its own generator (one copy, many photos).
    """
    style = sample_style(scene.style, rng if print_seed is None else np.random.default_rng(print_seed))
    poses = layout(board, scene, rng)
    s, top = scene.tile_radius_mm, scene.tile_thickness_mm
    corners = {h: p.corners(s, top) for h, p in poses.items()}
    # What the camera frames: the tiles' corners (an empty table: a board-sized patch of it).
    anchor_radius = s if corners else 4 * s
    anchor = np.concatenate(list(corners.values())) if corners else TilePose(np.zeros(2), 0.0).corners(anchor_radius, 0)
    camera = aim_camera(anchor, scene, width, height)
    canvas = Canvas(camera)
    light = key_light(scene)
    flat_gain = (light.ambient + light.key * light.direction[2]).astype(np.float32)
    shadow_strength = light.key * light.direction[2] / flat_gain

    # Pieces and clutter are built first: their shadows fall on the table and tiles.
    piece_truth = _place_pieces(board, poses, scene, colours, rng)
    piece_meshes = [faces for _, _, faces in piece_truth]
    board_radius = float(np.max(np.linalg.norm(anchor[:, :2] - anchor[:, :2].mean(0), axis=1))) + s
    clutter = clutter_faces(scene.clutter, anchor[:, :2].mean(0), board_radius, rng)

    # The table, lit, with the tiles' and clutter's shadows.
    table_xy = canvas.plane_xy(0.0)
    tex, mm_per_px = table_texture(scene.table, scene.table_rgb, rng)
    table = draw_table(table_xy, tex, mm_per_px) * flat_gain[None, None, :]
    spot = np.append(anchor[:, :2].mean(0) + rng.normal(0, 0.4, 2) * board_radius, 0.0)
    lamp = glare_lamp(camera, spot)
    glare = _glare_map(canvas, light, scene, lamp)
    table += glare[..., None] * (0.5 if scene.table == "laminate" else 0.1)
    canvas.pixels = np.clip(table * 255, 0, 255).astype(np.uint8)
    casters = [(light.direction, shadow_strength * 0.85, scene.shadow_softness_px)]
    if scene.fill_light > 0:  # a second lamp: a second, weaker and softer set of shadows
        casters.append((_direction(scene.fill_elevation_deg, scene.fill_azimuth_deg), np.full(3, scene.fill_light),
                        2 * scene.shadow_softness_px + 2))
    tile_blocks = [[Face(c, np.zeros(3), np.zeros(3))] for c in corners.values()]
    on_table = [m for m, t in zip(piece_meshes, piece_truth) if t[0][2] < top / 2]
    _cast_shadows(canvas, casters, tile_blocks + clutter + on_table, 0.0)

    # Side walls, then the printed tops over them.
    draw_faces(canvas.pixels, _walls(poses, s, top, np.array(style.side) * 0.8), camera, canvas.origin, light)
    if poses:
        _draw_tops(canvas, board, poses, style, scene, light, glare, flat_gain, rng)

    # Pieces' shadows on the tops, then the pieces and clutter themselves.
    _cast_shadows(canvas, casters, [m for m, t in zip(piece_meshes, piece_truth) if t[0][2] >= top / 2], top)
    board_px = canvas.project(anchor)
    # Opposite corners of each (anchor) hexagon are two circumradii apart.
    px_per_mm = float(np.median(np.linalg.norm(board_px[0::6] - board_px[3::6], axis=1))) / (2 * anchor_radius)
    # Contact shadows: the ambient light a piece blocks right around its foot, whatever the lamp does.
    feet = [_footprint(m, t[0][2]) for m, t in zip(piece_meshes + clutter, piece_truth + [(np.zeros(3),)] * len(clutter))]
    canvas.cast_shadows(feet, max(1.0, 1.2 * px_per_mm), np.full(3, 0.3))
    wood = np.zeros(canvas.pixels.shape[:2], np.uint8)
    draw_faces(canvas.pixels, [f for m in piece_meshes for f in m], camera, canvas.origin, light,
               edge_gain=scene.edge_gain, coverage=wood)
    _grain(canvas, wood, scene.grain, px_per_mm, rng)
    draw_faces(canvas.pixels, [f for m in clutter for f in m], camera, canvas.origin, light)
    centre = np.append(anchor[:, :2].mean(0), top)
    away = centre - np.append(light.direction[:2] / max(light.direction[2], 0.3), 0.0)  # the shadow of 1 mm up
    hand_mask = draw_arms(canvas.pixels, scene.hands, board_px, px_per_mm,
                          canvas.project(away) - canvas.project(centre), rng)
    if scene.dof > 0:  # focused on the board; the table's depth stands in for everything's
        table_depth = camera.depth(np.dstack([table_xy, np.zeros(table_xy.shape[:2], np.float32)]))
        focus = float(camera.depth(np.append(anchor[:, :2].mean(0), top)))
        canvas.pixels = depth_of_field(canvas.pixels, table_depth, focus, scene.dof * px_per_mm * 3)

    map_x, map_y = camera.distortion_maps(canvas.origin)
    photo = cv2.remap(canvas.pixels, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    photo_hands = cv2.remap(hand_mask, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    photo = sensor(photo, rng, exposure=scene.exposure, white_balance=scene.white_balance, vignette=scene.vignette,
                   gradient=scene.gradient, gradient_angle_deg=scene.gradient_angle_deg,
                   blur_sigma=scene.blur_sigma, motion_px=scene.motion_px, chromatic_px=scene.chromatic_px,
                   tone=scene.tone, sharpen=scene.sharpen, noise_sigma=scene.noise_sigma,
                   jpeg_quality=scene.jpeg_quality)
    truth = truth_document(board, scene, style, camera, canvas, poses, piece_truth, hand_mask, light, width, height)
    truth["lights"]["glare_lamp_mm"] = rounded(lamp)
    return photo, truth, photo_hands


def _place_pieces(board: Board, poses: dict[Hex, TilePose], scene: Scene,
                  colours: Mapping[str, tuple[int, int, int]] | None, rng: np.random.Generator) -> list:
    """``(base, top, faces)`` of every piece, in the board's order: world foot and crown points, and its mesh."""
    s, top = scene.tile_radius_mm, scene.tile_thickness_mm
    spacing = s + scene.gap_mm / SQRT3
    paints: dict = {}
    placed = []
    for piece in board.pieces:
        tile = board.tiles.get(piece.hex)
        base = piece_base(piece, tile.terrain if tile else None, poses.get(piece.hex), spacing, s, top, rng)
        faces = piece_faces(piece.kind, board.edition, base, float(rng.uniform(0, 360)),
                            _albedo(piece, colours, paints, scene.paint_variation, rng), scene.settler_shape,
                            scene.house_shape, scene.piece_scale)
        crown = crown_height_mm(piece.kind, scene.house_shape, scene.piece_scale)
        placed.append((base, base + np.array([0, 0, crown]), faces))
    return placed


def _walls(poses: dict[Hex, TilePose], radius: float, top: float, albedo: np.ndarray) -> list[Face]:
    """The six cardboard side walls of every tile, facing out."""
    walls = []
    for pose in poses.values():
        upper, lower = pose.corners(radius, top), pose.corners(radius, 0.0)
        for k in range(6):
            j = (k + 1) % 6
            a = math.radians(60.0 * (k + 1) + pose.turn_deg)  # wall k faces direction k + 1
            walls.append(Face(np.array([upper[k], upper[j], lower[j], lower[k]]),
                              np.array([math.cos(a), math.sin(a), 0.0]), albedo))
    return walls


def _grain(canvas: Canvas, wood: np.ndarray, amount: float, px_per_mm: float, rng: np.random.Generator) -> None:
    """Wood grain showing through the paint: streaky noise (about 1 mm across) where ``wood`` is set.

    The streaks run one way across the photo rather than along each piece: at
    a piece's few dozen pixels that difference does not show.
    """
    box = cv2.boundingRect(wood)
    if amount <= 0 or box[2] == 0:
        return
    x, y, w, h = box
    size = 256
    streaks = periodic_noise(rng, size, 1.5, stretch=6.0)
    angle = float(rng.uniform(0, 180))
    scale = max(px_per_mm / 2, 0.5)  # noise pixels are about half a millimetre
    m = cv2.getRotationMatrix2D((0, 0), angle, scale)
    m[:, 2] = (-x, -y)
    tiled = cv2.warpAffine(streaks, m, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                           borderMode=cv2.BORDER_WRAP)
    mask = wood[y:y + h, x:x + w].astype(np.float32) / 255.0
    gain = 1.0 + amount * tiled * mask
    region = canvas.pixels[y:y + h, x:x + w].astype(np.float32)
    canvas.pixels[y:y + h, x:x + w] = np.clip(region * gain[..., None], 0, 255).astype(np.uint8)


def _footprint(faces: list[Face], z: float) -> np.ndarray:
    """A piece's outline seen from straight above, a little enlarged, on the plane it stands on."""
    outline = shadow_outline(faces, np.array([0.0, 0.0, 1.0]), z)
    centre = outline.mean(0)
    return centre + (outline - centre) * np.array([1.15, 1.15, 1.0])


def _glare_map(canvas: Canvas, light: Light, scene: Scene, lamp: np.ndarray) -> np.ndarray:
    """Blinn-Phong highlight of a lamp at ``lamp`` (world mm) on a horizontal glossy surface, per canvas pixel."""
    w, h = canvas.size
    if scene.glare <= 0:
        return np.zeros((h, w), np.float32)
    offset = np.asarray(canvas.origin, float)

    def highlight(px: np.ndarray) -> np.ndarray:
        points = canvas.camera.plane_point(px + offset, 0.0)
        to_eye = canvas.camera.position - points
        to_lamp = lamp - points
        half = to_eye / np.linalg.norm(to_eye, axis=-1, keepdims=True) + to_lamp / np.linalg.norm(
            to_lamp, axis=-1, keepdims=True)
        return (half[..., 2] / np.linalg.norm(half, axis=-1)) ** scene.glare_sharpness

    return scene.glare * float(np.max(light.key)) * smooth_map(highlight, w, h)


def glare_lamp(camera: Camera, spot: np.ndarray, distance: float = 900.0) -> np.ndarray:
    """Where a lamp must hang for its mirror image in the table to appear at ``spot`` (world mm, on the table)."""
    view = camera.position - spot
    view /= np.linalg.norm(view)
    return spot + distance * np.array([-view[0], -view[1], view[2]])


def _draw_tops(canvas: Canvas, board: Board, poses: dict[Hex, TilePose], style: TileStyle, scene: Scene,
               light: Light, glare: np.ndarray, flat_gain: np.ndarray, rng: np.random.Generator) -> None:
    """Paint every tile's art into one top-down texture and warp it onto the plane of the tops."""
    s = scene.tile_radius_mm
    centres = np.array([p.centre for p in poses.values()])
    tops = np.column_stack([centres, np.full(len(centres), scene.tile_thickness_mm)])
    px_per_mm = canvas.camera.focal_px / float(np.min(canvas.camera.depth(tops)) - s)
    lo, hi = centres.min(0) - s - 2, centres.max(0) + s + 2
    mm_per_px = max(1.0 / px_per_mm, float(np.max(hi - lo)) / MAX_TEXTURE_PX)
    tw, th = (int(math.ceil(v)) + 1 for v in (hi - lo) / mm_per_px)
    colour = np.zeros((th, tw, 3), np.float32)
    alpha = np.zeros((th, tw), np.float32)
    radius_px = s / mm_per_px
    for h, pose in poses.items():
        art, mask = paint_tile(board.tiles[h].terrain, style, radius_px, rng)
        art *= np.float32(rng.normal(1.0, 0.025))  # no tile lies quite flat: each catches the light its own way
        size = art.shape[0]
        cx, cy = (pose.centre[0] - lo[0]) / mm_per_px, (hi[1] - pose.centre[1]) / mm_per_px
        m = cv2.getRotationMatrix2D(((size - 1) / 2, (size - 1) / 2), pose.turn_deg, 1.0)
        x0, y0 = int(cx - size / 2) - 1, int(cy - size / 2) - 1
        x0c, y0c = max(x0, 0), max(y0, 0)
        x1c, y1c = min(x0 + size + 2, tw), min(y0 + size + 2, th)
        m[:, 2] += (cx - (size - 1) / 2 - x0c, cy - (size - 1) / 2 - y0c)
        box = (x1c - x0c, y1c - y0c)
        premult = art * mask[..., None]
        colour[y0c:y1c, x0c:x1c] += cv2.warpAffine(premult, m, box, flags=cv2.INTER_LINEAR)
        alpha[y0c:y1c, x0c:x1c] += cv2.warpAffine(mask, m, box, flags=cv2.INTER_LINEAR)
    box = canvas.box(np.concatenate([p.corners(s, scene.tile_thickness_mm) for p in poses.values()]))
    if box is None:
        return
    x0, y0, x1, y1 = box
    homography = canvas.camera.plane_homography(scene.tile_thickness_mm, (lo[0], hi[1]), mm_per_px,
                                                (canvas.origin[0] + x0, canvas.origin[1] + y0))
    warped = cv2.warpPerspective(np.dstack([colour, alpha]), homography, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    a = np.clip(warped[..., 3:], 0, 1)
    lit = warped[..., :3] * flat_gain[None, None, :] + (style.gloss * glare[y0:y1, x0:x1])[..., None] * a
    region = canvas.pixels[y0:y1, x0:x1].astype(np.float32)
    canvas.pixels[y0:y1, x0:x1] = np.clip(region * (1 - a) + lit * 255, 0, 255).astype(np.uint8)


