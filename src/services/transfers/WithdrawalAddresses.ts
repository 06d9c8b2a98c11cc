/**
 * Withdrawal addresses (spec document 2: 2.1, section 5 rule 7, section 6): the destinations
 * outside the account a Withdraw key may send to (`destinationClass: approved`), per chain.
 *
 * Invariants:
 * - Only a signed-in session adds one (an agent key or a device token: `loosen_requires_session`);
 *   list and revoke take any owner credential or an agent key (revoking only narrows).
 * - Addresses are validated per chain before anything is written: Solana a base58 32-byte key
 *   (`@solana/kit`), EVM (Hood) a mixed-case address carrying its EIP-55 checksum (`viem`); an
 *   all-lower or all-upper EVM address carries no checksum and is refused, since a typo here
 *   sends funds away for good.
 * - At most `maxActive` active addresses per account: the count and the insert run in one
 *   transaction holding a per-account advisory lock.
 * - Each change that commits writes its event (`withdrawal_address.added` / `.revoked`) in the
 *   same transaction, through the `AccountEvents` port (the webhook outbox); an add of an address
 *   already active returns it and writes nothing; a revoke of a revoked row writes nothing.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { isAddress as isSolanaAddress } from "@solana/kit"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { getAddress, isAddress as isEvmAddress } from "viem"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { AccountEvents } from "../accounts/AccountEvents.js"
import { addressKey, type WalletChain } from "../wallets/ChainKeys.js"
import type { Principal } from "../wallets/Principal.js"
import { type TransferError, transferError } from "./TransferError.js"

/** Active withdrawal addresses per account (all chains together). */
export const WITHDRAWAL_ADDRESSES_MAX = 50
/** Longest label, characters after trimming. */
export const WITHDRAWAL_LABEL_MAX_CHARS = 64

export interface WithdrawalAddressView {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly label?: string
  readonly createdAt: string
}

export interface AddInput {
  readonly chain: WalletChain
  readonly address: string
  readonly label?: string
}

/** The canonical address of `chain`, or undefined when `raw` is not one (strict EIP-55 on EVM). */
export const withdrawalAddressOf = (chain: WalletChain, raw: string): string | undefined => {
  if (chain === "solana") return isSolanaAddress(raw) ? raw : undefined
  if (!isEvmAddress(raw, { strict: true })) return undefined
  const hex = raw.slice(2)
  // No letters in the address: nothing to checksum, its canonical form is itself.
  if (hex === hex.toLowerCase() && hex === hex.toUpperCase()) return getAddress(raw)
  return getAddress(raw) === raw ? raw : undefined
}

export interface WithdrawalAddressesShape {
  readonly add: (p: Principal, input: AddInput) => Effect.Effect<{ readonly address: WithdrawalAddressView; readonly created: boolean }, TransferError>
  readonly list: (p: Principal, chain: WalletChain | undefined) => Effect.Effect<ReadonlyArray<WithdrawalAddressView>, TransferError>
  readonly revoke: (p: Principal, id: string) => Effect.Effect<{ readonly id: string; readonly revokedAt: string }, TransferError>
  /** The active approved address of `accountId` on `chain` equal to `address`, if any (the transfer rail's check). */
  readonly findActive: (accountId: string, chain: WalletChain, address: string) => Effect.Effect<WithdrawalAddressView | undefined, TransferError>
}

export class WithdrawalAddresses extends Context.Tag("curvestream/WithdrawalAddresses")<WithdrawalAddresses, WithdrawalAddressesShape>() {}

interface Row {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly label: string | null
  readonly created_at: Date
  readonly revoked_at: Date | null
}

const view = (r: Row): WithdrawalAddressView => ({
  id: r.id,
  chain: r.chain,
  address: r.address,
  ...(r.label !== null ? { label: r.label } : {}),
  createdAt: new Date(r.created_at).toISOString()
})

const eventData = (r: Row) => ({ chain: r.chain, address: r.address, ...(r.label !== null ? { label: r.label } : {}) })

const storage = storageFailure("withdrawal addresses", () => transferError("storage", "Internal error; nothing was recorded"))

const newId = (): string => `wad_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url")}`

export interface WithdrawalAddressesOptions {
  readonly maxActive?: number
}

export const make = (options: WithdrawalAddressesOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const events = yield* AccountEvents
    const maxActive = options.maxActive ?? WITHDRAWAL_ADDRESSES_MAX
    if (!Number.isInteger(maxActive) || maxActive < 1) return yield* Effect.dieMessage(`withdrawal addresses: maxActive must be a positive integer, got ${maxActive}`)
    /** Time: the Effect `Clock` the service is built under. */
    const clock = yield* Effect.clock
    const lockAccount = (accountId: string) => sql`SELECT pg_advisory_xact_lock(hashtext(${"withdrawal_addresses:" + accountId}))`
    const withEvents = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(e, SqlClient.SqlClient, sql)

    const add = Effect.fn("WithdrawalAddresses.add")(function* (p: Principal, input: AddInput) {
      if (p.credential !== "session") {
        return yield* transferError("loosen_requires_session", "Only a signed-in session may add a withdrawal address")
      }
      const address = withdrawalAddressOf(input.chain, input.address)
      if (address === undefined) {
        const what = input.chain === "solana" ? "a base58 Solana address (32 bytes)" : "an EVM address carrying its EIP-55 checksum"
        return yield* transferError("address_invalid", `address must be ${what}`, { field: "address" })
      }
      const label = input.label ?? null
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* lockAccount(p.accountId)
          const [existing] = yield* sql<Row>`
            SELECT id, chain, address, label, created_at, revoked_at FROM withdrawal_addresses
            WHERE account_id = ${p.accountId} AND chain = ${input.chain} AND address_key = ${addressKey(input.chain, address)} AND revoked_at IS NULL`
          if (existing !== undefined) return { address: view(existing), created: false }
          const [count] = yield* sql<{ n: number }>`
            SELECT count(*)::int AS n FROM withdrawal_addresses WHERE account_id = ${p.accountId} AND revoked_at IS NULL`
          if ((count?.n ?? 0) >= maxActive) {
            return yield* transferError("address_limit", `The account has the maximum of ${maxActive} withdrawal addresses; revoke one first`, {
              details: { limit: maxActive }
            })
          }
          const [row] = yield* sql<Row>`
            INSERT INTO withdrawal_addresses (id, account_id, chain, address, address_key, label, created_at)
            VALUES (${newId()}, ${p.accountId}, ${input.chain}, ${address}, ${addressKey(input.chain, address)}, ${label}, ${new Date(yield* clock.currentTimeMillis)})
            RETURNING id, chain, address, label, created_at, revoked_at`
          if (row === undefined) return yield* Effect.dieMessage("withdrawal address insert returned no row")
          yield* withEvents(events.enqueue(p.accountId, "withdrawal_address.added", eventData(row)))
          return { address: view(row), created: true }
        })
      )
    }, storage)

    const list = Effect.fn("WithdrawalAddresses.list")(function* (p: Principal, chain: WalletChain | undefined) {
      const rows = yield* sql<Row>`
        SELECT id, chain, address, label, created_at, revoked_at FROM withdrawal_addresses
        WHERE account_id = ${p.accountId} AND revoked_at IS NULL ${chain !== undefined ? sql`AND chain = ${chain}` : sql``}
        ORDER BY seq LIMIT ${maxActive}`
      return rows.map(view)
    }, storage)

    const revoke = Effect.fn("WithdrawalAddresses.revoke")(function* (p: Principal, id: string) {
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          const at = new Date(yield* clock.currentTimeMillis)
          const [revoked] = yield* sql<Row>`
            UPDATE withdrawal_addresses SET revoked_at = ${at}
            WHERE id = ${id} AND account_id = ${p.accountId} AND revoked_at IS NULL
            RETURNING id, chain, address, label, created_at, revoked_at`
          if (revoked !== undefined) {
            yield* withEvents(events.enqueue(p.accountId, "withdrawal_address.revoked", eventData(revoked)))
            return { id, revokedAt: new Date(revoked.revoked_at ?? at).toISOString() }
          }
          const [before] = yield* sql<Row>`
            SELECT id, chain, address, label, created_at, revoked_at FROM withdrawal_addresses WHERE id = ${id} AND account_id = ${p.accountId}`
          if (before?.revoked_at == null) return yield* transferError("address_not_found", `No withdrawal address ${id} on this account`, { field: "id" })
          return { id, revokedAt: new Date(before.revoked_at).toISOString() }
        })
      )
    }, storage)

    const findActive = Effect.fn("WithdrawalAddresses.findActive")(function* (accountId: string, chain: WalletChain, address: string) {
      const [row] = yield* sql<Row>`
        SELECT id, chain, address, label, created_at, revoked_at FROM withdrawal_addresses
        WHERE account_id = ${accountId} AND chain = ${chain} AND address_key = ${addressKey(chain, address)} AND revoked_at IS NULL`
      return row === undefined ? undefined : view(row)
    }, storage)

    const service: WithdrawalAddressesShape = { add, list, revoke, findActive }
    return service
  })

export const layer = (options: WithdrawalAddressesOptions = {}): Layer.Layer<WithdrawalAddresses, never, SqlClient.SqlClient | AccountEvents> =>
  Layer.effect(WithdrawalAddresses, make(options))

/** The real service over `Database.layerTest`; the account events are the test's (`AccountEvents.layerTest` or the outbox). */
export const layerTest: Layer.Layer<WithdrawalAddresses, SqlError, AccountEvents> = layer().pipe(Layer.provide(Database.layerTest))
