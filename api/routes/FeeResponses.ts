/**
 * The creator-fee routes' answers as schemas (spec document 2, 2.5 and 4.3), each the envelope
 * `{success: true, ...view}` over a `FeeViews.ts` view; the type checks below keep a schema and
 * its view the same shape.
 */
import { Schema } from "effect"
import type { FeeClaim, FeeList } from "../../src/services/fees/FeeViews.js"
import { RawAmount, Success } from "../ResponseSchemas.js"

const exact = <S extends Schema.Schema.Any>(s: S) => Schema.optionalWith(s, { exact: true })

const NotClaimableReason = Schema.Literal(
  "below_dust",
  "wallet_not_signable",
  "not_recipient",
  "delegation_off",
  "embedded_wallet_not_permitted",
  "insufficient_gas",
  "gas_estimate_unavailable"
)
const amountFields = { symbol: Schema.String, mint: Schema.String, decimals: Schema.Int, amountRaw: RawAmount }
const FeeAmount = Schema.Struct(amountFields)

const FeeEntry = Schema.Struct({
  mint: Schema.String,
  chain: Schema.String,
  symbol: Schema.String,
  name: Schema.String,
  recipient: Schema.String,
  claimable: Schema.Boolean,
  claimableAmounts: Schema.Array(FeeAmount),
  reason: exact(NotClaimableReason),
  lpPosition: exact(Schema.Struct({ tokenId: Schema.String, positionManager: Schema.String }))
})
const UnreadableFeeEntry = Schema.Struct({ mint: Schema.String, chain: Schema.String, unreadable: Schema.Literal(true) })

const List = Schema.Struct({
  tokens: Schema.Array(Schema.Union(FeeEntry, UnreadableFeeEntry)),
  continueCursor: Schema.NullOr(Schema.String),
  isDone: Schema.Boolean
})

const Claim = Schema.Struct({
  mint: Schema.String,
  chain: Schema.Literal("solana", "hood"),
  dryRun: Schema.Boolean,
  recipient: Schema.String,
  warnings: Schema.Array(Schema.String),
  dust: exact(Schema.Array(FeeAmount)),
  claimable: exact(Schema.Boolean),
  reason: exact(NotClaimableReason),
  claimed: Schema.Array(Schema.Struct({ ...amountFields, txHash: Schema.NullOr(Schema.String) })),
  remaining: Schema.Array(FeeAmount),
  calls: exact(
    Schema.Array(
      Schema.Struct({
        operation: Schema.String,
        target: Schema.String,
        txHash: Schema.NullOr(Schema.String),
        status: Schema.Literal("not_sent", "submitted_unknown", "confirmed", "reverted")
      })
    )
  ),
  outcome: exact(Schema.Literal("complete", "partial", "indeterminate", "not_started"))
})

export const CreatorFeeList = Schema.Struct({ success: Success, ...List.fields }).annotations({ identifier: "CreatorFeeList" })
export const CreatorFeeClaim = Schema.Struct({ success: Success, ...Claim.fields }).annotations({ identifier: "CreatorFeeClaim" })

// Each schema describes exactly its view: assignable both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
type Deep<T> = T extends ReadonlyArray<infer E> ? ReadonlyArray<Deep<E>> : T extends object ? { -readonly [K in keyof T]: Deep<T[K]> } : T
const same = <_ extends true>() => undefined
same<Same<Deep<typeof List.Type>, Deep<FeeList>>>()
same<Same<Deep<typeof Claim.Type>, Deep<FeeClaim>>>()
