/**
 * A decoded `LaunchRequest` as JSON and back (amounts as decimal strings), for the attempt row
 * crash recovery reads (`headless_launch_attempts.request`). Lossless: `decodeStoredRequest(
 * encodeStoredRequest(r))` equals `r` (`StoredRequest.test.ts`).
 */
import { Schema } from "effect"
import { Chains } from "../../domain/Chain.js"
import { DexVersions, type LaunchRequest, LaunchModes, SocialKeys, Visibilities } from "./request/LaunchRequest.js"

const ImageSource = Schema.Union(
  Schema.TaggedStruct("Hosted", { url: Schema.String }),
  Schema.TaggedStruct("Remote", { url: Schema.String })
)

const socials = Object.fromEntries(SocialKeys.map((k) => [k, Schema.optional(Schema.String)])) as {
  readonly [K in (typeof SocialKeys)[number]]: Schema.optional<typeof Schema.String>
}

export const StoredRequest = Schema.Struct({
  clientLaunchId: Schema.String,
  chain: Schema.Literal(...Chains),
  quoteAsset: Schema.String,
  mode: Schema.Literal(...LaunchModes),
  curve: Schema.Struct({ virtualQuoteRaw: Schema.BigInt, thresholdRaw: Schema.BigInt }),
  stakerAllocationBps: Schema.BigInt,
  /** Rows written before the field existed launched with 0. */
  creatorFeeBps: Schema.optionalWith(Schema.BigInt, { default: () => 0n }),
  dexVersion: Schema.NullOr(Schema.Literal(...DexVersions)),
  buyAmountRaw: Schema.BigInt,
  name: Schema.String,
  symbol: Schema.String,
  image: ImageSource,
  banner: Schema.NullOr(ImageSource),
  description: Schema.NullOr(Schema.String),
  socials: Schema.Struct(socials),
  visibility: Schema.Literal(...Visibilities),
  async: Schema.Boolean
})

export const encodeStoredRequest = (r: LaunchRequest): unknown => Schema.encodeSync(StoredRequest)(r)

/** Throws on a row this build did not write (a defect: the table is ours). */
export const decodeStoredRequest = (json: unknown): LaunchRequest => Schema.decodeUnknownSync(StoredRequest)(json) as LaunchRequest
