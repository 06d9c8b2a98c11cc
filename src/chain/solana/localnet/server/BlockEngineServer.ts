/**
 * The localnet's block engine: Jito's bundle JSON-RPC (`/api/v1/bundles` and siblings; any path
 * is accepted, routing is by method) over the ledger's all-or-none `submitBundle`.
 *
 * - `sendBundle [[tx…], {encoding}]`: 1..5 transactions, base58 (default) or base64. A bundle the
 *   engine can refuse up front (empty, more than 5, undecodable, a duplicate transaction, tips
 *   below `minTipLamports`) is a `-32602` error and leaves nothing. Otherwise the answer is the
 *   bundle id (Jito's: hex sha256 of the first signatures) and the bundle either lands whole in
 *   the open slot or not at all (a transaction the ledger refuses or that fails): then its
 *   in-flight status is `Failed` and none of its transactions ever gets a signature status.
 * - `getBundleStatuses [[id…]]` (≤ 5): landed bundles with their slot, transactions and
 *   confirmation status; null for others.
 * - `getInflightBundleStatuses [[id…]]` (≤ 5): `Landed` (with `landed_slot`), `Failed`, or
 *   `Invalid` for an id it does not know.
 * - `getTipAccounts`: the ledger's tip accounts.
 * - `sendBundle`'s config may name `revertible` transaction indexes (never 0): such a transaction
 *   may fail on chain without dropping the bundle (it lands failed, fee paid; the ledger's
 *   `BundleOptions`). This is how an atomic launch's buy leg can fail inside a landed bundle while
 *   the launch leg must land (docs/decisions.md, "Atomic bundles").
 * - Fault switch (tests only, `faultSwitch: true`): `localnet_setBundleFaults [{hideOutcomes}]`.
 *   While `hideOutcomes` is on, `sendBundle` still executes the bundle (it lands or not) but answers
 *   an internal error instead of the id, and both status methods answer as if they had never seen
 *   it (null / `Invalid`), for good: the sender's only way to learn the outcome is to read the chain.
 * Bounds: body and batch as the RPC server; the in-flight table keeps the newest
 * `maxTrackedBundles` outcomes (oldest evicted first).
 */
import { getBase58Encoder } from "@solana/kit"
import type { Ledger } from "../Ledger.js"
import { MAX_BUNDLE_TRANSACTIONS } from "../Ledger.js"
import { invalidParams, JsonRpcCode, JsonRpcError, type MethodHandler, type RunningServer, startJsonRpcHttpServer } from "./internal/httpJsonRpc.js"
import { arrayParam, boolOption, configAt, requiredAt, stringOption } from "./internal/params.js"

export interface BlockEngineServerOptions {
  readonly host: string
  readonly port: number
  readonly maxBodyBytes: number
  readonly maxBatch: number
  /** The bundle's transfers to tip accounts must add up to at least this. */
  readonly minTipLamports: bigint
  readonly maxTrackedBundles: number
  /** Serve `localnet_setBundleFaults` (tests). */
  readonly faultSwitch: boolean
}

export interface BundleFaults {
  /** Execute bundles but lose the acknowledgement and every status of them. */
  readonly hideOutcomes: boolean
}

export const defaultBlockEngineServerOptions: BlockEngineServerOptions = {
  host: "127.0.0.1",
  port: 0,
  maxBodyBytes: 1024 * 1024,
  maxBatch: 20,
  minTipLamports: 1_000n,
  maxTrackedBundles: 10_000,
  faultSwitch: false
}

/** Ids per getBundleStatuses / getInflightBundleStatuses request, as Jito's. */
export const MAX_BUNDLE_IDS_PER_REQUEST = 5

const base58 = getBase58Encoder()

type InflightStatus = { readonly status: "Landed"; readonly slot: bigint } | { readonly status: "Failed"; readonly detail: string }

const decodeTransaction = (v: unknown, encoding: "base58" | "base64", index: number): Uint8Array => {
  if (typeof v !== "string") throw invalidParams(`bundle transaction ${index} must be an encoded string`)
  try {
    return encoding === "base58" ? new Uint8Array(base58.encode(v)) : new Uint8Array(Buffer.from(v, "base64"))
  } catch {
    throw invalidParams(`bundle transaction ${index} is not valid ${encoding}`)
  }
}

const idsParam = (p: ReadonlyArray<unknown>): ReadonlyArray<string> => {
  const ids = arrayParam(requiredAt(p, 0, "bundle ids"), "bundle ids", MAX_BUNDLE_IDS_PER_REQUEST)
  return ids.map((id) => {
    if (typeof id !== "string") throw invalidParams("bundle ids must be strings")
    return id
  })
}

const revertibleParam = (v: unknown): ReadonlyArray<number> => {
  if (v === undefined || v === null) return []
  const list = arrayParam(v, "revertible", MAX_BUNDLE_TRANSACTIONS)
  return list.map((i) => {
    if (typeof i !== "number" || !Number.isSafeInteger(i)) throw invalidParams("revertible must list transaction indexes")
    return i
  })
}

export const blockEngineMethods = (ledger: Ledger, o: BlockEngineServerOptions): ReadonlyMap<string, MethodHandler> => {
  const inflight = new Map<string, InflightStatus>()
  let faults: BundleFaults = { hideOutcomes: false }
  /** Bundles whose outcome the fault switch hid; bounded like the in-flight table. */
  const hidden = new Set<string>()
  const hide = (bundleId: string) => {
    hidden.add(bundleId)
    while (hidden.size > o.maxTrackedBundles) {
      const oldest = hidden.values().next()
      if (oldest.done === true) break
      hidden.delete(oldest.value)
    }
  }
  const track = (bundleId: string, status: InflightStatus) => {
    inflight.delete(bundleId)
    inflight.set(bundleId, status)
    while (inflight.size > o.maxTrackedBundles) {
      const oldest = inflight.keys().next()
      if (oldest.done === true) break
      inflight.delete(oldest.value)
    }
  }

  const methods: Record<string, MethodHandler> = {
    sendBundle: (p) => {
      const raw = requiredAt(p, 0, "transactions")
      if (!Array.isArray(raw)) throw invalidParams("sendBundle takes an array of encoded transactions")
      if (raw.length === 0) throw invalidParams("bundle must contain at least one transaction")
      if (raw.length > MAX_BUNDLE_TRANSACTIONS) {
        throw invalidParams(`bundle contains ${raw.length} transactions; at most ${MAX_BUNDLE_TRANSACTIONS} are allowed`)
      }
      const config = configAt(p, 1)
      const encoding = stringOption(config, "encoding", ["base58", "base64"] as const, "base58")
      const revertible = revertibleParam(config["revertible"])
      const wires = raw.map((tx, i) => decodeTransaction(tx, encoding, i))
      const r = ledger.submitBundle(wires, { minLamports: o.minTipLamports }, { revertible })
      if (faults.hideOutcomes && r.bundleId !== null) {
        hide(r.bundleId)
        throw new JsonRpcError(JsonRpcCode.InternalError, "block engine did not acknowledge the bundle (fault switch)")
      }
      if (r._tag === "Landed") {
        track(r.bundleId, { status: "Landed", slot: r.slot })
        return r.bundleId
      }
      if (r.bundleId !== null && (r.reason === "transaction_rejected" || r.reason === "transaction_failed")) {
        track(r.bundleId, { status: "Failed", detail: r.detail })
        return r.bundleId
      }
      throw invalidParams(`bundle refused (${r.reason}): ${r.detail}`)
    },

    getBundleStatuses: (p) => ({
      context: { slot: ledger.slot },
      value: idsParam(p).map((id) => {
        const b = hidden.has(id) ? undefined : ledger.getBundle(id)
        if (b === undefined) return null
        return {
          bundle_id: b.bundleId,
          transactions: b.signatures,
          slot: b.slot,
          confirmation_status: ledger.commitmentOfSlot(b.slot) ?? "finalized",
          err: { Ok: null }
        }
      })
    }),

    getInflightBundleStatuses: (p) => ({
      context: { slot: ledger.slot },
      value: idsParam(p).map((id) => {
        const s = hidden.has(id) ? undefined : inflight.get(id)
        if (s === undefined) return { bundle_id: id, status: "Invalid", landed_slot: null }
        return s.status === "Landed"
          ? { bundle_id: id, status: "Landed", landed_slot: s.slot }
          : { bundle_id: id, status: "Failed", landed_slot: null }
      })
    }),

    getTipAccounts: () => ledger.tipAccounts
  }
  if (o.faultSwitch) {
    methods["localnet_setBundleFaults"] = (p) => {
      faults = { hideOutcomes: boolOption(configAt(p, 0), "hideOutcomes", false) }
      return faults
    }
  }
  return new Map(Object.entries(methods))
}

export const startBlockEngineServer = (ledger: Ledger, options: Partial<BlockEngineServerOptions> = {}): Promise<RunningServer> => {
  const o = { ...defaultBlockEngineServerOptions, ...options }
  return startJsonRpcHttpServer({
    name: "block-engine",
    host: o.host,
    port: o.port,
    maxBodyBytes: o.maxBodyBytes,
    maxBatch: o.maxBatch,
    methods: blockEngineMethods(ledger, o)
  })
}
