import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { tokenReserveRaw } from "../../../domain/CurveMath.js"
import { maxThresholdRaw } from "../../../domain/CustomCurve.js"
import { DefaultDevBuyCeilings } from "../../../domain/Economics.js"
import { ErrorCodes, type ErrorCode, isErrorCode } from "../../../domain/ErrorCodes.js"
import { decodeLaunchRequest, decodeSelfLaunchRequest, DESCRIPTION_BYTES_MAX } from "./DecodeLaunchRequest.js"
import { canonicalBody, canonicalSelfBody } from "./CanonicalBody.js"
import { idempotencyHash } from "../Idempotency.js"
import { errorCodeOf } from "../../../../api/LaunchCodes.js"
import { fromRequest } from "../LaunchError.js"
import {
  type LaunchRequest,
  type LaunchRequestCaller,
  LaunchRequestRefusalReason,
  LaunchRequestRefused,
  type LaunchRequestSettings
} from "./LaunchRequest.js"

const SOL = 10n ** 9n
const SVC = 10n ** 6n
const HOSTED = "http://127.0.0.1:8080/api/v1/uploads/images/"

const settings: LaunchRequestSettings = {
  expCustomCurves: true,
  devBuyCeilings: DefaultDevBuyCeilings,
  hostedImageUrlPrefix: HOSTED
}
const production: LaunchRequestCaller = { keyEnvironment: "production" }
const testKey: LaunchRequestCaller = { keyEnvironment: "test" }

/** A body that passes every rule; each case changes one thing. */
const base = {
  clientLaunchId: "launch-1",
  name: "Curve Cat",
  symbol: "CCAT",
  imageUrl: "https://images.example.com/cat.png"
} as const
const hood = { ...base, chain: "hood", dexVersion: "v4" } as const
const custom = { ...base, mode: "exp-custom", curve: { virtualQuote: "4", threshold: "5" } } as const
const customSvc = { ...custom, quoteAsset: "svc", curve: { virtualQuote: "264000", threshold: "330000" } } as const

const without = (body: Record<string, unknown>, key: string) => Object.fromEntries(Object.entries(body).filter(([k]) => k !== key))

const decode = (body: unknown, caller = production, s = settings) => decodeLaunchRequest(body, caller, s)

const accept = (body: unknown, caller = production, s = settings): LaunchRequest => {
  const result = decode(body, caller, s)
  if (Either.isLeft(result)) throw new Error(`refused ${result.left.reason} on ${result.left.field}: ${result.left.message}`)
  return result.right
}

const refuse = (body: unknown, caller = production, s = settings): LaunchRequestRefused => {
  const result = decode(body, caller, s)
  if (Either.isRight(result)) throw new Error(`accepted ${JSON.stringify(body)}`)
  return result.left
}

type Row = readonly [label: string, body: unknown, reason: LaunchRequestRefusalReason, field: string, code: ErrorCode, caller?: LaunchRequestCaller]

/** One row per refusal the spec gives for these fields (and the decisions that refine them). */
const refusals: ReadonlyArray<Row> = [
  // the body
  ["an array body", [base], "body_not_object", "body", "VALIDATION_FAILED"],
  ["a string body", "launch", "body_not_object", "body", "VALIDATION_FAILED"],
  ["a null body", null, "body_not_object", "body", "VALIDATION_FAILED"],
  // general rule 7: a test key launches test or hidden only, checked before the other fields
  ["test key, visibility omitted", base, "test_key_visibility", "visibility", "VALIDATION_FAILED", testKey],
  ["test key, visibility production", { ...base, visibility: "production" }, "test_key_visibility", "visibility", "VALIDATION_FAILED", testKey],
  ["test key, visibility local", { ...base, visibility: "local" }, "test_key_visibility", "visibility", "VALIDATION_FAILED", testKey],
  ["test key, visibility unknown", { ...base, visibility: "public" }, "test_key_visibility", "visibility", "VALIDATION_FAILED", testKey],
  ["test key rule before payer fields", { ...base, payer: { type: "main" } }, "test_key_visibility", "visibility", "VALIDATION_FAILED", testKey],
  // general rule 1: payer fields, before every field rule
  ["payer", { ...base, payer: { type: "main" } }, "payer_field_forbidden", "payer", "VALIDATION_FAILED"],
  ["wallet", { ...base, wallet: "So11111111111111111111111111111111111111112" }, "payer_field_forbidden", "wallet", "VALIDATION_FAILED"],
  ["linkedWalletId", { ...base, linkedWalletId: "lw_1" }, "payer_field_forbidden", "linkedWalletId", "VALIDATION_FAILED"],
  ["firstBuys, even empty", { ...base, firstBuys: [] }, "payer_field_forbidden", "firstBuys", "VALIDATION_FAILED"],
  ["firstBuys false", { ...base, firstBuys: false }, "payer_field_forbidden", "firstBuys", "VALIDATION_FAILED"],
  ["payer fields before field rules", { wallet: "w", name: 5 }, "payer_field_forbidden", "wallet", "VALIDATION_FAILED"],
  // clientLaunchId
  ["clientLaunchId missing", without(base, "clientLaunchId"), "required", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId null", { ...base, clientLaunchId: null }, "required", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId a number", { ...base, clientLaunchId: 7 }, "invalid_type", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId empty", { ...base, clientLaunchId: "" }, "invalid_value", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId 129 chars", { ...base, clientLaunchId: "a".repeat(129) }, "too_long", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId 129 astral chars", { ...base, clientLaunchId: "😀".repeat(129) }, "too_long", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId with NUL", { ...base, clientLaunchId: "a\u0000b" }, "invalid_value", "clientLaunchId", "VALIDATION_FAILED"],
  ["clientLaunchId with a lone surrogate", { ...base, clientLaunchId: "a\uD800" }, "invalid_value", "clientLaunchId", "VALIDATION_FAILED"],
  // chain
  ["chain unknown", { ...base, chain: "ethereum" }, "invalid_value", "chain", "VALIDATION_FAILED"],
  ["chain upper case", { ...base, chain: "SOLANA" }, "invalid_value", "chain", "VALIDATION_FAILED"],
  ["chain a number", { ...base, chain: 1 }, "invalid_value", "chain", "VALIDATION_FAILED"],
  // quoteAsset
  ["quoteAsset unknown", { ...base, quoteAsset: "btc" }, "quote_pair_unknown", "quoteAsset", "QUOTE_PAIR_UNKNOWN"],
  ["quoteAsset of the other chain (solana)", { ...base, quoteAsset: "eth" }, "quote_pair_unknown", "quoteAsset", "QUOTE_PAIR_UNKNOWN"],
  ["quoteAsset of the other chain (hood)", { ...hood, quoteAsset: "sol" }, "quote_pair_unknown", "quoteAsset", "QUOTE_PAIR_UNKNOWN"],
  ["quoteAsset upper case", { ...base, quoteAsset: "SOL" }, "quote_pair_unknown", "quoteAsset", "QUOTE_PAIR_UNKNOWN"],
  ["quoteAsset a number", { ...base, quoteAsset: 5 }, "quote_pair_unknown", "quoteAsset", "QUOTE_PAIR_UNKNOWN"],
  // mode
  ["mode unknown", { ...base, mode: "turbo" }, "mode_unknown", "mode", "VALIDATION_FAILED"],
  ["mode upper case", { ...base, mode: "OPEN" }, "mode_unknown", "mode", "VALIDATION_FAILED"],
  ["mode a number", { ...base, mode: 1 }, "mode_unknown", "mode", "VALIDATION_FAILED"],
  ["exp-a on hood", { ...hood, mode: "exp-a" }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  ["exp-b on usdc", { ...base, quoteAsset: "usdc", mode: "exp-b" }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  ["exp-custom on usdc", { ...custom, quoteAsset: "usdc" }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  ["exp-custom on hood", { ...hood, mode: "exp-custom", curve: custom.curve }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  ["exclusive on usdc (no exclusive tier)", { ...base, quoteAsset: "usdc", mode: "exclusive" }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  ["exclusive on hood", { ...hood, mode: "exclusive" }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  ["test-exclusive on svc", { ...base, quoteAsset: "svc", mode: "test-exclusive" }, "mode_unsupported_for_pair", "mode", "VALIDATION_FAILED"],
  // curve (spec 2.2)
  ["curve with open", { ...base, curve: custom.curve }, "not_allowed", "curve", "VALIDATION_FAILED"],
  ["curve with exp-a", { ...base, mode: "exp-a", curve: custom.curve }, "not_allowed", "curve", "VALIDATION_FAILED"],
  ["exp-custom without curve", without(custom, "curve"), "curve_format", "curve", "VALIDATION_FAILED"],
  ["exp-custom with a string curve", { ...custom, curve: "4,5" }, "curve_format", "curve", "VALIDATION_FAILED"],
  ["curve missing threshold", { ...custom, curve: { virtualQuote: "4" } }, "curve_format", "curve", "VALIDATION_FAILED"],
  ["virtualQuote a number", { ...custom, curve: { virtualQuote: 4, threshold: "5" } }, "curve_format", "curve.virtualQuote", "VALIDATION_FAILED"],
  ["threshold with an exponent", { ...custom, curve: { virtualQuote: "4", threshold: "5e0" } }, "curve_format", "curve.threshold", "VALIDATION_FAILED"],
  ["virtualQuote 10 decimals on sol", { ...custom, curve: { virtualQuote: "4.0000000001", threshold: "5" } }, "curve_precision", "curve.virtualQuote", "VALIDATION_FAILED"],
  ["threshold 7 decimals on svc", { ...customSvc, curve: { virtualQuote: "264000", threshold: "330000.0000001" } }, "curve_precision", "curve.threshold", "VALIDATION_FAILED"],
  ["V one raw unit under 1 SOL", { ...custom, curve: { virtualQuote: "0.999999999", threshold: "5" } }, "virtual_quote_out_of_range", "curve.virtualQuote", "CURVE_OUT_OF_RANGE"],
  ["V one raw unit over 100 SOL", { ...custom, curve: { virtualQuote: "100.000000001", threshold: "5" } }, "virtual_quote_out_of_range", "curve.virtualQuote", "CURVE_OUT_OF_RANGE"],
  ["G one raw unit over 250 SOL", { ...custom, curve: { virtualQuote: "100", threshold: "250.000000001" } }, "threshold_out_of_range", "curve.threshold", "CURVE_OUT_OF_RANGE"],
  ["G one raw unit under 1 SOL", { ...custom, curve: { virtualQuote: "4", threshold: "0.999999999" } }, "threshold_out_of_range", "curve.threshold", "CURVE_OUT_OF_RANGE"],
  ["V under 66,000 on svc", { ...customSvc, curve: { virtualQuote: "65999.999999", threshold: "330000" } }, "virtual_quote_out_of_range", "curve.virtualQuote", "CURVE_OUT_OF_RANGE"],
  ["G over 16,500,000 on svc", { ...customSvc, curve: { virtualQuote: "264000", threshold: "16500000.000001" } }, "threshold_out_of_range", "curve.threshold", "CURVE_OUT_OF_RANGE"],
  ["price ceiling", { ...custom, curve: { virtualQuote: "1", threshold: "100" } }, "price_ceiling", "curve.threshold", "CURVE_OUT_OF_RANGE"],
  ["custom dev buy over 10% of G", { ...custom, curve: { virtualQuote: "4", threshold: "4" }, buyAmount: 400_000_001 }, "curve_dev_buy_cap", "buyAmount", "DEV_BUY_TOO_HIGH"],
  ["custom dev buy under 10% of G but over the ceiling", { ...custom, curve: { virtualQuote: "4", threshold: "10" }, buyAmount: 500_000_001 }, "curve_dev_buy_cap", "buyAmount", "DEV_BUY_TOO_HIGH"],
  // stakerAllocationBps
  ["stakerAllocationBps 49", { ...base, stakerAllocationBps: 49 }, "out_of_range", "stakerAllocationBps", "VALIDATION_FAILED"],
  ["stakerAllocationBps 1001", { ...base, stakerAllocationBps: 1001 }, "out_of_range", "stakerAllocationBps", "VALIDATION_FAILED"],
  ["stakerAllocationBps 0", { ...base, stakerAllocationBps: 0 }, "out_of_range", "stakerAllocationBps", "VALIDATION_FAILED"],
  ["stakerAllocationBps fractional", { ...base, stakerAllocationBps: 50.5 }, "invalid_type", "stakerAllocationBps", "VALIDATION_FAILED"],
  ["stakerAllocationBps a string", { ...base, stakerAllocationBps: "50" }, "invalid_type", "stakerAllocationBps", "VALIDATION_FAILED"],
  // dexVersion
  ["dexVersion missing on hood", without(hood, "dexVersion"), "required", "dexVersion", "VALIDATION_FAILED"],
  ["dexVersion unknown on hood", { ...hood, dexVersion: "v2" }, "invalid_value", "dexVersion", "VALIDATION_FAILED"],
  ["creatorFeeBps with open", { ...base, creatorFeeBps: 100 }, "not_allowed", "creatorFeeBps", "VALIDATION_FAILED"],
  ["creatorFeeBps 0 with open (like curve, any value)", { ...base, creatorFeeBps: 0 }, "not_allowed", "creatorFeeBps", "VALIDATION_FAILED"],
  ["creatorFeeBps 150 on exp-a", { ...base, mode: "exp-a", creatorFeeBps: 150 }, "invalid_value", "creatorFeeBps", "VALIDATION_FAILED"],
  ["creatorFeeBps as a string", { ...base, mode: "exp-b", creatorFeeBps: "100" }, "invalid_type", "creatorFeeBps", "VALIDATION_FAILED"],
  ["dexVersion on solana", { ...base, dexVersion: "v4" }, "not_allowed", "dexVersion", "VALIDATION_FAILED"],
  // buyAmount format
  ["buyAmount negative", { ...base, buyAmount: -1 }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount fractional number", { ...base, buyAmount: 1.5 }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount fractional string (whole-unit mistake)", { ...base, buyAmount: "0.5" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount negative string", { ...base, buyAmount: "-1" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount exponent string", { ...base, buyAmount: "1e3" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount hex string", { ...base, buyAmount: "0x10" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount padded string", { ...base, buyAmount: " 1" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount empty string", { ...base, buyAmount: "" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount a boolean", { ...base, buyAmount: true }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount an object", { ...base, buyAmount: { raw: "1" } }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount 2^53 as a number on solana", { ...base, buyAmount: 2 ** 53 }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount 2^53 as a string on solana", { ...base, buyAmount: "9007199254740992" }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  ["buyAmount a nonzero number on hood", { ...hood, buyAmount: 1000 }, "buy_amount_format", "buyAmount", "VALIDATION_FAILED"],
  // dev buy support and ceilings (spec 2.1 table), one raw unit over each default ceiling
  ["dev buy on usdg", { ...hood, quoteAsset: "usdg", buyAmount: "1" }, "dev_buy_unsupported_for_pair", "buyAmount", "DEV_BUY_UNSUPPORTED_FOR_PAIR"],
  ["sol over DEV_BUY_MAX_LAMPORTS", { ...base, buyAmount: 500_000_001 }, "dev_buy_ceiling", "buyAmount", "DEV_BUY_TOO_HIGH"],
  ["usdc over DEV_BUY_MAX_USDC_RAW", { ...base, quoteAsset: "usdc", buyAmount: "500000001" }, "dev_buy_ceiling", "buyAmount", "DEV_BUY_TOO_HIGH"],
  ["svc over DEV_BUY_MAX_CNDL_RAW", { ...base, quoteAsset: "svc", buyAmount: "2000000000001" }, "dev_buy_ceiling", "buyAmount", "DEV_BUY_TOO_HIGH"],
  ["eth over DEV_BUY_MAX_WEI", { ...hood, buyAmount: "20000000000000001" }, "dev_buy_ceiling", "buyAmount", "DEV_BUY_TOO_HIGH"],
  ["exp-a over the sol ceiling", { ...base, mode: "exp-a", buyAmount: 500_000_001 }, "dev_buy_ceiling", "buyAmount", "DEV_BUY_TOO_HIGH"],
  // name
  ["name missing", without(base, "name"), "required", "name", "VALIDATION_FAILED"],
  ["name a number", { ...base, name: 5 }, "invalid_type", "name", "VALIDATION_FAILED"],
  ["name empty", { ...base, name: "" }, "invalid_value", "name", "VALIDATION_FAILED"],
  ["name 33 ASCII bytes", { ...base, name: "a".repeat(33) }, "name_bytes", "name", "INVALID_NAME_BYTES"],
  ["name 33 bytes in 11 characters", { ...base, name: "€".repeat(11) }, "name_bytes", "name", "INVALID_NAME_BYTES"],
  ["name 36 bytes in 9 emoji", { ...base, name: "😀".repeat(9) }, "name_bytes", "name", "INVALID_NAME_BYTES"],
  ["name with a double quote", { ...base, name: 'Say "hi"' }, "json_unsafe", "name", "VALIDATION_FAILED"],
  ["name with a backslash", { ...base, name: "back\\slash" }, "json_unsafe", "name", "VALIDATION_FAILED"],
  ["name with a newline", { ...base, name: "two\nlines" }, "json_unsafe", "name", "VALIDATION_FAILED"],
  ["name with a lone surrogate", { ...base, name: "cat\uD83D" }, "json_unsafe", "name", "VALIDATION_FAILED"],
  // symbol
  ["symbol missing", without(base, "symbol"), "required", "symbol", "VALIDATION_FAILED"],
  ["symbol an array", { ...base, symbol: ["CAT"] }, "invalid_type", "symbol", "VALIDATION_FAILED"],
  ["symbol empty", { ...base, symbol: "" }, "invalid_value", "symbol", "VALIDATION_FAILED"],
  ["symbol 11 ASCII bytes", { ...base, symbol: "ABCDEFGHIJK" }, "symbol_bytes", "symbol", "INVALID_SYMBOL"],
  ["symbol 12 bytes in 4 characters", { ...base, symbol: "€€€€" }, "symbol_bytes", "symbol", "INVALID_SYMBOL"],
  ["symbol with a double quote", { ...base, symbol: 'C"AT' }, "json_unsafe", "symbol", "VALIDATION_FAILED"],
  ["symbol with a tab", { ...base, symbol: "C\tAT" }, "json_unsafe", "symbol", "VALIDATION_FAILED"],
  // imageUrl
  ["imageUrl missing", without(base, "imageUrl"), "required", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl null", { ...base, imageUrl: null }, "required", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl a number", { ...base, imageUrl: 5 }, "invalid_type", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl over http", { ...base, imageUrl: "http://images.example.com/cat.png" }, "url_invalid", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl not a URL", { ...base, imageUrl: "cat.png" }, "url_invalid", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl with credentials", { ...base, imageUrl: "https://user:pw@images.example.com/cat.png" }, "url_invalid", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl data URL", { ...base, imageUrl: "data:image/png;base64,AAAA" }, "url_invalid", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl over 2048 characters", { ...base, imageUrl: `https://images.example.com/${"a".repeat(2048)}` }, "url_invalid", "imageUrl", "VALIDATION_FAILED"],
  ["imageUrl on http beside the hosted prefix", { ...base, imageUrl: "http://127.0.0.1:8080/api/v1/uploads/other/x.png" }, "url_invalid", "imageUrl", "VALIDATION_FAILED"],
  // bannerUrl
  ["bannerUrl over http", { ...base, bannerUrl: "http://images.example.com/wide.png" }, "url_invalid", "bannerUrl", "VALIDATION_FAILED"],
  ["bannerUrl a number", { ...base, bannerUrl: 7 }, "invalid_type", "bannerUrl", "VALIDATION_FAILED"],
  // description
  ["description a number", { ...base, description: 5 }, "invalid_type", "description", "VALIDATION_FAILED"],
  ["description over its byte bound", { ...base, description: "d".repeat(DESCRIPTION_BYTES_MAX + 1) }, "too_long", "description", "VALIDATION_FAILED"],
  ["description with a double quote", { ...base, description: 'the "best" cat' }, "json_unsafe", "description", "VALIDATION_FAILED"],
  // socials
  ["socials a string", { ...base, socials: "https://x.com/cat" }, "invalid_type", "socials", "VALIDATION_FAILED"],
  ["socials an array", { ...base, socials: ["https://x.com/cat"] }, "invalid_type", "socials", "VALIDATION_FAILED"],
  ["socials.twitter a number", { ...base, socials: { twitter: 5 } }, "invalid_type", "socials.twitter", "VALIDATION_FAILED"],
  ["socials.website ftp", { ...base, socials: { website: "ftp://cat.example.com" } }, "url_invalid", "socials.website", "VALIDATION_FAILED"],
  ["socials.telegram without a scheme", { ...base, socials: { telegram: "t.me/cat" } }, "url_invalid", "socials.telegram", "VALIDATION_FAILED"],
  ["socials.discord javascript:", { ...base, socials: { discord: "javascript:alert(1)" } }, "url_invalid", "socials.discord", "VALIDATION_FAILED"],
  // visibility and async
  ["visibility unknown", { ...base, visibility: "public" }, "invalid_value", "visibility", "VALIDATION_FAILED"],
  ["visibility a boolean", { ...base, visibility: true }, "invalid_value", "visibility", "VALIDATION_FAILED"],
  ["async a string", { ...base, async: "true" }, "invalid_type", "async", "VALIDATION_FAILED"],
  ["async a number", { ...base, async: 1 }, "invalid_type", "async", "VALIDATION_FAILED"]
]

describe("decodeLaunchRequest refusals (spec 1, 2.1, 2.2)", () => {
  for (const [label, body, reason, field, code, caller] of refusals) {
    it(label, () => {
      const refusal = refuse(body, caller ?? production)
      expect({ reason: refusal.reason, field: refusal.field }).toEqual({ reason, field })
      expect(errorCodeOf(fromRequest(refusal))).toBe(code)
      expect(refusal.message.length).toBeGreaterThan(0)
    })
  }

  it("exp-custom while EXP_CUSTOM_CURVES is off is an unknown mode, even with a valid curve", () => {
    const refusal = refuse(custom, production, { ...settings, expCustomCurves: false })
    expect([refusal.reason, refusal.field]).toEqual(["mode_unknown", "mode"])
    expect(refusal.message).not.toContain("exp-custom")
    expect(accept(custom).mode).toBe("exp-custom")
  })

  it("price_ceiling carries maxThresholdRaw, the largest G that fits at this request's staker allocation", () => {
    for (const bps of [50, 500, 1000]) {
      const x = tokenReserveRaw(10n ** 15n, BigInt(bps))
      const max = maxThresholdRaw(SOL, x)
      const refusal = refuse({ ...custom, curve: { virtualQuote: "1", threshold: "100" }, stakerAllocationBps: bps })
      expect(refusal.maxThresholdRaw).toBe(max.toString())
      // the bound is exact: G = max fits, G = max + 1 does not
      const g = (raw: bigint) => ({ ...custom, stakerAllocationBps: bps, curve: { virtualQuote: "1", threshold: `${raw / SOL}.${(raw % SOL).toString().padStart(9, "0")}` } })
      expect(accept(g(max)).curve.thresholdRaw).toBe(max)
      expect(refuse(g(max + 1n)).reason).toBe("price_ceiling")
    }
  })

  it("a dev buy over the ceiling on a pair without dev buys is unsupported, not too high", () => {
    expect(refuse({ ...hood, quoteAsset: "usdg", buyAmount: "999999999999999999999" }).reason).toBe("dev_buy_unsupported_for_pair")
  })

  it("the ceilings come from the settings, not the defaults", () => {
    const tight = { ...settings, devBuyCeilings: { ...DefaultDevBuyCeilings, DEV_BUY_MAX_LAMPORTS: 7n, DEV_BUY_MAX_WEI: 9n } }
    expect(accept({ ...base, buyAmount: 7 }, production, tight).buyAmountRaw).toBe(7n)
    expect(refuse({ ...base, buyAmount: 8 }, production, tight).reason).toBe("dev_buy_ceiling")
    expect(accept({ ...hood, buyAmount: "9" }, production, tight).buyAmountRaw).toBe(9n)
    expect(refuse({ ...hood, buyAmount: "10" }, production, tight).reason).toBe("dev_buy_ceiling")
  })
})

describe("the refusal map", () => {
  it("maps every reason to a spec code in ErrorCodes, all 400", () => {
    for (const reason of LaunchRequestRefusalReason.literals) {
      const code = errorCodeOf(fromRequest(new LaunchRequestRefused({ reason, field: "name", message: "m" })))
      expect(isErrorCode(code)).toBe(true)
      expect(ErrorCodes[code].status).toBe(400)
    }
  })

  it("the table covers every reason", () => {
    const covered = new Set(refusals.map((row) => row[2]))
    expect(LaunchRequestRefusalReason.literals.filter((r) => !covered.has(r))).toEqual([])
  })
})

describe("decodeLaunchRequest accepts", () => {
  it("the minimal body with every default (spec 2.1)", () => {
    expect(accept(base)).toEqual({
      clientLaunchId: "launch-1",
      chain: "solana",
      quoteAsset: "sol",
      mode: "open",
      curve: { virtualQuoteRaw: 30n * SOL, thresholdRaw: 85n * SOL },
      stakerAllocationBps: 50n,
      creatorFeeBps: 0n,
      dexVersion: null,
      buyAmountRaw: 0n,
      name: "Curve Cat",
      symbol: "CCAT",
      image: { _tag: "Remote", url: "https://images.example.com/cat.png" },
      banner: null,
      description: null,
      socials: {},
      visibility: "production",
      async: false
    })
  })

  it("hood defaults to eth and carries dexVersion", () => {
    const req = accept({ ...hood, dexVersion: "v3" })
    expect([req.chain, req.quoteAsset, req.dexVersion, req.mode, req.stakerAllocationBps]).toEqual(["hood", "eth", "v3", "open", 50n])
    expect(accept({ ...hood, quoteAsset: "usdg", buyAmount: "0" }).buyAmountRaw).toBe(0n)
    expect(accept({ ...hood, buyAmount: 0 }).buyAmountRaw).toBe(0n)
  })

  it("each mode resolves to its curve; exp-* default to 500 bps", () => {
    expect(accept({ ...base, mode: "exclusive" }).curve).toEqual({ virtualQuoteRaw: 40n * SOL, thresholdRaw: 100n * SOL })
    expect(accept({ ...base, mode: "test-exclusive" }).curve).toEqual({ virtualQuoteRaw: 40n * SOL, thresholdRaw: 100n * SOL })
    for (const [mode, v] of [["exp-a", 4n], ["exp-b", 6n], ["exp-c", 8n]] as const) {
      const req = accept({ ...base, mode })
      expect(req.curve).toEqual({ virtualQuoteRaw: v * SOL, thresholdRaw: 5n * SOL })
      expect(req.stakerAllocationBps).toBe(500n)
      expect(accept({ ...base, quoteAsset: "svc", mode }).curve).toEqual({ virtualQuoteRaw: v * 66_000n * SVC, thresholdRaw: 330_000n * SVC })
    }
    expect(accept({ ...base, mode: "exp-a", stakerAllocationBps: 50 }).stakerAllocationBps).toBe(50n)
    expect(accept({ ...base, mode: "exp-a" }, production, { ...settings, expCustomCurves: false }).mode).toBe("exp-a")
  })

  it("creatorFeeBps on exp-* modes: 0 (default), 100 or 200 (spec 2.9 feeBps 150 or 250 after graduation)", () => {
    expect(accept({ ...base, mode: "exp-a" }).creatorFeeBps).toBe(0n)
    expect(accept({ ...base, mode: "exp-a", creatorFeeBps: 100 }).creatorFeeBps).toBe(100n)
    expect(accept({ ...custom, creatorFeeBps: 200 }).creatorFeeBps).toBe(200n)
    expect(accept({ ...base, quoteAsset: "svc", mode: "exp-c", creatorFeeBps: 0 }).creatorFeeBps).toBe(0n)
  })

  it("stakerAllocationBps at both bounds", () => {
    expect(accept({ ...base, stakerAllocationBps: 50 }).stakerAllocationBps).toBe(50n)
    expect(accept({ ...base, stakerAllocationBps: 1000 }).stakerAllocationBps).toBe(1000n)
  })

  it("curve values 5 and 5.0 are one value; 5.000000001 is one raw unit more", () => {
    const g = (threshold: string) => accept({ ...custom, curve: { virtualQuote: "4", threshold } }).curve.thresholdRaw
    expect(g("5")).toBe(5n * SOL)
    expect(g("5.0")).toBe(5n * SOL)
    expect(g("5.000000000000")).toBe(5n * SOL)
    expect(g("5.000000001")).toBe(5n * SOL + 1n)
    expect(refuse({ ...customSvc, curve: { virtualQuote: "264000", threshold: "330000.000000001" } }).reason).toBe("curve_precision")
  })

  it("custom curves at the outer limits, and a dev buy of exactly 10% of G", () => {
    expect(accept({ ...custom, curve: { virtualQuote: "1", threshold: "1" } }).curve).toEqual({ virtualQuoteRaw: SOL, thresholdRaw: SOL })
    expect(accept({ ...custom, curve: { virtualQuote: "100", threshold: "250" } }).curve).toEqual({ virtualQuoteRaw: 100n * SOL, thresholdRaw: 250n * SOL })
    expect(accept({ ...customSvc, curve: { virtualQuote: "66000", threshold: "66000" } }).curve.virtualQuoteRaw).toBe(66_000n * SVC)
    expect(accept({ ...custom, curve: { virtualQuote: "4", threshold: "4" }, buyAmount: 400_000_000 }).buyAmountRaw).toBe(400_000_000n)
    // at 5 SOL, 10% of G is the ordinary ceiling exactly
    expect(accept({ ...custom, buyAmount: "500000000" }).buyAmountRaw).toBe(500_000_000n)
  })

  it("a dev buy exactly at each default ceiling", () => {
    expect(accept({ ...base, buyAmount: 500_000_000 }).buyAmountRaw).toBe(500_000_000n)
    expect(accept({ ...base, quoteAsset: "usdc", buyAmount: "500000000" }).buyAmountRaw).toBe(500_000_000n)
    expect(accept({ ...base, quoteAsset: "svc", buyAmount: "2000000000000" }).buyAmountRaw).toBe(2_000_000n * SVC)
    expect(accept({ ...hood, buyAmount: "20000000000000000" }).buyAmountRaw).toBe(20_000_000_000_000_000n)
  })

  it("buyAmount spellings of one amount; the safe-integer edge on solana", () => {
    for (const spelling of [5, 5.0, "5", "5.0", "005", "5.000"]) expect(accept({ ...base, buyAmount: spelling }).buyAmountRaw).toBe(5n)
    const roomy = { ...settings, devBuyCeilings: { ...DefaultDevBuyCeilings, DEV_BUY_MAX_LAMPORTS: 2n ** 60n } }
    expect(accept({ ...base, buyAmount: Number.MAX_SAFE_INTEGER }, production, roomy).buyAmountRaw).toBe(2n ** 53n - 1n)
    expect(accept({ ...base, buyAmount: "9007199254740991" }, production, roomy).buyAmountRaw).toBe(2n ** 53n - 1n)
    // hood amounts are not bounded by a safe integer (wei), only by the ceiling
    const roomyHood = { ...settings, devBuyCeilings: { ...DefaultDevBuyCeilings, DEV_BUY_MAX_WEI: 10n ** 30n } }
    expect(accept({ ...hood, buyAmount: "1000000000000000000000" }, production, roomyHood).buyAmountRaw).toBe(10n ** 21n)
  })

  it("name and symbol exactly at their byte limits, in multi-byte UTF-8", () => {
    for (const name of ["n".repeat(32), "😀".repeat(8), `${"€".repeat(10)}ab`, "Ünïcødé Çät—😀12345678"]) {
      expect(new TextEncoder().encode(name).length).toBe(32)
      expect(accept({ ...base, name }).name).toBe(name)
    }
    for (const symbol of ["S".repeat(10), "€€€a", "😀😀ab"]) {
      expect(new TextEncoder().encode(symbol).length).toBe(10)
      expect(accept({ ...base, symbol }).symbol).toBe(symbol)
    }
    expect(accept({ ...base, name: "Cat's 'quote' — ok" }).name).toBe("Cat's 'quote' — ok")
  })

  it("clientLaunchId at 128 characters, multi-byte included", () => {
    for (const id of ["a".repeat(128), "é".repeat(128), "😀".repeat(128)]) expect(accept({ ...base, clientLaunchId: id }).clientLaunchId).toBe(id)
  })

  it("null reads as absent for every optional member and for the payer fields", () => {
    const nulls = Object.fromEntries(
      ["chain", "quoteAsset", "mode", "curve", "stakerAllocationBps", "creatorFeeBps", "dexVersion", "buyAmount", "bannerUrl", "description", "socials", "visibility", "async", "payer", "wallet", "linkedWalletId", "firstBuys"].map(
        (k) => [k, null]
      )
    )
    expect(accept({ ...base, ...nulls })).toEqual(accept(base))
    expect(accept({ ...base, socials: { twitter: null, website: "https://cat.example.com" } }).socials).toEqual({ website: "https://cat.example.com" })
  })

  it("ignores members the spec does not name, and socials it does not use", () => {
    const req = accept({ ...base, tier: "max", matrixVersion: 9, socials: { twitter: "https://x.com/cat", instagram: 5, youtube: "nope" } })
    expect(req).toEqual({ ...accept(base), socials: { twitter: "https://x.com/cat" } })
  })

  it("a test key launches with visibility test or hidden", () => {
    expect(accept({ ...base, visibility: "test" }, testKey).visibility).toBe("test")
    expect(accept({ ...base, visibility: "hidden" }, testKey).visibility).toBe("hidden")
    expect(accept({ ...base, visibility: "local" }).visibility).toBe("local")
  })

  it("images: this engine's hosted URL (http allowed) needs no fetch; others are remote https", () => {
    expect(accept({ ...base, imageUrl: `${HOSTED}abc.png` }).image).toEqual({ _tag: "Hosted", url: `${HOSTED}abc.png` })
    // a path that climbs out of the hosted prefix is judged after normalization, and is not hosted
    expect(refuse({ ...base, imageUrl: `${HOSTED}../other/x.png` }).reason).toBe("url_invalid")
    expect(refuse({ ...base, imageUrl: HOSTED }).reason).toBe("url_invalid") // the prefix alone names no image
    expect(refuse({ ...base, imageUrl: `${HOSTED}abc.png` }, production, { ...settings, hostedImageUrlPrefix: null }).reason).toBe("url_invalid")
    const req = accept({ ...base, imageUrl: "https://IMAGES.example.com/a b.png", bannerUrl: "https://images.example.com/wide.png" })
    expect(req.image).toEqual({ _tag: "Remote", url: "https://images.example.com/a%20b.png" })
    expect(req.banner).toEqual({ _tag: "Remote", url: "https://images.example.com/wide.png" })
  })

  it("description at its byte bound, async true", () => {
    const description = "é".repeat(DESCRIPTION_BYTES_MAX / 2)
    expect(accept({ ...base, description, async: true })).toMatchObject({ description, async: true })
  })
})

/** Members the decoder reads, for bodies that reach deep rules with arbitrary values. */
const members = [
  "clientLaunchId", "chain", "quoteAsset", "mode", "curve", "stakerAllocationBps", "creatorFeeBps", "dexVersion", "buyAmount", "name", "symbol",
  "imageUrl", "bannerUrl", "description", "socials", "visibility", "async", "payer", "wallet", "linkedWalletId", "firstBuys"
] as const

describe("decodeLaunchRequest is total", () => {
  it("never throws on arbitrary JSON", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.boolean(), (body, test) => {
        decode(body, test ? testKey : production)
      }),
      { numRuns: 2_000 }
    )
  })

  it("never throws when any known member of a valid body holds arbitrary JSON", () => {
    const starts = [base, hood, custom, customSvc, { ...base, mode: "exp-b" }, { ...hood, quoteAsset: "usdg" }]
    const value = fc.oneof(
      fc.jsonValue(),
      fc.string({ unit: "binary" }),
      fc.constantFrom(-0, 2 ** 53, 1e308, "1e400", "9".repeat(70), "\uD800", "😀".repeat(200), { virtualQuote: "4", threshold: "5" })
    )
    fc.assert(
      fc.property(fc.constantFrom(...starts), fc.dictionary(fc.constantFrom(...members), value, { maxKeys: 4 }), (start, over) => {
        const result = decode({ ...start, ...over })
        if (Either.isLeft(result)) expect(LaunchRequestRefusalReason.literals).toContain(result.left.reason)
      }),
      { numRuns: 3_000 }
    )
  })
})

describe("decodeSelfLaunchRequest (2.3)", () => {
  const self = (body: Record<string, unknown>) =>
    decodeSelfLaunchRequest(body, { keyEnvironment: "production" }, { expCustomCurves: false, devBuyCeilings: DefaultDevBuyCeilings, hostedImageUrlPrefix: null })
  const base = { clientLaunchId: "s-1", name: "Self", symbol: "SLF", imageUrl: "https://example.com/i.png" }

  it("takes the launch fields and the required linkedWalletId; async is not used", () => {
    const r = self({ ...base, linkedWalletId: "lw_1", async: true })
    expect(Either.isRight(r) && r.right.linkedWalletId).toBe("lw_1")
    expect(Either.isRight(r) && r.right.request.async).toBe(false)
  })

  it("refuses a missing or malformed linkedWalletId after the launch fields, and the other payer fields first", () => {
    const missing = self(base)
    expect(Either.isLeft(missing) && [missing.left.reason, missing.left.field]).toEqual(["required", "linkedWalletId"])
    const bad = self({ ...base, linkedWalletId: 7 })
    expect(Either.isLeft(bad) && bad.left.field).toBe("linkedWalletId")
    const empty = self({ ...base, linkedWalletId: "" })
    expect(Either.isLeft(empty) && empty.left.reason).toBe("invalid_value")
    // A field rule refuses before linkedWalletId is looked at.
    const name = self({ ...base, name: "x".repeat(33), linkedWalletId: "" })
    expect(Either.isLeft(name) && name.left.reason).toBe("name_bytes")
    for (const key of ["payer", "wallet", "firstBuys"]) {
      const r = self({ ...base, linkedWalletId: "lw_1", [key]: {} })
      expect(Either.isLeft(r) && [r.left.reason, r.left.field]).toEqual(["payer_field_forbidden", key])
    }
  })

  it("puts linkedWalletId in the idempotency hash", () => {
    const a = self({ ...base, linkedWalletId: "lw_1" })
    const b = self({ ...base, linkedWalletId: "lw_2" })
    if (Either.isLeft(a) || Either.isLeft(b)) throw new Error("decode")
    expect(idempotencyHash(canonicalSelfBody(a.right.request, "lw_1"))).not.toBe(idempotencyHash(canonicalSelfBody(b.right.request, "lw_2")))
    expect(idempotencyHash(canonicalSelfBody(a.right.request, "lw_1"))).not.toBe(idempotencyHash(canonicalBody(a.right.request)))
  })
})
