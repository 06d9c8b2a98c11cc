/**
 * The rebind decisions on rows built in memory: which wallets selectors name and which may move,
 * which claims hold a rebind back (at the claim window's bound), stale bindings and the `toKey`
 * view. What is refused sits beside what is accepted. The same rules over PostgreSQL and HTTP:
 * `test/integration/wallets.rebind.test.ts`.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import type { KeyInfo } from "../Principal.js"
import {
  type ClaimRow,
  forwardedClaimAction,
  forwardsOpen,
  openBuilds,
  reboundView,
  resolveSelectors,
  staleBindings,
  teeRowProblem,
  toKeyView,
  unchangedView
} from "./RebindRules.js"
import { WALLET_ROW_ADDRESS, walletRow } from "../../../../test/support/walletRows.js"
import type { WalletRow } from "./WalletRows.js"

const SOL_A = WALLET_ROW_ADDRESS
const SOL_B = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn"
const EVM = "0x52908400098527886E0F7030069857D2E4169EE7"

const row = walletRow
const evmRow = (id: string, more: Partial<WalletRow> = {}) => row(id, { chain: "evm", address: EVM, address_key: EVM.toLowerCase(), ...more })

const left = <A, E>(e: Either.Either<A, E>): E => {
  if (Either.isRight(e)) throw new Error("expected a refusal")
  return e.left
}
const ids = (e: Either.Either<ReadonlyArray<WalletRow>, unknown>) => {
  if (Either.isLeft(e)) throw new Error(`refused: ${JSON.stringify(e.left)}`)
  return e.right.map((r) => r.id)
}

describe("teeRowProblem", () => {
  it("moves an active TEE wallet at a verified-active authority", () => {
    expect(teeRowProblem(row("w1"))).toBeUndefined()
  })

  it("refuses a non-TEE, an inactive or an unverified wallet, naming the wallet and the selector", () => {
    expect(teeRowProblem(row("w1", { kind: "imported" }), "sel")).toMatchObject({ reason: "not_tee", walletId: "w1", selector: "sel" })
    expect(teeRowProblem(row("w1", { kind: "linked" }))).toMatchObject({ reason: "not_tee", walletId: "w1" })
    expect(teeRowProblem(row("w1", { revoked_at: new Date(1) }))).toMatchObject({ reason: "inactive" })
    expect(teeRowProblem(row("w1", { authority_status: "pending" }))).toMatchObject({ reason: "authority_not_verified" })
    expect(teeRowProblem(row("w1", { kind: "imported" }))).not.toHaveProperty("selector")
  })
})

describe("resolveSelectors", () => {
  const rows = [
    row("w1", { label: "bot-1" }),
    row("w2", { address: SOL_B, address_key: SOL_B, label: "bot-2" }),
    evmRow("w3", { label: "hood" }),
    row("w4", { label: "twin", address: "11111111111111111111111111111112", address_key: "11111111111111111111111111111112" }),
    row("w5", { label: "twin", address: "11111111111111111111111111111113", address_key: "11111111111111111111111111111113" })
  ]

  it("names a wallet by id, Solana address, EVM address in any case, or a unique label; deduplicated in selection order", () => {
    expect(ids(resolveSelectors(rows, ["w2", SOL_A, EVM.toLowerCase(), "bot-1", "w2"], undefined))).toEqual(["w2", "w1", "w3"])
    expect(ids(resolveSelectors(rows, ["hood"], undefined))).toEqual(["w3"])
  })

  it("an address names its active row before a revoked one", () => {
    const withOld = [row("old", { revoked_at: new Date(1) }), ...rows]
    expect(ids(resolveSelectors(withOld, [SOL_A], undefined))).toEqual(["w1"])
    expect(left(resolveSelectors([row("old", { revoked_at: new Date(1) })], [SOL_A], undefined))).toMatchObject({ reason: "inactive", walletId: "old", selector: SOL_A })
  })

  it("adds every active TEE wallet whose label starts with the prefix", () => {
    expect(ids(resolveSelectors(rows, [], "bot-"))).toEqual(["w1", "w2"])
    expect(ids(resolveSelectors(rows, ["w3"], "bot-"))).toEqual(["w3", "w1", "w2"])
    expect(ids(resolveSelectors([...rows, row("gone", { label: "bot-9", revoked_at: new Date(1) })], [], "bot-"))).toEqual(["w1", "w2"])
  })

  it("refuses an unknown selector, an ambiguous label (with its matches) and a selected wallet that cannot move", () => {
    expect(left(resolveSelectors(rows, ["w1", "nope"], undefined))).toMatchObject({ reason: "not_found", selector: "nope" })
    expect(left(resolveSelectors(rows, ["twin"], undefined))).toEqual({
      reason: "ambiguous",
      message: "The label 'twin' matches 2 wallets",
      selector: "twin",
      matches: [
        { id: "w4", address: "11111111111111111111111111111112", label: "twin", chain: "solana" },
        { id: "w5", address: "11111111111111111111111111111113", label: "twin", chain: "solana" }
      ]
    })
    const imported = [...rows, row("imp", { kind: "imported", label: "bot-x", address: "11111111111111111111111111111114", address_key: "11111111111111111111111111111114" })]
    expect(left(resolveSelectors(imported, ["imp"], undefined))).toMatchObject({ reason: "not_tee", walletId: "imp", selector: "imp" })
    // An imported wallet never matches a label prefix (only TEE wallets do).
    expect(ids(resolveSelectors(imported, [], "bot-"))).toEqual(["w1", "w2"])
    const unverified = [...rows, row("unv", { label: "bot-u", authority_status: "pending", address: "11111111111111111111111111111115", address_key: "11111111111111111111111111111115" })]
    expect(left(resolveSelectors(unverified, [], "bot-"))).toMatchObject({ reason: "authority_not_verified", walletId: "unv" })
  })

  it("selects nothing from nothing (the caller refuses an empty rebind)", () => {
    expect(ids(resolveSelectors(rows, [], undefined))).toEqual([])
    expect(ids(resolveSelectors(rows, [], "zzz"))).toEqual([])
  })
})

const NOW = 1_800_000_000_000
const claim = (id: string, more: Partial<ClaimRow> = {}): ClaimRow => ({
  id,
  wallet_id: "w1",
  chain: "solana",
  state: "open",
  expires_at: new Date(NOW + 1),
  tx_expires_at: null,
  signature: null,
  ...more
})

describe("openBuilds", () => {
  it("an open claim holds its wallet until its window ends, exactly at the bound", () => {
    expect(openBuilds([claim("c1", { expires_at: new Date(NOW + 1) })], NOW)).toEqual({ walletIds: ["w1"], retryAfter: NOW + 1 })
    expect(openBuilds([claim("c1", { expires_at: new Date(NOW) })], NOW)).toBeUndefined()
  })

  it("names each held wallet once and retries after the last window", () => {
    const claims = [
      claim("c1", { expires_at: new Date(NOW + 10) }),
      claim("c2", { expires_at: new Date(NOW + 30) }),
      claim("c3", { wallet_id: "w2", expires_at: new Date(NOW + 20) }),
      claim("c4", { wallet_id: "w3", state: "signed", expires_at: new Date(NOW + 99) })
    ]
    expect(openBuilds(claims, NOW)).toEqual({ walletIds: ["w1", "w2"], retryAfter: NOW + 30 })
  })

  it("signed claims are not builds", () => {
    expect(openBuilds([claim("c1", { state: "signed" })], NOW)).toBeUndefined()
  })
})

describe("forwarded claims", () => {
  it("a Solana transaction past its expiry is provably expired, at the bound; before it, or without one, the chain is read", () => {
    expect(forwardedClaimAction(claim("c", { state: "signed", tx_expires_at: new Date(NOW) }), NOW)).toBe("expired")
    expect(forwardedClaimAction(claim("c", { state: "signed", tx_expires_at: new Date(NOW + 1) }), NOW)).toBe("reconcile")
    expect(forwardedClaimAction(claim("c", { state: "signed", tx_expires_at: null }), NOW)).toBe("reconcile")
  })

  it("an EVM (Hood) transaction never provably expires", () => {
    expect(forwardedClaimAction(claim("c", { chain: "evm", state: "signed", tx_expires_at: new Date(NOW - 1) }), NOW)).toBe("reconcile")
  })

  it("pending forwards hold the rebind: `unexpirable` when the first is on EVM, `pending` on Solana", () => {
    expect(forwardsOpen([])).toBeUndefined()
    expect(forwardsOpen([claim("a"), claim("b", { wallet_id: "w2", chain: "evm" }), claim("c")])).toEqual({ reason: "pending", walletIds: ["w1", "w2"] })
    expect(forwardsOpen([claim("b", { chain: "evm" }), claim("a", { wallet_id: "w2" })])).toEqual({ reason: "unexpirable", walletIds: ["w1", "w2"] })
  })
})

describe("staleBindings", () => {
  const byId = new Map([
    ["w1", row("w1", { bound_key_prefix: "aaaa" })],
    ["w2", row("w2", { bound_key_prefix: "bbbb" })]
  ])

  it("passes when every binding is as the preview showed", () => {
    expect(staleBindings(["w1", "w2"], byId, { w1: "aaaa", w2: "bbbb" })).toBeUndefined()
  })

  it("names the changed bindings with their current prefix (null for a wallet that disappeared)", () => {
    expect(staleBindings(["w1", "w2", "w9"], byId, { w1: "aaaa", w2: "cccc", w9: "dddd" })).toEqual({
      walletIds: ["w2", "w9"],
      current: { w2: "bbbb", w9: null }
    })
  })
})

describe("views", () => {
  const key: KeyInfo = {
    keyId: "kid",
    keyPrefix: "prefix01",
    accountId: "acct",
    label: "bot key",
    environment: "production",
    scopes: ["swap:write", "launch:write"],
    revokedAtMs: null,
    expiresAtMs: null,
    paused: true,
    walletScope: "selected",
    spendLimits: [
      { asset: "usdc", maxPerTxRaw: "0" },
      { asset: "sol", maxPerTxRaw: "1" },
      { asset: "eth", maxPerTxRaw: "0" }
    ]
  }

  it("toKey: an asset is trade-ready unless capped at zero; missing caps sorted", () => {
    expect(toKeyView(key, 3)).toEqual({
      keyPrefix: "prefix01",
      label: "bot key",
      paused: true,
      walletScope: "selected",
      tradeReady: { sol: true, usdc: false },
      hoodTradeReady: { eth: false, usdg: true },
      missingCaps: ["eth", "usdc"],
      launchScope: { launchWrite: true, allowLaunchWallets: 3 }
    })
    expect(toKeyView({ ...key, spendLimits: null, scopes: ["swap:write"] }, 0)).toMatchObject({
      tradeReady: { sol: true, usdc: true },
      hoodTradeReady: { eth: true, usdg: true },
      missingCaps: [],
      launchScope: { launchWrite: false, allowLaunchWallets: 0 }
    })
  })

  it("rebound carries auditId only on a commit", () => {
    const r = row("w1", { label: "x", allow_launch: true })
    expect(reboundView(r)).toEqual({ id: "w1", address: SOL_A, label: "x", fromKeyPrefix: "prefix01", allowLaunch: true, chain: "solana" })
    expect(reboundView(r, "rbd_1")).toMatchObject({ auditId: "rbd_1" })
    expect(unchangedView(r)).toEqual({ id: "w1", address: SOL_A, label: "x", allowLaunch: true, chain: "solana" })
  })
})
