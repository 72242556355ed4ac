"""Geometry of the lattice and sectors, checked against the spec's own examples and by properties."""

import math

from hypothesis import given
from hypothesis import strategies as st

from fjords.geometry import (
    DIRECTIONS,
    Hex,
    canonical_segment,
    corner_angle,
    direction_between,
    edge_pairs,
    expand_terrain,
    facing_sector,
    land_groups,
    rotate_sector,
    rotate_terrain,
    sector_mid_angle,
    segments,
)

hexes = st.builds(Hex, st.integers(-50, 50), st.integers(-50, 50))
terrains = st.text(alphabet="SMP", min_size=12, max_size=12)


def test_spec_examples():
    assert expand_terrain("PPMSSP") == "PPPPMMSSSSPP"
    assert rotate_terrain("PPPPMMSSSSPP", 1) == "PPPPPPMMSSSS"
    assert segments("PPPPMMPPPPMM") == ((0, 1, 2, 3), (6, 7, 8, 9))
    assert canonical_segment("PPMMPPPPPPPP", 0) == 4
    assert canonical_segment("PPMMPPPPPPPP", 3) is None
    assert segments("PPPPPPPPPPPP") == (tuple(range(12)),)
    assert canonical_segment("PPPPPPPPPPPP", 7) == 0


def test_directions_point_counter_clockwise_in_the_image():
    # Direction d points at 60·d degrees counter-clockwise from +x; image y grows downwards.
    origin = Hex(0, 0).pixel_center()
    for d in range(6):
        x, y = Hex(0, 0).neighbour(d).pixel_center()
        angle = math.degrees(math.atan2(-(y - origin[1]), x - origin[0])) % 360
        assert math.isclose(angle, 60 * d, abs_tol=1e-9)
        assert math.isclose(math.hypot(x, y), math.sqrt(3), rel_tol=1e-12)


def test_sectors_lie_on_their_edge():
    for i in range(12):
        d = i // 2
        assert abs((sector_mid_angle(i) - 60 * d + 180) % 360 - 180) == 15
    assert corner_angle(0) == 30 and corner_angle(5) == 330


def test_facing_sector_matches_spec_formula():
    for d in range(6):
        for h in (0, 1):
            assert facing_sector(2 * d + h) == 2 * ((d + 3) % 6) + (1 - h)
    assert edge_pairs(0) == ((0, 7), (1, 6))


@given(st.integers(0, 11))
def test_facing_is_an_involution(i):
    assert facing_sector(facing_sector(i)) == i


@given(hexes, st.integers(0, 5))
def test_neighbour_and_direction_agree(h, d):
    n = h.neighbour(d)
    assert direction_between(h, n) == d
    assert n.neighbour(d + 3) == h
    assert h.distance(n) == 1


@given(hexes, st.integers(0, 11))
def test_rotation_keeps_neighbours(h, k):
    for d in range(6):
        assert h.neighbour(d).rotated(k) == h.rotated(k).neighbour(d + k)
    assert h.rotated(k).rotated(6 - k % 6) == h
    assert h.rotated(6) == h


@given(hexes, st.integers(0, 5))
def test_rotation_turns_pixels_counter_clockwise(h, k):
    x, y = h.pixel_center()
    rx, ry = h.rotated(k).pixel_center()
    a = math.radians(60 * k)
    # Counter-clockwise in an image whose y axis points down.
    assert math.isclose(rx, x * math.cos(a) + y * math.sin(a), abs_tol=1e-9)
    assert math.isclose(ry, -x * math.sin(a) + y * math.cos(a), abs_tol=1e-9)


@given(terrains, st.integers(0, 11))
def test_rotation_of_terrain_and_sectors_agree(terrain, k):
    turned = rotate_terrain(terrain, k)
    for i in range(12):
        assert turned[rotate_sector(i, k)] == terrain[i]
    assert rotate_terrain(turned, 6 - k % 6) == terrain


@given(terrains)
def test_segments_partition_the_plains(terrain):
    runs = segments(terrain)
    covered = sorted(i for run in runs for i in run)
    assert covered == [i for i, c in enumerate(terrain) if c == "P"]
    for run in runs:
        assert terrain[(run[0] - 1) % 12] != "P" or len(run) == 12
        assert all((b - a) % 12 == 1 for a, b in zip(run, run[1:]))
        assert all(canonical_segment(terrain, i) == run[0] for i in run)


@given(terrains)
def test_land_groups_partition_the_land(terrain):
    covered = sorted(i for run in land_groups(terrain) for i in run)
    assert covered == [i for i, c in enumerate(terrain) if c in "MP"]


def test_directions_table():
    assert DIRECTIONS == ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))
