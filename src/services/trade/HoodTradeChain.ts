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
 * The transactions (ETH-quoted markets), every one a call of the engine's `TradeRouter`
 * (`contracts/TradeRouter.sol`), which trades and pays the platform fee (the quote's `feeRaw`, an
 * input of the call) to the fee splitter's treasury in the same transaction:
 * - curve buy: `buyOnCurve(token, amountIn, minAmountOut, fee)` with `value = amountIn + fee`; the
 *   router buys on the curve (`BondingCurve.buy`) and forwards the tokens; a buy that crosses
 *   graduation is capped at the threshold and the refund goes back to the wallet, uncharged;
 * - curve sell: `sellOnCurve(token, tokensIn, minAmountOut, fee)` (the router pulls the tokens: it
 *   needs the wallet's allowance, see `spenderOf` and `approveCall`), the fee from the proceeds;
 * - pool buy: `buyOnPool(token, poolFee, amountIn, minAmountOut, fee, deadline)` with
 *   `value = amountIn + fee`: the SwapRouter's `exactInputSingle` paying ETH, the tokens to the wallet;
 * - pool sell: `sellOnPool(...)`: `exactInputSingle(token → WETH, amountOutMinimum)` to the trade
 *   router, which unwraps, pays the fee and the rest to the wallet in ETH.
 * The minimum is the venue's own (the curve's, Uniswap's `amountOutMinimum`), before the fee, as on Solana.
 *
 * Gas: a fixed limit per venue and side (`HOOD_TRADE_GAS`), never an estimate on the hot path (an
 * estimate is a round trip and was seen too low for router swaps, see `SWAP_GAS_LIMIT`); the
 * integration test checks each limit against the gas the localnet's worst cases use.
 *
 * Nonces: the wallet's next nonce is read from the node (`pending`: its unmined transactions
 * count) under the wallet's lock (`withWallet`: the process's one registry in `HoodSender.ts`,
 * which the transfer rail takes too), held from the read through signing, recording, sending and
 * the verdict, so two transactions of one wallet in this process never take one nonce and a trade
 * refused before broadcast leaves no gap. Fees, nonces, the send and the verdict by nonce are
 * `HoodSender`'s. Across processes the chain keeps money safe: two
 * transactions with one nonce cannot both land, and the loser is settled by its own verdict below.
 *
 * Verdicts by hash and nonce: a receipt says landed (status 1) or reverted (status 0); without
 * one, the transaction never lands once the wallet's mined nonce passed its own (the nonce went
 * to another transaction), else it is pending. The mined nonce is read BEFORE the receipt, so a
 * transaction mined between the two reads is never taken for one that never lands.
 */
import { Effect } from "effect"
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
  type PublicClient,
  type Transaction,
  type TransactionReceipt,
  TransactionNotFoundError,
  zeroAddress
} from "viem"
import { bondingCurveAbi, curveFactoryAbi, curveTokenAbi, feeSplitterAbi, tradeRouterAbi, uniswapV3PoolAbi } from "../../chain/hood/abi.generated.js"
import { readCurve } from "../../chain/hood/client/HoodClient.js"
import { type HoodSender, makeHoodSender, revertAbi, revertDataOf } from "../../chain/hood/client/HoodSender.js"
import { tagged } from "../../chain/hood/client/RequestTag.js"
import type { HoodCall } from "../../chain/hood/launch/HeadlessCalls.js"
import { quoteHoodPool, viemPoolSource } from "./HoodPoolQuote.js"
import { tradeError, type TradeError } from "./TradeError.js"
import type { RevertReason, TradeObservation } from "./TradeMachine.js"
import type { Traced } from "./SolanaTradeChain.js"
import { quoteVenue, type Side, type VenueQuote } from "./VenueQuote.js"

/**
 * Gas limits (units), fixed per venue and side. Measured on the localnet (the integration test
 * `trade.hood.test.ts` asserts every trade's `gasUsed` stays under its limit, including the buy
 * that crosses graduation and pool swaps large enough to move the price by half), then given
 * headroom of about 2.5x:
 * - curve buy: 159k the first buy of a wallet (fresh storage), 120k the crossing buy (phase write,
 *   `CurveCompleted`, the refund sent back), before the trade router; the router adds its fee
 *   transfer, the token forward and its event (see docs/decisions.md "The Hood trade router");
 * - curve sell: 99k before the router (which adds the pull, an approval and two ETH payments);
 * - pool buy / sell: 126k / 144k through the SwapRouter within the graduation position; each
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

/** The sending parts every Hood rail shares (`HoodSender.ts`), re-exported for this rail's readers. */
export { HOOD_RELEASE_GAS, isRevert, makeWalletLocks, revertDataOf } from "../../chain/hood/client/HoodSender.js"

/** A linked or TEE build's trace reads the token's transfers in windows of this many blocks, at most `HOOD_TRACE_WINDOWS` of them (from the build's block). */
export const HOOD_TRACE_WINDOW = 10_000n
export const HOOD_TRACE_WINDOWS = 20n

/** A pool trade's deadline after its build (the router refuses it later; the curve has none). */
export const HOOD_POOL_DEADLINE_S = 600n

/** What an allowance is raised to before a sell: the max, so a wallet approves each spender once. */
export const MAX_ALLOWANCE = 2n ** 256n - 1n

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
  /** The platform fee the trade router pays the treasury (the quote's `feeRaw`): on top of a buy's value, from a sell's proceeds. */
  readonly platformFeeRaw: bigint
  /** Epoch seconds past which the router refuses a pool trade. */
  readonly deadlineS: bigint
  /** Appended to the calldata (`RequestTag.ts`): makes the build this request's alone. */
  readonly tag?: Hex
}

export interface HoodTradeChainOptions {
  readonly chain: Chain
  readonly rpcUrl: string
  readonly factory: Address
  readonly swapRouter: Address
  /** The engine's TradeRouter: every trade's `to`, and the spender a sell approves. */
  readonly tradeRouter: Address
  readonly weth9: Address
}

/** The trade's call (to the trade router): where, what, how much ETH, and its gas limit. Pure. */
export const hoodTradeCall = (tradeRouter: Address, i: HoodTradeBuildInput): HoodCall & { readonly gas: bigint } => {
  const call = untaggedCall(tradeRouter, i)
  return i.tag === undefined ? call : { ...call, data: tagged(call.data, i.tag) }
}

const untaggedCall = (tradeRouter: Address, i: HoodTradeBuildInput): HoodCall & { readonly gas: bigint } => {
  const fee = i.platformFeeRaw
  if (i.venue === "svc-curve") {
    return i.side === "buy"
      ? {
          to: tradeRouter,
          data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "buyOnCurve", args: [i.mint, i.amountInRaw, i.minAmountOutRaw, fee] }),
          value: i.amountInRaw + fee,
          gas: HOOD_TRADE_GAS.curveBuy
        }
      : {
          to: tradeRouter,
          data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "sellOnCurve", args: [i.mint, i.amountInRaw, i.minAmountOutRaw, fee] }),
          value: 0n,
          gas: HOOD_TRADE_GAS.curveSell
        }
  }
  return i.side === "buy"
    ? {
        to: tradeRouter,
        data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "buyOnPool", args: [i.mint, i.poolFee, i.amountInRaw, i.minAmountOutRaw, fee, i.deadlineS] }),
        value: i.amountInRaw + fee,
        gas: HOOD_TRADE_GAS.poolBuy
      }
    : {
        to: tradeRouter,
        data: encodeFunctionData({ abi: tradeRouterAbi, functionName: "sellOnPool", args: [i.mint, i.poolFee, i.amountInRaw, i.minAmountOutRaw, fee, i.deadlineS] }),
        value: 0n,
        gas: HOOD_TRADE_GAS.poolSell
      }
}

/**
 * THE one answer to "which address must a wallet approve before a sell": who pulls the tokens of a
 * sell on `venue` of the market whose curve is `curve`. Every Hood sell goes through the trade
 * router (it collects the platform fee), so it is the trade router on the curve and on the pool
 * alike; the venue and the curve stay parameters so a future venue decides here. Every caller (the
 * embedded wallet's approval, the linked and TEE builds' allowance refusal, a server-built
 * approval) asks this, through `HoodTradeChain.spenderOf`. Pure.
 */
export const hoodSellSpender = (tradeRouter: Address, _venue: HoodTradeVenue, _curve: Address): Address => tradeRouter

/** `approve(spender, max)` on the token, with its gas limit; `tag` appended to the calldata (`RequestTag.ts`). Pure. */
export const approveCall = (token: Address, spender: Address, tag?: Hex): HoodCall & { readonly gas: bigint } => ({
  to: token,
  data: tagged(encodeFunctionData({ abi: curveTokenAbi, functionName: "approve", args: [spender, MAX_ALLOWANCE] }), tag),
  value: 0n,
  gas: HOOD_TRADE_GAS.approve
})

/**
 * What a landed trade executed, from its receipt's logs: the trade router's `RoutedTrade` for
 * `wallet` on `mint` (the venue's output: tokens on a buy, ETH before the platform fee on a sell;
 * only a log emitted by `tradeRouter` counts: any contract the trade calls can emit the same shape),
 * else (a transaction straight to the venue, as the rail built before the router) the curve's
 * `Trade` by `wallet` on `mint`, or the pool's `Swap` output. Pure.
 */
export const executedOutOf = (receipt: TransactionReceipt, tradeRouter: Address, venue: string, mint: Address, wallet: Address): bigint | undefined => {
  // The router this transaction called counts too: a trade built before a restart that configured
  // another router (every trade the engine builds calls a router it was configured with) is read,
  // never left pending; any other emitter's RoutedTrade-shaped log is not.
  const called = receipt.to === null || receipt.to === undefined ? undefined : getAddress(receipt.to)
  const routed = parseEventLogs({ abi: tradeRouterAbi, logs: receipt.logs, eventName: "RoutedTrade" }).find(
    (t) =>
      (getAddress(t.address) === getAddress(tradeRouter) || getAddress(t.address) === called) &&
      getAddress(t.args.token) === getAddress(mint) &&
      getAddress(t.args.trader) === getAddress(wallet)
  )
  if (routed !== undefined) return routed.args.amountOut
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

/**
 * Why a call reverted: the curve's `SlippageExceeded`, the router's "Too little received", or the
 * trade router's `FeeExceedsProceeds` (a sell whose venue output fell below the platform fee: the
 * caller's minimum let it, so it is refused like slippage) are `slippage_exceeded`; any other
 * revert `reverted`. Pure.
 */
export const hoodFailureReasonOf = (e: unknown): RevertReason => {
  const data = revertDataOf(e)
  if (data !== undefined) {
    try {
      const decoded = decodeErrorResult({ abi: revertAbi, data }) as { readonly errorName: string; readonly args?: ReadonlyArray<unknown> }
      if (decoded.errorName === "SlippageExceeded" || decoded.errorName === "FeeExceedsProceeds") return "slippage_exceeded"
      if (decoded.errorName === "Error" && decoded.args?.[0] === "Too little received") return "slippage_exceeded"
      return "reverted"
    } catch {
      // not an error these contracts declare: read the text below
    }
  }
  const text = e instanceof BaseError ? `${e.message} ${e.details}` : String(e)
  return /SlippageExceeded|FeeExceedsProceeds|Too little received/.test(text) ? "slippage_exceeded" : "reverted"
}

/**
 * Looks on chain for a built (linked or TEE) trade's transaction that no request sent or confirmed:
 * `Open` while the wallet's mined nonce has not passed the build's (its bytes may still land);
 * else the transaction on that nonce is looked for among the token's `Transfer`s to (a buy) or
 * from (a sell) the wallet since the build's block (windows of `HOOD_TRACE_WINDOW` blocks, at
 * most `HOOD_TRACE_WINDOWS`): from the wallet, on the build's nonce, its signed bytes the built
 * transaction (`isBuilt`) → `Found`; none in every block since the build → `Lapsed` (another
 * transaction took the nonce, or this one reverted: either way nothing traded). A scan cut short
 * at its bound, or a transfer whose transaction the node cannot show, is `Open`: undecided, the
 * hold kept. Mined nonce first: a transaction mined after that read is in a block the log read
 * covers. A TEE build is traced through its sign claim first (`TradeAttempt.traceHoodTee`: the
 * relay's hash looked up by `observe`, no scan bound); this scan is the linked payer's.
 */
const traceBuilt =
  (read: HoodSender<TradeError>["read"], blockNumber: Effect.Effect<bigint, TradeError>, transaction: (hash: Hash) => Effect.Effect<Transaction | undefined, TradeError>) =>
  (row: {
    readonly wallet: string
    readonly mint: string
    readonly side: Side
    readonly nonce: bigint
    readonly fromBlock: bigint
    readonly isBuilt: (tx: Transaction) => Effect.Effect<Hash | undefined>
  }): Effect.Effect<Traced, TradeError> =>
  Effect.gen(function* () {
    const wallet = getAddress(row.wallet)
    const mined = yield* read("nonce", (c) => c.getTransactionCount({ address: wallet, blockTag: "latest" }))
    if (BigInt(mined) <= row.nonce) return { _tag: "Open" } as const
    const head = yield* blockNumber
    const seen = new Set<Hash>()
    let from = row.fromBlock
    for (let w = 0n; w < HOOD_TRACE_WINDOWS && from <= head; w++, from += HOOD_TRACE_WINDOW) {
      const to = from + HOOD_TRACE_WINDOW - 1n < head ? from + HOOD_TRACE_WINDOW - 1n : head
      const logs = yield* read("token transfers", (c) =>
        c.getContractEvents({ address: getAddress(row.mint), abi: curveTokenAbi, eventName: "Transfer", args: row.side === "buy" ? { to: wallet } : { from: wallet }, fromBlock: from, toBlock: to })
      )
      for (const log of logs) {
        if (log.transactionHash === null || seen.has(log.transactionHash)) continue
        seen.add(log.transactionHash)
        const tx = yield* transaction(log.transactionHash)
        // A transfer the node lists but cannot show (a limited index, a lagging node): undecided.
        if (tx === undefined) return { _tag: "Open" } as const
        if (getAddress(tx.from) !== wallet || BigInt(tx.nonce) !== row.nonce) continue
        const hash = yield* row.isBuilt(tx)
        if (hash !== undefined) return { _tag: "Found", signature: hash } as const
      }
    }
    // Lapsed only when every block since the build was read: a scan cut short at its bound
    // decides nothing (the build, which has no expiry, may have landed past it).
    return from <= head ? ({ _tag: "Open" } as const) : ({ _tag: "Lapsed" } as const)
  })

export const makeHoodTradeChain = (options: HoodTradeChainOptions) => {
  const sender = makeHoodSender({ chain: options.chain, rpcUrl: options.rpcUrl }, (message): TradeError => tradeError("chain_unavailable", message, { retryable: true }))
  const { read, unsigned, releaseUnsent } = sender
  const pc: PublicClient = sender.publicClient
  const router = getAddress(options.swapRouter)
  const tradeRouter = getAddress(options.tradeRouter)

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

  /** Who pulls a sell's tokens: `hoodSellSpender` with this deployment's trade router. */
  const spenderOf = (venue: HoodTradeVenue, curve: Address): Address => hoodSellSpender(tradeRouter, venue, curve)

  const allowance = (wallet: Address, mint: Address, spender: Address) =>
    read("allowance", (c) => c.readContract({ address: mint, abi: curveTokenAbi, functionName: "allowance", args: [wallet, spender] }))

  /** The trade's unsigned transaction. */
  const build = (i: HoodTradeBuildInput) => unsigned(i.wallet, hoodTradeCall(tradeRouter, i))

  /**
   * Sends signed bytes once, preflight first (`HoodSender.send`). A refusal (preflight or the
   * node's) is the trade's failure and nothing was broadcast; a lost answer is none (the chain decides).
   */
  const send = (raw: Hex): Effect.Effect<TradeObservation | undefined> =>
    Effect.map(sender.send(raw), (refused) =>
      refused === undefined
        ? undefined
        : ({
            outcome: "reverted",
            reason: hoodFailureReasonOf(refused.cause),
            error: refused.stage === "preflight" ? `the preflight reverted: ${refused.reason}` : `the node refused the transaction: ${refused.reason}`
          } satisfies TradeObservation)
    )

  /**
   * Why a mined transaction reverted: its call replayed on the state after its block. A reverted
   * transaction changed nothing there but its sender's gas, so the state after the block is what it
   * saw, plus whatever came after it in the block (a front-run is before it: that is the usual
   * reason a trade that passed its preflight fails its minimum once mined).
   */
  const revertReasonOf = (receipt: TransactionReceipt, hash: Hash) =>
    Effect.gen(function* () {
      const tx = yield* read("transaction", (c) => c.getTransaction({ hash }))
      const replay = yield* Effect.tryPromise({
        try: () => pc.call({ account: tx.from, to: tx.to!, data: tx.input, value: tx.value, gas: tx.gas, blockNumber: receipt.blockNumber }),
        catch: (e) => e
      }).pipe(Effect.either)
      return replay._tag === "Left" ? hoodFailureReasonOf(replay.left) : ("reverted" as const)
    })

  /** The chain's verdict on a sent trade (its hash, the wallet and the nonce it was signed with). */
  const observe = (row: { readonly signature: string; readonly wallet: string; readonly mint: string; readonly venue: string; readonly nonce: bigint }): Effect.Effect<TradeObservation, TradeError> =>
    Effect.gen(function* () {
      const hash = row.signature as Hash
      const wallet = getAddress(row.wallet)
      const seen = yield* sender.verdict(hash, wallet, row.nonce)
      if (seen._tag === "NoReceipt") return seen.neverLands ? ({ outcome: "never_lands" } as const) : ({ outcome: "pending" } as const)
      const receipt = seen.receipt
      if (receipt.status !== "success") {
        const reason = yield* revertReasonOf(receipt, hash)
        return { outcome: "reverted", reason, error: `the transaction reverted on chain (block ${receipt.blockNumber})` } as const
      }
      const out = executedOutOf(receipt, tradeRouter, row.venue, getAddress(row.mint), wallet)
      return out === undefined ? ({ outcome: "pending" } as const) : ({ outcome: "landed", amountOutRaw: out } as const)
    })

  /** The chain's verdict on a transaction that moves no money (a TEE sell's approval): mined (succeeded or not), or not, and whether it never lands. */
  const plainVerdict = (hash: Hash, wallet: Address, nonce: bigint) =>
    Effect.map(sender.verdict(hash, wallet, nonce), (v) =>
      v._tag === "Receipt" ? ({ _tag: "Receipt", success: v.receipt.status === "success" } as const) : ({ _tag: "NoReceipt", neverLands: v.neverLands } as const)
    )

  /** A receipt by hash within the bound (the approval a sell waits for). */
  const receipt = sender.receipt

  /** The head block's number (a linked or TEE build's trace starts at the block it was built at). */
  const blockNumber = read("block number", (c) => c.getBlockNumber())

  const trace = traceBuilt(read, blockNumber, (hash) => transaction(hash))

  /** The transaction the node holds under `hash` (mined or pending), or undefined when it knows none. */
  const transaction = (hash: Hash) =>
    read("transaction", (c) =>
      c.getTransaction({ hash }).catch((e: unknown) => {
        if (e instanceof TransactionNotFoundError) return undefined
        throw e
      })
    )

  return { quote, holdings, spenderOf, allowance, build, unsigned, send, observe, plainVerdict, releaseUnsent, receipt, transaction, blockNumber, trace, withWallet: sender.withWallet, router, tradeRouter, weth9: getAddress(options.weth9), publicClient: pc }
}

export type HoodTradeChain = ReturnType<typeof makeHoodTradeChain>
