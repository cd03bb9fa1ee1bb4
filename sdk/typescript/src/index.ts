// The package's entry: the types generated from the service's OpenAPI document
// (./schema.ts, written by `make sdk`) and an openapi-fetch client typed with them.
import createFetchClient from "openapi-fetch";
import type { Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** Every named schema of the spec: `Schemas["PlayerView"]`, `Schemas["Move"]`... */
export type Schemas = components["schemas"];

/** The media types the client reads: JSON answers and problem details (the event
 * streams, text/event-stream and NDJSON, are read with EventSource or fetch). */
export type JsonMedia = "application/json" | "application/problem+json";

export type ThreeThirteenClient = Client<paths, JsonMedia>;

/** A client of the service at `baseUrl`; with `token`, it acts for that seat. */
export function createClient(baseUrl: string, token?: string): ThreeThirteenClient {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  return createFetchClient<paths, JsonMedia>({ baseUrl, headers });
}
