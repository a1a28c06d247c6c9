//! `dtz50 serve`: the lichess tablebase API and a page for the tables, over
//! HTTP (the server itself is the `dtz50-server` crate).

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    process::ExitCode,
};

use anyhow::{Context, Result};
use clap::Args;
use dtz50_server::DEFAULT_PORT;

use crate::options::{TableOptions, say};

/// Arguments of `dtz50 serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    tables: TableOptions,
    /// Address to listen on: an IP (port 9050) or IP:PORT; port 0 picks a
    /// free port.
    #[arg(long, default_value_t = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), DEFAULT_PORT), value_parser = parse_bind)]
    bind: SocketAddr,
}

/// `IP` or `IP:PORT`.
fn parse_bind(text: &str) -> Result<SocketAddr, String> {
    text.parse::<SocketAddr>()
        .or_else(|_| {
            text.parse::<IpAddr>()
                .map(|ip| SocketAddr::new(ip, DEFAULT_PORT))
        })
        .map_err(|_| {
            format!("'{text}' is not an address like 127.0.0.1 or 127.0.0.1:{DEFAULT_PORT}")
        })
}

/// Run `dtz50 serve` until Ctrl-C.
pub fn run(args: ServeArgs) -> Result<ExitCode> {
    let tables = args.tables.open()?;
    let mut said = Ok(());
    dtz50_server::run(tables, args.bind, |addr| {
        said = say(format!(
            "serving {} on http://{addr}/ (Ctrl-C stops)",
            args.tables.tables.display()
        ));
    })
    .with_context(|| format!("cannot serve on {}", args.bind))?;
    said?;
    Ok(ExitCode::SUCCESS)
}
