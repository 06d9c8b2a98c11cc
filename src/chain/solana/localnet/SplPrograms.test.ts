import { AccountRole, generateKeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import {
  findAssociatedTokenAddress,
  getBurnInstruction,
  getCloseAccountInstruction,
  getCreateAccountInstruction,
  getCreateAssociatedTokenInstruction,
  getInitializeAccount3Instruction,
  getInitializeMint2Instruction,
  getMintToInstruction,
  getSyncNativeInstruction,
  getTokenTransferCheckedInstruction,
  getTokenTransferInstruction,
  getTransferSolInstruction
} from "../client/SplInstructions.js"
import { decodeSplMint } from "../program/accounts/SplMint.js"
import { decodeSplTokenAccount } from "../program/accounts/SplTokenAccount.js"
import { findAssociatedTokenAddressSync } from "../program/Pda.js"
import { TOKEN_PROGRAM_ID, WSOL_MINT_ADDRESS } from "../program/ProgramIds.js"
import { Ledger, minimumBalanceForRentExemption } from "./Ledger.js"
import { ataOf, expectOk, send, tokenBalance } from "./testkit.js"

const setup = async () => {
  const ledger = new Ledger()
  const payer = await devSigner(0)
  const alice = await devSigner(1)
  const bob = await generateKeyPairSigner()
  const mint = await generateKeyPairSigner()
  expectOk(
    ledger,
    await send(ledger, payer, [
      getCreateAccountInstruction({ payer, newAccount: mint, lamports: minimumBalanceForRentExemption(82), space: 82, owner: TOKEN_PROGRAM_ID }),
      getInitializeMint2Instruction({ mint: mint.address, decimals: 6, mintAuthority: payer.address })
    ])
  )
  return { ledger, payer, alice, bob, mint: mint.address }
}

describe("System program", () => {
  it("creates an account with space and an owner in one instruction", async () => {
    const ledger = new Ledger()
    const payer = await devSigner(0)
    const account = await generateKeyPairSigner()
    const lamports = minimumBalanceForRentExemption(10)
    expectOk(ledger, await send(ledger, payer, [getCreateAccountInstruction({ payer, newAccount: account, lamports, space: 10, owner: TOKEN_PROGRAM_ID })]))
    expect(ledger.getAccount(account.address)).toMatchObject({ lamports, owner: TOKEN_PROGRAM_ID, executable: false })
    // A second CreateAccount at the same address: AccountAlreadyInUse (Custom 0). A new blockhash,
    // or the identical transaction would be refused as AlreadyProcessed.
    ledger.advanceSlot()
    const again = await send(ledger, payer, [getCreateAccountInstruction({ payer, newAccount: account, lamports, space: 10, owner: TOKEN_PROGRAM_ID })])
    expect(again).toMatchObject({ _tag: "Landed", err: { InstructionError: [0, { Custom: 0 }] } })
  })

  it("refuses a transfer from an account that did not sign", async () => {
    const ledger = new Ledger()
    const payer = await devSigner(0)
    const alice = await devSigner(1)
    const ix = getTransferSolInstruction({ from: alice.address, to: payer.address, lamports: 1n })
    // The account is passed writable but not as a signer of the message.
    const unsigned = { ...ix, accounts: [{ address: alice.address, role: AccountRole.WRITABLE }, ...(ix.accounts ?? []).slice(1)] }
    const r = await send(ledger, payer, [unsigned])
    expect(r).toMatchObject({ _tag: "Landed", err: { InstructionError: [0, "MissingRequiredSignature"] } })
  })
})

describe("SPL Token and Associated Token Account programs", () => {
  it("initializes a mint with the real 82-byte layout", async () => {
    const { ledger, payer, mint } = await setup()
    const m = ledger.getAccount(mint)!
    expect(m.owner).toBe(TOKEN_PROGRAM_ID)
    expect(m.data.length).toBe(82)
    expect(decodeSplMint(m.data)).toEqual({ mintAuthority: payer.address, supply: 0n, decimals: 6, freezeAuthority: null })
  })

  it("derives ATAs as kit does and creates them (Create, then CreateIdempotent)", async () => {
    const { ledger, payer, alice, mint } = await setup()
    const ata = await findAssociatedTokenAddress(alice.address, mint)
    expect(findAssociatedTokenAddressSync(alice.address, mint).address).toBe(ata)
    const create = (idempotent: boolean) => getCreateAssociatedTokenInstruction({ payer, ata, owner: alice.address, mint, idempotent })
    expectOk(ledger, await send(ledger, payer, [create(false)]))
    ledger.advanceSlot()
    const account = ledger.getAccount(ata)!
    expect(account.data.length).toBe(165)
    expect(account.lamports).toBe(minimumBalanceForRentExemption(165))
    expect(decodeSplTokenAccount(account.data)).toMatchObject({ mint, owner: alice.address, amount: 0n, state: "initialized", isNative: null })
    expect(await send(ledger, payer, [create(false)])).toMatchObject({ err: { InstructionError: [0, "IllegalOwner"] } })
    expectOk(ledger, await send(ledger, payer, [create(true)]))
    // A wrong ATA address fails the seed check.
    const wrong = getCreateAssociatedTokenInstruction({ payer, ata: ataOf(payer.address, mint), owner: alice.address, mint })
    expect(await send(ledger, payer, [wrong])).toMatchObject({ err: { InstructionError: [0, "InvalidSeeds"] } })
  })

  it("mints, transfers (plain and checked), burns and closes with the real error codes", async () => {
    const { ledger, payer, alice, bob, mint } = await setup()
    const aliceAta = ataOf(alice.address, mint)
    const bobAta = ataOf(bob.address, mint)
    expectOk(
      ledger,
      await send(ledger, payer, [
        getCreateAssociatedTokenInstruction({ payer, ata: aliceAta, owner: alice.address, mint }),
        getCreateAssociatedTokenInstruction({ payer, ata: bobAta, owner: bob.address, mint }),
        getMintToInstruction({ mint, destination: aliceAta, authority: payer, amount: 1_000_000n })
      ])
    )
    expect(tokenBalance(ledger, aliceAta)).toBe(1_000_000n)
    expect(decodeSplMint(ledger.getAccount(mint)!.data)?.supply).toBe(1_000_000n)

    expectOk(ledger, await send(ledger, payer, [getTokenTransferInstruction({ source: aliceAta, destination: bobAta, authority: alice, amount: 300_000n })]))
    expectOk(
      ledger,
      await send(ledger, payer, [getTokenTransferCheckedInstruction({ source: aliceAta, mint, destination: bobAta, authority: alice, amount: 1n, decimals: 6 })])
    )
    expect([tokenBalance(ledger, aliceAta), tokenBalance(ledger, bobAta)]).toEqual([699_999n, 300_001n])

    const refused = async (ix: Parameters<typeof send>[2][number], code: number) =>
      expect(await send(ledger, payer, [ix])).toMatchObject({ _tag: "Landed", err: { InstructionError: [0, { Custom: code }] } })
    await refused(getTokenTransferInstruction({ source: aliceAta, destination: bobAta, authority: alice, amount: 10_000_000n }), 1) // InsufficientFunds
    await refused(getTokenTransferInstruction({ source: aliceAta, destination: bobAta, authority: payer, amount: 1n }), 4) // OwnerMismatch
    await refused(getTokenTransferCheckedInstruction({ source: aliceAta, mint, destination: bobAta, authority: alice, amount: 1n, decimals: 9 }), 18)
    await refused(getMintToInstruction({ mint, destination: aliceAta, authority: alice, amount: 1n }), 4)
    await refused(getCloseAccountInstruction({ account: aliceAta, destination: alice.address, authority: alice }), 11) // NonNativeHasBalance

    expectOk(ledger, await send(ledger, payer, [getBurnInstruction({ account: aliceAta, mint, authority: alice, amount: 699_999n })]))
    expect(decodeSplMint(ledger.getAccount(mint)!.data)?.supply).toBe(300_001n)
    const aliceBefore = ledger.getBalance(alice.address)
    ledger.advanceSlot() // the refused close above had this exact signature
    expectOk(ledger, await send(ledger, payer, [getCloseAccountInstruction({ account: aliceAta, destination: alice.address, authority: alice })]))
    expect(ledger.getAccount(aliceAta)).toBeUndefined()
    expect(ledger.getBalance(alice.address)).toBe(aliceBefore + minimumBalanceForRentExemption(165))
  })

  it("initializes a token account at a fresh keypair with InitializeAccount3", async () => {
    const { ledger, payer, alice, mint } = await setup()
    const account = await generateKeyPairSigner()
    expectOk(
      ledger,
      await send(ledger, payer, [
        getCreateAccountInstruction({ payer, newAccount: account, lamports: minimumBalanceForRentExemption(165), space: 165, owner: TOKEN_PROGRAM_ID }),
        getInitializeAccount3Instruction({ account: account.address, mint, owner: alice.address })
      ])
    )
    expect(decodeSplTokenAccount(ledger.getAccount(account.address)!.data)).toMatchObject({ mint, owner: alice.address })
  })

  it("wraps SOL: native ATA, SyncNative, token transfer moves lamports, close unwraps", async () => {
    const { ledger, payer, alice, bob } = await setup()
    const aliceW = ataOf(alice.address, WSOL_MINT_ADDRESS)
    const bobW = ataOf(bob.address, WSOL_MINT_ADDRESS)
    const reserve = minimumBalanceForRentExemption(165)
    expectOk(
      ledger,
      await send(ledger, payer, [
        getCreateAssociatedTokenInstruction({ payer, ata: aliceW, owner: alice.address, mint: WSOL_MINT_ADDRESS }),
        getCreateAssociatedTokenInstruction({ payer, ata: bobW, owner: bob.address, mint: WSOL_MINT_ADDRESS }),
        getTransferSolInstruction({ from: alice, to: aliceW, lamports: 5_000_000_000n }),
        getSyncNativeInstruction({ account: aliceW })
      ])
    )
    expect(decodeSplTokenAccount(ledger.getAccount(aliceW)!.data)).toMatchObject({ amount: 5_000_000_000n, isNative: reserve })
    expectOk(ledger, await send(ledger, payer, [getTokenTransferInstruction({ source: aliceW, destination: bobW, authority: alice, amount: 2_000_000_000n })]))
    expect(ledger.getBalance(aliceW)).toBe(reserve + 3_000_000_000n)
    expect(ledger.getBalance(bobW)).toBe(reserve + 2_000_000_000n)
    expect(tokenBalance(ledger, bobW)).toBe(2_000_000_000n)
    const before = ledger.getBalance(bob.address)
    expectOk(ledger, await send(ledger, payer, [getCloseAccountInstruction({ account: bobW, destination: bob.address, authority: bob })]))
    expect(ledger.getBalance(bob.address)).toBe(before + reserve + 2_000_000_000n)
    const r = await send(ledger, payer, [getMintToInstruction({ mint: WSOL_MINT_ADDRESS, destination: aliceW, authority: payer, amount: 1n })])
    expect(r).toMatchObject({ err: { InstructionError: [0, { Custom: 10 }] } }) // NativeNotSupported
  })

  it("records pre/post token balances with mint decimals", async () => {
    const { ledger, payer, alice, mint } = await setup()
    const aliceAta = ataOf(alice.address, mint)
    const r = expectOk(
      ledger,
      await send(ledger, payer, [
        getCreateAssociatedTokenInstruction({ payer, ata: aliceAta, owner: alice.address, mint }),
        getMintToInstruction({ mint, destination: aliceAta, authority: payer, amount: 42n })
      ])
    )
    const tx = ledger.getTransaction(r.signature)!
    expect(tx.preTokenBalances).toEqual([])
    expect(tx.postTokenBalances).toEqual([
      { accountIndex: tx.accountKeys.indexOf(aliceAta), mint, owner: alice.address, programId: TOKEN_PROGRAM_ID, amount: 42n, decimals: 6 }
    ])
    expect(tx.innerInstructions[0]?.instructions.map((i) => [tx.accountKeys[i.programIdIndex], i.stackHeight])).toEqual([
      ["11111111111111111111111111111111", 2],
      [TOKEN_PROGRAM_ID, 2]
    ])
  })
})
