/** `GET /api/v1/openapi.json` (or `path`): the OpenAPI 3.1 document of every mounted route, itself included. */
import { Schema } from "effect"
import { CachedJson, conditionalJson } from "../Http.js"
import { answer, openApiDocument } from "../OpenApi.js"
import { route, type RouteDef } from "../Router.js"

const JsonObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/** The document's top level (OpenAPI 3.1); what is under each member is the OpenAPI specification's. */
const OpenApiDoc = Schema.Struct({
  openapi: Schema.Literal("3.1.0"),
  info: Schema.Struct({ title: Schema.String, version: Schema.String, description: Schema.String }),
  servers: Schema.Array(Schema.Struct({ url: Schema.String, description: Schema.String })),
  paths: Schema.Record({ key: Schema.String, value: JsonObject }),
  components: Schema.Struct({ schemas: JsonObject, securitySchemes: JsonObject })
}).annotations({ identifier: "OpenApiDocument" })

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
    responses: { 200: answer("OpenAPI document", OpenApiDoc, ["ETag"]), 304: { description: "Not modified" } },
    handler: (req) => conditionalJson(doc!, req.headers["if-none-match"], "public, max-age=300")
  })
  const all = [...routes, self]
  doc = new CachedJson(openApiDocument(all, info))
  return all
}
