"""Probe dtz50 tables from Python, as with chess.syzygy, then ask about the clock.

Usage: python probe.py [TABLE_DIRECTORY]   (default: tables)
"""

import sys

import chess

import dtz50

board = chess.Board("8/8/8/4k3/8/8/3K4/R7 b - - 95 1")

with dtz50.open_tablebase(sys.argv[1] if len(sys.argv) > 1 else "tables") as tablebase:
    print(tablebase.probe_wdl(board))  # -2: Black loses with the clock at zero
    print(tablebase.probe_dtz(board))  # -28: exactly 28 plies to the zeroing move
    verdict = tablebase.probe(board)  # with board.halfmove_clock (95) applied
    print(verdict.outcome, verdict.margin)  # draw None: 5 plies left are not enough
    print(verdict)
    best = tablebase.best_moves(board)[0]
    print(board.san(best.move), best.dtz, best.outcome)
