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
 *
 * The parts, in `internal/`: `HoodTradeCalls` (the router calls, their gas and the approval, pure),
 * `HoodTradeOutcomes` (the executed amount and a revert's reason, pure), `HoodTradeQuote` (where a
 * token trades and the price of an exact input), `HoodTradeVerdicts` (the send and the verdicts) and
 * `HoodTradeTrace` (a built trade no request sent, found on chain); this module assembles them over
 * one `HoodSender` and adds the wallet's reads.
 */
import { Effect } from "effect"
import { type Address, type Chain, getAddress, type Hash, type PublicClient, TransactionNotFoundError } from "viem"
import { curveTokenAbi } from "../../chain/hood/abi.generated.js"
import { makeHoodSender } from "../../chain/hood/client/HoodSender.js"
import { tradeError, type TradeError } from "./TradeError.js"
import { hoodSellSpender, hoodTradeCall, type HoodTradeBuildInput, type HoodTradeVenue } from "./internal/HoodTradeCalls.js"
import { makeHoodQuote } from "./internal/HoodTradeQuote.js"
import { traceBuilt } from "./internal/HoodTradeTrace.js"
import { makeHoodVerdicts } from "./internal/HoodTradeVerdicts.js"

export {
  approveCall,
  HOOD_POOL_DEADLINE_S,
  HOOD_TRADE_GAS,
  hoodSellSpender,
  hoodTradeCall,
  type HoodTradeBuildInput,
  type HoodTradeVenue,
  MAX_ALLOWANCE
} from "./internal/HoodTradeCalls.js"
export { executedOutOf, hoodFailureReasonOf } from "./internal/HoodTradeOutcomes.js"
export type { HoodPriced } from "./internal/HoodTradeQuote.js"
export { HOOD_TRACE_WINDOW, HOOD_TRACE_WINDOWS } from "./internal/HoodTradeTrace.js"

/** The sending parts every Hood rail shares (`HoodSender.ts`), re-exported for this rail's readers. */
export { HOOD_RELEASE_GAS, isRevert, makeWalletLocks, revertDataOf } from "../../chain/hood/client/HoodSender.js"

export interface HoodTradeChainOptions {
  readonly chain: Chain
  readonly rpcUrl: string
  readonly factory: Address
  readonly swapRouter: Address
  /** The engine's TradeRouter: every trade's `to`, and the spender a sell approves. */
  readonly tradeRouter: Address
  readonly weth9: Address
}

export const makeHoodTradeChain = (options: HoodTradeChainOptions) => {
  const sender = makeHoodSender({ chain: options.chain, rpcUrl: options.rpcUrl }, (message): TradeError => tradeError("chain_unavailable", message, { retryable: true }))
  const { read, unsigned, releaseUnsent } = sender
  const pc: PublicClient = sender.publicClient
  const router = getAddress(options.swapRouter)
  const tradeRouter = getAddress(options.tradeRouter)
  const { quote } = makeHoodQuote(read, pc, options.factory)
  const { send, observe, plainVerdict } = makeHoodVerdicts(sender, tradeRouter)

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

