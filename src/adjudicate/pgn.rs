//! Reading PGN: each game's tags and main-line moves, before replaying it.

use std::ops::ControlFlow;

use pgn_reader::{RawTag, Visitor};
use shakmaty::{KnownOutcome, san::SanPlus};

use super::report::{GameLabel, GameResult};

/// A game as read from the PGN, before replaying it.
#[derive(Debug, Default)]
pub(super) struct RawGame {
    pub(super) label: GameLabel,
    pub(super) result_tag: Option<String>,
    pub(super) fen: Option<String>,
    pub(super) setup: Option<String>,
    pub(super) variant: Option<String>,
    pub(super) moves: Vec<SanPlus>,
    pub(super) marker: Option<GameResult>,
}

/// The pgn-reader visitor. It keeps the label and move count of the game
/// being read, to name it if the reader fails half-way.
#[derive(Debug, Default)]
pub(super) struct Collector {
    pub(super) games: usize,
    pub(super) label: GameLabel,
    pub(super) plies: usize,
}

impl Visitor for Collector {
    type Tags = RawGame;
    type Movetext = RawGame;
    type Output = RawGame;

    fn begin_tags(&mut self) -> ControlFlow<RawGame, RawGame> {
        self.games += 1;
        self.plies = 0;
        self.label = GameLabel {
            number: self.games,
            ..GameLabel::default()
        };
        ControlFlow::Continue(RawGame {
            label: self.label.clone(),
            ..RawGame::default()
        })
    }

    fn tag(&mut self, game: &mut RawGame, name: &[u8], value: RawTag<'_>) -> ControlFlow<RawGame> {
        let value = value.decode_utf8_lossy().into_owned();
        match name {
            b"White" => {
                self.label.white = Some(value.clone());
                game.label.white = Some(value);
            }
            b"Black" => {
                self.label.black = Some(value.clone());
                game.label.black = Some(value);
            }
            b"Result" => game.result_tag = Some(value),
            b"FEN" => game.fen = Some(value),
            b"SetUp" => game.setup = Some(value),
            b"Variant" => game.variant = Some(value),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, game: RawGame) -> ControlFlow<RawGame, RawGame> {
        ControlFlow::Continue(game)
    }

    fn san(&mut self, game: &mut RawGame, san: SanPlus) -> ControlFlow<RawGame> {
        self.plies += 1;
        game.moves.push(san);
        ControlFlow::Continue(())
    }

    fn outcome(
        &mut self,
        game: &mut RawGame,
        outcome: pgn_reader::Outcome,
    ) -> ControlFlow<RawGame> {
        game.marker = Some(match outcome.known() {
            Some(KnownOutcome::Decisive { winner }) => GameResult::win_for(winner),
            Some(KnownOutcome::Draw) => GameResult::Draw,
            None => GameResult::Undecided,
        });
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: RawGame) -> RawGame {
        game
    }
}
