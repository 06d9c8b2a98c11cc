/**
 * Public launch-configuration reads: `GET /api/v1/launch/quote-pairs` and
 * `GET /api/v1/launch/presets` (spec 2.9 and section 4). Both documents are static for the life
 * of a process (the matrix changes only with a deploy, which bumps `matrixVersion`), so each
 * variant is serialized once at start with a strong ETag; a request costs a validator comparison.
 */
import { Schema } from "effect"
import { type Chain, Chains } from "../../src/domain/Chain.js"
import { type DevBuyCeilings, MATRIX_VERSION, quotePairRecord, quotePairsFor } from "../../src/domain/Economics.js"
import { resolvePresets } from "../../src/domain/Presets.js"
import { DefaultQuoteAsset } from "../../src/domain/QuotePairs.js"
import { CachedJson, conditionalJson } from "../Http.js"
import { chainParam } from "../QueryParams.js"
import { route, type RouteDef } from "../Router.js"
import { refusal } from "../OpenApi.js"

export const CONFIG_CACHE_CONTROL = "public, max-age=60"

const DecimalString = Schema.String.pipe(Schema.pattern(/^\d+(\.\d+)?$/))

const TierTermsSchema = Schema.Struct({
  symbol: Schema.String,
  virtualQuoteRaw: DecimalString,
  thresholdRaw: DecimalString,
  raise: DecimalString,
  startFdv: DecimalString,
  bondingFdv: DecimalString,
  supplySoldPct: DecimalString,
  tokenSupplyRaw: DecimalString,
  tokenDecimals: Schema.Int,
  stakerAllocationBps: Schema.Int,
  curveFeeBps: Schema.Int
}).annotations({ identifier: "TierTerms", description: "A tier's curve, every figure computed from V, G and supply" })

const QuotePairSchema = Schema.Struct({
  chain: Schema.Literal(...Chains),
  id: Schema.Literal("sol", "usdc", "svc", "eth", "usdg"),
  symbol: Schema.String,
  address: Schema.String,
  decimals: Schema.Int,
  isNative: Schema.Boolean,
  supportsDevBuy: Schema.Boolean,
  headlessDevBuy: Schema.Boolean,
  devBuy: Schema.Struct({
    path: Schema.Literal("atomic-wrap", "atomic-balance", "follow-up-transaction", "none"),
    maxRaw: Schema.NullOr(DecimalString),
    ceilingVariable: Schema.NullOr(Schema.String)
  }),
  tiers: Schema.Struct({ open: Schema.optional(TierTermsSchema), exclusive: Schema.optional(TierTermsSchema) })
}).annotations({ identifier: "QuotePair" })

const QuotePairsResponse = Schema.Struct({
  payload: Schema.Struct({
    matrixVersion: Schema.Int,
    pairs: Schema.Struct({ solana: Schema.optional(Schema.Array(QuotePairSchema)), hood: Schema.optional(Schema.Array(QuotePairSchema)) }),
    defaults: Schema.Struct({ solana: Schema.optional(Schema.String), hood: Schema.optional(Schema.String) })
  })
}).annotations({ identifier: "QuotePairsResponse" })

const PresetSchema = Schema.Struct({
  name: Schema.String,
  description: Schema.String,
  launch: Schema.Struct({
    chain: Schema.Literal(...Chains),
    quoteAsset: Schema.String,
    mode: Schema.Literal("open", "exclusive"),
    stakerAllocationBps: Schema.Int,
    dexVersion: Schema.optional(Schema.Literal("v3", "v4"))
  }),
  tier: Schema.Literal("open", "exclusive"),
  terms: TierTermsSchema
}).annotations({ identifier: "Preset" })

const PresetsResponse = Schema.Struct({
  payload: Schema.Struct({ matrixVersion: Schema.Int, presets: Schema.Array(PresetSchema) })
}).annotations({ identifier: "PresetsResponse" })

const quotePairsDocument = (chains: ReadonlyArray<Chain>, ceilings: DevBuyCeilings) => {
  const pairs: Partial<Record<Chain, unknown[]>> = {}
  const defaults: Partial<Record<Chain, string>> = {}
  for (const chain of chains) {
    pairs[chain] = quotePairsFor(chain).map((p) => quotePairRecord(p, ceilings))
    defaults[chain] = DefaultQuoteAsset[chain]
  }
  return new CachedJson({ payload: { matrixVersion: MATRIX_VERSION, pairs, defaults } })
}

export const launchConfigRoutes = (ceilings: DevBuyCeilings): ReadonlyArray<RouteDef> => {
  const all = quotePairsDocument(Chains, ceilings)
  const byChain: Record<Chain, CachedJson> = {
    solana: quotePairsDocument(["solana"], ceilings),
    hood: quotePairsDocument(["hood"], ceilings)
  }
  const presets = new CachedJson({ payload: { matrixVersion: MATRIX_VERSION, presets: resolvePresets() } })

  return [
    route({
      method: "GET",
      path: "/api/v1/launch/quote-pairs",
      operationId: "getQuotePairs",
      summary: "Quote pairs and their tiers under the current economics matrix",
      tags: ["launch configuration"],
      auth: "public",
      headers: ["if-none-match"],
      query: { chain: chainParam("Only this chain's pairs", { unique: true, emptyIsValue: true }) },
      responses: {
        200: { description: "The matrix", schema: QuotePairsResponse, headers: ["ETag", "Cache-Control"] },
        304: { description: "Not modified (If-None-Match matched)", headers: ["ETag", "Cache-Control"] },
        400: refusal(["VALIDATION_FAILED"], "unknown chain (field chain)")
      },
      handler: (req, { chain }) => conditionalJson(chain === undefined ? all : byChain[chain], req.headers["if-none-match"], CONFIG_CACHE_CONTROL)
    }),
    route({
      method: "GET",
      path: "/api/v1/launch/presets",
      operationId: "getPresets",
      summary: "Named launch presets, fully resolved and joined with live tier terms",
      tags: ["launch configuration"],
      auth: "public",
      headers: ["if-none-match"],
      responses: {
        200: { description: "The presets", schema: PresetsResponse, headers: ["ETag", "Cache-Control"] },
        304: { description: "Not modified (If-None-Match matched)", headers: ["ETag", "Cache-Control"] }
      },
      handler: (req) => conditionalJson(presets, req.headers["if-none-match"], CONFIG_CACHE_CONTROL)
    })
  ]
}
