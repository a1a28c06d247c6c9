//! The real server on a free loopback port, checked field by field against
//! the library: a few hundred random positions of 3-4 piece tables, the
//! mainline, the clock at 99/100/101, every error case, and a bounded load
//! test.

mod common;

use std::{
    cmp::Reverse,
    net::SocketAddr,
    sync::{
        Arc, OnceLock,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use common::{Client, Rng, fen_query, generate_tables, get, random_position, start_server};
use dtz50::{Dtz, Rule, Tablebase, Wdl};
use serde_json::{Value, json};
use shakmaty::{
    CastlingMode, Chess, EnPassantMode, Position, fen::Fen, san::SanPlus, uci::UciMove,
};

/// Tables for every 3-piece ending and a handful of 4-piece ones (with a
/// pawn, promotions, long DTZ), built once for this test binary.
const MATERIALS: [&str; 10] = [
    "KQvK", "KRvK", "KPvK", "KBvK", "KBNvK", "KQvKR", "KRvKR", "KRvKB", "KRvKN", "KRvKP",
];

struct Setup {
    _dir: tempfile::TempDir,
    tables: Tablebase,
    addr: SocketAddr,
    _server: dtz50_server::RunningServer,
}

fn setup() -> &'static Setup {
    static SETUP: OnceLock<Setup> = OnceLock::new();
    SETUP.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        generate_tables(dir.path(), &["KBNvK", "KQvKR", "KRvKP"]);
        let server = start_server(dir.path());
        Setup {
            tables: Tablebase::open(dir.path(), Rule::Fifty).expect("tables"),
            addr: server.addr(),
            _dir: dir,
            _server: server,
        }
    })
}

fn standard(fen: &str) -> Value {
    let (status, body) = get(
        setup().addr,
        &format!("/standard?fen={}", fen_query(fen, false)),
    );
    assert_eq!(status, 200, "{fen}: {body}");
    serde_json::from_str(&body).expect("JSON")
}

fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// lila-tablebase's category rule, written out again independently of the
/// server's: a clock at 100 before the move makes any decisive result
/// cursed or blessed, otherwise DTZ plus the clock reached decides.
fn expected_category(pos: &Chess, dtz: Option<Dtz>, halfmoves_before: u32) -> &'static str {
    let spent = i64::from(pos.halfmoves());
    if pos.is_stalemate() || pos.is_insufficient_material() || dtz == Some(Dtz(0)) {
        "draw"
    } else if pos.is_checkmate() {
        if halfmoves_before < 100 {
            "loss"
        } else {
            "blessed-loss"
        }
    } else if let Some(Dtz(d)) = dtz {
        let d = i64::from(d);
        if halfmoves_before >= 100 {
            if d < 0 { "blessed-loss" } else { "cursed-win" }
        } else {
            match d + d.signum() * spent {
                n if n < -100 => "blessed-loss",
                n if n < 0 => "loss",
                n if n <= 100 => "win",
                _ => "cursed-win",
            }
        }
    } else {
        "unknown"
    }
}

fn flip(category: &str) -> &'static str {
    match category {
        "win" => "loss",
        "cursed-win" => "blessed-loss",
        "draw" => "draw",
        "blessed-loss" => "cursed-win",
        "loss" => "win",
        _ => "unknown",
    }
}

fn rank(category: &str) -> u8 {
    [
        "loss",
        "unknown",
        "blessed-loss",
        "draw",
        "cursed-win",
        "win",
    ]
    .iter()
    .position(|c| *c == category)
    .unwrap_or_else(|| panic!("category {category}")) as u8
}

/// DTZ if the tables answer, `None` where lila-tablebase says unknown.
fn library_dtz(tables: &Tablebase, pos: &Chess) -> Option<Dtz> {
    tables.probe_dtz(pos).ok()
}

/// The fields of one position in the answer against the library; returns
/// how many fields were compared.
fn check_position(v: &Value, pos: &Chess, dtz: Option<Dtz>, category: &str, what: &str) -> usize {
    let dtz_json = dtz.map_or(Value::Null, |d| json!(d.0));
    let expected = [
        ("checkmate", json!(pos.is_checkmate())),
        ("stalemate", json!(pos.is_stalemate())),
        ("variant_win", json!(false)),
        ("variant_loss", json!(false)),
        (
            "insufficient_material",
            json!(pos.is_insufficient_material()),
        ),
        ("dtz", dtz_json.clone()),
        ("precise_dtz", dtz_json),
        ("dtm", Value::Null),
        ("dtw", Value::Null),
        ("dtc", Value::Null),
        ("category", json!(category)),
    ];
    for (field, value) in &expected {
        assert_eq!(&v[field], value, "{what}: field {field}");
    }
    expected.len()
}

/// Checks one `/standard` answer against the library; returns (moves,
/// fields) compared.
fn check_standard(tables: &Tablebase, pos: &Chess, v: &Value) -> (usize, usize) {
    let fen = fen_of(pos);
    let clock = pos.halfmoves();
    let moves = v["moves"].as_array().expect("moves");
    let legal = pos.legal_moves();
    assert_eq!(moves.len(), legal.len(), "{fen}: one entry per legal move");
    let mut fields = 0;
    let mut keys = Vec::new();
    for m in moves {
        let uci: UciMove = m["uci"].as_str().expect("uci").parse().expect("UCI");
        let mv = uci.to_move(pos).expect("a legal move");
        let mut after = pos.clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut after, mv);
        let dtz = library_dtz(tables, &after);
        let category = expected_category(&after, dtz, clock);
        let what = format!("{fen} {uci}");
        assert_eq!(m["san"], json!(san.to_string()), "{what}");
        assert_eq!(m["zeroing"], json!(mv.is_zeroing()), "{what}");
        assert_eq!(m["conversion"], json!(mv.is_conversion()), "{what}");
        assert_eq!(m["fen"], json!(fen_of(&after)), "{what}");
        fields += 4 + check_position(m, &after, dtz, category, &what);
        let winning = rank(category) >= rank("cursed-win");
        keys.push((
            rank(category),
            !after.is_checkmate(),
            (!after.is_stalemate(), !after.is_insufficient_material()),
            mv.is_conversion() ^ !winning,
            mv.is_zeroing() ^ !winning,
            dtz.map(|d| Reverse(d.0)),
            (Reverse(mv.capture()), Reverse(mv.promotion())),
        ));
    }
    assert!(keys.is_sorted(), "{fen}: moves in lila-tablebase's order");

    let dtz = library_dtz(tables, pos);
    let category = match moves.first() {
        Some(best) => flip(best["category"].as_str().expect("category")),
        None => expected_category(pos, dtz, clock.saturating_sub(1)),
    };
    fields += check_position(v, pos, dtz, category, &fen);
    assert_eq!(v["rule"], json!("50"), "{fen}");
    let verdict = match dtz {
        Some(_) => {
            let verdict = tables.probe(pos).expect("probe");
            let mut expected = serde_json::to_value(verdict).expect("verdict JSON");
            expected["text"] = json!(verdict.to_string());
            expected
        }
        None => Value::Null,
    };
    assert_eq!(v["verdict"], verdict, "{fen}");
    (moves.len(), fields + 2)
}

#[test]
fn every_field_agrees_with_the_library() {
    let setup = setup();
    let mut rng = Rng::new(0x5eed_d750);
    let (mut positions, mut moves, mut fields) = (0, 0, 0);
    for material in MATERIALS {
        for i in 0..32 {
            let clock = match i % 3 {
                0 => 0,
                1 => rng.below(100) as u32,
                _ => 85 + rng.below(20) as u32,
            };
            let pos = random_position(&mut rng, material, clock);
            let fen = fen_of(&pos);
            let underscores = i % 2 == 0;
            let (status, body) = get(
                setup.addr,
                &format!("/standard?fen={}", fen_query(&fen, underscores)),
            );
            assert_eq!(status, 200, "{fen}: {body}");
            let v: Value = serde_json::from_str(&body).expect("JSON");
            let (m, f) = check_standard(&setup.tables, &pos, &v);
            positions += 1;
            moves += m;
            fields += f;
        }
    }
    eprintln!(
        "/standard: {positions} positions, {moves} moves, {fields} fields equal to the library"
    );
    assert!(positions >= 300);
}

#[test]
fn the_mainline_agrees_with_the_library() {
    let setup = setup();
    let tables = &setup.tables;
    let mut rng = Rng::new(0xdec0_de50);
    let (mut lines, mut steps) = (0, 0);
    for material in MATERIALS {
        for _ in 0..8 {
            let pos = random_position(&mut rng, material, 0);
            let fen = fen_of(&pos);
            let (status, body) = get(
                setup.addr,
                &format!("/standard/mainline?fen={}", fen_query(&fen, true)),
            );
            assert_eq!(status, 200, "{fen}: {body}");
            let v: Value = serde_json::from_str(&body).expect("JSON");
            let dtz = tables.probe_dtz(&pos).expect("dtz");
            assert_eq!(
                (&v["dtz"], &v["precise_dtz"]),
                (&json!(dtz.0), &json!(dtz.0)),
                "{fen}"
            );
            let line = v["mainline"].as_array().expect("mainline");
            assert_eq!(
                line.is_empty(),
                dtz.0 == 0 || pos.legal_moves().is_empty(),
                "{fen}"
            );
            let mut at = pos.clone();
            for step in line {
                let uci: UciMove = step["uci"].as_str().expect("uci").parse().expect("UCI");
                let mv = uci.to_move(&at).expect("legal");
                // The move keeps the best WDL (clock at zero) the mover has.
                let best = at
                    .legal_moves()
                    .iter()
                    .map(|m| {
                        let mut after = at.clone();
                        after.play_unchecked(*m);
                        Wdl::from_dtz(tables.probe_dtz(&after).expect("dtz"), Rule::Fifty)
                    })
                    .min()
                    .expect("a move");
                let san = SanPlus::from_move_and_play_unchecked(&mut at, mv);
                let after_dtz = tables.probe_dtz(&at).expect("dtz");
                assert_eq!(Wdl::from_dtz(after_dtz, Rule::Fifty), best, "{fen} {uci}");
                assert_eq!(step["san"], json!(san.to_string()), "{fen}");
                assert_eq!(
                    (&step["dtz"], &step["precise_dtz"]),
                    (&json!(after_dtz.0), &json!(after_dtz.0))
                );
                steps += 1;
            }
            let winner = at.is_checkmate().then(|| (!at.turn()).char().to_string());
            assert_eq!(v["winner"], json!(winner), "{fen}");
            assert!(
                at.legal_moves().is_empty() || at.halfmoves() >= 100 || line.is_empty(),
                "{fen}"
            );
            lines += 1;
        }
    }
    eprintln!("/standard/mainline: {lines} lines, {steps} steps equal to the library");
}

#[test]
fn the_clock_at_99_100_101() {
    let setup = setup();
    // Ra8# mates at once: lila-tablebase's test, with a rook.
    for (clock, root, mate, outcome) in [
        (99, "win", "loss", "win"),
        (100, "cursed-win", "blessed-loss", "draw"),
        (101, "cursed-win", "blessed-loss", "draw"),
    ] {
        let fen = format!("7k/8/6K1/8/8/8/8/R7 w - - {clock} 80");
        let v = standard(&fen);
        assert_eq!(v["category"], json!(root), "{fen}");
        assert_eq!(v["moves"][0]["san"], json!("Ra8#"), "{fen}");
        assert_eq!(v["moves"][0]["category"], json!(mate), "{fen}");
        assert_eq!(v["verdict"]["outcome"], json!(outcome), "{fen}");
        let pos: Chess = fen
            .parse::<Fen>()
            .expect("FEN")
            .into_position(CastlingMode::Standard)
            .expect("legal");
        check_standard(&setup.tables, &pos, &v);
    }
    // A win in 11 plies survives a clock of 89 (11 left) and not of 90.
    for (clock, root, margin) in [
        (88, "win", json!(1)),
        (89, "win", json!(0)),
        (90, "cursed-win", Value::Null),
    ] {
        let v = standard(&format!("8/8/8/8/8/2k5/8/KQ6 w - - {clock} 1"));
        assert_eq!(v["dtz"], json!(11));
        assert_eq!(v["category"], json!(root), "clock {clock}");
        assert_eq!(v["verdict"]["margin"], margin, "clock {clock}");
    }
    // The side that is mated: lila-tablebase judges the clock before the
    // mating move (one less), so the mate stands at 100 and is blessed at 101.
    for (clock, category) in [(99, "loss"), (100, "loss"), (101, "blessed-loss")] {
        let v = standard(&format!("R6k/8/6K1/8/8/8/8/8 b - - {clock} 80"));
        assert_eq!(
            (&v["checkmate"], &v["category"], &v["dtz"]),
            (&json!(true), &json!(category), &json!(-1))
        );
        assert_eq!(
            v["verdict"]["outcome"],
            json!("loss"),
            "mate ends the game before any claim"
        );
    }
}

#[test]
fn bad_requests_are_one_line_400s() {
    let addr = setup().addr;
    for path in [
        "/standard",
        "/standard?fen=",
        "/standard?fen=not_a_fen",
        "/standard?fen=8/8/8/8/8/8/8/8_w_-_-_0_1",
        "/standard?fen=kK6/8/8/8/8/8/8/8_w_-_-_0_1",
        "/standard?fen=%FF%FE",
        "/standard/mainline?fen=8/8/8/8/8/8/8/8_w_-_-_0_1",
    ] {
        let (status, body) = get(addr, path);
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body.trim_end().lines().count(), 1, "{path}: {body:?}");
    }
}

#[test]
fn positions_the_tables_cannot_answer_are_unknown_with_their_moves_categorised() {
    let setup = setup();
    // Castling rights: no DTZ for the root, but every move gives them up and
    // leads into KRvK, so, as in lila-tablebase, the root takes the category
    // its best move gives it.
    let v = standard("4k3/8/8/8/8/8/8/R3K3 w Q - 0 1");
    assert_eq!(
        (&v["category"], &v["dtz"], &v["verdict"]),
        (&json!("win"), &Value::Null, &Value::Null)
    );
    let moves = v["moves"].as_array().expect("moves");
    assert!(
        moves.iter().all(|m| m["category"] != json!("unknown")),
        "{v}"
    );
    assert!(moves.iter().any(|m| m["san"] == json!("O-O-O")));
    let pos: Chess = "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1"
        .parse::<Fen>()
        .expect("FEN")
        .into_position(CastlingMode::Standard)
        .expect("legal");
    check_standard(&setup.tables, &pos, &v);
    // A missing table (KQvKQ was not built), and too many pieces.
    for fen in [
        "4k3/8/8/1q6/8/8/6Q1/4K3 w - - 0 1",
        "rnbqkb2/8/8/8/8/8/8/4K3 w - - 0 1",
    ] {
        let v = standard(fen);
        assert_eq!(v["category"], json!("unknown"), "{fen}");
        assert!(
            v["moves"]
                .as_array()
                .expect("moves")
                .iter()
                .any(|m| m["category"] == json!("unknown"))
        );
    }
    // The mainline has nothing to follow: 404, as lila-tablebase answers.
    let (status, body) = get(
        setup.addr,
        "/standard/mainline?fen=4k3/8/8/8/8/8/8/R3K3_w_Q_-_0_1",
    );
    assert_eq!(
        (status, body.trim_end().lines().count()),
        (404, 1),
        "{body}"
    );
}

#[test]
fn damaged_tables_are_a_500_and_the_server_stops_cleanly() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("KQvK.dtz50"), b"not a table").expect("write");
    let server = start_server(dir.path());
    let (status, body) = get(server.addr(), "/standard?fen=8/8/8/8/8/2k5/8/KQ6_w_-_-_0_1");
    assert_eq!(status, 500, "{body}");
    assert_eq!(body.trim_end().lines().count(), 1, "{body:?}");
    server.shutdown().expect("clean shutdown");
}

#[test]
fn the_page_and_its_assets_are_served() {
    let addr = setup().addr;
    for (path, needle) in [
        ("/", "<input id=\"clock\""),
        ("/app.js", "function show"),
        ("/style.css", ".board"),
    ] {
        let (status, body) = get(addr, path);
        assert_eq!(status, 200, "{path}");
        assert!(body.contains(needle), "{path}");
        assert!(
            !body.contains("http://") && !body.contains("https://"),
            "{path}: no external assets"
        );
    }
}

#[test]
fn load_64_clients_20000_requests_none_dropped() {
    const CLIENTS: usize = 64;
    const REQUESTS: usize = 20_000;
    let setup = setup();
    let mut rng = Rng::new(7);
    let paths: Arc<Vec<String>> = Arc::new(
        (0..256)
            .map(|i| {
                let pos =
                    random_position(&mut rng, MATERIALS[i % MATERIALS.len()], (i % 101) as u32);
                format!("/standard?fen={}", fen_query(&fen_of(&pos), true))
            })
            .collect(),
    );
    let next = Arc::new(AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(120);
    let start = Instant::now();
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (paths, next, addr) = (Arc::clone(&paths), Arc::clone(&next), setup.addr);
            thread::spawn(move || {
                let mut client = Client::connect(addr).expect("connect");
                let mut done = 0;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= REQUESTS || Instant::now() > deadline {
                        return done;
                    }
                    let (status, body) = client.get(&paths[i % paths.len()]).expect("response");
                    assert_eq!(status, 200, "{body}");
                    assert!(body.starts_with("{\"checkmate\":"), "{body}");
                    done += 1;
                }
            })
        })
        .collect();
    let done: usize = workers.into_iter().map(|w| w.join().expect("client")).sum();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "load: {done} requests from {CLIENTS} clients in {seconds:.2} s ({:.0}/s)",
        done as f64 / seconds
    );
    assert_eq!(
        done, REQUESTS,
        "every request answered within the time limit"
    );
}
