/**
 * Trusted linked wallets (spec document 2: 2.1, section 4 rule 3, section 6): the owner marks or
 * clears trust on the account's linked wallets in batches, from a session or a device token. A
 * trusted wallet is a destination the bound TEE wallet may send to.
 *
 * Invariants:
 * - Owners only (a session or a device token); the actor is recorded in the event.
 * - A batch is 1 to `TRUST_BATCH_MAX` distinct ids; every id must be an active linked or imported
 *   wallet of the account (TEE wallets are sources, never trust targets), else the whole batch is
 *   refused and nothing changes.
 * - One request, one transaction, at most one event (`linked_wallet.trusted` / `.untrusted`, with
 *   the request's `batchId`, `actor` and the wallets whose state changed); a batch that changes
 *   nothing (all already in the asked state) writes no event.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import * as Database from "../../db/Database.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { AccountEvents } from "../accounts/AccountEvents.js"
import type { WalletChain } from "../wallets/ChainKeys.js"
import type { Principal } from "../wallets/Principal.js"
import { type TransferError, transferError } from "./TransferError.js"

/** Wallet ids in one trust request. */
export const TRUST_BATCH_MAX = 200

export interface TrustedWalletView {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly label?: string
  readonly trusted: boolean
}

export interface TrustResult {
  readonly batchId: string
  /** Every wallet of the batch, in its new state. */
  readonly wallets: ReadonlyArray<TrustedWalletView>
  /** How many changed state (and so are in the event). */
  readonly changed: number
}

export interface TrustedWalletsShape {
  readonly setTrust: (p: Principal, walletIds: ReadonlyArray<string>, trusted: boolean) => Effect.Effect<TrustResult, TransferError>
  readonly listTrusted: (p: Principal) => Effect.Effect<ReadonlyArray<TrustedWalletView>, TransferError>
  /** Whether `address` on `chain` is an active trusted wallet of the account (the transfer rail's check). */
  readonly isTrusted: (accountId: string, chain: WalletChain, addressKey: string) => Effect.Effect<boolean, TransferError>
}

export class TrustedWallets extends Context.Tag("curvestream/TrustedWallets")<TrustedWallets, TrustedWalletsShape>() {}

interface Row {
  readonly id: string
  readonly chain: WalletChain
  readonly address: string
  readonly label: string | null
  readonly trusted_at: Date | null
}

const view = (r: Row): TrustedWalletView => ({
  id: r.id,
  chain: r.chain,
  address: r.address,
  ...(r.label !== null ? { label: r.label } : {}),
  trusted: r.trusted_at !== null
})

const storage = storageFailure("trusted wallets", () => transferError("storage", "Internal error; nothing was recorded"))

const newBatchId = (): string => `tb_${Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64url")}`

/** Time: the Effect `Clock` the service is built under. */
export const make = () =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const events = yield* AccountEvents
    const clock = yield* Effect.clock

    const setTrust = Effect.fn("TrustedWallets.setTrust")(function* (p: Principal, walletIds: ReadonlyArray<string>, trusted: boolean) {
      if (p.credential === "agentKey") return yield* transferError("loosen_requires_session", "Only the owner (a session or a device token) may change wallet trust")
      if (walletIds.length === 0 || walletIds.length > TRUST_BATCH_MAX || new Set(walletIds).size !== walletIds.length) {
        return yield* transferError("batch_invalid", `walletIds must be 1 to ${TRUST_BATCH_MAX} distinct wallet ids`, { field: "walletIds" })
      }
      const actor = p.credential
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          const rows = yield* sql<Row & { kind: string }>`
            SELECT id, chain, address, label, trusted_at, kind FROM wallets
            WHERE account_id = ${p.accountId} AND revoked_at IS NULL AND id IN ${sql.in(walletIds)}
            FOR UPDATE`
          const byId = new Map(rows.map((r) => [r.id, r]))
          for (const id of walletIds) {
            const r = byId.get(id)
            if (r === undefined || r.kind === "tee") {
              return yield* transferError("wallet_not_found", `${id} is not an active linked wallet of this account`, { field: "walletIds", details: { walletId: id } })
            }
          }
          const changing = walletIds.filter((id) => (byId.get(id)!.trusted_at !== null) !== trusted)
          const updated =
            changing.length === 0
              ? []
              : yield* sql<Row>`
                  UPDATE wallets SET trusted_at = ${trusted ? new Date(yield* clock.currentTimeMillis) : null}
                  WHERE account_id = ${p.accountId} AND id IN ${sql.in(changing)}
                  RETURNING id, chain, address, label, trusted_at`
          const batchId = newBatchId()
          if (updated.length > 0) {
            const ordered = changing.map((id) => updated.find((u) => u.id === id)!).filter((u) => u !== undefined)
            yield* events
              .enqueue(p.accountId, trusted ? "linked_wallet.trusted" : "linked_wallet.untrusted", {
                batchId,
                actor,
                wallets: ordered.map((u) => ({ id: u.id, chain: u.chain, address: u.address, ...(u.label !== null ? { label: u.label } : {}) }))
              })
              .pipe(Effect.provideService(SqlClient.SqlClient, sql))
          }
          const after = new Map(updated.map((u) => [u.id, u]))
          return {
            batchId,
            wallets: walletIds.map((id) => view(after.get(id) ?? byId.get(id)!)),
            changed: updated.length
          } satisfies TrustResult
        })
      )
    }, storage)

    const listTrusted = Effect.fn("TrustedWallets.listTrusted")(function* (p: Principal) {
      const rows = yield* sql<Row>`
        SELECT id, chain, address, label, trusted_at FROM wallets
        WHERE account_id = ${p.accountId} AND revoked_at IS NULL AND trusted_at IS NOT NULL
        ORDER BY seq LIMIT 1000`
      return rows.map(view)
    }, storage)

    const isTrusted = Effect.fn("TrustedWallets.isTrusted")(function* (accountId: string, chain: WalletChain, addressKey: string) {
      const rows = yield* sql<{ id: string }>`
        SELECT id FROM wallets
        WHERE account_id = ${accountId} AND chain = ${chain} AND address_key = ${addressKey} AND revoked_at IS NULL AND trusted_at IS NOT NULL AND kind <> 'tee'
        LIMIT 1`
      return rows.length > 0
    }, storage)

    const service: TrustedWalletsShape = { setTrust, listTrusted, isTrusted }
    return service
  })

export const layer: Layer.Layer<TrustedWallets, never, SqlClient.SqlClient | AccountEvents> = Layer.effect(TrustedWallets, make())

/** The real service over `Database.layerTest`; the account events are the test's (`AccountEvents.layerTest` or the outbox). */
export const layerTest: Layer.Layer<TrustedWallets, SqlError, AccountEvents> = layer.pipe(Layer.provide(Database.layerTest))
