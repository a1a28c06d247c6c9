//! Replaying one game move by move: repetitions, the move-count rules,
//! automatic ends, and the tablebase verdict where the tables reach.

use std::collections::HashMap;

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, Move, Position, Square, fen::Fen,
    san::SanPlus,
};

use super::{
    AdjudicateOptions, FivefoldRule,
    report::{
        Agreement, Ending, Event, EventKind, GameError, GameLabel, GameReport, GameResult,
        PlyVerdict, VerdictChange, color_title,
    },
};
use crate::{
    probe::{ProbeError, StoredValues, resolve_dtz},
    value::{Outcome, Verdict, Wdl},
};

// Replaying.

/// Position identity for repetitions (FIDE 9.2.2).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PositionKey {
    board: Board,
    turn: Color,
    castling_rights: Bitboard,
    en_passant: Option<Square>,
}

impl PositionKey {
    fn of(pos: &Chess) -> PositionKey {
        PositionKey {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling_rights: pos.castles().castling_rights(),
            en_passant: pos.ep_square(EnPassantMode::Legal),
        }
    }
}

/// A move with what is needed to name it.
#[derive(Debug, Clone)]
struct MoveInfo {
    number: u32,
    color: Color,
    san: String,
}

impl MoveInfo {
    /// Name `m` in `pos` (before it is played).
    fn of(pos: &Chess, m: Move) -> MoveInfo {
        MoveInfo {
            number: pos.fullmoves().get(),
            color: pos.turn(),
            san: SanPlus::from_move(pos.clone(), m).to_string(),
        }
    }

    fn label(&self) -> String {
        move_label(self.number, self.color, &self.san)
    }
}

fn move_label(number: u32, color: Color, san: &str) -> String {
    match color {
        Color::White => format!("{number}. {san}"),
        Color::Black => format!("{number}... {san}"),
    }
}

/// A game's tags, as read before its moves.
#[derive(Debug, Default)]
pub(super) struct Tags {
    pub(super) label: GameLabel,
    pub(super) result_tag: Option<String>,
    pub(super) fen: Option<String>,
    pub(super) setup: Option<String>,
    pub(super) variant: Option<String>,
}

/// At most this many moves played after the end are listed by name; the
/// rest are counted.
pub(super) const MAX_LISTED_AFTER_END: usize = 20;

/// A game being read and replayed, move by move.
pub(super) struct GameInProgress<'a> {
    fen: Option<String>,
    result_tag: Option<String>,
    marker: Option<GameResult>,
    /// The replay, or the error that stopped it (later moves are only
    /// counted).
    replay: Result<Replay<'a>, GameError>,
    /// The last move played.
    last: Option<MoveInfo>,
    /// Moves read in the main line.
    moves: usize,
}

impl<'a> GameInProgress<'a> {
    /// Start replaying a game from its tags.
    pub(super) fn start(
        tags: Tags,
        store: Option<&'a dyn StoredValues>,
        options: AdjudicateOptions,
    ) -> GameInProgress<'a> {
        let replay = castling_mode(&tags)
            .and_then(|mode| start_position(&tags, mode))
            .map(|start| Replay::new(tags.label.clone(), start, store, options));
        GameInProgress {
            fen: tags.fen,
            result_tag: tags.result_tag,
            marker: None,
            replay,
            last: None,
            moves: 0,
        }
    }

    /// The next move of the main line: judge the position it is played
    /// from, then play it.
    pub(super) fn push(&mut self, san: &SanPlus) {
        self.moves += 1;
        let Ok(replay) = &mut self.replay else {
            return;
        };
        let step = replay.resolve(Some(san)).and_then(|m| {
            replay.examine(self.last.as_ref(), m)?;
            Ok(m.map(|m| replay.play(m)))
        });
        match step {
            Ok(played) => self.last = played,
            Err(e) => self.replay = Err(e),
        }
    }

    /// The movetext's termination marker.
    pub(super) fn set_marker(&mut self, marker: GameResult) {
        self.marker = Some(marker);
    }

    /// Judge the final position and report.
    pub(super) fn finish(self) -> Result<GameReport, GameError> {
        let mut replay = self.replay?;
        replay.examine(self.last.as_ref(), None)?;
        let result_tag = self
            .result_tag
            .or_else(|| self.marker.map(|r| r.as_str().to_owned()));
        Ok(replay.finish(self.fen, self.moves, result_tag))
    }
}

fn castling_mode(raw: &Tags) -> Result<CastlingMode, GameError> {
    let Some(variant) = &raw.variant else {
        return Ok(CastlingMode::Standard);
    };
    match variant.trim().to_ascii_lowercase().as_str() {
        "" | "standard" | "chess" | "normal" | "from position" | "fromposition" => {
            Ok(CastlingMode::Standard)
        }
        "chess960" | "chess 960" | "960" | "fischerandom" | "fischer random" | "freestyle" => {
            Ok(CastlingMode::Chess960)
        }
        _ => Err(GameError::UnknownVariant {
            game: raw.label.clone(),
            variant: variant.clone(),
        }),
    }
}

fn start_position(raw: &Tags, mode: CastlingMode) -> Result<Chess, GameError> {
    let Some(fen) = &raw.fen else {
        if raw.setup.as_deref().map(str::trim) == Some("1") {
            return Err(GameError::BadFen {
                game: raw.label.clone(),
                fen: String::new(),
                message: "SetUp \"1\" without a FEN tag".to_owned(),
            });
        }
        return Ok(Chess::default());
    };
    let bad = |message: String| GameError::BadFen {
        game: raw.label.clone(),
        fen: fen.clone(),
        message,
    };
    let parsed = Fen::from_ascii(fen.trim().as_bytes()).map_err(|e| bad(e.to_string()))?;
    parsed
        .into_position::<Chess>(mode)
        .map_err(|e| bad(e.to_string()))
}

/// The state of one game being replayed.
struct Replay<'a> {
    game: GameLabel,
    store: Option<&'a dyn StoredValues>,
    options: AdjudicateOptions,
    pos: Chess,
    ply: u32,
    /// Position keys by ply, from the start.
    history: Vec<PositionKey>,
    /// Appearances of each position since the last capture or pawn move
    /// (no earlier position can appear again).
    counts: HashMap<PositionKey, u32>,
    /// Whether some position in `counts` has appeared twice.
    repeated: bool,
    threefold_found: bool,
    fifty_found: bool,
    ended: Option<(Ending, GameResult)>,
    events: Vec<Event>,
    verdicts: Vec<PlyVerdict>,
    last_verdict: Option<PlyVerdict>,
    moves_after_end: Vec<String>,
    played_after_end: u32,
}

impl<'a> Replay<'a> {
    fn new(
        game: GameLabel,
        pos: Chess,
        store: Option<&'a dyn StoredValues>,
        options: AdjudicateOptions,
    ) -> Replay<'a> {
        let key = PositionKey::of(&pos);
        let mut counts = HashMap::new();
        counts.insert(key.clone(), 1);
        Replay {
            game,
            store,
            options,
            pos,
            ply: 0,
            history: vec![key],
            counts,
            repeated: false,
            threefold_found: false,
            fifty_found: false,
            ended: None,
            events: Vec::new(),
            verdicts: Vec::new(),
            last_verdict: None,
            moves_after_end: Vec::new(),
            played_after_end: 0,
        }
    }

    /// The legal move a SAN token stands for in the current position.
    fn resolve(&self, san: Option<&SanPlus>) -> Result<Option<Move>, GameError> {
        let Some(san) = san else { return Ok(None) };
        san.san
            .to_move(&self.pos)
            .map(Some)
            .map_err(|reason| GameError::IllegalMove {
                game: self.game.clone(),
                ply: self.ply + 1,
                label: move_label(
                    self.pos.fullmoves().get(),
                    self.pos.turn(),
                    &san.to_string(),
                ),
                san: san.to_string(),
                reason,
            })
    }

    /// Play a legal move.
    fn play(&mut self, m: Move) -> MoveInfo {
        let number = self.pos.fullmoves().get();
        let color = self.pos.turn();
        let san = SanPlus::from_move_and_play_unchecked(&mut self.pos, m).to_string();
        self.ply += 1;
        let info = MoveInfo { number, color, san };
        if self.ended.is_some() {
            // A long tail after the end is summarised, not kept.
            if self.moves_after_end.len() < MAX_LISTED_AFTER_END {
                self.moves_after_end.push(info.label());
            }
            self.played_after_end += 1;
        } else {
            let key = PositionKey::of(&self.pos);
            if m.is_zeroing() {
                self.counts.clear();
                self.repeated = false;
            }
            let count = self.counts.entry(key.clone()).or_insert(0);
            *count += 1;
            self.repeated |= *count >= 2;
            self.history.push(key);
        }
        info
    }

    fn count(&self, key: &PositionKey) -> u32 {
        self.counts.get(key).copied().unwrap_or(0)
    }

    /// Everything about the current position: `last` is the move that led
    /// here, `next` the move played from here (if any).
    fn examine(&mut self, last: Option<&MoveInfo>, next: Option<Move>) -> Result<(), GameError> {
        if self.ended.is_some() {
            return Ok(());
        }
        self.judge(last)?;
        self.automatic_ends(last);
        if self.ended.is_none() {
            self.claims(last, next);
        }
        Ok(())
    }

    /// Record an event at the current ply (`announced`: at the next ply, for
    /// a claim made by announcing `mv`).
    fn push(
        &mut self,
        kind: EventKind,
        announced: bool,
        mv: Option<&MoveInfo>,
        played: bool,
        message: String,
    ) {
        self.events.push(Event {
            kind,
            ply: self.ply + u32::from(announced),
            move_number: mv.map(|m| m.number),
            color: mv.map(|m| m.color),
            san: mv.map(|m| m.san.clone()),
            played: played && mv.is_some(),
            ends_game: kind.ends_game(),
            change: None,
            verdict: None,
            message,
        });
    }

    /// The tablebase verdict of the current position.
    fn judge(&mut self, last: Option<&MoveInfo>) -> Result<(), GameError> {
        let Some(store) = self.store else {
            return Ok(());
        };
        let dtz = match resolve_dtz(store, &self.pos) {
            Ok(dtz) => dtz,
            Err(source @ ProbeError::NoValue { .. }) => {
                return Err(GameError::Lookup {
                    game: self.game.clone(),
                    ply: self.ply,
                    source: Box::new(source),
                });
            }
            Err(_) => {
                self.last_verdict = None;
                return Ok(());
            }
        };
        let rule = store.rule();
        let verdict = Verdict::new(dtz, rule, self.pos.halfmoves(), self.pos.is_checkmate());
        let current = PlyVerdict::new(
            self.ply,
            last.map(|m| m.san.clone()),
            self.pos.turn(),
            verdict,
        );
        let change = match (&self.last_verdict, last) {
            (None, _) => Some(VerdictChange::EnteredRange),
            (Some(prev), Some(mv)) => classify(prev, &current, mv.color),
            (Some(_), None) => None,
        };
        if let Some(change) = change {
            let message = verdict_message(change, last, &current);
            self.push(EventKind::Verdict, false, last, true, message);
            if let Some(event) = self.events.last_mut() {
                event.change = Some(change);
                event.verdict = Some(current.clone());
            }
        }
        self.verdicts.push(current.clone());
        self.last_verdict = Some(current);
        Ok(())
    }

    /// Checkmate, stalemate, dead position, fivefold, seventy-five moves.
    fn automatic_ends(&mut self, last: Option<&MoveInfo>) {
        let at = match last {
            Some(mv) => format!("{} — ", mv.label()),
            None => "the starting position — ".to_owned(),
        };
        let mut ends: Vec<(EventKind, String)> = Vec::new();
        let result;
        if self.pos.is_checkmate() {
            let winner = !self.pos.turn();
            result = GameResult::win_for(winner);
            let mut message = format!("{at}checkmate: {} wins (FIDE 5.1.1)", color_title(winner));
            if self.pos.halfmoves() >= 150 {
                message.push_str(
                    "; mate takes precedence over the seventy-five-move rule (FIDE 9.6.2)",
                );
            }
            ends.push((EventKind::Checkmate, message));
        } else {
            result = GameResult::Draw;
            if self.pos.is_stalemate() {
                ends.push((
                    EventKind::Stalemate,
                    format!("{at}stalemate: the game is drawn (FIDE 5.2.1)"),
                ));
            }
            if self.pos.is_insufficient_material() {
                ends.push((
                    EventKind::DeadPosition,
                    format!(
                        "{at}neither side has mating material: the game is drawn \
                         (dead position, FIDE 5.2.2)"
                    ),
                ));
            }
            if let Some(message) = self.fivefold() {
                ends.push((EventKind::Fivefold, format!("{at}{message}")));
            }
            if self.pos.halfmoves() >= 150 {
                let what = if last.is_some() {
                    "75 moves by each player without a capture or pawn move".to_owned()
                } else {
                    format!("the halfmove clock stands at {}", self.pos.halfmoves())
                };
                ends.push((
                    EventKind::SeventyFiveMove,
                    format!("{at}{what}: the game is drawn (FIDE 9.6.2)"),
                ));
            }
        }
        for (kind, message) in &ends {
            self.push(*kind, false, last, true, message.clone());
        }
        if let Some((kind, _)) = ends.first() {
            let ending = Ending {
                kind: *kind,
                ply: self.ply,
                san: last.map(|m| m.san.clone()),
            };
            self.ended = Some((ending, result));
        }
    }

    /// The fivefold message, if the current position completes one.
    fn fivefold(&self) -> Option<&'static str> {
        let current = self.history.last()?;
        match self.options.fivefold {
            FivefoldRule::Current => (self.count(current) >= 5).then_some(
                "the position appears for the fifth time: the game is drawn (FIDE 9.6.1)",
            ),
            FivefoldRule::Consecutive2014 => {
                let n = self.history.len();
                let repeated = (1..=4).all(|k| {
                    n.checked_sub(1 + 4 * k)
                        .and_then(|i| self.history.get(i))
                        .is_some_and(|earlier| earlier == current)
                });
                repeated.then_some(
                    "the position appears for the fifth time in consecutive alternate moves: \
                     the game is drawn (FIDE 2014 Laws, 9.6a)",
                )
            }
        }
    }

    /// The first threefold and fifty-move claims.
    fn claims(&mut self, last: Option<&MoveInfo>, next: Option<Move>) {
        let halfmoves = self.pos.halfmoves();
        if !self.threefold_found
            && let Some(key) = self.history.last()
            && self.count(key) >= 3
        {
            self.threefold_found = true;
            let at = last.map_or_else(String::new, |m| format!("{} — ", m.label()));
            self.push(
                EventKind::Threefold,
                false,
                last,
                true,
                format!(
                    "{at}the position appears for the third time: a draw can be claimed (FIDE 9.2)"
                ),
            );
        }
        if !self.fifty_found && halfmoves >= 100 {
            self.fifty_found = true;
            let message = match last {
                Some(mv) if halfmoves == 100 => format!(
                    "{} — 50 moves by each player without a capture or pawn move: \
                     a draw can be claimed (FIDE 9.3)",
                    mv.label()
                ),
                Some(mv) => format!(
                    "{} — the halfmove clock stands at {halfmoves}: a draw can be claimed (FIDE 9.3)",
                    mv.label()
                ),
                None => format!(
                    "the game starts with the halfmove clock at {halfmoves}: \
                     a draw can be claimed (FIDE 9.3)"
                ),
            };
            self.push(EventKind::FiftyMove, false, last, true, message);
        }
        if self.threefold_found && self.fifty_found {
            return;
        }

        // Claims by announcing a move (9.2.1.1, 9.3.1), if one can exist.
        let look_for_threefold = !self.threefold_found && self.repeated;
        let look_for_fifty = !self.fifty_found && halfmoves + 1 >= 100;
        if !look_for_threefold && !look_for_fifty {
            return;
        }
        let mut threefold: Vec<Move> = Vec::new();
        let mut fifty: Vec<Move> = Vec::new();
        for m in self.pos.legal_moves() {
            let mut after = self.pos.clone();
            after.play_unchecked(m);
            if after.legal_moves().is_empty() {
                continue; // checkmate or stalemate: the game would end anyway
            }
            if look_for_threefold && self.count(&PositionKey::of(&after)) >= 2 {
                threefold.push(m);
            }
            if look_for_fifty && !m.is_zeroing() {
                fifty.push(m);
            }
        }
        if let Some((mv, played)) = self.pick(&threefold, next) {
            self.threefold_found = true;
            let message = if played {
                format!(
                    "{} — the position appears for the third time: a draw can be claimed (FIDE 9.2)",
                    mv.label()
                )
            } else {
                format!(
                    "{} — {} could claim a draw by announcing this move, which repeats the \
                     position for the third time (FIDE 9.2.1.1); {}",
                    mv.label(),
                    color_title(mv.color),
                    self.instead(next)
                )
            };
            self.push(EventKind::Threefold, true, Some(&mv), played, message);
        }
        if let Some((mv, played)) = self.pick(&fifty, next) {
            self.fifty_found = true;
            let message = if played {
                format!(
                    "{} — 50 moves by each player without a capture or pawn move: \
                     a draw can be claimed (FIDE 9.3)",
                    mv.label()
                )
            } else {
                format!(
                    "{} — {} could claim a draw by announcing this move, which completes 50 \
                     moves by each player without a capture or pawn move (FIDE 9.3.1); {}",
                    mv.label(),
                    color_title(mv.color),
                    self.instead(next)
                )
            };
            self.push(EventKind::FiftyMove, true, Some(&mv), played, message);
        }
    }

    /// The move to report among `candidates`: the one played if it is
    /// there, else the one whose SAN sorts first.
    fn pick(&self, candidates: &[Move], next: Option<Move>) -> Option<(MoveInfo, bool)> {
        if let Some(played) = next.filter(|m| candidates.contains(m)) {
            return Some((MoveInfo::of(&self.pos, played), true));
        }
        candidates
            .iter()
            .map(|&m| MoveInfo::of(&self.pos, m))
            .min_by(|a, b| a.san.cmp(&b.san))
            .map(|info| (info, false))
    }

    fn instead(&self, next: Option<Move>) -> String {
        match next {
            Some(m) => format!("{} was played instead", MoveInfo::of(&self.pos, m).label()),
            None => "the game score ends here".to_owned(),
        }
    }

    fn finish(self, fen: Option<String>, plies: usize, result_tag: Option<String>) -> GameReport {
        let mut events = self.events;
        events.sort_by_key(|e| e.ply); // stable: announcements stay first
        let (ended, result) = match self.ended {
            Some((ending, result)) => (Some(ending), result),
            None => (None, GameResult::Undecided),
        };
        let agreement = match &ended {
            None => Agreement::Open,
            Some(_) if result_tag.as_deref().and_then(GameResult::from_tag) == Some(result) => {
                Agreement::Agrees
            }
            Some(_) => Agreement::Disagrees,
        };
        let claims = events
            .iter()
            .filter(|e| e.kind.is_claim())
            .map(|e| e.kind)
            .collect();
        GameReport {
            game: self.game,
            fen,
            plies: u32::try_from(plies).unwrap_or(u32::MAX),
            table_rule: self.store.map(|s| s.rule()),
            events,
            verdicts: self.verdicts,
            result,
            ended,
            claims,
            result_tag,
            agreement,
            moves_after_end: self.moves_after_end,
            played_after_end: self.played_after_end,
        }
    }
}

/// How the move by `mover` from `prev` to `current` changed the verdict.
fn classify(prev: &PlyVerdict, current: &PlyVerdict, mover: Color) -> Option<VerdictChange> {
    let before = prev.result.for_color(mover)?;
    let after = current.result.for_color(mover)?;
    match (before, after) {
        (b, a) if b == a => None,
        (Outcome::Win, Outcome::Draw)
            if matches!(current.verdict.wdl, Wdl::Loss | Wdl::BlessedLoss) =>
        {
            Some(VerdictChange::WinDrawnByClock)
        }
        (Outcome::Win, _) => Some(VerdictChange::WinThrownAway),
        (Outcome::Draw, Outcome::Loss) => Some(VerdictChange::DrawThrownAway),
        _ => Some(VerdictChange::Improved),
    }
}

fn verdict_message(change: VerdictChange, mv: Option<&MoveInfo>, v: &PlyVerdict) -> String {
    let label = mv.map_or_else(|| "the starting position".to_owned(), MoveInfo::label);
    let mover_outcome = |mv: &MoveInfo| v.result.for_color(mv.color).unwrap_or(Outcome::Draw);
    match (change, mv) {
        (VerdictChange::EnteredRange, _) => format!("{label} — in table range: {v}"),
        (VerdictChange::WinDrawnByClock, _) => {
            let left = v.verdict.plies_left().unwrap_or(0).max(0);
            let remain = match left {
                0 => "none remain".to_owned(),
                1 => "only 1 remains".to_owned(),
                n => format!("only {n} remain"),
            };
            format!(
                "{label}?? — the win needed {} plies but {remain} on the clock: now a draw",
                v.verdict.dtz.plies()
            )
        }
        (VerdictChange::WinThrownAway, Some(mv)) => format!(
            "{label}?? — the win is thrown away: now a {}",
            mover_outcome(mv).name()
        ),
        (VerdictChange::DrawThrownAway, _) => {
            format!("{label}?? — the draw is thrown away: now a loss")
        }
        (_, Some(mv)) => format!(
            "{label} — the draw was there to be claimed, but the game went on: now a {} for {}",
            mover_outcome(mv).name(),
            color_title(mv.color)
        ),
        (_, None) => format!("{label} — {v}"),
    }
}
