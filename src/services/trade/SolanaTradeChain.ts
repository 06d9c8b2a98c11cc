/**
 * The Solana side of the trade rail (svc-curve, `docs/solana-program.md`): the venue a mint trades
 * on now read from the chain (its curve while trading, its pool once migrated), the trade's
 * transaction (v0, the payer's slot empty: the embedded wallet signs it), sending signed bytes
 * once, the chain's verdict on a signature and what a landed trade executed (the program's own
 * `Trade` / `PoolSwap` event). No SQL, no HTTP: `TradeService` decides. Every read failure is
 * `chain_unavailable` (retryable), never a zero.
 *
 * The transaction: the trader's token account (created idempotently), on SPL pairs its quote
 * account too (a sell is paid into it), the svc-curve `buy` / `sell` (or `pool_swap`) carrying the
 * chain-enforced `minAmountOutRaw` in its bytes, then the platform fee to the treasury (a System
 * transfer on SOL, an SPL transfer on SPL pairs): on a buy beside the swap, on a sell from the
 * proceeds the swap just paid in; last, the request's memo (two trades with the same content in one
 * blockhash are two transactions, `RequestMemo.ts`).
 */
import {
  type Address,
  address,
  createNoopSigner,
  getBase64Encoder,
  getTransactionDecoder,
  getTransactionEncoder,
  type Instruction,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  partiallySignTransactionMessageWithSigners,
  signature as asSignature,
  type Signature
} from "@solana/kit"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { curveAddressesOf, findCurveAddresses, getBuyInstruction, getPoolSwapInstruction, getSellInstruction, quoteAccountOf } from "../../chain/solana/client/CurveInstructions.js"
import {
  associatedTokenAddressOf,
  findAssociatedTokenAddress,
  getCreateAssociatedTokenInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../../chain/solana/client/SplInstructions.js"
import { memoInstruction } from "../../chain/solana/client/RequestMemo.js"
import { buildTransactionMessage } from "../../chain/solana/client/Transactions.js"
import { checkedAddress } from "../../chain/solana/client/Accounts.js"
import { causedBy, customCodeOf } from "../../chain/solana/client/NodeRefusals.js"
import { makeMultipleAccountsReader, type RawAccount } from "../../chain/solana/client/MultipleAccounts.js"
import { makeTransactionWatch } from "../../chain/solana/client/TransactionWatch.js"
import { buyLegFailure } from "../../chain/solana/launch/BuyLegTransaction.js"
import { curveParamsOf, curveStateOf, decodeCurve } from "../../chain/solana/program/accounts/Curve.js"
import { decodePool } from "../../chain/solana/program/accounts/Pool.js"
import { decodeSplTokenAccount } from "../../chain/solana/program/accounts/SplTokenAccount.js"
import { curveEventsFromLogs } from "../../chain/solana/program/Events.js"
import { SvcCurveError } from "../../chain/solana/program/Errors.js"
import { SVC_CURVE_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../../chain/solana/program/ProgramIds.js"
import { statusBeside } from "../../platform/ReadBeside.js"
import { type StreamedTransaction, streamedTradeOut } from "../chains/ChainArrivals.js"
import { tradeError } from "./TradeError.js"
import type { RevertReason, TradeObservation } from "./TradeMachine.js"
import type { TradeRow } from "./TradeStore.js"
import type { Side, VenueState } from "./VenueQuote.js"

/** Compute units a trade asks for: two idempotent ATA creates, the swap and the fee transfer. */
export const TRADE_COMPUTE_UNIT_LIMIT = 120_000

export type SolanaVenue =
  | { readonly _tag: "Open"; readonly state: VenueState; readonly quoteMint: string }
  /** The curve is complete and its pool not seeded yet. */
  | { readonly _tag: "Graduating"; readonly quoteMint: string }

export interface TradeBuildInput {
  readonly owner: string
  readonly venue: "svc-curve" | "dex"
  readonly side: Side
  readonly mint: string
  readonly quoteMint: string
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  readonly fee: { readonly feeRaw: bigint; readonly treasury: string } | null
  /** The request's memo (`RequestMemo.ts`): one trade, one transaction, whatever else is in flight. */
  readonly memo: string
}

export interface BuiltTrade {
  /** Wire bytes, the owner's signature slot empty. */
  readonly wire: Uint8Array
  readonly lastValidBlockHeight: bigint
  /** The slot of the blockhash it carries (`getLatestBlockhash`'s context): it can land only in a later slot. */
  readonly slot: bigint
}

/** A built transaction the engine never sent, as the trace looks for it on chain. */
export interface BuiltOnChain {
  /** The fee payer (the paying wallet): every landed transaction of the build names it. */
  readonly payer: string
  /** sha-256 hex of the built message. */
  readonly messageHash: string
  /** The build's request memo (`RequestMemo.ts`), which the built message carries. */
  readonly memo: string
  readonly lastValidBlockHeight: bigint
  /** The build's blockhash slot; null: unknown (the search reads the payer's whole retained history). */
  readonly builtSlot: bigint | null
}

/**
 * What the chain says of a built transaction: a landed transaction carries the built message
 * (`Found`, its signature), it can never land (`Lapsed`: its blockhash expired at `finalized` and
 * none of the payer's landed transactions since the build carries it), or not decided yet (`Open`:
 * the blockhash is still valid, or the search did not reach the build within its bound).
 */
export type Traced = { readonly _tag: "Found"; readonly signature: string } | { readonly _tag: "Lapsed" } | { readonly _tag: "Open" }

/** Signatures per `getSignaturesForAddress` page (a node's most), and pages one trace reads at most. */
export const TRACE_PAGE = 1000
export const TRACE_PAGES_MAX = 5

const fromBase64 = getBase64Encoder()
const txEncoder = getTransactionEncoder()
const txDecoder = getTransactionDecoder()

/** sha-256 hex of a landed transaction's message (its base64 wire bytes); undefined when they do not decode. Pure. */
export const messageHashOf = (wireBase64: string): string | undefined => {
  try {
    return createHash("sha256").update(new Uint8Array(txDecoder.decode(new Uint8Array(fromBase64.encode(wireBase64))).messageBytes)).digest("hex")
  } catch {
    return undefined
  }
}

/** The trade's instructions for `owner` (a no-op signer: the embedded wallet signs the bytes). */
export const tradeInstructions = async (i: TradeBuildInput): Promise<ReadonlyArray<Instruction>> => {
  const owner = address(i.owner)
  const payer = createNoopSigner(owner)
  const mint = address(i.mint)
  const quoteMint = address(i.quoteMint)
  const [tokenAccount, quoteAccount] = await Promise.all([findAssociatedTokenAddress(owner, mint), quoteAccountOf(owner, quoteMint)])
  const out: Instruction[] = [getCreateAssociatedTokenInstruction({ payer, ata: tokenAccount, owner, mint, idempotent: true })]
  if (quoteMint !== WSOL_MINT_ADDRESS) out.push(getCreateAssociatedTokenInstruction({ payer, ata: quoteAccount, owner, mint: quoteMint, idempotent: true }))
  const trade = { trader: payer, mint, quoteMint, amountInRaw: i.amountInRaw, minAmountOutRaw: i.minAmountOutRaw, traderTokenAccount: tokenAccount, traderQuoteAccount: quoteAccount }
  out.push(
    i.venue === "dex" ? await getPoolSwapInstruction({ ...trade, side: i.side }) : i.side === "buy" ? await getBuyInstruction(trade) : await getSellInstruction(trade)
  )
  if (i.fee !== null && i.fee.feeRaw > 0n) {
    const treasury = address(i.fee.treasury)
    if (quoteMint === WSOL_MINT_ADDRESS) {
      out.push(getTransferSolInstruction({ from: payer, to: treasury, lamports: i.fee.feeRaw }))
    } else {
      const treasuryAccount = await findAssociatedTokenAddress(treasury, quoteMint)
      out.push(getCreateAssociatedTokenInstruction({ payer, ata: treasuryAccount, owner: treasury, mint: quoteMint, idempotent: true }))
      out.push(getTokenTransferInstruction({ source: quoteAccount, destination: treasuryAccount, authority: payer, amount: i.fee.feeRaw }))
    }
  }
  out.push(memoInstruction(i.memo))
  return out
}

/** Why a chain error failed the trade (a landed revert's `err`, or a preflight refusal's text). Pure. */
export const solanaFailureReasonOf = (err: unknown): RevertReason => {
  if (typeof err === "string") {
    try {
      return buyLegFailure(JSON.parse(err))
    } catch {
      return /"Custom"\s*:\s*6000\b/.test(err) ? "slippage_exceeded" : "reverted"
    }
  }
  return buyLegFailure(err)
}

/** The venue of a curve account and its pool account as read (undefined: no svc-curve curve, not launched here). Pure. */
export const venueOf = (curveAccount: RawAccount | undefined, poolAccount: RawAccount | undefined): SolanaVenue | undefined => {
  const curve = curveAccount !== undefined && curveAccount.owner === SVC_CURVE_PROGRAM_ID ? decodeCurve(curveAccount.data) : undefined
  if (curve === undefined) return undefined
  if (curve.lifecycle === "trading") {
    return {
      _tag: "Open",
      quoteMint: curve.quoteMint,
      state: { _tag: "Curve", params: curveParamsOf(curve), state: curveStateOf(curve), creatorShareBps: BigInt(curve.creatorShareBps) }
    }
  }
  const pool = curve.lifecycle === "migrated" && poolAccount !== undefined && poolAccount.owner === SVC_CURVE_PROGRAM_ID ? decodePool(poolAccount.data) : undefined
  if (pool === undefined) return { _tag: "Graduating", quoteMint: curve.quoteMint }
  return {
    _tag: "Open",
    quoteMint: curve.quoteMint,
    state: {
      _tag: "SolanaPool",
      reserves: { quoteReserveRaw: pool.quoteReserveRaw, tokenReserveRaw: pool.tokenReserveRaw },
      fees: { feeBps: BigInt(pool.feeBps), creatorFeeBps: BigInt(pool.creatorFeeBps) }
    }
  }
}

export interface Holdings {
  readonly lamports: bigint
  readonly tokenRaw: bigint
}

/** An owner's lamports and its token account's balance of `mint` (0 when none, or not of that mint). Pure. */
const holdingsOf = (mint: string, sys: RawAccount | undefined, token: RawAccount | undefined): Holdings => {
  const t = token === undefined ? undefined : decodeSplTokenAccount(token.data)
  return { lamports: sys?.lamports ?? 0n, tokenRaw: t !== undefined && t.mint === mint ? t.amount : 0n }
}

/** The node connection the chain reads go through (`TransactionWatch.ts`), its failures `chain_unavailable`. */
type Watch = ReturnType<typeof makeTransactionWatch<ReturnType<typeof tradeError>>>

/** A transaction at `confirmed` (base64 wire bytes); null while the node does not hold it there. */
const tradeTransaction = (watch: Watch, signature: string) =>
  watch.read("getTransaction", (signal) =>
    watch.rpc.getTransaction(asSignature(signature), { encoding: "base64", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send({ abortSignal: signal })
  )
type TradeTransaction = Effect.Effect.Success<ReturnType<typeof tradeTransaction>>

/** The amount the landed trade paid out, from svc-curve's event in its logs; undefined when unreadable. Pure. */
const executedOut = (tx: TradeTransaction): bigint | undefined => {
  const logs = tx?.meta?.logMessages ?? []
  for (const { event } of curveEventsFromLogs(logs)) if (event.kind === "Trade" || event.kind === "PoolSwap") return event.amountOutRaw
  return undefined
}

/**
 * The executed amount of the landed trade `row` as the ingest stream carried it at a deciding
 * commitment (`ChainArrivals.landed`; undefined when it carried nothing that decides): the paying
 * wallet's trade of the row's mint and side; undefined when the stream did not carry it. Pure.
 */
export const tradeOutFromStream = (streamed: StreamedTransaction | undefined, row: Pick<TradeRow, "mint" | "wallet" | "side">): bigint | undefined =>
  streamed === undefined ? undefined : streamedTradeOut(streamed, row.mint, row.wallet, row.side)

/**
 * The chain's verdict on a sent trade: landed with its executed amount, reverted with its code,
 * never lands, or pending. When the ingest stream carried the landed trade at a deciding
 * commitment (`streamedOut`, from `ChainArrivals.landed`), that is the verdict, with no read of
 * the node. Else, once `delivered` (the stream delivered the transaction without the trade
 * whole), the transaction is read beside its status (`statusBeside`); before it, the status alone.
 */
const observeTrade = (
  watch: Watch,
  signature: string,
  lastValidBlockHeight: bigint,
  delivered: () => boolean,
  streamedOut: () => bigint | undefined
): Effect.Effect<TradeObservation, ReturnType<typeof tradeError>> =>
  Effect.gen(function* () {
    const streamed = streamedOut()
    if (streamed !== undefined) return { outcome: "landed", amountOutRaw: streamed } as const
    const { status: seen, transaction } = yield* statusBeside(watch.observe(signature, lastValidBlockHeight), tradeTransaction(watch, signature), delivered())
    switch (seen.outcome) {
      case "landed": {
        const out = executedOut(yield* transaction)
        return out === undefined ? ({ outcome: "pending" } as const) : ({ outcome: "landed", amountOutRaw: out } as const)
      }
      case "reverted":
        return { outcome: "reverted", reason: solanaFailureReasonOf(seen.error ?? ""), error: seen.error ?? "the transaction failed on chain" } as const
      case "never_lands":
        return { outcome: "never_lands" } as const
      case "pending":
        return { outcome: "pending" } as const
    }
  })

/** A landed transaction's message hash (base64 wire bytes at `confirmed`); undefined when the node does not hold it. */
const landedMessageHash = (watch: Watch, signature: Signature) =>
  Effect.map(tradeTransaction(watch, signature), (tx) => (tx === null ? undefined : messageHashOf(tx.transaction[0])))

/**
 * Looks for a built transaction the engine never sent (the caller may have signed and broadcast
 * it itself). Only once its blockhash expired at `finalized` (every block where it could have
 * landed is final): then the payer's signatures (`getSignaturesForAddress` at `confirmed`,
 * newest first, at most `TRACE_PAGES_MAX` pages) are read back to the build's slot; a signature
 * whose memo names the build's request (or whose memo the node does not report) has its
 * transaction read and its message hashed. The built message found: `Found`. The search reached
 * the build's slot, or the payer's oldest retained signature with the node's history reaching
 * back to the build's slot (`minimumLedgerSlot`), without it: `Lapsed`. Anything else (still
 * valid, history pruned past the build, a transaction the node lists but does not return, the
 * page bound): `Open`.
 */
const traceBuilt = (watch: Watch, b: BuiltOnChain): Effect.Effect<Traced, ReturnType<typeof tradeError>> =>
  Effect.gen(function* () {
    const { rpc, read } = watch
    const height = yield* read("getBlockHeight", (signal) => rpc.getBlockHeight({ commitment: "finalized" }).send({ abortSignal: signal }))
    if (height <= b.lastValidBlockHeight) return { _tag: "Open" } as const
    let before: Signature | undefined
    for (let page = 0; page < TRACE_PAGES_MAX; page++) {
      const from = before
      const entries = yield* read("getSignaturesForAddress", (signal) =>
        rpc
          .getSignaturesForAddress(address(b.payer), { commitment: "confirmed", limit: TRACE_PAGE, ...(from === undefined ? {} : { before: from }) })
          .send({ abortSignal: signal })
      )
      for (const entry of entries) {
        // Older than the build's blockhash: nothing from here on can carry it.
        if (b.builtSlot !== null && entry.slot < b.builtSlot) return { _tag: "Lapsed" } as const
        // A memo the node reports that does not name the request is another transaction (the built message carries the memo).
        if (typeof entry.memo === "string" && !entry.memo.includes(b.memo)) continue
        if (entry.memo === null) continue
        const hash = yield* landedMessageHash(watch, entry.signature)
        if (hash === undefined) return { _tag: "Open" } as const
        if (hash === b.messageHash) return { _tag: "Found", signature: entry.signature } as const
      }
      if (entries.length < TRACE_PAGE) {
        // The payer's oldest signature the node still has. Lapsed only when its history reaches
        // back to the build: a node that pruned past it cannot say the transaction never landed.
        if (b.builtSlot === null) return { _tag: "Lapsed" } as const
        const builtSlot = b.builtSlot
        const oldest = yield* read("minimumLedgerSlot", (signal) => rpc.minimumLedgerSlot().send({ abortSignal: signal }))
        return oldest <= builtSlot ? ({ _tag: "Lapsed" } as const) : ({ _tag: "Open" } as const)
      }
      before = entries[entries.length - 1]!.signature
    }
    return { _tag: "Open" } as const
  })

export const makeSolanaTradeChain = (options: { readonly rpcUrl: string; readonly timeoutMs?: number }) => {
  const watch = makeTransactionWatch(options.rpcUrl, (message) => tradeError("chain_unavailable", message, { retryable: true }), options.timeoutMs)
  const { rpc, read } = watch
  const multipleAccounts = makeMultipleAccountsReader(options.rpcUrl)

  /**
   * Several accounts read at one slot in one round trip (`getMultipleAccounts`); undefined where
   * none exists. Decoded without kit's response path (`MultipleAccounts.ts`: exact, kit's own
   * path for anything but a plain answer); its failures are the read's, as every chain read's.
   */
  const accounts = (addresses: ReadonlyArray<Address>) => read("getMultipleAccounts", (signal) => multipleAccounts(addresses, "confirmed", signal))

  /** Where `mint` trades now; undefined when it has no svc-curve curve (not launched here). One round trip: the curve and its pool together. */
  const venue = (mintText: string) =>
    Effect.gen(function* () {
      const addresses = yield* Effect.promise(() => findCurveAddresses(checkedAddress(mintText)))
      const [curve, pool] = yield* accounts([addresses.curve, addresses.pool])
      return venueOf(curve, pool)
    })

  /** What `owner` holds: lamports and its associated token account of `mint` (0 when none). One round trip. */
  const holdings = (ownerText: string, mintText: string) =>
    Effect.gen(function* () {
      const owner = checkedAddress(ownerText)
      const ata = yield* Effect.promise(() => findAssociatedTokenAddress(owner, checkedAddress(mintText)))
      const [sys, token] = yield* accounts([owner, ata])
      return holdingsOf(mintText, sys, token)
    })

  /** The venue and the owner's holdings read at one slot in one round trip (the build's chain read when the engine's index does not hold the market). */
  const venueAndHoldings = (mintText: string, ownerText: string) =>
    Effect.gen(function* () {
      const mint = checkedAddress(mintText)
      const owner = checkedAddress(ownerText)
      // Derived synchronously (memoized): the read is the build's one asynchronous step.
      const addresses = curveAddressesOf(mint)
      const [curve, pool, sys, token] = yield* accounts([addresses.curve, addresses.pool, owner, associatedTokenAddressOf(owner, mint)])
      return { venue: venueOf(curve, pool), holdings: holdingsOf(mintText, sys, token) }
    })

  const build = (i: TradeBuildInput) =>
    Effect.gen(function* () {
      // The blockhash read and the instructions (address derivations) run together.
      const [latest, instructions] = yield* Effect.all(
        [read("getLatestBlockhash", (signal) => rpc.getLatestBlockhash({ commitment: "confirmed" }).send({ abortSignal: signal })), Effect.promise(() => tradeInstructions(i))],
        { concurrency: 2 }
      )
      const message = buildTransactionMessage({
        feePayer: createNoopSigner(address(i.owner)),
        lifetime: { blockhash: latest.value.blockhash, lastValidBlockHeight: latest.value.lastValidBlockHeight },
        instructions,
        computeUnitLimit: TRADE_COMPUTE_UNIT_LIMIT
      })
      const partial = yield* Effect.promise(() => partiallySignTransactionMessageWithSigners(message))
      return { wire: new Uint8Array(txEncoder.encode(partial)), lastValidBlockHeight: latest.value.lastValidBlockHeight, slot: latest.context.slot } satisfies BuiltTrade
    })

  /**
   * Sends signed bytes once (preflight on: a trade the chain would refuse is refused by the node
   * and costs nothing). A refusal is the trade's failure; a lost answer is none (the chain decides).
   */
  const send = (signedBase64: string): Effect.Effect<TradeObservation | undefined> =>
    watch.send(signedBase64).pipe(
      Effect.as(undefined),
      Effect.catchAll(({ cause }) => {
        // The node no longer knows the blockhash (it expired between the build and the send): this transaction can never land.
        if (causedBy(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) return Effect.succeed<TradeObservation>({ outcome: "never_lands" })
        const reason = customCodeOf(cause) === SvcCurveError.SlippageExceeded ? "slippage_exceeded" : "reverted"
        return Effect.succeed<TradeObservation>({ outcome: "reverted", reason, error: `the node refused the transaction: ${String(cause)}` })
      })
    )

  /**
   * Asked at each look: `delivered`, whether the ingest stream delivered the transaction
   * (`ChainArrivals`); `streamedOut`, the executed amount of the landed trade the stream carried
   * (`streamedTradeOut` on `ChainArrivals.landed`), undefined when it did not.
   */
  const observe = (
    signature: string,
    lastValidBlockHeight: bigint,
    delivered: () => boolean = () => false,
    streamedOut: () => bigint | undefined = () => undefined
  ) => observeTrade(watch, signature, lastValidBlockHeight, delivered, streamedOut)

  const trace = (b: BuiltOnChain) => traceBuilt(watch, b)

  return { venue, holdings, venueAndHoldings, build, send, observe, trace }
}

export type SolanaTradeChain = ReturnType<typeof makeSolanaTradeChain>
