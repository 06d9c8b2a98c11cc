/**
 * How a route module calls a service: decode the input (a `Decoded<A>` from the route's decoder),
 * run the call with the typed input, answer 200 JSON, and map failures through the one table
 * (`api/ErrorTable.ts`). The translation every owner route shares, in one place.
 */
import { Effect } from "effect"
import type { ApiError } from "../../src/domain/ApiError.js"
import { mapFailure, type ServiceFailure } from "../ErrorTable.js"
import { json, type Reply } from "../Http.js"
import { isApiError } from "../QueryParams.js"

/** A decoder's result: the typed input or the refusal naming the field. */
export type Decoded<A> = A | ApiError

/** Runs a service call and answers 200 with its value in the success envelope; failures go through the table. */
export const reply = (call: Effect.Effect<object, ServiceFailure>): Effect.Effect<Reply, ApiError> =>
  mapFailure(Effect.map(call, (body) => json(200, { success: true, ...body })))

/** Runs `f` with the decoded input and answers as `reply`; a decode failure is the refusal. */
export const decoded = <A>(input: Decoded<A>, f: (a: A) => Effect.Effect<object, ServiceFailure>): Effect.Effect<Reply, ApiError> =>
  isApiError(input) ? Effect.fail(input) : reply(f(input))
