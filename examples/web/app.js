// Three Thirteen through the public API, from a page on another origin.
// Plain fetch and EventSource; read it top to bottom.  docs/API.md is the contract.
"use strict";

const API = (new URLSearchParams(location.search).get("api") || "http://127.0.0.1:8000")
  .replace(/\/+$/, "");

// What the page saw: handy in the console, and what the test suite checks.
window.record = {
  events: [],        // every event the stream delivered, in order (less those a reset dropped)
  resets: [],        // every reset: the game's history changed (its store lost changes)
  sources: 0,        // EventSources opened (each with a fresh ticket)
  reconnects: 0,     // times the browser reconnected a source by itself
  notModified: 0,    // views answered 304 to If-None-Match
  retries: [],       // {path, status, key}: requests sent again (same Idempotency-Key)
  inflight: {},      // "<method> <path>": when (ms) the request now waiting for its answer was sent
  moves: [],         // {move, key, status, at, replayed}
  conflicts: 0,      // moves answered 412 (stale If-Match)
  lobbyPages: [],    // the game ids of each lobby page read
  seat: [],          // what happened to the lobby seat: joined, renamed, left
  errors: [],        // messages shown to the user
  finished: null,    // the game_finished event
};

const $ = (id) => document.getElementById(id);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------- HTTP

// An Idempotency-Key must be random (32+ hex digits).  crypto.randomUUID() would
// do, but only in secure contexts; getRandomValues works everywhere.
function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

class ApiError extends Error {
  constructor(status, problem) {
    super(`${status} ${problem.code || ""}: ${problem.detail || problem.title || ""}`);
    this.status = status;
    this.problem = problem;
  }
}

// One request.  A 503 or 429 is sent again after its Retry-After, and a network
// failure (an instance restarting) or an attempt left unanswered for 10 s after a
// short pause, for up to 30 s: always with the same Idempotency-Key, so a write
// that did happen is answered, not done twice.  Every write here carries a key (a stream ticket needs none: two
// tickets do no harm).  `path` is under API, or a whole URL.
async function call(method, path, {token, body, headers = {}, key} = {}) {
  const sent = {...headers};
  if (token) sent.Authorization = `Bearer ${token}`;
  if (key) sent["Idempotency-Key"] = key;
  if (body !== undefined) sent["Content-Type"] = "application/json";
  const init = {method, headers: sent};
  // A request with If-Match or If-None-Match gets the fetch cache mode "no-store"
  // by default, and Chromium then skips its preflight cache: every move and view
  // would cost an OPTIONS round trip despite Access-Control-Max-Age.  The API
  // answers everything with Cache-Control: no-store, so nothing is ever cached
  // and "force-cache" changes only that: the preflight is reused.
  if (sent["If-Match"] || sent["If-None-Match"]) init.cache = "force-cache";
  if (body !== undefined) init.body = JSON.stringify(body);
  const giveUp = Date.now() + 30000;
  for (let pause = 250; ; pause = Math.min(pause * 2, 2000)) {
    let answer;
    const pending = `${method} ${path}`;
    record.inflight[pending] = Date.now();
    try {
      // a fetch has no deadline of its own: one whose answer never comes would
      // hold the page (and its move) forever
      init.signal = AbortSignal.timeout(10000);
      answer = await fetch(/^https?:/.test(path) ? path : API + path, init);
    } catch (error) {  // no answer (in time), or one CORS refused: see the console
      if (Date.now() + pause > giveUp) throw error;
      record.retries.push({path, status: 0, key: key || null});
      await sleep(pause);
      continue;
    } finally {
      delete record.inflight[pending];
    }
    if (answer.status !== 503 && answer.status !== 429) return answer;
    const wait = 1000 * (Number(answer.headers.get("Retry-After")) || 1);
    if (Date.now() + wait > giveUp) return answer;
    record.retries.push({path, status: answer.status, key: key || null});
    await sleep(wait);
  }
}

// The JSON of a 2xx answer, or an ApiError with the problem.
async function json(answer) {
  const body = await answer.json().catch(() => ({}));
  if (!answer.ok) throw new ApiError(answer.status, body);
  return body;
}

// ---------------------------------------------------------------- a game against a bot

let game = null;  // {id, token, seat, view, etag, source, lastSeq, busy, again, over}

async function newGame() {
  if (game && game.source) game.source.close();
  const players = [{name: $("name").value}, {name: "Bot", bot: $("bot-level").value}];
  const created = await json(await call("POST", "/v1/games", {body: {players}, key: newKey()}));
  const me = created.players.find((p) => p.token);
  game = {id: created.id, token: me.token, seat: me.seat, view: null, etag: null,
          source: null, lastSeq: 0, lastId: "0", busy: false, again: false, over: false};
  $("status").textContent = `Game ${game.id}: you are seat ${game.seat}.`;
  $("refresh").disabled = false;
  follow().catch(showError);
  update();
}

// Events, as they happen, over Server-Sent Events.  EventSource cannot send an
// Authorization header, so the token buys a stream ticket in a normal request.
// The browser reconnects the source by itself (an instance restarting, a network
// blip), sending Last-Event-ID: the ticket holds for those reconnects.  Only when
// the browser gives up (readyState CLOSED: the ticket expired or the seat changed
// hands) does the page buy a new ticket and resume after the last event it saw
// (its id, `<seq>.<tag>`).  A `reset` frame says the game's history is not the
// one the page saw (the server's store lost changes): the page forgets the events
// after the point both share and reads the view again.
const TYPES = ["game_created", "player_joined", "game_started", "round_started", "dealt",
  "drew", "discarded", "turn", "went_out", "go_out_claim", "go_out_refused", "laid_down",
  "round_ended", "stock_reshuffled", "autopilot_on", "autopilot_off", "game_finished",
  "rematch_created", "player_left", "player_renamed", "player_resigned", "game_cancelled"];

async function follow() {
  const current = game;
  const path = `/v1/games/${encodeURIComponent(current.id)}`;
  const {ticket} = await json(await call("POST", `${path}/stream-tickets`,
                                         {token: current.token}));
  if (game !== current) return;
  const query = `ticket=${encodeURIComponent(ticket)}&after=${current.lastId}`;
  const source = new EventSource(`${API}${path}/events?${query}`);
  current.source = source;
  record.sources += 1;
  for (const type of TYPES) {  // every frame has an event type: onmessage sees none
    source.addEventListener(type, (message) => onEvent(current, JSON.parse(message.data)));
  }
  source.addEventListener("reset", (message) => onReset(current, JSON.parse(message.data)));
  source.onerror = () => {
    if (source.readyState === EventSource.CONNECTING) {
      record.reconnects += 1;  // the browser reconnects after the `retry:` hint
    } else if (game === current && !current.over) {
      source.close();
      setTimeout(() => follow().catch(showError), 1000);
    }
  };
}

function onEvent(current, event) {
  if (event.seq <= current.lastSeq) {  // never happens: say so loudly if it does
    showError(new Error(`event ${event.seq} again (after ${current.lastSeq})`));
    return;
  }
  current.lastSeq = event.seq;
  current.lastId = event.id;
  record.events.push(event);
  const item = document.createElement("li");
  item.dataset.seq = event.seq;
  item.textContent = describe(event);
  $("events").prepend(item);
  if (event.type === "game_finished") {
    current.over = true;
    record.finished = event;
    current.source.close();
  }
  update();
}

function onReset(current, reset) {
  current.lastSeq = reset.shared_seq;
  current.lastId = reset.shared_id;
  record.resets.push(reset);
  record.events = record.events.filter((event) => event.seq <= reset.shared_seq);
  for (const item of [...$("events").children]) {
    if (Number(item.dataset.seq) > reset.shared_seq) item.remove();
  }
  current.etag = null;  // the view we hold may be of the lost history: read it whole
  update();
}

function describe(event) {
  const {seq, type, ...rest} = event;
  return `#${seq} ${type} ${JSON.stringify(rest)}`;
}

// Re-read the view after events (several at once collapse into one read), and
// play when it is our turn and autoplay is on.
async function update() {
  if (!game) return;
  if (game.busy) { game.again = true; return; }
  game.busy = true;
  try {
    do {
      game.again = false;
      await readView();
      if ($("autoplay").checked) await playTurn();
    } while (game.again);
  } catch (error) {
    showError(error);
  } finally {
    game.busy = false;
  }
}

// The seat's view, conditional on the version we hold: 304 costs the server
// almost nothing and tells us nothing changed.  (A fetch that sets If-None-Match
// itself gets the 304 as it is: the browser has no copy to fill it in from.)
async function readView() {
  const headers = game.etag ? {"If-None-Match": game.etag} : {};
  const answer = await call("GET", `/v1/games/${encodeURIComponent(game.id)}/view`,
                            {token: game.token, headers});
  if (answer.status === 304) {
    record.notModified += 1;
    return;
  }
  setView(await json(answer), answer.headers.get("ETag"));
}

function setView(view, etag) {
  game.view = view;
  game.etag = etag;
  render();
}

const myTurn = (view) => view.status === "playing" && view.round
  && view.round.turn === view.seat && view.legal_moves.length > 0;

// A simple strategy: go out when we can, else draw from the stock and throw
// away the costliest card that is not in a meld.
function choose(view) {
  const moves = view.legal_moves;
  const goOut = moves.find((m) => m.type === "go_out");
  if (goOut) return goOut;
  if (view.round.phase === "draw") return moves.find((m) => m.source === "stock") || moves[0];
  const deadwood = (view.arrangement && view.arrangement.deadwood) || [];
  const worst = deadwood[deadwood.length - 1];
  return moves.find((m) => m.type === "discard" && m.card === worst) || moves[0];
}

async function playTurn() {
  while ($("autoplay").checked && myTurn(game.view)) {
    if (!(await play(choose(game.view)))) return;
  }
}

// A move, conditional on the version we saw (If-Match): if anything happened
// since, the answer is 412 and nothing changes.  The Idempotency-Key makes the
// retries in call() safe.  True when the move was made.
async function play(move) {
  const key = newKey();
  const answer = await call("POST", `/v1/games/${encodeURIComponent(game.id)}/moves`,
                            {token: game.token, body: move, key, headers: {"If-Match": game.etag}});
  record.moves.push({move, key, status: answer.status, at: Date.now(),
                     replayed: answer.headers.get("Idempotent-Replayed") === "true"});
  if (answer.status === 412) {  // stale: read the view again and decide afresh
    record.conflicts += 1;
    game.etag = null;
    await readView();
    return true;
  }
  setView(await json(answer), answer.headers.get("ETag"));
  return true;
}

// ---------------------------------------------------------------- drawing the board

function cards(list) {
  return list.map((c) => `<span class="card${/[DH]$/.test(c) ? " red" : ""}">${c}</span>`).join("");
}

function render() {
  const view = game.view;
  $("board").hidden = false;
  if (view.status === "finished") {
    const winners = view.winners.map((s) => view.players[s].name).join(", ");
    $("status").textContent = `Game over: ${winners} won.`;
  } else if (view.round) {
    $("status").textContent = myTurn(view) ? `Your turn (${view.round.phase}).`
      : `Waiting for ${view.players[view.round.turn].name}.`;
  }
  if (view.round) {
    $("round").textContent = `${view.round.number} of ${view.rounds_total}`;
    $("wild").textContent = view.round.wild_rank;
    $("discard").textContent = view.round.discard_top || "-";
    $("stock").textContent = view.round.stock_size;
  }
  $("scores").textContent = view.players.map((p) => `${p.name} ${p.total}`).join(", ");
  $("hand").innerHTML = cards(view.hand);
  const moves = $("moves");
  moves.textContent = "";
  for (const move of myTurn(view) ? view.legal_moves : []) {
    const button = document.createElement("button");
    button.textContent = move.type === "draw" ? `draw from ${move.source}`
      : move.type === "discard" ? `discard ${move.card}` : `go out, discarding ${move.discard}`;
    button.onclick = () => play(move).catch(showError);
    moves.append(button);
  }
}

function showError(error) {
  record.errors.push(String(error.message || error));
  $("status").textContent = `Error: ${error.message || error}`;
  console.error(error);
}

// ---------------------------------------------------------------- the lobby

let nextPage = null;  // the URL of the lobby's next page, from the Link header

// The lobby pages by the `Link: <...>; rel="next"` header (the body's `next`
// cursor says the same).  A cross-origin page can read it only because the API
// lists Link in Access-Control-Expose-Headers.
async function listLobby(path) {
  const answer = await call("GET", path);
  const page = await json(answer);
  const link = answer.headers.get("Link") || "";
  const next = /<([^>]*)>\s*;\s*rel="next"/.exec(link);
  nextPage = next ? new URL(next[1], API).href : null;
  $("lobby-next").disabled = !nextPage;
  record.lobbyPages.push(page.games.map((g) => g.id));
  const list = $("lobby");
  list.textContent = "";
  for (const entry of page.games) {
    const item = document.createElement("li");
    const names = entry.players.map((p) => p.name).join(", ");
    item.textContent = `${entry.ruleset}, ${entry.seats.taken}/${entry.seats.total} seats (${names}) `;
    if (entry.seats.open.length > 0) {
      const button = document.createElement("button");
      button.textContent = "Join";
      button.dataset.join = entry.id;
      button.onclick = () => join(entry.id).catch(showError);
      item.append(button);
    }
    list.append(item);
  }
}

let seat = null;  // {id, token, seat, name}: a seat taken in the lobby

async function join(gameId) {
  const path = `/v1/games/${encodeURIComponent(gameId)}/players`;
  const name = $("name").value;
  const joined = await json(await call("POST", path, {body: {name}, key: newKey()}));
  seat = {id: gameId, token: joined.token, seat: joined.seat, name};
  record.seat.push({action: "joined", game: gameId, seat: joined.seat});
  showSeat();
}

// Until the game starts, the seat's holder may rename it (PATCH) or leave (DELETE).
async function rename() {
  const path = `/v1/games/${encodeURIComponent(seat.id)}/seat`;
  const name = $("rename-name").value;
  const out = await json(await call("PATCH", path,
                                    {token: seat.token, body: {name}, key: newKey()}));
  seat.name = out.name;
  record.seat.push({action: "renamed", game: seat.id, name: out.name});
  showSeat();
}

async function leave() {
  const path = `/v1/games/${encodeURIComponent(seat.id)}/seat`;
  await json(await call("DELETE", path, {token: seat.token, key: newKey()}));
  record.seat.push({action: "left", game: seat.id});
  seat = null;  // the token is void now
  showSeat();
}

function showSeat() {
  $("seat").hidden = !seat;
  if (!seat) return;
  $("seat-number").textContent = seat.seat;
  $("seat-game").textContent = seat.id;
  $("seat-name").textContent = seat.name;
}

// ---------------------------------------------------------------- wiring

$("api").textContent = API;
const lobbySize = () => Math.min(100, Math.max(1, Number($("lobby-size").value) || 5));
$("new-game").onclick = () => newGame().catch(showError);
$("autoplay").onchange = () => update();
$("refresh").onclick = () => update();
$("lobby-list").onclick = () => listLobby(`/v1/games?status=waiting&limit=${lobbySize()}`)
  .catch(showError);
$("lobby-next").onclick = () => listLobby(nextPage).catch(showError);
$("rename").onclick = () => rename().catch(showError);
$("leave").onclick = () => leave().catch(showError);
