/**
 * The fund-moving warnings of the access-change plan (spec document 2, 2.1 "Access-change
 * response", 3.2): `MOVES_FUNDS`, `VAULT_TRANSFER_READY`, `LINKED_TRANSFER_NEEDS_LIMITS` and
 * `effects.linkedTransferReady`, from the key's scopes, its bound TEE wallets and its caps.
 */
import { describe, expect, it } from "vitest"
import { type AccessFacts, planAccessChange } from "./AccessChange.js"
import type { SpendLimit } from "./KeyRules.js"
import { LevelScopes } from "./Scopes.js"

const none: AccessFacts = { boundTeeWallets: { count: 0, sample: [] }, walletScope: "all", openSignClaims: 0, txLimit: null, spendLimits: null }
const caps = (...assets: ReadonlyArray<SpendLimit["asset"]>): ReadonlyArray<SpendLimit> => assets.map((asset) => ({ asset, maxPerTxRaw: "1000" }))
const codes = (scopes: ReadonlyArray<string>, target: "read" | "readwrite" | "readwritetransfer", facts: AccessFacts = none) =>
  planAccessChange(scopes, target, facts).warnings.map((w) => w.code)
const txLimit: AccessFacts["txLimit"] = { usdMicros: 5_000_000, reset: "daily" }

describe("fund-moving warnings", () => {
  it("Write to Withdraw: MOVES_FUNDS, and LINKED_TRANSFER_NEEDS_LIMITS with linkedTransferReady all false when nothing is capped", () => {
    const p = planAccessChange(LevelScopes.readwrite, "readwritetransfer", none)
    expect(p.warnings.map((w) => w.code)).toEqual(["MOVES_FUNDS", "LINKED_TRANSFER_NEEDS_LIMITS"])
    expect(p.effects.linkedTransferReady).toEqual({ txLimit: false, assets: { sol: false, usdc: false, svc: false } })
  })

  it("linkedTransferReady reads the key's txLimit and its sol, usdc and svc caps; all set: no LINKED_TRANSFER_NEEDS_LIMITS", () => {
    const partial = planAccessChange(LevelScopes.readwrite, "readwritetransfer", { ...none, txLimit, spendLimits: caps("sol", "eth") })
    expect(partial.effects.linkedTransferReady).toEqual({ txLimit: true, assets: { sol: true, usdc: false, svc: false } })
    expect(partial.warnings.map((w) => w.code)).toContain("LINKED_TRANSFER_NEEDS_LIMITS")
    const noTx = planAccessChange(LevelScopes.readwrite, "readwritetransfer", { ...none, spendLimits: caps("sol", "usdc", "svc") })
    expect(noTx.warnings.map((w) => w.code)).toContain("LINKED_TRANSFER_NEEDS_LIMITS")
    const ready = planAccessChange(LevelScopes.readwrite, "readwritetransfer", { ...none, txLimit, spendLimits: caps("sol", "usdc", "svc") })
    expect(ready.effects.linkedTransferReady).toEqual({ txLimit: true, assets: { sol: true, usdc: true, svc: true } })
    expect(ready.warnings.map((w) => w.code)).toEqual(["MOVES_FUNDS"])
  })

  it("VAULT_TRANSFER_READY only when a bound TEE wallet has a vault pinned", () => {
    const bound = { count: 2, sample: ["A", "B"] }
    expect(codes(LevelScopes.readwrite, "readwritetransfer", { ...none, boundTeeWallets: bound })).not.toContain("VAULT_TRANSFER_READY")
    expect(codes(LevelScopes.readwrite, "readwritetransfer", { ...none, boundTeeWallets: { ...bound, withVault: 0 } })).not.toContain("VAULT_TRANSFER_READY")
    const p = planAccessChange(LevelScopes.readwrite, "readwritetransfer", { ...none, boundTeeWallets: { ...bound, withVault: 1 } })
    expect(p.warnings.map((w) => w.code)).toEqual(["MOVES_FUNDS", "LINKED_TRANSFER_NEEDS_LIMITS", "VAULT_TRANSFER_READY"])
    expect(p.effects.boundTeeWallets).toEqual({ count: 2, sample: ["A", "B"] })
  })

  it("a legacy key already holding transfer:write gains transfer:bound: no MOVES_FUNDS, the linked-transfer facts still shown", () => {
    const legacy = [...LevelScopes.readwrite, "transfer:write"]
    const p = planAccessChange(legacy, "readwritetransfer", { ...none, boundTeeWallets: { count: 1, sample: ["A"], withVault: 1 } })
    expect(p.added).toEqual(["transfer:bound"])
    expect(p.warnings.map((w) => w.code)).toEqual(["LINKED_TRANSFER_NEEDS_LIMITS", "VAULT_TRANSFER_READY"])
    expect(p.effects).toHaveProperty("linkedTransferReady")
  })

  it("no fund-moving warning or linkedTransferReady when the change adds no transfer scope", () => {
    for (const [from, to] of [
      [LevelScopes.read, "readwrite"],
      [LevelScopes.readwritetransfer, "readwrite"],
      [LevelScopes.readwritetransfer, "readwritetransfer"],
      [LevelScopes.readwrite, "read"]
    ] as const) {
      const p = planAccessChange(from, to, { ...none, boundTeeWallets: { count: 1, sample: ["A"], withVault: 1 } })
      expect(p.warnings.map((w) => w.code).filter((c) => ["MOVES_FUNDS", "VAULT_TRANSFER_READY", "LINKED_TRANSFER_NEEDS_LIMITS"].includes(c)), `${from} -> ${to}`).toEqual([])
      expect(p.effects).not.toHaveProperty("linkedTransferReady")
    }
  })
})
