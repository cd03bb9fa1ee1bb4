// The package's entry: the types generated from the service's OpenAPI document
// (./schema.ts, written by `make sdk`) and an openapi-fetch client typed with them.
import createFetchClient from "openapi-fetch";
import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** Every named schema of the spec: `Schemas["PlayerView"]`, `Schemas["Move"]`... */
export type Schemas = components["schemas"];

/** An openapi-fetch client of the whole API: every answer typed by its operation's
 * JSON (or problem) schema. The event streams (text/event-stream, NDJSON) are not in the
 * operations' answers, so `GET /v1/games/{game_id}/events` reads as `EventsOut`; follow
 * a stream with EventSource or fetch (docs/SDK.md). */
export type ThreeThirteenClient = Client<paths>;

/** A client of the service at `baseUrl`; with `token` (an app's secret key, a player
 * token or a seat's token: each operation's `security` in the spec says which it takes),
 * every request carries it as `Authorization: Bearer <token>`. */
export function createClient(baseUrl: string, token?: string): ThreeThirteenClient {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  return createFetchClient<paths>({ baseUrl, headers });
}
