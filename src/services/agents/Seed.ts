/**
 * The embedded mode's published agents: accounts (handles `sim-…`) whose agent profiles point
 * at the simulation's traders (the Solana dev keys the market simulation trades and launches
 * with, and a Hardhat account the Hood simulation uses), so the copy score, the cohorts and the
 * agent record answer with real data there. Idempotent: an existing handle keeps its account and
 * profile id; the profile is republished with the seed's name and wallet.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { DEV_ADDRESSES } from "../../chain/solana/localnet/DevKeys.js"
import type { ChainId } from "../../../ingest/ChainEvent.js"
import { createAccount } from "../accounts/Accounts.js"
import { findAccountByHandle } from "../accounts/AccountRepository.js"
import { HOOD_SEED_ADDRESSES } from "../tracking/Seed.js"
import { type AgentProfile, publishProfile } from "./AgentProfiles.js"

export interface SeedAgent {
  readonly handle: string
  readonly name: string
  readonly chain: ChainId
  readonly wallet: string
}

export const SEED_AGENTS: ReadonlyArray<SeedAgent> = [
  { handle: "sim-early-eagle", name: "Early Eagle", chain: "solana", wallet: DEV_ADDRESSES[0]! },
  { handle: "sim-sniper-sam", name: "Sniper Sam", chain: "solana", wallet: DEV_ADDRESSES[1]! },
  { handle: "sim-dip-buyer", name: "Dip Buyer", chain: "solana", wallet: DEV_ADDRESSES[3]! },
  { handle: "sim-whale-one", name: "Whale One", chain: "solana", wallet: DEV_ADDRESSES[4]! },
  { handle: "sim-deep-pockets", name: "Deep Pockets", chain: "solana", wallet: DEV_ADDRESSES[6]! },
  { handle: "sim-hood-desk", name: "Hood Desk", chain: "hood", wallet: HOOD_SEED_ADDRESSES[0] }
]

export const seedAgents = (nowMs: number, agents: ReadonlyArray<SeedAgent> = SEED_AGENTS): Effect.Effect<ReadonlyArray<AgentProfile>, SqlError | string, SqlClient.SqlClient> =>
  Effect.forEach(agents, (a) =>
    Effect.gen(function* () {
      const account = (yield* findAccountByHandle(a.handle)) ?? (yield* createAccount({ handle: a.handle, name: a.name, plan: "free", agentEnabled: true, isAdmin: false }, nowMs))
      return yield* publishProfile({ accountId: account.id, name: a.name, chain: a.chain, wallet: a.wallet }, nowMs)
    })
  )
