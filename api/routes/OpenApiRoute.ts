/** `GET /api/v1/openapi.json` (or `path`): the OpenAPI 3.1 document of every mounted route, itself included. */
import { CachedJson, conditionalJson } from "../Http.js"
import { openApiDocument } from "../OpenApi.js"
import { route, type RouteDef } from "../Router.js"

export const withOpenApi = (
  routes: ReadonlyArray<RouteDef>,
  info: { readonly title: string; readonly description: string },
  path = "/api/v1/openapi.json"
): ReadonlyArray<RouteDef> => {
  let doc: CachedJson | undefined
  const self = route({
    method: "GET",
    path,
    operationId: "getOpenApi",
    summary: "This API's OpenAPI 3.1 description",
    tags: ["meta"],
    auth: "public",
    headers: ["if-none-match"],
    responses: { 200: { description: "OpenAPI document", headers: ["ETag"] }, 304: { description: "Not modified" } },
    handler: (req) => conditionalJson(doc!, req.headers["if-none-match"], "public, max-age=300")
  })
  const all = [...routes, self]
  doc = new CachedJson(openApiDocument(all, info))
  return all
}
