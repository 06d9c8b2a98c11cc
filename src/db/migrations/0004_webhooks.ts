/**
 * Webhooks (spec 2.6, 3.5, 4.4, 6): endpoints and the deliveries outbox.
 *
 * - `webhook_endpoints`: one row per registered endpoint, revoked rows kept (the list shows
 *   them). The signing secret is stored only sealed (AES-256-GCM, see
 *   `services/webhooks/SecretBox.ts`) beside its display prefix. `allow_loopback` records that
 *   the endpoint was registered as a loopback target under the test flag; deliveries to it still
 *   need the worker's own flag. `account_id` is plain text (no foreign key): accounts live in
 *   another migration.
 * - `webhook_deliveries`: the outbox. One row per (event, subscribed endpoint), written in the
 *   same transaction as the state change that causes the event. `id` is the event id, sent as
 *   `x-svc-delivery` and the body's `id` on every attempt. A pending row is due when
 *   `next_attempt_at` has passed; a worker claims it by moving `next_attempt_at` to the end of a
 *   lease and stamping `claim_token`, so a worker killed mid-delivery leaves a row that is due
 *   again once the lease ends. `attempts` counts sends started.
 *
 * Portable SQL only: the same statements run on PGlite and on PostgreSQL 15.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      account_id text NOT NULL,
      url text NOT NULL,
      events jsonb NOT NULL,
      secret_sealed text NOT NULL,
      secret_prefix text NOT NULL,
      allow_loopback boolean NOT NULL DEFAULT false,
      status text NOT NULL CHECK (status IN ('active', 'revoked')),
      created_at timestamptz NOT NULL,
      rotated_at timestamptz,
      revoked_at timestamptz
    )
  `
  yield* sql`CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, created_at)`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id text NOT NULL,
      endpoint_id text NOT NULL REFERENCES webhook_endpoints (id),
      account_id text NOT NULL,
      event text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      claim_token text,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      PRIMARY KEY (endpoint_id, id)
    )
  `
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_recent ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`
})
