/**
 * The hosted images in PostgreSQL (`hosted_images`, migration 0011): content-addressed storage,
 * the per-account storage bound and the per-key upload window.
 *
 * Invariants:
 * - An image's id is the SHA-256 of its bytes: the same bytes are one row, stored once, and a
 *   stored row never changes (insert-if-absent; nothing updates or deletes it).
 * - Upload window: at most `limit` uploads per key in any `windowMs` (a sliding window). The
 *   count and the take are one transaction under a per-key advisory lock, so the limit holds
 *   across processes: N concurrent uploads at the limit take exactly the limit.
 * - Storage bound: the distinct images an account has uploaded add up to at most
 *   `storedBytesMax`; an image the account already uploaded adds nothing. Checked and charged in
 *   the transaction that stores the image, under a per-account advisory lock; a refusal stores
 *   nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { takeFromWindow, type WindowTake } from "../../db/WindowTakes.js"
import { createHash } from "node:crypto"
import type { ImageFormat } from "./ImageFormat.js"
import type { RecognizedImage } from "./ImageProcessor.js"
import { imageRefused, type ImageRefused } from "./ImageRefused.js"

export interface StoredImageInfo {
  readonly id: string
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
  readonly byteLength: number
}

export interface StoredImage extends StoredImageInfo {
  readonly bytes: Uint8Array
}

export type UploadTake = WindowTake

export const imageIdOf = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")

interface InfoRow {
  readonly id: string
  readonly format: ImageFormat
  readonly width: number
  readonly height: number
  readonly byte_length: number
}

const toInfo = (r: InfoRow): StoredImageInfo => ({ id: r.id, format: r.format, width: r.width, height: r.height, byteLength: r.byte_length })

const lockKey = (sql: SqlClient.SqlClient, key: string) => sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`

/** Inserts the image unless its bytes are already stored; the stored row's description. */
const insertImage = (sql: SqlClient.SqlClient, image: RecognizedImage, now: Date) => {
  const id = imageIdOf(image.bytes)
  return sql`
    INSERT INTO hosted_images (id, format, width, height, byte_length, bytes, created_at)
    VALUES (${id}, ${image.format}, ${image.width}, ${image.height}, ${image.bytes.byteLength}, ${image.bytes}, ${now})
    ON CONFLICT (id) DO NOTHING`.pipe(
    Effect.as<StoredImageInfo>({ id, format: image.format, width: image.width, height: image.height, byteLength: image.bytes.byteLength })
  )
}

/** Stores the image (content-addressed) with no owner: a re-hosted `imageUrl` / `bannerUrl`. */
export const storeImage = (image: RecognizedImage, nowMs: number): Effect.Effect<StoredImageInfo, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => insertImage(sql, image, new Date(nowMs)))

/**
 * Stores an uploaded image for `accountId`, charging its bytes to the account unless it already
 * uploaded the same bytes; `storage_full` when the charge would pass `storedBytesMax`.
 */
export const storeUpload = (
  accountId: string,
  image: RecognizedImage,
  storedBytesMax: number,
  nowMs: number
): Effect.Effect<StoredImageInfo, ImageRefused | SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql.withTransaction(
      Effect.gen(function* () {
        const now = new Date(nowMs)
        const id = imageIdOf(image.bytes)
        yield* lockKey(sql, `image-usage:${accountId}`)
        const owned = yield* sql<{ n: number }>`
          SELECT count(*)::int AS n FROM hosted_image_owners WHERE account_id = ${accountId} AND image_id = ${id}`
        if ((owned[0]?.n ?? 0) > 0) return yield* insertImage(sql, image, now)
        const usage = yield* sql<{ stored_bytes: string }>`SELECT stored_bytes FROM hosted_image_usage WHERE account_id = ${accountId}`
        const storedBytes = Number(usage[0]?.stored_bytes ?? 0)
        if (storedBytes + image.bytes.byteLength > storedBytesMax) {
          return yield* imageRefused(
            "upload",
            "storage_full",
            `This account's hosted images may add up to ${storedBytesMax} bytes; ${storedBytes} are used`,
            { limitBytes: storedBytesMax }
          )
        }
        const info = yield* insertImage(sql, image, now)
        yield* sql`INSERT INTO hosted_image_owners (account_id, image_id, created_at) VALUES (${accountId}, ${id}, ${now})`
        yield* sql`
          INSERT INTO hosted_image_usage (account_id, stored_bytes, images) VALUES (${accountId}, ${image.bytes.byteLength}, 1)
          ON CONFLICT (account_id) DO UPDATE
          SET stored_bytes = hosted_image_usage.stored_bytes + EXCLUDED.stored_bytes, images = hosted_image_usage.images + 1`
        return info
      })
    )
  )

/**
 * Takes one upload from the key's window of `windowMs`, or says when the oldest upload in it
 * leaves (`retryAfterMs`, at least 1). A `limit` of 0 allows none.
 */
export const takeUpload = (
  keyId: string,
  limit: number,
  windowMs: number,
  nowMs: number
): Effect.Effect<UploadTake, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => takeFromWindow(sql, { table: "image_upload_takes", columns: { key_id: keyId } }, limit, windowMs, nowMs))

/** The stored image's description, without its bytes. */
export const lookupImage = (id: string): Effect.Effect<Option.Option<StoredImageInfo>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<InfoRow>`SELECT id, format, width, height, byte_length FROM hosted_images WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), toInfo))
    )
  )

/** The stored image with its bytes. */
export const readImage = (id: string): Effect.Effect<Option.Option<StoredImage>, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<InfoRow & { readonly bytes: Uint8Array }>`
      SELECT id, format, width, height, byte_length, bytes FROM hosted_images WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.map(Option.fromNullable(rows[0]), (r) => ({ ...toInfo(r), bytes: r.bytes })))
    )
  )
