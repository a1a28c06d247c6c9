//! The server under load, as BENCHMARKS.md reports it: tables for ten 3-4
//! piece endings built into a temporary directory, the server on a free
//! loopback port, then 64 keep-alive clients sending 20,000 `/standard`
//! requests (256 random positions, clocks 0-100) after a warm-up of 2,000.
//! Prints requests per second and the p50/p99/max latency.
//!
//! ```sh
//! cargo run --release -p dtz50-server --example load
//! ```

#[path = "../tests/common/mod.rs"]
mod common;

use std::{
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    thread,
    time::{Duration, Instant},
};

use common::{Client, Rng, fen_query, generate_tables, random_position, start_server};
use shakmaty::{EnPassantMode, fen::Fen};

const CLIENTS: usize = 64;
const REQUESTS: usize = 20_000;
const WARM_UP: usize = 2_000;
const MATERIALS: [&str; 10] = [
    "KQvK", "KRvK", "KPvK", "KBvK", "KBNvK", "KQvKR", "KRvKR", "KRvKB", "KRvKN", "KRvKP",
];

/// Send `count` requests from `CLIENTS` clients; every latency, sorted.
fn run(addr: std::net::SocketAddr, paths: &Arc<Vec<String>>, count: usize) -> Vec<Duration> {
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (paths, next) = (Arc::clone(paths), Arc::clone(&next));
            thread::spawn(move || {
                let mut client = Client::connect(addr).expect("connect");
                let mut times = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        return times;
                    }
                    let start = Instant::now();
                    let (status, _) = client.get(&paths[i % paths.len()]).expect("response");
                    times.push(start.elapsed());
                    assert_eq!(status, 200);
                }
            })
        })
        .collect();
    let mut times: Vec<Duration> = workers
        .into_iter()
        .flat_map(|w| w.join().expect("client"))
        .collect();
    times.sort();
    assert_eq!(times.len(), count, "every request answered");
    times
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    generate_tables(dir.path(), &["KBNvK", "KQvKR", "KRvKP"]);
    let server = start_server(dir.path());
    let mut rng = Rng::new(7);
    let paths: Arc<Vec<String>> = Arc::new(
        (0..256)
            .map(|i| {
                let pos =
                    random_position(&mut rng, MATERIALS[i % MATERIALS.len()], (i % 101) as u32);
                let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
                format!("/standard?fen={}", fen_query(&fen, true))
            })
            .collect(),
    );
    run(server.addr(), &paths, WARM_UP);
    let start = Instant::now();
    let times = run(server.addr(), &paths, REQUESTS);
    let seconds = start.elapsed().as_secs_f64();
    let at = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{REQUESTS} requests, {CLIENTS} clients: {:.0} requests/s, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        REQUESTS as f64 / seconds,
        at(0.50).as_secs_f64() * 1e3,
        at(0.99).as_secs_f64() * 1e3,
        times[times.len() - 1].as_secs_f64() * 1e3,
    );
    server.shutdown().expect("clean shutdown");
}
