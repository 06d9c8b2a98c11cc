/**
 * The Hood side of the trade rail (issue 28), the port `SolanaTradeChain` is on Solana: where a
 * token trades now, read from the chain (its BondingCurve while trading, its Uniswap v3 pool once
 * migrated), the trade's unsigned transaction (viem's ABI encoding over the generated ABIs, an
 * EIP-1559 transaction with an explicit gas limit and nonce: the embedded wallet signs the bytes),
 * sending signed bytes once (preflight first: a trade the chain would refuse is refused before it
 * is broadcast and costs nothing), the chain's verdict on a transaction hash, and what a landed
 * trade executed, from its receipt's logs (the curve's `Trade`, the pool's `Swap`), to the raw
 * unit. No SQL, no HTTP: the trade service decides. Every read failure is `chain_unavailable`
 * (retryable), never a zero.
 *
 * The transactions (ETH-quoted markets):
 * - curve buy: `BondingCurve.buy(amountIn, minAmountOut)` with `value = amountIn`; a buy that
 *   crosses graduation is capped at the threshold and the curve sends the refund back in the same
 *   transaction (its `Trade.refund`);
 * - curve sell: `BondingCurve.sell(tokensIn, minAmountOut)` (the curve pulls the tokens: it needs
 *   the wallet's allowance, see `approveCall`);
 * - pool buy: the SwapRouter's `exactInputSingle` paying ETH (`value = amountIn`, the router wraps
 *   it) with `amountOutMinimum`, the tokens to the wallet;
 * - pool sell: `multicall([exactInputSingle(token → WETH, to the router, amountOutMinimum),
 *   unwrapWETH9(amountOutMinimum, wallet)])`: the seller receives ETH, not WETH.
 *
 * Gas: a fixed limit per venue and side (`HOOD_TRADE_GAS`), never an estimate on the hot path (an
 * estimate is a round trip and was seen too low for router swaps, see `SWAP_GAS_LIMIT`); the
 * integration test checks each limit against the gas the localnet's worst cases use.
 *
 * Nonces: the wallet's next nonce is read from the node (`pending`: its unmined transactions
 * count) under the wallet's lock (`withWallet`), held from the read through signing, recording,
 * sending and the verdict, so two trades of one wallet in this process never take one nonce and a
 * trade refused before broadcast leaves no gap. Across processes the chain keeps money safe: two
 * transactions with one nonce cannot both land, and the loser is settled by its own verdict below.
 *
 * Verdicts by hash and nonce: a receipt says landed (status 1) or reverted (status 0); without
 * one, the transaction never lands once the wallet's mined nonce passed its own (the nonce went
 * to another transaction), else it is pending. The mined nonce is read BEFORE the receipt, so a
 * transaction mined between the two reads is never taken for one that never lands.
 */
import { Effect, Option } from "effect"
import {
  type Address,
  BaseError,
  type Chain,
  decodeErrorResult,
  encodeFunctionData,
  getAddress,
  type Hash,
  type Hex,
  parseEventLogs,
  parseTransaction,
  type PublicClient,
  recoverTransactionAddress,
  serializeTransaction,
  type TransactionReceipt,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  zeroAddress
} from "viem"
import { bondingCurveAbi, curveFactoryAbi, curveTokenAbi, feeSplitterAbi, swapRouterAbi, uniswapV3PoolAbi } from "../../chain/hood/abi.generated.js"
import { hoodErrorsAbi, hoodPublicClient, readCurve } from "../../chain/hood/client/HoodClient.js"
import type { HoodCall } from "../../chain/hood/launch/HeadlessCalls.js"
import { quoteHoodPool, viemPoolSource } from "./HoodPoolQuote.js"
import { tradeError, type TradeError } from "./TradeError.js"
import type { TradeObservation } from "./TradeMachine.js"
import { quoteVenue, type Side, type VenueQuote } from "./VenueQuote.js"

/**
 * Gas limits (units), fixed per venue and side. Measured on the localnet (the integration test
 * `trade.hood.test.ts` asserts every trade's `gasUsed` stays under its limit, including the buy
 * that crosses graduation and pool swaps large enough to move the price by half), then given
 * headroom of about 2.5x:
 * - curve buy: 159k the first buy of a wallet (fresh storage), 120k the crossing buy (phase write,
 *   `CurveCompleted`, the refund sent back);
 * - curve sell: 99k;
 * - pool buy / sell: 126k / 144k through the router within the graduation position; each
 *   initialized tick crossed adds ~20–30k, and a quote reads at most `READS_MAX` (32) words and
 *   ticks, so 1.5M bounds every swap the rail quotes;
 * - approve: 46k.
 * A limit too low mines a revert (the fee is spent, nothing traded): the test is the guard.
 */
export const HOOD_TRADE_GAS = {
  curveBuy: 400_000n,
  curveSell: 300_000n,
  poolBuy: 1_500_000n,
  poolSell: 1_500_000n,
  approve: 100_000n
} as const

/** The zero-value self-transfer that releases a never-sent trade's nonce (`releaseUnsent`). */
export const HOOD_RELEASE_GAS = 21_000n

/** A pool trade's deadline after its build (the router refuses it later; the curve has none). */
export const HOOD_POOL_DEADLINE_S = 600n

/** What an allowance is raised to before a sell: the max, so a wallet approves each spender once. */
const MAX_ALLOWANCE = 2n ** 256n - 1n

export type HoodTradeVenue = "svc-curve" | "hood-dex"

export type HoodPriced =
  | {
      readonly _tag: "Quoted"
      readonly venue: HoodTradeVenue
      readonly curve: Address
      /** The Uniswap v3 pool once migrated, else null. */
      readonly pool: Address | null
      /** The pool's fee tier (pips) the router routes through; 0 on the curve. */
      readonly poolFee: number
      readonly quote: Exclude<VenueQuote, { _tag: "Need" }>
    }
  | {
      readonly _tag: "Closed"
      /** `hood_graduating` (complete, not migrated), `market_recovery`, `quote_unsupported` (a USDG pair), `too_deep`. */
      readonly reason: "hood_graduating" | "market_recovery" | "quote_unsupported" | "too_deep"
    }

export interface HoodTradeBuildInput {
  readonly wallet: Address
  readonly venue: HoodTradeVenue
  readonly side: Side
  readonly mint: Address
  readonly curve: Address
  readonly poolFee: number
  readonly amountInRaw: bigint
  readonly minAmountOutRaw: bigint
  /** Epoch seconds past which the router refuses a pool trade. */
  readonly deadlineS: bigint
}

export interface HoodTradeChainOptions {
  readonly chain: Chain
  readonly rpcUrl: string
  readonly factory: Address
  readonly swapRouter: Address
  readonly weth9: Address
}

/** The trade's call: where, what, how much ETH, and its gas limit. Pure. */
export const hoodTradeCall = (router: Address, weth9: Address, i: HoodTradeBuildInput): HoodCall & { readonly gas: bigint } => {
  if (i.venue === "svc-curve") {
    return i.side === "buy"
      ? { to: i.curve, data: encodeFunctionData({ abi: bondingCurveAbi, functionName: "buy", args: [i.amountInRaw, i.minAmountOutRaw] }), value: i.amountInRaw, gas: HOOD_TRADE_GAS.curveBuy }
      : { to: i.curve, data: encodeFunctionData({ abi: bondingCurveAbi, functionName: "sell", args: [i.amountInRaw, i.minAmountOutRaw] }), value: 0n, gas: HOOD_TRADE_GAS.curveSell }
  }
  const params = {
    tokenIn: i.side === "buy" ? weth9 : i.mint,
    tokenOut: i.side === "buy" ? i.mint : weth9,
    fee: i.poolFee,
    recipient: i.side === "buy" ? i.wallet : router,
    deadline: i.deadlineS,
    amountIn: i.amountInRaw,
    amountOutMinimum: i.minAmountOutRaw,
    sqrtPriceLimitX96: 0n
  } as const
  if (i.side === "buy") {
    return { to: router, data: encodeFunctionData({ abi: swapRouterAbi, functionName: "exactInputSingle", args: [params] }), value: i.amountInRaw, gas: HOOD_TRADE_GAS.poolBuy }
  }
  const swap = encodeFunctionData({ abi: swapRouterAbi, functionName: "exactInputSingle", args: [params] })
  const unwrap = encodeFunctionData({ abi: swapRouterAbi, functionName: "unwrapWETH9", args: [i.minAmountOutRaw, i.wallet] })
  return { to: router, data: encodeFunctionData({ abi: swapRouterAbi, functionName: "multicall", args: [[swap, unwrap]] }), value: 0n, gas: HOOD_TRADE_GAS.poolSell }
}

/** `approve(spender, max)` on the token, with its gas limit. Pure. */
export const approveCall = (token: Address, spender: Address): HoodCall & { readonly gas: bigint } => ({
  to: token,
  data: encodeFunctionData({ abi: curveTokenAbi, functionName: "approve", args: [spender, MAX_ALLOWANCE] }),
  value: 0n,
  gas: HOOD_TRADE_GAS.approve
})

/** What a landed trade executed, from its receipt's logs: the curve's `Trade` by `wallet` on `mint`, or the pool's `Swap` output. Pure. */
export const executedOutOf = (receipt: TransactionReceipt, venue: string, mint: Address, wallet: Address): bigint | undefined => {
  if (venue === "svc-curve") {
    const trade = parseEventLogs({ abi: bondingCurveAbi, logs: receipt.logs, eventName: "Trade" }).find(
      (t) => getAddress(t.args.token) === getAddress(mint) && getAddress(t.args.trader) === getAddress(wallet)
    )
    return trade?.args.amountOut
  }
  const swap = parseEventLogs({ abi: uniswapV3PoolAbi, logs: receipt.logs, eventName: "Swap" })[0]
  if (swap === undefined) return undefined
  // The pool's signed deltas: what it paid out is the negative one.
  const { amount0, amount1 } = swap.args
  return amount0 < 0n ? -amount0 : amount1 < 0n ? -amount1 : undefined
}

/** The contracts' custom errors and Solidity's `Error(string)` (the router's `require` messages). */
const revertAbi = [...hoodErrorsAbi, { type: "error", name: "Error", inputs: [{ name: "message", type: "string" }] }] as const

/** The revert data a node answered a call with (viem nests the JSON-RPC error's `data` in its causes), if any. Pure. */
export const revertDataOf = (e: unknown): Hex | undefined => {
  for (let x: unknown = e, depth = 0; typeof x === "object" && x !== null && depth < 8; x = (x as { cause?: unknown }).cause, depth++) {
    const data = (x as { data?: unknown }).data
    if (typeof data === "string" && /^0x[0-9a-fA-F]*$/.test(data) && data.length >= 10) return data as Hex
    const inner = typeof data === "object" && data !== null ? (data as { data?: unknown }).data : undefined
    if (typeof inner === "string" && /^0x[0-9a-fA-F]*$/.test(inner) && inner.length >= 10) return inner as Hex
  }
  return undefined
}

/** Whether a call's failure is the EVM's revert (not a node that could not be asked). Pure. */
export const isRevert = (e: unknown): boolean =>
  revertDataOf(e) !== undefined || /revert|VM Exception/i.test(e instanceof BaseError ? `${e.message} ${e.details}` : String(e))

/** A revert's name for the record: the decoded error, else the node's message. Pure. */
const revertReasonOf = (e: unknown): string => {
  const data = revertDataOf(e)
  if (data !== undefined) {
    try {
      const d = decodeErrorResult({ abi: revertAbi, data }) as { readonly errorName: string; readonly args?: ReadonlyArray<unknown> }
      return d.errorName === "Error" ? String(d.args?.[0]) : d.errorName
    } catch {
      return `revert data ${data.slice(0, 10)}`
    }
  }
  return e instanceof BaseError ? e.shortMessage : String(e)
}

/** The failure code of a reverted call: the curve's `SlippageExceeded`, the router's "Too little received"; any other revert. Pure. */
export const hoodFailureCodeOf = (e: unknown): "SLIPPAGE_EXCEEDED" | "TRADE_REVERTED" => {
  const data = revertDataOf(e)
  if (data !== undefined) {
    try {
      const decoded = decodeErrorResult({ abi: revertAbi, data }) as { readonly errorName: string; readonly args?: ReadonlyArray<unknown> }
      if (decoded.errorName === "SlippageExceeded") return "SLIPPAGE_EXCEEDED"
      if (decoded.errorName === "Error" && decoded.args?.[0] === "Too little received") return "SLIPPAGE_EXCEEDED"
      return "TRADE_REVERTED"
    } catch {
      // not an error these contracts declare: read the text below
    }
  }
  const text = e instanceof BaseError ? `${e.message} ${e.details}` : String(e)
  return /SlippageExceeded|Too little received/.test(text) ? "SLIPPAGE_EXCEEDED" : "TRADE_REVERTED"
}

/**
 * One holder at a time per wallet (its nonce is read, signed, recorded and sent under it), the
 * entry dropped when its last user leaves: the map holds only wallets with a trade in progress.
 */
export const makeWalletLocks = () => {
  const locks = new Map<string, { readonly sem: Effect.Semaphore; users: number }>()
  const withWallet = <A, E, R>(wallet: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const key = wallet.toLowerCase()
      let entry = locks.get(key)
      if (entry === undefined) {
        entry = { sem: Effect.unsafeMakeSemaphore(1), users: 0 }
        locks.set(key, entry)
      }
      const e = entry
      e.users++
      return e.sem.withPermits(1)(effect).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (--e.users === 0) locks.delete(key)
          })
        )
      )
    })
  /** `effect` under the wallet's lock when nobody holds it now, else `None` without waiting (never deadlocks a holder that asks). */
  const withWalletIfFree = <A, E, R>(wallet: string, effect: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
    Effect.suspend(() => {
      const key = wallet.toLowerCase()
      if (locks.has(key)) return Effect.succeedNone
      return Effect.map(withWallet(wallet, effect), Option.some)
    })
  return { withWallet, withWalletIfFree, size: () => locks.size }
}

export const makeHoodTradeChain = (options: HoodTradeChainOptions) => {
  const pc: PublicClient = hoodPublicClient(options.chain, options.rpcUrl)
  const router = getAddress(options.swapRouter)
  const weth9 = getAddress(options.weth9)

  const locks = makeWalletLocks()

  const read = <A>(what: string, f: (c: PublicClient) => Promise<A>): Effect.Effect<A, TradeError> =>
    Effect.tryPromise({
      try: () => f(pc),
      catch: (e) => tradeError("chain_unavailable", `Hood ${what}: ${e instanceof Error ? e.message.split("\n")[0] : String(e)}`, { retryable: true })
    })

  /** The curve the factory created for `mint`, or undefined (not launched here). */
  const curveOf = (mint: Address) =>
    Effect.map(
      read("curve lookup", (c) => c.readContract({ address: options.factory, abi: curveFactoryAbi, functionName: "curveOf", args: [mint] })),
      (curve) => (curve === zeroAddress ? undefined : getAddress(curve))
    )

  /** The fee splitter's streamer share (the creator's part of a venue fee), in bps. */
  const creatorShareBps = Effect.map(
    read("streamer share", async (c) => {
      const splitter = await c.readContract({ address: options.factory, abi: curveFactoryAbi, functionName: "feeSplitter" })
      return c.readContract({ address: splitter, abi: feeSplitterAbi, functionName: "streamerShareBps" })
    }),
    (bps) => BigInt(bps)
  )

  /** Prices an exact input on the venue `mint` trades on now; undefined when it was not launched here. */
  const quote = (mint: Address, side: Side, amountInRaw: bigint): Effect.Effect<HoodPriced | undefined, TradeError> =>
    Effect.gen(function* () {
      const curve = yield* curveOf(mint)
      if (curve === undefined) return undefined
      const [snapshot, share] = yield* Effect.all([read("curve read", (c) => readCurve(c, curve)), creatorShareBps])
      if (snapshot.quoteToken !== zeroAddress) return { _tag: "Closed", reason: "quote_unsupported" } as const
      switch (snapshot.phase) {
        case "trading": {
          const q = quoteVenue({ _tag: "Curve", params: snapshot.params, state: snapshot.state, creatorShareBps: share }, side, amountInRaw)
          if (q._tag === "Need") return yield* tradeError("chain_unavailable", "the curve quote asked for a pool read", { retryable: true })
          return { _tag: "Quoted", venue: "svc-curve", curve, pool: null, poolFee: 0, quote: q } as const
        }
        case "completed":
          return { _tag: "Closed", reason: "hood_graduating" } as const
        case "recovery":
          return { _tag: "Closed", reason: "market_recovery" } as const
        case "migrated": {
          const pool = snapshot.pool
          if (pool === null) return { _tag: "Closed", reason: "hood_graduating" } as const
          const [q, fee] = yield* Effect.all([
            read("pool quote", () => quoteHoodPool(viemPoolSource(pc), { pool, token: mint, side, amountIn: amountInRaw, creatorShareBps: share })),
            read("pool fee", (c) => c.readContract({ address: pool, abi: uniswapV3PoolAbi, functionName: "fee" }))
          ])
          if (q._tag === "TooDeep") return { _tag: "Closed", reason: "too_deep" } as const
          return { _tag: "Quoted", venue: "hood-dex", curve, pool, poolFee: Number(fee), quote: q.quote } as const
        }
      }
    })

  /** What `wallet` holds: wei and the token. */
  const holdings = (wallet: Address, mint: Address) =>
    Effect.map(
      Effect.all([
        read("balance", (c) => c.getBalance({ address: wallet })),
        read("token balance", (c) => c.readContract({ address: mint, abi: curveTokenAbi, functionName: "balanceOf", args: [wallet] }))
      ]),
      ([weiRaw, tokenRaw]) => ({ weiRaw, tokenRaw })
    )

  /** Who pulls the tokens of a sell on `venue` (the curve, or the router). */
  const spenderOf = (venue: HoodTradeVenue, curve: Address): Address => (venue === "svc-curve" ? curve : router)

  const allowance = (wallet: Address, mint: Address, spender: Address) =>
    read("allowance", (c) => c.readContract({ address: mint, abi: curveTokenAbi, functionName: "allowance", args: [wallet, spender] }))

  /** The current fee caps (a fee read, not a gas estimate). */
  const fees = read("fees", (c) => c.estimateFeesPerGas({ chain: options.chain, type: "eip1559" }))

  /** The wallet's next nonce, counting its transactions the node holds unmined. */
  const nextNonce = (wallet: Address) => read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "pending" }))

  /** An unsigned EIP-1559 transaction of `call` from `wallet`: explicit gas and the wallet's next nonce. */
  const unsigned = (wallet: Address, call: HoodCall & { readonly gas: bigint }) =>
    Effect.gen(function* () {
      const [nonce, f] = yield* Effect.all([nextNonce(wallet), fees])
      const bytes = serializeTransaction({
        type: "eip1559",
        chainId: options.chain.id,
        nonce,
        gas: call.gas,
        maxFeePerGas: f.maxFeePerGas,
        maxPriorityFeePerGas: f.maxPriorityFeePerGas,
        to: call.to,
        data: call.data,
        value: call.value
      })
      return { bytes: Buffer.from(bytes.slice(2), "hex") as Uint8Array, nonce, gas: call.gas, maxFeePerGas: f.maxFeePerGas, value: call.value }
    })

  /** The trade's unsigned transaction. */
  const build = (i: HoodTradeBuildInput) => unsigned(i.wallet, hoodTradeCall(router, weth9, i))

  /**
   * Preflights signed bytes (an `eth_call` of the same call from the same sender at the pending
   * state), then sends them once. A refusal (preflight or the node's) is the trade's failure and
   * nothing was broadcast; a lost answer is none (the chain decides).
   */
  const send = (raw: Hex): Effect.Effect<TradeObservation | undefined> =>
    Effect.gen(function* () {
      const tx = parseTransaction(raw)
      const from = yield* Effect.promise(() => recoverTransactionAddress({ serializedTransaction: raw as Parameters<typeof recoverTransactionAddress>[0]["serializedTransaction"] }))
      const preflight = yield* Effect.tryPromise({
        try: () => pc.call({ account: from, to: tx.to!, data: tx.data!, value: tx.value ?? 0n, gas: tx.gas!, blockTag: "pending" }),
        catch: (e) => e
      }).pipe(Effect.either)
      if (preflight._tag === "Left") {
        const e = preflight.left
        // Only a revert is a refusal; a node that could not be asked decides nothing (send anyway: the chain decides).
        if (isRevert(e)) {
          return { outcome: "reverted", code: hoodFailureCodeOf(e), error: `the preflight reverted: ${revertReasonOf(e)}` } satisfies TradeObservation
        }
      }
      return yield* Effect.tryPromise({ try: () => pc.sendRawTransaction({ serializedTransaction: raw }), catch: (e) => e }).pipe(
        Effect.as(undefined),
        Effect.catchAll((e) => {
          // An RPC error answer is the node's refusal (nonce used, fee too low): the transaction is not in.
          if (e instanceof BaseError && e.walk((x) => (x as { name?: string }).name === "RpcRequestError" || (x as { code?: unknown }).code !== undefined) !== null) {
            return Effect.succeed<TradeObservation>({ outcome: "reverted", code: hoodFailureCodeOf(e), error: `the node refused the transaction: ${revertReasonOf(e)}` })
          }
          return Effect.as(Effect.logWarning("Hood trade send: answer lost; the chain decides", e), undefined)
        })
      )
    })

  /**
   * Why a mined transaction reverted: its call replayed on the state after its block. A reverted
   * transaction changed nothing there but its sender's gas, so the state after the block is what it
   * saw, plus whatever came after it in the block (a front-run is before it: that is the usual
   * reason a trade that passed its preflight fails its minimum once mined).
   */
  const revertCodeOf = (receipt: TransactionReceipt, hash: Hash) =>
    Effect.gen(function* () {
      const tx = yield* read("transaction", (c) => c.getTransaction({ hash }))
      const replay = yield* Effect.tryPromise({
        try: () => pc.call({ account: tx.from, to: tx.to!, data: tx.input, value: tx.value, gas: tx.gas, blockNumber: receipt.blockNumber }),
        catch: (e) => e
      }).pipe(Effect.either)
      return replay._tag === "Left" ? hoodFailureCodeOf(replay.left) : ("TRADE_REVERTED" as const)
    })

  /** The chain's verdict on a sent trade (its hash, the wallet and the nonce it was signed with). */
  const observe = (row: { readonly signature: string; readonly wallet: string; readonly mint: string; readonly venue: string; readonly nonce: bigint }): Effect.Effect<TradeObservation, TradeError> =>
    Effect.gen(function* () {
      const hash = row.signature as Hash
      const wallet = getAddress(row.wallet)
      // The mined nonce first: a transaction mined after this read still shows its receipt below.
      const mined = yield* read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "latest" }))
      const receipt = yield* read("receipt", (c) =>
        c.getTransactionReceipt({ hash }).catch((e: unknown) => {
          // Only "no receipt" is an answer; any other failure is the node's, not the chain's.
          if (e instanceof TransactionReceiptNotFoundError) return undefined
          throw e
        })
      )
      if (receipt === undefined) return BigInt(mined) > row.nonce ? ({ outcome: "never_lands" } as const) : ({ outcome: "pending" } as const)
      if (receipt.status !== "success") {
        const code = yield* revertCodeOf(receipt, hash)
        return { outcome: "reverted", code, error: `the transaction reverted on chain (block ${receipt.blockNumber})` } as const
      }
      const out = executedOutOf(receipt, row.venue, getAddress(row.mint), wallet)
      return out === undefined ? ({ outcome: "pending" } as const) : ({ outcome: "landed", amountOutRaw: out } as const)
    })

  /**
   * Frees the nonce of a trade that was recorded but never reached the node (a crash between the
   * save and the send, or a send whose answer was lost and never arrived), so its verdict becomes
   * final: when the wallet's lock is free, the node knows no transaction of that hash, the wallet's
   * mined and pending nonces both still equal the trade's, and `graceMs` passed since it was
   * recorded, a zero-value transfer to the wallet itself is sent on that nonce (the usual EVM
   * cancel). The trade is never sent again: if its own bytes still land somewhere first, the
   * transfer is the one refused and the receipt settles the trade executed; otherwise the wallet's
   * mined nonce passes the trade's and it settles `NEVER_LANDED`. Costs 21,000 gas, moves no money.
   * True when the transfer was sent.
   */
  const releaseUnsent = (
    row: { readonly signature: string; readonly wallet: string; readonly nonce: bigint; readonly createdAtMs: number },
    sign: (unsigned: Uint8Array) => Effect.Effect<{ readonly signedTransaction: string }, unknown>,
    graceMs: number
  ): Effect.Effect<boolean> =>
    Effect.gen(function* () {
      if ((yield* Effect.clockWith((c) => c.currentTimeMillis)) - row.createdAtMs < graceMs) return false
      const wallet = getAddress(row.wallet)
      const released = yield* locks.withWalletIfFree(
        wallet,
        Effect.gen(function* () {
          const known = yield* read("transaction", (c) =>
            c.getTransaction({ hash: row.signature as Hash }).then(
              () => true,
              (e: unknown) => {
                if (e instanceof TransactionNotFoundError) return false
                throw e
              }
            )
          )
          if (known) return false
          const [mined, pending] = yield* Effect.all([
            read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "latest" })),
            read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "pending" }))
          ])
          if (BigInt(mined) !== row.nonce || BigInt(pending) !== row.nonce) return false
          const f = yield* fees
          const bytes = serializeTransaction({
            type: "eip1559",
            chainId: options.chain.id,
            nonce: Number(row.nonce),
            gas: HOOD_RELEASE_GAS,
            maxFeePerGas: f.maxFeePerGas,
            maxPriorityFeePerGas: f.maxPriorityFeePerGas,
            to: wallet,
            value: 0n
          })
          const signed = yield* sign(Buffer.from(bytes.slice(2), "hex"))
          yield* read("release", (c) => c.sendRawTransaction({ serializedTransaction: signed.signedTransaction as Hex }))
          yield* Effect.logWarning("Hood trade never reached the node: its nonce released by a zero-value transfer").pipe(
            Effect.annotateLogs({ wallet, nonce: row.nonce.toString(), trade: row.signature })
          )
          return true
        })
      )
      return Option.getOrElse(released, () => false)
    }).pipe(Effect.catchAll(() => Effect.succeed(false)))

  /** A receipt by hash within the bound (the approval a sell waits for). */
  const receipt = (hash: Hash, timeoutMs: number) =>
    read("approval receipt", (c) => c.waitForTransactionReceipt({ hash, pollingInterval: 20, timeout: timeoutMs }))

  return { quote, holdings, spenderOf, allowance, build, unsigned, send, observe, releaseUnsent, receipt, withWallet: locks.withWallet, router, weth9, publicClient: pc }
}

export type HoodTradeChain = ReturnType<typeof makeHoodTradeChain>
