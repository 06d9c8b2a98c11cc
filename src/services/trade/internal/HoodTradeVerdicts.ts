/**
 * The send and the verdicts of the Hood trade port over its sender (`HoodSender.ts`): signed bytes
 * sent once, preflight first (a refusal is the trade's failure, nothing broadcast); the chain's
 * verdict on a sent trade by receipt and mined nonce, with a reverted one's reason replayed on the
 * state after its block; and the verdict on a transaction that moves no money.
 */
import { Effect } from "effect"
import { type Address, getAddress, type Hash, type Hex, type TransactionReceipt } from "viem"
import type { HoodSender } from "../../../chain/hood/client/HoodSender.js"
import type { TradeError } from "../TradeError.js"
import type { TradeObservation } from "../TradeMachine.js"
import { executedOutOf, hoodFailureReasonOf } from "./HoodTradeOutcomes.js"

/** The verdict part of `HoodTradeChain`; `tradeRouter`: whose `RoutedTrade` says what a landed trade executed. */
export const makeHoodVerdicts = (sender: HoodSender<TradeError>, tradeRouter: Address) => {
  const { read } = sender
  const pc = sender.publicClient

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

  return { send, observe, plainVerdict }
}
