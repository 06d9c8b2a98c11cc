/**
 * The route table both bench servers serve: the static routes `src/main.ts` mounts (launch
 * configuration, plans, probes, OpenAPI), built the same way but with no storage, so `/readyz`
 * has no checks. One table, two servers: any difference measured is the server's.
 */
import { healthRoutes } from "../api/routes/HealthRoutes.js"
import { launchConfigRoutes } from "../api/routes/LaunchConfigRoutes.js"
import { withOpenApi } from "../api/routes/OpenApiRoute.js"
import { planRoutes } from "../api/routes/PlanRoutes.js"
import type { RouteDef } from "../api/Router.js"
import { DefaultDevBuyCeilings } from "../src/domain/Economics.js"
import { resolvePlans } from "../src/domain/Plans.js"

/** PROMO_MAX_DAYS's default in AppConfig. */
const PROMO_MAX_DAYS = 30

export const benchRoutes = (): ReadonlyArray<RouteDef> =>
  withOpenApi(
    [
      ...healthRoutes([]),
      ...launchConfigRoutes(DefaultDevBuyCeilings),
      ...planRoutes(resolvePlans({}, PROMO_MAX_DAYS), PROMO_MAX_DAYS)
    ],
    { title: "curvestream (bench)", description: "The static route table, served for benchmarks" }
  )

/** HTTP_MAX_BODY_BYTES's default in AppConfig (no route in this table takes a body). */
export const BENCH_MAX_BODY_BYTES = 256 * 1024
