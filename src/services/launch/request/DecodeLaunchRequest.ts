/**
 * Decodes the parsed JSON body of `POST /api/v1/launch/headless` (and its dry run) into a
 * `LaunchRequest`, or the first `LaunchRequestRefused` in this order (launch spec 1 rules 1 and
 * 7, 2.1, 2.2; docs/decisions.md "Launch request"):
 *
 *   body is an object → test-key visibility → payer fields (payer, wallet, linkedWalletId,
 *   firstBuys) → clientLaunchId → chain → quoteAsset → mode → curve allowed → stakerAllocationBps
 *   → dexVersion → buyAmount format → exp-custom curve rules (they read stakerAllocationBps and
 *   buyAmount) or the pair's dev-buy support and ceiling → name → symbol → imageUrl → bannerUrl →
 *   description → socials → visibility → async.
 *
 * Pure and total: any JSON value gives a result, never a throw. A null member reads as absent;
 * members the spec does not name are ignored. Amounts are parsed exactly into bigint raw units.
 */
import { Either } from "effect"
import { type Chain, isChain } from "../../../domain/Chain.js"
import { decodeOption, RawAmount } from "../../../domain/ChainValues.js"
import { EXP_PRESET_CURVES, parseWholeUnits, validateCustomCurve } from "../../../domain/CustomCurve.js"
import {
  DEFAULT_STAKER_ALLOCATION_BPS,
  devBuyCeilingRaw,
  EXP_STAKER_ALLOCATION_BPS,
  findEconomics,
  type PairEconomics
} from "../../../domain/Economics.js"
import { DefaultQuoteAsset, findQuotePair, type QuotePair } from "../../../domain/QuotePairs.js"
import { NAME_BYTES_MAX, SYMBOL_BYTES_MAX } from "../../../chain/solana/program/accounts/Metadata.js"
import { maxUrlLength, parseTargetUrl, TargetRefused } from "../../../net/PublicTarget.js"
import { codePointLengthUpTo, hasControlCharacter, isJsonSafe, isWellFormed, utf8ByteLength } from "./internal/text.js"
import {
  type DexVersion,
  DexVersions,
  ExpCreatorFeesBps,
  type ImageSource,
  isExpMode,
  type LaunchCurve,
  type LaunchMode,
  LaunchModes,
  type LaunchRequest,
  type LaunchRequestCaller,
  LaunchRequestRefused,
  type LaunchRequestSettings,
  SocialKeys,
  type Socials,
  Visibilities
} from "./LaunchRequest.js"

/** General rule 1: the headless route always pays from the embedded wallet. */
export const ForbiddenPayerFields = ["payer", "wallet", "linkedWalletId", "firstBuys"] as const

export const CLIENT_LAUNCH_ID_CHARS_MAX = 128
/** The spec states no bound on `description`; this one is ours (docs/decisions.md). */
export const DESCRIPTION_BYTES_MAX = 1_000
export const STAKER_ALLOCATION_BPS_MIN = 50n
export const STAKER_ALLOCATION_BPS_MAX = 1_000n
/** Spec 2.1: "Solana amounts must fit a safe integer". */
const SOLANA_BUY_AMOUNT_RAW_MAX = BigInt(Number.MAX_SAFE_INTEGER)

type Body = Readonly<Record<string, unknown>>
type Decoded<A> = A | LaunchRequestRefused

const refuse = (
  reason: LaunchRequestRefused["reason"],
  field: string,
  message: string,
  maxThresholdRaw?: string
): LaunchRequestRefused =>
  new LaunchRequestRefused(maxThresholdRaw === undefined ? { reason, field, message } : { reason, field, message, maxThresholdRaw })

const isRecord = (v: unknown): v is Body => typeof v === "object" && v !== null && !Array.isArray(v)

/** An own member; null reads as absent. */
const member = (body: Body, key: string): unknown => (Object.hasOwn(body, key) ? (body[key] ?? undefined) : undefined)

const oneOf = <T extends string>(values: ReadonlyArray<T>, v: unknown): v is T =>
  typeof v === "string" && (values as ReadonlyArray<string>).includes(v)

const list = (values: ReadonlyArray<string>) => values.join(", ")

export const decodeLaunchRequest = (
  body: unknown,
  caller: LaunchRequestCaller,
  settings: LaunchRequestSettings
): Either.Either<LaunchRequest, LaunchRequestRefused> => {
  const decoded = decode(body, caller, settings)
  return decoded instanceof LaunchRequestRefused ? Either.left(decoded) : Either.right(decoded)
}

/** The self-signed bodies (2.3) name their payer in `linkedWalletId`; the other payer fields stay refused. */
export const SelfForbiddenPayerFields = ["payer", "wallet", "firstBuys"] as const

export const LINKED_WALLET_ID_CHARS_MAX = 128

/** A self-signed build or dry-run body (2.3): the launch request and its payer. `async` is not used. */
export interface SelfLaunchBody {
  readonly request: LaunchRequest
  readonly linkedWalletId: string
}

/**
 * Decodes a `/launch/self/build` or `/self/dry-run` body: the headless rules in the same order,
 * with `linkedWalletId` allowed (and required, checked after the launch fields) instead of refused.
 */
export const decodeSelfLaunchRequest = (
  body: unknown,
  caller: LaunchRequestCaller,
  settings: LaunchRequestSettings
): Either.Either<SelfLaunchBody, LaunchRequestRefused> => {
  const decoded = decode(body, caller, settings, SelfForbiddenPayerFields)
  if (decoded instanceof LaunchRequestRefused) return Either.left(decoded)
  const id = decodeLinkedWalletId(member(body as Body, "linkedWalletId"), "linkedWalletId", "the linked or TEE wallet that pays")
  if (id instanceof LaunchRequestRefused) return Either.left(id)
  return Either.right({ request: { ...decoded, async: false }, linkedWalletId: id })
}

/** A linked wallet id: a string of 1 to 128 printable characters, named by `field`. */
const decodeLinkedWalletId = (id: unknown, field: string, what: string): Decoded<string> => {
  if (id === undefined) return refuse("required", field, `${field} is required: ${what}`)
  if (typeof id !== "string") return refuse("invalid_type", field, `${field} must be a string`)
  if (id.length === 0 || id.length > LINKED_WALLET_ID_CHARS_MAX || hasControlCharacter(id) || !isWellFormed(id)) {
    return refuse("invalid_value", field, `${field} must be 1 to ${LINKED_WALLET_ID_CHARS_MAX} printable characters`)
  }
  return id
}

const decode = (
  body: unknown,
  caller: LaunchRequestCaller,
  settings: LaunchRequestSettings,
  forbidden: ReadonlyArray<string> = ForbiddenPayerFields
): Decoded<LaunchRequest> => {
  if (!isRecord(body)) return refuse("body_not_object", "body", "the launch request must be a JSON object")
  const get = (key: string) => member(body, key)

  const visibility = get("visibility") ?? "production"
  if (caller.keyEnvironment === "test" && visibility !== "test" && visibility !== "hidden") {
    return refuse("test_key_visibility", "visibility", "a test key launches only with visibility test or hidden")
  }
  for (const key of forbidden) {
    if (get(key) !== undefined) {
      return refuse(
        "payer_field_forbidden",
        key,
        forbidden === ForbiddenPayerFields
          ? `${key} is not accepted: the headless route always pays from the account's embedded wallet`
          : forbidden === AtomicForbiddenPayerFields
            ? `${key} is not accepted: an atomic launch names its payers in payer and firstBuys`
            : `${key} is not accepted: a self-signed launch pays from linkedWalletId`
      )
    }
  }

  const clientLaunchId = decodeClientLaunchId(get("clientLaunchId"))
  if (clientLaunchId instanceof LaunchRequestRefused) return clientLaunchId

  const chain = get("chain") ?? "solana"
  if (!isChain(chain)) return refuse("invalid_value", "chain", "chain must be solana or hood")

  const quoteAsset = get("quoteAsset") ?? DefaultQuoteAsset[chain]
  const pair = typeof quoteAsset === "string" ? findQuotePair(chain, quoteAsset) : undefined
  const economics = pair === undefined ? undefined : findEconomics(chain, pair.id)
  if (pair === undefined || economics === undefined) {
    return refuse("quote_pair_unknown", "quoteAsset", `quoteAsset is not a quote pair on ${chain}`)
  }

  const mode = decodeMode(get("mode"), settings)
  if (mode instanceof LaunchRequestRefused) return mode
  const fixedCurve = modeCurve(mode, pair, economics)
  if (fixedCurve instanceof LaunchRequestRefused) return fixedCurve
  const curveValue = get("curve")
  if (mode !== "exp-custom" && curveValue !== undefined) {
    return refuse("not_allowed", "curve", "curve is accepted only with mode exp-custom")
  }

  const stakerAllocationBps = decodeStakerAllocation(get("stakerAllocationBps"), mode)
  if (stakerAllocationBps instanceof LaunchRequestRefused) return stakerAllocationBps
  const creatorFeeBps = decodeCreatorFee(get("creatorFeeBps"), mode)
  if (creatorFeeBps instanceof LaunchRequestRefused) return creatorFeeBps

  const dexVersion = decodeDexVersion(get("dexVersion"), chain)
  if (dexVersion instanceof LaunchRequestRefused) return dexVersion

  const buyAmountRaw = decodeBuyAmount(get("buyAmount"), pair)
  if (buyAmountRaw instanceof LaunchRequestRefused) return buyAmountRaw

  let curve: LaunchCurve
  if (fixedCurve === "custom") {
    const custom = validateCustomCurve({
      quoteAsset: pair.id === "svc" ? "svc" : "sol", // modeCurve admits exp-custom on sol and svc only
      curve: curveValue,
      stakerAllocationBps,
      supplyRaw: economics.tokenSupplyRaw,
      buyAmountRaw,
      devBuyCeilingRaw: devBuyCeilingRaw(pair, settings.devBuyCeilings) ?? 0n
    })
    if (custom._tag === "Refused") return refuse(custom.reason, custom.field, custom.message, custom.maxThresholdRaw)
    curve = { virtualQuoteRaw: custom.virtualQuoteRaw, thresholdRaw: custom.thresholdRaw }
  } else {
    const devBuy = checkDevBuy(buyAmountRaw, pair, settings)
    if (devBuy !== undefined) return devBuy
    curve = fixedCurve
  }

  const name = decodeLabel("name", get("name"), NAME_BYTES_MAX, "name_bytes")
  if (name instanceof LaunchRequestRefused) return name
  const symbol = decodeLabel("symbol", get("symbol"), SYMBOL_BYTES_MAX, "symbol_bytes")
  if (symbol instanceof LaunchRequestRefused) return symbol

  const imageUrl = get("imageUrl")
  if (imageUrl === undefined) return refuse("required", "imageUrl", "imageUrl is required")
  const image = decodeImageUrl("imageUrl", imageUrl, settings)
  if (image instanceof LaunchRequestRefused) return image
  const bannerUrl = get("bannerUrl")
  const banner = bannerUrl === undefined ? null : decodeImageUrl("bannerUrl", bannerUrl, settings)
  if (banner instanceof LaunchRequestRefused) return banner

  const description = decodeDescription(get("description"))
  if (description instanceof LaunchRequestRefused) return description
  const socials = decodeSocials(get("socials"))
  if (socials instanceof LaunchRequestRefused) return socials

  if (!oneOf(Visibilities, visibility)) return refuse("invalid_value", "visibility", `visibility must be one of ${list(Visibilities)}`)
  const isAsync = get("async") ?? false
  if (typeof isAsync !== "boolean") return refuse("invalid_type", "async", "async must be a boolean")

  return {
    clientLaunchId,
    chain,
    quoteAsset: pair.id,
    mode,
    curve,
    stakerAllocationBps,
    creatorFeeBps,
    dexVersion,
    buyAmountRaw,
    name,
    symbol,
    image,
    banner,
    description,
    socials,
    visibility,
    async: isAsync
  }
}

/**
 * 1 to 128 code points of well-formed text without control characters: it is stored and echoed
 * (PostgreSQL text holds no NUL) and names a job URL.
 */
const decodeClientLaunchId = (v: unknown): Decoded<string> => {
  if (v === undefined) return refuse("required", "clientLaunchId", "clientLaunchId is required")
  if (typeof v !== "string") return refuse("invalid_type", "clientLaunchId", "clientLaunchId must be a string")
  if (v.length === 0) return refuse("invalid_value", "clientLaunchId", "clientLaunchId must not be empty")
  if (codePointLengthUpTo(v, CLIENT_LAUNCH_ID_CHARS_MAX) > CLIENT_LAUNCH_ID_CHARS_MAX) {
    return refuse("too_long", "clientLaunchId", `clientLaunchId must be at most ${CLIENT_LAUNCH_ID_CHARS_MAX} characters`)
  }
  if (!isWellFormed(v) || hasControlCharacter(v)) {
    return refuse("invalid_value", "clientLaunchId", "clientLaunchId must be text without control characters")
  }
  return v
}

/** Spec 2.1: `exp-custom` while `EXP_CUSTOM_CURVES` is off is an unknown mode. */
const decodeMode = (v: unknown, settings: LaunchRequestSettings): Decoded<LaunchMode> => {
  const mode = v ?? "open"
  if (!oneOf(LaunchModes, mode) || (mode === "exp-custom" && !settings.expCustomCurves)) {
    const known = settings.expCustomCurves ? LaunchModes : LaunchModes.filter((m) => m !== "exp-custom")
    return refuse("mode_unknown", "mode", `mode must be one of ${list(known)}`)
  }
  return mode
}

/**
 * The curve a mode launches on for this pair; "custom" for exp-custom (the request's own curve).
 * `exp-*` are Solana modes against sol or svc; exclusive modes need an exclusive tier in the matrix.
 */
const modeCurve = (mode: LaunchMode, pair: QuotePair, economics: PairEconomics): Decoded<LaunchCurve | "custom"> => {
  if (isExpMode(mode)) {
    if (pair.chain !== "solana" || (pair.id !== "sol" && pair.id !== "svc")) {
      return refuse("mode_unsupported_for_pair", "mode", `${mode} launches on solana against sol or svc only`)
    }
    return mode === "exp-custom" ? "custom" : EXP_PRESET_CURVES[mode][pair.id]
  }
  const tier = economics.tiers.find((t) => t.tier === (mode === "open" ? "open" : "exclusive"))
  if (tier === undefined) return refuse("mode_unsupported_for_pair", "mode", `${mode} is not offered on ${pair.chain} ${pair.id}`)
  return { virtualQuoteRaw: tier.virtualQuoteRaw, thresholdRaw: tier.thresholdRaw }
}

const decodeStakerAllocation = (v: unknown, mode: LaunchMode): Decoded<bigint> => {
  if (v === undefined) return isExpMode(mode) ? EXP_STAKER_ALLOCATION_BPS : DEFAULT_STAKER_ALLOCATION_BPS
  if (typeof v !== "number" || !Number.isSafeInteger(v)) {
    return refuse("invalid_type", "stakerAllocationBps", "stakerAllocationBps must be an integer")
  }
  const bps = BigInt(v)
  if (bps < STAKER_ALLOCATION_BPS_MIN || bps > STAKER_ALLOCATION_BPS_MAX) {
    return refuse("out_of_range", "stakerAllocationBps", `stakerAllocationBps must be ${STAKER_ALLOCATION_BPS_MIN} to ${STAKER_ALLOCATION_BPS_MAX}`)
  }
  return bps
}

/**
 * The extra creator fee of an `exp-*` curve after graduation (spec 2.9 `feeBps`: the pool's 50 plus
 * 100 or 200): 0, 100 or 200 on `exp-*` modes, default 0; refused on any other mode, like `curve`.
 */
const decodeCreatorFee = (v: unknown, mode: LaunchMode): Decoded<bigint> => {
  if (!isExpMode(mode)) return v === undefined ? 0n : refuse("not_allowed", "creatorFeeBps", "creatorFeeBps is accepted only with the exp-* modes")
  if (v === undefined) return 0n
  if (typeof v !== "number" || !Number.isSafeInteger(v)) return refuse("invalid_type", "creatorFeeBps", "creatorFeeBps must be an integer")
  const bps = BigInt(v)
  if (!ExpCreatorFeesBps.includes(bps)) return refuse("invalid_value", "creatorFeeBps", `creatorFeeBps must be one of ${ExpCreatorFeesBps.join(", ")}`)
  return bps
}

/** Required on hood, refused on solana (spec 2.1). */
const decodeDexVersion = (v: unknown, chain: Chain): Decoded<DexVersion | null> => {
  if (chain === "solana") return v === undefined ? null : refuse("not_allowed", "dexVersion", "dexVersion is for hood launches only")
  if (v === undefined) return refuse("required", "dexVersion", `dexVersion (${list(DexVersions)}) is required on hood`)
  return oneOf(DexVersions, v) ? v : refuse("invalid_value", "dexVersion", `dexVersion must be one of ${list(DexVersions)}`)
}

/**
 * Raw units, a JSON number or a decimal string of a non-negative whole number. Hood amounts
 * (wei) must be strings, except 0; Solana amounts must fit a safe integer. A string may carry a
 * fraction of zeros ("5.0" is 5), never a nonzero one.
 */
const decodeBuyAmount = (v: unknown, pair: QuotePair): Decoded<bigint> => {
  if (v === undefined) return 0n
  const format = (why: string) => refuse("buy_amount_format", "buyAmount", `buyAmount must be ${why}`)
  let raw: bigint
  if (typeof v === "number") {
    if (!Number.isSafeInteger(v) || v < 0) return format("a non-negative whole number of raw units that fits a safe integer")
    if (pair.chain === "hood" && v !== 0) return format("a decimal string on hood (wei exceed a JSON number's precision)")
    raw = BigInt(v)
  } else if (typeof v === "string") {
    const parsed = parseWholeUnits(v, 0)
    if (parsed._tag === "Error") return format("a non-negative whole number of raw units, such as \"1500000\"")
    raw = parsed.raw
  } else {
    return format("a number or a decimal string of raw units")
  }
  if (pair.chain === "solana" && raw > SOLANA_BUY_AMOUNT_RAW_MAX) return format("at most 2^53 - 1 raw units on solana")
  return raw
}

/** Spec 2.1's per-pair table: a nonzero buy needs a dev-buy path, and stays at or below the ceiling. */
const checkDevBuy = (buyAmountRaw: bigint, pair: QuotePair, settings: LaunchRequestSettings): LaunchRequestRefused | undefined => {
  if (buyAmountRaw === 0n) return undefined
  const ceiling = devBuyCeilingRaw(pair, settings.devBuyCeilings)
  if (!pair.headlessDevBuy || ceiling === null) {
    return refuse("dev_buy_unsupported_for_pair", "buyAmount", `${pair.chain} ${pair.id} has no headless dev buy; send buyAmount 0`)
  }
  if (buyAmountRaw > ceiling) {
    return refuse("dev_buy_ceiling", "buyAmount", `buyAmount is above the ${pair.devBuyCeilingVariable} ceiling of ${ceiling} raw units`)
  }
  return undefined
}

/** name and symbol: required, non-empty, within their UTF-8 byte limit, JSON-safe. */
const decodeLabel = (
  field: "name" | "symbol",
  v: unknown,
  bytesMax: number,
  tooLong: "name_bytes" | "symbol_bytes"
): Decoded<string> => {
  if (v === undefined) return refuse("required", field, `${field} is required`)
  if (typeof v !== "string") return refuse("invalid_type", field, `${field} must be a string`)
  if (v.length === 0) return refuse("invalid_value", field, `${field} must not be empty`)
  if (utf8ByteLength(v) > bytesMax) return refuse(tooLong, field, `${field} must be at most ${bytesMax} UTF-8 bytes`)
  if (!isJsonSafe(v)) return refuse("json_unsafe", field, `${field} must not contain a double quote, a backslash or a control character`)
  return v
}

const decodeDescription = (v: unknown): Decoded<string | null> => {
  if (v === undefined) return null
  if (typeof v !== "string") return refuse("invalid_type", "description", "description must be a string")
  if (utf8ByteLength(v) > DESCRIPTION_BYTES_MAX) {
    return refuse("too_long", "description", `description must be at most ${DESCRIPTION_BYTES_MAX} UTF-8 bytes`)
  }
  if (!isJsonSafe(v)) {
    return refuse("json_unsafe", "description", "description must not contain a double quote, a backslash or a control character")
  }
  return v
}

/** An http(s) URL of at most `maxUrlLength` characters, or undefined when it is not one. */
const httpUrl = (text: string): URL | undefined => {
  if (text.length > maxUrlLength) return undefined
  const url = URL.canParse(text) ? new URL(text) : undefined
  return url !== undefined && (url.protocol === "https:" || url.protocol === "http:") ? url : undefined
}

/**
 * imageUrl / bannerUrl: this engine's own hosted URL, or an https URL without credentials (judged
 * here without the network; the fetch applies the public-address, redirect, size and shape rules).
 */
const decodeImageUrl = (field: "imageUrl" | "bannerUrl", v: unknown, settings: LaunchRequestSettings): Decoded<ImageSource> => {
  if (typeof v !== "string") return refuse("invalid_type", field, `${field} must be a string`)
  const prefix = settings.hostedImageUrlPrefix
  const url = httpUrl(v)
  if (prefix !== null && url !== undefined && url.username === "" && url.password === "" && url.href.startsWith(prefix) && url.href.length > prefix.length) {
    return { _tag: "Hosted", url: url.href }
  }
  const target = parseTargetUrl(v, false)
  if (target instanceof TargetRefused) return refuse("url_invalid", field, `${field}: ${target.message}`)
  return { _tag: "Remote", url: target.url.href }
}

/** Only the four used members are read; each, when present, an http(s) URL. */
const decodeSocials = (v: unknown): Decoded<Socials> => {
  if (v === undefined) return {}
  if (!isRecord(v)) return refuse("invalid_type", "socials", "socials must be an object of URL strings")
  const socials: Partial<Record<(typeof SocialKeys)[number], string>> = {}
  for (const key of SocialKeys) {
    const value = member(v, key)
    if (value === undefined) continue
    const field = `socials.${key}`
    if (typeof value !== "string") return refuse("invalid_type", field, `${field} must be a string`)
    if (httpUrl(value) === undefined) {
      return refuse("url_invalid", field, `${field} must be an http(s) URL of at most ${maxUrlLength} characters`)
    }
    socials[key] = value
  }
  return socials
}

// ---------------------------------------------------------------------------------------------
// Atomic build body (2.4)

/** The atomic build names its payers in `payer` and `firstBuys`; `wallet` and `linkedWalletId` stay refused. */
export const AtomicForbiddenPayerFields = ["wallet", "linkedWalletId"] as const

export type AtomicPayer = { readonly type: "main" } | { readonly type: "linked"; readonly linkedWalletId: string }

export interface AtomicFirstBuy {
  readonly payer: AtomicPayer
  readonly amountRaw: bigint
}

/** An atomic build body (2.4): the launch request (Solana, no dev buy), the creator and 1 to 4 first buys. */
export interface AtomicLaunchBody {
  readonly request: LaunchRequest
  readonly payer: AtomicPayer
  readonly firstBuys: ReadonlyArray<AtomicFirstBuy>
}

export const ATOMIC_FIRST_BUYS_MIN = 1
export const ATOMIC_FIRST_BUYS_MAX = 4
/** A first buy's `amountRaw`: a positive raw amount within a safe integer, as every Solana amount (spec 2.1). */
const firstBuyAmountRaw = decodeOption(RawAmount({ min: 1n, max: SOLANA_BUY_AMOUNT_RAW_MAX }))

const decodePayer = (v: unknown, field: string): Decoded<AtomicPayer> => {
  if (v === undefined || v === null) return refuse("required", field, `${field} is required: {type: main} or {type: linked, linkedWalletId}`)
  if (!isRecord(v)) return refuse("invalid_type", field, `${field} must be an object`)
  const type = member(v, "type")
  if (type === "main") return { type: "main" }
  if (type !== "linked") return refuse("invalid_value", `${field}.type`, `${field}.type must be main or linked`)
  const id = decodeLinkedWalletId(member(v, "linkedWalletId"), `${field}.linkedWalletId`, "the linked wallet that pays")
  if (id instanceof LaunchRequestRefused) return id
  return { type: "linked", linkedWalletId: id }
}

/**
 * Decodes a `/launch/atomic/build` body: the launch fields in the headless order (with `payer` and
 * `firstBuys` allowed), then Solana only (`chain`), no dev buy (`buyAmount` omitted or 0), the
 * creator `payer`, and `firstBuys` (1 to 4 `{payer, amountRaw}`, `amountRaw` a positive decimal
 * string of raw quote units within a safe integer, as every Solana amount).
 */
export const decodeAtomicLaunchRequest = (
  body: unknown,
  caller: LaunchRequestCaller,
  settings: LaunchRequestSettings
): Either.Either<AtomicLaunchBody, LaunchRequestRefused> => {
  const decoded = decode(body, caller, settings, AtomicForbiddenPayerFields)
  if (decoded instanceof LaunchRequestRefused) return Either.left(decoded)
  const get = (key: string) => member(body as Body, key)
  if (decoded.chain !== "solana") return Either.left(refuse("not_allowed", "chain", "atomic launches are Solana only"))
  if (decoded.buyAmountRaw !== 0n) return Either.left(refuse("not_allowed", "buyAmount", "an atomic launch carries no dev buy: omit buyAmount or send 0 and use firstBuys"))
  const payer = decodePayer(get("payer"), "payer")
  if (payer instanceof LaunchRequestRefused) return Either.left(payer)
  const raw = get("firstBuys")
  if (raw === undefined) return Either.left(refuse("required", "firstBuys", "firstBuys is required: 1 to 4 {payer, amountRaw}"))
  if (!Array.isArray(raw)) return Either.left(refuse("invalid_type", "firstBuys", "firstBuys must be an array"))
  if (raw.length < ATOMIC_FIRST_BUYS_MIN || raw.length > ATOMIC_FIRST_BUYS_MAX) {
    return Either.left(refuse("out_of_range", "firstBuys", `firstBuys holds ${ATOMIC_FIRST_BUYS_MIN} to ${ATOMIC_FIRST_BUYS_MAX} buys`))
  }
  const firstBuys: AtomicFirstBuy[] = []
  for (let i = 0; i < raw.length; i++) {
    const field = `firstBuys[${i}]`
    const item: unknown = raw[i]
    if (!isRecord(item)) return Either.left(refuse("invalid_type", field, `${field} must be an object {payer, amountRaw}`))
    const buyer = decodePayer(member(item, "payer"), `${field}.payer`)
    if (buyer instanceof LaunchRequestRefused) return Either.left(buyer)
    const amount = member(item, "amountRaw")
    if (amount === undefined) return Either.left(refuse("required", `${field}.amountRaw`, `${field}.amountRaw is required`))
    const amountRaw = firstBuyAmountRaw(amount)
    if (amountRaw === undefined) {
      return Either.left(refuse("invalid_value", `${field}.amountRaw`, `${field}.amountRaw must be a positive whole number of raw units as a decimal string, within a safe integer`))
    }
    firstBuys.push({ payer: buyer, amountRaw })
  }
  return Either.right({ request: { ...decoded, async: false }, payer, firstBuys })
}
