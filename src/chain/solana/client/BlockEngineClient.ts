/**
 * A Jito-shaped block engine over JSON-RPC (`sendBundle`, `getInflightBundleStatuses`, `getTipAccounts`), as the
 * atomic launch uses it. Every call has a deadline; an answer that does not come, or comes as a
 * server error, is `NoAnswer`: the bundle may or may not have been processed, which only the chain
 * can tell. A `-32602` refusal is `Refused`: the engine processed nothing.
 */
import { postJsonRpc } from "../../JsonRpcPost.js"

export interface BlockEngineClientOptions {
  readonly url: string
  /** Per call (default 5 s). */
  readonly timeoutMs?: number
}

export type SendAnswer =
  | { readonly _tag: "Sent"; readonly bundleId: string }
  | { readonly _tag: "Refused"; readonly detail: string }
  | { readonly _tag: "NoAnswer"; readonly detail: string }

export type InflightAnswer =
  | { readonly _tag: "Landed"; readonly slot: bigint }
  | { readonly _tag: "Failed" }
  /** Not known to the engine (yet, or any more). */
  | { readonly _tag: "Invalid" }
  | { readonly _tag: "NoAnswer"; readonly detail: string }

const INVALID_PARAMS = -32602

export interface BlockEngineClient {
  readonly sendBundle: (wiresBase64: ReadonlyArray<string>, revertible: ReadonlyArray<number>) => Promise<SendAnswer>
  readonly inflightStatus: (bundleId: string) => Promise<InflightAnswer>
  /** The engine's tip accounts (`getTipAccounts`); a string says why they could not be read. */
  readonly tipAccounts: () => Promise<ReadonlyArray<string> | string>
}

export const makeBlockEngineClient = (o: BlockEngineClientOptions): BlockEngineClient => {
  const timeoutMs = o.timeoutMs ?? 5_000
  const call = async (method: string, params: ReadonlyArray<unknown>): Promise<{ result?: unknown; error?: { code: number; message: string } } | string> => {
    try {
      const res = await postJsonRpc(o.url, method, params, timeoutMs)
      if (res.status >= 500) return `HTTP ${res.status}`
      return res.json() as { result?: unknown; error?: { code: number; message: string } }
    } catch (e) {
      return e instanceof Error ? e.message : String(e)
    }
  }
  return {
    sendBundle: async (wires, revertible) => {
      const r = await call("sendBundle", [wires, { encoding: "base64", ...(revertible.length > 0 ? { revertible } : {}) }])
      if (typeof r === "string") return { _tag: "NoAnswer", detail: r }
      if (r.error !== undefined) return r.error.code === INVALID_PARAMS ? { _tag: "Refused", detail: r.error.message } : { _tag: "NoAnswer", detail: r.error.message }
      return typeof r.result === "string" ? { _tag: "Sent", bundleId: r.result } : { _tag: "NoAnswer", detail: "sendBundle answered no id" }
    },
    inflightStatus: async (bundleId) => {
      const r = await call("getInflightBundleStatuses", [[bundleId]])
      if (typeof r === "string") return { _tag: "NoAnswer", detail: r }
      if (r.error !== undefined) return { _tag: "NoAnswer", detail: r.error.message }
      const v = (r.result as { value?: ReadonlyArray<{ status?: string; landed_slot?: number | null }> } | undefined)?.value?.[0]
      if (v?.status === "Landed" && typeof v.landed_slot === "number") return { _tag: "Landed", slot: BigInt(v.landed_slot) }
      if (v?.status === "Failed") return { _tag: "Failed" }
      if (v?.status === "Invalid") return { _tag: "Invalid" }
      return { _tag: "NoAnswer", detail: "unexpected status answer" }
    },
    tipAccounts: async () => {
      const r = await call("getTipAccounts", [])
      if (typeof r === "string") return r
      if (r.error !== undefined) return r.error.message
      return Array.isArray(r.result) && r.result.length > 0 && r.result.every((a) => typeof a === "string")
        ? (r.result as ReadonlyArray<string>)
        : "getTipAccounts answered no accounts"
    }
  }
}
