/**
 * The Hood chain as a self-signed launch reads it (launch spec 3.2, 3.4): the configured factory,
 * the predicted curve, the treasury, unsigned EIP-1559 legs, receipts and transactions. Every read
 * failure is a retryable `LAUNCH_FAILED` (`chain_read_failed`): a receipt or transaction is
 * `undefined` only when the node answered that it does not have it (not mined, or unknown); a read
 * that failed (an error, a timeout) fails the step, retryable, and is never taken as a verdict.
 */
import { Effect } from "effect"
import {
  type Address,
  BaseError,
  type Chain,
  getAddress,
  type Hash,
  type Hex,
  type PublicClient,
  serializeTransaction,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError
} from "viem"
import { curveFactoryAbi, feeSplitterAbi } from "../../../chain/hood/abi.generated.js"
import { hoodPublicClient, predictCurveAddress } from "../../../chain/hood/client/HoodClient.js"
import type { HoodCall } from "../../../chain/hood/launch/HeadlessCalls.js"
import { USDG_ADDRESS } from "../../../domain/QuotePairs.js"
import { type LaunchError, launchFailure } from "../LaunchError.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"
import type { HoodSelfLaunchConfig } from "../HoodSelfLaunch.js"
import { type AttemptSnapshot, blockMissing, createInput, type LegOnChain, legOnChainOf, nonceBlockOf, type SeenTransaction } from "./HoodSelfRules.js"

const chainRead = (what: string) => (e: unknown) =>
  launchFailure("launch_failed", `${what} failed: ${e instanceof BaseError ? e.shortMessage : String(e)}`, { retryable: true, details: { reason: "chain_read_failed" } })

/** The payer's mined transaction count at `blockNumber`. */
const nonceRead = (payer: Address, blockNumber: bigint) => (c: PublicClient) => c.getTransactionCount({ address: payer, blockNumber })

export type HoodSelfChain = ReturnType<typeof makeHoodSelfChain>

export const makeHoodSelfChain = (config: HoodSelfLaunchConfig) => {
  const pc: PublicClient | undefined = config.chain !== undefined && config.rpcUrl !== undefined ? hoodPublicClient(config.chain, config.rpcUrl) : undefined

  /** A read that keeps the node's own error (`blockMissing` and the "not found" checks read it). */
  const raw = <A>(f: (c: PublicClient) => Promise<A>) => Effect.tryPromise({ try: () => f(pc!), catch: (e): unknown => e })
  /** A read whose failure is the retryable `chain_read_failed`. */
  const rpc = <A>(what: string, f: (c: PublicClient) => Promise<A>) => Effect.mapError(raw(f), chainRead(what))

  const configured = Effect.suspend(() =>
    pc === undefined || config.factory === undefined || config.bondingCurveBytecode === undefined || config.chain === undefined
      ? Effect.fail(
          launchFailure("hood_launch_unavailable", "Hood launches are not configured on this server (RPC, factory or curve bytecode missing)", { retryable: true })
        )
      : Effect.succeed({ factory: config.factory, bytecode: config.bondingCurveBytecode, chain: config.chain })
  )

  /** The curve a build predicts for `creator` (its CREATE2 address covers every constructor argument). */
  const predicted = (factory: Address, bytecode: Hex, creator: Address, body: SelfLaunchBody, metadataUri: string, salt: Hex) =>
    Effect.map(
      rpc("factory read", (c) =>
        Promise.all([
          c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" }),
          c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "curveFeeBps" })
        ])
      ),
      ([feeSplitter, feeBps]) => ({
        curve: predictCurveAddress({ factory, creator, feeSplitter, feeBps, bondingCurveBytecode: bytecode, input: createInput(body, metadataUri, salt, config.usdg ?? (USDG_ADDRESS as Address)) }),
        feeSplitter,
        feeBps
      })
    )

  const treasuryOf = (feeSplitter: Address) => rpc("treasury read", (c) => c.readContract({ address: feeSplitter, abi: feeSplitterAbi, functionName: "treasury" }))

  /** Nonce, gas and fees for `call` from `from`: the serialized unsigned EIP-1559 transaction. */
  const unsigned = (chain: Chain, from: Address, call: HoodCall, nonce: number, what: string, gas?: bigint) =>
    rpc(what, (c) =>
      c.prepareTransactionRequest({ account: from, chain, to: call.to, data: call.data, value: call.value, type: "eip1559", nonce, ...(gas === undefined ? {} : { gas }) })
    ).pipe(
      Effect.catchAll((e) =>
        e.details?.reason === "chain_read_failed" && String(e.message).toLowerCase().includes("insufficient funds")
          ? Effect.fail(launchFailure("insufficient_owner_balance", `${from} cannot cover the gas of ${what}`, { retryable: true }))
          : Effect.fail(e)
      ),
      Effect.map((p) =>
        serializeTransaction({
          type: "eip1559",
          chainId: chain.id,
          nonce: p.nonce,
          gas: p.gas,
          maxFeePerGas: p.maxFeePerGas,
          maxPriorityFeePerGas: p.maxPriorityFeePerGas,
          to: call.to,
          data: call.data,
          value: call.value
        })
      )
    )

  /** The head block this node answers, uncached: the one block a check's reads are pinned to (a node without it errors, retryable; never a stale answer). */
  const headBlock = rpc("block number", (c) => c.getBlockNumber({ cacheTime: 0 }))

  /** `nonceRead` whose failure is the retryable `chain_read_failed`. */
  const nonceAt = (payer: Address, blockNumber: bigint) => rpc("nonce", nonceRead(payer, blockNumber))

  /** The payer's nonce and whether `curve` exists, both at `block`; a failure keeps the node's own error (`blockMissing` reads it). */
  const attemptAt = (payer: Address, factory: Address, curve: string, block: bigint, atHead: boolean) =>
    Effect.gen(function* () {
      const nonce = yield* raw(nonceRead(payer, block))
      const curveExists = yield* raw((c) => c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "isCurve", args: [getAddress(curve)], blockNumber: block }))
      return { block, atHead, nonce, curveExists } satisfies AttemptSnapshot
    })

  /**
   * An earlier attempt as ONE block shows it (`headBlock`): the payer's mined nonce, then whether
   * its curve exists, both read at that block. Read at "latest" one after the other, a curve
   * created between the two reads (or a curve read served by a node behind the nonce read) showed
   * "nonce passed" with "no curve": a live attempt taken for dead. The build's repeat check and a
   * linked record's "not mined" check decide on this snapshot.
   *
   * Behind a load-balanced endpoint the backend answering a read may trail the one that answered
   * the head by a block and not have it yet (`blockMissing`): both reads are then made once more at
   * `head - 1` (one snapshot still, one block older: a curve and the nonce its `createCurve` used
   * appear in the same block, so an older block never shows "nonce used, no curve" for a live
   * attempt). Such a snapshot says `atHead: false`: it may conclude only "curve exists", "TEE in
   * flight" or a linked record's "not mined yet", never "no curve, build again" nor "dead"
   * (`buildAgainOf`, `unminedRecordOf`: a createCurve mined in the head block is not in it).
   * Once only: a node further behind, or any other failure, fails retryable (`chain_read_failed`).
   */
  const attemptAtHead = (payer: Address, factory: Address, curve: string) =>
    Effect.gen(function* () {
      const head = yield* headBlock
      return yield* attemptAt(payer, factory, curve, head, true).pipe(
        Effect.catchAll((e) => (blockMissing(e) && head > 0n ? attemptAt(payer, factory, curve, head - 1n, false) : Effect.fail(e))),
        Effect.mapError(chainRead("attempt read"))
      )
    })

  /** A read whose "not found" answer is `undefined`; any other failure is the retryable `chain_read_failed`. */
  const found = <A>(what: string, f: (c: PublicClient) => Promise<A>, notFound: (e: unknown) => boolean) =>
    raw(f).pipe(
      Effect.map((a): A | undefined => a),
      Effect.catchAll((e) => (notFound(e) ? Effect.succeed(undefined) : Effect.fail(chainRead(what)(e))))
    )

  /** The receipt; `undefined` when the node has none (not mined). A failed read fails, retryable. */
  const receiptOf = (hash: string): Effect.Effect<TransactionReceipt | undefined, LaunchError> =>
    found("receipt", (c) => c.getTransactionReceipt({ hash: hash as Hash }), (e) => e instanceof TransactionReceiptNotFoundError)
  /** The transaction; `undefined` when the node does not know it. A failed read fails, retryable. */
  const transactionOf = (hash: string): Effect.Effect<SeenTransaction | undefined, LaunchError> =>
    found("transaction", (c) => c.getTransaction({ hash: hash as Hash }), (e) => e instanceof TransactionNotFoundError).pipe(
      Effect.map((t) =>
        t === undefined ? undefined : { from: getAddress(t.from), to: t.to === null ? null : getAddress(t.to), value: t.value, input: t.input, nonce: t.nonce }
      )
    )

  /**
   * A signed leg (`hash`, the payer's `nonce`) as the chain shows it (`legOnChainOf`): the receipt;
   * if none, the payer's nonce read at a block pinned `NEVER_LANDS_DEPTH_BLOCKS` under the head this
   * node answers (uncached), and, when it passed the leg's, the receipt read once more: `used` only
   * then, on that evidence. The operation's sent legs (`observe`) and a dead or superseded
   * attempt's signed claims (`legVerdict`) read through this one path. A failed read fails, retryable.
   */
  const legOnChain = (payer: Address, hash: string, nonce: number): Effect.Effect<LegOnChain, LaunchError> =>
    Effect.gen(function* () {
      const receipt = (yield* receiptOf(hash))?.status
      if (receipt !== undefined) return legOnChainOf({ receipt, nonceAtDepth: undefined, legNonce: nonce, receiptAgain: undefined })
      const nonceAtDepth = yield* nonceAt(payer, nonceBlockOf(yield* headBlock))
      const receiptAgain = nonceAtDepth > nonce ? (yield* receiptOf(hash))?.status : undefined
      return legOnChainOf({ receipt, nonceAtDepth, legNonce: nonce, receiptAgain })
    })

  return { rpc, configured, predicted, treasuryOf, unsigned, attemptAtHead, receiptOf, transactionOf, legOnChain }
}
