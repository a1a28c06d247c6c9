//! `dtz50 serve`: dtz50 tables over HTTP.
//!
//! * `GET /standard?fen=FEN` and `GET /standard/mainline?fen=FEN`: lichess's
//!   tablebase API (lila-tablebase), field for field, with exact DTZ and
//!   dtz50's additions (`rule`, `verdict`, each move's `fen`) in fields its
//!   clients ignore (see [`response`]);
//! * `GET /`: a page where a person sets a position and watches the clock
//!   turn a win into a draw (see [`page`]; every asset is built in).
//!
//! Probes run on tokio's blocking threads, at most
//! [`MAX_CONCURRENT_PROBES`] at a time, so the async threads only move
//! bytes; [`run`] stops gracefully on Ctrl-C, finishing the requests in
//! flight.
//!
//! ```no_run
//! use dtz50::{Rule, Tablebase};
//!
//! let tables = Tablebase::open("tables", Rule::Fifty)?;
//! let server = dtz50_server::spawn(tables, "127.0.0.1:0".parse()?)?;
//! println!("serving on http://{}", server.addr());
//! server.shutdown()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod errors;
pub mod page;
pub mod request;
pub mod response;
pub mod tablebases;

use std::{
    future::Future,
    io,
    net::SocketAddr,
    sync::Arc,
    thread::{self, JoinHandle},
};

use axum::{
    Json, Router,
    extract::{Query, State, rejection::QueryRejection},
    routing::get,
};
use dtz50::Tablebase;
use tokio::{
    net::TcpListener,
    runtime::Runtime,
    sync::{Semaphore, oneshot},
};

use crate::{
    errors::ServerError,
    request::FenQuery,
    response::{MainlineResponse, TablebaseResponse},
};

/// The port `dtz50 serve` listens on unless told otherwise (lila-tablebase
/// uses 9000; 9050 for dtz50).
pub const DEFAULT_PORT: u16 = 9050;

/// How many probes run at once; further requests wait their turn.
pub const MAX_CONCURRENT_PROBES: usize = 32;

/// The tables and the bound on concurrent probes, shared by all requests.
struct App {
    tables: Arc<Tablebase>,
    probes: Semaphore,
}

impl App {
    /// Run `job` on a blocking thread once a probe slot is free.
    async fn probe<T: Send + 'static>(
        &self,
        job: impl FnOnce(&Tablebase) -> Result<T, ServerError> + Send + 'static,
    ) -> Result<T, ServerError> {
        let _permit = self
            .probes
            .acquire()
            .await
            .map_err(|e| ServerError::Internal(format!("probe slots closed: {e}")))?;
        let tables = Arc::clone(&self.tables);
        tokio::task::spawn_blocking(move || job(&tables))
            .await
            .map_err(|e| ServerError::Internal(format!("probe task failed: {e}")))?
    }
}

/// The routes: the API under `/standard`, the page under `/`.
pub fn router(tables: Tablebase) -> Router {
    let app = Arc::new(App {
        tables: Arc::new(tables),
        probes: Semaphore::new(MAX_CONCURRENT_PROBES),
    });
    Router::new()
        .route("/standard", get(standard))
        .route("/standard/mainline", get(mainline))
        .merge(page::routes())
        .with_state(app)
}

/// The query, or a one-line 400.
fn query(query: Result<Query<FenQuery>, QueryRejection>) -> Result<FenQuery, ServerError> {
    query
        .map(|Query(q)| q)
        .map_err(|e| ServerError::BadRequest(format!("bad query: {}", e.body_text())))
}

async fn standard(
    State(app): State<Arc<App>>,
    q: Result<Query<FenQuery>, QueryRejection>,
) -> Result<Json<TablebaseResponse>, ServerError> {
    let pos = query(q)?.position()?;
    app.probe(move |tables| tablebases::standard(tables, &pos))
        .await
        .map(Json)
}

async fn mainline(
    State(app): State<Arc<App>>,
    q: Result<Query<FenQuery>, QueryRejection>,
) -> Result<Json<MainlineResponse>, ServerError> {
    let pos = query(q)?.position()?;
    app.probe(move |tables| tablebases::mainline(tables, &pos))
        .await
        .map(Json)
}

/// Serve `tables` on `listener` until `shutdown` completes, then finish
/// the requests in flight.
///
/// # Errors
/// An I/O error of the listener.
pub async fn serve(
    listener: TcpListener,
    tables: Tablebase,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    axum::serve(listener, router(tables))
        .with_graceful_shutdown(shutdown)
        .await
}

/// Serve `tables` on `bind` until Ctrl-C, calling `on_listen` with the
/// address once it listens (port 0 picks a free port).
///
/// # Errors
/// The address cannot be bound, or the runtime cannot start.
pub fn run(
    tables: Tablebase,
    bind: SocketAddr,
    on_listen: impl FnOnce(SocketAddr),
) -> io::Result<()> {
    runtime()?.block_on(async move {
        let listener = TcpListener::bind(bind).await?;
        on_listen(listener.local_addr()?);
        serve(listener, tables, async {
            // If the handler cannot be installed, serve until killed.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
        .await
    })
}

fn runtime() -> io::Result<Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
}

/// A server running on its own thread (see [`spawn`]).
#[derive(Debug)]
pub struct RunningServer {
    addr: SocketAddr,
    stop: oneshot::Sender<()>,
    thread: JoinHandle<io::Result<()>>,
}

impl RunningServer {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stop accepting, finish the requests in flight and wait for the
    /// thread.
    ///
    /// # Errors
    /// The server's I/O error, if it failed.
    pub fn shutdown(self) -> io::Result<()> {
        // A server that already stopped has dropped the receiver.
        let _ = self.stop.send(());
        self.thread
            .join()
            .map_err(|_| io::Error::other("server thread panicked"))?
    }
}

/// Start serving `tables` on `bind` on a thread of its own (for tests,
/// benchmarks and programs that embed the server); returns once it
/// listens.
///
/// # Errors
/// The address cannot be bound, or the runtime cannot start.
pub fn spawn(tables: Tablebase, bind: SocketAddr) -> io::Result<RunningServer> {
    let rt = runtime()?;
    let listener = rt.block_on(TcpListener::bind(bind))?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = oneshot::channel::<()>();
    let thread = thread::Builder::new()
        .name("dtz50-server".to_owned())
        .spawn(move || {
            rt.block_on(serve(listener, tables, async {
                let _ = stopped.await;
            }))
        })?;
    Ok(RunningServer { addr, stop, thread })
}
