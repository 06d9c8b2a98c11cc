import { generateKeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner } from "../client/DevSigners.js"
import { getTransferSolInstruction } from "../client/SplInstructions.js"
import { Ledger, type LedgerUpdate } from "./Ledger.js"
import { expectOk, send, signInstructions } from "./testkit.js"

const SOL = 1_000_000_000n

const brief = (u: LedgerUpdate) =>
  u.kind === "account"
    ? `account ${u.slot} ${u.pubkey.slice(0, 4)} ${u.lamports}`
    : u.kind === "transaction"
      ? `transaction ${u.slot} #${u.index} ${u.err === null ? "ok" : "err"}`
      : `slot ${u.slot} ${u.status}`

describe("Ledger update stream", () => {
  it("delivers account writes, then the transaction, then slot statuses, in order", async () => {
    const ledger = new Ledger({ finalizationLagSlots: 1 })
    const payer = await devSigner(0)
    const to = await generateKeyPairSigner()
    const seen: LedgerUpdate[] = []
    const unsubscribe = ledger.subscribe((u) => seen.push(u))
    const r = expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: to.address, lamports: SOL })]))
    ledger.advanceSlot()
    ledger.advanceSlot()
    const p = payer.address.slice(0, 4)
    const t = to.address.slice(0, 4)
    const payerAfter = ledger.getBalance(payer.address)
    expect(seen.map(brief)).toEqual([
      `account 1 ${p} ${payerAfter}`,
      `account 1 ${t} ${SOL}`,
      "transaction 1 #0 ok",
      "slot 1 confirmed",
      "slot 2 processed",
      "slot 2 confirmed",
      "slot 1 finalized",
      "slot 3 processed"
    ])
    const [w1, w2, tx] = seen
    expect(w1?.kind === "account" && w2?.kind === "account" && w2.writeVersion === w1.writeVersion + 1n).toBe(true)
    expect(w1).toMatchObject({ txnSignature: r.signature, owner: "11111111111111111111111111111111", executable: false })
    expect(tx).toMatchObject({ kind: "transaction", isVote: false, signature: r.signature, slot: 1n, index: 0, fee: 5_000n })
    expect(tx?.kind === "transaction" && tx.messageBytes.length > 0 && tx.logMessages.length === 3).toBe(true)
    unsubscribe()
    ledger.advanceSlot()
    expect(seen).toHaveLength(8)
  })

  it("a failed transaction streams only the fee payer's write and the failed transaction", async () => {
    const ledger = new Ledger()
    const payer = await devSigner(0)
    const to = await generateKeyPairSigner()
    const seen: LedgerUpdate[] = []
    ledger.subscribe((u) => seen.push(u))
    await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: to.address, lamports: 10n ** 18n })])
    expect(seen.map((u) => u.kind)).toEqual(["account", "transaction"])
    expect(seen[0]).toMatchObject({ pubkey: payer.address })
    expect(seen[1]).toMatchObject({ err: { InstructionError: [0, { Custom: 1 }] } })
  })

  it("streams a bundle only once it lands, all in its slot", async () => {
    const ledger = new Ledger()
    const payer = await devSigner(0)
    const seen: LedgerUpdate[] = []
    ledger.subscribe((u) => seen.push(u))
    const tip = (await signInstructions(ledger, payer, [getTransferSolInstruction({ from: payer, to: ledger.tipAccounts[0]!, lamports: 5_000n })])).wireBytes
    const bad = (await signInstructions(ledger, payer, [getTransferSolInstruction({ from: payer, to: ledger.tipAccounts[1]!, lamports: 10n ** 18n })])).wireBytes
    expect(ledger.submitBundle([tip, bad])._tag).toBe("Rejected")
    expect(seen).toEqual([])
    expect(ledger.submitBundle([tip])._tag).toBe("Landed")
    expect(seen.map((u) => u.kind)).toEqual(["account", "account", "transaction"])
  })

  it("replays retained updates from a slot, and says when a slot is no longer retained", async () => {
    const ledger = new Ledger({ updatesRetainedSlots: 3 })
    const payer = await devSigner(0)
    const to = await generateKeyPairSigner()
    expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: to.address, lamports: SOL })]))
    ledger.advanceSlot()
    const from1 = ledger.updatesSince(1n)
    if (from1._tag !== "Updates") throw new Error("slot 1 should be retained")
    expect(from1.updates.map(brief).slice(0, 3)).toEqual([`slot 1 processed`, expect.stringMatching(/^account 1/), expect.stringMatching(/^account 1/)])
    const from2 = ledger.updatesSince(2n)
    expect(from2._tag === "Updates" && from2.updates.map(brief)).toEqual(["slot 2 processed"])
    ledger.advanceSlots(3)
    expect(ledger.updatesSince(1n)).toEqual({ _tag: "SlotNotRetained", oldestRetainedSlot: 2n })
    const kept = ledger.updatesSince(2n)
    expect(kept._tag === "Updates" && kept.updates.every((u) => u.slot >= 2n)).toBe(true)
  })

  it("keeps going when a subscriber throws", async () => {
    const errors: unknown[] = []
    const ledger = new Ledger({ onListenerError: (e) => errors.push(e) })
    const seen: LedgerUpdate[] = []
    ledger.subscribe(() => {
      throw new Error("boom")
    })
    ledger.subscribe((u) => seen.push(u))
    ledger.advanceSlot()
    expect(errors).toHaveLength(2)
    expect(seen.map(brief)).toEqual(["slot 1 confirmed", "slot 2 processed"])
  })
})
