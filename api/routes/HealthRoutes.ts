/**
 * Probes: `/healthz` answers while the process serves at all; `/readyz` answers 200 only when
 * every dependency check passes within its deadline (storage and the bus), 503 otherwise, naming
 * each check's state so an operator sees what is down. Beside the checks, when given, it reports
 * how far ingestion trails each chain (`ingestion`, `services/ingestion/IngestionLag.ts`): a
 * fact for operators and tests, never a reason to answer 503.
 */
import { Duration, Effect, Schema } from "effect"
import { json } from "../Http.js"
import { route, type RouteDef } from "../Router.js"
import type { IngestionReport } from "../../src/services/ingestion/IngestionLag.js"

export interface ReadinessCheck {
  readonly name: string
  readonly check: Effect.Effect<void, unknown>
}

const ChainLag = Schema.Struct({
  published: Schema.NullOr(Schema.String).annotations({ description: "Last slot/block whose events were published (decimal)" }),
  head: Schema.NullOr(Schema.String).annotations({ description: "The node's newest slot/block, read with this answer (decimal)" })
})

const ReadyResponse = Schema.Struct({
  ready: Schema.Boolean,
  checks: Schema.Record({ key: Schema.String, value: Schema.String }),
  ingestion: Schema.optional(
    Schema.Struct({
      solana: ChainLag,
      hood: ChainLag,
      actorsPending: Schema.NullOr(Schema.Number).annotations({ description: "chain.events records the market actors have not applied and checkpointed" })
    }).annotations({ description: "How far ingestion trails each chain; informational, never makes the answer 503" })
  )
}).annotations({ identifier: "Readiness" })

const Liveness = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "Liveness" })

const describe = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)

export const healthRoutes = (
  checks: ReadonlyArray<ReadinessCheck>,
  timeout: Duration.DurationInput = "2 seconds",
  ingestion?: Effect.Effect<IngestionReport>
): ReadonlyArray<RouteDef> => {
  const healthy = json(200, { status: "ok" })
  const readiness = Effect.forEach(
    checks,
    ({ check, name }) =>
      check.pipe(
        Effect.timeoutFail({ duration: timeout, onTimeout: () => "timed out" }),
        Effect.match({ onSuccess: () => [name, "ok"] as const, onFailure: (e) => [name, `down: ${describe(e)}`] as const })
      ),
    { concurrency: "unbounded" }
  ).pipe(
    Effect.zip(
      ingestion === undefined
        ? Effect.succeed(undefined)
        : ingestion.pipe(Effect.timeout(timeout), Effect.orElseSucceed(() => undefined)),
      { concurrent: true }
    ),
    Effect.map(([results, lag]) => {
      const ready = results.every(([, state]) => state === "ok")
      return json(ready ? 200 : 503, { ready, checks: Object.fromEntries(results), ...(lag === undefined ? {} : { ingestion: lag }) }, [
        ["Cache-Control", "no-store"]
      ])
    })
  )
  return [
    route({
      method: "GET",
      path: "/healthz",
      operationId: "healthz",
      summary: "Liveness",
      tags: ["operations"],
      auth: "public",
      responses: { 200: { description: "The process serves", schema: Liveness } },
      handler: () => healthy
    }),
    route({
      method: "GET",
      path: "/readyz",
      operationId: "readyz",
      summary: "Readiness: storage and the bus are up",
      tags: ["operations"],
      auth: "public",
      responses: {
        200: { description: "Ready", schema: ReadyResponse },
        503: { description: "Not ready; checks name what is down", schema: ReadyResponse }
      },
      handler: () => readiness
    })
  ]
}
