/**
 * A headless Hood launch's dev buy (spec 2.5): best effort after `createCurve` is mined, quoted on
 * the fresh curve, then the platform-fee leg once the buy landed in the run; a recovered launch
 * never buys and reports what the chain shows. A non-final buy is watched (at most `watchersMax`
 * at once, up to `watchMaxMs` after it was sent); statuses are kept up to `statusesMax`, oldest
 * dropped first.
 */
import { Clock, Duration, Effect, Option } from "effect"
import type { Address } from "viem"
import { bondingCurveAbi, curveFactoryAbi, feeSplitterAbi } from "../../../chain/hood/abi.generated.js"
import { readCurve } from "../../../chain/hood/client/HoodClient.js"
import { type FeeOutcome, feeAfterLateBuy, watchDone } from "../../../chain/hood/launch/DevBuyOutcome.js"
import { devBuyFillIn, devBuyPlan, ethTransferCall, platformFeeRaw } from "../../../chain/hood/launch/HeadlessCalls.js"
import { initialState } from "../../../domain/CurveMath.js"
import { planById } from "../../../domain/Plans.js"
import type { DevBuyReport, HoodLaunchInput } from "../HoodHeadlessLaunch.js"
import type { LaunchRef } from "../LaunchLedger.js"
import type { HoodHeadlessChain, SentTx } from "./HoodHeadlessChain.js"
import type { HoodHeadlessContext } from "./HoodHeadlessContext.js"
import { keyOf, report } from "./HoodHeadlessRules.js"

export type HoodHeadlessDevBuys = ReturnType<typeof makeHoodHeadlessDevBuys>

export const makeHoodHeadlessDevBuys = (ctx: HoodHeadlessContext, chain: HoodHeadlessChain) => {
  const { config, o, scope } = ctx

  /** Insertion-ordered: at `statusesMax` the oldest status is dropped (its watcher then stops). */
  const devBuys = new Map<string, DevBuyReport>()
  const remember = (key: string, r: DevBuyReport) => {
    if (!devBuys.has(key) && devBuys.size >= o.statusesMax) {
      const oldest = devBuys.keys().next()
      if (oldest.done !== true) devBuys.delete(oldest.value)
    }
    if (o.statusesMax > 0) devBuys.set(key, r)
  }
  let watchers = 0

  /** Reads the fee splitter's treasury (the platform fee's destination). */
  const treasuryOf = (factory: Address) =>
    chain.rpc("treasury read", async (c) => {
      const splitter = await c.readContract({ address: factory, abi: curveFactoryAbi, functionName: "feeSplitter" })
      return c.readContract({ address: splitter, abi: feeSplitterAbi, functionName: "treasury" })
    })

  /** The platform fee of the dev buy (spec 2.5 `fee`): the plan's bps of `buyAmount`, to the splitter's treasury. */
  const feeOf = (input: HoodLaunchInput, factory: Address) =>
    Effect.map(treasuryOf(factory), (treasury) => {
      const bps = planById(config.plans, input.principal.plan).feeBps
      return { bps, feeRaw: platformFeeRaw(input.request.buyAmountRaw, bps), treasury }
    })

  /** Keeps a non-final dev buy current by reading the chain, until final or `watchMaxMs` after it was sent. */
  const watch = (ref: LaunchRef, from: Address, curve: Address, sent: SentTx) =>
    Effect.gen(function* () {
      while (true) {
        yield* Effect.sleep(Duration.millis(o.pollMs))
        const seen = yield* chain.txObservation(sent.hash, from, sent.nonce, sent.sentAtMs, sent.hashReturned).pipe(Effect.option)
        if (Option.isNone(seen)) {
          // The node could not be read: try again, but never past the bound.
          if ((yield* Clock.currentTimeMillis) - sent.sentAtMs >= o.watchMaxMs) return
          continue
        }
        const current = devBuys.get(keyOf(ref))
        if (current === undefined) return
        const fill = Option.flatMap(seen.value.receipt, (r) => Option.fromNullable(r.status === "success" ? devBuyFillIn(curve, r) : undefined))
        devBuys.set(
          keyOf(ref), // present: checked above, and nothing yields in between
          report(
            {
              ...current,
              outcome: seen.value.outcome,
              amountOutRaw: Option.match(fill, { onNone: () => current.amountOutRaw, onSome: (f) => f.amountOutRaw }),
              feeOutcome: feeAfterLateBuy(seen.value.outcome, current.feeOutcome),
              watchedAtMs: seen.value.obs.nowMs
            },
            sent.hash
          )
        )
        if (watchDone(seen.value.obs, seen.value.outcome)) return
      }
    }).pipe(Effect.ensuring(Effect.sync(() => watchers--)))

  /** The best-effort dev buy and, once it landed in the run, the platform-fee leg. */
  const devBuy = (input: HoodLaunchInput, wallet: Address, factory: Address, curve: Address, atBlock: bigint) =>
    Effect.gen(function* () {
      const amountInRaw = input.request.buyAmountRaw
      const fee = yield* feeOf(input, factory)
      // Quoted against the fresh curve (the launch price): a buy that lands before the dev buy,
      // even in createCurve's own block, moves the price and `minAmountOut` guards the creator.
      const snapshot = yield* chain.rpc("curve read", (c) => readCurve(c, curve, atBlock))
      const plan = devBuyPlan(curve, snapshot.params, initialState(snapshot.params), amountInRaw, o.devBuySlippageBps)
      const notSent = { amountInRaw, minAmountOutRaw: null, amountOutRaw: null, feeOutcome: "not_sent" as const, fee, feeSignature: null }
      if (plan === undefined) return { report: report({ ...notSent, outcome: "reverted", notSentBecause: "curve_refused" }, null), watch: undefined }
      const bought = yield* chain.sendAndWait(input.attempt.accountId, wallet, plan.call, "dev buy", o.devBuyWaitMs).pipe(Effect.either)
      if (bought._tag === "Left") {
        // Never signed (policy, delegation) or never built: no buy is outstanding.
        const because = bought.left._tag === "HoodLaunchError" ? (bought.left.revert ?? bought.left.reason) : "storage"
        return { report: report({ ...notSent, minAmountOutRaw: plan.minAmountOutRaw, outcome: "reverted", notSentBecause: because }, null), watch: undefined }
      }
      const { sent, outcome, receipt } = bought.right
      const fill = Option.flatMap(receipt, (r) => Option.fromNullable(r.status === "success" ? devBuyFillIn(curve, r) : undefined))
      const buyBase = {
        amountInRaw,
        minAmountOutRaw: plan.minAmountOutRaw,
        amountOutRaw: Option.getOrNull(Option.map(fill, (f) => f.amountOutRaw)),
        fee,
        notSentBecause: null
      }
      if (outcome !== "landed" || fee.feeRaw === 0n) {
        const r = report({ ...buyBase, outcome, feeOutcome: "not_sent", feeSignature: null }, sent.hash)
        return { report: r, watch: outcome === "landed" ? undefined : sent }
      }
      const paid = yield* chain.sendAndWait(input.attempt.accountId, wallet, ethTransferCall(fee.treasury, fee.feeRaw), "platform fee", o.devBuyWaitMs).pipe(Effect.either)
      const feeOutcome: FeeOutcome =
        paid._tag === "Left" ? (paid.left._tag === "HoodLaunchError" && paid.left.reason === "policy_denied" ? "refused" : "not_sent") : paid.right.outcome
      const feeSignature = paid._tag === "Right" ? paid.right.sent.hash : null
      return { report: report({ ...buyBase, outcome, feeOutcome, feeSignature }, sent.hash), watch: undefined }
    })

  /** What a recovered launch can say of a dev buy it may have sent: a Trade by the wallet, or `unknown`. */
  const recoveredDevBuy = (input: HoodLaunchInput, wallet: Address, factory: Address, curve: Address) =>
    Effect.gen(function* () {
      const amountInRaw = input.request.buyAmountRaw
      const fee = yield* feeOf(input, factory)
      const trades = yield* chain.rpc("Trade lookup", (c) =>
        c.getContractEvents({ address: curve, abi: bondingCurveAbi, eventName: "Trade", args: { trader: wallet }, fromBlock: 0n, strict: true })
      )
      const trade = trades.find((t) => t.args.isBuy)
      return report(
        {
          amountInRaw,
          minAmountOutRaw: null,
          amountOutRaw: trade?.args.amountOut ?? null,
          outcome: trade !== undefined ? "landed" : "unknown",
          feeOutcome: trade !== undefined ? "forgone" : "not_sent",
          fee,
          feeSignature: null,
          notSentBecause: null
        },
        trade?.transactionHash ?? null
      )
    })

  /** Keeps the launch's dev-buy status, and watches a buy not yet final while fewer than `watchersMax` are. */
  const track = (ref: LaunchRef, d: { report: DevBuyReport; watch: SentTx | undefined; wallet: Address }, curve: Address) =>
    Effect.gen(function* () {
      remember(keyOf(ref), d.report)
      if (d.watch !== undefined && watchers < o.watchersMax) {
        watchers++
        yield* Effect.forkIn(watch(ref, d.wallet, curve, d.watch), scope)
      }
    })

  return {
    devBuy,
    recoveredDevBuy,
    track,
    status: (ref: LaunchRef) => Effect.sync(() => devBuys.get(keyOf(ref))),
    watching: Effect.sync(() => watchers)
  }
}
