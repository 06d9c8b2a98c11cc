/**
 * The Hood ingester's reorg handling as a pure state machine (the counterpart of Solana's
 * `SlotAssembler`): the window of recent blocks with their hashes and the events each carried,
 * the cursor, and a reorg being walked back. The ingester (HoodIngester.ts) reads the chain and
 * feeds what it read here; this module decides what to publish, what to retract and what to
 * store. `step` is pure: it returns the SAME state object when the input changes nothing, and
 * the caller adopts the new state only once the outputs are done (published, committed), so a
 * failed step leaves nothing half-applied.
 *
 *   Following   ──Backfilled(to, events)────────▶ Following    Publish, Commit (window emptied)
 *   Following   ──Followed(linked branch)───────▶ Following    Publish, Commit (window trimmed)
 *   Following   ──Canonical(top's hash)─────────▶ Following    Consistent
 *   Following   ──Canonical(other hash | none)──▶ WalkingBack  Check(next top)        (top orphaned)
 *   WalkingBack ──Canonical(other hash | none)──▶ WalkingBack  Check(next top)        (top orphaned)
 *   WalkingBack ──Canonical(top's hash)─────────▶ Resolving    AncestorFound(top)
 *   Following | WalkingBack, last block orphaned ▶ Resolving    AncestorFound(deep), DeepReorg
 *   Resolving   ──Branch(new branch above it)───▶ Following    Publish(retractions, then the
 *                                                              new branch), Commit, Reorged
 *
 * Reorgs: the orphaned blocks' events are retracted (one `Retracted` per mint naming their ids),
 * except those the new branch carries identically (same id, position and bytes: a transaction
 * re-included in place); the retractions come before the new branch in one publish, so every
 * mint sees undo then redo in order. An event the new branch re-includes at a retracted (id,
 * position) with other bytes is published under a suffixed id (`…:r<block hash prefix>`): the
 * actors skip a retracted (id, position) as a replayed copy. A reorg deeper than the window
 * cannot be undone: the outcome is `DeepReorg` and the oldest window block's parent is taken as
 * the ancestor (events below the window stay published).
 *
 * Bounds: the window keeps at most `windowBlocksMax` blocks (oldest dropped); the retracted
 * memory at most RETRACTED_MEMORY (id, position) pairs (oldest forgotten).
 */
import { keccak256 } from "viem"
import { type ChainEvent, hoodPosition, Retracted } from "../ChainEvent.js"
import { encodeChainEvent } from "../ChainEventCodec.js"
import type { WindowBlock, WindowEvent } from "./BlockStore.js"

/** Retracted (id, position) pairs remembered per ingester run. */
export const RETRACTED_MEMORY = 10_000

/** `h:<block 20>:` — the part of a Hood position that names the block. */
const BLOCK_PREFIX_LENGTH = 23

const blockPrefix = (position: string): string => position.slice(0, BLOCK_PREFIX_LENGTH)

export const digestOf = (bytes: Uint8Array): string => keccak256(bytes).slice(0, 34)

export interface BlockHeader {
  readonly number: bigint
  readonly hash: string
  readonly parentHash: string
  readonly timestampMs: number
}

/** Blocks read as one linked branch, with their events in chain order and the events' bus bytes. */
export interface ReadBranch {
  readonly headers: ReadonlyArray<BlockHeader>
  readonly events: ReadonlyArray<ChainEvent>
  readonly encoded: ReadonlyArray<Uint8Array>
}

export type Walk =
  /** Window blocks found orphaned so far (oldest first), popped off the window. */
  | { readonly _tag: "WalkingBack"; readonly orphaned: ReadonlyArray<WindowBlock> }
  /** The common ancestor is known; the new branch above it is awaited. */
  | { readonly _tag: "Resolving"; readonly orphaned: ReadonlyArray<WindowBlock>; readonly ancestor: bigint }

export interface ReorgWindowState {
  readonly windowBlocksMax: number
  /** Last block whose events are published, or null before the first. */
  readonly cursor: bigint | null
  /** Recent blocks, oldest first, ending at the cursor (during a walk: without the orphaned ones). */
  readonly window: ReadonlyArray<WindowBlock>
  readonly walk: Walk | null
  /** `id|position` of retracted events, oldest first (at most RETRACTED_MEMORY). */
  readonly retracted: ReadonlySet<string>
}

export type ReorgInput =
  /** Final blocks up to `to` were published in ranges: no window below them. */
  | { readonly _tag: "Backfilled"; readonly to: bigint; readonly events: ReadonlyArray<ChainEvent>; readonly encoded: ReadonlyArray<Uint8Array> }
  /** A branch linked to the window's tip (or the first after a backfill). */
  | ({ readonly _tag: "Followed" } & ReadBranch)
  /** The canonical hash at the height of the window's top (null: no block there). */
  | { readonly _tag: "Canonical"; readonly number: bigint; readonly hash: string | null }
  /** The new branch above the ancestor (empty when it could not be read linked). */
  | ({ readonly _tag: "Branch" } & ReadBranch)

export interface CommitRecord {
  /** Drop stored window rows above it (a reorg's ancestor); null: none. */
  readonly keepUpTo: bigint | null
  readonly added: ReadonlyArray<WindowBlock>
  readonly pruneBelow: bigint
  readonly cursor: bigint
}

export type ReorgOutput =
  | { readonly _tag: "Publish"; readonly events: ReadonlyArray<ChainEvent>; readonly encoded: ReadonlyArray<Uint8Array> }
  | ({ readonly _tag: "Commit" } & CommitRecord)
  /** The top is still canonical: no reorg. */
  | { readonly _tag: "Consistent" }
  /** Walking back: read the canonical hash at this height and step `Canonical`. */
  | { readonly _tag: "Check"; readonly number: bigint }
  /** Read the new branch above `ancestor` (linked to `parentHash`; null: unchecked) up to at most `oldTip`, then step `Branch`. */
  | { readonly _tag: "AncestorFound"; readonly ancestor: bigint; readonly parentHash: string | null; readonly oldTip: bigint }
  /** The reorg orphaned the whole window: events below it cannot be retracted. */
  | { readonly _tag: "DeepReorg"; readonly oldestWindowBlock: bigint }
  | { readonly _tag: "Reorged"; readonly ancestor: bigint; readonly orphanedBlocks: number; readonly retracted: number; readonly keptIdentical: number }

export const initial = (windowBlocksMax: number, stored: { readonly cursor: bigint | null; readonly window: ReadonlyArray<WindowBlock> } = { cursor: null, window: [] }): ReorgWindowState => ({
  windowBlocksMax: Math.max(1, Math.floor(windowBlocksMax)),
  cursor: stored.cursor,
  window: trim(stored.window, windowBlocksMax),
  walk: null,
  retracted: new Set()
})

/** True when an event at this (id, position) was retracted this run: a re-inclusion must be renamed. */
export const wasRetracted = (state: ReorgWindowState, id: string, position: string): boolean =>
  state.retracted.size > 0 && state.retracted.has(`${id}|${position}`)

/** The same event under another id (same class, same fields). */
export const withId = (e: ChainEvent, id: string): ChainEvent => {
  const copy = Object.create(Object.getPrototypeOf(e) as object) as Record<string, unknown>
  Object.assign(copy, e, { id })
  return copy as unknown as ChainEvent
}

/** The id a re-included event takes after its (id, position) was retracted, in the block `blockHash`. */
export const reincludedId = (id: string, blockHash: string): string => `${id}:r${blockHash.slice(2, 10)}`

const trim = (window: ReadonlyArray<WindowBlock>, max: number): ReadonlyArray<WindowBlock> =>
  window.length > max ? window.slice(window.length - max) : window

/** Each header as a window block carrying its events (positions start with the block's prefix). */
export const blocksOf = (branch: ReadBranch): Array<WindowBlock> => {
  const byBlock = new Map<string, Array<WindowEvent>>()
  branch.events.forEach((e, i) => {
    const entry = { mint: e.mint, id: e.id, position: e.position, digest: digestOf(branch.encoded[i]!) }
    const list = byBlock.get(blockPrefix(e.position))
    if (list === undefined) byBlock.set(blockPrefix(e.position), [entry])
    else list.push(entry)
  })
  return branch.headers.map((h) => ({
    number: h.number,
    hash: h.hash,
    parentHash: h.parentHash,
    events: byBlock.get(blockPrefix(hoodPosition(h.number, 0))) ?? []
  }))
}

const remember = (retracted: ReadonlySet<string>, keys: ReadonlyArray<string>): ReadonlySet<string> => {
  if (keys.length === 0) return retracted
  const next = new Set(retracted)
  for (const key of keys) {
    next.delete(key)
    next.add(key)
  }
  for (const key of next) {
    if (next.size <= RETRACTED_MEMORY) break
    next.delete(key)
  }
  return next
}

/** The top of the window was found orphaned: pop it; the walk goes on, or ends at the window's bottom. */
const orphanTop = (state: ReorgWindowState, orphanedSoFar: ReadonlyArray<WindowBlock>): [ReorgWindowState, ReadonlyArray<ReorgOutput>] => {
  const top = state.window[state.window.length - 1]!
  const window = state.window.slice(0, -1)
  const orphaned = [top, ...orphanedSoFar]
  const oldTip = orphaned[orphaned.length - 1]!.number
  const below = window[window.length - 1]
  if (below !== undefined) {
    return [{ ...state, window, walk: { _tag: "WalkingBack", orphaned } }, [{ _tag: "Check", number: below.number }]]
  }
  const ancestor = top.number - 1n
  return [
    { ...state, window, walk: { _tag: "Resolving", orphaned, ancestor } },
    [
      { _tag: "DeepReorg", oldestWindowBlock: top.number },
      { _tag: "AncestorFound", ancestor, parentHash: null, oldTip }
    ]
  ]
}

/** The new branch replaces the orphaned blocks: retract what it does not carry identically, publish the rest. */
const resolve = (
  state: ReorgWindowState,
  walk: Extract<Walk, { _tag: "Resolving" }>,
  branch: ReadBranch
): [ReorgWindowState, ReadonlyArray<ReorgOutput>] => {
  const { orphaned, ancestor } = walk
  const orphanedEvents = orphaned.flatMap((b) => b.events)
  const orphanedKeys = new Set(orphanedEvents.map((e) => `${e.id}|${e.position}|${e.digest}`))
  const freshKeys = branch.events.map((e, i) => `${e.id}|${e.position}|${digestOf(branch.encoded[i]!)}`)
  const kept = new Set(freshKeys.filter((k) => orphanedKeys.has(k)))
  const toRetract = orphanedEvents.filter((e) => !kept.has(`${e.id}|${e.position}|${e.digest}`))
  const retracted = remember(
    state.retracted,
    toRetract.map((e) => `${e.id}|${e.position}`)
  )
  // Identical events stay as published; the rest is published, renamed when it reuses a retracted (id, position).
  const hashOf = new Map(branch.headers.map((h) => [blockPrefix(hoodPosition(h.number, 0)), h.hash]))
  const branchEvents: Array<ChainEvent> = []
  const branchEncoded: Array<Uint8Array> = []
  const newEvents: Array<ChainEvent> = []
  const newEncoded: Array<Uint8Array> = []
  branch.events.forEach((e, i) => {
    const bytes = branch.encoded[i]!
    if (kept.has(freshKeys[i]!)) {
      branchEvents.push(e)
      branchEncoded.push(bytes)
      return
    }
    const renamed = retracted.has(`${e.id}|${e.position}`) ? withId(e, reincludedId(e.id, hashOf.get(blockPrefix(e.position)) ?? "0x")) : e
    const renamedBytes = renamed === e ? bytes : encodeChainEvent(renamed)
    branchEvents.push(renamed)
    branchEncoded.push(renamedBytes)
    newEvents.push(renamed)
    newEncoded.push(renamedBytes)
  })
  const freshBlocks = blocksOf({ headers: branch.headers, events: branchEvents, encoded: branchEncoded })
  const byMint = new Map<string, Array<WindowEvent>>()
  for (const e of toRetract) {
    const list = byMint.get(e.mint)
    if (list === undefined) byMint.set(e.mint, [e])
    else list.push(e)
  }
  const oldTipHash = orphaned[orphaned.length - 1]!.hash
  const retractions = [...byMint.entries()].map(
    ([mint, list]) =>
      new Retracted({
        id: `hood:reorg:${oldTipHash}:${mint}`,
        position: hoodPosition(ancestor + 1n, 0),
        chain: "hood",
        mint,
        timestampMs: branch.headers[0]?.timestampMs ?? 0,
        signature: "",
        retractedIds: list.map((e) => e.id)
      })
  )
  const window = trim([...state.window, ...freshBlocks], state.windowBlocksMax)
  const cursor = freshBlocks.length > 0 ? freshBlocks[freshBlocks.length - 1]!.number : ancestor
  return [
    { ...state, window, cursor, walk: null, retracted },
    [
      { _tag: "Publish", events: [...retractions, ...newEvents], encoded: [...retractions.map(encodeChainEvent), ...newEncoded] },
      { _tag: "Commit", keepUpTo: ancestor, added: freshBlocks, pruneBelow: window[0]?.number ?? cursor + 1n, cursor },
      { _tag: "Reorged", ancestor, orphanedBlocks: orphaned.length, retracted: toRetract.length, keptIdentical: kept.size }
    ]
  ]
}

/** Pure. Returns the SAME state object when the input changes nothing. An input out of turn is a defect (throws). */
export const step = (state: ReorgWindowState, input: ReorgInput): [ReorgWindowState, ReadonlyArray<ReorgOutput>] => {
  switch (input._tag) {
    case "Backfilled": {
      if (state.walk !== null) throw new Error("ReorgWindow: Backfilled during a reorg")
      return [
        { ...state, window: [], cursor: input.to },
        [
          { _tag: "Publish", events: input.events, encoded: input.encoded },
          { _tag: "Commit", keepUpTo: null, added: [], pruneBelow: input.to + 1n, cursor: input.to }
        ]
      ]
    }
    case "Followed": {
      if (state.walk !== null) throw new Error("ReorgWindow: Followed during a reorg")
      const last = input.headers[input.headers.length - 1]
      if (last === undefined) return [state, []]
      const added = blocksOf(input)
      const window = trim([...state.window, ...added], state.windowBlocksMax)
      return [
        { ...state, window, cursor: last.number },
        [
          { _tag: "Publish", events: input.events, encoded: input.encoded },
          { _tag: "Commit", keepUpTo: null, added, pruneBelow: window[0]!.number, cursor: last.number }
        ]
      ]
    }
    case "Canonical": {
      if (state.walk?._tag === "Resolving") throw new Error("ReorgWindow: Canonical after the ancestor was found")
      const top = state.window[state.window.length - 1]
      if (top === undefined) return [state, [{ _tag: "Consistent" }]]
      if (input.number !== top.number) throw new Error(`ReorgWindow: Canonical for block ${input.number}, the top is ${top.number}`)
      if (input.hash === top.hash) {
        if (state.walk === null) return [state, [{ _tag: "Consistent" }]]
        const oldTip = state.walk.orphaned[state.walk.orphaned.length - 1]!.number
        return [
          { ...state, walk: { _tag: "Resolving", orphaned: state.walk.orphaned, ancestor: top.number } },
          [{ _tag: "AncestorFound", ancestor: top.number, parentHash: top.hash, oldTip }]
        ]
      }
      return orphanTop(state, state.walk?.orphaned ?? [])
    }
    case "Branch": {
      if (state.walk?._tag !== "Resolving") throw new Error("ReorgWindow: Branch before the ancestor was found")
      return resolve(state, state.walk, input)
    }
  }
}
