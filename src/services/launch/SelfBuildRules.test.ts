/**
 * Spec 3.3 (Solana repeat self-signed build) and 3.4 (Hood failure after createCurve), one named
 * test per row, plus a property: every input has exactly one answer and proof of death needs all
 * three facts.
 *
 *   3.3  earlier build state                                  → answer
 *        landed (account at mint) ........................... "landed: prior_attempt_on_chain with the mint"
 *        can still land ..................................... "can still land: the same transaction"
 *        can still land, swept ............................... "swept but can still land: in flight, retryAfter at expiry"
 *        can still land, never stored ........................ "not stored: in flight until the longest blockhash life"
 *        proven dead ........................................ "proven dead: a new transaction"
 *        past expiry, node not caught up ..................... "past expiry on a lagging node: not proof"
 *        chain unreadable ................................... "unreadable: chain_read_failed"
 *        TEE signed attempt that can still land .............. "TEE: no rebuild while a signed attempt can land"
 *   3.4  confirm failed, fee landed / not required ........... "confirm failed: confirm again"
 *        fee transfer, outcome unknown ....................... "fee unknown: never pay again"
 *        fee transfer not broadcast / reverted ............... "fee missing: pay only the missing fee"
 *        confirm without a verifying fee hash ................ "FEE_LEG_MISSING unless the fee is zero"
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BLOCKHASH_LIFETIME_MS_MAX, type ChainView, type EarlierBuild, feeLegSatisfied, hoodRecovery, repeatBuild } from "./SelfBuildRules.js"

const NOW = 1_800_000_000_000
const SLOT = 400
const earlier = (o: Partial<EarlierBuild> = {}): EarlierBuild => ({
  stored: true,
  swept: false,
  lastValidBlockHeight: 1_000n,
  builtAtMs: NOW - 10_000,
  mint: "Mint1111",
  payer: "linked",
  signed: true,
  ...o
})
const read = (o: Partial<Extract<ChainView, { _tag: "Read" }>> = {}): ChainView => ({ _tag: "Read", mintAccountExists: false, blockHeight: 990n, caughtUp: true, ...o })

describe("3.3 repeat Solana self-signed build", () => {
  it("landed: prior_attempt_on_chain with the mint", () => {
    expect(repeatBuild(earlier(), read({ mintAccountExists: true }), NOW, SLOT)).toEqual({ _tag: "OnChain", mint: "Mint1111" })
    // Even when swept or past expiry: the chain decides.
    expect(repeatBuild(earlier({ swept: true }), read({ mintAccountExists: true, blockHeight: 2_000n }), NOW, SLOT)._tag).toBe("OnChain")
  })
  it("can still land: the same transaction", () => {
    expect(repeatBuild(earlier(), read({ blockHeight: 1_000n }), NOW, SLOT)).toEqual({ _tag: "SameTransaction" })
    expect(repeatBuild(earlier({ signed: false, payer: "tee" }), read(), NOW, SLOT)).toEqual({ _tag: "SameTransaction" })
  })
  it("swept but can still land: in flight, retryAfter at expiry", () => {
    expect(repeatBuild(earlier({ swept: true }), read({ blockHeight: 990n }), NOW, SLOT)).toEqual({ _tag: "InFlight", retryAfterMs: NOW + 11 * SLOT })
  })
  it("not stored: in flight until the longest blockhash life", () => {
    const e = earlier({ stored: false, lastValidBlockHeight: null })
    expect(repeatBuild(e, read(), NOW, SLOT)).toEqual({ _tag: "InFlight", retryAfterMs: e.builtAtMs + BLOCKHASH_LIFETIME_MS_MAX })
    expect(repeatBuild(e, read(), e.builtAtMs + BLOCKHASH_LIFETIME_MS_MAX, SLOT)).toEqual({ _tag: "Rebuild" })
  })
  it("proven dead: a new transaction", () => {
    expect(repeatBuild(earlier(), read({ blockHeight: 1_001n }), NOW, SLOT)).toEqual({ _tag: "Rebuild" })
    expect(repeatBuild(earlier({ swept: true }), read({ blockHeight: 5_000n }), NOW, SLOT)).toEqual({ _tag: "Rebuild" })
  })
  it("past expiry on a lagging node: not proof", () => {
    expect(repeatBuild(earlier(), read({ blockHeight: 1_001n, caughtUp: false }), NOW, SLOT)).toEqual({ _tag: "InFlight", retryAfterMs: NOW + SLOT })
  })
  it("unreadable: chain_read_failed", () => {
    expect(repeatBuild(earlier(), { _tag: "Unreadable" }, NOW, SLOT)).toEqual({ _tag: "ChainReadFailed" })
  })
  it("TEE: no rebuild while a signed attempt can land", () => {
    expect(repeatBuild(earlier({ payer: "tee", signed: true }), read(), NOW, SLOT)._tag).toBe("InFlight")
    expect(repeatBuild(earlier({ payer: "tee", signed: true }), read({ blockHeight: 1_001n }), NOW, SLOT)._tag).toBe("Rebuild")
  })
  it("property: a rebuild only on proof of death; never the same transaction once expired or swept", () => {
    fc.assert(
      fc.property(
        fc.record({
          stored: fc.boolean(),
          swept: fc.boolean(),
          lvbh: fc.bigInt({ min: 0n, max: 2_000n }),
          payer: fc.constantFrom<"linked" | "tee">("linked", "tee"),
          signed: fc.boolean(),
          ageMs: fc.integer({ min: 0, max: 200_000 })
        }),
        fc.oneof(
          fc.constant<ChainView>({ _tag: "Unreadable" }),
          fc.record({ mintAccountExists: fc.boolean(), blockHeight: fc.bigInt({ min: 0n, max: 3_000n }), caughtUp: fc.boolean() }).map((r): ChainView => ({ _tag: "Read", ...r }))
        ),
        (b, chain) => {
          const e = earlier({ stored: b.stored, swept: b.swept, lastValidBlockHeight: b.stored ? b.lvbh : null, payer: b.payer, signed: b.signed, builtAtMs: NOW - b.ageMs })
          const answer = repeatBuild(e, chain, NOW, SLOT)
          if (answer._tag === "Rebuild") {
            expect(chain._tag === "Read" && !chain.mintAccountExists && chain.caughtUp).toBe(true)
            if (chain._tag === "Read" && b.stored) expect(chain.blockHeight > b.lvbh).toBe(true)
          }
          if (answer._tag === "SameTransaction") {
            expect(b.swept).toBe(false)
            expect(chain._tag === "Read" && b.stored && chain.blockHeight <= b.lvbh).toBe(true)
          }
          if (answer._tag === "InFlight") expect(answer.retryAfterMs).toBeGreaterThan(NOW - 1)
        }
      ),
      { numRuns: 2_000 }
    )
  })
})

describe("3.4 Hood failure after createCurve landed", () => {
  it("confirm failed: confirm again", () => {
    expect(hoodRecovery("confirm", "landed")).toEqual({ _tag: "ConfirmAgain" })
    expect(hoodRecovery("confirm", "not_required")).toEqual({ _tag: "ConfirmAgain" })
  })
  it("fee unknown: never pay again", () => {
    expect(hoodRecovery("fee_transfer", "unknown")).toEqual({ _tag: "FindFeeThenConfirm" })
  })
  it("fee missing: pay only the missing fee", () => {
    expect(hoodRecovery("fee_transfer", "not_broadcast")).toEqual({ _tag: "PayMissingFeeThenConfirm" })
    expect(hoodRecovery("fee_transfer", "reverted")).toEqual({ _tag: "PayMissingFeeThenConfirm" })
  })
  it("FEE_LEG_MISSING unless the fee is zero", () => {
    expect(feeLegSatisfied(0n, null)).toBe(true)
    expect(feeLegSatisfied(10n, null)).toBe(false)
    expect(feeLegSatisfied(10n, false)).toBe(false)
    expect(feeLegSatisfied(10n, true)).toBe(true)
  })
})
