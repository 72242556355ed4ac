"""Everything a photo varies, drawn at random per seed: the :class:`Scene`.

One flat dataclass so that any field can be pinned by ``render_board(...,
**overrides)`` (``elevation_deg=90``, ``hands=0``, ``blur_sigma=0``, …) and so
that the truth file can record exactly what was drawn.
"""

from __future__ import annotations

import colorsys
import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from renderer.pieces import CLASSIC_SETTLER_SHAPES, HOUSE_SHAPES
from renderer.tileart import RANDOM_STYLES, STYLES

TABLES = ("wood", "cloth", "laminate", "felt")
CLUTTER = ("box_lid", "cards", "cup", "dice")
CLOTH_RGB = np.array([(235, 232, 220), (215, 200, 170), (150, 150, 150), (40, 50, 90), (40, 80, 50), (120, 30, 40),
                      (190, 60, 50), (90, 120, 170), (60, 60, 60), (200, 180, 120)])


@dataclass(frozen=True)
class Scene:
    """The drawn parameters of one photo; lengths in millimetres, angles in degrees."""

    style: str
    # the cardboard
    tile_radius_mm: float = 25.0
    tile_thickness_mm: float = 2.0
    gap_mm: float = 0.8
    jitter_mm: float = 0.6
    jitter_deg: float = 2.0
    # the camera
    elevation_deg: float = 70.0
    azimuth_deg: float = 270.0
    roll_deg: float = 0.0
    focal_mm: float = 26.0
    k1: float = -0.05
    k2: float = 0.0
    fill: float = 0.7
    aim_offset: tuple[float, float] = (0.0, 0.0)  # where the board sits in the margin left free: −1..1 per axis
    # the light
    light_elevation_deg: float = 55.0
    light_azimuth_deg: float = 120.0
    kelvin: float = 4500.0
    key: float = 0.7
    ambient: float = 0.45
    shadow_softness_px: float = 1.5
    fill_light: float = 0.0        # share of the light a second lamp gives (its shadows are this dark)
    fill_elevation_deg: float = 45.0
    fill_azimuth_deg: float = 300.0
    gradient: float = 0.2          # strength of the light fall-off across the photo
    gradient_angle_deg: float = 0.0
    glare: float = 0.3             # strength of specular glare on glossy print
    glare_sharpness: float = 150.0  # Phong exponent: small is a broad sheen, large a hard spot
    # the surroundings
    table: str = "wood"
    table_rgb: tuple[int, int, int] = (150, 110, 70)
    clutter: tuple[str, ...] = ()
    hands: int = 0
    settler_shape: str = "disc"
    house_shape: str = "roof"      # "roof" (the boxed games) or "bar" (a plain wooden bar)
    piece_scale: float = 1.0       # houses and settlers of this copy, relative to the boxed games'
    paint_variation: bool = True
    edge_gain: float = 0.2         # how much the pieces' rounded edges catch the light
    grain: float = 0.05            # contrast of the wood grain showing through the paint
    # the sensor
    exposure: float = 1.0
    white_balance: tuple[float, float, float] = (1.0, 1.0, 1.0)  # BGR gains of a wrong white balance
    vignette: float = 0.2
    blur_sigma: float = 0.6
    motion_px: float = 0.0         # length of a shaky hand's smear
    dof: float = 0.0               # depth-of-field blur (0 = everything sharp)
    chromatic_px: float = 0.0      # lateral chromatic aberration at the corners
    tone: float = 0.0              # highlight roll-off of the phone's tone curve (0 = linear, clipped)
    sharpen: float = 0.0           # unsharp-mask amount of the phone's processing
    noise_sigma: float = 2.0
    jpeg_quality: int = 88

    def replace(self, **overrides) -> "Scene":
        """A copy with some fields pinned; unknown names raise ``TypeError`` naming them."""
        known = {f.name for f in dataclasses.fields(self)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise TypeError(f"unknown render parameter(s): {', '.join(unknown)}")
        if "style" in overrides and overrides["style"] not in STYLES:
            raise ValueError(f"unknown style {overrides['style']!r}; expected one of {', '.join(STYLES)}")
        return dataclasses.replace(self, **overrides)

    def as_dict(self) -> dict:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(self).items()}


def sample_scene(rng: np.random.Generator, style: str | None = None, edition: str = "classic") -> Scene:
    """A random scene: camera, light, table, clutter and sensor as phone photos of game tables vary."""
    table = str(rng.choice(TABLES))
    table_rgb = {
        "wood": lambda: _hsv_rgb(rng.uniform(18, 40), rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.85)),
        "cloth": lambda: tuple(int(c) for c in np.clip(rng.choice(CLOTH_RGB) + rng.normal(0, 12, 3), 0, 255)),
        "laminate": lambda: tuple(int(c) for c in np.full(3, rng.uniform(60, 245)) + rng.uniform(-20, 20, 3)),
        "felt": lambda: tuple(int(c) for c in rng.choice([(40, 110, 60), (30, 60, 120), (120, 30, 40),
                                                           (60, 60, 60)]) + rng.uniform(-20, 20, 3)),
    }[table]()
    elevation = float(90 - 50 * rng.uniform() ** 1.3)
    fill = float(rng.uniform(0.4, 0.95)) if rng.random() < 0.88 else float(rng.uniform(1.0, 1.3))
    warm = rng.random() < 0.45
    return Scene(
        style=style if style is not None else str(rng.choice(RANDOM_STYLES)),
        tile_radius_mm=float(rng.uniform(23.0, 27.0)),
        tile_thickness_mm=float(rng.uniform(1.6, 2.6)),
        gap_mm=float(rng.uniform(0.2, 1.8)),
        jitter_mm=float(rng.uniform(0.0, 1.2)),
        jitter_deg=float(rng.uniform(0.0, 4.0)),
        elevation_deg=elevation,
        azimuth_deg=float(rng.uniform(0, 360)),
        roll_deg=float(rng.normal(0, 4)),
        focal_mm=float(rng.uniform(22.0, 30.0)),
        k1=float(rng.uniform(-0.15, 0.02)),
        k2=float(rng.uniform(-0.02, 0.03)),
        fill=fill,
        aim_offset=tuple(float(v) for v in rng.uniform(-1, 1, 2)),
        light_elevation_deg=float(rng.uniform(25, 85)),
        light_azimuth_deg=float(rng.uniform(0, 360)),
        kelvin=float(rng.uniform(2700, 3800) if warm else rng.uniform(4500, 7000)),
        key=float(rng.uniform(0.2, 0.9)),
        ambient=float(rng.uniform(0.25, 0.6)),
        shadow_softness_px=float(rng.choice([0.7, rng.uniform(1, 6)])),
        fill_light=float(rng.uniform(0.08, 0.3) if rng.random() < 0.5 else 0.0),
        fill_elevation_deg=float(rng.uniform(30, 70)),
        fill_azimuth_deg=float(rng.uniform(0, 360)),
        gradient=float(rng.uniform(0, 0.45)),
        gradient_angle_deg=float(rng.uniform(0, 360)),
        glare=float(rng.uniform(0.2, 1.5) if rng.random() < 0.5 else 0.0),
        glare_sharpness=float(np.exp(rng.uniform(np.log(30), np.log(600)))),
        table=table,
        table_rgb=table_rgb,
        clutter=tuple(str(c) for c in rng.choice(CLUTTER, size=rng.integers(0, 4), replace=False)),
        hands=int(rng.choice([0, 0, 0, 1, 1, 2])),
        edge_gain=float(rng.uniform(0.0, 0.4)),
        grain=float(rng.uniform(0.0, 0.07)),
        settler_shape=str(rng.choice(CLASSIC_SETTLER_SHAPES)) if edition == "classic" else "meeple",
        exposure=float(np.exp(rng.normal(0, 0.15))),
        white_balance=tuple(float(v) for v in np.exp(rng.normal(0, 0.05, 3))),
        vignette=float(rng.uniform(0, 0.45)),
        blur_sigma=float(rng.uniform(0, 1.3)),
        motion_px=float(rng.uniform(1.5, 6.0) if rng.random() < 0.15 else 0.0),
        dof=float(rng.uniform(0.1, 1.0) if rng.random() < 0.35 else 0.0),
        chromatic_px=float(rng.uniform(0, 1.5)),
        tone=float(rng.uniform(0, 1)),
        sharpen=float(rng.uniform(0, 0.8) if rng.random() < 0.6 else 0.0),
        noise_sigma=float(rng.uniform(0.5, 5.0)),
        jpeg_quality=int(rng.integers(60, 96)),
        **_sample_copy_pieces(rng),
    )


def _sample_copy_pieces(rng: np.random.Generator) -> dict:
    """House shape and piece scale of the copy on the table.

    Drawn from a child generator, which leaves ``rng``'s stream untouched: every
    other draw of a seed (camera, light, board, hands) stays as it was before
    copies differed.
    """
    child = rng.spawn(1)[0]
    return {"house_shape": str(child.choice(HOUSE_SHAPES, p=[0.7, 0.3])),
            "piece_scale": float(child.uniform(0.88, 1.15))}


def copy_pieces(print_seed: int, edition: str) -> dict:
    """House shape, piece scale and (classic edition) settler shape of one copy of the game.

    Drawn from ``print_seed`` alone, so that every photo of the copy shows the same pieces; the tile printing
    draws from the same seed through its own generator.
    """
    rng = np.random.default_rng([print_seed, 1])
    pieces = _sample_copy_pieces(rng)
    if edition == "classic":
        pieces["settler_shape"] = str(rng.choice(CLASSIC_SETTLER_SHAPES))
    return pieces


def _hsv_rgb(hue_deg: float, saturation: float, value: float) -> tuple[int, int, int]:
    return tuple(int(round(255 * c)) for c in colorsys.hsv_to_rgb(hue_deg / 360.0, saturation, value))


def kelvin_to_bgr(kelvin: float) -> np.ndarray:
    """Relative BGR colour of a black body (Tanner Helland's fit), normalised to green = 1."""
    t = kelvin / 100.0
    red = 255.0 if t <= 66 else 329.7 * (t - 60) ** -0.1332
    green = 99.47 * math.log(t) - 161.1 if t <= 66 else 288.1 * (t - 60) ** -0.0755
    blue = 255.0 if t >= 66 else (0.0 if t <= 19 else 138.5 * math.log(t - 10) - 305.0)
    rgb = np.clip([red, green, blue], 1, 255)
    return np.array([rgb[2], rgb[1], rgb[0]]) / rgb[1]

