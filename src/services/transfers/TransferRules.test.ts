/** The destination rule of the transfer rail (spec document 2, 2.1): own, approved, or refused. */
import { describe, expect, it } from "vitest"
import { classifyDestination, classifyTeeDestination, type DestinationFacts, type TeeDestinationFacts } from "./TransferRules.js"

const base: DestinationFacts = {
  sourceKey: "main",
  destinationKey: "x",
  ownWallets: [
    { addressKey: "linked1", kind: "linked", walletId: "w_l" },
    { addressKey: "tee1", kind: "tee", walletId: "w_t" }
  ],
  approvedId: null
}

describe("classifyDestination", () => {
  it("one of the account's own wallets is own, with its kind and id", () => {
    expect(classifyDestination({ ...base, destinationKey: "linked1" })).toEqual({ _tag: "Allowed", destinationClass: "own", destinationKind: "linked", walletId: "w_l" })
    expect(classifyDestination({ ...base, destinationKey: "tee1" })).toMatchObject({ destinationClass: "own", destinationKind: "tee" })
  })

  it("an approved withdrawal address is approved; an own wallet wins over an approval of the same address", () => {
    expect(classifyDestination({ ...base, approvedId: "wad_1" })).toEqual({ _tag: "Allowed", destinationClass: "approved", destinationKind: "withdrawal_address", walletId: null })
    expect(classifyDestination({ ...base, destinationKey: "linked1", approvedId: "wad_1" })).toMatchObject({ destinationClass: "own" })
  })

  it("refuses an address that is neither own nor approved, and the source itself", () => {
    expect(classifyDestination(base)).toEqual({ _tag: "Refused", reason: "destination_not_allowed" })
    expect(classifyDestination({ ...base, destinationKey: "main", approvedId: "wad_1" })).toEqual({ _tag: "Refused", reason: "same_wallet" })
  })
})

const tee: TeeDestinationFacts = {
  sourceKey: "tee1",
  destinationKey: "x",
  vaultKey: "vault1",
  wallets: [
    { addressKey: "bySession", kind: "linked", walletId: "w_s", linkedBySession: true, trusted: false },
    { addressKey: "byAgent", kind: "imported", walletId: "w_a", linkedBySession: false, trusted: false },
    { addressKey: "trustedAgent", kind: "imported", walletId: "w_t", linkedBySession: false, trusted: true }
  ]
}

describe("classifyTeeDestination (out of the bound TEE wallet)", () => {
  it("the pinned vault is approved, kind vault", () => {
    expect(classifyTeeDestination({ ...tee, destinationKey: "vault1" })).toEqual({ _tag: "Allowed", destinationClass: "approved", destinationKind: "vault", walletId: null })
  })

  it("a wallet the owner linked while signed in, or marked trusted, is own", () => {
    expect(classifyTeeDestination({ ...tee, destinationKey: "bySession" })).toEqual({ _tag: "Allowed", destinationClass: "own", destinationKind: "linked", walletId: "w_s" })
    expect(classifyTeeDestination({ ...tee, destinationKey: "trustedAgent" })).toEqual({ _tag: "Allowed", destinationClass: "own", destinationKind: "imported", walletId: "w_t" })
  })

  it("refuses a wallet an agent key linked and nobody trusted, an unknown address, no vault pinned, and the source itself", () => {
    expect(classifyTeeDestination({ ...tee, destinationKey: "byAgent" })).toEqual({ _tag: "Refused", reason: "destination_not_allowed" })
    expect(classifyTeeDestination(tee)).toEqual({ _tag: "Refused", reason: "destination_not_allowed" })
    expect(classifyTeeDestination({ ...tee, vaultKey: null, destinationKey: "vault1" })).toEqual({ _tag: "Refused", reason: "destination_not_allowed" })
    expect(classifyTeeDestination({ ...tee, destinationKey: "tee1" })).toEqual({ _tag: "Refused", reason: "same_wallet" })
  })
})
