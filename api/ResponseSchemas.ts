/**
 * The pieces response schemas are built from (issue 32, "A typed contract"): a route declares a
 * success as `answer(description, Schema)` and a refusal as `refusal([codes])` (`OpenApi.ts`);
 * the document shows every success as a closed object (`additionalProperties: false`), so a
 * member the schema does not name is a contract violation the test suite's check reports.
 * Raw amounts are decimal strings (`RawAmount`), never numbers; enums are the domain's own
 * literal lists, so the document cannot name a value the engine never writes.
 */
import { Schema } from "effect"

/** A raw amount in the asset's smallest unit: a non-negative decimal string. */
export const RawAmount = Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]*)$/)).annotations({
  identifier: "RawAmount",
  description: "A raw amount in the asset's smallest unit, as a decimal string"
})

/** A signed raw amount (a P&L, a balance change): an optionally negative decimal string. */
export const SignedRawAmount = Schema.String.pipe(Schema.pattern(/^-?(0|[1-9][0-9]*)$/)).annotations({
  identifier: "SignedRawAmount",
  description: "A signed raw amount, as a decimal string"
})

/** A human-unit decimal (a price, a percentage) as the engine formats it: a decimal string. */
export const DecimalString = Schema.String.pipe(Schema.pattern(/^-?[0-9]+(\.[0-9]+)?$/)).annotations({
  identifier: "DecimalString",
  description: "A decimal number as a string"
})

export const ChainId = Schema.Literal("solana", "hood")

/** Epoch milliseconds. */
export const EpochMs = Schema.Int.annotations({ description: "Epoch milliseconds" })

/** `success: true`, the first member of the main service's answers. */
export const Success = Schema.Literal(true)
