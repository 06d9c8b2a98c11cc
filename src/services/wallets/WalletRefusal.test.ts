/**
 * The one reading of a wallet provider's refusal: the wallet-access answers pass through, every
 * failure to sign is one retryable `signing_failed` keeping the provider's cause, and the launch
 * paths of both chains answer each provider reason with the same code and retryable flag.
 */
import { describe, expect, it } from "vitest"
import { fromWalletProvider as hoodFailure } from "../launch/HoodHeadlessLaunch.js"
import { errorCodeOf } from "../../../api/LaunchCodes.js"
import { fromHood, fromProvider, fromSolana } from "../launch/LaunchError.js"
import { fromWalletProvider as solanaFailure } from "../launch/SolanaLaunchError.js"
import { WalletProviderError } from "./WalletProvider.js"
import { isNoAgentAccess, walletRefusal, WalletRefusalReasons } from "./WalletRefusal.js"

const providerReasons = WalletProviderError.fields.reason.literals

describe("walletRefusal", () => {
  it("passes the wallet-access answers through with their retryable flag and the provider's message", () => {
    const expected = { not_embedded: false, not_delegated: true, delegation_revoked: true, policy_denied: false } as const
    for (const [reason, retryable] of Object.entries(expected)) {
      const r = walletRefusal(new WalletProviderError({ reason: reason as keyof typeof expected, message: "m" }))
      expect(r).toEqual({ reason, message: "m", retryable })
    }
  })

  it("a policy denial names its rule and instruction", () => {
    const r = walletRefusal(new WalletProviderError({ reason: "policy_denied", message: "m", rule: "denied_instruction", instruction: "SetAuthority" }))
    expect(r).toEqual({ reason: "policy_denied", message: "m", retryable: false, rule: "denied_instruction", instruction: "SetAuthority" })
  })

  it("every failure to sign is one retryable signing_failed that keeps the provider's cause", () => {
    for (const cause of ["key_unavailable", "not_a_signer", "not_found", "bad_transaction"] as const) {
      expect(walletRefusal(new WalletProviderError({ reason: cause, message: "m" }))).toEqual({
        reason: "signing_failed",
        cause,
        message: `${cause}: m`,
        retryable: true
      })
    }
  })

  it("gives every provider reason a refusal; only the three access answers mean no agent access", () => {
    const seen = new Set(providerReasons.map((reason) => walletRefusal(new WalletProviderError({ reason, message: "m" })).reason))
    expect([...seen].sort()).toEqual([...WalletRefusalReasons].sort())
    const noAccess = providerReasons.filter((reason) => isNoAgentAccess(walletRefusal(new WalletProviderError({ reason, message: "m" }))))
    expect(noAccess).toEqual(["not_embedded", "not_delegated", "delegation_revoked"])
  })

  it("answers the same provider failure the same on every launch path and chain (code, retryable)", () => {
    for (const reason of providerReasons) {
      const e = new WalletProviderError({ reason, message: "m" })
      const solana = fromSolana(solanaFailure(e))
      const hood = fromHood(hoodFailure(e))
      const headless = fromProvider(e)
      const answers = [solana, hood, headless].map((x) => ({ code: errorCodeOf(x), retryable: x.retryable }))
      expect(answers[1], `hood ${reason}`).toEqual(answers[0])
      expect(answers[2], `headless ${reason}`).toEqual(answers[0])
      expect(solana.retryable, reason).toBe(walletRefusal(e).retryable)
    }
    const outage = fromHood(hoodFailure(new WalletProviderError({ reason: "key_unavailable", message: "m" })))
    expect([errorCodeOf(outage), outage.retryable]).toEqual(["LAUNCH_FAILED", true])
  })
})
