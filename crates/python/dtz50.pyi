"""Type stubs of dtz50: exact DTZ50 tablebases with chess.syzygy's interface."""

import os
import pathlib
from types import TracebackType
from typing import Any, Dict, Iterator, List, Literal, Optional, Tuple, Type, TypeVar, Union

import chess

_T = TypeVar("_T")
_Path = Union[str, "os.PathLike[str]"]
Outcome = Literal["win", "draw", "loss"]
RuleName = Literal["50", "75", "none"]

MAX_PIECES: int
"""Tables hold positions of at most this many pieces (kings included)."""

class MissingTableError(KeyError):
    """Can not probe position because a required table is missing."""

class Verdict:
    """The verdict on a position with a halfmove clock applied."""

    @property
    def wdl(self) -> int:
        """WDL with the clock at zero: -2 loss, -1 blessed loss, 0 draw, 1 cursed win, 2 win."""
    @property
    def dtz(self) -> int:
        """Exact DTZ in plies, signed for the side to move."""
    @property
    def halfmove(self) -> int:
        """The halfmove clock that was applied."""
    @property
    def rule(self) -> RuleName:
        """The rule of the tables."""
    @property
    def outcome(self) -> Outcome:
        """The result for the side to move with the clock applied."""
    @property
    def margin(self) -> Optional[int]:
        """Plies to spare for a win or loss that survives the clock, else None."""
    def to_dict(self) -> Dict[str, Any]:
        """The fields as a dict, as the JSON of ``dtz50 probe --json``."""
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

class RankedMove:
    """A legal root move and what it is worth; unpacks as ``move, dtz, outcome``."""

    @property
    def move(self) -> chess.Move:
        """The move."""
    @property
    def dtz(self) -> int:
        """DTZ of the root position if this move is played."""
    @property
    def outcome(self) -> Outcome:
        """The result with the board's halfmove clock applied."""
    def __iter__(self) -> Iterator[Union[chess.Move, int, str]]: ...

class Tablebase:
    """A collection of dtz50 tables, probed like ``chess.syzygy.Tablebase``."""

    def __init__(
        self,
        *,
        max_fds: Optional[int] = 128,
        VariantBoard: Optional[Type[chess.Board]] = None,
        rule: Optional[RuleName] = None,
    ) -> None: ...
    def add_directory(self, directory: _Path, *, load_wdl: bool = True, load_dtz: bool = True) -> int:
        """Add a directory of ``*.dtz50`` files; returns the number of files found."""
    @property
    def rule(self) -> Optional[RuleName]:
        """The rule the tables were built for (None before a directory is added)."""
    @property
    def directories(self) -> List[pathlib.Path]:
        """The directories added, in probing order."""
    def probe_wdl(self, board: chess.Board) -> int:
        """WDL -2..2 for the side to move, halfmove clock at zero; raises KeyError."""
    def get_wdl(self, board: chess.Board, default: Optional[_T] = None) -> Union[int, _T, None]:
        """probe_wdl, or default where it raises KeyError."""
    def probe_dtz(self, board: chess.Board) -> int:
        """Exact DTZ50'' in plies for the side to move (never rounded); raises KeyError."""
    def get_dtz(self, board: chess.Board, default: Optional[_T] = None) -> Union[int, _T, None]:
        """probe_dtz, or default where it raises KeyError."""
    def probe(self, board: chess.Board) -> Verdict:
        """The verdict with ``board.halfmove_clock`` applied."""
    def best_moves(self, board: chess.Board) -> List[RankedMove]:
        """Every legal move ranked, best first."""
    def adjudicate(self, pgn: str, *, fivefold_2014: bool = False) -> List[Dict[str, Any]]:
        """Adjudicate a PGN text with these tables, as ``dtz50 adjudicate --json``."""
    def close(self) -> None:
        """Close all tables."""
    def __enter__(self) -> "Tablebase": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc_value: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...

def open_tablebase(
    directory: _Path,
    *,
    load_wdl: bool = True,
    load_dtz: bool = True,
    max_fds: Optional[int] = 128,
    VariantBoard: Optional[Type[chess.Board]] = None,
    rule: Optional[RuleName] = None,
) -> Tablebase:
    """Open the dtz50 tables of a directory, as ``chess.syzygy.open_tablebase``."""

def adjudicate(pgn: str, tablebase: Optional[Tablebase] = None, *, fivefold_2014: bool = False) -> List[Dict[str, Any]]:
    """Adjudicate every game of a PGN text; one dict per game, as ``dtz50 adjudicate --json``."""
