/**
 * The Hood localnet kept in a directory, so a restart (clean or `kill -9`) continues the same
 * chain. EDR (Hardhat 2.29) offers no state dump (`hardhat_dumpState` is anvil's, not Hardhat's),
 * and a state dump would not carry the blocks and logs the ingester resumes from anyway; so the
 * node's input is journaled instead (`node.journal`, an `AppendLog`):
 *
 *   header {kind, v, chainId, genesisMs} · the managed miner's records (each raw transaction and
 *   empty block with its timestamp, written before it is mined) · {op: "deployed", addresses}
 *   after the stack's deploy, and more miner records after it.
 *
 * Opening returns what to replay. A journal without the `deployed` record (a crash during the
 * first deploy, before the engine could see anything) is discarded and a new chain starts.
 */
import * as path from "node:path"
import { type AppendLog, openAppendLog } from "../../journal/AppendLog.js"
import type { HoodAddresses } from "./Deploy.js"
import type { HoodBlockRecord, HoodJournal } from "./HoodMiner.js"

export const HOOD_JOURNAL_FILE = "node.journal"

interface Header {
  readonly kind: "curvestream/hood-node"
  readonly v: 1
  readonly chainId: number
  readonly genesisMs: number
}

interface Deployed {
  readonly op: "deployed"
  readonly addresses: HoodAddresses
}

const isHeader = (r: unknown, chainId: number): r is Header => {
  const h = r as Partial<Header> | null
  return typeof h === "object" && h !== null && h.kind === "curvestream/hood-node" && h.v === 1 && h.chainId === chainId && typeof h.genesisMs === "number"
}

export interface StoredHoodNode {
  /** Genesis time of the chain (the node's `initialDate`). */
  readonly genesisMs: number
  /** What to replay before serving (empty for a new chain). */
  readonly replay: ReadonlyArray<HoodBlockRecord>
  /** The deployed stack when the chain continues; undefined: deploy, then `markDeployed`. */
  readonly deployed: HoodAddresses | undefined
  /** True when an incomplete or foreign journal was discarded. */
  readonly discarded: boolean
  readonly tornBytes: number
  readonly journal: HoodJournal
  markDeployed(addresses: HoodAddresses): void
  close(): void
}

/** Opens (or starts) the chain kept in `dir`; `fsync` syncs each record before its block is mined. */
export const openStoredHoodNode = (dir: string, o: { readonly chainId: number; readonly nowMs: () => number; readonly fsync: boolean }): StoredHoodNode => {
  const log: AppendLog = openAppendLog(path.join(dir, HOOD_JOURNAL_FILE))
  const records = log.records
  const deployedAt = records.findIndex((r) => (r as Partial<Deployed> | null)?.op === "deployed")
  const resumable = records.length > 0 && isHeader(records[0], o.chainId) && deployedAt > 0
  let genesisMs: number
  if (resumable) {
    genesisMs = (records[0] as Header).genesisMs
  } else {
    log.reset()
    genesisMs = o.nowMs()
    log.append({ kind: "curvestream/hood-node", v: 1, chainId: o.chainId, genesisMs } satisfies Header)
    log.sync()
  }
  const append = (r: unknown) => {
    log.append(r)
    if (o.fsync) log.sync()
  }
  return {
    genesisMs,
    replay: resumable ? (records.slice(1).filter((r) => (r as Partial<Deployed>).op !== "deployed") as ReadonlyArray<HoodBlockRecord>) : [],
    deployed: resumable ? (records[deployedAt] as Deployed).addresses : undefined,
    discarded: !resumable && records.length > 0,
    tornBytes: log.tornBytes,
    journal: { append },
    markDeployed: (addresses) => {
      append({ op: "deployed", addresses } satisfies Deployed)
      log.sync()
    },
    close: () => log.close()
  }
}
