// dtz50's page: a position, its verdict under the halfmove clock, and every
// move best first. Everything comes from the server's /standard answer; the
// slider re-asks with the clock field of the FEN changed, so the page shows
// exactly what the tables say at each ply.
"use strict";

const START = "8/8/8/4k3/8/8/8/R3K3 w - - 0 1";
const GLYPHS = { k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟" };
const NAMES = {
  "win": "win", "cursed-win": "win drawn by the clock", "draw": "draw",
  "blessed-loss": "loss drawn by the clock", "loss": "loss", "unknown": "unknown",
};
// The mover's category of a move is the reverse of the one it leaves the opponent.
const FLIP = {
  "win": "loss", "cursed-win": "blessed-loss", "draw": "draw",
  "blessed-loss": "cursed-win", "loss": "win", "unknown": "unknown",
};
// How each category is coloured: a result the clock turns is a draw.
const TONE = {
  "win": "win", "cursed-win": "draw", "draw": "draw",
  "blessed-loss": "draw", "loss": "loss", "unknown": "unknown",
};

const $ = (id) => document.getElementById(id);
let fen = "";
let asked = 0;

function fields(f) { return f.trim().split(/[\s_]+/); }

function withClock(f, clock) {
  const parts = fields(f);
  while (parts.length < 6) parts.push(parts.length === 4 ? "0" : parts.length === 5 ? "1" : "-");
  parts[4] = String(clock);
  return parts.join(" ");
}

function drawBoard(f) {
  const board = $("board");
  board.textContent = "";
  const rows = fields(f)[0].split("/");
  for (let r = 0; r < 8; r++) {
    let file = 0;
    for (const ch of rows[r] || "") {
      if (/[1-8]/.test(ch)) {
        for (let i = 0; i < Number(ch); i++) square(board, r, file++, "");
      } else {
        square(board, r, file++, ch);
      }
    }
    while (file < 8) square(board, r, file++, "");
  }
}

function square(board, rank, file, piece) {
  const sq = document.createElement("div");
  sq.className = "sq " + ((rank + file) % 2 ? "dark" : "light");
  sq.dataset.square = "abcdefgh"[file] + (8 - rank);
  if (piece) {
    sq.textContent = GLYPHS[piece.toLowerCase()] || "?";
    sq.classList.add(piece === piece.toUpperCase() ? "pw" : "pb");
  }
  board.appendChild(sq);
}

function verdictText(r) {
  if (r.verdict) return r.verdict.text;
  if (r.checkmate) return "checkmate";
  if (r.stalemate) return "stalemate";
  return "unknown: the tables cannot answer this position (castling rights, too many pieces or a missing table)";
}

function moveLabel(m) {
  const mine = FLIP[m.category];
  if (m.dtz === null) return NAMES[mine];
  if (m.checkmate) return NAMES[mine] + ", mate";
  if (m.dtz === 0) return NAMES[mine];
  return NAMES[mine] + ", DTZ " + Math.abs(m.dtz);
}

function drawMoves(r) {
  const box = $("moves");
  box.textContent = "";
  const groups = [["Winning moves", ["win"]], ["Drawing moves", ["cursed-win", "draw", "blessed-loss"]],
                  ["Losing moves", ["loss"]], ["Unknown", ["unknown"]]];
  for (const [title, cats] of groups) {
    const moves = r.moves.filter((m) => cats.includes(FLIP[m.category]));
    if (!moves.length) continue;
    const h = document.createElement("h2");
    h.textContent = title;
    const ul = document.createElement("ul");
    for (const m of moves) {
      const li = document.createElement("li");
      const b = document.createElement("button");
      b.type = "button";
      b.className = TONE[FLIP[m.category]];
      b.dataset.uci = m.uci;
      const san = document.createElement("span");
      san.className = "san";
      san.textContent = m.san;
      const what = document.createElement("span");
      what.textContent = moveLabel(m);
      b.append(san, what);
      b.addEventListener("click", () => show(m.fen));
      li.appendChild(b);
      ul.appendChild(li);
    }
    box.append(h, ul);
  }
  if (!r.moves.length) box.textContent = "No legal moves.";
}

async function show(f) {
  fen = f.trim();
  $("fen").value = fen;
  const clock = Number(fields(fen)[4] || 0);
  $("clock").value = String(clock);
  $("clock-value").textContent = String(clock);
  history.replaceState(null, "", "#" + encodeURIComponent(fen));
  drawBoard(fen);
  const ticket = ++asked;
  document.body.dataset.state = "loading";
  let r;
  try {
    const res = await fetch("/standard?fen=" + encodeURIComponent(fen));
    const text = await res.text();
    if (!res.ok) throw new Error(text.trim());
    r = JSON.parse(text);
  } catch (e) {
    if (ticket !== asked) return;
    $("verdict").className = "verdict unknown";
    $("verdict").textContent = String(e.message || e);
    $("moves").textContent = "";
    document.body.dataset.state = "error";
    return;
  }
  if (ticket !== asked) return;
  $("rule").textContent = r.rule === "none" ? "no move-count rule" : r.rule + "-move rule";
  const limit = r.rule === "75" ? 150 : 100;
  $("clock").max = String(Math.max(limit, clock));
  const v = $("verdict");
  v.textContent = verdictText(r);
  v.className = "verdict " + (r.verdict ? r.verdict.outcome : TONE[r.category]);
  drawMoves(r);
  document.body.dataset.state = "ready";
}

$("fen-form").addEventListener("submit", (e) => { e.preventDefault(); show($("fen").value); });
$("clock").addEventListener("input", () => {
  $("clock-value").textContent = $("clock").value;
  show(withClock(fen, $("clock").value));
});
show(location.hash.length > 1 ? decodeURIComponent(location.hash.slice(1)) : START);
