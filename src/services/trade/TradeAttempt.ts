/**
 * An agent trade as an attempt of the one runner (`src/services/attempt/AttemptRunner.ts`): the
 * pure `TradeMachine` over the stored row, the row store (`agent_trades`, leases of kind
 * `agent_trade`) and the ports (send the signed bytes, wait for the chain's verdict). The runner
 * saves each state before any port acts on it; the settlement writes (fee totals, the
 * `trade.executed` event) are the store's, in the transaction that saves `executed`.
 *
 * The machine's `Broadcast` becomes `Send` (the signed bytes travel with the event that asked for
 * them: they are never stored, so a crash after `sending` is saved never resends) and `Await`; a
 * stored `sending` row owes only `Await`: it is settled from the chain. The exception is a Hood
 * linked or TEE payer's row: it keeps the caller's signed bytes (`signedTransaction`, migration 0044) and
 * owes their `Send` again (same nonce and hash: never a second trade), since the server cannot
 * release that wallet's nonce. `Watch` (a built trade
 * found landed) is `Await`. A stored `built` row is idle: the runner's watch pass performs its
 * `Trace` (`SolanaTradeChain.trace`: found landed → `Found`, can never land → `Lapsed`, else
 * nothing), so a build its caller sent itself and never submitted or confirmed still settles. A
 * Hood TEE build is traced through its sign claim first (`traceHoodTee`: the relay's hash looked
 * up; unsigned past the claim's lifetime, the claim expired and the row lapsed).
 */
import type { Arrivals } from "../chains/ChainArrivals.js"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Option } from "effect"
import type { RowLeases } from "../../db/RowLease.js"
import { awaitVerdict } from "../../platform/AwaitUntil.js"
import { type AttemptMachine, type AttemptPorts, type AttemptRunner, type AttemptStore, makeAttemptRunner } from "../attempt/AttemptRunner.js"
import { builtTransactionHashOf } from "../../chain/hood/client/SignedEvm.js"
import type { HoodTradeChain } from "./HoodTradeChain.js"
import { requestMemo } from "../../chain/solana/client/RequestMemo.js"
import { type SolanaTradeChain, tradeOutFromStream, type Traced } from "./SolanaTradeChain.js"
import { tradeError } from "./TradeError.js"
import { inFlight as machineInFlight, step, traced, type TradeEvent, type TradeObservation, type TradeOutput } from "./TradeMachine.js"
import { rowAfter, stateOf, type TradeRow, type TradeStore } from "./TradeStore.js"

/** The lease kind of trade rows; the key is the row's (account, clientTradeId). */
export const TRADE_LEASE_KIND = "agent_trade"

export interface TradeKey {
  readonly accountId: string
  readonly clientTradeId: string
}

export const tradeLeaseKey = (k: TradeKey): string => JSON.stringify([k.accountId, k.clientTradeId])

/** An event of the machine, with the new row `Signed` records and the signed bytes a `Broadcast` sends. */
export interface TradeInput {
  readonly event: TradeEvent
  readonly insert?: TradeRow
  /** The signed transaction (base64) to send if the step asks to broadcast. */
  readonly wire?: string
}

export type TradeAttemptOutput = TradeOutput | { readonly _tag: "Send"; readonly wire: string } | { readonly _tag: "Await" }

const inFlight = (row: TradeRow): boolean => machineInFlight(stateOf(row))

/** Whether a row keeps the signed bytes it was sent with: Hood, paid by a wallet the server cannot sign for. */
const keepsSignedBytes = (row: TradeRow): boolean => row.chain === "hood" && row.payer !== "main"

/** `TradeMachine.step` over stored rows. Pure; the same row when nothing changes. */
export const tradeMachine: AttemptMachine<TradeRow, TradeInput, TradeAttemptOutput> = {
  step: (row, input) => {
    const state = row === undefined ? undefined : stateOf(row)
    const [next, outputs] = step(state, input.event)
    const mapped = outputs.flatMap((o): ReadonlyArray<TradeAttemptOutput> =>
      o._tag === "Broadcast"
        ? input.wire === undefined
          ? [{ _tag: "Await" }]
          : [{ _tag: "Send", wire: input.wire }, { _tag: "Await" }]
        : o._tag === "Watch"
          ? [{ _tag: "Await" }]
          : [o]
    )
    if (next === state || next === undefined) return [row, mapped]
    const base = row ?? input.insert
    if (base === undefined) return [row, mapped]
    const after = rowAfter(base, next)
    // A Hood linked or TEE payer's signed bytes are kept with `sending` (a recovery pass sends them again: the server cannot sign them).
    return [next._tag === "sending" && input.wire !== undefined && keepsSignedBytes(base) ? { ...after, signedTransaction: input.wire } : after, mapped]
  },
  inFlight,
  // A stored `sending` row owes its verdict; a Hood linked or TEE one with its signed bytes also owes their send (the same nonce
  // and hash: a second send is refused by the node if the first got through, and that refusal decides nothing).
  owed: (row) =>
    !inFlight(row)
      ? []
      : keepsSignedBytes(row) && row.signedTransaction !== null && row.signedTransaction !== undefined
        ? [{ _tag: "Send", wire: row.signedTransaction }, { _tag: "Await" }]
        : [{ _tag: "Await" }],
  idle: (row) => traced(stateOf(row))
}

const isStoreOutput = (o: TradeAttemptOutput): o is TradeOutput => o._tag !== "Send" && o._tag !== "Await"

export const tradeStore = (store: TradeStore): AttemptStore<TradeKey, TradeRow, TradeAttemptOutput> => ({
  kind: TRADE_LEASE_KIND,
  leaseKey: tradeLeaseKey,
  load: (key) => store.get(key.accountId, key.clientTradeId),
  save: (_key, prev, next, outputs) => store.save(prev, next, outputs.filter(isStoreOutput)),
  saveFenced: (_key, prev, next, outputs, fence) => store.saveFenced(prev, next, outputs.filter(isStoreOutput), fence),
  inFlight: store.inFlight,
  idle: store.built
})

export interface TradePortsContext {
  readonly solana: SolanaTradeChain
  /** The Hood port; undefined when this server does not trade on Hood. */
  readonly hood?: HoodTradeChain | undefined
  /**
   * Signs as an account's embedded EVM wallet, to release the nonce of a Hood trade that never
   * reached the node (`HoodTradeChain.releaseUnsent`), once `graceMs` passed since it was recorded.
   */
  readonly hoodRelease?: {
    readonly sign: (accountId: string, unsigned: Uint8Array) => Effect.Effect<{ readonly signedTransaction: string }, unknown>
    readonly graceMs: number
  }
  /**
   * A build's sign claim (the wallet service's): its state and the relay's signature (on Hood the
   * signed transaction's hash), and its expiry once its lifetime passed unsigned (`expireUnsigned`:
   * true when this call expired it). Absent: a Hood TEE build is traced by the log scan alone.
   */
  readonly claims?:
    | {
        readonly status: (claimId: string) => Effect.Effect<{ readonly state: string; readonly signature: string | null } | undefined, unknown>
        readonly expireUnsigned: (claimId: string) => Effect.Effect<boolean, unknown>
      }
    | undefined
  /** Records what became of a build's sign claim (the wallet service's `settleClaim`); absent: claims only expire. */
  readonly settleClaim?: ((claimId: string, outcome: "confirmed" | "failed") => Effect.Effect<void, unknown>) | undefined
  readonly confirmTimeoutMs: number
  readonly pollIntervalMs: number
  /** The transactions the ingest stream delivered: a trade's status is read the moment its own arrives (the poll stays the fallback), and a landed Solana trade the stream carried is its verdict. */
  readonly arrivals?: Arrivals | undefined
}

/** The row's chain port: send signed bytes once, and the chain's verdict on what was sent. */
const portOf = (ctx: TradePortsContext, row: TradeRow) => {
  if (row.chain === "solana") {
    const { arrivals } = ctx
    const delivered = () => arrivals?.delivered(row.signature) === true
    const streamedOut = () => tradeOutFromStream(arrivals?.landed(row.signature), row)
    return { send: ctx.solana.send, observe: ctx.solana.observe(row.signature, row.lastValidBlockHeight, delivered, streamedOut) }
  }
  const hood = ctx.hood
  if (hood === undefined) {
    const off = tradeError("chain_unavailable", "this server does not run the Hood trade rail", { retryable: true })
    return { send: () => Effect.succeed(undefined), observe: Effect.fail(off) }
  }
  // A Hood row keeps its transaction's nonce where a Solana row keeps its last valid block height: what decides it never lands.
  const sent = { ...row, nonce: row.lastValidBlockHeight }
  const release = ctx.hoodRelease
  // Only the embedded wallet's nonce is released (the server signs for it); a linked or TEE payer's bytes are the caller's.
  const observe =
    release === undefined || row.payer !== "main"
      ? hood.observe(sent)
      : Effect.tap(hood.observe(sent), (seen) =>
          seen.outcome === "pending" ? hood.releaseUnsent(sent, (bytes) => release.sign(row.accountId, bytes), release.graceMs) : Effect.void
        )
  return { send: (wire: string) => hood.send(wire as `0x${string}`), observe }
}

/** The chain's verdict on a sent trade within the deadline; `None`: still pending. */
export const awaitTrade = (ctx: TradePortsContext, row: TradeRow): Effect.Effect<Option.Option<TradeObservation>> =>
  awaitVerdict(portOf(ctx, row).observe, (seen) => seen.outcome !== "pending", {
    what: "the trade's verdict",
    intervalMs: ctx.pollIntervalMs,
    timeoutMs: ctx.confirmTimeoutMs,
    wake: ctx.arrivals !== undefined && row.signature !== "" ? ctx.arrivals.arrived(row.signature) : undefined,
    // A Solana look only reads (the next one takes the stream's verdict); a Hood look of an embedded
    // wallet's trade may send its nonce's release, which must not be cut.
    wakeCutsPoll: row.chain === "solana"
  })

export const observedEvent = (seen: TradeObservation): TradeInput => ({ event: { _tag: "Observed", ...seen } })

/** The event a built trade's trace makes: found landed, can never land, or none (not decided yet). */
export const tracedEvent = (seen: Traced): TradeInput | undefined =>
  seen._tag === "Found" ? { event: { _tag: "Found", signature: seen.signature } } : seen._tag === "Lapsed" ? { event: { _tag: "Lapsed" } } : undefined

const LAPSED: TradeInput = { event: { _tag: "Lapsed" } }

/**
 * A Hood TEE build traced through its sign claim, which only the relay can use (the server holds
 * the key): signed, the claim keeps the transaction's hash, looked up directly (a receipt, landed
 * or reverted → `Found`, the runner's await then settles it; the wallet's nonce used by another
 * transaction → `Lapsed`; else undecided); never signed and past its lifetime, the claim is
 * expired and the row lapsed in one step (`expireUnsigned`: of it and the relay's consume, one
 * wins), since nothing can sign those bytes any more. `undefined`: the claim decides nothing here
 * (unknown to the wallet service, or settled): the log scan traces the build.
 */
const traceHoodTee = (
  hood: HoodTradeChain,
  claims: NonNullable<TradePortsContext["claims"]>,
  row: TradeRow,
  claimId: string
): Effect.Effect<{ readonly decided: TradeInput | undefined } | undefined, unknown> =>
  Effect.gen(function* () {
    const claim = yield* claims.status(claimId)
    if (claim === undefined) return undefined
    const signature = claim.signature
    if (signature !== null && signature !== "") {
      const seen = yield* hood.observe({ signature, wallet: row.wallet, mint: row.mint, venue: row.venue, nonce: row.lastValidBlockHeight })
      if (seen.outcome === "pending") return { decided: undefined }
      return { decided: seen.outcome === "never_lands" ? LAPSED : { event: { _tag: "Found", signature } } }
    }
    if (claim.state === "open") return { decided: (yield* claims.expireUnsigned(claimId)) ? LAPSED : undefined }
    // Expired unsigned (by a rebind, or an earlier pass whose save did not land): nothing can sign the bytes.
    if (claim.state === "expired") return { decided: LAPSED }
    return undefined
  })

/** Looks on chain for a built trade's transaction; a read that fails decides nothing (the next pass looks again). */
const traceBuilt = (ctx: TradePortsContext, row: TradeRow): Effect.Effect<TradeInput | undefined> => {
  const messageHash = row.messageHash
  if (messageHash === null || messageHash === undefined) return Effect.succeed(undefined)
  if (row.chain === "hood") {
    // Hood (a linked or TEE build): the nonce is kept in `lastValidBlockHeight`, the build's block in `builtSlot`.
    const hood = ctx.hood
    if (hood === undefined || row.builtSlot === null || row.builtSlot === undefined) return Effect.succeed(undefined)
    const fromBlock = row.builtSlot
    const scan = hood
      .trace({
        wallet: row.wallet,
        mint: row.mint,
        side: row.side,
        nonce: row.lastValidBlockHeight,
        fromBlock,
        isBuilt: (tx) => builtTransactionHashOf(tx, messageHash, row.wallet)
      })
      .pipe(Effect.map(tracedEvent))
    const claimId = row.claimId
    const traced =
      row.payer === "tee" && ctx.claims !== undefined && claimId !== null && claimId !== undefined
        ? Effect.flatMap(traceHoodTee(hood, ctx.claims, row, claimId), (byClaim) => (byClaim === undefined ? scan : Effect.succeed(byClaim.decided)))
        : scan
    return traced.pipe(Effect.catchAll((e) => Effect.as(Effect.logWarning("a built trade's trace failed; the next pass looks again", e), undefined)))
  }
  if (row.chain !== "solana") return Effect.succeed(undefined)
  return ctx.solana
    .trace({
      payer: row.wallet,
      messageHash,
      memo: requestMemo("trade", row.accountId, row.clientTradeId),
      lastValidBlockHeight: row.lastValidBlockHeight,
      builtSlot: row.builtSlot ?? null
    })
    .pipe(
      Effect.map(tracedEvent),
      Effect.catchAll((e) => Effect.as(Effect.logWarning("a built trade's trace failed; the next pass looks again", e), undefined))
    )
}

/**
 * Whether the signed bytes left this server: a linked or TEE payer's transaction was signed by its
 * caller or handed to it by the sign relay. The node refusing them now (a preflight failure: the
 * market moved, the wallet is short) does not stop the caller from broadcasting the same bytes
 * later, while their blockhash is valid; so such a refusal decides nothing, and the trade settles
 * from the chain: landed, reverted, or `never_lands` once the blockhash expired. The embedded
 * payer's bytes never leave the server: a refusal fails them at once.
 */
const callerHoldsBytes = (row: TradeRow): boolean => row.payer !== "main"

export const tradePorts = (ctx: TradePortsContext): AttemptPorts<TradeKey, TradeRow, TradeInput, TradeAttemptOutput, never> => ({
  perform: (_key, row, output) => {
    switch (output._tag) {
      case "Send":
        return Effect.flatMap(portOf(ctx, row).send(output.wire), (refused) =>
          refused === undefined
            ? Effect.succeed(undefined)
            : callerHoldsBytes(row) && refused.outcome !== "never_lands"
              ? Effect.as(Effect.logInfo("a signed trade the node refused may still land (its caller holds the bytes): the chain decides", refused), undefined)
              : Effect.succeed(observedEvent(refused))
        )
      case "Await":
        // A send the node refused settled the row already: nothing left to wait for.
        return inFlight(row) ? Effect.map(awaitTrade(ctx, row), Option.match({ onNone: () => undefined, onSome: observedEvent })) : Effect.succeed(undefined)
      case "Trace":
        return traceBuilt(ctx, row)
      case "RecordExecuted":
        return Effect.as(
          Effect.logInfo("agent trade executed").pipe(
            Effect.annotateLogs({ accountId: row.accountId, clientTradeId: row.clientTradeId, side: row.side, mint: row.mint, signature: output.signature })
          ),
          undefined
        )
      case "SettleClaim": {
        // Best effort: a claim left unsettled only expires (it can no longer sign a transaction that lands).
        const claimId = row.claimId
        if (claimId === null || claimId === undefined || ctx.settleClaim === undefined) return Effect.succeed(undefined)
        return Effect.as(
          ctx.settleClaim(claimId, output.outcome).pipe(Effect.catchAll((e) => Effect.logWarning("a trade's sign claim was not settled; it expires", e))),
          undefined
        )
      }
      default:
        // Answers (`Refuse`, `Replay`) are the caller's; `Broadcast` became `Send` and `Await`.
        return Effect.succeed(undefined)
    }
  }
})

export type TradeRunner = AttemptRunner<TradeKey, TradeRow, TradeInput, TradeAttemptOutput, never>

export const makeTradeRunner = (ctx: TradePortsContext & { readonly sql: SqlClient.SqlClient; readonly leases: RowLeases; readonly store: TradeStore }): TradeRunner =>
  makeAttemptRunner({ machine: tradeMachine, store: tradeStore(ctx.store), ports: tradePorts(ctx), leases: ctx.leases, sql: ctx.sql })
