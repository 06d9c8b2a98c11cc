/**
 * Hosted images (launch spec 4 "uploads", endpoint rule 11, and the re-hosted `imageUrl` /
 * `bannerUrl`):
 *
 * - `hosted_images`: one row per distinct image, keyed by the SHA-256 of its bytes (hex), so the
 *   same bytes are stored once however often they are uploaded or fetched. The bytes live in the
 *   row (`bytea`, at most 10 MiB, TOASTed out of line by PostgreSQL); rows are never updated or
 *   deleted: the spec makes an upload permanent.
 * - `hosted_image_owners`: which account uploaded which image (one row per pair), and
 *   `hosted_image_usage` the bytes those images add up to per account, kept beside it in the same
 *   transaction, for the per-account storage bound.
 * - `image_upload_takes`: the per-key upload window. One row per upload taken, deleted once it
 *   leaves the window, so a key holds at most its per-minute limit of rows.
 *
 * `account_id` and `key_id` are plain text (no foreign keys: accounts and keys live in another
 * migration). Portable SQL: the same statements run on PGlite and on PostgreSQL 15.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE hosted_images (
      id text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
      format text NOT NULL CHECK (format IN ('jpeg', 'png', 'gif', 'webp')),
      width integer NOT NULL CHECK (width > 0),
      height integer NOT NULL CHECK (height > 0),
      byte_length integer NOT NULL CHECK (byte_length > 0),
      bytes bytea NOT NULL,
      created_at timestamptz NOT NULL
    )
  `
  yield* sql`
    CREATE TABLE hosted_image_owners (
      account_id text NOT NULL,
      image_id text NOT NULL REFERENCES hosted_images (id),
      created_at timestamptz NOT NULL,
      PRIMARY KEY (account_id, image_id)
    )
  `
  yield* sql`
    CREATE TABLE hosted_image_usage (
      account_id text PRIMARY KEY,
      stored_bytes bigint NOT NULL CHECK (stored_bytes >= 0),
      images integer NOT NULL CHECK (images >= 0)
    )
  `
  yield* sql`
    CREATE TABLE image_upload_takes (
      id bigserial PRIMARY KEY,
      key_id text NOT NULL,
      taken_at_ms bigint NOT NULL
    )
  `
  yield* sql`CREATE INDEX image_upload_takes_by_key ON image_upload_takes (key_id, taken_at_ms)`
})
