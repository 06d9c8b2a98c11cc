/** `GET /api/v1/agent/plans`: the live plan table, defaults with the operator's overrides. */
import { Schema } from "effect"
import { Plan } from "../../src/domain/Plans.js"
import { CachedJson, conditionalJson } from "../Http.js"
import { route, type RouteDef } from "../Router.js"
import { CONFIG_CACHE_CONTROL } from "./LaunchConfigRoutes.js"

const PlansResponse = Schema.Struct({
  success: Schema.Literal(true),
  plans: Schema.Array(Plan.annotations({ identifier: "Plan" })),
  promoMaxDays: Schema.Int
}).annotations({ identifier: "PlansResponse" })

export const planRoutes = (plans: ReadonlyArray<Plan>, promoMaxDays: number): ReadonlyArray<RouteDef> => {
  const doc = new CachedJson({ success: true, plans, promoMaxDays })
  return [
    route({
      method: "GET",
      path: "/api/v1/agent/plans",
      operationId: "getPlans",
      summary: "Plan table: price, fees, limits and capabilities of Free, Pro and Max",
      tags: ["plans"],
      auth: "public",
      headers: ["if-none-match"],
      responses: {
        200: { description: "The plan table", schema: PlansResponse, headers: ["ETag", "Cache-Control"] },
        304: { description: "Not modified", headers: ["ETag", "Cache-Control"] }
      },
      handler: (req) => conditionalJson(doc, req.headers["if-none-match"], CONFIG_CACHE_CONTROL)
    })
  ]
}
