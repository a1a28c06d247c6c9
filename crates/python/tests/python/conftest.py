"""Fixtures of the dtz50 Python suite.

tests/python.rs (run by ``cargo test --release``) sets the directories:
``DTZ50_TABLES`` (the dtz50 3-4 piece set), ``DTZ50_SYZYGY_3_4`` (the
ply-accurate reference Syzygy files) and, when built, ``DTZ50_BIN`` (the
``dtz50`` binary). Run by hand, they default to the repository's layout.
"""

import os
import pathlib

import chess.syzygy
import pytest

import dtz50

ROOT = pathlib.Path(__file__).resolve().parents[4]


def _directory(variable: str, default: pathlib.Path) -> pathlib.Path:
    directory = pathlib.Path(os.environ.get(variable, default))
    if not directory.is_dir():
        pytest.skip(f"{directory} not found (set {variable})")
    return directory


@pytest.fixture(scope="session")
def tables_dir() -> pathlib.Path:
    return _directory("DTZ50_TABLES", ROOT / "tables")


@pytest.fixture(scope="session")
def syzygy_dir() -> pathlib.Path:
    return _directory("DTZ50_SYZYGY_3_4", ROOT.parent / "shared" / "syzygy" / "3-4")


@pytest.fixture(scope="session")
def tablebase(tables_dir):
    with dtz50.open_tablebase(tables_dir) as tb:
        yield tb


@pytest.fixture(scope="session")
def syzygy(syzygy_dir):
    with chess.syzygy.open_tablebase(str(syzygy_dir)) as tb:
        yield tb


@pytest.fixture(scope="session")
def cli() -> pathlib.Path:
    binary = os.environ.get("DTZ50_BIN")
    if not binary:
        pytest.skip("the dtz50 binary is not built (set DTZ50_BIN)")
    return pathlib.Path(binary)
