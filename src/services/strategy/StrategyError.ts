import { Schema } from "effect"
import { failureFields } from "../../domain/ServiceFailure.js"

/**
 * The strategy store's failure (a `reason` union, `src/domain/ServiceFailure.ts`); `api/ErrorTable.ts`
 * answers it. `quota` carries `details` `{quota, used}` and `retryAfterMs` (to the next UTC day);
 * `invalid` the `field` of the first problem.
 */
export class StrategyError extends Schema.TaggedError<StrategyError>()("StrategyError", {
  reason: Schema.Literal("not_found", "quota", "invalid", "retired", "unavailable"),
  ...failureFields,
  retryAfterMs: Schema.optional(Schema.Number)
}) {}
