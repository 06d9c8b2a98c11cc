/**
 * Which agent keys may hold TEE wallets (spec document 2, 4.1: the rebind target rules, also
 * applied when a TEE wallet is created), each refusal beside the acceptance, expiry at its bound.
 */
import { describe, expect, it } from "vitest"
import type { KeyInfo } from "../Principal.js"
import { keyUnfit } from "./TeeWallets.js"

const NOW = 1_800_000_000_000
const key = (more: Partial<KeyInfo> = {}): KeyInfo => ({
  keyId: "kid",
  keyPrefix: "prefix01",
  accountId: "acct",
  label: null,
  environment: "production",
  scopes: ["swap:write"],
  revokedAtMs: null,
  expiresAtMs: null,
  paused: false,
  walletScope: "all",
  spendLimits: null,
  ...more
})

describe("keyUnfit", () => {
  it("a live production key with swap:write may hold TEE wallets, paused or not, until the instant it expires", () => {
    expect(keyUnfit(key(), NOW)).toBeUndefined()
    expect(keyUnfit(key({ paused: true, walletScope: "selected" }), NOW)).toBeUndefined()
    expect(keyUnfit(key({ expiresAtMs: NOW + 1 }), NOW)).toBeUndefined()
    expect(keyUnfit(key({ expiresAtMs: NOW }), NOW)?.reason).toBe("expired")
  })

  it("refuses, first reason first: unknown, revoked, expired, test key, lacking swap:write", () => {
    expect(keyUnfit(undefined, NOW)?.reason).toBe("not_found")
    expect(keyUnfit(key({ revokedAtMs: NOW - 1, expiresAtMs: NOW - 1, environment: "test" }), NOW)?.reason).toBe("revoked")
    expect(keyUnfit(key({ expiresAtMs: NOW - 1, environment: "test", scopes: [] }), NOW)?.reason).toBe("expired")
    expect(keyUnfit(key({ environment: "test", scopes: [] }), NOW)?.reason).toBe("test_key")
    expect(keyUnfit(key({ scopes: ["launch:write", "account:read"] }), NOW)?.reason).toBe("missing_scope")
  })
})
