/**
 * The bookkeeping a landed (or failed) atomic bundle owes, performed for the BundleActor's outputs
 * (launch spec 3.1 "Also", 3.5's buy recording, 6's events; rule 7's holds). Each item runs in one
 * transaction with its row in `atomic_bookings`: performed again (a crash between the write and
 * the stored state, a resume) it finds the row and writes nothing twice, so `launch.confirmed` and
 * each `trade.executed` are enqueued once.
 *
 * - `BookToken`: the token row (written `hidden` at build) takes the requested visibility.
 * - `BookLaunch`: the ledger attempt confirmed with the launch result, the key's launch usage and
 *   `launch.confirmed` (`confirmedWrites`, as every launch path).
 * - `BookBuy`: `trade.executed` (`amountRaw` the leg's amount, `expectedOutRaw` what was booked:
 *   the ladder fill, or what the transaction delivered when read from the chain) and the platform
 *   fee into the account's fee totals.
 * - `Finalize`: the landed legs' holds converted and the landed legs' USD and count metered into
 *   the key's usage (linked legs have no hold but are metered the same); the other holds stay.
 * - `ReleaseHolds`, `FailLaunch` (the attempt failed, `launch.failed`): idempotent by their own rules.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import type { BundleOutput } from "../../../../actors/bundle/BundleActor.js"
import { addFee } from "../../accounts/AccountRepository.js"
import { recordUsage } from "../../keys/KeyRepository.js"
import { enqueueEvent } from "../../webhooks/Outbox.js"
import { confirmedWrites, failedWrites } from "../internal/LaunchRecords.js"
import type { LaunchLedgerError, LaunchLedgerShape } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { convertHolds, releaseHolds } from "./BundleStore.js"

export interface BookedLeg {
  readonly index: number
  readonly clientTradeId: string
  readonly amountInRaw: bigint
  readonly platformFeeRaw: bigint
  readonly signature: string | null
  /** USD of amount plus fee at build; null without a price (then not metered in USD). */
  readonly usdMicros: bigint | null
}

export interface BookingTarget {
  readonly bundleId: string
  readonly accountId: string
  readonly keyId: string
  readonly clientLaunchId: string
  readonly attempt: number
  readonly mint: string
  readonly curve: string
  readonly launchSignature: string | null
  readonly quoteAsset: string
  /** The requested visibility (the token row is `hidden` until booked). */
  readonly visibility: string
  /** The launch result stored on the ledger row (2.5). */
  readonly result: StoredResult
  readonly platformFeeBps: bigint
  readonly legs: ReadonlyArray<BookedLeg>
}

export type BookingFailure = SqlError | LaunchLedgerError

/**
 * The launch result with the launch leg's signature (known only once signed): `signature` and the
 * explorer link's `/tx/<signature>` are written at booking. A result without them is kept as is.
 */
export const withSignature = (result: StoredResult, signature: string | null): StoredResult => {
  if (signature === null) return result
  const links = result.links as { readonly explorer?: unknown } | undefined
  const explorer = typeof links?.explorer === "string" ? links.explorer.replace(/\/tx\/[^/]*$/, `/tx/${signature}`) : undefined
  return { ...result, signature, ...(links !== undefined && explorer !== undefined ? { links: { ...links, explorer } } : {}) }
}

/** Claims `item` for the bundle; false when it was booked before. */
const claim = (bundleId: string, item: string, nowMs: number) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ item: string }>`
      INSERT INTO atomic_bookings (bundle_id, item, booked_at) VALUES (${bundleId}, ${item}, ${new Date(nowMs)})
      ON CONFLICT (bundle_id, item) DO NOTHING RETURNING item`
  ).pipe(Effect.map((rows) => rows.length === 1))

export const makeBookings = (ledger: LaunchLedgerShape, t: BookingTarget) => {
  const ref = { accountId: t.accountId, clientLaunchId: t.clientLaunchId, attempt: t.attempt }

  const once = (item: string, writes: Effect.Effect<void, BookingFailure, SqlClient.SqlClient>) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const nowMs = yield* Clock.currentTimeMillis
      yield* sql.withTransaction(Effect.flatMap(claim(t.bundleId, item, nowMs), (fresh) => (fresh ? writes : Effect.void)))
    })

  const perform = (o: BundleOutput): Effect.Effect<void, BookingFailure, SqlClient.SqlClient> => {
    switch (o._tag) {
      case "BookToken":
        return once(
          "token",
          Effect.flatMap(SqlClient.SqlClient, (sql) =>
            Effect.flatMap(Clock.currentTimeMillis, (nowMs) =>
              sql`UPDATE launched_tokens SET visibility = ${t.visibility}, confirmed_at = coalesce(confirmed_at, ${new Date(nowMs)})
                  WHERE chain = 'solana' AND mint = ${t.mint}`.pipe(Effect.asVoid)
            )
          )
        )
      case "BookLaunch":
        return once(
          "launch",
          ledger
            .confirm(ref, withSignature(t.result, t.launchSignature), { mint: t.mint, pool: t.curve, signature: t.launchSignature }, confirmedWrites({ keyId: t.keyId, fee: null, devBuy: undefined }))
            .pipe(Effect.asVoid)
        )
      case "BookBuy": {
        const leg = t.legs.find((l) => l.index === o.index)
        if (leg === undefined) return Effect.dieMessage(`AtomicBookings: no leg ${o.index} in bundle ${t.bundleId}`)
        return once(
          `buy:${o.clientTradeId}`,
          Effect.gen(function* () {
            yield* enqueueEvent(t.accountId, "trade.executed", {
              clientTradeId: o.clientTradeId,
              chain: "solana",
              side: "buy",
              mint: t.mint,
              quoteAsset: t.quoteAsset,
              amountRaw: leg.amountInRaw.toString(),
              expectedOutRaw: o.amountOutRaw.toString(),
              signature: leg.signature,
              fee: { bps: Number(t.platformFeeBps), feeRaw: leg.platformFeeRaw.toString() }
            })
            if (leg.platformFeeRaw > 0n) yield* addFee(t.accountId, "solana", t.quoteAsset, leg.platformFeeRaw)
          })
        )
      }
      case "Finalize":
        return once(
          "finalization",
          Effect.gen(function* () {
            const nowMs = yield* Clock.currentTimeMillis
            yield* convertHolds(t.bundleId, o.landedBuyIndexes, nowMs)
            const landed = t.legs.filter((l) => o.landedBuyIndexes.includes(l.index))
            const usd = landed.reduce((s, l) => s + (l.usdMicros ?? 0n), 0n)
            if (landed.length > 0) yield* recordUsage({ keyId: t.keyId, atMs: nowMs, usdMicros: Number(usd), trades: landed.length, launches: 0 })
          })
        )
      case "ReleaseHolds":
        return Effect.flatMap(Clock.currentTimeMillis, (nowMs) => releaseHolds(t.bundleId, nowMs))
      case "FailLaunch":
        return ledger.fail(ref, "launch_failed", { also: failedWrites(ledger.failureCode) }).pipe(
          Effect.asVoid,
          // Already failed (or moved on): nothing more to write.
          Effect.catchTag("LaunchLedgerError", () => Effect.void)
        )
    }
  }

  return { perform }
}
