/**
 * What every launch path writes and answers the same way (launch spec 2.5 and 3.1 "Also"): the
 * Solana launch result, `curveTerms` of an `exp-*` launch, and the writes that ride on the
 * ledger's transactions: the attribution before a launch can land (`attribute`), the token, usage,
 * fee total and `launch.confirmed` on confirmation (`confirmedWrites`), and `launch.failed` on a
 * definitive failure (`failedWrites`). The headless and self-signed services both use these, so a
 * launch reads the same whichever path made it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Clock, Effect, Option, Schema } from "effect"
import type { AgentLaunches } from "../../../../actors/AgentLaunches.js"
import { type Chain, normalizeAddress } from "../../../domain/Chain.js"
import { curveTerms } from "../../../domain/CurveMath.js"
import { findEconomics, firstBuyInRaw, MATRIX_VERSION } from "../../../domain/Economics.js"
import { findQuotePair } from "../../../domain/QuotePairs.js"
import { addFeeStatement } from "../../accounts/AccountRepository.js"
import { usageEventStatement } from "../../keys/KeyRepository.js"
import { enqueueEvent, enqueueStatement } from "../../webhooks/Outbox.js"
import type { Also, LaunchRecord } from "../LaunchLedger.js"
import type { LaunchPath, StoredResult } from "../LaunchLedgerMachine.js"
import type { HoodOperation } from "../HoodOperation.js"
import { isExpMode, type LaunchRequest } from "../request/LaunchRequest.js"
import type { SolanaLaunched } from "../SolanaLaunch.js"

export interface ResultLinks {
  /** The engine's public base URL (`links.candle`). */
  readonly baseUrl: string
  /** Solana explorer base; `links.explorer` is `<base>/tx/<signature>`. */
  readonly solanaExplorerUrl: string
}

/** 2.9's `curveTerms` for an `exp-*` request; empty otherwise. */
export const curveTermsOf = (request: LaunchRequest): { readonly curveTerms?: ReturnType<typeof curveTerms> } => {
  if (!isExpMode(request.mode)) return {}
  const pair = findQuotePair(request.chain, request.quoteAsset)!
  const economics = findEconomics(request.chain, request.quoteAsset)!
  return {
    curveTerms: curveTerms({
      symbol: pair.symbol,
      quoteDecimals: pair.decimals,
      virtualQuoteRaw: request.curve.virtualQuoteRaw,
      thresholdRaw: request.curve.thresholdRaw,
      supplyRaw: economics.tokenSupplyRaw,
      tokenDecimals: economics.tokenDecimals,
      stakerAllocationBps: request.stakerAllocationBps,
      feeBps: BigInt(economics.curveFeeBps),
      firstBuyInRaw: firstBuyInRaw(pair)
    })
  }
}

/** The launch result (2.5) of a landed Solana launch. */
export const solanaLaunchResult = (links: ResultLinks, request: LaunchRequest, launched: SolanaLaunched): StoredResult => ({
  chain: "solana",
  mint: launched.mint,
  pool: launched.curve,
  signature: launched.signature,
  quoteAsset: request.quoteAsset,
  mode: request.mode,
  stakerAllocationBps: Number(request.stakerAllocationBps),
  matrixVersion: MATRIX_VERSION,
  // General rule 9: streaming is retired; every launch answers false.
  createdDuringStream: false,
  links: {
    candle: `${links.baseUrl.replace(/\/+$/, "")}/token/solana/${launched.mint}`,
    explorer: `${links.solanaExplorerUrl.replace(/\/+$/, "")}/tx/${launched.signature}`
  },
  nextBuy: { market: launched.curve, quoteAsset: request.quoteAsset, marketStateUrl: `/api/v1/markets/solana/${launched.mint}` },
  ...(launched.devBuy !== null || launched.fee !== null
    ? {
        devBuy: {
          ...(launched.devBuy !== null ? { signature: launched.signature } : {}),
          ...(launched.fee !== null
            ? { fee: { bps: Number(launched.fee.bps), feeRaw: launched.fee.feeRaw.toString(), treasury: launched.fee.treasury } }
            : {})
        }
      }
    : {}),
  ...curveTermsOf(request)
})

/** The launch result (2.5) of a confirmed Hood launch; `explorer` only when an explorer address is configured. */
export const hoodLaunchResult = (
  links: { readonly baseUrl: string; readonly explorerUrl?: string | undefined },
  request: LaunchRequest,
  created: { readonly curve: string; readonly token: string; readonly txHash: string },
  devBuy: Readonly<Record<string, unknown>> | null
): StoredResult => ({
  chain: "hood",
  mint: created.token,
  pool: created.curve,
  signature: created.txHash,
  quoteAsset: request.quoteAsset,
  mode: request.mode,
  stakerAllocationBps: Number(request.stakerAllocationBps),
  matrixVersion: MATRIX_VERSION,
  // General rule 9: streaming is retired; every launch answers false.
  createdDuringStream: false,
  links: {
    candle: `${links.baseUrl.replace(/\/+$/, "")}/token/hood/${created.token}`,
    ...(links.explorerUrl !== undefined ? { explorer: `${links.explorerUrl.replace(/\/+$/, "")}/tx/${created.txHash}` } : {})
  },
  nextBuy: { market: created.curve, quoteAsset: request.quoteAsset, marketStateUrl: `/api/v1/markets/hood/${created.token}` },
  ...(devBuy !== null ? { devBuy } : {})
})

/**
 * The dev-buy report a stored Hood launch result carries (`hoodLaunchResult`'s `devBuy`), as far as
 * the engine reads it back: its outcomes and the platform fee. Decoded, so a stored row of another
 * shape reads as no dev buy instead of a wrong one.
 */
const StoredDevBuy = Schema.Struct({
  outcome: Schema.optional(Schema.NullOr(Schema.String)),
  pendingSignature: Schema.optional(Schema.NullOr(Schema.String)),
  feeOutcome: Schema.optional(Schema.NullOr(Schema.String)),
  fee: Schema.optional(Schema.NullOr(Schema.Struct({ feeRaw: Schema.optional(Schema.String) })))
})
export type StoredDevBuy = typeof StoredDevBuy.Type

const decodeDevBuy = Schema.decodeUnknownOption(StoredDevBuy)

/** The dev buy of a stored launch result; undefined when it has none. */
export const storedDevBuy = (result: StoredResult | null): StoredDevBuy | undefined =>
  result?.devBuy === undefined || result.devBuy === null ? undefined : Option.getOrUndefined(decodeDevBuy(result.devBuy))

/** The platform fee a confirmed Hood launch's dev buy paid (its fee leg landed), or null. */
export const hoodFeePaid = (devBuy: StoredDevBuy | undefined): { readonly quoteAsset: "eth"; readonly feeRaw: bigint } | null =>
  devBuy?.fee?.feeRaw !== undefined && devBuy.feeOutcome === "landed" ? { quoteAsset: "eth", feeRaw: BigInt(devBuy.fee.feeRaw) } : null

export interface Attribution {
  readonly accountId: string
  readonly keyId: string
  readonly path: LaunchPath
  readonly chain: Chain
  readonly mint: string
  /** The visibility the token row starts with (a self-signed Solana build: `hidden` until confirmed, 3.2). */
  readonly visibility: string
  /** The visibility requested, when the row starts `hidden` until confirmed (3.2); absent: `visibility`. */
  readonly requestedVisibility?: string
}

/**
 * The attribution (`launched_tokens` and the `AgentLaunches` registry), written before the
 * launch can land so its first feed row already reads `isAgent`; `riding`, a write of the caller's
 * on another table, goes in the same statement. The registry is a set: adding a
 * mint whose transaction then rolls back or never lands only names a token that never trades.
 */
export const attribute =
  (a: Attribution, registry: AgentLaunches, riding?: (sql: SqlClient.SqlClient) => Statement.Fragment): Also =>
  (record) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const token = attributionStatement(sql, a, record.clientLaunchId, yield* Clock.currentTimeMillis)
      // A write of the caller's on another table rides in the same statement, as its CTE (one round trip).
      yield* riding === undefined ? token : sql`WITH riding AS (${riding(sql)}) ${token}`
      announceAttribution(a, registry)
    })

/** The token row of an attribution (a statement alone, or a CTE of an admitting statement: `AtomicAdmission`); `announceAttribution` after it, before the commit (an in-memory add a rollback does not undo, as `attribute`'s). */
export const attributionStatement = (sql: SqlClient.SqlClient, a: Attribution, clientLaunchId: string, nowMs: number): Statement.Statement<Record<string, unknown>> => sql`
        INSERT INTO launched_tokens (chain, mint, account_id, key_id, client_launch_id, path, visibility, attributed_at)
        VALUES (${a.chain}, ${normalizeAddress(a.chain, a.mint)}, ${a.accountId}, ${a.keyId}, ${clientLaunchId}, ${a.path}, ${a.visibility}, ${new Date(nowMs)})
        ON CONFLICT (chain, mint) DO NOTHING`

/**
 * Only a production launch is presented as this service's agent launch (`isAgent`, `viaAgentKey`); one promoted
 * to production later (3.2) is added by `LaunchVisibility`'s follow. A launch requested as production but `hidden`
 * until confirmed (3.2) is attributed now, as before, so its first feed row reads `isAgent`.
 */
export const announceAttribution = (a: Attribution, registry: AgentLaunches): void => {
  if ((a.requestedVisibility ?? a.visibility) === "production") registry.add(a.chain, normalizeAddress(a.chain, a.mint), a.accountId)
}

export interface ConfirmedWrites {
  readonly keyId: string
  /** The platform fee collected, added to the account's fee totals (none or zero: nothing). */
  readonly fee: { readonly quoteAsset: string; readonly feeRaw: bigint } | null
  /** The result's `devBuy`, carried by `launch.confirmed`. */
  readonly devBuy: unknown
  /** The token row's visibility from now on (3.2's promotion); undefined keeps it. */
  readonly visibility?: string
}

/**
 * Written in the ledger's confirming transaction (3.1 "Also"), in ONE statement: the token row
 * confirmed (and promoted), the key's launch metered, the platform fee added to the account's
 * totals and `launch.confirmed` enqueued, each a CTE on a different table (one round trip where
 * there were four; what commits is the same).
 */
export const confirmedWrites =
  (w: ConfirmedWrites): Also =>
  (record) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const nowMs = yield* Clock.currentTimeMillis
      const mint = normalizeAddress(record.chain, record.mint ?? "")
      const parts: Array<Statement.Fragment> = [
        w.visibility === undefined
          ? sql`token AS (UPDATE launched_tokens SET confirmed_at = ${new Date(nowMs)} WHERE chain = ${record.chain} AND mint = ${mint})`
          : sql`token AS (UPDATE launched_tokens SET confirmed_at = ${new Date(nowMs)}, visibility = ${w.visibility} WHERE chain = ${record.chain} AND mint = ${mint})`
      ]
      const usage = usageEventStatement(sql, { keyId: w.keyId, atMs: nowMs, usdMicros: 0, trades: 0, launches: 1 })
      if (usage !== undefined) parts.push(sql`usage AS (${usage})`)
      if (w.fee !== null && w.fee.feeRaw > 0n) parts.push(sql`fee AS (${addFeeStatement(sql, record.accountId, record.chain, w.fee.quoteAsset, w.fee.feeRaw)})`)
      const { statement } = yield* enqueueStatement(sql, record.accountId, "launch.confirmed", {
        clientLaunchId: record.clientLaunchId,
        chain: record.chain,
        mint: record.mint,
        pool: record.pool,
        signature: record.signature,
        ...(w.devBuy !== undefined ? { devBuy: w.devBuy } : {})
      }, nowMs)
      parts.push(sql`event AS (${statement})`)
      yield* sql`WITH ${sql.join(", ", false)(parts)} SELECT 1`
    })

/**
 * Written in the ledger's failing transaction: `launch.failed` (the attempt had been accepted), its
 * `errorCode` the row's recorded failure as the API words it (`LaunchLedgerShape.failureCode`).
 */
export const failedWrites =
  (failureCode: (recorded: string) => string): Also =>
  (record) =>
    enqueueEvent(record.accountId, "launch.failed", {
      clientLaunchId: record.clientLaunchId,
      chain: record.chain,
      errorCode: failureCode(record.errorCode ?? "launch_failed")
    }).pipe(Effect.asVoid)

/** A path's own fields of a job record: a Hood headless dev buy, a Hood TEE operation, an atomic bundle's id. */
export interface LaunchJobExtra {
  readonly devBuy?: {
    readonly outcome: StoredDevBuy["outcome"] | null
    readonly pendingSignature: StoredDevBuy["pendingSignature"] | null
    readonly feeOutcome: StoredDevBuy["feeOutcome"] | null
  }
  readonly operation?: HoodOperation
  readonly bundleId?: string
}

/** The job record (launch spec 2.7): what the job route answers as `job`, inside its envelope. */
export interface LaunchJobView extends LaunchJobExtra {
  readonly clientLaunchId: string
  readonly chain: LaunchRecord["chain"]
  readonly status: LaunchRecord["state"]
  readonly mint: string | null
  readonly pool: string | null
  readonly signature: string | null
  readonly createdAt: number
  readonly updatedAt: number
  readonly errorCode?: string
}

/**
 * The job record (launch spec 2.7) of a ledger row, every path's: the row's own fields, `known`
 * filling what the row does not hold yet (a build's mint, pool or signature), then the path's
 * own `extra` fields (a Hood dev buy, a TEE operation, an atomic bundle's id).
 */
export const jobRecord = (
  row: LaunchRecord,
  known: { readonly mint?: string | null | undefined; readonly pool?: string | null | undefined; readonly signature?: string | null | undefined },
  extra: LaunchJobExtra = {}
): LaunchJobView => ({
  clientLaunchId: row.clientLaunchId,
  chain: row.chain,
  status: row.state,
  mint: row.mint ?? known.mint ?? null,
  pool: row.pool ?? known.pool ?? null,
  signature: row.signature ?? known.signature ?? null,
  createdAt: row.createdAtMs,
  updatedAt: row.updatedAtMs,
  ...(row.errorCode !== null ? { errorCode: row.errorCode } : {}),
  ...extra
})
