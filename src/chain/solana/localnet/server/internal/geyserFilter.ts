/**
 * A `SubscribeRequest` compiled into the filter a stream applies, with Yellowstone's semantics
 * (its README): within one named filter the fields are ANDed and the values of a list ORed; an
 * empty filter matches everything of its kind; an update carries the names of every filter it
 * matched. Supported: `accounts` (account, owner, and `datasize` / `memcmp` / `lamports`
 * conditions; `nonemptyTxnSignature`), `transactions` and `transactionsStatus` (vote, failed,
 * signature, accountInclude / Exclude / Required), `slots` (`filterByCommitment`),
 * `blocksMeta`, `accountsDataSlice`, `commitment`. `blocks` and `entry` filters, cuckoo filters
 * and `tokenAccountState` are refused (INVALID_ARGUMENT) rather than silently ignored.
 * Bounds: `maxFilterNames` names per kind and `maxFilterValues` values per list.
 */
import {
  CommitmentLevel,
  type SubscribeRequest,
  type SubscribeRequestFilterAccounts,
  type SubscribeRequestFilterTransactions
} from "@triton-one/yellowstone-grpc"
import { type Address, getBase58Encoder, isAddress } from "@solana/kit"
import type { AccountUpdate, Commitment, SlotUpdate, TransactionUpdate } from "../../Ledger.js"
import type { DataSlice } from "./geyserWire.js"

export interface FilterLimits {
  readonly maxFilterNames: number
  readonly maxFilterValues: number
  readonly maxDataSlices: number
}

interface AccountCondition {
  readonly dataSize?: number
  readonly memcmp?: { readonly offset: number; readonly bytes: Uint8Array }
  readonly lamports?: { readonly op: "eq" | "ne" | "lt" | "gt"; readonly value: bigint }
}

interface AccountsFilter {
  readonly name: string
  readonly accounts: ReadonlySet<string> | null
  readonly owners: ReadonlySet<string> | null
  readonly conditions: ReadonlyArray<AccountCondition>
}

interface TransactionsFilter {
  readonly name: string
  readonly vote: boolean | undefined
  readonly failed: boolean | undefined
  readonly signature: string | undefined
  readonly include: ReadonlySet<string> | null
  readonly exclude: ReadonlySet<string>
  readonly required: ReadonlyArray<string>
}

interface SlotsFilter {
  readonly name: string
  readonly filterByCommitment: boolean
}

export interface CompiledFilter {
  readonly commitment: Commitment
  readonly accounts: ReadonlyArray<AccountsFilter>
  readonly transactions: ReadonlyArray<TransactionsFilter>
  readonly transactionsStatus: ReadonlyArray<TransactionsFilter>
  readonly slots: ReadonlyArray<SlotsFilter>
  readonly blocksMeta: ReadonlyArray<string>
  readonly dataSlices: ReadonlyArray<DataSlice>
}

export class FilterError extends Error {}

const base58 = getBase58Encoder()

const COMMITMENTS: Readonly<Record<number, Commitment>> = {
  [CommitmentLevel.PROCESSED]: "processed",
  [CommitmentLevel.CONFIRMED]: "confirmed",
  [CommitmentLevel.FINALIZED]: "finalized"
}

const pubkeys = (values: ReadonlyArray<string>, what: string, limits: FilterLimits): ReadonlySet<string> => {
  if (values.length > limits.maxFilterValues) throw new FilterError(`${what}: at most ${limits.maxFilterValues} values, got ${values.length}`)
  for (const v of values) if (!isAddress(v)) throw new FilterError(`${what}: invalid pubkey ${JSON.stringify(v)}`)
  return new Set(values)
}

const names = <T>(map: Readonly<Record<string, T>>, kind: string, limits: FilterLimits): Array<[string, T]> => {
  const entries = Object.entries(map)
  if (entries.length > limits.maxFilterNames) throw new FilterError(`${kind}: at most ${limits.maxFilterNames} filters, got ${entries.length}`)
  return entries
}

const smallInt = (v: string | undefined, what: string): number => {
  const n = Number(v ?? "0")
  if (!Number.isSafeInteger(n) || n < 0 || n > 10 * 1024 * 1024) throw new FilterError(`${what} out of range: ${v}`)
  return n
}

const accountConditions = (f: SubscribeRequestFilterAccounts, name: string): AccountCondition[] =>
  f.filters.map((c) => {
    if (c.datasize !== undefined) return { dataSize: smallInt(c.datasize, `accounts.${name}.datasize`) }
    if (c.memcmp !== undefined) {
      const m = c.memcmp
      let bytes: Uint8Array | undefined = m.bytes
      if (bytes === undefined && m.base58 !== undefined) bytes = new Uint8Array(base58.encode(m.base58))
      if (bytes === undefined && m.base64 !== undefined) bytes = new Uint8Array(Buffer.from(m.base64, "base64"))
      if (bytes === undefined) throw new FilterError(`accounts.${name}.memcmp: no data`)
      if (bytes.length > 128) throw new FilterError(`accounts.${name}.memcmp: at most 128 bytes`)
      return { memcmp: { offset: smallInt(m.offset, `accounts.${name}.memcmp.offset`), bytes } }
    }
    if (c.lamports !== undefined) {
      const l = c.lamports
      for (const op of ["eq", "ne", "lt", "gt"] as const) {
        const v = l[op]
        if (v !== undefined) return { lamports: { op, value: BigInt(v) } }
      }
      throw new FilterError(`accounts.${name}.lamports: no comparison`)
    }
    throw new FilterError(`accounts.${name}: only datasize, memcmp and lamports conditions are supported by the localnet`)
  })

const transactionsFilter = (name: string, f: SubscribeRequestFilterTransactions, kind: string, limits: FilterLimits): TransactionsFilter => {
  if (f.cuckooAccountInclude !== undefined) throw new FilterError(`${kind}.${name}: cuckoo filters are not supported by the localnet`)
  return {
    name,
    vote: f.vote,
    failed: f.failed,
    signature: f.signature,
    include: f.accountInclude.length === 0 ? null : pubkeys(f.accountInclude, `${kind}.${name}.accountInclude`, limits),
    exclude: pubkeys(f.accountExclude, `${kind}.${name}.accountExclude`, limits),
    required: [...pubkeys(f.accountRequired, `${kind}.${name}.accountRequired`, limits)]
  }
}

/** Compiles a request; throws `FilterError` with the reason a client sees. */
export const compileFilter = (r: SubscribeRequest, limits: FilterLimits): CompiledFilter => {
  if (Object.keys(r.blocks).length > 0) throw new FilterError("blocks filters are not supported by the localnet (use blocksMeta and transactions)")
  if (Object.keys(r.entry).length > 0) throw new FilterError("entry filters are not supported by the localnet")
  const commitment = r.commitment === undefined ? "processed" : COMMITMENTS[r.commitment]
  if (commitment === undefined) throw new FilterError(`unknown commitment level ${r.commitment}`)
  if (r.accountsDataSlice.length > limits.maxDataSlices) throw new FilterError(`at most ${limits.maxDataSlices} data slices`)
  return {
    commitment,
    accounts: names(r.accounts, "accounts", limits).map(([name, f]) => {
      if (f.cuckooAccountsFilter !== undefined) throw new FilterError(`accounts.${name}: cuckoo filters are not supported by the localnet`)
      return {
        name,
        accounts: f.account.length === 0 ? null : pubkeys(f.account, `accounts.${name}.account`, limits),
        owners: f.owner.length === 0 ? null : pubkeys(f.owner, `accounts.${name}.owner`, limits),
        conditions: accountConditions(f, name)
      }
    }),
    transactions: names(r.transactions, "transactions", limits).map(([name, f]) => transactionsFilter(name, f, "transactions", limits)),
    transactionsStatus: names(r.transactionsStatus, "transactionsStatus", limits).map(([name, f]) =>
      transactionsFilter(name, f, "transactionsStatus", limits)
    ),
    slots: names(r.slots, "slots", limits).map(([name, f]) => ({ name, filterByCommitment: f.filterByCommitment === true })),
    blocksMeta: names(r.blocksMeta, "blocksMeta", limits).map(([name]) => name),
    dataSlices: r.accountsDataSlice.map((s, i) => ({
      offset: smallInt(s.offset, `accountsDataSlice[${i}].offset`),
      length: smallInt(s.length, `accountsDataSlice[${i}].length`)
    }))
  }
}

const conditionHolds = (c: AccountCondition, u: AccountUpdate): boolean => {
  if (c.dataSize !== undefined) return u.data.length === c.dataSize
  if (c.memcmp !== undefined) {
    const { offset, bytes } = c.memcmp
    if (offset + bytes.length > u.data.length) return false
    for (let i = 0; i < bytes.length; i++) if (u.data[offset + i] !== bytes[i]) return false
    return true
  }
  if (c.lamports !== undefined) {
    const { op, value } = c.lamports
    return op === "eq" ? u.lamports === value : op === "ne" ? u.lamports !== value : op === "lt" ? u.lamports < value : u.lamports > value
  }
  return true
}

export const accountFilterNames = (f: CompiledFilter, u: AccountUpdate): string[] => {
  const out: string[] = []
  for (const a of f.accounts) {
    if (a.accounts !== null && !a.accounts.has(u.pubkey)) continue
    if (a.owners !== null && !a.owners.has(u.owner)) continue
    if (!a.conditions.every((c) => conditionHolds(c, u))) continue
    out.push(a.name)
  }
  return out
}

const transactionMatches = (t: TransactionsFilter, u: TransactionUpdate): boolean => {
  if (t.vote !== undefined && t.vote !== u.isVote) return false
  if (t.failed !== undefined && t.failed !== (u.err !== null)) return false
  if (t.signature !== undefined && t.signature !== u.signature) return false
  const keys: ReadonlyArray<Address> = u.accountKeys
  if (t.include !== null && !keys.some((k) => t.include!.has(k))) return false
  if (t.exclude.size > 0 && keys.some((k) => t.exclude.has(k))) return false
  if (t.required.length > 0 && !t.required.every((k) => keys.includes(k as Address))) return false
  return true
}

export const transactionFilterNames = (filters: ReadonlyArray<TransactionsFilter>, u: TransactionUpdate): string[] =>
  filters.filter((t) => transactionMatches(t, u)).map((t) => t.name)

export const slotFilterNames = (f: CompiledFilter, u: SlotUpdate): string[] =>
  f.slots.filter((s) => !s.filterByCommitment || u.status === f.commitment).map((s) => s.name)
