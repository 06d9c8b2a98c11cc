/**
 * The rows of staking operations and reward claims (`0015_staking`). Every state change is one
 * conditional UPDATE on the state it leaves (`WHERE state = …`), so of two racing requests exactly
 * one moves a row, and the machine's "broadcast once" holds across processes. Insert is
 * `ON CONFLICT DO NOTHING`: the first writer of an id owns it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type Clock, Effect } from "effect"
import type { OperationState } from "./StakingMachine.js"

export type StakePayer = "main" | "linked" | "tee"
export type OperationRowState = OperationState["_tag"]

export interface OperationRow {
  readonly accountId: string
  readonly clientStakeId: string
  readonly action: "stake" | "unstake" | "finish"
  readonly payer: StakePayer
  readonly walletId: string | null
  readonly wallet: string
  readonly keyId: string | null
  readonly bodyHash: string
  readonly state: OperationRowState
  readonly amountRaw: string | null
  readonly withdrawal: string | null
  readonly signature: string | null
  readonly transaction: string | null
  readonly messageHash: string | null
  readonly claimId: string | null
  readonly lastValidBlockHeight: bigint | null
  readonly builtAtMs: number | null
  readonly expiresAtMs: number | null
  readonly error: string | null
}

interface Db {
  account_id: string
  client_stake_id: string
  action: OperationRow["action"]
  payer: StakePayer
  wallet_id: string | null
  wallet: string
  key_id: string | null
  body_hash: string
  state: OperationRowState
  amount_raw: string | null
  withdrawal: string | null
  signature: string | null
  transaction: string | null
  message_hash: string | null
  claim_id: string | null
  last_valid_block_height: string | null
  built_at: Date | string | null
  expires_at: Date | string | null
  error: string | null
}

const ms = (d: Date | string | null): number | null => (d === null ? null : new Date(d).getTime())

const rowOf = (r: Db): OperationRow => ({
  accountId: r.account_id,
  clientStakeId: r.client_stake_id,
  action: r.action,
  payer: r.payer,
  walletId: r.wallet_id,
  wallet: r.wallet,
  keyId: r.key_id,
  bodyHash: r.body_hash,
  state: r.state,
  amountRaw: r.amount_raw,
  withdrawal: r.withdrawal,
  signature: r.signature,
  transaction: r.transaction,
  messageHash: r.message_hash,
  claimId: r.claim_id,
  lastValidBlockHeight: r.last_valid_block_height === null ? null : BigInt(r.last_valid_block_height),
  builtAtMs: ms(r.built_at),
  expiresAtMs: ms(r.expires_at),
  error: r.error
})

/** The machine's view of a row. */
export const stateOf = (r: OperationRow): OperationState => {
  switch (r.state) {
    case "sending":
    case "submitted":
    case "confirmed":
      return { _tag: r.state, signature: r.signature ?? "" }
    case "built":
      return { _tag: "built", expiresAtMs: r.expiresAtMs ?? 0 }
    case "failed":
      return { _tag: "failed", signature: r.signature, error: r.error ?? "" }
    case "expired":
      return { _tag: "expired" }
  }
}

export interface Patch {
  readonly signature?: string
  readonly error?: string
}

/** Row times from `clock` (the Effect `Clock` the staking service is built under). */
export const makeStakingStore = (sql: SqlClient.SqlClient, clock: Clock.Clock) => {
  const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms))

  const get = (accountId: string, clientStakeId: string) =>
    Effect.map(
      sql<Db>`SELECT * FROM staking_operations WHERE account_id = ${accountId} AND client_stake_id = ${clientStakeId}`,
      (rows) => (rows[0] === undefined ? undefined : rowOf(rows[0]))
    )

  /** Records a new operation; false when the id already has a row (its first writer owns it). */
  const insert = (r: OperationRow) =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql`
          INSERT INTO staking_operations (account_id, client_stake_id, action, payer, wallet_id, wallet, key_id, body_hash, state, amount_raw,
            withdrawal, signature, transaction, message_hash, claim_id, last_valid_block_height, built_at, expires_at, error, created_at, updated_at)
          VALUES (${r.accountId}, ${r.clientStakeId}, ${r.action}, ${r.payer}, ${r.walletId}, ${r.wallet}, ${r.keyId}, ${r.bodyHash}, ${r.state},
            ${r.amountRaw}, ${r.withdrawal}, ${r.signature}, ${r.transaction}, ${r.messageHash}, ${r.claimId},
            ${r.lastValidBlockHeight === null ? null : r.lastValidBlockHeight.toString()},
            ${r.builtAtMs === null ? null : new Date(r.builtAtMs)}, ${r.expiresAtMs === null ? null : new Date(r.expiresAtMs)}, ${r.error}, ${at}, ${at})
          ON CONFLICT (account_id, client_stake_id) DO NOTHING
          RETURNING client_stake_id`,
        (rows) => rows.length === 1
      )
    )

  /** Moves the row from `from` to `to` (with the patch); false when another request moved it first. */
  const transition = (accountId: string, clientStakeId: string, from: ReadonlyArray<OperationRowState>, to: OperationRowState, patch: Patch = {}) =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql`
          UPDATE staking_operations SET state = ${to}, updated_at = ${at},
            signature = COALESCE(${patch.signature ?? null}, signature), error = COALESCE(${patch.error ?? null}, error)
          WHERE account_id = ${accountId} AND client_stake_id = ${clientStakeId} AND state IN ${sql.in(from as Array<string>)}
          RETURNING client_stake_id`,
        (rows) => rows.length === 1
      )
    )

  /** Operations whose transaction left (or may have left) and whose fate is not recorded yet. */
  const inFlight = Effect.map(sql<Db>`SELECT * FROM staking_operations WHERE state IN ('sending', 'submitted') ORDER BY created_at LIMIT 1000`, (rows) =>
    rows.map(rowOf)
  )

  return { get, insert, transition, inFlight }
}

export type StakingStore = ReturnType<typeof makeStakingStore>

// --- Reward claims ---------------------------------------------------------------------------

export interface ClaimRow {
  readonly rewardId: string
  readonly accountId: string
  readonly owner: string
  readonly mint: string
  readonly amountRaw: string
  readonly state: "claiming" | "retry" | "claimed"
  readonly signature: string
  readonly lastValidBlockHeight: bigint
}

interface ClaimDb {
  reward_id: string
  account_id: string
  owner: string
  mint: string
  amount_raw: string
  state: ClaimRow["state"]
  signature: string
  last_valid_block_height: string
}

const claimOf = (r: ClaimDb): ClaimRow => ({
  rewardId: r.reward_id,
  accountId: r.account_id,
  owner: r.owner,
  mint: r.mint,
  amountRaw: r.amount_raw,
  state: r.state,
  signature: r.signature,
  lastValidBlockHeight: BigInt(r.last_valid_block_height)
})

/** Row times from `clock`, as the operations'. */
export const makeClaimStore = (sql: SqlClient.SqlClient, clock: Clock.Clock) => {
  const now = Effect.map(clock.currentTimeMillis, (ms) => new Date(ms))
  const get = (rewardId: string) =>
    Effect.map(sql<ClaimDb>`SELECT * FROM staking_reward_claims WHERE reward_id = ${rewardId}`, (rows) => (rows[0] === undefined ? undefined : claimOf(rows[0])))

  /** Records the first attempt; false when the reward already has a claim row. */
  const insert = (r: ClaimRow) =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql`
          INSERT INTO staking_reward_claims (reward_id, account_id, owner, mint, amount_raw, state, signature, last_valid_block_height, created_at, updated_at)
          VALUES (${r.rewardId}, ${r.accountId}, ${r.owner}, ${r.mint}, ${r.amountRaw}, ${r.state}, ${r.signature}, ${r.lastValidBlockHeight.toString()}, ${at}, ${at})
          ON CONFLICT (reward_id) DO NOTHING RETURNING reward_id`,
        (rows) => rows.length === 1
      )
    )

  /** Moves the claim from (`from`, `signature`) to `to`; false when another request moved it first. */
  const transition = (rewardId: string, from: ClaimRow["state"], fromSignature: string, to: ClaimRow["state"], next?: { signature: string; lastValidBlockHeight: bigint }) =>
    Effect.flatMap(now, (at) =>
      Effect.map(
        sql`
          UPDATE staking_reward_claims SET state = ${to}, updated_at = ${at},
            signature = ${next?.signature ?? fromSignature},
            last_valid_block_height = COALESCE(${next === undefined ? null : next.lastValidBlockHeight.toString()}, last_valid_block_height)
          WHERE reward_id = ${rewardId} AND state = ${from} AND signature = ${fromSignature}
          RETURNING reward_id`,
        (rows) => rows.length === 1
      )
    )

  const claiming = (rewardIds: ReadonlyArray<string>) =>
    rewardIds.length === 0
      ? Effect.succeed(new Set<string>())
      : Effect.map(
          sql<{ reward_id: string }>`SELECT reward_id FROM staking_reward_claims WHERE state = 'claiming' AND reward_id IN ${sql.in(rewardIds as Array<string>)}`,
          (rows) => new Set(rows.map((r) => r.reward_id))
        )

  const inFlight = Effect.map(sql<ClaimDb>`SELECT * FROM staking_reward_claims WHERE state = 'claiming' ORDER BY created_at LIMIT 1000`, (rows) => rows.map(claimOf))

  return { get, insert, transition, claiming, inFlight }
}

export type ClaimStore = ReturnType<typeof makeClaimStore>
