/**
 * Turns the ledger's update stream (in commit order) into what a Geyser subscriber at one
 * commitment level sees, in the order a Yellowstone server sends it:
 *
 * - `processed`: account and transaction updates at once; the slot's block meta when its block
 *   is frozen (the ledger freezes a block when it closes the slot, i.e. at `confirmed`);
 * - `confirmed` / `finalized`: a slot's account and transaction updates are held until the slot
 *   reaches that commitment, then released in commit order, followed by its block meta;
 * - slot status updates pass at every level, after any data they release, so a subscriber never
 *   sees a commitment status before the block content for that slot.
 *
 * The same gate serves live streams (one shared gate per level) and `from_slot` replay (a fresh
 * gate run over `Ledger.updatesSince`, its leftovers discarded because the shared gate holds the
 * same slots and releases them live). Held data is bounded by the ledger: a slot is released or
 * dropped once it is finalized, so at most `finalizationLagSlots + 1` slots are held.
 */
import type { AccountUpdate, Commitment, LedgerUpdate, SlotUpdate, TransactionUpdate } from "../../Ledger.js"

export type GateOutput =
  | { readonly kind: "account"; readonly update: AccountUpdate }
  | { readonly kind: "transaction"; readonly update: TransactionUpdate }
  | { readonly kind: "blockMeta"; readonly slot: bigint }
  | { readonly kind: "slot"; readonly update: SlotUpdate }

export class CommitmentGate {
  private readonly held = new Map<bigint, Array<AccountUpdate | TransactionUpdate>>()

  constructor(readonly commitment: Commitment) {}

  /** Updates held for slots that have not reached this gate's commitment. */
  get heldCount(): number {
    let n = 0
    for (const list of this.held.values()) n += list.length
    return n
  }

  push(update: LedgerUpdate, out: (o: GateOutput) => void): void {
    if (update.kind !== "slot") {
      if (this.commitment === "processed") {
        out(update.kind === "account" ? { kind: "account", update } : { kind: "transaction", update })
        return
      }
      let list = this.held.get(update.slot)
      if (list === undefined) {
        list = []
        this.held.set(update.slot, list)
      }
      list.push(update)
      return
    }
    const { slot, status } = update
    if (status === "confirmed" && this.commitment === "processed") out({ kind: "blockMeta", slot })
    if (status === this.commitment && status !== "processed") this.release(slot, out)
    if (status === "finalized") {
      for (const s of this.held.keys()) if (s <= slot) this.held.delete(s)
    }
    out({ kind: "slot", update })
  }

  private release(slot: bigint, out: (o: GateOutput) => void): void {
    const list = this.held.get(slot)
    this.held.delete(slot)
    if (list !== undefined) {
      for (const u of list) out(u.kind === "account" ? { kind: "account", update: u } : { kind: "transaction", update: u })
    }
    out({ kind: "blockMeta", slot })
  }
}
