/**
 * The trace of a linked payer's built Hood trade that no request sent or confirmed: found on chain
 * by the wallet's mined nonce and the token's transfers since the build's block, in bounded
 * windows; undecided (`Open`) whenever the scan could not read every block since the build.
 */
import { Effect } from "effect"
import { getAddress, type Hash, type Transaction } from "viem"
import { curveTokenAbi } from "../../../chain/hood/abi.generated.js"
import type { HoodSender } from "../../../chain/hood/client/HoodSender.js"
import type { Traced } from "../SolanaTradeChain.js"
import type { TradeError } from "../TradeError.js"
import type { Side } from "../VenueQuote.js"

/** A linked or TEE build's trace reads the token's transfers in windows of this many blocks, at most `HOOD_TRACE_WINDOWS` of them (from the build's block). */
export const HOOD_TRACE_WINDOW = 10_000n
export const HOOD_TRACE_WINDOWS = 20n

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
export const traceBuilt =
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
