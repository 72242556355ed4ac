"""Boards to photograph: games simulated by the engine, stopped in any phase."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Sequence

from fjords import Board
from fjords.board import Piece
from fjords.geometry import Hex
from fjords.simulate import simulate_game

PLAYER_COLOURS = ("red", "yellow", "blue", "black", "white", "green", "grey", "beige", "brown", "orange",
                  "purple")
RUNESTONE_SHARE = 0.35  # of 2022 photos play the rune stone variant


def random_setup(seed: int, edition: str | None = None, players: int | None = None) -> tuple[str, int]:
    """The edition and player count of photo ``seed``: drawn (even odds; 2022 with 2–4 players) unless given."""
    pick = random.Random(seed)
    if edition is None:
        edition = "2022" if players is not None and players > 2 else pick.choice(["classic", "2022"])
    if players is None:
        players = 2 if edition == "classic" else pick.choice([2, 2, 3, 4])
    return edition, players


def random_board(seed: int, edition: str = "classic", players: int = 2, **kw: Any) -> Board:
    """A table from :func:`fjords.simulate.simulate_game`, stopped in mid-exploration, settlement or at the end.

    ``kw`` may pin ``stop_fraction`` (0..1), ``runestones`` (2022 only), ``policy``,
    and ``colours``: player colour names (any of :data:`PLAYER_COLOURS` or
    others), used in place of the boxed game's.
    """
    rng = random.Random(seed)
    colours: Sequence[str] | None = kw.pop("colours", None)
    kw.setdefault("stop_fraction", rng.choice([rng.uniform(0.15, 0.55), rng.uniform(0.55, 0.97), 1.0]))
    kw.setdefault("runestones", edition == "2022" and rng.random() < RUNESTONE_SHARE)
    if colours is None and rng.random() < 0.15:
        # Home-made and other boxes' pieces: any named colours at all.
        colours = rng.sample(PLAYER_COLOURS, players)
    return simulate_game(edition, players, seed, player_colours=colours, **kw)


def crowd_tiles(board: Board, rng: random.Random, count: int = 1, kinds: Sequence[str] = ("settler",),
                same_player: bool = True) -> tuple[Board, list[Hex]]:
    """``board`` with a second piece on up to ``count`` tiles that hold one house or settler: a rule break.

    The second piece stands on another plain segment of the tile; its kind is
    drawn from ``kinds`` and it belongs to the first piece's player, or with
    ``same_player`` False to any player of the board. Returns the crowded board
    and the tiles crowded (fewer than ``count`` when few tiles allow it).
    """
    candidates = [p for p in board.pieces
                  if p.is_player_piece and p.sector is not None and len(board.pieces_at(p.hex)) == 1]
    rng.shuffle(candidates)
    added: list[Piece] = []
    for piece in candidates:
        if len(added) == count:
            break
        free = [run for run in board.tiles[piece.hex].segments() if piece.sector not in run]
        if not free:
            continue
        sector = rng.choice(free)[0]
        # A single choice needs no draw, so one kind and one player give the same boards for the same seed.
        kind = kinds[0] if len(kinds) == 1 else rng.choice(list(kinds))
        player = piece.player if same_player else rng.choice(list(board.players))
        added.append(Piece(piece.hex, sector, kind, player))
    return replace(board, pieces=board.pieces + tuple(added)), [p.hex for p in added]
