/**
 * Agent-key scopes and access levels (spec document 2, section 2.1).
 *
 * A key's scopes are a set, stored sorted so two equal sets compare equal as arrays. The three
 * access levels are fixed scope lists; a key whose scopes equal none of them (a legacy Write key
 * that still holds `transfer:write`, a key issued with named scopes, a partner key) is "custom"
 * and has no level (`access: null`). Partner scopes are never issued through the public routes
 * and make a key's level unchangeable (`KEY_ACCESS_PARTNER_KEY`).
 */

/** Scopes an issue body or a device request may name. */
export const PublicScopes = [
  "launch:write",
  "launch:read",
  "account:read",
  "activity:write",
  "swap:write",
  "transfer:write",
  "transfer:bound",
  "lp:write"
] as const
export type PublicScope = (typeof PublicScopes)[number]

/** Partner scopes: excluded from defaults; a key holding one cannot change level. */
export const PartnerScopes = ["entitlement:read", "hacc:sync"] as const


export const AccessLevels = ["read", "readwrite", "readwritetransfer"] as const
export type AccessLevel = (typeof AccessLevels)[number]

/** The older level names, still accepted on input. */
export const AccessAliases: Readonly<Record<string, AccessLevel>> = {
  "read-write": "readwrite",
  transfer: "readwritetransfer",
  "read-write-transfer": "readwritetransfer"
}

const sorted = (scopes: Iterable<string>): ReadonlyArray<string> => [...new Set(scopes)].sort()

/** Scopes of a key issued without a `scopes` list. */
export const DefaultIssueScopes: ReadonlyArray<string> = sorted(["launch:write", "launch:read", "account:read", "activity:write"])

export const LevelScopes: Readonly<Record<AccessLevel, ReadonlyArray<string>>> = {
  read: sorted(["account:read"]),
  readwrite: sorted(["launch:write", "launch:read", "activity:write", "swap:write", "account:read"]),
  readwritetransfer: sorted(["launch:write", "launch:read", "activity:write", "swap:write", "account:read", "transfer:write", "transfer:bound"])
}

/** A device approval naming no scopes grants the Write level. */
export const DeviceDefaultScopes: ReadonlyArray<string> = LevelScopes.readwrite

export const normalizeScopes = sorted

export const isPublicScope = (s: unknown): s is PublicScope => typeof s === "string" && (PublicScopes as ReadonlyArray<string>).includes(s)

export const isPartnerScope = (s: string): boolean => (PartnerScopes as ReadonlyArray<string>).includes(s)

export const parseAccessLevel = (raw: unknown): AccessLevel | undefined => {
  if (typeof raw !== "string") return undefined
  if ((AccessLevels as ReadonlyArray<string>).includes(raw)) return raw as AccessLevel
  return AccessAliases[raw]
}

export const sameScopeSet = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean => {
  const x = sorted(a)
  const y = sorted(b)
  return x.length === y.length && x.every((s, i) => s === y[i])
}

/** The level whose list equals `scopes` exactly, or null (custom or legacy). */
export const levelOf = (scopes: ReadonlyArray<string>): AccessLevel | null => {
  for (const level of AccessLevels) if (sameScopeSet(LevelScopes[level], scopes)) return level
  return null
}

export type Direction = "unchanged" | "narrow" | "widen"

export interface ScopeDiff {
  readonly added: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  /** `widen` when anything is added (an owner action), else `narrow` when anything is removed. */
  readonly direction: Direction
}

export const diffScopes = (from: ReadonlyArray<string>, to: ReadonlyArray<string>): ScopeDiff => {
  const f = new Set(from)
  const t = new Set(to)
  const added = sorted([...t].filter((s) => !f.has(s)))
  const removed = sorted([...f].filter((s) => !t.has(s)))
  return { added, removed, direction: added.length > 0 ? "widen" : removed.length > 0 ? "narrow" : "unchanged" }
}

/** `transfer:bound` requires `transfer:write` in the same list. */
export const boundNeedsWrite = (scopes: ReadonlyArray<string>): boolean =>
  !scopes.includes("transfer:bound") || scopes.includes("transfer:write")
