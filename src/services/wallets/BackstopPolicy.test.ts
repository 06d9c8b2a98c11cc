/**
 * The backstop policy on real serialized transactions: Solana v0 and legacy transactions compiled
 * by `@solana/kit` (the same bytes a wallet would be asked to sign), EVM transactions serialized
 * by viem. Accepted and refused shapes sit side by side.
 */
import {
  AccountRole,
  address,
  appendTransactionMessageInstructions,
  type Blockhash,
  compileTransaction,
  createTransactionMessage,
  generateKeyPairSigner,
  getTransactionEncoder,
  type Instruction,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash
} from "@solana/kit"
import { type Hex, parseEther, serializeTransaction } from "viem"
import { describe, expect, it } from "vitest"
import {
  DEFAULT_CEILING_LAMPORTS,
  DEFAULT_CEILING_WEI,
  evaluate,
  evaluateEvm,
  evaluateSolana,
  SYSTEM_PROGRAM,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM
} from "./BackstopPolicy.js"

const rules = { ceilingLamports: DEFAULT_CEILING_LAMPORTS, ceilingWei: DEFAULT_CEILING_WEI }
const BLOCKHASH = "4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn" as Blockhash

const u64 = (n: bigint) => {
  const b = new Uint8Array(8)
  new DataView(b.buffer).setBigUint64(0, n, true)
  return b
}
const cat = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]))

const wire = (payer: string, instructions: ReadonlyArray<Instruction>, version: 0 | "legacy" = 0): Uint8Array => {
  const message = appendTransactionMessageInstructions(
    instructions,
    setTransactionMessageLifetimeUsingBlockhash(
      { blockhash: BLOCKHASH, lastValidBlockHeight: 100n },
      setTransactionMessageFeePayer(address(payer), createTransactionMessage({ version }))
    )
  )
  return new Uint8Array(getTransactionEncoder().encode(compileTransaction(message)))
}

const transfer = (from: string, to: string, lamports: bigint): Instruction => ({
  programAddress: address(SYSTEM_PROGRAM),
  accounts: [
    { address: address(from), role: AccountRole.WRITABLE_SIGNER },
    { address: address(to), role: AccountRole.WRITABLE }
  ],
  data: cat(Uint8Array.of(2, 0, 0, 0), u64(lamports))
})

const tokenIx = (program: string, data: Uint8Array, owner: string, a: string, b: string): Instruction => ({
  programAddress: address(program),
  accounts: [
    { address: address(a), role: AccountRole.WRITABLE },
    { address: address(b), role: AccountRole.READONLY },
    { address: address(owner), role: AccountRole.READONLY_SIGNER }
  ],
  data
})

describe("Solana backstop", async () => {
  const wallet = (await generateKeyPairSigner()).address
  const other = (await generateKeyPairSigner()).address
  const tokenAccount = (await generateKeyPairSigner()).address
  const delegate = (await generateKeyPairSigner()).address

  it("allows transfers up to the ceiling and counts only what leaves the wallet", () => {
    const atCeiling = wire(wallet, [transfer(wallet, other, DEFAULT_CEILING_LAMPORTS - 1n), transfer(wallet, other, 1n)])
    expect(evaluateSolana(rules, atCeiling, wallet)).toEqual({ _tag: "Allow", movedRaw: DEFAULT_CEILING_LAMPORTS })
    // Lamports another signer sends do not count against this wallet.
    const incoming = wire(wallet, [transfer(other, wallet, DEFAULT_CEILING_LAMPORTS * 2n)])
    expect(evaluateSolana(rules, incoming, wallet)).toEqual({ _tag: "Allow", movedRaw: 0n })
  })

  it("denies a transaction moving one lamport over the ceiling, summed across instructions (v0 and legacy)", () => {
    for (const version of [0, "legacy"] as const) {
      const over = wire(wallet, [transfer(wallet, other, DEFAULT_CEILING_LAMPORTS), transfer(wallet, other, 1n)], version)
      expect(evaluateSolana(rules, over, wallet)).toMatchObject({ _tag: "Deny", reason: "ceiling" })
    }
  })

  it("denies CreateAccount funding over the ceiling", () => {
    const create: Instruction = {
      programAddress: address(SYSTEM_PROGRAM),
      accounts: [
        { address: address(wallet), role: AccountRole.WRITABLE_SIGNER },
        { address: address(other), role: AccountRole.WRITABLE_SIGNER }
      ],
      data: cat(Uint8Array.of(0, 0, 0, 0), u64(DEFAULT_CEILING_LAMPORTS + 1n), u64(165n), new Uint8Array(32))
    }
    expect(evaluateSolana(rules, wire(wallet, [create]), wallet)).toMatchObject({ _tag: "Deny", reason: "ceiling" })
  })

  const denied = [
    { name: "Approve", tag: 4, data: cat(Uint8Array.of(4), u64(1n)), shape: "approve" },
    { name: "ApproveChecked", tag: 13, data: cat(Uint8Array.of(13), u64(1n), Uint8Array.of(6)), shape: "approve_checked" },
    { name: "SetAuthority", tag: 6, data: cat(Uint8Array.of(6, 2, 1), new Uint8Array(32)), shape: "set_authority" }
  ]
  for (const program of [TOKEN_PROGRAM, TOKEN_2022_PROGRAM]) {
    for (const d of denied) {
      it(`denies ${d.name} on ${program === TOKEN_PROGRAM ? "Token" : "Token-2022"}, even beside an allowed transfer`, () => {
        const tx = wire(wallet, [transfer(wallet, other, 1n), tokenIx(program, d.data, wallet, tokenAccount, delegate)])
        expect(evaluateSolana(rules, tx, wallet)).toMatchObject({ _tag: "Deny", reason: "denied_instruction", instruction: d.shape, program })
      })
    }
  }

  it("allows other SPL Token instructions (Transfer, TransferChecked, Revoke)", () => {
    const ok = wire(wallet, [
      tokenIx(TOKEN_PROGRAM, cat(Uint8Array.of(3), u64(5n)), wallet, tokenAccount, delegate),
      tokenIx(TOKEN_2022_PROGRAM, cat(Uint8Array.of(12), u64(5n), Uint8Array.of(6)), wallet, tokenAccount, delegate),
      tokenIx(TOKEN_PROGRAM, Uint8Array.of(5), wallet, tokenAccount, delegate)
    ])
    expect(evaluateSolana(rules, ok, wallet)).toEqual({ _tag: "Allow", movedRaw: 0n })
  })

  it("denies bytes that do not decode (fail closed)", () => {
    expect(evaluateSolana(rules, Uint8Array.of(1, 2, 3), wallet)).toMatchObject({ _tag: "Deny", reason: "undecodable" })
    const tx = wire(wallet, [transfer(wallet, other, 1n)])
    expect(evaluateSolana(rules, tx.slice(0, tx.byteLength - 5), wallet)).toMatchObject({ _tag: "Deny", reason: "undecodable" })
  })

  it("applies a lower configured ceiling", () => {
    const tx = wire(wallet, [transfer(wallet, other, 1_001n)])
    expect(evaluate({ ...rules, ceilingLamports: 1_000n }, "solana", tx, wallet)).toMatchObject({ _tag: "Deny", reason: "ceiling" })
    expect(evaluate({ ...rules, ceilingLamports: 1_001n }, "solana", tx, wallet)._tag).toBe("Allow")
  })
})

describe("EVM backstop", () => {
  const tx = (value: bigint): Hex =>
    serializeTransaction({ chainId: 31337, type: "eip1559", nonce: 0, to: "0x000000000000000000000000000000000000dEaD", value, gas: 21_000n, maxFeePerGas: 1n, maxPriorityFeePerGas: 1n })

  it("allows value up to 10 ETH and denies one wei more", () => {
    expect(evaluateEvm(rules, tx(parseEther("10")))).toEqual({ _tag: "Allow", movedRaw: parseEther("10") })
    expect(evaluateEvm(rules, tx(parseEther("10") + 1n))).toMatchObject({ _tag: "Deny", reason: "ceiling" })
  })

  it("denies bytes that do not decode", () => {
    expect(evaluateEvm(rules, "0x02ff")).toMatchObject({ _tag: "Deny", reason: "undecodable" })
  })
})
