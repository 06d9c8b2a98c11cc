import {
  createNoopSigner,
  generateKeyPairSigner,
  getTransactionDecoder,
  getTransactionEncoder,
  partiallySignTransactionMessageWithSigners,
  signBytes,
} from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import { getCreateAccountInstruction, getTransferSolInstruction } from "../client/SplInstructions.js"
import { buildTransactionMessage } from "../client/Transactions.js"
import { decodeSplTokenAccount } from "../program/accounts/SplTokenAccount.js"
import { STAKED_SVC_MINT_ADDRESS, SVC_MINT_ADDRESS, SYSTEM_PROGRAM_ID, USDC_MINT_ADDRESS } from "../program/ProgramIds.js"
import { DEV_ADDRESSES, FAUCET_ADDRESS } from "./DevKeys.js"
import { Ledger, minimumBalanceForRentExemption } from "./Ledger.js"
import { ataOf, expectOk, send, signInstructions } from "./testkit.js"

const SOL = 1_000_000_000n
const RENT0 = minimumBalanceForRentExemption(0)
/** In a v0 transfer the last byte counts lookup tables; the 8 before it are the lamports. */
const LAMPORTS_LOW_BYTE = (wire: Uint8Array) => wire.length - 9

const setup = async (options: ConstructorParameters<typeof Ledger>[0] = {}) => {
  const ledger = new Ledger(options)
  const payer = await devSigner(0)
  const other = await devSigner(1)
  const fresh = await generateKeyPairSigner()
  return { ledger, payer, other, fresh }
}

describe("Ledger: transactions in", () => {
  it("lands kit-built legacy and v0 transfers and charges 5,000 lamports per signature", async () => {
    const { ledger, payer, fresh } = await setup()
    const before = ledger.getBalance(payer.address)
    for (const version of ["legacy", 0] as const) {
      const r = expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })], { version }))
      expect(ledger.getTransaction(r.signature)?.version).toBe(version)
      expect(ledger.getTransaction(r.signature)?.fee).toBe(5_000n)
    }
    expect(ledger.getBalance(fresh.address)).toBe(2n * SOL)
    expect(ledger.getBalance(payer.address)).toBe(before - 2n * SOL - 10_000n)
  })

  it("charges per signature and adds the priority fee (ceil(price × limit / 10^6))", async () => {
    const { ledger, payer, other, fresh } = await setup()
    const ix = getTransferSolInstruction({ from: other, to: fresh.address, lamports: SOL })
    const r = expectOk(ledger, await send(ledger, payer, [ix], { computeUnitLimit: 300_001, computeUnitPriceMicroLamports: 1_000n }))
    const tx = ledger.getTransaction(r.signature)!
    expect(tx.header.numRequiredSignatures).toBe(2)
    expect(tx.fee).toBe(10_000n + 301n) // 1000 × 300001 / 10^6 = 300.001 → 301
    expect(tx.postBalances[0]).toBe(tx.preBalances[0]! - tx.fee)
  })

  it("refuses a tampered byte, a wrong signer and a missing signature, changing nothing", async () => {
    const { ledger, payer, other, fresh } = await setup()
    const signed = await signInstructions(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })])
    const snapshot = () => [ledger.getBalance(payer.address), ledger.getBalance(fresh.address)]
    const before = snapshot()

    const tampered = signed.wireBytes.slice()
    tampered[LAMPORTS_LOW_BYTE(tampered)] = 7 // 1 SOL becomes 1 SOL + 7 lamports
    expect(ledger.submit(tampered)).toMatchObject({ _tag: "Rejected", error: "SignatureFailure" })

    const decoded = getTransactionDecoder().decode(signed.wireBytes)
    const wrong = await signBytes(other.keyPair.privateKey, decoded.messageBytes)
    const wrongSigner = getTransactionEncoder().encode({ ...decoded, signatures: { [payer.address]: wrong } })
    expect(ledger.submit(new Uint8Array(wrongSigner))).toMatchObject({ _tag: "Rejected", error: "SignatureFailure" })

    const unsigned = getTransactionEncoder().encode({ ...decoded, signatures: { [payer.address]: null } })
    expect(ledger.submit(new Uint8Array(unsigned))).toMatchObject({ _tag: "Rejected", error: "SignatureFailure" })

    // A second required signer that never signed.
    const message = buildTransactionMessage({
      feePayer: payer,
      lifetime: ledger.latestBlockhash(),
      instructions: [getTransferSolInstruction({ from: createNoopSigner(other.address), to: fresh.address, lamports: SOL })]
    })
    const partial = await partiallySignTransactionMessageWithSigners(message)
    expect(ledger.submit(new Uint8Array(getTransactionEncoder().encode(partial)))).toMatchObject({ _tag: "Rejected", error: "SignatureFailure" })

    expect(snapshot()).toEqual(before)
    expect(ledger.getTransaction(signed.signature)).toBeUndefined()
    expect(ledger.submit(signed.wireBytes)).toMatchObject({ _tag: "Landed", err: null })
  })

  it("accepts a blockhash for 150 slots and refuses it after (BlockhashNotFound)", async () => {
    const { ledger, payer, fresh } = await setup()
    const make = async (lamports: bigint) =>
      (await signInstructions(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports })])).wireBytes
    const { lastValidBlockHeight, slot } = ledger.latestBlockhash()
    expect(lastValidBlockHeight).toBe(slot + 150n)
    const lastChance = await make(SOL)
    const tooLate = await make(SOL + 1n)
    ledger.advanceSlots(149)
    expect(ledger.slot).toBe(lastValidBlockHeight)
    expect(ledger.submit(lastChance)).toMatchObject({ _tag: "Landed", err: null })
    ledger.advanceSlot()
    expect(ledger.submit(tooLate)).toMatchObject({ _tag: "Rejected", error: "BlockhashNotFound" })
  })

  it("refuses an unknown blockhash", async () => {
    const { ledger, payer, fresh } = await setup()
    const other = new Ledger({ genesisSeed: "another" })
    const signed = await signInstructions(other, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })])
    expect(ledger.submit(signed.wireBytes)).toMatchObject({ _tag: "Rejected", error: "BlockhashNotFound" })
  })

  it("refuses a duplicate of an already-processed signature, in and after its slot", async () => {
    const { ledger, payer, fresh } = await setup()
    const signed = await signInstructions(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })])
    expect(ledger.submit(signed.wireBytes)._tag).toBe("Landed")
    expect(ledger.submit(signed.wireBytes)).toMatchObject({ _tag: "Rejected", error: "AlreadyProcessed" })
    ledger.advanceSlots(10)
    expect(ledger.submit(signed.wireBytes)).toMatchObject({ _tag: "Rejected", error: "AlreadyProcessed" })
    expect(ledger.getBalance(fresh.address)).toBe(SOL)
  })

  it("refuses fee payers that do not exist, cannot pay, or are not system accounts", async () => {
    const { ledger, payer, fresh } = await setup()
    const ix = getTransferSolInstruction({ from: fresh, to: payer.address, lamports: 1n })
    expect((await send(ledger, fresh, [ix]))).toMatchObject({ _tag: "Rejected", error: "AccountNotFound" })
    expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: RENT0 })]))
    // RENT0 − 5000 would leave the payer below rent exemption.
    expect(await send(ledger, fresh, [ix])).toMatchObject({ _tag: "Rejected", error: { InsufficientFundsForRent: { account_index: 0 } } })
    expect(ledger.getBalance(fresh.address)).toBe(RENT0)
  })

  it("enforces rent exemption: a transfer creating a too-small account fails, the fee is still charged", async () => {
    const { ledger, payer, fresh } = await setup()
    const before = ledger.getBalance(payer.address)
    const r = await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: RENT0 - 1n })])
    expect(r).toMatchObject({ _tag: "Landed", err: { InsufficientFundsForRent: { account_index: 1 } } })
    expect(ledger.getAccount(fresh.address)).toBeUndefined()
    expect(ledger.getBalance(payer.address)).toBe(before - 5_000n)
    expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: RENT0 })]))
    expect(ledger.getBalance(fresh.address)).toBe(RENT0)
  })

  it("rent minimum is (128 + dataLen) × 6960, and CreateAccount below it fails", async () => {
    const { ledger, payer } = await setup()
    expect(minimumBalanceForRentExemption(0)).toBe(890_880n)
    expect(minimumBalanceForRentExemption(165)).toBe(2_039_280n)
    expect(minimumBalanceForRentExemption(82)).toBe(1_461_600n)
    const account = await generateKeyPairSigner()
    const create = (lamports: bigint) =>
      getCreateAccountInstruction({ payer, newAccount: account, lamports, space: 100, owner: SYSTEM_PROGRAM_ID })
    const low = await send(ledger, payer, [create(minimumBalanceForRentExemption(100) - 1n)])
    expect(low).toMatchObject({ _tag: "Landed", err: { InsufficientFundsForRent: { account_index: 1 } } })
    expectOk(ledger, await send(ledger, payer, [create(minimumBalanceForRentExemption(100))]))
    expect(ledger.getAccount(account.address)?.data.length).toBe(100)
  })

  it("executes atomically: a failing second instruction rolls back the first, the fee stays charged", async () => {
    const { ledger, payer, fresh } = await setup()
    const before = ledger.getBalance(payer.address)
    const r = await send(ledger, payer, [
      getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL }),
      getTransferSolInstruction({ from: payer, to: fresh.address, lamports: before * 2n })
    ])
    expect(r).toMatchObject({ _tag: "Landed", err: { InstructionError: [1, { Custom: 1 }] } })
    expect(ledger.getBalance(fresh.address)).toBe(0n)
    expect(ledger.getBalance(payer.address)).toBe(before - 5_000n)
    const tx = ledger.getTransaction((r as { signature: string }).signature)!
    expect(tx.postBalances[0]).toBe(before - 5_000n)
    expect(tx.postBalances[1]).toBe(0n)
    expect(tx.logMessages).toContain(`Program log: Transfer: insufficient lamports ${before - 5_000n - SOL}, need ${before * 2n}`)
    expect(tx.logMessages.at(-1)).toBe("Program 11111111111111111111111111111111 failed: custom program error: 0x1")
  })

  it("sanitizes: garbage and oversized transactions are refused", async () => {
    const { ledger } = await setup()
    expect(ledger.submit(new Uint8Array([1, 2, 3]))).toMatchObject({ _tag: "Rejected", error: "SanitizeFailure" })
    expect(ledger.submit(new Uint8Array(1233))).toMatchObject({ _tag: "Rejected", error: "SanitizeFailure" })
  })

  it("simulates without committing, optionally replacing the blockhash and verifying signatures", async () => {
    const { ledger, payer, fresh } = await setup()
    const signed = await signInstructions(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })])
    const sim = ledger.simulate(signed.wireBytes, { accounts: [fresh.address] })
    expect(sim.err).toBeNull()
    expect(sim.fee).toBe(5_000n)
    expect(sim.unitsConsumed).toBe(150n)
    expect(sim.accounts?.[0]?.lamports).toBe(SOL)
    expect(sim.logs).toEqual([
      "Program 11111111111111111111111111111111 invoke [1]",
      "Program 11111111111111111111111111111111 consumed 150 of 3000 compute units",
      "Program 11111111111111111111111111111111 success"
    ])
    expect(ledger.getAccount(fresh.address)).toBeUndefined()
    expect(ledger.getTransaction(signed.signature)).toBeUndefined()

    ledger.advanceSlots(151)
    expect(ledger.simulate(signed.wireBytes).err).toBe("BlockhashNotFound")
    const replaced = ledger.simulate(signed.wireBytes, { replaceRecentBlockhash: true })
    expect(replaced.err).toBeNull()
    expect(replaced.replacementBlockhash?.blockhash).toBe(ledger.latestBlockhash().blockhash)

    const tampered = signed.wireBytes.slice()
    tampered[LAMPORTS_LOW_BYTE(tampered)] = 7
    expect(ledger.simulate(tampered, { replaceRecentBlockhash: true }).err).toBeNull()
    expect(ledger.simulate(tampered, { replaceRecentBlockhash: true, sigVerify: true }).err).toBe("SignatureFailure")
  })
})

describe("Ledger: slots, commitment and history", () => {
  it("moves a transaction processed → confirmed → finalized", async () => {
    const { ledger, payer, fresh } = await setup({ finalizationLagSlots: 2 })
    const r = expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })]))
    expect(ledger.getSignatureStatus(r.signature)).toMatchObject({ slot: 1n, confirmationStatus: "processed", confirmations: 0 })
    ledger.advanceSlot()
    expect(ledger.getSignatureStatus(r.signature)).toMatchObject({ confirmationStatus: "confirmed", confirmations: 1 })
    ledger.advanceSlot()
    expect(ledger.getSignatureStatus(r.signature)?.confirmationStatus).toBe("confirmed")
    ledger.advanceSlot()
    expect(ledger.getSignatureStatus(r.signature)).toMatchObject({ confirmationStatus: "finalized", confirmations: null, err: null })
    expect(ledger.slotAt("processed")).toBe(4n)
    expect(ledger.slotAt("confirmed")).toBe(3n)
    expect(ledger.slotAt("finalized")).toBe(1n)
    expect(ledger.getSignatureStatuses([r.signature, "unknown"])[1]).toBeNull()
  })

  it("derives each blockhash from the previous one, deterministically", () => {
    const a = new Ledger()
    const b = new Ledger()
    a.advanceSlots(3)
    b.advanceSlots(3)
    expect(a.latestBlockhash()).toEqual(b.latestBlockhash())
    const block = a.getBlock(3n)!
    expect(block.previousBlockhash).toBe(a.getBlock(2n)!.blockhash)
    expect(block.parentSlot).toBe(2n)
    expect(new Ledger({ genesisSeed: "x" }).latestBlockhash().blockhash).not.toBe(a.getBlock(0n)!.blockhash)
  })

  it("keeps a bounded history of slots and transactions", async () => {
    const { ledger, payer, fresh } = await setup({ blockhashValiditySlots: 3, historySlots: 5 })
    const r = expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })]))
    ledger.advanceSlots(5)
    expect(ledger.getTransaction(r.signature)?.slot).toBe(1n)
    expect(ledger.signaturesForAddress(fresh.address, { limit: 10, commitment: "confirmed" }).map((t) => t.signature)).toEqual([r.signature])
    ledger.advanceSlot()
    expect(ledger.getTransaction(r.signature)).toBeUndefined()
    expect(ledger.getBlock(1n)).toBeUndefined()
    expect(ledger.oldestHistorySlot).toBe(2n)
    // The address index is pruned with the history: only what is retained is listed.
    expect(ledger.signaturesForAddress(fresh.address, { limit: 10, commitment: "confirmed" })).toEqual([])
    const later = expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL })]))
    ledger.advanceSlot()
    expect(ledger.signaturesForAddress(fresh.address, { limit: 10, commitment: "confirmed" }).map((t) => t.signature)).toEqual([later.signature])
    expect(() => new Ledger({ blockhashValiditySlots: 10, historySlots: 10 })).toThrow(RangeError)
  })

  it("closes a full slot by itself (maxTransactionsPerSlot)", async () => {
    const { ledger, payer, fresh } = await setup({ maxTransactionsPerSlot: 5 })
    const slots: bigint[] = []
    for (let i = 0; i < 7; i++) {
      const r = expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: fresh.address, lamports: SOL + BigInt(i) })]))
      slots.push(r.slot)
    }
    expect(slots).toEqual([1n, 1n, 1n, 1n, 1n, 2n, 2n])
    expect(ledger.getBlock(1n)!.transactions.map((t) => t.index)).toEqual([0, 1, 2, 3, 4])
  })

  it("advances on its clock when started", async () => {
    const ledger = new Ledger({ slotMs: 5 })
    const reached = new Promise<void>((resolve) =>
      ledger.subscribe((u) => {
        if (u.kind === "slot" && u.status === "confirmed" && u.slot >= 3n) resolve()
      })
    )
    ledger.start()
    expect(ledger.running).toBe(true)
    await reached
    ledger.stop()
    expect(ledger.running).toBe(false)
    const slot = ledger.slot
    expect(slot).toBeGreaterThanOrEqual(4n)
  })
})

describe("Ledger: genesis and faucet", () => {
  it("funds the dev keys, the faucet and creates the USDC and SVC mints", () => {
    const ledger = new Ledger()
    for (const dev of DEV_ADDRESSES) expect(ledger.getBalance(dev)).toBe(1_000_000n * SOL)
    expect(ledger.getBalance(FAUCET_ADDRESS)).toBeGreaterThan(0n)
    for (const mint of [USDC_MINT_ADDRESS, SVC_MINT_ADDRESS, STAKED_SVC_MINT_ADDRESS]) expect(ledger.getAccount(mint)?.data.length).toBe(82)
    for (const tip of ledger.tipAccounts) expect(ledger.getBalance(tip)).toBe(RENT0)
  })

  it("airdrops with a real signed transaction and mints test tokens", async () => {
    const ledger = new Ledger()
    const who = await generateKeyPairSigner()
    const a = ledger.requestAirdrop(who.address, 2n * SOL)
    const b = ledger.requestAirdrop(who.address, 2n * SOL)
    expect(a._tag === "Landed" && b._tag === "Landed" && a.signature !== b.signature).toBe(true)
    expect(ledger.getBalance(who.address)).toBe(4n * SOL)
    expect(() => ledger.requestAirdrop(who.address, 0n)).toThrow(RangeError)
    expectOk(ledger, ledger.mintTestTokens(USDC_MINT_ADDRESS, who.address, 5_000_000n))
    expectOk(ledger, ledger.mintTestTokens(USDC_MINT_ADDRESS, who.address, 5_000_000n))
    const ata = ledger.getAccount(ataOf(who.address, USDC_MINT_ADDRESS))!
    expect(decodeSplTokenAccount(ata.data)).toMatchObject({ owner: who.address, mint: USDC_MINT_ADDRESS, amount: 10_000_000n })
  })
})
