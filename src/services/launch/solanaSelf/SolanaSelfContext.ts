/**
 * What the parts of `SolanaSelfLaunch` share: its configuration and dependencies, the database
 * for the stored build, the slot length and the result links. Built once by
 * `SolanaSelfLaunch.make`.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { SelfBuild, SolanaSelfLaunchConfig, SolanaSelfLaunchDeps } from "../SolanaSelfLaunch.js"

export interface SolanaSelfContext {
  readonly config: SolanaSelfLaunchConfig
  readonly deps: SolanaSelfLaunchDeps
  readonly sql: SqlClient.SqlClient
  /** The slot length the build's `expiresAt` counts blocks in (default 400 ms). */
  readonly slotMs: number
  readonly links: { readonly baseUrl: string; readonly solanaExplorerUrl: string }
}

/** What a build resolved, stored beside it. */
export type Resolved = { readonly metadataUri: string; readonly platformFeeBps: string }

/** What a build row holds (`self_launch_builds`). */
export interface StoredBuild {
  readonly attempt: number
  readonly walletId: string
  readonly walletKind: "imported" | "tee"
  readonly payer: string
  readonly keyId: string
  readonly request: LaunchRequest
  readonly metadataUri: string
  readonly platformFeeBps: bigint
  readonly build: SelfBuild
  readonly lastValidBlockHeight: bigint
  readonly builtAtMs: number
}
