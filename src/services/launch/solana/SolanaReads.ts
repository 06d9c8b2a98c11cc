/**
 * What a Solana launch reads from the chain (launch spec 2.5, 3.1): a simulation and the reason it
 * failed, the landed transaction's slot and fill (from the node, or as the ingest stream carried
 * it: `launchedFromStream`), one look at a sent transaction (landed, reverted, never lands,
 * pending), and a mint's view (its account, the block height, the node's health).
 */
import { type Address, address, type Base64EncodedWireTransaction, signature as asSignature } from "@solana/kit"
import { Effect, Either } from "effect"
import { curveEventsFromLogs } from "../../../chain/solana/program/Events.js"
import { WSOL_MINT_ADDRESS } from "../../../chain/solana/program/ProgramIds.js"
import { classifySimulationError, transactionErrorText } from "../../../chain/solana/launch/LaunchFailure.js"
import type { AssembledLaunch, LaunchPlan } from "../../../chain/solana/launch/LaunchTransaction.js"
import { type StreamedTransaction, streamedTradeOut } from "../../chains/ChainArrivals.js"
import type { LaunchSending, MintView, SolanaLaunched, SolanaLaunchShape } from "../SolanaLaunch.js"
import { launchError } from "../SolanaLaunchError.js"
import type { SolanaContext } from "./SolanaContext.js"

/** What a send already fixed (its signature, its mint), carried on a refusal. */
export type SentFields = { readonly signature?: string; readonly mint?: string }

export type SolanaReads = ReturnType<typeof makeSolanaReads>

/** The landed launch at `slot`, its dev buy filled with `filledRaw` (none without a dev buy). Pure. */
const launchedAt = (mint: string, curve: string, signature: string, slot: bigint, plan: LaunchPlan, filledRaw: bigint): SolanaLaunched => ({
  mint,
  curve,
  signature,
  slot,
  devBuy: plan.devBuy === null ? null : { amountInRaw: plan.devBuy.amountInRaw, filledRaw, minAmountOutRaw: plan.devBuy.minAmountOutRaw },
  fee: plan.fee
})

/**
 * The landed launch `sending` as the ingest stream carried it at a deciding commitment
 * (`ChainArrivals.landed`, undefined when it carried nothing that decides): the creation of its
 * curve for its mint, and with a dev buy `payer`'s buy of the mint, whose amount out is the fill;
 * undefined when the stream did not carry them (the chain's reads decide then). Pure.
 */
export const launchedFromStream = (streamed: StreamedTransaction | undefined, sending: LaunchSending, payer: string, plan: LaunchPlan): SolanaLaunched | undefined => {
  if (streamed === undefined) return undefined
  const { mint, curve, signature } = sending
  if (!streamed.events.some((e) => e._tag === "CurveCreated" && e.mint === mint && e.curve === curve)) return undefined
  const filledRaw = plan.devBuy === null ? 0n : streamedTradeOut(streamed, mint, payer, "buy")
  return filledRaw === undefined ? undefined : launchedAt(mint, curve, signature, streamed.slot, plan, filledRaw)
}

export const makeSolanaReads = (ctx: SolanaContext) => {
  const { rpc, base64, read } = ctx

  /** Simulation (or preflight) failed with `err`: which reason. */
  const simulationFailure = (
    err: unknown,
    assembled: AssembledLaunch,
    quoteMint: Address,
    payer: Address,
    logs: ReadonlyArray<string>,
    sent: SentFields
  ) =>
    Effect.gen(function* () {
      const chainError = transactionErrorText(err)
      const verdict = classifySimulationError(err, assembled.roles, quoteMint === WSOL_MINT_ADDRESS ? "native" : "spl")
      const insufficient = launchError(
        "insufficient_owner_balance",
        `${payer} cannot cover the network fee, rent, dev buy and platform fee (${chainError})`,
        { chainError, ...sent }
      )
      if (verdict === "insufficient_owner_balance") return insufficient
      if (verdict === "quote_account_suspect") {
        // Confirm from the chain: no token account of the quote asset is a zero balance.
        const account = yield* read("getAccountInfo", (signal) =>
          rpc.getAccountInfo(assembled.payerQuoteAccount, { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })
        )
        if (account.value === null) return insufficient
      }
      return launchError("simulation_failed", `the launch simulation failed: ${chainError}${logs.length > 0 ? `\n${logs.slice(-5).join("\n")}` : ""}`, {
        chainError,
        ...sent
      })
    })

  const simulate = (wire: Uint8Array, assembled: AssembledLaunch, quoteMint: Address, payer: Address, sent: SentFields = {}) =>
    Effect.gen(function* () {
      const sim = yield* read("simulateTransaction", (signal) =>
        rpc
          .simulateTransaction(base64.decode(wire) as Base64EncodedWireTransaction, {
            encoding: "base64",
            sigVerify: false,
            commitment: "confirmed"
          })
          .send({ abortSignal: signal })
      )
      if (sim.value.err !== null) {
        return yield* Effect.flip(simulationFailure(sim.value.err, assembled, quoteMint, payer, sim.value.logs ?? [], sent))
      }
    })

  /** The transaction at `confirmed`; null while the node does not hold it there. */
  const transactionOf = (signature: string) =>
    read("getTransaction", (signal) =>
      rpc.getTransaction(asSignature(signature), { encoding: "json", maxSupportedTransactionVersion: 0, commitment: "confirmed" }).send({ abortSignal: signal })
    )
  type LandedTransaction = Effect.Effect.Success<ReturnType<typeof transactionOf>>

  /** The landed launch of a transaction read (`transactionOf`): its slot and its dev buy's fill (the Trade event of this mint); undefined for none. */
  const landedFrom = (tx: LandedTransaction, signature: string, mint: string, curve: string, payer: string, plan: LaunchPlan) =>
    Effect.gen(function* () {
      if (tx === null) return undefined
      if (plan.devBuy === null) return launchedAt(mint, curve, signature, tx.slot, plan, 0n)
      // The fill: the buy's Trade event; failing that (logs cut short), the payer's token account of
      // the mint after the transaction, which this transaction created, so it holds exactly the fill.
      const trade = curveEventsFromLogs(tx.meta?.logMessages ?? []).find(
        (e) => e.event.kind === "Trade" && e.event.mint === mint && e.event.trader === payer && e.event.side === "buy"
      )
      const held = tx.meta?.postTokenBalances?.find((b) => b.mint === mint && b.owner === payer)?.uiTokenAmount.amount
      const filledRaw = trade !== undefined && trade.event.kind === "Trade" ? trade.event.amountOutRaw : held === undefined ? undefined : BigInt(held)
      if (filledRaw === undefined) return yield* launchError("chain_unavailable", `the fill of the landed launch ${signature} is not readable`)
      return launchedAt(mint, curve, signature, tx.slot, plan, filledRaw)
    })

  /** The landed transaction's slot and its dev buy's fill; undefined while the node does not hold it at `confirmed`. */
  const readLanded = (signature: string, mint: string, curve: string, payer: string, plan: LaunchPlan) =>
    Effect.flatMap(transactionOf(signature), (tx) => landedFrom(tx, signature, mint, curve, payer, plan))

  const statusOf = (signature: string, history: boolean) =>
    read("getSignatureStatuses", (signal) =>
      rpc.getSignatureStatuses([asSignature(signature)], { searchTransactionHistory: history }).send({ abortSignal: signal })
    ).pipe(Effect.map((r) => r.value[0] ?? null))

  const blockHeight = read("getBlockHeight", (signal) => rpc.getBlockHeight({ commitment: "confirmed" }).send({ abortSignal: signal }))

  type Observed =
    | { readonly _tag: "Landed" }
    | { readonly _tag: "Reverted"; readonly chainError: string }
    | { readonly _tag: "NeverLands" }
    | { readonly _tag: "Pending" }

  /** One look at a sent transaction: its status at `confirmed`, else whether its blockhash expired. */
  const observe = (signature: string, lastValidBlockHeight: bigint, history: boolean) =>
    Effect.gen(function* () {
      const status = yield* statusOf(signature, history)
      if (status !== null && (status.confirmationStatus === "confirmed" || status.confirmationStatus === "finalized")) {
        return (status.err === null ? { _tag: "Landed" } : { _tag: "Reverted", chainError: transactionErrorText(status.err) }) satisfies Observed
      }
      if (status !== null) return { _tag: "Pending" } satisfies Observed
      if ((yield* blockHeight) <= lastValidBlockHeight) return { _tag: "Pending" } satisfies Observed
      // Expired: one more look, in case it landed between the two reads.
      const again = yield* statusOf(signature, history)
      return (again === null ? { _tag: "NeverLands" } : { _tag: "Pending" }) satisfies Observed
    })

  const mintView: SolanaLaunchShape["mintView"] = (mint) =>
    Effect.gen(function* () {
      const account = yield* read("getAccountInfo", (signal) =>
        rpc.getAccountInfo(address(mint), { encoding: "base64", commitment: "confirmed" }).send({ abortSignal: signal })
      )
      const height = yield* blockHeight
      // getHealth answers "ok" only from a node that is caught up; an unhealthy node answers an error.
      const health = yield* Effect.either(read("getHealth", (signal) => rpc.getHealth().send({ abortSignal: signal })))
      const caughtUp = Either.isRight(health) && health.right === "ok"
      // An account at the mint is proof whatever the node's health; its absence proves nothing from a node that is behind.
      if (account.value === null && !caughtUp) return { _tag: "Unreadable" } satisfies MintView
      return { _tag: "Read", mintAccountExists: account.value !== null, blockHeight: height, caughtUp } satisfies MintView
    }).pipe(
      Effect.catchAll(() => Effect.succeed({ _tag: "Unreadable" } satisfies MintView)),
      Effect.withSpan("SolanaLaunch.mintView")
    )

  return { simulate, transactionOf, landedFrom, readLanded, blockHeight, observe, mintView }
}
