/**
 * The Hood localnet's own block production, in front of the EDR provider ("managed" mining):
 *
 * - Block timestamps follow a clock: every block is stamped max(previous block's timestamp, clock
 *   in whole seconds), several blocks may share a second (`allowBlocksWithSameTimestamp`). EDR's
 *   own automine gives each block at least previous + 1 s, so with more than one transaction a
 *   second its clock ran ahead of wall time (about an hour after 33 minutes).
 * - Everything that makes a block goes through one queue, in order: a raw transaction
 *   (`eth_sendRawTransaction`: automine makes it its own block) or an empty block (`mineEmpty`,
 *   on the interval). Each is first written to the journal (when there is one), then mined, so a
 *   block anyone can see is always in the journal, and replaying the journal on a node with the
 *   same genesis reproduces the chain exactly (block hashes included: EDR is deterministic given
 *   the transactions and timestamps).
 * - What the journal could not reproduce is refused: `eth_sendTransaction` (node-side signing),
 *   `evm_*` and `hardhat_*` (snapshots, time travel, state edits). Tests that need those run an
 *   unmanaged node.
 *
 * Reads and subscriptions pass straight through to EDR.
 */
import type { Eip1193Like } from "./HoodNode.js"

export type HoodBlockRecord =
  | { readonly op: "tx"; readonly ts: number; readonly raw: string }
  | { readonly op: "block"; readonly ts: number }

export interface HoodJournal {
  /** Records one block-making request; durable (against a crash of this process) when it returns. */
  append(record: HoodBlockRecord): void
}

/** The provider shape Hardhat's JSON-RPC server needs: requests and the `notification` events of subscriptions. */
export interface EdrProvider extends Eip1193Like {
  addListener(event: string, listener: (...args: Array<any>) => void): unknown
  removeListener(event: string, listener: (...args: Array<any>) => void): unknown
}

export interface HoodMiner extends EdrProvider {
  /** Mines one empty block stamped by the clock (the interval's block). */
  mineEmpty(): Promise<void>
  /** Mines an empty block every `intervalMs` (0: none) until `stop`. */
  startInterval(intervalMs: number): void
  /** Stops the interval and waits for the block being mined. */
  stop(): Promise<void>
  /** Applies journal records (oldest first) without journaling them again; returns how many transactions EDR refused, as it did the first time. */
  replay(records: ReadonlyArray<HoodBlockRecord>): Promise<{ readonly refused: number }>
}

export class HoodMinerRefusal extends Error {
  readonly code = -32601
}

const REFUSED = /^(evm_|hardhat_)|^eth_sendTransaction$/

export const makeHoodMiner = (inner: EdrProvider, options: { readonly clockMs: () => number; readonly journal?: HoodJournal }): HoodMiner => {
  let queue: Promise<unknown> = Promise.resolve()
  let lastTs: number | undefined
  let timer: ReturnType<typeof setInterval> | undefined

  const latestTs = async (): Promise<number> => {
    if (lastTs === undefined) {
      const block = (await inner.request({ method: "eth_getBlockByNumber", params: ["latest", false] })) as { timestamp: string }
      lastTs = Number(BigInt(block.timestamp))
    }
    return lastTs
  }
  /** The timestamp of the next block: never before the previous one, never ahead of the clock unless the previous one is. */
  const nextTs = async () => Math.max(await latestTs(), Math.floor(options.clockMs() / 1000))

  const serial = <A>(task: () => Promise<A>): Promise<A> => {
    const run = queue.then(task, task)
    queue = run.catch(() => undefined)
    return run
  }

  const sendRaw = async (raw: string, ts: number): Promise<unknown> => {
    await inner.request({ method: "evm_setNextBlockTimestamp", params: [ts] })
    const hash = await inner.request({ method: "eth_sendRawTransaction", params: [raw] })
    lastTs = ts
    return hash
  }
  const mineAt = async (ts: number) => {
    await inner.request({ method: "evm_mine", params: [ts] })
    lastTs = ts
  }

  const mineEmpty = () =>
    serial(async () => {
      const ts = await nextTs()
      options.journal?.append({ op: "block", ts })
      await mineAt(ts)
    })

  return {
    request: async (args) => {
      if (args.method === "eth_sendRawTransaction") {
        const raw = args.params?.[0]
        if (typeof raw !== "string") return inner.request(args) // EDR answers the malformed request
        return serial(async () => {
          const ts = await nextTs()
          options.journal?.append({ op: "tx", ts, raw })
          return sendRaw(raw, ts)
        })
      }
      if (REFUSED.test(args.method)) {
        throw new HoodMinerRefusal(`${args.method} is not available on this node: its blocks are journaled and only raw transactions replay`)
      }
      return inner.request(args)
    },
    addListener: (event, listener) => inner.addListener(event, listener),
    removeListener: (event, listener) => inner.removeListener(event, listener),
    mineEmpty,
    startInterval: (intervalMs) => {
      if (intervalMs <= 0 || timer !== undefined) return
      timer = setInterval(() => void mineEmpty().catch(() => undefined), intervalMs)
      timer.unref()
    },
    stop: async () => {
      if (timer !== undefined) clearInterval(timer)
      timer = undefined
      await queue
    },
    replay: (records) =>
      serial(async () => {
        let refused = 0
        for (const r of records) {
          if (r.op === "block") await mineAt(r.ts)
          else await sendRaw(r.raw, r.ts).catch(() => refused++)
        }
        return { refused }
      })
  }
}
