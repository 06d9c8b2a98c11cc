/**
 * How a route module calls a service: the router has decoded the input (a `Decoded<A>` from the
 * route's decoder); run the call with the typed input, answer 200 JSON, and map failures through the one table
 * (`api/ErrorTable.ts`). The translation every owner route shares, in one place.
 */
import { Effect, Either, ParseResult, Schema } from "effect"
import { type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import { mapFailure, type ServiceFailure } from "../ErrorTable.js"
import { json, type Reply } from "../Http.js"

/** A decoder's result: the typed input or the refusal naming the field. */
export type Decoded<A> = A | ApiError

/** The refusal for the first problem a Schema decode found, by the problem's path (`[]`: the body itself). */
export type Refusal = (path: ReadonlyArray<PropertyKey>) => { readonly field: string; readonly message: string }

/**
 * A body decoder from the Schema the route declares (the same one its OpenAPI entry shows): the
 * decoded value, or `VALIDATION_FAILED` naming the field of the first problem. Members the Schema
 * does not name are ignored.
 */
export const schemaDecoder =
  <A, I>(schema: Schema.Schema<A, I>, refusal: Refusal) =>
  (body: unknown): Decoded<A> =>
    Either.match(Schema.decodeUnknownEither(schema, { errors: "first" })(body), {
      onLeft: (e) => {
        const r = refusal(ParseResult.ArrayFormatter.formatErrorSync(e)[0]?.path ?? [])
        return validationFailed(r.field, r.message)
      },
      onRight: (a) => a
    })

/** Runs a service call and answers 200 with its value in the success envelope; failures go through the table. */
export const reply = (call: Effect.Effect<object, ServiceFailure>): Effect.Effect<Reply, ApiError> =>
  mapFailure(Effect.map(call, (body) => json(200, { success: true, ...body })))
