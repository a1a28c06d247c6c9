//! Game adjudication: FIDE draw rules and tablebase verdicts on PGNs written
//! for the purpose. Every test asserts the exact ply and SAN reported.

use std::sync::OnceLock;

use dtz50::{
    adjudicate::{
        AdjudicateOptions, Agreement, EventKind, FivefoldRule, GameError, GameReport, GameResult,
        VerdictChange, adjudicate_pgn, render_text, render_verdicts,
    },
    generate::{SolveOptions, TableSet, solve},
    material::Material,
    probe::StoredValues,
    value::{Dtz, Outcome, Wdl},
};
use shakmaty::san::SanError;

/// KQvK and KRvK (with KvK), solved once for the whole file.
fn tables() -> &'static TableSet {
    static TABLES: OnceLock<TableSet> = OnceLock::new();
    TABLES.get_or_init(|| {
        let targets: [Material; 2] = [
            "KQvK".parse().expect("material"),
            "KRvK".parse().expect("material"),
        ];
        let mut set = TableSet::new();
        for m in Material::with_dependencies(&targets) {
            let table = solve(m, &SolveOptions::default(), &set, &|_| {}).expect("solvable");
            set.insert(table);
        }
        set
    })
}

fn run(pgn: &str, store: Option<&dyn StoredValues>, fivefold: FivefoldRule) -> Vec<GameReport> {
    adjudicate_pgn(pgn.as_bytes(), store, AdjudicateOptions { fivefold })
        .map(|r| r.expect("a legal game"))
        .collect()
}

fn one(pgn: &str) -> GameReport {
    let mut reports = run(pgn, None, FivefoldRule::Current);
    assert_eq!(reports.len(), 1, "one game");
    reports.remove(0)
}

/// `(kind, ply, san, played)` of every event.
fn events(report: &GameReport) -> Vec<(&'static str, u32, &str, bool)> {
    report
        .events
        .iter()
        .map(|e| {
            (
                e.kind.name(),
                e.ply,
                e.san.as_deref().unwrap_or(""),
                e.played,
            )
        })
        .collect()
}

fn game(tags: &[(&str, &str)], movetext: &str) -> String {
    let mut pgn = String::new();
    for (name, value) in tags {
        pgn.push_str(&format!("[{name} \"{value}\"]\n"));
    }
    pgn.push('\n');
    pgn.push_str(movetext);
    pgn.push_str("\n\n");
    pgn
}

#[test]
fn threefold_not_necessarily_consecutive() {
    // The initial position comes back at ply 4 by the knights on the king's
    // side and at ply 8 by the knights on the queen's side.
    let played = game(
        &[("White", "A"), ("Black", "B"), ("Result", "1/2-1/2")],
        "1. Nf3 Nf6 2. Ng1 Ng8 3. Nc3 Nc6 4. Nb1 Nb8 5. Nf3 Nf6 6. Ng1 Ng8 1/2-1/2",
    );
    // Same, but Black does not play the repeating move: the claim was still
    // there by announcing 4... Nb8.
    let announced = game(
        &[("White", "C"), ("Black", "D"), ("Result", "*")],
        "1. Nf3 Nf6 2. Ng1 Ng8 3. Nc3 Nc6 4. Nb1 e5 *",
    );
    let reports = run(&(played + &announced), None, FivefoldRule::Current);
    assert_eq!(reports.len(), 2);

    assert_eq!(events(&reports[0]), [("threefold", 8, "Nb8", true)]);
    let claim = &reports[0].events[0];
    assert_eq!(claim.move_number, Some(4));
    assert_eq!(claim.color, Some(shakmaty::Color::Black));
    assert!(!claim.ends_game);
    assert_eq!(
        claim.message,
        "4... Nb8 — the position appears for the third time: a draw can be claimed (FIDE 9.2)"
    );
    assert_eq!(reports[0].result, GameResult::Undecided);
    assert_eq!(reports[0].claims, [EventKind::Threefold]);
    assert_eq!(reports[0].agreement, Agreement::Open);
    assert!(reports[0].ended.is_none());

    assert_eq!(events(&reports[1]), [("threefold", 8, "Nb8", false)]);
    assert!(
        reports[1].events[0]
            .message
            .ends_with("(FIDE 9.2.1.1); 4... e5 was played instead"),
        "{}",
        reports[1].events[0].message
    );
}

#[test]
fn castling_rights_make_positions_different() {
    // As in Karpov–Miles: after 3... Ke8 the placement of 1... e5 is back,
    // but nobody can castle any more, so it is a new position. Counting by
    // placement alone would allow a claim by announcing 5... Ke8 (ply 10);
    // the first real threefold is 6... Ke7 (ply 12, third time after 2...
    // Ke7 and 4... Ke7, all without castling rights).
    let report = one(&game(
        &[("White", "Karpov"), ("Black", "Miles")],
        "1. e4 e5 2. Ke2 Ke7 3. Ke1 Ke8 4. Ke2 Ke7 5. Ke1 Ke8 6. Ke2 Ke7 1/2-1/2",
    ));
    assert_eq!(events(&report), [("threefold", 12, "Ke7", true)]);
    assert_eq!(report.result_tag.as_deref(), Some("1/2-1/2"));
}

#[test]
fn en_passant_counts_only_where_a_capture_is_legal() {
    // 1... c5 sets the en-passant square c6 next to the pawn on b5, but
    // bxc6 would expose the king on a5 to the rook on h5: no capture is
    // legal, so the position after 1... c5 is the one after 3... Ng8 and
    // 5... Ng8, a third time at ply 9.
    let pinned = game(
        &[
            ("FEN", "4k1n1/2p5/8/KP5r/8/8/8/6N1 b - - 0 1"),
            ("SetUp", "1"),
        ],
        "1... c5 2. Nf3 Nf6 3. Ng1 Ng8 4. Nf3 Nf6 5. Ng1 Ng8 6. Nf3 *",
    );
    // The rook on h6 pins nothing: bxc6 is legal after 1... c5, so that
    // position differs from the later ones, and the first claim is the
    // third 2. Nf3 position, at ply 10.
    let legal = game(
        &[
            ("FEN", "4k1n1/2p5/7r/KP6/8/8/8/6N1 b - - 0 1"),
            ("SetUp", "1"),
        ],
        "1... c5 2. Nf3 Nf6 3. Ng1 Ng8 4. Nf3 Nf6 5. Ng1 Ng8 6. Nf3 *",
    );
    let reports = run(&(pinned + &legal), None, FivefoldRule::Current);
    assert_eq!(events(&reports[0]), [("threefold", 9, "Ng8", true)]);
    assert_eq!(reports[0].events[0].move_number, Some(5));
    assert_eq!(events(&reports[1]), [("threefold", 10, "Nf3", true)]);
    assert_eq!(reports[1].events[0].move_number, Some(6));
    assert_eq!(
        reports[1].fen.as_deref(),
        Some("4k1n1/2p5/7r/KP6/8/8/8/6N1 b - - 0 1")
    );
}

/// The kings shuffle: the starting position appears at plies 0, 4, 10 (after
/// a six-ply detour with Kd2/Kd7), 14, 18, 22 and 26.
const FIVEFOLD: &str = "1. Kd1 Kd8 2. Ke1 Ke8 3. Kd1 Kd8 4. Kd2 Kd7 5. Ke1 Ke8 \
    6. Kd1 Kd8 7. Ke1 Ke8 8. Kd1 Kd8 9. Ke1 Ke8 10. Kd1 Kd8 11. Ke1 Ke8 \
    12. Kd1 Kd8 13. Ke1 Ke8 14. a3 1/2-1/2";

#[test]
fn fivefold_ends_the_game_and_later_moves_are_flagged() {
    let pgn = game(
        &[
            ("White", "E"),
            ("Black", "F"),
            ("Result", "1/2-1/2"),
            ("FEN", "4k3/p7/8/8/8/8/P7/4K3 w - - 0 1"),
            ("SetUp", "1"),
        ],
        FIVEFOLD,
    );
    let report = one(&pgn);
    assert_eq!(
        events(&report),
        [
            ("threefold", 10, "Ke8", true),
            ("fivefold", 18, "Ke8", true)
        ]
    );
    assert!(report.events[1].ends_game);
    assert_eq!(
        report.events[1].message,
        "9... Ke8 — the position appears for the fifth time: the game is drawn (FIDE 9.6.1)"
    );
    let ended = report.ended.as_ref().expect("an automatic end");
    assert_eq!((ended.kind, ended.ply), (EventKind::Fivefold, 18));
    assert_eq!(report.result, GameResult::Draw);
    assert_eq!(report.agreement, Agreement::Agrees);
    assert_eq!(report.plies, 27);
    assert_eq!(
        report.moves_after_end,
        [
            "10. Kd1",
            "10... Kd8",
            "11. Ke1",
            "11... Ke8",
            "12. Kd1",
            "12... Kd8",
            "13. Ke1",
            "13... Ke8",
            "14. a3"
        ]
    );
}

#[test]
fn fivefold_of_2014_needs_consecutive_alternate_moves() {
    // Under the 2014 text the detour breaks the sequence: the position must
    // stand at five plies spaced four apart, first at 10, 14, 18, 22, 26.
    let pgn = game(&[("FEN", "4k3/p7/8/8/8/8/P7/4K3 w - - 0 1")], FIVEFOLD);
    let reports = run(&pgn, None, FivefoldRule::Consecutive2014);
    assert_eq!(
        events(&reports[0]),
        [
            ("threefold", 10, "Ke8", true),
            ("fivefold", 26, "Ke8", true)
        ]
    );
    assert_eq!(reports[0].events[1].move_number, Some(13));
    assert!(
        reports[0].events[1]
            .message
            .contains("FIDE 2014 Laws, 9.6a")
    );
    assert_eq!(reports[0].moves_after_end, ["14. a3"]);
}

/// The rook's circuit: 21 squares, so with the black king alternating
/// between h7 and h8 no position *played* appears more than twice in 150
/// plies (the cycle is 84 plies). A short cut back into the circuit does
/// repeat a position a third time, and that claim is reported.
const TOUR: [&str; 21] = [
    "a1", "a3", "a4", "a5", "a6", "b6", "c6", "d6", "e6", "f6", "g6", "g5", "g4", "g3", "g2", "g1",
    "f1", "e1", "d1", "c1", "b1",
];

/// Movetext for the first `plies` half-moves of the tour (White's k-th move
/// goes to `TOUR[k % 21]`, Black's k-th move is Kh7 for odd k and Kh8 for
/// even k), then `last` as one more half-move.
fn tour(black_first: bool, plies: usize, last: &str) -> String {
    let (mut white, mut black) = (0, 0);
    let mut out = String::new();
    let mut black_to_move = black_first;
    let mut number = 1;
    for i in 0..=plies {
        let san = if i == plies {
            last.to_owned()
        } else if black_to_move {
            black += 1;
            if black % 2 == 1 { "Kh7" } else { "Kh8" }.to_owned()
        } else {
            white += 1;
            format!("R{}", TOUR[white % TOUR.len()])
        };
        if black_to_move {
            if i == 0 {
                out.push_str(&format!("{number}... "));
            }
            out.push_str(&format!("{san} "));
            number += 1;
        } else {
            out.push_str(&format!("{number}. {san} "));
        }
        black_to_move = !black_to_move;
    }
    out
}

#[test]
fn fifty_move_claim_then_seventy_five_move_draw() {
    // Clock from zero: Black's 50th move completes 50 moves each (ply 100),
    // Black's 75th move completes 75 (ply 150), and the mate that follows
    // comes after the game has ended. On the way, with the rook on a4,
    // 45. Ra3 would have repeated the position after 1. Ra3 and 43. Ra3.
    let pgn = game(
        &[
            ("White", "G"),
            ("Black", "H"),
            ("Result", "1-0"),
            ("FEN", "7k/5K2/8/8/8/8/8/R7 w - - 0 1"),
        ],
        &format!("{} 1-0", tour(false, 150, "Rh4#")),
    );
    let report = one(&pgn);
    assert_eq!(
        events(&report),
        [
            ("threefold", 89, "Ra3", false),
            ("fifty-move", 100, "Kh8", true),
            ("seventy-five-move", 150, "Kh7", true)
        ]
    );
    assert!(
        report.events[0]
            .message
            .starts_with("45. Ra3 — White could claim a draw by announcing this move"),
        "{}",
        report.events[0].message
    );
    assert!(
        report.events[0]
            .message
            .ends_with("; 45. Ra5 was played instead")
    );
    assert_eq!(
        report.events[1].message,
        "50... Kh8 — 50 moves by each player without a capture or pawn move: \
         a draw can be claimed (FIDE 9.3)"
    );
    assert_eq!(report.events[2].move_number, Some(75));
    assert_eq!(report.result, GameResult::Draw);
    assert_eq!(report.agreement, Agreement::Disagrees);
    assert_eq!(report.moves_after_end, ["76. Rh4#"]);

    let json = serde_json::to_value(&report).expect("serializable");
    assert_eq!(json["events"][0]["kind"], "threefold");
    assert_eq!(json["events"][0]["played"], false);
    assert_eq!(json["events"][1]["kind"], "fifty-move");
    assert_eq!(json["events"][2]["kind"], "seventy-five-move");
    assert_eq!(json["events"][2]["ply"], 150);
    assert_eq!(json["events"][2]["san"], "Kh7");
    assert_eq!(json["events"][2]["color"], "black");
    assert_eq!(json["result"], "1/2-1/2");
    assert_eq!(json["result_tag"], "1-0");
    assert_eq!(json["agreement"], "disagrees");
    assert_eq!(json["game"]["white"], "G");

    let text = render_text(&report);
    assert!(
        text.contains("Rules: 1/2-1/2 by seventy-five-move rule at ply 150 (Kh7)"),
        "{text}"
    );
    assert!(
        text.contains("PGN result: 1-0 (DISAGREES with the rules)"),
        "{text}"
    );
    assert!(
        text.contains("Played after the game had ended: 76. Rh4#"),
        "{text}"
    );
}

#[test]
fn a_fifty_move_claim_by_announcing_a_move_not_played() {
    // Clock at 97: after 1. Kd2 Kd8 it stands at 99, and White could
    // announce any king move; White pushes a pawn instead, so the claim is
    // reported with the quiet move whose SAN sorts first.
    let report = one(&game(
        &[("FEN", "4k3/p7/8/8/8/8/P7/3K4 w - - 97 1")],
        "1. Kd2 Kd8 2. a3 *",
    ));
    assert_eq!(events(&report), [("fifty-move", 3, "Kc1", false)]);
    assert!(
        report.events[0]
            .message
            .contains("2. a3 was played instead")
    );
}

#[test]
fn mate_on_the_150th_ply_is_a_win() {
    // Black moves first, so White's 75th move is ply 150: mate takes
    // precedence over the seventy-five-move rule. (With the rook on a3,
    // 45. Ra1 would have repeated the start and the position after 43. Ra1.)
    let pgn = game(
        &[
            ("Result", "1-0"),
            ("FEN", "7k/5K2/8/8/8/8/8/R7 b - - 0 1"),
            ("SetUp", "1"),
        ],
        &format!("{} 1-0", tour(true, 149, "Rh5#")),
    );
    let report = one(&pgn);
    assert_eq!(
        events(&report),
        [
            ("threefold", 88, "Ra1", false),
            ("fifty-move", 100, "Re6", true),
            ("checkmate", 150, "Rh5#", true)
        ]
    );
    assert!(
        report.events[0]
            .message
            .ends_with("; 45. Ra4 was played instead")
    );
    assert_eq!(report.events[2].move_number, Some(76));
    assert!(
        report.events[2]
            .message
            .ends_with("mate takes precedence over the seventy-five-move rule (FIDE 9.6.2)"),
        "{}",
        report.events[2].message
    );
    assert_eq!(report.result, GameResult::WhiteWins);
    assert_eq!(report.agreement, Agreement::Agrees);
    assert!(report.moves_after_end.is_empty());
}

#[test]
fn the_clock_turns_a_table_win_into_a_draw() {
    // KRvK, White to move, DTZ 27 with 28 plies left: won with one ply to
    // spare. 1. Ke2 and 1... Kd5 are best; 2. Ra4 needs 26 more plies with
    // only 25 left.
    let pgn = game(
        &[
            ("White", "I"),
            ("Black", "J"),
            ("FEN", "8/8/8/4k3/8/8/8/R3K3 w - - 72 1"),
        ],
        "1. Ke2 Kd5 2. Ra4 Ke5 3. Ra5+ Kd6 1/2-1/2",
    );
    let reports = run(&pgn, Some(tables()), FivefoldRule::Current);
    let report = &reports[0];
    assert_eq!(
        events(report),
        [("verdict", 0, "", false), ("verdict", 3, "Ra4", true)]
    );
    assert_eq!(report.events[0].change, Some(VerdictChange::EnteredRange));
    assert_eq!(
        report.events[1].change,
        Some(VerdictChange::WinDrawnByClock)
    );
    assert_eq!(
        report.events[1].message,
        "2. Ra4?? — the win needed 26 plies but only 25 remain on the clock: now a draw"
    );

    let dtz: Vec<i16> = report.verdicts.iter().map(|v| v.verdict.dtz.0).collect();
    assert_eq!(dtz[..4], [27, -26, 25, -26]);
    assert_eq!(report.verdicts.len(), 7);
    let start = &report.verdicts[0];
    assert_eq!(
        (start.verdict.wdl, start.verdict.dtz, start.verdict.halfmove),
        (Wdl::Win, Dtz(27), 72)
    );
    assert_eq!(
        (start.verdict.outcome, start.verdict.margin),
        (Outcome::Win, Some(1))
    );
    let after = &report.verdicts[3];
    assert_eq!(
        (after.verdict.wdl, after.verdict.plies_left()),
        (Wdl::Loss, Some(25))
    );
    assert_eq!(after.result, GameResult::Draw);
    assert!(
        report.verdicts[3..]
            .iter()
            .all(|v| v.result == GameResult::Draw)
    );
    assert_eq!(report.agreement, Agreement::Open);
    assert!(render_verdicts(report).contains(
        "ply   3 after Ra4: Black to move, DTZ -26: \
         draw by the clock: the loss takes 26 plies, 25 left on the clock\n"
    ));
    let json = serde_json::to_value(report).expect("serializable");
    assert_eq!(json["events"][1]["change"], "win-drawn-by-clock");
    assert_eq!(json["verdicts"][0]["wdl"], 2);
    assert_eq!(json["verdicts"][0]["dtz"], 27);
    assert_eq!(json["verdicts"][0]["outcome"], "win");
    assert_eq!(json["verdicts"][0]["margin"], 1);
    assert_eq!(json["verdicts"][0]["rule"], "50");
    assert_eq!(json["verdicts"][3]["wdl"], -2);
    assert_eq!(json["table_rule"], "50");
}

#[test]
fn a_table_win_thrown_away_then_a_dead_position() {
    let pgn = game(
        &[("Result", "1-0"), ("FEN", "8/8/8/8/8/2k5/8/K2Q4 w - - 0 1")],
        "1. Qd3+ Kxd3 1-0",
    );
    let reports = run(&pgn, Some(tables()), FivefoldRule::Current);
    let report = &reports[0];
    assert_eq!(
        events(report),
        [
            ("verdict", 0, "", false),
            ("verdict", 1, "Qd3+", true),
            ("dead-position", 2, "Kxd3", true)
        ]
    );
    assert_eq!(report.events[1].change, Some(VerdictChange::WinThrownAway));
    assert_eq!(
        report.events[1].message,
        "1. Qd3+?? — the win is thrown away: now a draw"
    );
    assert_eq!(report.result, GameResult::Draw);
    assert_eq!(report.agreement, Agreement::Disagrees);
    assert_eq!(report.verdicts.len(), 3);
}

#[test]
fn out_of_range_positions_are_not_judged() {
    // Castling rights and too many pieces: no verdict at all.
    let report = &run(
        "1. Nf3 Nf6 2. Ng1 Ng8 *\n",
        Some(tables()),
        FivefoldRule::Current,
    )[0];
    assert!(report.verdicts.is_empty());
    assert!(report.events.is_empty());
}

#[test]
fn an_illegal_move_spoils_only_its_own_game() {
    let pgn = [
        game(
            &[("White", "Alpha"), ("Black", "Beta"), ("Result", "1-0")],
            "1. e4 e5 2. Nf3 Nc6 1-0",
        ),
        game(
            &[("White", "Gamma"), ("Black", "Delta"), ("Result", "0-1")],
            "1. e4 e5 2. Ke3 Nc6 0-1",
        ),
        game(
            &[("White", "Eps"), ("Black", "Zeta"), ("Result", "1/2-1/2")],
            "1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 4. Ng1 Ng8 1/2-1/2",
        ),
    ]
    .concat();
    let results: Vec<_> =
        adjudicate_pgn(pgn.as_bytes(), None, AdjudicateOptions::default()).collect();
    assert_eq!(results.len(), 3);

    let first = results[0].as_ref().expect("game 1 is legal");
    assert_eq!(first.game.number, 1);
    assert!(first.events.is_empty());
    assert_eq!(first.plies, 4);

    let err = results[1].as_ref().expect_err("game 2 has an illegal move");
    match err {
        GameError::IllegalMove {
            game,
            ply,
            label,
            san,
            reason,
        } => {
            assert_eq!(game.number, 2);
            assert_eq!(game.white.as_deref(), Some("Gamma"));
            assert_eq!(game.black.as_deref(), Some("Delta"));
            assert_eq!(*ply, 3);
            assert_eq!(label, "2. Ke3");
            assert_eq!(san, "Ke3");
            assert_eq!(*reason, SanError::IllegalSan);
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert_eq!(
        err.to_string(),
        "game 2 (Gamma – Delta): illegal move 2. Ke3: no legal move matches"
    );

    let third = results[2].as_ref().expect("game 3 is legal");
    assert_eq!(third.game.number, 3);
    assert_eq!(events(third), [("threefold", 8, "Ng8", true)]);
}

#[test]
fn bad_variants_fens_and_syntax_are_reported_per_game() {
    let pgn = [
        game(&[("White", "K"), ("Variant", "Atomic")], "1. e4 *"),
        game(&[("FEN", "8/8/8/8/8/8/8/8 w - - 0 1")], "*"),
        game(&[], "1. e4 e5 *"),
        "[White \"L\"]\n\n1. e4 { never closed\n".to_owned(),
    ]
    .concat();
    let results: Vec<_> =
        adjudicate_pgn(pgn.as_bytes(), None, AdjudicateOptions::default()).collect();
    assert_eq!(results.len(), 4);
    assert!(matches!(
        &results[0],
        Err(GameError::UnknownVariant { game, variant })
            if game.number == 1 && variant == "Atomic"
    ));
    assert!(matches!(
        &results[1],
        Err(GameError::BadFen { game, .. }) if game.number == 2
    ));
    assert_eq!(results[2].as_ref().expect("third game").plies, 2);
    match &results[3] {
        Err(GameError::Pgn { game, plies, .. }) => {
            assert_eq!(game.number, 4);
            assert_eq!(game.white.as_deref(), Some("L"));
            assert_eq!(*plies, 1);
        }
        other => panic!("expected a PGN error, got {other:?}"),
    }
}
