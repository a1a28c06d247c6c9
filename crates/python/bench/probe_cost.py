"""What a probe costs through Python: dtz50's module against chess.syzygy.

Hot cache, one thread: random legal boards of one table (default KQvKR,
fixed seed), every block touched once before timing, then the best of
``--repeat`` timed passes over all boards; per-probe time = pass / boards.
The Rust call on the same kind of positions is ``cargo bench --bench probe``
(see BENCHMARKS.md); the difference is the binding: reading the
``chess.Board`` (a dozen attribute reads), building the shakmaty position,
releasing the GIL, and the Python call itself.

    python crates/python/bench/probe_cost.py TABLES [SYZYGY_DIR]
"""

import argparse
import random
import time

import chess
import chess.syzygy

import dtz50


def boards_of(material: str, count: int, seed: int):
    """``count`` valid boards with the pieces of ``material`` (like KQvKR)."""
    white, black = material.split("v")
    pieces = [chess.Piece.from_symbol(c) for c in white] + [
        chess.Piece.from_symbol(c.lower()) for c in black
    ]
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        board = chess.Board(None)
        for piece, square in zip(pieces, rng.sample(chess.SQUARES, len(pieces))):
            board.set_piece_at(square, piece)
        board.turn = rng.choice(chess.COLORS)
        if board.is_valid():
            out.append(board)
    return out


def per_call(function, boards, repeat: int) -> float:
    """Best mean seconds per call over ``repeat`` passes (after one warm pass)."""
    for board in boards:
        function(board)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for board in boards:
            function(board)
        best = min(best, (time.perf_counter() - start) / len(boards))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tables", help="directory of dtz50 tables")
    parser.add_argument("syzygy", nargs="?", help="directory of Syzygy tables, for chess.syzygy")
    parser.add_argument("--material", default="KQvKR")
    parser.add_argument("--boards", type=int, default=20_000)
    parser.add_argument("--syzygy-boards", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    boards = boards_of(args.material, args.boards, seed=6)
    rows = []
    with dtz50.open_tablebase(args.tables) as tablebase:
        rows.append(("empty Python call (loop overhead)", per_call(lambda b: None, boards, args.repeat)))
        rows.append(("dtz50 probe_wdl", per_call(tablebase.probe_wdl, boards, args.repeat)))
        rows.append(("dtz50 probe_dtz", per_call(tablebase.probe_dtz, boards, args.repeat)))
        rows.append(("dtz50 probe (verdict object)", per_call(tablebase.probe, boards, args.repeat)))
    if args.syzygy:
        few = boards[: args.syzygy_boards]
        with chess.syzygy.open_tablebase(args.syzygy) as syzygy:
            rows.append(("chess.syzygy probe_wdl", per_call(syzygy.probe_wdl, few, args.repeat)))
            rows.append(("chess.syzygy probe_dtz", per_call(syzygy.probe_dtz, few, args.repeat)))
    print(f"{args.material}, {args.boards} boards, best of {args.repeat} hot passes")
    for name, seconds in rows:
        print(f"{name:36} {seconds * 1e6:9.2f} µs")


if __name__ == "__main__":
    main()
