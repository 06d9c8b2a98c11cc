/**
 * Probes: `/healthz` answers while the process serves at all; `/readyz` answers 200 only when
 * every dependency check passes within its deadline (storage and the bus), 503 otherwise, naming
 * each check's state so an operator sees what is down.
 */
import { Duration, Effect, Schema } from "effect"
import { json } from "../Http.js"
import { route, type RouteDef } from "../Router.js"

export interface ReadinessCheck {
  readonly name: string
  readonly check: Effect.Effect<void, unknown>
}

const ReadyResponse = Schema.Struct({
  ready: Schema.Boolean,
  checks: Schema.Record({ key: Schema.String, value: Schema.String })
}).annotations({ identifier: "Readiness" })

const describe = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)

export const healthRoutes = (checks: ReadonlyArray<ReadinessCheck>, timeout: Duration.DurationInput = "2 seconds"): ReadonlyArray<RouteDef> => {
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
    Effect.map((results) => {
      const ready = results.every(([, state]) => state === "ok")
      return json(ready ? 200 : 503, { ready, checks: Object.fromEntries(results) }, [["Cache-Control", "no-store"]])
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
      responses: { 200: { description: "The process serves" } },
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
