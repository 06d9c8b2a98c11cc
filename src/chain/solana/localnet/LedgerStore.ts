/**
 * The Solana localnet's ledger kept in a directory, so a restart (clean or `kill -9`) continues the
 * same chain: `ledger.journal` (an `AppendLog`) starts with a header naming this chain's genesis
 * (a seed drawn once, so every new chain has its own genesis hash, and slot 0's block time) and
 * then holds the ledger's `LedgerRecord`s: each landed transaction or bundle, written before the
 * ledger lands it, and each slot close, written (and, with `fsync`, synced) before the slot's
 * `confirmed` status reaches Geyser subscribers. Opening replays the records on a new `Ledger`.
 *
 * So anything a client or the ingester has seen is in the journal; a torn last line is dropped at
 * open (it was never exposed). Replay time grows with the chain's length (every slot close and
 * transaction since genesis; measured in docs/decisions.md).
 */
import { randomBytes } from "node:crypto"
import * as path from "node:path"
import { type AppendLog, openAppendLog } from "../../journal/AppendLog.js"
import { Ledger, type LedgerOptions, type LedgerRecord } from "./Ledger.js"

export const LEDGER_JOURNAL_FILE = "ledger.journal"

interface Header {
  readonly kind: "curvestream/solana-ledger"
  readonly v: 1
  readonly genesisSeed: string
  readonly genesisTimeSec: number
}

const isHeader = (r: unknown): r is Header => {
  const h = r as Partial<Header> | null
  return typeof h === "object" && h !== null && h.kind === "curvestream/solana-ledger" && h.v === 1 &&
    typeof h.genesisSeed === "string" && typeof h.genesisTimeSec === "number"
}

export interface StoredLedger {
  readonly ledger: Ledger
  /** Records replayed (0 for a new chain). */
  readonly replayed: number
  /** True when the directory held no chain and a new genesis was written. */
  readonly created: boolean
  readonly replayMs: number
  readonly tornBytes: number
  close(): void
}

export class LedgerStoreError extends Error {}

/**
 * Opens (or creates) the ledger kept in `dir`. `options` are the ledger's (a `genesisSeed` in them
 * is ignored: the stored chain's wins); `fsync` syncs the journal at every slot close.
 */
export const openStoredLedger = (dir: string, options: LedgerOptions = {}, fsync = true): StoredLedger => {
  const log: AppendLog = openAppendLog(path.join(dir, LEDGER_JOURNAL_FILE))
  try {
    let header = log.records[0]
    const created = header === undefined
    if (header === undefined) {
      const clockMs = options.clockMs ?? Date.now
      header = {
        kind: "curvestream/solana-ledger",
        v: 1,
        genesisSeed: `curvestream-localnet/${randomBytes(16).toString("hex")}`,
        genesisTimeSec: Math.floor(clockMs() / 1000)
      } satisfies Header
      log.append(header)
      log.sync()
    }
    if (!isHeader(header)) throw new LedgerStoreError(`${log.path} does not start with a Solana ledger header`)
    const ledger = new Ledger({
      ...options,
      genesisSeed: header.genesisSeed,
      genesisTimeSec: header.genesisTimeSec,
      journal: {
        append: (r) => log.append(r),
        slotClosed: () => {
          if (fsync) log.sync()
        }
      }
    })
    const started = performance.now()
    const records = log.records.slice(1) as ReadonlyArray<LedgerRecord>
    ledger.replay(records)
    return {
      ledger,
      replayed: records.length,
      created,
      replayMs: Math.round(performance.now() - started),
      tornBytes: log.tornBytes,
      close: () => log.close()
    }
  } catch (e) {
    log.close()
    throw e
  }
}
