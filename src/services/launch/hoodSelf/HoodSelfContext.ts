/**
 * What the parts of `HoodSelfLaunch` share: its configuration and dependencies, the database for
 * the stored build, and the chain (`HoodSelfChain`). Built once by `HoodSelfLaunch.make`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { Effect } from "effect"
import type { HoodSelfBuild, HoodSelfLaunchConfig, HoodSelfLaunchDeps } from "../HoodSelfLaunch.js"
import type { BuildRow } from "../internal/SelfBuilds.js"
import type { HoodSelfChain } from "./HoodSelfChain.js"
import type { Address, Hex } from "viem"

export interface HoodSelfContext {
  readonly config: HoodSelfLaunchConfig
  readonly deps: HoodSelfLaunchDeps
  /** Runs a stored-build read or write on the service's database. */
  readonly withSql: <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly chain: HoodSelfChain
}

/** What a Hood build resolved, stored beside it. */
export interface Resolved {
  readonly metadataUri: string
  readonly factory: Address
  readonly salt: Hex
  readonly nonce: number
}

export type StoredFee = NonNullable<HoodSelfBuild["fee"]> & { readonly leg: NonNullable<HoodSelfBuild["feeTransfer"]> }

/** A stored build: its row and the build it answers. */
export interface Stored {
  readonly row: BuildRow<Resolved, StoredFee>
  readonly build: HoodSelfBuild
}
