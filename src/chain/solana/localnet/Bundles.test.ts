import { generateKeyPairSigner, type Instruction, type KeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import { getTransferSolInstruction } from "../client/SplInstructions.js"
import { Ledger, type LedgerRecord, MAX_BUNDLE_TRANSACTIONS } from "./Ledger.js"
import { signInstructions } from "./testkit.js"

const SOL = 1_000_000_000n

const setup = async () => {
  const ledger = new Ledger()
  const a = await devSigner(0)
  const b = await devSigner(1)
  const to = await generateKeyPairSigner()
  const tip = ledger.tipAccounts[3]!
  const sign = async (payer: KeyPairSigner, instructions: Instruction[]) => (await signInstructions(ledger, payer, instructions)).wireBytes
  const pay = (payer: KeyPairSigner, lamports: bigint) => sign(payer, [getTransferSolInstruction({ from: payer, to: to.address, lamports })])
  const tipTx = (payer: KeyPairSigner, lamports = 10_000n) => sign(payer, [getTransferSolInstruction({ from: payer, to: tip, lamports })])
  return { ledger, a, b, to, tip, sign, pay, tipTx }
}

describe("Ledger bundles", () => {
  it("lands every transaction in order in one slot, with the tip", async () => {
    const { ledger, a, b, to, tip, pay, tipTx } = await setup()
    const txs = [await pay(a, SOL), await pay(b, 2n * SOL), await tipTx(a)]
    ledger.advanceSlot()
    const r = ledger.submitBundle(txs)
    if (r._tag !== "Landed") throw new Error(r.detail)
    expect(r.bundleId).toMatch(/^[0-9a-f]{64}$/)
    expect(r.signatures).toHaveLength(3)
    const records = r.signatures.map((s) => ledger.getTransaction(s)!)
    expect(records.map((t) => [t.slot, t.index, t.bundleId, t.err])).toEqual([
      [r.slot, 0, r.bundleId, null],
      [r.slot, 1, r.bundleId, null],
      [r.slot, 2, r.bundleId, null]
    ])
    expect(ledger.getBalance(to.address)).toBe(3n * SOL)
    expect(ledger.getBalance(tip)).toBe(ledger.minimumBalanceForRentExemption(0) + 10_000n)
    expect(ledger.getBundle(r.bundleId)).toEqual({ bundleId: r.bundleId, slot: r.slot, signatures: r.signatures })
  })

  it("a failing second transaction leaves no trace of the first and charges no fee", async () => {
    const { ledger, a, b, to, pay, tipTx } = await setup()
    const first = await pay(a, SOL)
    const failing = await pay(b, 10n ** 18n) // more than b holds
    const balances = () => [a, b].map((s) => ledger.getBalance(s.address))
    const before = balances()
    const r = ledger.submitBundle([first, failing, await tipTx(a)])
    expect(r).toMatchObject({ _tag: "Rejected", reason: "transaction_failed", failedIndex: 1, error: { InstructionError: [0, { Custom: 1 }] } })
    expect(balances()).toEqual(before)
    expect(ledger.getAccount(to.address)).toBeUndefined()
    expect(ledger.getBlock(ledger.slot)!.transactions).toEqual([])
    // The first transaction was never processed, so it can still land on its own.
    expect(ledger.submit(first)).toMatchObject({ _tag: "Landed", err: null })
  })

  it("refuses empty bundles and more than 5 transactions", async () => {
    const { ledger, a, pay, tipTx } = await setup()
    expect(ledger.submitBundle([])).toMatchObject({ _tag: "Rejected", reason: "empty" })
    const six = [await tipTx(a)]
    for (let i = 1; i <= MAX_BUNDLE_TRANSACTIONS; i++) six.push(await pay(a, BigInt(i) * SOL))
    expect(ledger.submitBundle(six)).toMatchObject({ _tag: "Rejected", reason: "too_many_transactions" })
    expect(ledger.submitBundle(six.slice(0, 5))._tag).toBe("Landed")
  })

  it("refuses a bundle without a tip, with too small a tip, or tipping another account", async () => {
    const { ledger, a, b, sign, pay, tipTx } = await setup()
    expect(ledger.submitBundle([await pay(a, SOL)])).toMatchObject({ _tag: "Rejected", reason: "no_tip" })
    expect(ledger.submitBundle([await pay(a, SOL), await tipTx(b, 999n)])).toMatchObject({ _tag: "Rejected", reason: "no_tip" })
    expect(ledger.submitBundle([await pay(a, SOL), await tipTx(b, 999n)], { minLamports: 999n })._tag).toBe("Landed")
    const elsewhere = await sign(a, [getTransferSolInstruction({ from: a, to: b.address, lamports: 50_000n })])
    expect(ledger.submitBundle([elsewhere])).toMatchObject({ _tag: "Rejected", reason: "no_tip" })
  })

  it("refuses a member that would be rejected alone (bad signature, duplicate, already processed)", async () => {
    const { ledger, a, pay, tipTx } = await setup()
    const tip = await tipTx(a)
    const good = await pay(a, SOL)
    const tampered = good.slice()
    tampered[tampered.length - 9] = 9
    expect(ledger.submitBundle([tampered, tip])).toMatchObject({ _tag: "Rejected", reason: "transaction_rejected", failedIndex: 0, error: "SignatureFailure" })
    expect(ledger.submitBundle([good, good, tip])).toMatchObject({ _tag: "Rejected", reason: "duplicate_transaction" })
    expect(ledger.submit(good)._tag).toBe("Landed")
    expect(ledger.submitBundle([tip, good])).toMatchObject({ _tag: "Rejected", reason: "transaction_rejected", failedIndex: 1, error: "AlreadyProcessed" })
  })

  it("a revertible transaction that fails lands failed (fee paid, effects undone) and the rest of the bundle lands", async () => {
    const records: LedgerRecord[] = []
    const ledger = new Ledger({ journal: { append: (r) => records.push(r), slotClosed: () => undefined } })
    const a = await devSigner(0)
    const b = await devSigner(1)
    const to = await generateKeyPairSigner()
    const tip = ledger.tipAccounts[3]!
    const sign = async (payer: KeyPairSigner, instructions: Instruction[]) => (await signInstructions(ledger, payer, instructions)).wireBytes
    const first = await sign(a, [getTransferSolInstruction({ from: a, to: to.address, lamports: SOL }), getTransferSolInstruction({ from: a, to: tip, lamports: 10_000n })])
    const failing = await sign(b, [getTransferSolInstruction({ from: b, to: to.address, lamports: 10n ** 18n })])
    const last = await sign(a, [getTransferSolInstruction({ from: a, to: to.address, lamports: 2n * SOL })])
    const bBefore = ledger.getBalance(b.address)
    const r = ledger.submitBundle([first, failing, last], undefined, { revertible: [1] })
    if (r._tag !== "Landed") throw new Error(r.detail)
    expect(r.signatures.map((sig) => ledger.getTransaction(sig)!.err)).toEqual([null, { InstructionError: [0, { Custom: 1 }] }, null])
    expect(ledger.getBalance(to.address)).toBe(3n * SOL)
    expect(bBefore - ledger.getBalance(b.address)).toBe(ledger.getTransaction(r.signatures[1]!)!.fee)
    expect(records.at(-1)).toMatchObject({ op: "bundle", revertible: [1] })
    // The journal replays the same failed-but-landed member.
    const again = new Ledger()
    again.replay(records)
    expect(again.getTransaction(r.signatures[1]!)?.err).toEqual({ InstructionError: [0, { Custom: 1 }] })
    expect(again.getBalance(to.address)).toBe(3n * SOL)
  })

  it("a failure of a transaction not named revertible still drops the whole bundle; index 0 can never be revertible", async () => {
    const { ledger, a, b, pay, tipTx } = await setup()
    const failing = await pay(b, 10n ** 18n)
    expect(ledger.submitBundle([failing, await tipTx(a)], undefined, { revertible: [1] })).toMatchObject({ _tag: "Rejected", reason: "transaction_failed", failedIndex: 0 })
    for (const bad of [[0], [2], [-1], [1.5]]) {
      expect(ledger.submitBundle([await tipTx(a), failing], undefined, { revertible: bad })).toMatchObject({ _tag: "Rejected", reason: "invalid_revertible" })
    }
  })
})
