/**
 * CommitmentGate on a real ledger's update stream: what each commitment level releases and when,
 * and that a replay gate over `updatesSince` followed by the live gate yields each update once.
 */
import { generateKeyPairSigner } from "@solana/kit"
import { describe, expect, it } from "vitest"
import { devSigner } from "../../../client/DevSigners.js"
import { getTransferSolInstruction } from "../../../client/SplInstructions.js"
import { type Commitment, Ledger } from "../../Ledger.js"
import { expectOk, send } from "../../testkit.js"
import { CommitmentGate, type GateOutput } from "./commitmentGate.js"

const line = (o: GateOutput): string =>
  o.kind === "slot" ? `slot ${o.update.slot} ${o.update.status}` : o.kind === "blockMeta" ? `meta ${o.slot}` : `${o.kind} ${o.update.slot}`

const follow = (ledger: Ledger, level: Commitment) => {
  const gate = new CommitmentGate(level)
  const out: string[] = []
  ledger.subscribe((u) => gate.push(u, (o) => out.push(line(o))))
  return out
}

const transfer = async (ledger: Ledger) => {
  const payer = await devSigner(0)
  const to = await generateKeyPairSigner()
  expectOk(ledger, await send(ledger, payer, [getTransferSolInstruction({ from: payer, to: to.address, lamports: 1_000_000n })]))
}

describe("CommitmentGate", () => {
  it("releases a slot's data at its commitment, then its block meta, then its status", async () => {
    const ledger = new Ledger({ finalizationLagSlots: 1 })
    const processed = follow(ledger, "processed")
    const confirmed = follow(ledger, "confirmed")
    const finalized = follow(ledger, "finalized")
    await transfer(ledger)
    expect(processed).toEqual(["account 1", "account 1", "transaction 1"])
    expect(confirmed).toEqual([])
    ledger.advanceSlot()
    expect(processed.slice(3)).toEqual(["meta 1", "slot 1 confirmed", "slot 2 processed"])
    expect(confirmed).toEqual(["account 1", "account 1", "transaction 1", "meta 1", "slot 1 confirmed", "slot 2 processed"])
    expect(finalized).toEqual(["slot 1 confirmed", "slot 2 processed"])
    ledger.advanceSlot()
    expect(finalized.slice(2)).toEqual(["slot 2 confirmed", "account 1", "account 1", "transaction 1", "meta 1", "slot 1 finalized", "slot 3 processed"])
  })

  it("a replay gate over updatesSince, then the live gate, yields every update once", async () => {
    const ledger = new Ledger({ finalizationLagSlots: 2 })
    const live = new CommitmentGate("confirmed")
    const reference: string[] = []
    ledger.subscribe((u) => {
      live.push(u, (o) => reference.push(line(o)))
    })
    await transfer(ledger)
    ledger.advanceSlot()
    await transfer(ledger) // slot 2 stays open: held by the live gate
    // A subscriber joins now with from_slot 1: replay what the ledger retains…
    const joined: string[] = []
    const replay = new CommitmentGate("confirmed")
    const r = ledger.updatesSince(1n)
    if (r._tag !== "Updates") throw new Error("retained")
    for (const u of r.updates) replay.push(u, (o) => joined.push(line(o)))
    // …then follow the live gate from here on.
    const liveFrom = reference.length
    ledger.advanceSlot()
    joined.push(...reference.slice(liveFrom))
    const slot1 = ["account 1", "account 1", "transaction 1", "meta 1", "slot 1 confirmed"]
    expect(joined).toEqual(["slot 1 processed", ...slot1, "slot 2 processed", "account 2", "account 2", "transaction 2", "meta 2", "slot 2 confirmed", "slot 3 processed"])
    expect(replay.heldCount).toBe(3) // slot 2's data, left to the live gate
  })
})
