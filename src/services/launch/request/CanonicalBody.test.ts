import { Either } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { formatUnits } from "../../../domain/CurveMath.js"
import { DefaultDevBuyCeilings } from "../../../domain/Economics.js"
import { canonicalJsonText, idempotencyHash } from "../Idempotency.js"
import { canonicalBody } from "./CanonicalBody.js"
import { decodeLaunchRequest } from "./DecodeLaunchRequest.js"
import { isJsonSafe, utf8ByteLength } from "./internal/text.js"
import type { LaunchRequest, LaunchRequestSettings } from "./LaunchRequest.js"

const settings: LaunchRequestSettings = {
  expCustomCurves: true,
  devBuyCeilings: DefaultDevBuyCeilings,
  hostedImageUrlPrefix: "http://127.0.0.1:8080/api/v1/uploads/images/"
}

type Body = Record<string, unknown>

const decoded = (body: unknown): LaunchRequest | undefined => {
  const result = decodeLaunchRequest(body, { keyEnvironment: "production" }, settings)
  return Either.isRight(result) ? result.right : undefined
}

const canonicalText = (body: Body): string => {
  const req = decoded(body)
  if (req === undefined) throw new Error(`refused ${JSON.stringify(body)}`)
  return canonicalJsonText(canonicalBody(req))
}

describe("canonicalBody", () => {
  it("is the decoded request without async, keys sorted, amounts as raw decimal strings", () => {
    const req = decoded({
      async: true,
      clientLaunchId: "c-1",
      mode: "exp-custom",
      curve: { threshold: "5.0", virtualQuote: "4.5" },
      buyAmount: 250_000_000,
      name: "Cat",
      symbol: "CAT",
      imageUrl: "https://images.example.com/cat.png",
      socials: { website: "https://cat.example.com", twitter: "https://x.com/cat" }
    })!
    expect(canonicalJsonText(canonicalBody(req))).toBe(
      JSON.stringify({
        bannerUrl: null,
        buyAmountRaw: "250000000",
        chain: "solana",
        clientLaunchId: "c-1",
        curve: { thresholdRaw: "5000000000", virtualQuoteRaw: "4500000000" },
        description: null,
        dexVersion: null,
        imageUrl: "https://images.example.com/cat.png",
        mode: "exp-custom",
        name: "Cat",
        quoteAsset: "sol",
        socials: { twitter: "https://x.com/cat", website: "https://cat.example.com" },
        stakerAllocationBps: "500",
        symbol: "CAT",
        visibility: "production"
      })
    )
  })

  it("names no curve outside exp-custom (mode and pair name it)", () => {
    const req = decoded({ clientLaunchId: "c", name: "N", symbol: "S", imageUrl: "https://i.example.com/a.png", mode: "exp-a" })!
    expect(canonicalBody(req)).toMatchObject({ curve: null, mode: "exp-a" })
  })

  it("carries creatorFeeBps only when chosen: 0 and omitted hash alike (bodies stored before the field keep their hash); 100 differs", () => {
    const body = { clientLaunchId: "c", name: "N", symbol: "S", imageUrl: "https://i.example.com/a.png", mode: "exp-a" }
    const hash = (b: Record<string, unknown>) => idempotencyHash(canonicalBody(decoded(b)!))
    expect(canonicalBody(decoded(body)!)).not.toHaveProperty("creatorFeeBps")
    expect(hash({ ...body, creatorFeeBps: 0 })).toBe(hash(body))
    expect(canonicalBody(decoded({ ...body, creatorFeeBps: 100 })!)).toMatchObject({ creatorFeeBps: "100" })
    expect(hash({ ...body, creatorFeeBps: 100 })).not.toBe(hash(body))
  })
})

// ---------------------------------------------------------------------------------------------
// Properties over valid bodies

interface Target {
  readonly chain?: "solana" | "hood"
  readonly quoteAsset?: string
  readonly mode?: string
  readonly dexVersion?: "v3" | "v4"
}

/** Every chain, pair and mode combination that can launch; omitted members take their defaults. */
const targets: ReadonlyArray<Target> = [
  {},
  { mode: "exclusive" },
  { mode: "test-exclusive" },
  { quoteAsset: "usdc" },
  ...(["exp-a", "exp-b", "exp-c", "exp-custom"] as const).flatMap((mode) => [{ mode }, { quoteAsset: "svc", mode }]),
  { quoteAsset: "svc" },
  { chain: "hood", dexVersion: "v3" },
  { chain: "hood", dexVersion: "v4" },
  { chain: "hood", quoteAsset: "usdg", dexVersion: "v4" }
]

const pairOf = (t: { readonly chain?: unknown; readonly quoteAsset?: unknown }): string =>
  typeof t.quoteAsset === "string" ? t.quoteAsset : t.chain === "hood" ? "eth" : "sol"
const decimalsOf = (pair: string) => (pair === "sol" ? 9 : pair === "eth" ? 18 : 6)
const ceilingOf = (pair: string): bigint =>
  ({ sol: 500_000_000n, usdc: 500_000_000n, svc: 2_000_000_000_000n, eth: 20_000_000_000_000_000n, usdg: 0n })[pair] ?? 0n

const label = (maxBytes: number) =>
  fc
    .string({ unit: "grapheme", minLength: 1, maxLength: maxBytes })
    .filter((s) => utf8ByteLength(s) <= maxBytes && isJsonSafe(s))

const bodyArb: fc.Arbitrary<Body> = fc
  .record({
    target: fc.constantFrom(...targets),
    clientLaunchId: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,64}$/),
    name: label(32),
    symbol: label(10),
    image: fc.stringMatching(/^[a-z0-9]{1,12}$/),
    banner: fc.option(fc.stringMatching(/^[a-z0-9]{1,12}$/), { nil: undefined }),
    description: fc.option(fc.string({ unit: "grapheme", maxLength: 40 }).filter(isJsonSafe), { nil: undefined }),
    socials: fc.dictionary(fc.constantFrom("twitter", "telegram", "website", "discord"), fc.stringMatching(/^[a-z]{1,10}$/), { maxKeys: 4 }),
    stakerAllocationBps: fc.option(fc.integer({ min: 50, max: 1000 }), { nil: undefined }),
    visibility: fc.option(fc.constantFrom("production", "test", "local", "hidden"), { nil: undefined }),
    buyShare: fc.bigInt({ min: 0n, max: 1_000_000n }),
    vRaw: fc.bigInt({ min: 1_000_000_000n, max: 100_000_000_000n }),
    gRaw: fc.bigInt({ min: 1_000_000_000n, max: 5_000_000_000n }),
    async: fc.option(fc.boolean(), { nil: undefined })
  })
  .map((g) => {
    const pair = pairOf(g.target)
    const svcScale = pair === "svc" ? 66n : 1n // sol limits times 66,000 units per SOL at 6 decimals (66/1000 of raw)
    const v = pair === "svc" ? (g.vRaw * svcScale) : g.vRaw
    const t = pair === "svc" ? (g.gRaw * svcScale) : g.gRaw
    const custom = g.target.mode === "exp-custom"
    const cap = custom ? [ceilingOf(pair), t / 10n].reduce((a, b) => (a < b ? a : b)) : ceilingOf(pair)
    const buy = (cap * g.buyShare) / 1_000_000n
    const body: Body = {
      ...g.target,
      clientLaunchId: g.clientLaunchId,
      name: g.name,
      symbol: g.symbol,
      imageUrl: `https://images.example.com/${g.image}.png`,
      socials: Object.fromEntries(Object.entries(g.socials).map(([k, h]) => [k, `https://${k}.example.com/${h}`])),
      buyAmount: buy.toString()
    }
    if (custom) body["curve"] = { virtualQuote: formatUnits(v, decimalsOf(pair)), threshold: formatUnits(t, decimalsOf(pair)) }
    if (g.banner !== undefined) body["bannerUrl"] = `https://images.example.com/${g.banner}-wide.png`
    if (g.description !== undefined) body["description"] = g.description
    if (g.stakerAllocationBps !== undefined) body["stakerAllocationBps"] = g.stakerAllocationBps
    if (g.visibility !== undefined) body["visibility"] = g.visibility
    if (g.async !== undefined) body["async"] = g.async
    return body
  })

/** The same launch spelled differently: defaults written out, other number spellings, nulls, extras, async. */
const respell = (body: Body, seed: number): Body => {
  const req = decoded(body)!
  const out: Body = { ...body }
  const pick = (n: number) => Math.floor(seed / n) % 2 === 0
  if (pick(1)) out["chain"] = req.chain
  if (pick(2)) out["quoteAsset"] = req.quoteAsset
  if (pick(4)) out["mode"] = req.mode
  if (pick(8)) out["stakerAllocationBps"] = Number(req.stakerAllocationBps)
  if (pick(16)) out["visibility"] = req.visibility
  out["async"] = !req.async
  const buy = req.buyAmountRaw
  out["buyAmount"] =
    req.chain === "solana" && pick(32) ? Number(buy) : pick(64) ? `00${buy}` : `${buy}.000`
  if (req.banner === null) out["bannerUrl"] = null
  if (req.description === null) out["description"] = null
  out["payer"] = null
  out["unknownMember"] = { anything: [1, 2, 3] }
  const curve = body["curve"] as { virtualQuote: string; threshold: string } | undefined
  if (curve !== undefined) {
    const pad = (s: string) => (s.includes(".") ? `${s}000` : `${s}.0`)
    out["curve"] = pick(128) ? { threshold: pad(curve.threshold), virtualQuote: pad(curve.virtualQuote) } : curve
  }
  return out
}

const reorder = (body: Body, order: ReadonlyArray<string>): Body => Object.fromEntries(order.map((k) => [k, body[k]]))

describe("canonicalBody properties", () => {
  it("generated bodies decode (the properties below are not vacuous)", () => {
    fc.assert(
      fc.property(bodyArb, (body) => {
        expect(decoded(body)).toBeDefined()
      }),
      { numRuns: 500 }
    )
  })

  it("equal launches in other key orders and spellings have equal canonical bodies", () => {
    fc.assert(
      fc.property(
        bodyArb.chain((body) =>
          fc.tuple(fc.constant(body), fc.nat({ max: 255 })).chain(([b, seed]) => {
            const respelled = respell(b, seed)
            const keys = Object.keys(respelled)
            return fc.tuple(fc.constant(b), fc.shuffledSubarray(keys, { minLength: keys.length, maxLength: keys.length }).map((order) => reorder(respelled, order)))
          })
        ),
        ([body, other]) => {
          expect(canonicalText(other)).toBe(canonicalText(body))
          expect(idempotencyHash(canonicalBody(decoded(other)!))).toBe(idempotencyHash(canonicalBody(decoded(body)!)))
        }
      ),
      { numRuns: 500 }
    )
  })

  /** One member changed to another valid value; the launch differs, so must the canonical body. */
  const mutations: ReadonlyArray<readonly [string, (b: Body) => Body]> = [
    ["clientLaunchId", (b) => ({ ...b, clientLaunchId: `${String(b["clientLaunchId"]).slice(0, 60)}-2` })],
    ["name", (b) => ({ ...b, name: b["name"] === "Other" ? "Another" : "Other" })],
    ["symbol", (b) => ({ ...b, symbol: b["symbol"] === "OTH" ? "ANO" : "OTH" })],
    ["imageUrl", (b) => ({ ...b, imageUrl: `${String(b["imageUrl"])}?v=2` })],
    ["bannerUrl", (b) => ({ ...b, bannerUrl: b["bannerUrl"] === undefined ? "https://images.example.com/w.png" : `${String(b["bannerUrl"])}?v=2` })],
    ["description", (b) => ({ ...b, description: `${String(b["description"] ?? "")}!` })],
    ["socials", (b) => ({ ...b, socials: { ...(b["socials"] as Body), twitter: "https://x.com/changed" } })],
    ["visibility", (b) => ({ ...b, visibility: b["visibility"] === "hidden" ? "test" : "hidden" })],
    ["stakerAllocationBps", (b) => ({ ...b, stakerAllocationBps: b["stakerAllocationBps"] === 777 ? 778 : 777 })],
    ["buyAmount up", (b) => ({ ...b, buyAmount: (BigInt(String(b["buyAmount"])) + 1n).toString() })],
    ["buyAmount down", (b) => ({ ...b, buyAmount: (BigInt(String(b["buyAmount"])) - 1n).toString() })],
    ["dexVersion", (b) => ({ ...b, dexVersion: b["dexVersion"] === "v3" ? "v4" : "v3" })],
    ["chain", (b) => ({ ...b, chain: "hood", dexVersion: "v4", quoteAsset: "eth", mode: "open", curve: null })],
    ["quoteAsset", (b) => ({ ...b, quoteAsset: pairOf(b) === "svc" ? "sol" : "svc" })],
    ["mode", (b) => ({ ...b, mode: b["mode"] === "exp-b" ? "exp-c" : "exp-b", curve: null })],
    ["curve.virtualQuote", (b) => bumpCurve(b, "virtualQuote")],
    ["curve.threshold", (b) => bumpCurve(b, "threshold")]
  ]

  it("launches that differ in any one member have different canonical bodies", () => {
    fc.assert(
      fc.property(bodyArb, fc.constantFrom(...mutations), (body, [, mutate]) => {
        const changed = mutate(body)
        const a = decoded(body)
        const b = decoded(changed)
        fc.pre(b !== undefined && JSON.stringify({ ...a, async: 0 }, big) !== JSON.stringify({ ...b, async: 0 }, big))
        expect(canonicalText(changed)).not.toBe(canonicalText(body))
        expect(idempotencyHash(canonicalBody(b))).not.toBe(idempotencyHash(canonicalBody(a!)))
      }),
      { numRuns: 2_000 }
    )
  })

  it("every mutation takes effect on some generated body", () => {
    for (const [name, mutate] of mutations) {
      const effective = fc.sample(bodyArb, { numRuns: 300, seed: 42 }).some((body) => {
        const b = decoded(mutate(body))
        return b !== undefined && JSON.stringify(b, big) !== JSON.stringify(decoded(body), big)
      })
      expect([name, effective]).toEqual([name, true])
    }
  })
})

const big = (_: string, v: unknown) => (typeof v === "bigint" ? `${v}n` : v)

const parseRaw = (whole: string, decimals: number): bigint => {
  const [w = "0", f = ""] = whole.split(".")
  return BigInt(w) * 10n ** BigInt(decimals) + BigInt(f.padEnd(decimals, "0") || "0")
}

/** One raw unit more of a custom curve member (bodies without a curve are returned unchanged). */
const bumpCurve = (b: Body, member: "virtualQuote" | "threshold"): Body => {
  const curve = b["curve"] as Record<string, string> | undefined
  if (curve === undefined || curve === null) return b
  const decimals = decimalsOf(pairOf(b))
  return { ...b, curve: { ...curve, [member]: formatUnits(parseRaw(curve[member] ?? "0", decimals) + 1n, decimals) } }
}
