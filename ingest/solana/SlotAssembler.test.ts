/**
 * SlotAssembler, driven directly:
 *
 *   transaction ──(slot ≤ committed)──▶ Duplicate          "drops what was already published"
 *               ──(bound reached)─────▶ Overflow           "bounds the transactions it holds"
 *               ──────────────────────▶ Buffered
 *   blockMeta   ──(slot ≤ committed)──▶ Duplicate          "drops what was already published"
 *               ──(older slot held)───▶ OutOfOrder         "refuses a block meta that skips a held slot"
 *               ──────────────────────▶ Completed          "completes a slot in index order, once per signature"
 *   commit(s)   ──▶ committed = max(committed, s)          "completes without committing until told"
 *   reset / forget                                         "reset drops partial slots; forget drops the cursor"
 */
import { describe, expect, it } from "vitest"
import type { CurveTransaction } from "./decoders/index.js"
import { SlotAssembler } from "./SlotAssembler.js"

const tx = (slot: bigint, index: number, signature = `sig-${slot}-${index}`): CurveTransaction => ({
  signature,
  slot,
  index,
  failed: false,
  logMessages: []
})

describe("SlotAssembler", () => {
  it("completes a slot in index order, once per signature", () => {
    const a = new SlotAssembler(null, 100)
    expect(a.transaction(tx(3n, 2))._tag).toBe("Buffered")
    expect(a.transaction(tx(3n, 0))._tag).toBe("Buffered")
    expect(a.transaction(tx(3n, 0))._tag).toBe("Buffered") // a resent duplicate
    const r = a.blockMeta(3n, 1_000)
    expect(r).toEqual({ _tag: "Completed", slot: { slot: 3n, blockTimeMs: 1_000, transactions: [tx(3n, 0), tx(3n, 2)] } })
    expect(a.bufferedTransactions).toBe(0)
    expect(a.blockMeta(4n, 1_400)).toEqual({ _tag: "Completed", slot: { slot: 4n, blockTimeMs: 1_400, transactions: [] } })
  })

  it("completes without committing until told", () => {
    const a = new SlotAssembler(null, 100)
    a.transaction(tx(5n, 0))
    expect(a.blockMeta(5n, 1)._tag).toBe("Completed")
    expect(a.committed).toBeNull()
    a.commit(5n)
    a.commit(4n)
    expect(a.committed).toBe(5n)
  })

  it("drops what was already published", () => {
    const a = new SlotAssembler(10n, 100)
    expect(a.transaction(tx(10n, 0))._tag).toBe("Duplicate")
    expect(a.transaction(tx(9n, 0))._tag).toBe("Duplicate")
    expect(a.blockMeta(10n, 1)._tag).toBe("Duplicate")
    expect(a.transaction(tx(11n, 0))._tag).toBe("Buffered")
  })

  it("refuses a block meta that skips a held slot", () => {
    const a = new SlotAssembler(null, 100)
    a.transaction(tx(6n, 0))
    expect(a.blockMeta(7n, 1)).toMatchObject({ _tag: "OutOfOrder" })
  })

  it("bounds the transactions it holds", () => {
    const a = new SlotAssembler(null, 2)
    expect(a.transaction(tx(1n, 0))._tag).toBe("Buffered")
    expect(a.transaction(tx(1n, 1))._tag).toBe("Buffered")
    expect(a.transaction(tx(1n, 2))).toEqual({ _tag: "Overflow", buffered: 2 })
    a.blockMeta(1n, 1)
    expect(a.transaction(tx(2n, 0))._tag).toBe("Buffered")
  })

  it("a block meta without a block time takes the last known one", () => {
    const a = new SlotAssembler(null, 10)
    expect(a.blockMeta(1n, 5_000)).toMatchObject({ slot: { blockTimeMs: 5_000 } })
    expect(a.blockMeta(2n, null)).toMatchObject({ slot: { blockTimeMs: 5_000 } })
  })

  it("reset drops partial slots; forget drops the cursor", () => {
    const a = new SlotAssembler(3n, 10)
    a.transaction(tx(4n, 0))
    a.reset()
    expect(a.bufferedTransactions).toBe(0)
    expect(a.blockMeta(4n, 1)).toMatchObject({ slot: { transactions: [] } })
    a.forget()
    expect(a.committed).toBeNull()
    expect(a.transaction(tx(1n, 0))._tag).toBe("Buffered")
  })
})
