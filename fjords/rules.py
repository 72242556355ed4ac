"""Per-edition numbers of the game, as a small value type the analysis reads."""

from __future__ import annotations

from dataclasses import dataclass

from fjords.board import EDITIONS


@dataclass(frozen=True)
class Rules:
    """What the edition gives each player, and which variant is played.

    ``epic`` is the 2022 edition's two-player epic variant, in which each player
    plays the pieces of two colours: twice the houses and settlers (our reading,
    documented in ``docs/rules.md``).
    """

    edition: str = "classic"
    houses_per_player: int = 4
    settlers_per_player: int = 20
    epic: bool = False

    @property
    def max_colours(self) -> int:
        """The most piece colours on the table: the classic edition seats two players, the 2022 edition two to
        four (its epic variant two players of two colours each)."""
        return 2 if self.edition == "classic" else 4

    @classmethod
    def for_edition(cls, edition: str, *, epic: bool = False) -> "Rules":
        if edition not in EDITIONS:
            raise ValueError(f"unknown edition {edition!r}; expected one of {', '.join(EDITIONS)}")
        if epic and edition != "2022":
            raise ValueError("the epic variant belongs to the 2022 edition")
        factor = 2 if epic else 1
        return cls(edition=edition, houses_per_player=4 * factor, settlers_per_player=20 * factor, epic=epic)
