use dtz50::{material::Material, solve::{SolveOptions, solve}, table::{TableSet, resolve_dtz}};
use shakmaty::{CastlingMode, Chess, Position, fen::Fen, san::SanPlus};

#[test]
fn explore() {
    let mut set = TableSet::new();
    for m in Material::with_dependencies(&["KRvK".parse().unwrap(), "KQvK".parse().unwrap()]) {
        set.insert(solve(m, &SolveOptions::default(), &set, &|_| {}).unwrap());
    }
    for fen in std::env::var("FENS").unwrap().split('|') {
        let pos: Chess = Fen::from_ascii(fen.as_bytes()).unwrap().into_position(CastlingMode::Standard).unwrap();
        println!("{fen}: dtz {}", resolve_dtz(&set, &pos).unwrap());
        for m in pos.legal_moves() {
            let mut after = pos.clone();
            let san = SanPlus::from_move_and_play_unchecked(&mut after, m);
            println!("  {san}: {}", resolve_dtz(&set, &after).unwrap());
        }
    }
}
