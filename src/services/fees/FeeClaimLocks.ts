/**
 * One creator-fee claim per token at a time (spec document 2, 4.3 rule 5), in PostgreSQL
 * (`fee_claim_locks`, migration 0016) so it holds across engine processes and across a restart:
 * a claim takes the token's lease before it builds anything and gives it back when it has
 * answered. A lease whose holder died is not given back; it expires after `leaseMs`, which
 * outlasts a claim's whole life (its confirmation wait plus the Solana blockhash's lifetime), so
 * by then the dead claim's transaction has landed or never will and the next claim reads what is
 * still owed.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"

/** A claim's lease (2 minutes: 30 s of confirmation wait plus at most ~90 s of blockhash lifetime). */
export const FEE_CLAIM_LEASE_MS = 120_000

export interface FeeClaimLocks {
  /** Takes the token's lease; its holder id, or undefined when another claim holds it. */
  readonly acquire: (mint: string, nowMs: number) => Effect.Effect<string | undefined, SqlError>
  readonly release: (mint: string, holder: string) => Effect.Effect<void, SqlError>
  /** Whether a claim of the token holds an unexpired lease. */
  readonly held: (mint: string, nowMs: number) => Effect.Effect<boolean, SqlError>
}

export const makeFeeClaimLocks = (sql: SqlClient.SqlClient, leaseMs = FEE_CLAIM_LEASE_MS): FeeClaimLocks => ({
  acquire: (mint, nowMs) => {
    const holder = randomUUID()
    return Effect.map(
      sql<{ holder: string }>`
        INSERT INTO fee_claim_locks (mint, holder, expires_at_ms) VALUES (${mint}, ${holder}, ${nowMs + leaseMs})
        ON CONFLICT (mint) DO UPDATE SET holder = EXCLUDED.holder, expires_at_ms = EXCLUDED.expires_at_ms
        WHERE fee_claim_locks.expires_at_ms <= ${nowMs}
        RETURNING holder`,
      (rows) => (rows[0]?.holder === holder ? holder : undefined)
    )
  },
  release: (mint, holder) => Effect.asVoid(sql`DELETE FROM fee_claim_locks WHERE mint = ${mint} AND holder = ${holder}`),
  held: (mint, nowMs) =>
    Effect.map(sql<{ n: number }>`SELECT count(*)::int AS n FROM fee_claim_locks WHERE mint = ${mint} AND expires_at_ms > ${nowMs}`, (rows) => (rows[0]?.n ?? 0) > 0)
})
