"""dtz50 against python-chess's own Syzygy prober, position by position.

The reference files (``DTZ50_SYZYGY_3_4``) are Syzygy's, generated with
DTZ stored to the ply, so python-chess's ``probe_dtz`` is exact on them
for every 3-4 piece position (there are no cursed wins or blessed losses
with 3-4 pieces, the only values Syzygy still stores in full moves).
python-chess's conventions are dtz50's: DTZ50'' in plies, ``-1`` when
checkmated, ``1`` for a winning zeroing move or mate next, en passant
resolved by a one-ply search. So both probes must agree exactly.
"""

import chess

from positions import random_positions

# Random positions compared on both probes; python-chess is pure Python and
# takes most of the time (about a millisecond a DTZ probe).
COUNT = 10000
EN_PASSANT_COUNT = 400
KPVKP = [[chess.Piece(chess.PAWN, chess.WHITE), chess.Piece(chess.PAWN, chess.BLACK)]]


def _compare(tablebase, syzygy, boards, capsys, label):
    mismatches = []
    for board in boards:
        ours = (tablebase.probe_wdl(board), tablebase.probe_dtz(board))
        theirs = (syzygy.probe_wdl(board), syzygy.probe_dtz(board))
        if ours != theirs:
            mismatches.append((board.fen(), ours, theirs))
    with capsys.disabled():
        print(f"\n{label}: {len(boards)} positions compared with chess.syzygy "
              f"(probe_wdl and probe_dtz), {len(mismatches)} mismatches")
    assert mismatches == [], mismatches[:20]


def test_random_positions_match_chess_syzygy(tablebase, syzygy, capsys):
    boards = random_positions(COUNT, seed=15)
    _compare(tablebase, syzygy, boards, capsys, "3-4 pieces")


def test_en_passant_positions_match_chess_syzygy(tablebase, syzygy, capsys):
    boards = random_positions(EN_PASSANT_COUNT, seed=1515, materials=KPVKP, en_passant=1.0)
    with_ep = [b for b in boards if b.has_legal_en_passant()]
    assert len(with_ep) > EN_PASSANT_COUNT // 2
    _compare(tablebase, syzygy, boards, capsys, "KPvKP with en passant")


def test_every_value_kind_is_compared(tablebase):
    """The random sample reaches wins, draws, losses, mates and DTZ 1."""
    boards = random_positions(COUNT, seed=15)
    wdls = {tablebase.probe_wdl(b) for b in boards}
    dtzs = {tablebase.probe_dtz(b) for b in boards}
    assert {-2, 0, 2} <= wdls
    assert {-1, 1} <= dtzs
    assert max(dtzs) > 30 and min(dtzs) < -30
