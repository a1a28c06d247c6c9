"""Random legal positions of 3 and 4 pieces, reproducible from a seed."""

import random
from typing import List, Optional

import chess

# Every material of 3-4 pieces with kings: the white and black extra pieces.
_ROLES = [chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT, chess.PAWN]


def _materials() -> List[List[chess.Piece]]:
    out = []
    for count in (1, 2):
        for extras in _combinations(count):
            for split in range(len(extras) + 1):
                white = [chess.Piece(r, chess.WHITE) for r in extras[:split]]
                black = [chess.Piece(r, chess.BLACK) for r in extras[split:]]
                out.append(white + black)
    return out


def _combinations(count: int) -> List[List[chess.PieceType]]:
    if count == 1:
        return [[r] for r in _ROLES]
    return [[a, b] for i, a in enumerate(_ROLES) for b in _ROLES[i:]]


MATERIALS = _materials()


def random_positions(
    count: int,
    seed: int,
    materials: Optional[List[List[chess.Piece]]] = None,
    en_passant: float = 0.2,
) -> List[chess.Board]:
    """``count`` valid boards (``board.is_valid()``) of ``materials`` (the
    extra pieces beside the kings; by default every 3-4 piece material),
    drawn uniformly, either side to move, halfmove clock zero. With
    probability ``en_passant``, a board of a material with a pawn on each
    side is set up with a legal en passant capture."""
    rng = random.Random(seed)
    boards: List[chess.Board] = []
    while len(boards) < count:
        board = chess.Board(None)
        board.turn = rng.choice(chess.COLORS)
        pieces = [chess.Piece(chess.KING, chess.WHITE), chess.Piece(chess.KING, chess.BLACK)]
        pieces += rng.choice(materials or MATERIALS)
        if rng.random() < en_passant:
            _place_en_passant(board, pieces, rng)
        free = [sq for sq in chess.SQUARES if board.piece_at(sq) is None]
        for piece, square in zip(pieces, rng.sample(free, len(pieces))):
            board.set_piece_at(square, piece)
        if board.is_valid():
            boards.append(board)
    return boards


def _place_en_passant(board: chess.Board, pieces: List[chess.Piece], rng: random.Random) -> None:
    """If both sides have a pawn, place them as after a double push of the
    side not to move, next to a pawn that can take en passant; the pieces
    placed are removed from ``pieces``."""
    us, them = board.turn, not board.turn
    ours, theirs = chess.Piece(chess.PAWN, us), chess.Piece(chess.PAWN, them)
    if ours not in pieces or theirs not in pieces:
        return
    rank = 3 if them == chess.WHITE else 4
    file = rng.randrange(8)
    beside = rng.choice([f for f in (file - 1, file + 1) if 0 <= f < 8])
    pushed = chess.square(file, rank)
    board.set_piece_at(pushed, theirs)
    board.set_piece_at(chess.square(beside, rank), ours)
    pieces.remove(ours)
    pieces.remove(theirs)
    board.ep_square = pushed + (-8 if them == chess.WHITE else 8)
