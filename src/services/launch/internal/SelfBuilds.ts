/**
 * What the self-signed launch services share around a build (launch spec 2.3, 3.2, 3.3): the
 * stored build row (`self_launch_builds`, migration 0014), written in the ledger's `begin` or
 * `rebuild` transaction and read back by a repeat build or a confirm; and how a build's admission
 * refusals answer (a lost race is retryable `LAUNCH_FAILED`, 3.3's "overlapping builds return one
 * transaction").
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Cause, Effect } from "effect"
import type { Chain } from "../../../domain/Chain.js"
import type { Also, LaunchLedgerError, LaunchLedgerShape, LaunchRecord } from "../LaunchLedger.js"
import type { OnChain, StoredResult } from "../LaunchLedgerMachine.js"
import { launchStorage } from "./LaunchGates.js"
import { failedWrites } from "./LaunchRecords.js"
import { fromLedger, fromPayer, fromSpend, type LaunchError, launchFailure } from "../LaunchError.js"
import type { SpendError } from "../../spend/SpendError.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import { decodeStoredRequest, encodeStoredRequest } from "../StoredRequest.js"

export interface BuildRow<Resolved, Fee> {
  readonly accountId: string
  readonly clientLaunchId: string
  readonly attempt: number
  readonly chain: Chain
  readonly walletId: string
  readonly walletKind: "imported" | "tee"
  readonly payer: string
  readonly keyId: string
  /** The request as decoded at build: the requested visibility and the dev buy are held here (3.2). */
  readonly request: LaunchRequest
  /** What the build resolved (metadata URI, fee bps, chain-specific inputs). */
  readonly resolved: Resolved
  readonly mint: string
  readonly pool: string
  /** Solana: the unsigned wire transaction (base64); Hood: the unsigned `createCurve` transaction (hex). */
  readonly transaction: string
  /** Solana: the blockhash's last valid block height; Hood: none (an EVM transaction never provably expires). */
  readonly lastValidBlockHeight: bigint | null
  readonly expiresAtMs: number
  readonly fee: Fee | null
  readonly claimId: string
  readonly builtAtMs: number
  /** A Hood TEE build's sequenced operation (`HoodOperation`); null otherwise. */
  readonly operation: unknown
}

/** Stores a build (inside the ledger transaction that admitted its attempt). */
export const storeBuild = <R, F>(b: BuildRow<R, F>) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      INSERT INTO self_launch_builds (account_id, client_launch_id, attempt, chain, wallet_id, wallet_kind, payer_address, key_id,
        request, resolved, mint, pool, transaction, last_valid_block_height, expires_at, fee, claim_id, operation, built_at)
      VALUES (${b.accountId}, ${b.clientLaunchId}, ${b.attempt}, ${b.chain}, ${b.walletId}, ${b.walletKind}, ${b.payer}, ${b.keyId},
        ${JSON.stringify(encodeStoredRequest(b.request))}::jsonb, ${JSON.stringify(b.resolved)}::jsonb, ${b.mint}, ${b.pool},
        ${b.transaction}, ${b.lastValidBlockHeight === null ? null : b.lastValidBlockHeight.toString()}::numeric, ${new Date(b.expiresAtMs)},
        ${b.fee === null ? null : JSON.stringify(b.fee)}::jsonb, ${b.claimId},
        ${b.operation === null ? null : JSON.stringify(b.operation)}::jsonb, ${new Date(b.builtAtMs)})`
  ).pipe(Effect.asVoid)

/** The stored build of an attempt, or undefined. */
export const readBuild = <R, F>(ref: { readonly accountId: string; readonly clientLaunchId: string; readonly attempt: number }) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{
      chain: Chain
      wallet_id: string
      wallet_kind: "imported" | "tee"
      payer_address: string
      key_id: string
      request: unknown
      resolved: R
      mint: string
      pool: string
      transaction: string
      lvbh: string | null
      expires_at: Date | string
      fee: F | null
      claim_id: string
      operation: unknown
      built_at: Date | string
    }>`
      SELECT chain, wallet_id, wallet_kind, payer_address, key_id, request, resolved, mint, pool, transaction,
        last_valid_block_height::text AS lvbh, expires_at, fee, claim_id, operation, built_at
      FROM self_launch_builds
      WHERE account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId} AND attempt = ${ref.attempt}`
  ).pipe(
    Effect.map((rows): BuildRow<R, F> | undefined => {
      const r = rows[0]
      if (r === undefined) return undefined
      return {
        accountId: ref.accountId,
        clientLaunchId: ref.clientLaunchId,
        attempt: ref.attempt,
        chain: r.chain,
        walletId: r.wallet_id,
        walletKind: r.wallet_kind,
        payer: r.payer_address,
        keyId: r.key_id,
        request: decodeStoredRequest(r.request),
        resolved: r.resolved,
        mint: r.mint,
        pool: r.pool,
        transaction: r.transaction,
        lastValidBlockHeight: r.lvbh === null ? null : BigInt(r.lvbh),
        expiresAtMs: new Date(r.expires_at).getTime(),
        fee: r.fee,
        claimId: r.claim_id,
        builtAtMs: new Date(r.built_at).getTime(),
        operation: r.operation ?? null
      }
    })
  )

/**
 * Moves a stored build's operation from `from` to `to` (a Hood TEE leg signed, mined, reverted or
 * reissued): compare-and-swap, so of two confirms advancing one operation only one writes; false
 * when the stored operation is no longer `from`.
 */
export const updateOperation = (ref: { readonly accountId: string; readonly clientLaunchId: string; readonly attempt: number }, from: unknown, to: unknown) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE self_launch_builds SET operation = ${JSON.stringify(to)}::jsonb
      WHERE account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId} AND attempt = ${ref.attempt}
        AND operation = ${JSON.stringify(from)}::jsonb
      RETURNING attempt`
  ).pipe(Effect.map((rows) => rows.length === 1))

/** The Hood fee transfer a confirm accepted (unique: another launch presenting it is refused). */
export const recordFeeTx = (ref: { readonly accountId: string; readonly clientLaunchId: string; readonly attempt: number }, hash: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`
      UPDATE self_launch_builds SET fee_tx_hash = ${hash.toLowerCase()}
      WHERE account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId} AND attempt = ${ref.attempt}`
  ).pipe(Effect.asVoid)

/** Whether another build's confirm already accepted this fee transfer. */
export const feeTxUsedElsewhere = (ref: { readonly accountId: string; readonly clientLaunchId: string; readonly attempt: number }, hash: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ n: number }>`
      SELECT count(*)::int AS n FROM self_launch_builds
      WHERE fee_tx_hash = ${hash.toLowerCase()}
        AND NOT (account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId} AND attempt = ${ref.attempt})`
  ).pipe(Effect.map((rows) => (rows[0]?.n ?? 0) > 0))

/** Raised inside a build's admission transaction when another build of the id moved the row first (rolls it back). */
export class Overlap {
  readonly _tag = "Overlap"
}

/** Another build of this id won the race: retryable (3.3). */
export const overlapping = (): LaunchError =>
  launchFailure("launch_failed", "another build of this clientLaunchId is in progress; retry with the same id", {
    retryable: true,
    details: { reason: "build_in_progress" }
  })

/** A build admission's refusal (ledger, claim, payer, a lost race) as the build's answer. */
export const admissionFailure = (e: unknown): LaunchError => {
  if (e instanceof Overlap) return overlapping()
  const tag = (e as { _tag?: string })._tag
  if (tag === "LaunchLedgerError") {
    const le = e as LaunchLedgerError
    return le.reason === "in_flight" || le.reason === "stale_attempt" || le.reason === "not_self_build" ? overlapping() : fromLedger(le)
  }
  if (tag === "PayerError") return fromPayer(e as Parameters<typeof fromPayer>[0])
  if (tag === "LaunchError") return e as LaunchError
  if (tag === "SpendError") return fromSpend(e as SpendError)
  return launchFailure("launch_failed", "recording the build failed; retry with the same clientLaunchId", { retryable: true })
}

/** Runs a build's admission: a lost race is expected (debug); anything else that kept a build from being recorded is worth a warning. */
export const admitted = <A>(self: Effect.Effect<A, unknown>): Effect.Effect<A, LaunchError> =>
  self.pipe(
    Effect.tapErrorCause((cause) =>
      admissionFailure(Cause.squash(cause)).details?.reason === "build_in_progress"
        ? Effect.logDebug("self-signed build lost a race", cause)
        : Effect.logWarning("self-signed build not recorded", cause)
    ),
    Effect.mapError(admissionFailure)
  )

/** The confirm of an id that names no self-signed build that can still be confirmed. */
export const selfJobNotFound = (): LaunchError =>
  launchFailure("job_not_found", "No self-signed launch with this clientLaunchId can still be confirmed on this account; build again", { retryable: false })

/** The lazy 30-minute sweep of the account's own self-signed builds (3.1), `launch.failed` for each. */
export const sweepOwnBuilds = (ledger: LaunchLedgerShape, accountId: string) =>
  ledger.sweepSelfBuilds(accountId, failedWrites(ledger.failureCode)).pipe(launchStorage("sweeping expired builds"))

/** The attempt's own transaction failed on chain: a still-submitted row fails (slot refunded, `launch.failed`); anything else is left. */
export const failOnChainFailure = (ledger: LaunchLedgerShape, row: LaunchRecord) =>
  row.state !== "submitted"
    ? Effect.void
    : ledger
        .fail({ accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }, "launch_failed", { also: failedWrites(ledger.failureCode) })
        .pipe(
          Effect.asVoid,
          Effect.catchTag("LaunchLedgerError", () => Effect.void),
          launchStorage("recording the failure")
        )

/**
 * Records a verified self-signed launch: `confirm` for an attempt in flight, `confirmSwept` for a
 * swept one. A racing confirm that recorded it first answers with its stored result.
 */
export const recordConfirmed = (ledger: LaunchLedgerShape, row: LaunchRecord, result: StoredResult, onChain: OnChain, writes: Also) => {
  const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId }
  return (row.state === "failed" ? ledger.confirmSwept(ref, result, onChain, writes) : ledger.confirm({ ...ref, attempt: row.attempt }, result, onChain, writes)).pipe(
    Effect.map((r) => r.result ?? result),
    Effect.catchTag("LaunchLedgerError", () =>
      Effect.flatMap(ledger.get(ref), (now) => (now?.state === "confirmed" ? Effect.succeed(now.result ?? result) : Effect.fail(overlapping())))
    ),
    launchStorage("recording the launch")
  )
}
