/**
 * `SolanaIngester`: the Yellowstone ingester (`YellowstoneIngester.ts`) as an Effect service.
 * Its scoped layer starts the ingester on a fiber of the layer's scope (interrupting it closes
 * the gRPC stream) and exposes the ingester's status. Needs the `Bus` and PostgreSQL
 * (`SqlClient`, migrated with `ingest_cursors`).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import type { Bus } from "../bus/Bus.js"
import {
  IngesterState,
  type IngesterStatus,
  resolveOptions,
  runYellowstoneIngester,
  type YellowstoneIngesterOptions
} from "./YellowstoneIngester.js"

export interface SolanaIngesterShape {
  readonly status: Effect.Effect<IngesterStatus>
}

export class SolanaIngester extends Context.Tag("curvestream/SolanaIngester")<SolanaIngester, SolanaIngesterShape>() {
  /** Runs the ingester for as long as the layer's scope is open. */
  static readonly layer = (options: YellowstoneIngesterOptions): Layer.Layer<SolanaIngester, never, Bus | SqlClient.SqlClient> =>
    Layer.scoped(SolanaIngester, make(options))
}

export const make = (options: YellowstoneIngesterOptions) =>
  Effect.gen(function* () {
    const resolved = resolveOptions(options)
    const state = new IngesterState(resolved.source, resolved.attemptsLogSize)
    yield* Effect.forkScoped(runYellowstoneIngester(resolved, state))
    return { status: Effect.sync(() => state.snapshot()) } satisfies SolanaIngesterShape
  })

export const layer = SolanaIngester.layer
