/**
 * The key routes' decoders: each accepted shape gives the typed input, each malformed one the
 * `VALIDATION_FAILED` naming the field (the integration suite checks the same over HTTP).
 */
import { describe, expect, it } from "vitest"
import type { ApiError } from "../../src/domain/ApiError.js"
import {
  decodeAccessBody,
  decodeEmbeddedWalletBody,
  decodeHistoryLimit,
  decodeIssueBody,
  decodeLabel,
  decodeLimitsBody,
  decodePatchBody,
  decodeUsageDays
} from "./KeyDecoders.js"

const NOW = Date.UTC(2026, 9, 14)
const DAY = 86_400_000
const field = (x: unknown) => {
  const e = x as ApiError
  expect(e._tag, JSON.stringify(x)).toBe("ApiError")
  expect([e.code, e.httpStatus]).toEqual(["VALIDATION_FAILED", 400])
  return e.field
}

describe("issue body", () => {
  it("defaults an empty or absent body; null reads as absent; a bad ref is ignored", () => {
    const want = { environment: "production", label: null, expiresAtMs: null, txLimit: null, embeddedWallet: "denied", ref: null }
    expect(decodeIssueBody(undefined, NOW)).toMatchObject(want)
    expect(decodeIssueBody({ label: null, scopes: null, ref: "no such code!" }, NOW)).toMatchObject(want)
    expect(decodeIssueBody({ ref: "abc_DEF-1" }, NOW)).toMatchObject({ ref: "abc_DEF-1" })
  })
  it("normalizes scopes, trims the label at 64 code points, turns days into an expiry", () => {
    const r = decodeIssueBody({ scopes: ["transfer:write", "swap:write", "transfer:bound"], label: ` ${"é".repeat(64)} `, expiresInDays: 365 }, NOW)
    expect(r).toMatchObject({ scopes: ["swap:write", "transfer:bound", "transfer:write"], label: "é".repeat(64), expiresAtMs: NOW + 365 * DAY })
    expect(decodeIssueBody({ expiresAt: NOW + 1, txLimit: { usdMicros: 1, reset: "never" } }, NOW)).toMatchObject({ expiresAtMs: NOW + 1, txLimit: { usdMicros: 1, reset: "never" } })
  })
  it("refuses each malformed field by name", () => {
    const cases: Array<[unknown, string]> = [
      [[1], "body"],
      [{ environment: "staging" }, "environment"],
      [{ scopes: [] }, "scopes"],
      [{ scopes: ["admin:all"] }, "scopes"],
      [{ scopes: ["transfer:bound"] }, "scopes"],
      [{ label: "x".repeat(65) }, "label"],
      [{ expiresInDays: 366 }, "expiresInDays"],
      [{ expiresInDays: 0 }, "expiresInDays"],
      [{ expiresInDays: 1, expiresAt: NOW + DAY }, "expiresAt"],
      [{ expiresAt: NOW }, "expiresAt"],
      [{ txLimit: { usdMicros: 1, reset: "never", extra: 1 } }, "txLimit.extra"],
      [{ txLimit: { usdMicros: 0, reset: "daily" } }, "txLimit.usdMicros"],
      [{ embeddedWallet: "yes" }, "embeddedWallet"]
    ]
    for (const [body, f] of cases) expect(field(decodeIssueBody(body, NOW)), JSON.stringify(body)).toBe(f)
  })
})

describe("patch, access, limits, embedded wallet, query values", () => {
  it("PATCH takes exactly one known field", () => {
    expect(decodePatchBody({ label: " a " })).toEqual({ _tag: "label", label: "a" })
    expect(decodePatchBody({ avatar: null })).toEqual({ _tag: "avatar", avatar: null })
    expect(decodePatchBody({ clearTxLimit: true })).toEqual({ _tag: "txLimit", txLimit: null })
    expect(field(decodePatchBody({ label: "a", avatar: "b" }))).toBe("avatar")
    expect(field(decodePatchBody({ scopes: [] }))).toBe("scopes")
    expect(field(decodePatchBody({ clearTxLimit: false }))).toBe("clearTxLimit")
    expect(field(decodePatchBody("x"))).toBe("body")
    expect(field(decodeLabel("   "))).toBe("label")
  })
  it("access needs expectScopes on commit, not on a preview", () => {
    expect(decodeAccessBody({ access: "read", dryRun: true })).toEqual({ access: "read", dryRun: true, expectScopes: undefined })
    expect(field(decodeAccessBody({ access: "read" }))).toBe("expectScopes")
    expect(field(decodeAccessBody({ access: "admin", dryRun: true }))).toBe("access")
    expect(field(decodeAccessBody({ access: "read", dryRun: "yes" }))).toBe("dryRun")
  })
  it("limits: one per asset, positive raw strings, sorted; empty clears; at most one entry per asset", () => {
    expect(decodeLimitsBody([])).toBeNull()
    expect(decodeLimitsBody([{ asset: "usdc", maxPerTxRaw: "5" }, { asset: "sol", maxPerTxRaw: "7" }])).toEqual([
      { asset: "sol", maxPerTxRaw: "7" },
      { asset: "usdc", maxPerTxRaw: "5" }
    ])
    expect(field(decodeLimitsBody([{ asset: "sol", maxPerTxRaw: "1" }, { asset: "sol", maxPerTxRaw: "2" }]))).toBe("[1].asset")
    expect(field(decodeLimitsBody([{ asset: "sol", maxPerTxRaw: "0" }]))).toBe("[0].maxPerTxRaw")
    expect(field(decodeLimitsBody([{ asset: "doge", maxPerTxRaw: "1" }]))).toBe("[0].asset")
    const six = ["sol", "usdc", "svc", "eth", "usdg", "sol"].map((asset) => ({ asset, maxPerTxRaw: "1" }))
    expect(field(decodeLimitsBody(six))).toBe("body")
    expect(Array.isArray(decodeLimitsBody(six.slice(0, 5)))).toBe(true)
  })
  it("embedded wallet as an object or a bare string; days clamp; history limit 1 to 100", () => {
    expect([decodeEmbeddedWalletBody("allowed"), decodeEmbeddedWalletBody({ embeddedWallet: "denied" })]).toEqual(["allowed", "denied"])
    expect(field(decodeEmbeddedWalletBody({ embeddedWallet: "maybe" }))).toBe("embeddedWallet")
    expect([decodeUsageDays(null), decodeUsageDays("0"), decodeUsageDays("120")]).toEqual([30, 1, 90])
    expect(field(decodeUsageDays("1.5"))).toBe("days")
    expect([decodeHistoryLimit(null), decodeHistoryLimit("1"), decodeHistoryLimit("100")]).toEqual([20, 1, 100])
    expect(field(decodeHistoryLimit("0"))).toBe("limit")
    expect(field(decodeHistoryLimit("101"))).toBe("limit")
  })
})
