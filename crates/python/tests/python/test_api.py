"""The module's surface: python-chess's calls and exceptions, dtz50's
additions, threads, the README example."""

import json
import pathlib
import subprocess
import sys
import tempfile
import threading

import chess
import pytest

import dtz50
from positions import random_positions

KQVK = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"
KRVK_LATE = "8/8/8/4k3/8/8/3K4/R7 b - - 95 1"
EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "probe.py"
README = pathlib.Path(__file__).resolve().parents[4] / "README.md"


def test_chess_syzygy_calls(tablebase):
    board = chess.Board(KQVK)
    assert tablebase.probe_wdl(board) == 2
    assert tablebase.probe_dtz(board) == 11
    assert tablebase.get_wdl(board) == 2
    assert tablebase.get_dtz(board, default=-999) == 11
    assert tablebase.probe_dtz(chess.Board("8/8/8/8/8/8/8/K1k5 w - - 0 1")) == 0  # bare kings
    mated = chess.Board("8/8/8/8/8/1k6/1q6/K7 w - - 0 1")
    assert mated.is_checkmate()
    assert (tablebase.probe_wdl(mated), tablebase.probe_dtz(mated)) == (-2, -1)


def test_rule_and_directories(tablebase, tables_dir):
    assert tablebase.rule == "50"
    assert tablebase.directories == [tables_dir.resolve()]
    with pytest.raises(ValueError, match="rule"):
        dtz50.open_tablebase(tables_dir, rule="75")
    assert dtz50.open_tablebase(tempfile.mkdtemp(), rule="none").rule == "none"
    with pytest.raises(ValueError, match="unknown rule"):
        dtz50.open_tablebase(tables_dir, rule="fifty")


def test_probe_applies_the_halfmove_clock(tablebase):
    board = chess.Board(KRVK_LATE)
    verdict = tablebase.probe(board)
    assert (verdict.wdl, verdict.dtz, verdict.halfmove, verdict.rule) == (-2, -28, 95, "50")
    assert (verdict.outcome, verdict.margin) == ("draw", None)
    assert str(verdict) == "draw by the clock: the loss takes 28 plies, 5 left on the clock"
    assert verdict.to_dict() == {
        "wdl": -2, "dtz": -28, "halfmove": 95, "rule": "50", "outcome": "draw", "margin": None,
    }
    board.halfmove_clock = 60
    early = tablebase.probe(board)
    assert (early.outcome, early.margin) == ("loss", 12)
    assert early != verdict and early == tablebase.probe(board)


def test_probe_agrees_with_probe_dtz_on_random_positions(tablebase):
    for i, board in enumerate(random_positions(500, seed=7)):
        board.halfmove_clock = i % 101
        verdict = tablebase.probe(board)
        assert verdict.dtz == tablebase.probe_dtz(board)
        assert verdict.wdl == tablebase.probe_wdl(board)
        assert verdict.halfmove == board.halfmove_clock


def test_best_moves(tablebase):
    board = chess.Board(KQVK)
    moves = tablebase.best_moves(board)
    assert len(moves) == board.legal_moves.count()
    first = moves[0]
    assert isinstance(first.move, chess.Move) and board.san(first.move) == "Qe4"
    assert (first.dtz, first.outcome) == (11, "win")
    move, dtz, outcome = first
    assert (move, dtz, outcome) == (first.move, 11, "win")
    assert all(m.move in board.legal_moves for m in moves)
    assert tablebase.best_moves(chess.Board("8/8/8/8/8/1k6/1q6/K7 w - - 0 1")) == []


def test_missing_table(tables_dir):
    board = chess.Board(KQVK)
    with dtz50.open_tablebase(tempfile.mkdtemp()) as empty:
        for probe in (empty.probe_wdl, empty.probe_dtz, empty.probe, empty.best_moves):
            with pytest.raises(dtz50.MissingTableError, match="did not find .* table KQvK"):
                probe(board)
        assert issubclass(dtz50.MissingTableError, KeyError)
        assert empty.get_wdl(board) is None and empty.get_dtz(board, 7) == 7
        # A second directory is tried after the first, as python-chess does.
        assert empty.add_directory(tables_dir) == 35
        assert empty.probe_dtz(board) == 11
    with pytest.raises(dtz50.MissingTableError, match="did not find wdl table KQvK"):
        empty.probe_wdl(board)  # closed by the context manager, as python-chess's


def test_add_directory_options(tables_dir):
    tablebase = dtz50.Tablebase()
    assert tablebase.rule is None
    assert tablebase.add_directory(tables_dir, load_wdl=False, load_dtz=False) == 0
    assert tablebase.directories == []
    assert tablebase.add_directory(str(tables_dir), load_dtz=False) == 35
    assert tablebase.probe_wdl(chess.Board(KQVK)) == 2
    with pytest.raises(FileNotFoundError):
        tablebase.add_directory("/no/such/directory")
    tablebase.close()
    with pytest.raises(dtz50.MissingTableError):
        tablebase.probe_wdl(chess.Board(KQVK))


@pytest.mark.parametrize("fen", [
    "r3k3/8/8/8/8/8/8/4K3 b q - 0 1",  # castling rights
    "8/8/8/8/8/8/8/KQRk1qrb w - - 0 1",  # too many pieces
])
def test_positions_python_chess_refuses_raise_key_error(tablebase, syzygy, fen):
    board = chess.Board(fen)
    for tb in (tablebase, syzygy):
        with pytest.raises(KeyError):
            tb.probe_wdl(board)
        assert tb.get_wdl(board) is None and tb.get_dtz(board) is None
    with pytest.raises(KeyError, match="castling rights|up to 6 pieces"):
        tablebase.probe_dtz(board)
    with pytest.raises(KeyError) as error:
        tablebase.probe(board)
    assert not isinstance(error.value, dtz50.MissingTableError)


@pytest.mark.parametrize("fen", [
    "8/8/8/8/8/8/8/KQ6 w - - 0 1",  # no black king
    "P7/8/8/8/8/2k5/8/K7 w - - 0 1",  # a pawn on the back rank
])
def test_bad_boards_raise_value_error(tablebase, fen):
    board = chess.Board(fen)
    assert not board.is_valid()
    with pytest.raises(ValueError):
        tablebase.probe_wdl(board)
    with pytest.raises(ValueError):
        tablebase.get_dtz(board)  # not a KeyError: get_* do not hide it


def test_side_not_to_move_in_check_is_a_value_error(tablebase):
    board = chess.Board("8/8/8/8/8/2k5/8/KQ6 b - - 0 1")
    board.set_piece_at(chess.C1, chess.Piece(chess.ROOK, chess.BLACK))  # checks White, Black to move
    board.remove_piece_at(chess.B1)
    assert not board.is_valid()
    with pytest.raises(ValueError, match="opposite check"):
        tablebase.probe_dtz(board)


def test_not_a_board_raises_attribute_error(tablebase):
    with pytest.raises(AttributeError):
        tablebase.probe_wdl("8/8/8/8/8/2k5/8/KQ6 w - - 0 1")


def test_threads_probing_one_tablebase_agree(tablebase):
    boards = random_positions(1000, seed=99)
    expected = [(tablebase.probe_wdl(b), tablebase.probe_dtz(b)) for b in boards]
    results = {}

    def work(n):
        # Each thread its own board objects, as python-chess requires.
        own = [b.copy() for b in boards]
        results[n] = [(tablebase.probe_wdl(b), tablebase.probe_dtz(b)) for b in own]

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [results[n] for n in range(4)] == [expected] * 4


PGN = """[White "A"]
[Black "B"]
[Result "*"]

1. e4 e5 2. Ke3 *

[White "C"]
[Black "D"]
[Result "1-0"]
[FEN "8/8/8/4k3/8/8/3K4/R7 b - - 90 1"]
[SetUp "1"]

1... Ke4 2. Ra4+ Kd5 3. Kd3 *

[White "E"]
[Black "F"]
[Result "1/2-1/2"]

1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 1/2-1/2
"""


def test_adjudicate_returns_what_the_cli_prints(tablebase, tables_dir, cli, tmp_path):
    pgn = tmp_path / "games.pgn"
    pgn.write_text(PGN)
    out = subprocess.run(
        [cli, "adjudicate", "--json", "--tables", tables_dir, pgn],
        capture_output=True, text=True,
    )
    assert out.returncode == 2  # the first game has an illegal move
    expected = [json.loads(line) for line in out.stdout.splitlines()]
    games = tablebase.adjudicate(PGN)
    assert games == expected
    assert games[0]["error"].endswith("illegal move 2. Ke3: no legal move matches: illegal san")
    assert [v["dtz"] for v in games[1]["verdicts"]] == [-28, 27, -26, 25, -24]
    assert games[2]["claims"] == ["threefold"]
    assert dtz50.adjudicate(PGN, tablebase) == expected
    without_tables = dtz50.adjudicate(PGN)
    assert without_tables[1]["verdicts"] == [] and without_tables[1]["table_rule"] is None
    assert without_tables[2]["events"] == expected[2]["events"]


def test_readme_example(tables_dir):
    out = subprocess.run(
        [sys.executable, EXAMPLE, tables_dir], capture_output=True, text=True, check=True,
    )
    assert out.stdout.splitlines() == [
        "-2",
        "-28",
        "draw None",
        "draw by the clock: the loss takes 28 plies, 5 left on the clock",
        "Ke4 -28 draw",
    ]


def test_readme_shows_the_example():
    readme = README.read_text()
    shown = readme.split("```python\n", 1)[1].split("```", 1)[0]
    example = EXAMPLE.read_text().split("import chess\n", 1)[1]
    example = example.replace('sys.argv[1] if len(sys.argv) > 1 else "tables"', '"tables"')
    assert "import chess\n" + example == shown
