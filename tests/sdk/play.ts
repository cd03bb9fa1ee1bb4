// Plays round 1 of a two-player game with the generated TypeScript client, as an
// integrator would: every move taken from the view's legal_moves and posted back as
// it is, the events read through their typed fields, a stale If-Match answered with
// a typed 412 problem. Compiled with `tsc --strict`; run as `node play.js BASE_URL` for a
// service in AUTH_MODE=open, `node play.js BASE_URL APP_KEY` in AUTH_MODE=apps: the app's
// backend creates the game for two of its players and mints their tokens, which play it.
import { createClient } from "three-thirteen-client";
import type { Schemas, ThreeThirteenClient } from "three-thirteen-client";

type Move = Schemas["Move"];
type PlayerView = Schemas["PlayerView"];

function check(condition: boolean, message: string): void {
  if (!condition) {
    throw new Error(message);
  }
}

const base = process.argv[2];
const appKey = process.argv[3]; // AUTH_MODE=apps: the app's secret key
if (base === undefined) {
  throw new Error("usage: node play.js BASE_URL [APP_KEY]");
}
const seats = new Map<number, ThreeThirteenClient>();

/** AUTH_MODE=open: anyone creates the game; each seat plays with its seat's token. */
async function openGame(): Promise<{ gameId: string; reader: ThreeThirteenClient }> {
  const anyone = createClient(base);
  const created = await anyone.POST("/v1/games", {
    body: { players: [{ name: "ann" }, { name: "bob" }] },
  });
  if (created.data === undefined) {
    throw new Error(`create: ${created.error.code} ${created.error.detail}`);
  }
  check(created.data.status === "playing", "both seats taken: the game plays");
  for (const player of created.data.players) {
    check(player.bot === null, "two human seats");
    if (player.token !== undefined) {
      seats.set(player.seat, createClient(base, player.token));
    }
  }
  return { gameId: created.data.id, reader: anyone };
}

/** AUTH_MODE=apps: the app's backend creates the game for its players u1 and u2 and
 * mints a token for each; each player finds its seat in its games and plays with it. */
async function appsGame(key: string): Promise<{ gameId: string; reader: ThreeThirteenClient }> {
  const backend = createClient(base, key);
  const created = await backend.POST("/v1/games", {
    body: {
      players: [
        { name: "ann", player_id: "u1" },
        { name: "bob", player_id: "u2" },
      ],
    },
  });
  if (created.data === undefined) {
    throw new Error(`create: ${created.error.code} ${created.error.detail}`);
  }
  check(created.data.status === "playing", "both seats taken: the game plays");
  const gameId = created.data.id;
  for (const player of created.data.players) {
    check(player.token === undefined, "a player's seat has no token of its own");
    if (player.player_id === undefined) {
      throw new Error(`seat ${player.seat} is no player's`);
    }
    const minted = await backend.POST("/v1/players/{player_id}/tokens", {
      params: { path: { player_id: player.player_id } },
      body: { name: player.name },
    });
    if (minted.data === undefined) {
      throw new Error(`mint: ${minted.error.code} ${minted.error.detail}`);
    }
    const device = createClient(base, minted.data.token);
    const mine = await device.GET("/v1/me/games");
    if (mine.data === undefined) {
      throw new Error(`my games: ${mine.error.code}`);
    }
    const found = mine.data.games.filter((game) => game.id === gameId).map((game) => game.seat);
    check(found.length === 1 && found[0] === player.seat, "the player's games show its seat");
    seats.set(player.seat, device);
  }
  return { gameId, reader: backend }; // the app reads its game
}

const { gameId, reader } = appKey === undefined ? await openGame() : await appsGame(appKey);
check(seats.size === 2, "two seats to play");

function seatClient(seat: number): ThreeThirteenClient {
  const client = seats.get(seat);
  if (client === undefined) {
    throw new Error(`no token for seat ${seat}`);
  }
  return client;
}

const path = { game_id: gameId };

async function viewOf(seat: number): Promise<PlayerView> {
  const answer = await seatClient(seat).GET("/v1/games/{game_id}/view", { params: { path } });
  if (answer.data === undefined) {
    throw new Error(`view: ${answer.error.code}`);
  }
  return answer.data;
}

/** Go out when a legal move does; else draw from the stock; else discard the costliest
 * card of the deadwood (the last), else the first legal discard. */
function choose(view: PlayerView): Move {
  const moves = view.legal_moves;
  const goOut = moves.find((move) => move.type === "go_out");
  const draw = moves.find((move) => move.type === "draw" && move.source === "stock");
  const deadwood = view.arrangement?.deadwood ?? [];
  const worst = deadwood[deadwood.length - 1];
  const discard =
    moves.find((move) => move.type === "discard" && move.card === worst) ??
    moves.find((move) => move.type === "discard");
  const chosen = goOut ?? draw ?? discard;
  if (chosen === undefined) {
    throw new Error("no legal move");
  }
  return chosen;
}

let draws = 0;
let staleChecked = false;
for (let turn = 0; turn < 200; turn += 1) {
  const game = await reader.GET("/v1/games/{game_id}", { params: { path } });
  if (game.data === undefined) {
    throw new Error(`game: ${game.error.code}`);
  }
  const round = game.data.round;
  if (round === null || round.number > 1) {
    break; // round 1 is over
  }
  const view = await viewOf(round.turn);
  const move = choose(view);
  if (!staleChecked) {
    const stale = await seatClient(round.turn).POST("/v1/games/{game_id}/moves", {
      params: { path, header: { "If-Match": `"${view.version - 1}"` } },
      body: move,
    });
    check(stale.response.status === 412, "a stale If-Match is refused");
    check(stale.error?.code === "PRECONDITION_FAILED", "with its code");
    check(stale.error?.current_version === view.version, "and the current version");
    staleChecked = true;
  }
  const played = await seatClient(round.turn).POST("/v1/games/{game_id}/moves", {
    params: { path, header: { "If-Match": `"${view.version}"` } },
    body: move,
  });
  if (played.data === undefined) {
    throw new Error(`move ${JSON.stringify(move)}: ${played.error.code} ${played.error.detail}`);
  }
  check(played.data.version === view.version + 1, "a move makes a version");
  check(
    played.response.headers.get("ETag")?.startsWith(`"${played.data.version}.`) ?? false,
    "ETag names the version (and the last event)",
  );
  if (move.type === "draw") {
    draws += 1;
  }
}

const events = await seatClient(0).GET("/v1/games/{game_id}/events", {
  params: { path, query: { after: "0" } },
});
if (events.data === undefined) {
  throw new Error(`events: ${events.error.code}`);
}
// The JSON page is typed as itself, with no narrowing: this fails to compile if the
// spec lets a stream's media type into listEvents' 200 (`EventsOut | string`).
const page: Schemas["EventsOut"] = events.data;
check(page.last_seq >= page.events.length, "last_seq is the cursor past the page");
let publicDraws = 0;
let firstHand: number | undefined;
let roundEnded = false;
for (const event of page.events) {
  switch (event.type) {
    case "dealt":
      check(event.seat === 0 && event.private, "only seat 0's own hand");
      firstHand ??= event.hand.length;
      break;
    case "drew":
      if (event.private !== true) {
        publicDraws += 1;
        check(event.source === "stock" && event.card === undefined, "a stock card stays hidden");
      }
      break;
    case "round_ended": {
      roundEnded = true;
      const scored = event.result.hands.map((hand) => hand.points);
      check(event.result.number === 1, "round 1 ended");
      check(
        event.totals.every((total, seat) => total === scored[seat]),
        "after round 1 the totals are its scores",
      );
      break;
    }
    default:
      break;
  }
}
check(firstHand === 3, "round 1 deals three cards");
check(publicDraws === draws, "every draw is an event");
check(roundEnded, "round 1 ended");
console.log(`played round 1 of ${gameId}: ${draws} draws, ${events.data.last_seq} events`);
