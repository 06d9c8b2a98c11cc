/**
 * Which of the tape's signals belong in an account's personal signals (spec 4.5 `/v1/me/signals`):
 * a pure function of the signal and the account's follows, rules and own groups.
 *
 * A signal matches when any of these holds (each match is reported as a reason):
 * - a follow `{chain, address}` names the signal's token (`asset`) or one of its `wallets`, on
 *   the signal's chain (Hood addresses compared lower-cased, Solana as given);
 * - a rule's `pattern` is the signal's, its `wallet_id` (when set) is among the signal's
 *   `wallet_ids`, and the signal meets every param of the rule (see `meetsParams`);
 * - a wallet of one of the account's own groups is among the signal's `wallets` (same chain).
 *
 * `PersonalIndex` finds the candidate accounts for one signal by lookups (address, pattern) so
 * the fan-out costs what matches, not the number of accounts; each candidate is then decided by
 * `matchReasons`, the single definition.
 */
import type { Signal } from "../../domain/Signal.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { normalizeAddress } from "../../domain/Chain.js"
import type { RuleParams } from "./Rules.js"
import { parseUsdMicros } from "../prices/Money.js"

export interface Follow {
  readonly id: string
  readonly chain: ChainId
  /** Normalized (Hood lower-cased). */
  readonly address: string
}

export interface Rule {
  readonly id: string
  readonly pattern: Signal["pattern"]
  readonly walletId: string | null
  readonly params: RuleParams
}

export interface OwnGroup {
  readonly id: string
  readonly wallets: ReadonlyArray<{ readonly chain: ChainId; readonly address: string }>
}

export type MatchReason =
  | { readonly kind: "follow"; readonly id: string }
  | { readonly kind: "rule"; readonly id: string }
  | { readonly kind: "group"; readonly id: string }

const usdMicros = (s: string | null): bigint | null => (s === null ? null : (parseUsdMicros(s) ?? null))

const num = (v: unknown): number | null => (typeof v === "number" && Number.isFinite(v) ? v : null)

/** Does the signal meet the rule's params (the rule's pattern already equals the signal's)? */
export const meetsParams = (signal: Signal, params: RuleParams): boolean => {
  if (params.min_usd !== undefined) {
    const size = usdMicros(signal.size_usd)
    const min = parseUsdMicros(params.min_usd)
    if (size === null || min === undefined || size < min) return false
  }
  if (params.wallets !== undefined) {
    const count = num(signal.details.wallet_count) ?? signal.wallets.length
    if (count < params.wallets) return false
  }
  if (params.window_minutes !== undefined) {
    const window = num(signal.details.window_minutes)
    if (window === null || window > params.window_minutes) return false
  }
  if (params.days !== undefined) {
    const silent = num(signal.details.silent_days)
    if (silent === null || silent < params.days) return false
  }
  return true
}

export const ruleMatches = (signal: Signal, rule: Rule): boolean =>
  rule.pattern === signal.pattern && (rule.walletId === null || signal.wallet_ids.includes(rule.walletId)) && meetsParams(signal, rule.params)

/** Every reason the signal belongs to the account, in follows, rules, groups order. */
export const matchReasons = (
  signal: Signal,
  follows: ReadonlyArray<Follow>,
  rules: ReadonlyArray<Rule>,
  groups: ReadonlyArray<OwnGroup>
): Array<MatchReason> => {
  const chain = signal.chain
  const addresses = new Set<string>([normalizeAddress(chain, signal.asset), ...signal.wallets.map((w) => normalizeAddress(chain, w))])
  const wallets = new Set<string>(signal.wallets.map((w) => normalizeAddress(chain, w)))
  const out: Array<MatchReason> = []
  for (const f of follows) if (f.chain === chain && addresses.has(normalizeAddress(chain, f.address))) out.push({ kind: "follow", id: f.id })
  for (const r of rules) if (ruleMatches(signal, r)) out.push({ kind: "rule", id: r.id })
  for (const g of groups) {
    if (g.wallets.some((w) => w.chain === chain && wallets.has(normalizeAddress(chain, w.address)))) out.push({ kind: "group", id: g.id })
  }
  return out
}

/** The spec's question: does this signal belong in the account's personal signals? */
export const matchPersonal = (
  signal: Signal,
  follows: ReadonlyArray<Follow>,
  rules: ReadonlyArray<Rule>,
  groups: ReadonlyArray<OwnGroup>
): boolean => matchReasons(signal, follows, rules, groups).length > 0

export interface AccountInterests {
  readonly follows: ReadonlyArray<Follow>
  readonly rules: ReadonlyArray<Rule>
  readonly groups: ReadonlyArray<OwnGroup>
}

/** Every account's interests, indexed for the fan-out. Immutable once built. */
export class PersonalIndex {
  private readonly byAddress = new Map<string, Set<string>>()
  private readonly byPattern = new Map<string, Set<string>>()
  readonly accounts: ReadonlyMap<string, AccountInterests>

  constructor(accounts: ReadonlyMap<string, AccountInterests>) {
    this.accounts = accounts
    const add = (m: Map<string, Set<string>>, k: string, account: string) => {
      let s = m.get(k)
      if (s === undefined) m.set(k, (s = new Set()))
      s.add(account)
    }
    for (const [account, i] of accounts) {
      for (const f of i.follows) add(this.byAddress, `${f.chain}:${normalizeAddress(f.chain, f.address)}`, account)
      for (const g of i.groups) for (const w of g.wallets) add(this.byAddress, `${w.chain}:${normalizeAddress(w.chain, w.address)}`, account)
      for (const r of i.rules) add(this.byPattern, r.pattern, account)
    }
  }

  static readonly empty = new PersonalIndex(new Map())

  /** Accounts the signal belongs to, with their reasons. */
  matches(signal: Signal): Array<{ readonly accountId: string; readonly reasons: ReadonlyArray<MatchReason> }> {
    const candidates = new Set<string>(this.byPattern.get(signal.pattern) ?? [])
    for (const a of [signal.asset, ...signal.wallets]) {
      for (const account of this.byAddress.get(`${signal.chain}:${normalizeAddress(signal.chain, a)}`) ?? []) candidates.add(account)
    }
    const out: Array<{ accountId: string; reasons: ReadonlyArray<MatchReason> }> = []
    for (const accountId of [...candidates].sort()) {
      const i = this.accounts.get(accountId)!
      const reasons = matchReasons(signal, i.follows, i.rules, i.groups)
      if (reasons.length > 0) out.push({ accountId, reasons })
    }
    return out
  }
}
