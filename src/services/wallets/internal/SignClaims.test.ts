/**
 * The sign relay's pure rules: the payer rules of a self-signed build (each refusal beside the
 * acceptance), what a claim binds (Solana message bytes, so co-signatures do not break it), a
 * claim's transaction expiry, and the scopes a key must still hold. The relay itself over
 * PostgreSQL and HTTP: `test/integration/wallets.test.ts`.
 */
import {
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  getTransactionDecoder,
  getTransactionEncoder,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash
} from "@solana/kit"
import { describe, expect, it } from "vitest"
import type { Principal } from "../Principal.js"
import { claimedMessage, claimTxExpiresAtMs, missingScopes, payerProblem } from "./SignClaims.js"
import { WALLET_ROW_ADDRESS, walletRow } from "../../../../test/support/walletRows.js"
import type { WalletRow } from "./WalletRows.js"

const PAYER = WALLET_ROW_ADDRESS

const row = (more: Partial<WalletRow> = {}) => walletRow("w1", { allow_launch: true, ...more })

describe("payerProblem", () => {
  it("accepts a bound TEE wallet for spend and, with allowLaunch, for launch; an imported wallet for either", () => {
    expect(payerProblem(row(), "kid-1", "solana", "spend")).toBeUndefined()
    expect(payerProblem(row(), "kid-1", "solana", "launch")).toBeUndefined()
    expect(payerProblem(row({ allow_launch: false }), "kid-1", "solana", "spend")).toBeUndefined()
    expect(payerProblem(row({ kind: "imported", bound_key_id: null }), "kid-9", "solana", "launch")).toBeUndefined()
  })

  it("refuses in the spec's order: missing, revoked, attribution-only, other chain, another key's TEE wallet, launch not allowed", () => {
    const reason = (...args: Parameters<typeof payerProblem>) => payerProblem(...args)?.reason
    expect(reason(undefined, "kid-1", "solana", "spend")).toBe("not_found")
    expect(reason(row({ revoked_at: new Date(1), kind: "linked" }), "kid-1", "solana", "spend")).toBe("revoked")
    expect(reason(row({ kind: "linked", chain: "evm" }), "kid-1", "solana", "spend")).toBe("wallet_not_signable")
    expect(reason(row({ chain: "evm", bound_key_id: "kid-2" }), "kid-1", "solana", "spend")).toBe("chain_mismatch")
    expect(reason(row({ bound_key_id: "kid-2", allow_launch: false }), "kid-1", "solana", "launch")).toBe("key_not_bound")
    expect(reason(row(), null, "solana", "spend")).toBe("key_not_bound")
    expect(reason(row({ allow_launch: false }), "kid-1", "solana", "launch")).toBe("launch_not_allowed")
  })
})

describe("claimedMessage", () => {
  const tx = new Uint8Array(
    getTransactionEncoder().encode(
      compileTransaction(
        appendTransactionMessageInstructions(
          [],
          setTransactionMessageLifetimeUsingBlockhash(
            { blockhash: "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash, lastValidBlockHeight: 10n },
            setTransactionMessageFeePayer(address(PAYER), createTransactionMessage({ version: 0 }))
          )
        )
      )
    )
  )

  it("binds a Solana transaction's message bytes, so a filled signature slot still matches", () => {
    const message = claimedMessage("solana", tx)
    expect(message).toEqual(new Uint8Array(getTransactionDecoder().decode(tx).messageBytes))
    const cosigned = tx.slice()
    cosigned.fill(7, 1, 65) // the one signature slot follows the compact length byte
    expect(claimedMessage("solana", cosigned)).toEqual(message)
  })

  it("binds an EVM transaction's bytes as they are; Solana bytes that do not decode bind nothing", () => {
    const bytes = Uint8Array.from([1, 2, 3])
    expect(claimedMessage("evm", bytes)).toBe(bytes)
    expect(claimedMessage("solana", bytes)).toBeUndefined()
  })
})

describe("claimTxExpiresAtMs", () => {
  it("the builder's figure when given (null: never provable), else the claim's own expiry on Solana and none on EVM", () => {
    expect(claimTxExpiresAtMs("solana", 5, 100)).toBe(5)
    expect(claimTxExpiresAtMs("solana", null, 100)).toBeNull()
    expect(claimTxExpiresAtMs("solana", undefined, 100)).toBe(100)
    expect(claimTxExpiresAtMs("evm", undefined, 100)).toBeNull()
    expect(claimTxExpiresAtMs("evm", 7, 100)).toBe(7)
  })
})

describe("missingScopes", () => {
  const base = { accountId: "a", plan: "max", keyId: null, keyPrefix: null, environment: null, embeddedWallet: null, devicePrefix: null } as const
  const key: Principal = { ...base, credential: "agentKey", scopes: ["swap:write"] }
  const owner: Principal = { ...base, credential: "session", scopes: [] }

  it("names the required scopes a key no longer holds; an owner holds them all", () => {
    expect(missingScopes(key, [])).toEqual([])
    expect(missingScopes(key, ["swap:write"])).toEqual([])
    expect(missingScopes(key, ["swap:write", "transfer:bound", "transfer:write"])).toEqual(["transfer:bound", "transfer:write"])
    expect(missingScopes(owner, ["transfer:bound"])).toEqual([])
  })
})
