/**
 * Request decoding for the key routes (spec document 2, section 2.1 and 4.1): each decoder turns
 * a parsed JSON body (or a query value) into the typed input `KeyService` takes, or into the
 * spec's field-level `VALIDATION_FAILED` naming the first bad field. Pure; time is a parameter.
 * Business rules (agent features, delegation, the active-key limit, tighten-only) stay in the
 * service.
 */
import { type ApiError, validationFailed } from "../../src/domain/ApiError.js"
import type { Decoded } from "./ServiceCall.js"
import { RAW_POSITIVE, type SpendAsset, SpendAssets, type SpendLimit, type TxLimit, type TxLimitReset, TxLimitResets, parseUsageDays } from "../../src/services/keys/KeyRules.js"
import {
  type AccessRequest,
  AVATAR_MAX_CHARS,
  HISTORY_LIMIT_MAX,
  type IssueRequest,
  LABEL_MAX_CHARS,
  type PatchRequest
} from "../../src/services/keys/KeyService.js"
import { boundNeedsWrite, DefaultIssueScopes, isPublicScope, normalizeScopes, parseAccessLevel, PublicScopes } from "../../src/services/keys/Scopes.js"

const DAY_MS = 86_400_000

export type { Decoded } from "./ServiceCall.js"

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v)
const failed = (x: unknown): x is ApiError => isObject(x) && x._tag === "ApiError"

/** 1 to 64 characters after trimming (code points). */
export const decodeLabel = (raw: unknown, field = "label"): Decoded<string> => {
  if (typeof raw !== "string") return validationFailed(field, "label must be a string")
  const t = raw.trim()
  const n = [...t].length
  return n < 1 || n > LABEL_MAX_CHARS ? validationFailed(field, `label must be 1 to ${LABEL_MAX_CHARS} characters after trimming`) : t
}

export const decodeTxLimit = (raw: unknown, field = "txLimit"): Decoded<TxLimit> => {
  if (!isObject(raw)) return validationFailed(field, "txLimit must be {usdMicros, reset}")
  const { usdMicros, reset, ...rest } = raw
  const unknownKey = Object.keys(rest)[0]
  if (unknownKey !== undefined) return validationFailed(`${field}.${unknownKey}`, `Unknown field '${unknownKey}'`)
  if (typeof usdMicros !== "number" || !Number.isSafeInteger(usdMicros) || usdMicros <= 0) {
    return validationFailed(`${field}.usdMicros`, "usdMicros must be a positive integer")
  }
  if (typeof reset !== "string" || !(TxLimitResets as ReadonlyArray<string>).includes(reset)) {
    return validationFailed(`${field}.reset`, `reset must be one of ${TxLimitResets.join(", ")}`)
  }
  return { usdMicros, reset: reset as TxLimitReset }
}

/** An optional member: null when absent, else the decoded value or the refusal. */
const optional = <A>(raw: unknown, decode: (raw: unknown) => Decoded<A>): Decoded<A | null> => (raw === undefined ? null : decode(raw))

/** The issue body; every field optional, a null value reads as absent. */
export const decodeIssueBody = (body: unknown, nowMs: number): Decoded<IssueRequest> => {
  if (body === undefined) body = {}
  if (!isObject(body)) return validationFailed("body", "Body must be a JSON object")
  const v = (k: string): unknown => (body as Record<string, unknown>)[k] ?? undefined

  const env = v("environment")
  if (env !== undefined && env !== "production" && env !== "test") return validationFailed("environment", "environment must be production or test")

  let scopes: ReadonlyArray<string> = DefaultIssueScopes
  const rawScopes = v("scopes")
  if (rawScopes !== undefined) {
    if (!Array.isArray(rawScopes) || rawScopes.length === 0) return validationFailed("scopes", "scopes must be a non-empty array")
    const bad = rawScopes.find((s) => !isPublicScope(s))
    if (bad !== undefined) return validationFailed("scopes", `Unknown scope '${String(bad)}'; expected any of ${PublicScopes.join(", ")}`)
    scopes = normalizeScopes(rawScopes as string[])
    if (!boundNeedsWrite(scopes)) return validationFailed("scopes", "transfer:bound requires transfer:write in the same list")
  }

  const label = optional(v("label"), decodeLabel)
  if (failed(label)) return label

  const days = v("expiresInDays")
  const at = v("expiresAt")
  if (days !== undefined && at !== undefined) return validationFailed("expiresAt", "expiresInDays and expiresAt are mutually exclusive")
  let expiresAtMs: number | null = null
  if (days !== undefined) {
    if (typeof days !== "number" || !Number.isInteger(days) || days < 1 || days > 365) {
      return validationFailed("expiresInDays", "expiresInDays must be an integer from 1 to 365")
    }
    expiresAtMs = nowMs + days * DAY_MS
  } else if (at !== undefined) {
    if (typeof at !== "number" || !Number.isSafeInteger(at) || at > 8.64e15) return validationFailed("expiresAt", "expiresAt must be epoch milliseconds")
    if (at <= nowMs) return validationFailed("expiresAt", "expiresAt must be in the future")
    expiresAtMs = at
  }

  const txLimit = optional(v("txLimit"), decodeTxLimit)
  if (failed(txLimit)) return txLimit

  const ew = v("embeddedWallet")
  if (ew !== undefined && ew !== "allowed" && ew !== "denied") return validationFailed("embeddedWallet", "embeddedWallet must be allowed or denied")

  // `ref` never blocks issuance: anything but a plausible code is ignored.
  const ref = v("ref")
  return {
    environment: env ?? "production",
    scopes,
    label,
    expiresAtMs,
    txLimit,
    embeddedWallet: ew ?? "denied",
    ref: typeof ref === "string" && /^[A-Za-z0-9_-]{1,64}$/.test(ref) ? ref : null
  }
}

const PATCH_FIELDS = ["label", "avatar", "txLimit", "clearTxLimit", "paused"] as const

/**
 * Exactly one of `{label}`, `{avatar}`, `{txLimit}`, `{clearTxLimit: true}`, `{paused: boolean}`;
 * nothing else. `paused` is ours (the spec shows the flag and no route that sets it; see
 * docs/decisions.md, "Pausing a key").
 */
export const decodePatchBody = (body: unknown): Decoded<PatchRequest> => {
  if (!isObject(body)) return validationFailed("body", `Body must be a JSON object with exactly one of ${PATCH_FIELDS.join(", ")}`)
  const keys = Object.keys(body)
  const other = keys.find((k) => !(PATCH_FIELDS as ReadonlyArray<string>).includes(k))
  if (other !== undefined) return validationFailed(other, `'${other}' cannot be changed; PATCH takes exactly one of ${PATCH_FIELDS.join(", ")}`)
  if (keys.length !== 1) return validationFailed(keys[1] ?? "body", `PATCH takes exactly one of ${PATCH_FIELDS.join(", ")}`)
  const field = keys[0] as (typeof PATCH_FIELDS)[number]
  const value = body[field]
  switch (field) {
    case "label": {
      const l = decodeLabel(value)
      return failed(l) ? l : { _tag: "label", label: l }
    }
    case "avatar": {
      if (value === null) return { _tag: "avatar", avatar: null }
      if (typeof value !== "string" || value.trim() === "" || [...value.trim()].length > AVATAR_MAX_CHARS) {
        return validationFailed("avatar", `avatar must be 1 to ${AVATAR_MAX_CHARS} characters, or null to clear`)
      }
      return { _tag: "avatar", avatar: value.trim() }
    }
    case "txLimit": {
      const t = decodeTxLimit(value)
      return failed(t) ? t : { _tag: "txLimit", txLimit: t }
    }
    case "clearTxLimit":
      return value === true ? { _tag: "txLimit", txLimit: null } : validationFailed("clearTxLimit", "clearTxLimit must be true")
    case "paused":
      return typeof value === "boolean" ? { _tag: "paused", paused: value } : validationFailed("paused", "paused must be true (pause) or false (resume)")
  }
}

export const decodeAccessBody = (body: unknown): Decoded<AccessRequest> => {
  if (!isObject(body)) return validationFailed("body", "Body must be a JSON object {access, dryRun?, expectScopes?}")
  const access = parseAccessLevel(body.access)
  if (access === undefined) return validationFailed("access", "access must be one of read, readwrite, readwritetransfer")
  const dryRun = body.dryRun ?? false
  if (typeof dryRun !== "boolean") return validationFailed("dryRun", "dryRun must be a boolean")
  const expect = body.expectScopes ?? undefined
  if (expect !== undefined && (!Array.isArray(expect) || expect.some((s) => typeof s !== "string"))) {
    return validationFailed("expectScopes", "expectScopes must be an array of scope strings")
  }
  if (!dryRun && expect === undefined) return validationFailed("expectScopes", "expectScopes is required on commit (the scopes the preview showed)")
  return { access, dryRun, expectScopes: expect as ReadonlyArray<string> | undefined }
}

/** The body of `PUT …/limits` (an array); an empty array clears every cap (null). */
export const decodeLimitsBody = (body: unknown): Decoded<ReadonlyArray<SpendLimit> | null> => {
  if (!Array.isArray(body)) return validationFailed("body", "Body must be an array of {asset, maxPerTxRaw}")
  if (body.length > SpendAssets.length) return validationFailed("body", `At most ${SpendAssets.length} limits (one per asset)`)
  const seen = new Set<string>()
  const out: SpendLimit[] = []
  for (let i = 0; i < body.length; i++) {
    const item: unknown = body[i]
    if (!isObject(item)) return validationFailed(`[${i}]`, "Each limit must be an object {asset, maxPerTxRaw}")
    const { asset, maxPerTxRaw } = item
    if (typeof asset !== "string" || !(SpendAssets as ReadonlyArray<string>).includes(asset)) {
      return validationFailed(`[${i}].asset`, `asset must be one of ${SpendAssets.join(", ")}`)
    }
    if (seen.has(asset)) return validationFailed(`[${i}].asset`, `Duplicate asset '${asset}'`)
    seen.add(asset)
    if (typeof maxPerTxRaw !== "string" || !RAW_POSITIVE.test(maxPerTxRaw)) {
      return validationFailed(
        `[${i}].maxPerTxRaw`,
        maxPerTxRaw === "0" ? "maxPerTxRaw must be greater than 0" : "maxPerTxRaw must be a positive decimal string of raw units"
      )
    }
    out.push({ asset: asset as SpendAsset, maxPerTxRaw })
  }
  return out.length === 0 ? null : out.sort((a, b) => SpendAssets.indexOf(a.asset) - SpendAssets.indexOf(b.asset))
}

/** `{embeddedWallet}` or the bare JSON string. */
export const decodeEmbeddedWalletBody = (body: unknown): Decoded<"allowed" | "denied"> => {
  const value = typeof body === "string" ? body : isObject(body) ? body.embeddedWallet : undefined
  return value === "allowed" || value === "denied" ? value : validationFailed("embeddedWallet", "embeddedWallet must be allowed or denied")
}

/** `?days=` of the usage series: default 30, clamped 1 to 90; a non-integer is refused. */
export const decodeUsageDays = (raw: string | null): Decoded<number> => parseUsageDays(raw) ?? validationFailed("days", "days must be an integer")

/** `?limit=` of the access-change history: 1 to 100, default 20. */
export const decodeHistoryLimit = (raw: string | null): Decoded<number> => {
  if (raw === null || raw === "") return 20
  if (!/^\d{1,4}$/.test(raw) || Number(raw) < 1 || Number(raw) > HISTORY_LIMIT_MAX) {
    return validationFailed("limit", `limit must be an integer from 1 to ${HISTORY_LIMIT_MAX}`)
  }
  return Number(raw)
}
