/**
 * Every error code either spec document names is in the one error table, with the status the
 * spec's error tables give it. Codes are found as upper-case identifiers in backticks or in the
 * first column of a table; identifiers that are not error codes (server variables, advisory
 * warning codes, placeholders) are listed below by kind, and each of those must still occur in
 * the spec, so the list cannot go stale.
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { ErrorCodes } from "../../src/domain/ErrorCodes.js"

const specDir = fileURLToPath(new URL("../../../shared/spec/", import.meta.url))
const specFiles = ["launch-and-market-reads-api.md", "keys-wallets-staking-fees-webhooks-market-data-api.md"]
const specs = specFiles.map((f) => readFileSync(specDir + f, "utf8"))

const NotErrorCodes: Record<string, "server variable" | "warning code" | "placeholder" | "table heading"> = {
  AGENT_STAKING_ENABLED: "server variable",
  AGENT_TIER_GRACE_MS: "server variable",
  AGENT_TIER_PRO_MIN_HELD_CNDL: "server variable",
  AGENT_TIER_PRO_MIN_STAKED_CNDL: "server variable",
  AGENT_WALLET_CEILING_LAMPORTS: "server variable",
  AGENT_WALLET_CEILING_WEI: "server variable",
  BLOCK_ENGINE_URL: "server variable",
  BUNDLE_TIP_LAMPORTS: "server variable",
  DEV_BUY_MAX_CNDL_RAW: "server variable",
  DEV_BUY_MAX_LAMPORTS: "server variable",
  DEV_BUY_MAX_USDC_RAW: "server variable",
  DEV_BUY_MAX_WEI: "server variable",
  EXP_CUSTOM_CURVES: "server variable",
  HEADLESS_LAUNCH_ENABLED: "server variable",
  TEE_LAUNCH_BUYS_ENABLED: "server variable",
  MOVES_FUNDS: "warning code",
  VAULT_TRANSFER_READY: "warning code",
  LINKED_TRANSFER_NEEDS_LIMITS: "warning code",
  BOUND_WALLETS_STOP_TRADING: "warning code",
  OPEN_ORDERS_STRANDED: "warning code",
  OPEN_SIGNS_REFUSED: "warning code",
  WORKERS_STOP: "warning code",
  DROPS_UNLISTED_SCOPES: "warning code",
  API_KEY: "placeholder",
  HTTP: "table heading",
  SIGNING_SECRET: "placeholder"
}

const candidates = (text: string): Set<string> => {
  const found = new Set<string>()
  for (const m of text.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)`/g)) if (m[1]!.length > 3) found.add(m[1]!)
  for (const m of text.matchAll(/^\|\s*([A-Z][A-Z0-9_]{3,}(?:\s*,\s*[A-Z][A-Z0-9_]{3,})*)\s*\|/gm)) {
    for (const code of m[1]!.split(",")) found.add(code.trim())
  }
  for (const m of text.matchAll(/\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g)) found.add(m[1]!)
  return found
}

/** Section-7 table rows: `| CODE | 400 | ...` with a single plain status. */
const tableStatuses = (text: string): Array<[string, number]> => {
  const rows: Array<[string, number]> = []
  for (const m of text.matchAll(/^\|\s*([A-Z][A-Z0-9_]{3,})\s*\|\s*(\d{3})\s*\|/gm)) rows.push([m[1]!, Number(m[2])])
  return rows
}

describe("error code table", () => {
  const named = new Set(specs.flatMap((s) => [...candidates(s)]))

  it("reads codes out of both spec documents", () => {
    expect(named.size).toBeGreaterThan(80)
    expect(named.has("VALIDATION_FAILED")).toBe(true)
    expect(named.has("UNAUTHORIZED")).toBe(true)
    expect(named.has("REBIND_SCOPE_FULL")).toBe(true)
  })

  it("has every error code the spec names", () => {
    const missing = [...named].filter((c) => !(c in ErrorCodes) && !(c in NotErrorCodes)).sort()
    expect(missing).toEqual([])
  })

  it("lists no stale non-code identifiers", () => {
    const stale = Object.keys(NotErrorCodes).filter((c) => !named.has(c))
    expect(stale).toEqual([])
  })

  it("gives each code the status of the spec's error tables", () => {
    const mismatched: string[] = []
    for (const spec of specs) {
      for (const [code, status] of tableStatuses(spec)) {
        const info = ErrorCodes[code as keyof typeof ErrorCodes]
        if (info === undefined) mismatched.push(`${code}: missing`)
        else if (info.status !== status) mismatched.push(`${code}: spec ${status}, table ${info.status}`)
      }
    }
    expect(mismatched).toEqual([])
  })

  it("has a status and retryable hint for every code", () => {
    for (const [code, info] of Object.entries(ErrorCodes)) {
      expect(info.status, code).toBeGreaterThanOrEqual(400)
      expect(info.status, code).toBeLessThan(600)
      expect([true, false, "sometimes"]).toContain(info.retryable)
    }
  })
})
