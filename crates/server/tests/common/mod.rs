//! What the server's tests and the load example share: tables generated
//! into a temporary directory, a server on a free loopback port, a small
//! HTTP/1.1 client with keep-alive, and a seeded supply of random legal
//! positions.
#![allow(dead_code)] // Each test binary uses its own part.

use std::{
    io::{self, BufRead, BufReader, Read, Write},
    net::{SocketAddr, TcpStream},
    path::Path,
    time::Duration,
};

use dtz50::{
    Material, Rule, Tablebase,
    generate::{GenerateOptions, generate},
};
use shakmaty::{CastlingMode, Chess, fen::Fen};

/// Build `materials` (and their sub-tables) under the 50-move rule into `dir`.
pub fn generate_tables(dir: &Path, materials: &[&str]) {
    let targets: Vec<Material> = materials
        .iter()
        .map(|m| m.parse().expect("material"))
        .collect();
    let options = GenerateOptions {
        rule: Rule::Fifty,
        out: dir.to_path_buf(),
        work_dir: None,
        checkpoint_every: None,
        order_search: Default::default(),
    };
    generate(&targets, &options, &|_| {}).expect("tables generate");
}

/// The server on a free port of 127.0.0.1.
pub fn start_server(dir: &Path) -> dtz50_server::RunningServer {
    let tables = Tablebase::open(dir, Rule::Fifty).expect("tables open");
    dtz50_server::spawn(tables, "127.0.0.1:0".parse().expect("address")).expect("server starts")
}

/// A FEN as a query value: spaces as %20 (or as underscores, which the API
/// also accepts).
pub fn fen_query(fen: &str, underscores: bool) -> String {
    if underscores {
        fen.replace(' ', "_")
    } else {
        fen.replace(' ', "%20")
    }
}

/// One keep-alive HTTP/1.1 connection.
pub struct Client {
    stream: BufReader<TcpStream>,
}

impl Client {
    /// Connect to `addr`.
    pub fn connect(addr: SocketAddr) -> io::Result<Client> {
        let stream = TcpStream::connect(addr)?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        Ok(Client {
            stream: BufReader::new(stream),
        })
    }

    /// `GET path`: the status and the body.
    pub fn get(&mut self, path: &str) -> io::Result<(u16, String)> {
        write!(
            self.stream.get_mut(),
            "GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n"
        )?;
        let mut line = String::new();
        self.stream.read_line(&mut line)?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
        let mut length = None;
        loop {
            line.clear();
            self.stream.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let length = length.ok_or_else(|| io::Error::other("no content-length"))?;
        let mut body = vec![0; length];
        self.stream.read_exact(&mut body)?;
        String::from_utf8(body)
            .map(|b| (status, b))
            .map_err(io::Error::other)
    }
}

/// A GET on a fresh connection.
pub fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    Client::connect(addr)
        .and_then(|mut c| c.get(path))
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// A seeded xorshift generator: the same positions on every run.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (not zero).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A random legal position of `material` (like `KRvKP`) with halfmove
/// clock `clock`.
pub fn random_position(rng: &mut Rng, material: &str, clock: u32) -> Chess {
    let (white, black) = material.split_once('v').expect("material like KRvKP");
    loop {
        let mut board = [None::<char>; 64];
        let pieces = white
            .chars()
            .map(|c| c.to_ascii_uppercase())
            .chain(black.chars().map(|c| c.to_ascii_lowercase()));
        let mut ok = true;
        for piece in pieces {
            let sq = rng.below(64) as usize;
            let pawn_rank = piece.eq_ignore_ascii_case(&'p') && !(8..56).contains(&sq);
            if board[sq].is_some() || pawn_rank {
                ok = false;
                break;
            }
            board[sq] = Some(piece);
        }
        if !ok {
            continue;
        }
        let mut placement = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match board[rank * 8 + file] {
                    Some(p) => {
                        if empty > 0 {
                            placement.push_str(&empty.to_string());
                            empty = 0;
                        }
                        placement.push(p);
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                placement.push_str(&empty.to_string());
            }
            if rank > 0 {
                placement.push('/');
            }
        }
        let turn = if rng.below(2) == 0 { 'w' } else { 'b' };
        let fen = format!("{placement} {turn} - - {clock} 60");
        let Ok(fen) = fen.parse::<Fen>() else {
            continue;
        };
        if let Ok(pos) = fen.into_position(CastlingMode::Standard) {
            return pos;
        }
    }
}
