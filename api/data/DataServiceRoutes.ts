/**
 * The market-data listener's route table, once: `src/DataService.ts` fills it with the services in
 * context, `clients/typescript/documents.ts` with dependencies no construction reads (the OpenAPI
 * document the typed client is generated from).
 */
import { withOpenApi } from "../routes/OpenApiRoute.js"
import type { RouteDef } from "../Router.js"
import { dataRoutes, type DataRoutesDeps } from "./DataRoutes.js"
import { personalRoutes, type PersonalRoutesDeps } from "./personal/PersonalRoutes.js"
import { type TokenReadDeps, tokenReadRoutes } from "./reads/TokenReadRoutes.js"
import { type WalletSocialDeps, walletSocialRoutes } from "./reads/WalletSocialRoutes.js"

export const dataDocumentInfo = {
  title: "curvestream market data",
  description:
    "The signal tape, token and wallet intelligence, personal signals and the strategy lab. Bearer: a production agent key. " +
    "The signal stream is a WebSocket at /v1/signals/stream (same bearer; event_kind, chain and quality filters)."
}

/** What each route group of the market-data listener is built over. */
export interface DataServiceRouteDeps {
  readonly tape: DataRoutesDeps
  readonly tokenReads: TokenReadDeps
  readonly walletSocial: WalletSocialDeps
  readonly personal: PersonalRoutesDeps
  /** The strategy lab's routes (built with its runner, `makeStrategyRoutes`). */
  readonly strategies: ReadonlyArray<RouteDef>
}

/** Every route of the market-data listener, in the order it matches, with its OpenAPI document at `/v1/openapi.json`. */
export const dataServiceRouteTable = (d: DataServiceRouteDeps): ReadonlyArray<RouteDef> =>
  withOpenApi(
    [...dataRoutes(d.tape), ...tokenReadRoutes(d.tokenReads), ...walletSocialRoutes(d.walletSocial), ...personalRoutes(d.personal), ...d.strategies],
    dataDocumentInfo,
    "/v1/openapi.json"
  )
