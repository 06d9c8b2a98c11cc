/**
 * The fee list (2.5): the account's launched tokens by mint, each with what the chain would pay
 * now and whether it can be claimed (an unreadable token is listed as such).
 */
import { Effect } from "effect"
import type { NotClaimableReason } from "../FeeError.js"
import type { FeeAmount, FeeEntry, FeeList, UnreadableFeeEntry } from "../FeeViews.js"
import type { CreatorFeesShape, FeeCaller } from "../CreatorFees.js"
import { type FeeCtx, FEE_PAGE_MAX, storage } from "./FeeContext.js"
import type { FeeAssessment } from "./FeeAssessment.js"

export const makeFeeList = (ctx: FeeCtx, assessment: FeeAssessment) => {
  const { sql, solana, hood } = ctx
  const { assess, amounts, hoodClaimPlan, hoodAmounts } = assessment
  const unreadable = (token: { chain: string; mint: string }): UnreadableFeeEntry => ({ mint: token.mint, chain: token.chain, unreadable: true })

  const hoodEntry = (caller: FeeCaller, token: { chain: string; mint: string }) =>
    Effect.gen(function* () {
      const fees = hood === undefined ? undefined : yield* hood.readFees(token.mint)
      if (fees === undefined) return unreadable(token)
      return {
        ...entryOf(token, fees, (yield* hoodClaimPlan(caller, fees, token.mint)).reason, hoodAmounts(fees)),
        ...(fees.lpPosition !== undefined ? { lpPosition: fees.lpPosition } : {})
      } satisfies FeeEntry as FeeEntry | UnreadableFeeEntry
    }).pipe(Effect.catchTag("FeeError", () => Effect.succeed(unreadable(token))))

  /** A fee entry (2.5). */
  const entryOf = (
    token: { chain: string; mint: string },
    fees: { symbol: string; name: string; recipient: string },
    reason: NotClaimableReason | undefined,
    claimableAmounts: ReadonlyArray<FeeAmount>
  ): FeeEntry => ({
    mint: token.mint,
    chain: token.chain,
    symbol: fees.symbol,
    name: fees.name,
    recipient: fees.recipient,
    claimable: reason === undefined,
    claimableAmounts,
    ...(reason !== undefined ? { reason } : {})
  })

  const entry = (caller: FeeCaller, token: { chain: string; mint: string }) =>
    Effect.gen(function* () {
      if (token.chain !== "solana") return yield* hoodEntry(caller, token)
      const fees = yield* solana.readFees(token.mint)
      if (fees === undefined) return unreadable(token)
      return entryOf(token, fees, yield* assess(caller, fees, token.mint), amounts(fees)) as FeeEntry | UnreadableFeeEntry
    }).pipe(Effect.catchTag("FeeError", () => Effect.succeed(unreadable(token))))

  const list: CreatorFeesShape["list"] = (caller, page) =>
    storage(
      Effect.gen(function* () {
        const limit = Math.min(Math.max(1, page.limit), FEE_PAGE_MAX)
        const after = page.cursor ?? ""
        const rows = yield* sql<{ chain: string; mint: string }>`
          SELECT chain, mint FROM launched_tokens WHERE account_id = ${caller.accountId} AND mint > ${after}
          ORDER BY mint LIMIT ${limit + 1}`
        const shown = rows.slice(0, limit)
        const tokens = yield* Effect.forEach(shown, (t) => entry(caller, t), { concurrency: 8 })
        const isDone = rows.length <= limit
        return { tokens, continueCursor: isDone ? null : (shown.at(-1)?.mint ?? null), isDone } satisfies FeeList
      }).pipe(Effect.withSpan("CreatorFees.list"))
    )
  return { list }
}
