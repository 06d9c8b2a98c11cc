/**
 * What the parts of `HeadlessLaunch` share: its configuration and figures, dependencies, the
 * database, the layer's scope (background runs live in it), the row leases, the run permits, and
 * `fenced` (an "Also" behind the row's lease). Built once by `HeadlessLaunch.make`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Effect, Scope } from "effect"
import type { RowLeases } from "../../../db/RowLease.js"
import type { Principal } from "../../wallets/Principal.js"
import type { HeadlessLaunchConfig, HeadlessLaunchDeps } from "../HeadlessLaunch.js"
import type { Also, AttemptRef, LaunchRef, LedgerFence } from "../LaunchLedger.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"

export interface HeadlessContext {
  readonly config: HeadlessLaunchConfig
  /** The configuration with its defaults filled in. */
  readonly o: Required<Omit<HeadlessLaunchConfig, "hoodExplorerUrl">> & Pick<HeadlessLaunchConfig, "hoodExplorerUrl">
  readonly deps: HeadlessLaunchDeps
  readonly withSql: <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly scope: Scope.Scope
  readonly leases: RowLeases
  /** At most `executionsMax` chain runs at once in this process. */
  readonly runs: Effect.Semaphore
  /** `also` behind the row's lease: a process that no longer owns the row writes (and so sends) nothing. */
  readonly fenced: (ref: LaunchRef, also: Also) => Also
  /** The row's lease for a ledger transition (`sent`, `confirm`, `fail`): its renewal rides in the ledger row's write, as `fenced`'s check would. */
  readonly fence: (ref: LaunchRef) => LedgerFence
}

/** What a headless attempt resolved at acceptance, stored beside it (`headless_launch_attempts`). */
export interface Resolved {
  readonly keyId: string
  readonly payer: string | null
  readonly metadataUri: string
  readonly platformFeeBps: string
  readonly principal: Principal
}

/** An accepted attempt and its inputs: what a run (fresh or resumed) needs. */
export interface Attempt {
  readonly ref: AttemptRef
  readonly request: LaunchRequest
  readonly resolved: Resolved
}
