/**
 * The Hood chain as a headless launch uses it (spec 2.5, 3.1): a call filled and signed through
 * the wallet provider (its policy applies) within `buildTimeoutMs`, broadcast, its receipt waited
 * for by the Clock, and what a sent transaction's observation says (`txOutcome`). A node's error
 * is a `HoodLaunchError` reason.
 */
import { Clock, Duration, Effect, Option } from "effect"
import { type Address, type Hash, type Hex, type PublicClient, serializeTransaction, type TransactionReceipt } from "viem"
import { txOutcome } from "../../../chain/hood/launch/DevBuyOutcome.js"
import type { HoodCall } from "../../../chain/hood/launch/HeadlessCalls.js"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import type { HoodHeadlessContext } from "./HoodHeadlessContext.js"
import { chainError, fromWalletProvider, refuse } from "./HoodLaunchError.js"

/** A transaction this service sent: what its watcher reads the chain for. */
export interface SentTx {
  readonly hash: Hash
  readonly nonce: number
  readonly sentAtMs: number
  readonly hashReturned: boolean
}

export type HoodHeadlessChain = ReturnType<typeof makeHoodHeadlessChain>

export const makeHoodHeadlessChain = (ctx: HoodHeadlessContext) => {
  const { config, o, provider, pc } = ctx

  const rpc = <A>(what: string, f: (pc: PublicClient) => Promise<A>) =>
    Effect.tryPromise({ try: () => f(pc!), catch: (e) => chainError(e, what) })

  /** Fills nonce, gas and fees for `call` from `from`, then has the provider sign it. */
  const signCall = (accountId: string, from: Address, call: HoodCall, what: string, nonce?: number) =>
    Effect.gen(function* () {
      const prepared = yield* rpc(what, (c) =>
        c.prepareTransactionRequest({
          account: from,
          chain: config.chain!,
          to: call.to,
          data: call.data,
          value: call.value,
          type: "eip1559",
          ...(nonce === undefined ? {} : { nonce })
        })
      ).pipe(
        Effect.timeoutFail({ duration: Duration.millis(o.buildTimeoutMs), onTimeout: () => refuse("build_timeout", `building ${what} exceeded ${o.buildTimeoutMs} ms`) })
      )
      const serialized = serializeTransaction({
        type: "eip1559",
        chainId: config.chain!.id,
        nonce: prepared.nonce,
        gas: prepared.gas,
        maxFeePerGas: prepared.maxFeePerGas,
        maxPriorityFeePerGas: prepared.maxPriorityFeePerGas,
        to: call.to,
        data: call.data,
        value: call.value
      })
      const signed = yield* provider.signWithEmbedded(accountId, "evm", Buffer.from(serialized.slice(2), "hex")).pipe(
        Effect.catchTag("WalletProviderError", (e) => Effect.fail(fromWalletProvider(e)))
      )
      return { hash: signed.signature as Hash, raw: signed.signedTransaction as Hex, nonce: prepared.nonce }
    })

  /** Broadcasts signed bytes; false when the node did not return the hash (the send may still have happened). */
  const broadcast = (raw: Hex) =>
    rpc("broadcast", (c) => c.sendRawTransaction({ serializedTransaction: raw })).pipe(
      Effect.as(true),
      Effect.catchAll(() => Effect.succeed(false))
    )

  const receiptOf = (hash: Hash) =>
    rpc("receipt", (c) => c.getTransactionReceipt({ hash })).pipe(
      Effect.map(Option.some<TransactionReceipt>),
      Effect.catchAll(() => Effect.succeed(Option.none<TransactionReceipt>()))
    )

  /** Polls for a receipt for `waitMs` (by the Clock), read at once when the ingest stream delivers the transaction; none by then is `Option.none`. */
  const awaitReceipt = (hash: Hash, waitMs: number) =>
    awaitUntil(receiptOf(hash), Option.isSome, {
      what: `the receipt of ${hash}`,
      timeoutMs: waitMs,
      intervalMs: o.pollMs,
      wake: ctx.arrivals?.arrived(hash)
    }).pipe(
      Effect.catchTag("AwaitTimedOut", () => Effect.succeed(Option.none<TransactionReceipt>()))
    )

  const txObservation = (hash: Hash, from: Address, nonce: number, sentAtMs: number, hashReturned: boolean) =>
    Effect.gen(function* () {
      const receipt = yield* receiptOf(hash)
      const minedNonce = yield* rpc("nonce", (c) => c.getTransactionCount({ address: from, blockTag: "latest" }))
      const nowMs = yield* Clock.currentTimeMillis
      const obs = {
        receipt: Option.match(receipt, { onNone: () => null, onSome: (r) => r.status }),
        hashReturned,
        txNonce: nonce,
        minedNonce,
        sentAtMs,
        nowMs,
        watchMaxMs: o.watchMaxMs
      } as const
      return { obs, outcome: txOutcome(obs), receipt }
    })

  /** Sends a signed call and waits up to `waitMs` for its receipt; a signing refusal is `refused`. */
  const sendAndWait = (accountId: string, from: Address, call: HoodCall, what: string, waitMs: number) =>
    Effect.gen(function* () {
      const signed = yield* signCall(accountId, from, call, what)
      const sentAtMs = yield* Clock.currentTimeMillis
      const hashReturned = yield* broadcast(signed.raw)
      yield* awaitReceipt(signed.hash, waitMs)
      const seen = yield* txObservation(signed.hash, from, signed.nonce, sentAtMs, hashReturned)
      const sent: SentTx = { hash: signed.hash, nonce: signed.nonce, sentAtMs, hashReturned }
      return { sent, outcome: seen.outcome, receipt: seen.receipt }
    })

  return { rpc, signCall, broadcast, receiptOf, awaitReceipt, txObservation, sendAndWait }
}
