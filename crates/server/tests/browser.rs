//! The page in a real browser: headless Chromium (Debian's `chromium`),
//! driven over the Chrome DevTools Protocol, against the running server.
//! It loads a position, presses the arrow key on the clock slider across
//! the ply where a win becomes a draw, checks the verdict and the moves
//! recolour, plays a move with a mouse click, checks the page fits a phone,
//! and saves a screenshot (to `DTZ50_SCREENSHOT` if set, e.g.
//! `docs/serve.png`, else under Cargo's target directory).
//!
//! Without Chromium the test fails when `CI=true` and is skipped with a
//! note otherwise. `DTZ50_CHROMIUM` names another browser binary.

mod common;

use std::{
    env,
    net::TcpStream,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    thread,
    time::{Duration, Instant},
};

use base64::Engine;
use common::{generate_tables, start_server};
use serde_json::{Value, json};
use tungstenite::{Message, WebSocket};

/// A win in 11 plies for White: with the clock at 89 it survives by 0
/// plies, at 90 the fifty-move rule saves Black.
const FEN: &str = "8/8/8/8/8/2k5/8/KQ6 w - - 88 1";

/// The browser binary, or `None` if there is none.
fn chromium() -> Option<PathBuf> {
    if let Some(path) = env::var_os("DTZ50_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    env::var_os("PATH").and_then(|paths| {
        env::split_paths(&paths)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    })
}

/// Fail in CI, skip with a note elsewhere.
fn unavailable(why: &str) {
    assert!(
        env::var("CI").as_deref() != Ok("true"),
        "browser test cannot run in CI: {why}"
    );
    eprintln!("skipped: {why} (install Debian's chromium, or set DTZ50_CHROMIUM)");
}

/// The browser process, ended when the test ends.
struct Browser(Child);

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start headless Chromium with its DevTools on a free port; returns the
/// process and the browser's WebSocket address.
fn launch(binary: &Path, profile: &Path) -> Result<(Browser, String), String> {
    let child = Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--remote-debugging-port=0",
            "about:blank",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let mut browser = Browser(child);
    let port_file = profile.join("DevToolsActivePort");
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Ok(text) = std::fs::read_to_string(&port_file) {
            let mut lines = text.lines();
            if let (Some(port), Some(path)) = (lines.next(), lines.next()) {
                return Ok((browser, format!("ws://127.0.0.1:{port}{path}")));
            }
        }
        if let Ok(Some(status)) = browser.0.try_wait() {
            return Err(format!("{} exited at start: {status}", binary.display()));
        }
        thread::sleep(Duration::from_millis(100));
    }
    Err(format!(
        "{} did not open its DevTools port in 30 s",
        binary.display()
    ))
}

/// A DevTools connection, attached to one page.
struct Cdp {
    ws: WebSocket<TcpStream>,
    next: u64,
    session: Option<String>,
}

impl Cdp {
    fn connect(url: &str) -> Cdp {
        let authority = url
            .trim_start_matches("ws://")
            .split('/')
            .next()
            .expect("host:port");
        let stream = TcpStream::connect(authority).expect("DevTools port");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let (ws, _) = tungstenite::client(url, stream).expect("DevTools handshake");
        Cdp {
            ws,
            next: 0,
            session: None,
        }
    }

    /// Send a command and wait for its result (events are skipped).
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let mut message = json!({"id": self.next, "method": method, "params": params});
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        self.ws
            .send(Message::text(message.to_string()))
            .expect("send");
        loop {
            let reply = self.ws.read().expect("DevTools reply");
            let Message::Text(text) = reply else { continue };
            let v: Value = serde_json::from_str(&text).expect("JSON");
            if v["id"] == json!(self.next) {
                assert!(v["error"].is_null(), "{method}: {}", v["error"]);
                return v["result"].clone();
            }
        }
    }

    /// Evaluate `expression` in the page (promises awaited).
    fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        );
        assert!(
            r["exceptionDetails"].is_null(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Wait until the page has its answer and shows `fen` (with `clock`).
    fn settle(&mut self, clock: u32) {
        let deadline = Instant::now() + Duration::from_secs(20);
        let check = format!(
            "document.body?.dataset.state === 'ready' && document.getElementById('clock')?.value === '{clock}'"
        );
        while self.eval(&check) != json!(true) {
            assert!(
                Instant::now() < deadline,
                "page did not settle at clock {clock}"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn text(&mut self, id: &str) -> String {
        self.eval(&format!("document.getElementById('{id}').textContent"))
            .as_str()
            .expect("text")
            .to_owned()
    }

    fn first_move_class(&mut self) -> String {
        self.eval("document.querySelector('#moves button').className")
            .as_str()
            .expect("a move")
            .to_owned()
    }

    /// Press and release a key (the focused element gets it).
    fn key(&mut self, key: &str, code: u32) {
        for kind in ["rawKeyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}),
            );
        }
    }
}

#[test]
fn the_clock_slider_turns_a_win_into_a_draw_and_a_click_plays_a_move() {
    let Some(binary) = chromium() else {
        unavailable("no chromium on PATH");
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    generate_tables(dir.path(), &["KQvK"]);
    let server = start_server(dir.path());
    let profile = tempfile::tempdir().expect("profile dir");
    let (_browser, url) = match launch(&binary, profile.path()) {
        Ok(b) => b,
        Err(why) => {
            unavailable(&why);
            return;
        }
    };

    let mut cdp = Cdp::connect(&url);
    let target = cdp.call("Target.createTarget", json!({"url": "about:blank"}));
    let session = cdp.call(
        "Target.attachToTarget",
        json!({"targetId": target["targetId"], "flatten": true}),
    );
    cdp.session = Some(session["sessionId"].as_str().expect("session").to_owned());
    // A phone-sized window.
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": true}),
    );
    let page = format!("http://{}/#{}", server.addr(), FEN.replace(' ', "%20"));
    cdp.call("Page.navigate", json!({"url": page}));
    cdp.settle(88);
    assert!(
        cdp.text("verdict").starts_with("win: 11 plies"),
        "{}",
        cdp.text("verdict")
    );
    assert_eq!(cdp.first_move_class(), "win");

    // The slider, by keyboard: 89 still wins (0 plies to spare), 90 draws.
    cdp.eval("document.getElementById('clock').focus()");
    cdp.key("ArrowRight", 39);
    cdp.settle(89);
    let at_89 = cdp.text("verdict");
    assert!(at_89.starts_with("win: 11 plies"), "{at_89}");
    assert_eq!(cdp.first_move_class(), "win");
    cdp.key("ArrowRight", 39);
    cdp.settle(90);
    let at_90 = cdp.text("verdict");
    assert!(at_90.starts_with("draw by the clock"), "{at_90}");
    assert_eq!(cdp.text("clock-value"), "90");
    assert_eq!(cdp.first_move_class(), "draw", "the moves recolour too");
    assert_eq!(
        cdp.eval("document.getElementById('verdict').className"),
        json!("verdict draw")
    );
    cdp.key("ArrowLeft", 37);
    cdp.settle(89);

    // The phone-sized page does not scroll sideways.
    let fits = cdp.eval("document.documentElement.scrollWidth <= window.innerWidth");
    assert_eq!(fits, json!(true), "the page fits a phone-sized window");

    // The screenshot, at a desktop size for the README: the win at 89,
    // every other move already drawn by the clock.
    cdp.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": 960, "height": 720, "deviceScaleFactor": 1, "mobile": false}),
    );
    cdp.eval("window.scrollTo(0, 0)");
    let shot = cdp.call("Page.captureScreenshot", json!({"format": "png"}));
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().expect("screenshot data"))
        .expect("base64");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    let out = env::var_os("DTZ50_SCREENSHOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve.png"));
    std::fs::write(&out, png).expect("write screenshot");
    eprintln!("screenshot: {}", out.display());

    // A click on the best move (Qe4) plays it: Black to move, clock 90.
    let rect = cdp.eval(
        "(() => { const b = document.querySelector('#moves button'); b.scrollIntoView(); \
         const r = b.getBoundingClientRect(); return [b.dataset.uci, r.x + r.width / 2, r.y + r.height / 2]; })()",
    );
    assert_eq!(rect[0], json!("b1e4"));
    for kind in ["mousePressed", "mouseReleased"] {
        cdp.call(
            "Input.dispatchMouseEvent",
            json!({"type": kind, "x": rect[1], "y": rect[2], "button": "left", "clickCount": 1}),
        );
    }
    cdp.settle(90);
    let fen = cdp.eval("document.getElementById('fen').value");
    assert_eq!(fen, json!("8/8/8/8/4Q3/2k5/8/K7 b - - 90 1"));
    let after = cdp.text("verdict");
    assert!(after.starts_with("loss: 10 plies"), "{after}");
    let queen = cdp.eval("document.querySelector('[data-square=e4]').textContent");
    assert_eq!(queen, json!("♛"), "the board shows the move");

    server.shutdown().expect("clean shutdown");
}
