/**
 * The wallet rows of the one error table on the wire, for the refusals the HTTP suites cannot
 * reach without a broken provider or database (a policy denial without a rule, a provider that
 * lost the wallet or its key, storage) and for the spec words one domain reason stands for. The
 * rest is asserted over HTTP in `test/integration/wallets.test.ts` and `wallets.rebind.test.ts`.
 */
import { describe, expect, it } from "vitest"
import { payerError, rebindError, signClaimError, walletError } from "../src/services/wallets/WalletError.js"
import { type ServiceFailure, toApiError } from "./ErrorTable.js"
import { errorReply } from "./Http.js"

const wire = (e: ServiceFailure) => {
  const reply = errorReply(toApiError(e))
  return { status: reply.status, error: JSON.parse(String(reply.body)).error as Record<string, unknown> }
}

describe("wallet rows on the wire", () => {
  it("an unknown wallet is 404 naming id, for the row routes and the sign relay alike", () => {
    expect(wire(walletError("not_found", "No wallet w on this account"))).toEqual({
      status: 404,
      error: { code: "VALIDATION_FAILED", message: "No wallet w on this account", field: "id", retryable: false }
    })
    expect(wire(signClaimError("wallet_not_found", "No active wallet w on this account"))).toMatchObject({ status: 404, error: { field: "id" } })
  })

  it("one spec word per situation: the domain reason picks the code, the row writes the spec's reason and field", () => {
    expect(wire(walletError("key_test", "A test key cannot hold TEE wallets")).error).toMatchObject({ code: "VALIDATION_FAILED", field: "keyPrefix", reason: "test_key" })
    expect(wire(rebindError("target_test_key", "x")).error).toMatchObject({ code: "REBIND_TARGET_INVALID", reason: "test_key" })
    expect(wire(rebindError("wallet_not_found", "x", { details: { walletId: "w1" } })).error).toMatchObject({ code: "REBIND_WALLET_INVALID", reason: "not_found", walletId: "w1" })
    expect(wire(payerError("not_found", "x")).error).toMatchObject({ code: "VALIDATION_FAILED", field: "linkedWalletId", reason: "not_found" })
    expect(wire(walletError("import_not_opened", "x")).error).toMatchObject({ field: "ciphertext", reason: "not_opened" })
  })

  it("the provider's refusals to sign: a policy denial names its rule (or `policy`), a lost wallet is UNRECOGNIZED_TRANSACTION, a lost key INTERNAL", () => {
    expect(wire(signClaimError("policy_denied", "denied", { details: { reason: "denied_instruction", instruction: "approve" } }))).toMatchObject({
      status: 403,
      error: { code: "SPEND_POLICY_DENIED", reason: "denied_instruction", instruction: "approve" }
    })
    expect(wire(signClaimError("policy_denied", "denied")).error).toMatchObject({ code: "SPEND_POLICY_DENIED", reason: "policy" })
    expect(wire(signClaimError("provider_wallet_not_found", "gone"))).toMatchObject({ status: 403, error: { code: "UNRECOGNIZED_TRANSACTION", reason: "not_found" } })
    expect(wire(signClaimError("key_unavailable", "key unavailable"))).toMatchObject({ status: 500, error: { code: "INTERNAL", retryable: true } })
    expect(wire(signClaimError("not_delegated", "x"))).toMatchObject({ status: 403, error: { code: "AGENT_WALLET_NOT_DELEGATED", retryable: true } })
  })

  it("rebind holds: a build window is retryable with retryAfter, a Hood forward is unexpirable without a retry hint, a failed chain read 503", () => {
    expect(wire(rebindError("build_open", "x", { retryable: true, details: { walletIds: ["w1"], retryAfter: 5 } }))).toEqual({
      status: 409,
      error: { code: "REBIND_BUILD_OPEN", message: "x", retryable: true, walletIds: ["w1"], retryAfter: 5 }
    })
    const forward = wire(rebindError("forward_unexpirable", "x", { details: { walletIds: ["w1"] } }))
    expect(forward).toMatchObject({ status: 409, error: { code: "REBIND_FORWARD_OPEN", reason: "unexpirable", walletIds: ["w1"] } })
    expect(forward.error).not.toHaveProperty("retryable")
    expect(wire(rebindError("reconcile_incomplete", "x", { retryable: true }))).toMatchObject({ status: 503, error: { code: "REBIND_RECONCILE_INCOMPLETE", retryable: true } })
  })

  it("storage anywhere in the service: 500 INTERNAL, nothing but the message", () => {
    expect(wire(walletError("storage", "Internal error; nothing was recorded"))).toEqual({
      status: 500,
      error: { code: "INTERNAL", message: "Internal error; nothing was recorded", retryable: true }
    })
  })
})
