/**
 * ReorgWindow, driven directly:
 *
 *   Following   ──Backfilled──────────────────▶ Following    "Backfilled publishes the range and empties the window"
 *   Following   ──Followed────────────────────▶ Following    "Followed publishes a linked branch and keeps at most windowBlocksMax blocks"
 *   Following   ──Canonical(top's hash)───────▶ Following    "Canonical at the top's hash is Consistent and changes nothing"
 *   Following   ──Canonical(other | none)─────▶ WalkingBack  "walks back one block at a time until a block still matches"
 *   WalkingBack ──Canonical(other | none)─────▶ WalkingBack  "walks back one block at a time until a block still matches"
 *   WalkingBack ──Canonical(top's hash)───────▶ Resolving    "walks back one block at a time until a block still matches"
 *   last window block orphaned ───────────────▶ Resolving    "a reorg deeper than the window: DeepReorg, only the window's events retracted"
 *   Resolving   ──Branch──────────────────────▶ Following    "Branch retracts the orphaned events per mint, then publishes the new branch",
 *                                                            "keeps what the new branch carries identically; renames a re-included (id, position)",
 *                                                            "an unreadable new branch retracts everything orphaned and rewinds to the ancestor"
 *   any input out of turn                                    "an input out of turn is a defect"
 *   retracted memory bound                                   "remembers at most RETRACTED_MEMORY retracted events, the oldest forgotten"
 *   random chains with reorgs (property)                     "retracts exactly the orphaned blocks' events, never one twice"
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type ChainEvent, CurveCompleted, hoodPosition, type Retracted } from "../ChainEvent.js"
import { encodeChainEvent } from "../ChainEventCodec.js"
import type { WindowBlock } from "./BlockStore.js"
import * as ReorgWindow from "./ReorgWindow.js"
import { type BlockHeader, digestOf, RETRACTED_MEMORY, type ReorgOutput, type ReorgWindowState } from "./ReorgWindow.js"

/** A hash whose first 8 hex digits (what a renamed id carries) differ per label. */
const hashOf = (label: number): string => `0x${label.toString(16).padStart(8, "0")}${"ab".repeat(28)}`

const event = (block: bigint, logIndex: number, opts: { id?: string; mint?: string; amount?: bigint } = {}): ChainEvent =>
  new CurveCompleted({
    id: opts.id ?? `hood:tx${block}-${logIndex}:${logIndex}`,
    position: hoodPosition(block, logIndex),
    chain: "hood",
    mint: opts.mint ?? "0xmint",
    timestampMs: Number(block) * 1000,
    signature: `tx${block}`,
    curve: "0xcurve",
    realQuoteRaw: opts.amount ?? 1n
  })

interface Block extends BlockHeader {
  readonly events: ReadonlyArray<ChainEvent>
}

const block = (number: bigint, hash: number, parent: number, events: ReadonlyArray<ChainEvent> = []): Block => ({
  number,
  hash: hashOf(hash),
  parentHash: hashOf(parent),
  timestampMs: Number(number) * 1000,
  events
})

const branch = (blocks: ReadonlyArray<Block>) => {
  const events = blocks.flatMap((b) => b.events)
  return { headers: blocks.map(({ events: _, ...h }) => h), events, encoded: events.map(encodeChainEvent) }
}

const tags = (outputs: ReadonlyArray<ReorgOutput>) => outputs.map((o) => o._tag)
const only = <T extends ReorgOutput["_tag"]>(outputs: ReadonlyArray<ReorgOutput>, tag: T) =>
  outputs.find((o): o is Extract<ReorgOutput, { _tag: T }> => o._tag === tag)!

/** Blocks 1..3 followed: b1 (e1), b2 (e2 of mint A, e3 of mint B), b3 (e4). */
const followed = (windowBlocksMax = 8) => {
  const chain = [
    block(1n, 1, 0, [event(1n, 0)]),
    block(2n, 2, 1, [event(2n, 0, { mint: "0xa" }), event(2n, 1, { mint: "0xb" })]),
    block(3n, 3, 2, [event(3n, 0)])
  ]
  const [state] = ReorgWindow.step(ReorgWindow.initial(windowBlocksMax), { _tag: "Followed", ...branch(chain) })
  return { state, chain }
}

describe("ReorgWindow", () => {
  it("Backfilled publishes the range and empties the window", () => {
    const { state } = followed()
    const events = [event(10n, 0)]
    const [next, out] = ReorgWindow.step(state, { _tag: "Backfilled", to: 20n, events, encoded: events.map(encodeChainEvent) })
    expect(tags(out)).toEqual(["Publish", "Commit"])
    expect(only(out, "Publish").events).toEqual(events)
    expect(only(out, "Commit")).toEqual({ _tag: "Commit", keepUpTo: null, added: [], pruneBelow: 21n, cursor: 20n })
    expect(next).toMatchObject({ cursor: 20n, window: [], walk: null })
  })

  it("Followed publishes a linked branch and keeps at most windowBlocksMax blocks", () => {
    const { state, chain } = followed(2)
    expect(state.cursor).toBe(3n)
    expect(state.window.map((b) => b.number)).toEqual([2n, 3n])
    expect(state.window[0]!.events.map((e) => [e.mint, e.id, e.digest])).toEqual(
      chain[1]!.events.map((e) => [e.mint, e.id, digestOf(encodeChainEvent(e))])
    )
    const [next, out] = ReorgWindow.step(state, { _tag: "Followed", ...branch([block(4n, 4, 3, [event(4n, 0)])]) })
    expect(tags(out)).toEqual(["Publish", "Commit"])
    expect(only(out, "Publish").events.map((e) => e.id)).toEqual(["hood:tx4-0:0"])
    expect(only(out, "Commit")).toMatchObject({ keepUpTo: null, pruneBelow: 3n, cursor: 4n })
    expect(next.window.map((b) => b.number)).toEqual([3n, 4n])
    // Nothing read: nothing changes.
    const [same, none] = ReorgWindow.step(next, { _tag: "Followed", headers: [], events: [], encoded: [] })
    expect(same).toBe(next)
    expect(none).toEqual([])
  })

  it("Canonical at the top's hash is Consistent and changes nothing", () => {
    const { state } = followed()
    const [next, out] = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: hashOf(3) })
    expect(next).toBe(state)
    expect(out).toEqual([{ _tag: "Consistent" }])
  })

  it("walks back one block at a time until a block still matches", () => {
    const { state } = followed()
    const [s1, o1] = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: hashOf(33) })
    expect(o1).toEqual([{ _tag: "Check", number: 2n }])
    expect(s1.walk).toMatchObject({ _tag: "WalkingBack", orphaned: [{ number: 3n }] })
    expect(s1.window.map((b) => b.number)).toEqual([1n, 2n])
    // A vanished block counts as orphaned too.
    const [s2, o2] = ReorgWindow.step(s1, { _tag: "Canonical", number: 2n, hash: null })
    expect(o2).toEqual([{ _tag: "Check", number: 1n }])
    expect(s2.walk).toMatchObject({ _tag: "WalkingBack", orphaned: [{ number: 2n }, { number: 3n }] })
    const [s3, o3] = ReorgWindow.step(s2, { _tag: "Canonical", number: 1n, hash: hashOf(1) })
    expect(o3).toEqual([{ _tag: "AncestorFound", ancestor: 1n, parentHash: hashOf(1), oldTip: 3n }])
    expect(s3.walk).toMatchObject({ _tag: "Resolving", ancestor: 1n })
    // The stored state is untouched until the caller adopts the result.
    expect(state.window.map((b) => b.number)).toEqual([1n, 2n, 3n])
  })

  it("Branch retracts the orphaned events per mint, then publishes the new branch", () => {
    const { state } = followed()
    let s = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: hashOf(33) })[0]
    s = ReorgWindow.step(s, { _tag: "Canonical", number: 2n, hash: hashOf(22) })[0]
    s = ReorgWindow.step(s, { _tag: "Canonical", number: 1n, hash: hashOf(1) })[0]
    const fresh = [block(2n, 22, 1, [event(2n, 0, { id: "hood:new:0", mint: "0xa" })]), block(3n, 33, 22)]
    const [next, out] = ReorgWindow.step(s, { _tag: "Branch", ...branch(fresh) })
    expect(tags(out)).toEqual(["Publish", "Commit", "Reorged"])
    const published = only(out, "Publish").events
    const retractions = published.filter((e): e is Retracted => e._tag === "Retracted")
    expect(retractions.map((r) => [r.mint, r.retractedIds, r.position, r.id])).toEqual([
      ["0xa", ["hood:tx2-0:0"], hoodPosition(2n, 0), `hood:reorg:${hashOf(3)}:0xa`],
      ["0xb", ["hood:tx2-1:1"], hoodPosition(2n, 0), `hood:reorg:${hashOf(3)}:0xb`],
      ["0xmint", ["hood:tx3-0:0"], hoodPosition(2n, 0), `hood:reorg:${hashOf(3)}:0xmint`]
    ])
    expect(retractions.every((r) => r.timestampMs === 2000)).toBe(true)
    // Undo before redo, in one publish.
    expect(published.map((e) => e.id).slice(3)).toEqual(["hood:new:0"])
    expect(only(out, "Publish").encoded).toHaveLength(published.length)
    expect(only(out, "Commit")).toMatchObject({ keepUpTo: 1n, pruneBelow: 1n, cursor: 3n })
    expect(only(out, "Commit").added.map((b) => b.hash)).toEqual([hashOf(22), hashOf(33)])
    expect(only(out, "Reorged")).toEqual({ _tag: "Reorged", ancestor: 1n, orphanedBlocks: 2, retracted: 3, keptIdentical: 0 })
    expect(next).toMatchObject({ cursor: 3n, walk: null })
    expect(next.window.map((b) => b.hash)).toEqual([hashOf(1), hashOf(22), hashOf(33)])
    expect(ReorgWindow.wasRetracted(next, "hood:tx2-1:1", hoodPosition(2n, 1))).toBe(true)
    expect(ReorgWindow.wasRetracted(next, "hood:tx1-0:0", hoodPosition(1n, 0))).toBe(false)
  })

  it("keeps what the new branch carries identically; renames a re-included (id, position) with other bytes", () => {
    const { state } = followed()
    let s = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: hashOf(33) })[0]
    s = ReorgWindow.step(s, { _tag: "Canonical", number: 2n, hash: hashOf(2) })[0]
    // Block 3 again under another hash carrying e4 in place with the same bytes: nothing to undo.
    // Then block 3'' re-includes e4 at the same (id, position) with other bytes: retract, rename.
    const same = block(3n, 33, 2, [event(3n, 0)])
    const [kept, keptOut] = ReorgWindow.step(s, { _tag: "Branch", ...branch([same]) })
    expect(only(keptOut, "Reorged")).toMatchObject({ retracted: 0, keptIdentical: 1 })
    expect(only(keptOut, "Publish").events).toEqual([])
    expect(kept.window[kept.window.length - 1]!.events.map((e) => e.id)).toEqual(["hood:tx3-0:0"])

    let t = ReorgWindow.step(kept, { _tag: "Canonical", number: 3n, hash: hashOf(333) })[0]
    t = ReorgWindow.step(t, { _tag: "Canonical", number: 2n, hash: hashOf(2) })[0]
    const other = block(3n, 333, 2, [event(3n, 0, { amount: 2n })])
    const [renamed, renamedOut] = ReorgWindow.step(t, { _tag: "Branch", ...branch([other]) })
    const published = only(renamedOut, "Publish").events
    expect(published.map((e) => [e._tag, e.id])).toEqual([
      ["Retracted", `hood:reorg:${hashOf(33)}:0xmint`],
      ["CurveCompleted", `hood:tx3-0:0:r${hashOf(333).slice(2, 10)}`]
    ])
    expect((published[1] as CurveCompleted).realQuoteRaw).toBe(2n)
    // The renamed event's bytes are its own (its new id), and the window remembers it renamed.
    expect(only(renamedOut, "Publish").encoded[1]).toEqual(encodeChainEvent(published[1]!))
    expect(renamed.window[renamed.window.length - 1]!.events.map((e) => e.id)).toEqual([published[1]!.id])
  })

  it("an unreadable new branch retracts everything orphaned and rewinds to the ancestor", () => {
    const { state } = followed()
    let s = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: null })[0]
    s = ReorgWindow.step(s, { _tag: "Canonical", number: 2n, hash: hashOf(2) })[0]
    const [next, out] = ReorgWindow.step(s, { _tag: "Branch", headers: [], events: [], encoded: [] })
    expect(only(out, "Reorged")).toMatchObject({ ancestor: 2n, orphanedBlocks: 1, retracted: 1 })
    expect(only(out, "Publish").events.map((e) => e._tag)).toEqual(["Retracted"])
    expect(only(out, "Publish").events[0]!.timestampMs).toBe(0)
    expect(only(out, "Commit")).toMatchObject({ keepUpTo: 2n, added: [], pruneBelow: 1n, cursor: 2n })
    expect(next).toMatchObject({ cursor: 2n, walk: null })
    expect(next.window.map((b) => b.number)).toEqual([1n, 2n])
  })

  it("a reorg deeper than the window: DeepReorg, only the window's events retracted", () => {
    const { state } = followed(2) // window: blocks 2 and 3; block 1's event is below it
    const [s1] = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: hashOf(33) })
    const [s2, out] = ReorgWindow.step(s1, { _tag: "Canonical", number: 2n, hash: hashOf(22) })
    expect(out).toEqual([
      { _tag: "DeepReorg", oldestWindowBlock: 2n },
      { _tag: "AncestorFound", ancestor: 1n, parentHash: null, oldTip: 3n }
    ])
    const [next, done] = ReorgWindow.step(s2, { _tag: "Branch", ...branch([block(2n, 22, 11), block(3n, 33, 22)]) })
    const retracted = only(done, "Publish").events.flatMap((e) => (e._tag === "Retracted" ? e.retractedIds : []))
    expect(retracted.sort()).toEqual(["hood:tx2-0:0", "hood:tx2-1:1", "hood:tx3-0:0"])
    expect(only(done, "Reorged")).toMatchObject({ ancestor: 1n, orphanedBlocks: 2 })
    expect(next.window.map((b) => b.hash)).toEqual([hashOf(22), hashOf(33)])
  })

  it("an input out of turn is a defect", () => {
    const { state } = followed()
    expect(() => ReorgWindow.step(state, { _tag: "Branch", headers: [], events: [], encoded: [] })).toThrow(/before the ancestor/)
    expect(() => ReorgWindow.step(state, { _tag: "Canonical", number: 2n, hash: hashOf(2) })).toThrow(/the top is 3/)
    const [walking] = ReorgWindow.step(state, { _tag: "Canonical", number: 3n, hash: null })
    expect(() => ReorgWindow.step(walking, { _tag: "Followed", ...branch([block(4n, 4, 3)]) })).toThrow(/during a reorg/)
    expect(() => ReorgWindow.step(walking, { _tag: "Backfilled", to: 9n, events: [], encoded: [] })).toThrow(/during a reorg/)
    const [resolving] = ReorgWindow.step(walking, { _tag: "Canonical", number: 2n, hash: hashOf(2) })
    expect(() => ReorgWindow.step(resolving, { _tag: "Canonical", number: 2n, hash: hashOf(2) })).toThrow(/after the ancestor/)
    // An empty window has no top to check.
    const empty = ReorgWindow.initial(4)
    expect(ReorgWindow.step(empty, { _tag: "Canonical", number: 1n, hash: null })).toEqual([empty, [{ _tag: "Consistent" }]])
  })

  it("remembers at most RETRACTED_MEMORY retracted events, the oldest forgotten", () => {
    const events = Array.from({ length: RETRACTED_MEMORY + 1 }, (_, i) => ({ mint: "0xm", id: `id${i}`, position: hoodPosition(2n, i), digest: "0x" }))
    const window: Array<WindowBlock> = [
      { number: 1n, hash: hashOf(1), parentHash: hashOf(0), events: [] },
      { number: 2n, hash: hashOf(2), parentHash: hashOf(1), events }
    ]
    let s = ReorgWindow.initial(8, { cursor: 2n, window })
    s = ReorgWindow.step(s, { _tag: "Canonical", number: 2n, hash: null })[0]
    s = ReorgWindow.step(s, { _tag: "Canonical", number: 1n, hash: hashOf(1) })[0]
    const [next, out] = ReorgWindow.step(s, { _tag: "Branch", headers: [], events: [], encoded: [] })
    expect(only(out, "Reorged").retracted).toBe(RETRACTED_MEMORY + 1)
    expect(next.retracted.size).toBe(RETRACTED_MEMORY)
    expect(ReorgWindow.wasRetracted(next, "id0", hoodPosition(2n, 0))).toBe(false)
    expect(ReorgWindow.wasRetracted(next, "id1", hoodPosition(2n, 1))).toBe(true)
    expect(ReorgWindow.wasRetracted(next, `id${RETRACTED_MEMORY}`, hoodPosition(2n, RETRACTED_MEMORY))).toBe(true)
  })
})

// ---------------------------------------------------------------------------------------------
// Property: a model chain with reorgs of random depth, followed the way HoodIngester does.

type Op = { readonly kind: "mine"; readonly blocks: number } | { readonly kind: "reorg"; readonly depth: number; readonly blocks: number; readonly keep: number } | { readonly kind: "follow" }

const arbOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("mine" as const), blocks: fc.integer({ min: 1, max: 4 }) }),
  fc.record({
    kind: fc.constant("reorg" as const),
    depth: fc.integer({ min: 1, max: 8 }),
    blocks: fc.integer({ min: 0, max: 6 }),
    // Per event of the orphaned blocks: 0 dropped, 1 re-included identically, 2 re-included with other bytes.
    keep: fc.integer({ min: 0, max: 2 ** 30 })
  }),
  fc.constant({ kind: "follow" as const })
)

/** The ingester's loop (HoodIngester.stepOnce, confirmations 0, no backfill) against the model chain. */
const follower = (windowBlocksMax: number, maxBlocksPerStep: number) => {
  let state: ReorgWindowState = ReorgWindow.initial(windowBlocksMax)
  const published: Array<ChainEvent> = []
  let deepReorgs = 0

  const drive = (chain: ReadonlyArray<Block>, input: ReorgWindow.ReorgInput) => {
    const head = chain[chain.length - 1]!.number
    let s = state
    const inputs = [input]
    let consistent = true
    for (let next = inputs.shift(); next !== undefined; next = inputs.shift()) {
      const [stepped, outputs] = ReorgWindow.step(s, next)
      s = stepped
      for (const out of outputs) {
        if (out._tag === "Check") {
          consistent = false
          inputs.push({ _tag: "Canonical", number: out.number, hash: out.number <= head ? chain[Number(out.number)]!.hash : null })
        } else if (out._tag === "AncestorFound") {
          consistent = false
          const upTo = [head, out.oldTip, out.ancestor + BigInt(maxBlocksPerStep)].reduce((a, b) => (a < b ? a : b))
          const read = chain.slice(Number(out.ancestor) + 1, Number(upTo) + 1)
          expect(out.parentHash === null || read.length === 0 || read[0]!.parentHash === out.parentHash).toBe(true)
          inputs.push({ _tag: "Branch", ...branch(read) })
        } else if (out._tag === "DeepReorg") deepReorgs++
        else if (out._tag === "Publish") published.push(...out.events)
      }
    }
    state = s
    return consistent
  }

  const checkTip = (chain: ReadonlyArray<Block>, tip: WindowBlock) => {
    const head = chain[chain.length - 1]!.number
    return drive(chain, { _tag: "Canonical", number: tip.number, hash: tip.number <= head ? chain[Number(tip.number)]!.hash : null })
  }

  /** One step; true when there is more to do at once. */
  const stepOnce = (chain: ReadonlyArray<Block>): boolean => {
    const head = chain[chain.length - 1]!.number
    const next = state.cursor === null ? 1n : state.cursor + 1n
    const tip = state.window[state.window.length - 1]
    if (tip !== undefined && (tip.number > head || next > head) && !checkTip(chain, tip)) return true
    if (next > head) return false
    const upTo = next + BigInt(maxBlocksPerStep) - 1n < head ? next + BigInt(maxBlocksPerStep) - 1n : head
    const read = chain.slice(Number(next), Number(upTo) + 1)
    if (tip !== undefined && read[0]!.parentHash !== tip.hash) {
      checkTip(chain, tip)
      return true
    }
    drive(chain, { _tag: "Followed", ...branch(read) })
    return upTo < head
  }

  return {
    state: () => state,
    published,
    deepReorgs: () => deepReorgs,
    followToHead: (chain: ReadonlyArray<Block>) => {
      for (let guard = 0; guard < 1_000; guard++) if (!stepOnce(chain)) return
      throw new Error("the follower did not reach the head")
    }
  }
}

describe("ReorgWindow property", () => {
  it("retracts exactly the orphaned blocks' events, never one twice", () => {
    fc.assert(
      fc.property(fc.array(arbOp, { minLength: 5, maxLength: 60 }), fc.integer({ min: 2, max: 6 }), fc.integer({ min: 1, max: 4 }), (ops, windowBlocksMax, maxBlocksPerStep) => {
        let label = 1
        let tx = 0
        const chain: Array<Block> = [block(0n, 0, 0)]
        const mineOne = (carried: ReadonlyArray<ChainEvent> = []) => {
          const parent = chain[chain.length - 1]!
          const number = parent.number + 1n
          const fresh = Array.from({ length: (label * 7) % 3 }, (_, i) => event(number, carried.length + i, { id: `hood:t${tx++}:${i}`, mint: `0x${label % 3}` }))
          const events = [...carried.map((e, i) => (e.position === hoodPosition(number, i) ? e : event(number, i, { id: e.id, mint: e.mint }))), ...fresh]
          chain.push({ ...block(number, label++, 0, events), parentHash: parent.hash })
        }
        const f = follower(windowBlocksMax, maxBlocksPerStep)
        for (const op of ops) {
          if (op.kind === "mine") for (let i = 0; i < op.blocks; i++) mineOne()
          else if (op.kind === "follow") f.followToHead(chain)
          else {
            // Never below the window's oldest block (that would be a deep reorg, tested above), never the genesis.
            const s = f.state()
            const lowest = s.window.length > 0 ? Number(s.window[0]!.number) + 1 : s.cursor === null ? 1 : Number(s.cursor) + 1
            const fork = Math.max(lowest, chain.length - op.depth, 1)
            if (fork >= chain.length) continue
            const orphaned = chain.splice(fork)
            // The first new block re-includes some of the first orphaned block's events: in place
            // (identical bytes), or with other bytes at the same (id, position).
            const carried = orphaned[0]!.events.flatMap((e, i) => {
              const choice = Math.floor(op.keep / 3 ** i) % 3
              return choice === 0 ? [] : choice === 1 ? [e] : [event(BigInt(fork), i, { id: e.id, mint: e.mint, amount: 99n })]
            })
            if (op.blocks > 0) mineOne(carried)
            for (let i = 1; i < op.blocks; i++) mineOne()
          }
        }
        f.followToHead(chain)
        expect(f.deepReorgs()).toBe(0)

        // Replay the published stream: a retraction names only live events; no live id is published twice.
        // (An id may come back at another position: the same transaction in another block.)
        const live = new Map<string, ChainEvent>()
        const retracted = new Set<string>()
        for (const e of f.published) {
          if (e._tag === "Retracted") {
            for (const id of e.retractedIds) {
              const instance = `${id}|${live.get(id)?.position}`
              expect(live.has(id), `retracting ${id}, not live`).toBe(true)
              expect(retracted.has(instance), `${instance} retracted twice`).toBe(false)
              live.delete(id)
              retracted.add(instance)
            }
          } else {
            expect(live.has(e.id), `${e.id} published twice while live`).toBe(false)
            live.set(e.id, e)
          }
        }
        // What stays live is exactly the canonical chain's events (a re-included one may carry a suffixed id).
        const content = (e: ChainEvent) => JSON.stringify({ ...JSON.parse(new TextDecoder().decode(encodeChainEvent(e))), id: e.id.replace(/:r[0-9a-f]{8}$/, "") })
        expect([...live.values()].map(content).sort()).toEqual(chain.flatMap((b) => b.events).map(content).sort())
      }),
      { numRuns: 200 }
    )
  })
})
