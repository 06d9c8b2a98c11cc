/**
 * The headless launch request (launch spec 2.1 and 2.2) as a typed domain value: what
 * `decodeLaunchRequest` produces from the JSON body of `POST /api/v1/launch/headless` and its dry
 * run, the one refusal it fails with, and the inputs it needs that are not in the body (the
 * caller's key environment, the server settings).
 *
 * Invariants of a `LaunchRequest` (the decoder establishes them; `DecodeLaunchRequest.test.ts`):
 * - `quoteAsset` is a pair of `chain`, and `curve` is the curve this launch creates on it (the
 *   matrix tier for `open`/`exclusive`/`test-exclusive`, the preset for `exp-a/b/c`, the request's
 *   own for `exp-custom`), in the quote's raw units;
 * - `dexVersion` is non-null exactly when `chain` is `hood`;
 * - `buyAmountRaw` is 0 or within the pair's dev-buy support and ceiling (and 10% of G on
 *   `exp-custom`);
 * - `name`, `symbol` and `description` are well-formed and need no escaping in metadata JSON.
 *
 * What needs I/O is not decided here: image fetches and probes (`image`, `banner`), holder-pass
 * eligibility (`needsExclusiveEligibility`), the embedded wallet and its delegation.
 */
import { Schema } from "effect"
import type { Chain } from "../../../domain/Chain.js"
import type { DevBuyCeilings } from "../../../domain/Economics.js"
import type { QuoteAssetId } from "../../../domain/QuotePairs.js"

export const LaunchModes = ["open", "exclusive", "test-exclusive", "exp-a", "exp-b", "exp-c", "exp-custom"] as const
export type LaunchMode = (typeof LaunchModes)[number]
export type ExpMode = Extract<LaunchMode, `exp-${string}`>

/** The extra creator fees an `exp-*` launch may choose (spec 2.9 `feeBps`: 150 or 250 after graduation). */
export const ExpCreatorFeesBps: ReadonlyArray<bigint> = [0n, 100n, 200n]

export const isExpMode = (mode: LaunchMode): mode is ExpMode => mode.startsWith("exp-")

/** `exclusive` and `test-exclusive` launch only for holder-pass eligible accounts (checked with I/O). */
export const needsExclusiveEligibility = (mode: LaunchMode): boolean => mode === "exclusive" || mode === "test-exclusive"

export const Visibilities = ["production", "test", "local", "hidden"] as const
export type Visibility = (typeof Visibilities)[number]

export const DexVersions = ["v3", "v4"] as const
export type DexVersion = (typeof DexVersions)[number]

/** The only `socials` members the engine uses (spec 2.1); others are ignored. */
export const SocialKeys = ["twitter", "telegram", "website", "discord"] as const
export type SocialKey = (typeof SocialKeys)[number]
export type Socials = Readonly<Partial<Record<SocialKey, string>>>

/**
 * Where an image comes from. `Hosted`: this engine's own upload URL, which needs no fetch.
 * `Remote`: an https URL the image step must fetch under the public-target rules. `url` is the
 * normalized URL text (`URL.href`).
 */
export type ImageSource = { readonly _tag: "Hosted"; readonly url: string } | { readonly _tag: "Remote"; readonly url: string }

export interface LaunchCurve {
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
}

export interface LaunchRequest {
  readonly clientLaunchId: string
  readonly chain: Chain
  readonly quoteAsset: QuoteAssetId
  readonly mode: LaunchMode
  readonly curve: LaunchCurve
  readonly stakerAllocationBps: bigint
  /** The extra creator fee after graduation, in bps: 0, or 100 or 200 on `exp-*` modes. */
  readonly creatorFeeBps: bigint
  readonly dexVersion: DexVersion | null
  readonly buyAmountRaw: bigint
  readonly name: string
  readonly symbol: string
  readonly image: ImageSource
  readonly banner: ImageSource | null
  readonly description: string | null
  readonly socials: Socials
  readonly visibility: Visibility
  readonly async: boolean
}

/** The server settings the request rules depend on (read from the environment by the caller). */
/**
 * Spec 2.6's `resolved`: the request after its defaults, in the spec's member order; `creatorFeeBps`
 * when set (non-zero) and `curve` for `exp-custom`: both only with the exp-* modes, which the decoder
 * admits on Solana only.
 */
export const resolvedOf = (request: LaunchRequest) => ({
  chain: request.chain,
  quoteAsset: request.quoteAsset,
  mode: request.mode,
  stakerAllocationBps: Number(request.stakerAllocationBps),
  ...(request.creatorFeeBps !== 0n ? { creatorFeeBps: Number(request.creatorFeeBps) } : {}),
  dexVersion: request.dexVersion,
  visibility: request.visibility,
  buyAmount: request.buyAmountRaw.toString(),
  ...(request.mode === "exp-custom"
    ? { curve: { virtualQuoteRaw: request.curve.virtualQuoteRaw.toString(), thresholdRaw: request.curve.thresholdRaw.toString() } }
    : {})
})

export interface LaunchRequestSettings {
  /** `EXP_CUSTOM_CURVES`: while off, `exp-custom` is refused as an unknown mode. */
  readonly expCustomCurves: boolean
  /** `DEV_BUY_MAX_*`, raw units of each pair's quote asset. */
  readonly devBuyCeilings: DevBuyCeilings
  /**
   * URL prefix (ending in `/`) under which this engine serves uploaded images; URLs under it are
   * `Hosted` and may be `http:` (an embedded engine listens on plain HTTP). Null: none.
   */
  readonly hostedImageUrlPrefix: string | null
}

/** Who is asking, as far as the request rules care. */
export interface LaunchRequestCaller {
  /** General rule 7: a test key launches only with `visibility` `test` or `hidden`. */
  readonly keyEnvironment: "production" | "test"
}

/** Why a launch body was refused; `field` names the member (dotted for nested ones). */
export const LaunchRequestRefusalReason = Schema.Literal(
  "body_not_object",
  "test_key_visibility",
  "payer_field_forbidden",
  "required",
  "invalid_type",
  "invalid_value",
  "too_long",
  "not_allowed",
  "quote_pair_unknown",
  "mode_unknown",
  "mode_unsupported_for_pair",
  "out_of_range",
  "curve_format",
  "curve_precision",
  "virtual_quote_out_of_range",
  "threshold_out_of_range",
  "price_ceiling",
  "curve_dev_buy_cap",
  "buy_amount_format",
  "dev_buy_unsupported_for_pair",
  "dev_buy_ceiling",
  "name_bytes",
  "symbol_bytes",
  "json_unsafe",
  "url_invalid"
)
export type LaunchRequestRefusalReason = typeof LaunchRequestRefusalReason.Type

export class LaunchRequestRefused extends Schema.TaggedError<LaunchRequestRefused>()("LaunchRequestRefused", {
  reason: LaunchRequestRefusalReason,
  field: Schema.String,
  message: Schema.String,
  /** With `price_ceiling`: the largest raw G that fits this V (spec 2.2). */
  maxThresholdRaw: Schema.optional(Schema.String)
}) {}
