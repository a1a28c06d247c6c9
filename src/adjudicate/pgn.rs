//! Reading PGN: each game's tags, then its main-line moves handed to the
//! replay one at a time, so that memory does not grow with the game.

use std::ops::ControlFlow;

use pgn_reader::{RawTag, Visitor};
use shakmaty::{KnownOutcome, san::SanPlus};

use super::{
    AdjudicateOptions,
    replay::{GameInProgress, Tags},
    report::{GameError, GameLabel, GameReport, GameResult},
};
use crate::probe::StoredValues;

/// The pgn-reader visitor: it replays each game as its moves are read. It
/// keeps the label and move count of the game being read, to name it if
/// the reader fails half-way.
pub(super) struct Collector<'a> {
    pub(super) games: usize,
    pub(super) label: GameLabel,
    pub(super) plies: usize,
    pub(super) store: Option<&'a dyn StoredValues>,
    pub(super) options: AdjudicateOptions,
}

impl<'a> Collector<'a> {
    /// A visitor judging with `store` (if any) under `options`.
    pub(super) fn new(store: Option<&'a dyn StoredValues>, options: AdjudicateOptions) -> Self {
        Collector {
            games: 0,
            label: GameLabel::default(),
            plies: 0,
            store,
            options,
        }
    }
}

impl<'a> Visitor for Collector<'a> {
    type Tags = Tags;
    type Movetext = GameInProgress<'a>;
    type Output = Result<GameReport, GameError>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Tags> {
        self.games += 1;
        self.plies = 0;
        self.label = GameLabel {
            number: self.games,
            ..GameLabel::default()
        };
        ControlFlow::Continue(Tags {
            label: self.label.clone(),
            ..Tags::default()
        })
    }

    fn tag(
        &mut self,
        tags: &mut Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        let value = value.decode_utf8_lossy().into_owned();
        match name {
            b"White" => {
                self.label.white = Some(value.clone());
                tags.label.white = Some(value);
            }
            b"Black" => {
                self.label.black = Some(value.clone());
                tags.label.black = Some(value);
            }
            b"Result" => tags.result_tag = Some(value),
            b"FEN" => tags.fen = Some(value),
            b"SetUp" => tags.setup = Some(value),
            b"Variant" => tags.variant = Some(value),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<Self::Output, GameInProgress<'a>> {
        ControlFlow::Continue(GameInProgress::start(tags, self.store, self.options))
    }

    fn san(&mut self, game: &mut GameInProgress<'a>, san: SanPlus) -> ControlFlow<Self::Output> {
        self.plies += 1;
        game.push(&san);
        ControlFlow::Continue(())
    }

    fn outcome(
        &mut self,
        game: &mut GameInProgress<'a>,
        outcome: pgn_reader::Outcome,
    ) -> ControlFlow<Self::Output> {
        game.set_marker(match outcome.known() {
            Some(KnownOutcome::Decisive { winner }) => GameResult::win_for(winner),
            Some(KnownOutcome::Draw) => GameResult::Draw,
            None => GameResult::Undecided,
        });
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: GameInProgress<'a>) -> Self::Output {
        game.finish()
    }
}
