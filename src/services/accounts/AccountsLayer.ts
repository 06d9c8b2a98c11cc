/**
 * One layer for the accounts subsystem: the key cache, the tier service, key management and the
 * device flow. Needs PostgreSQL, the wallet side (`AccountWallets`), the webhook outbox
 * (`AccountEvents`) and chain balances (`BalanceReader`); the composition root provides those.
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Layer } from "effect"
import * as Database from "../../db/Database.js"
import { type Plan, resolvePlans } from "../../domain/Plans.js"
import * as KeyService from "../keys/KeyService.js"
import * as KeyStore from "../keys/KeyStore.js"
import type { AccountEvents } from "./AccountEvents.js"
import type { AccountWallets } from "./AccountWallets.js"
import type { BalanceReader } from "./BalanceReader.js"
import * as Devices from "./Devices.js"
import { DefaultTierThresholds, type TierThresholds } from "./Tier.js"
import * as TierService from "./TierService.js"

/** Time is the Effect `Clock` the layer is built under (keys and devices capture it). */
export interface AccountsOptions {
  readonly plans: ReadonlyArray<Plan>
  readonly thresholds: TierThresholds
  /** Where a lapsed Max account renews (tier snapshot `renewalUrl`). */
  readonly renewalUrl: string
  /** Where a person approves a device (device flow `verificationUri`). */
  readonly verificationUri: string
  readonly apiBaseUrl?: string | undefined
  readonly keyCache?: KeyStore.KeyStoreOptions
  readonly holdingsTtlMs?: number
}

export const layer = (
  options: AccountsOptions
): Layer.Layer<KeyService.KeyService | KeyStore.KeyStore | TierService.TierService | Devices.Devices, never, SqlClient.SqlClient | AccountWallets | AccountEvents | BalanceReader> => {
  const base = Layer.mergeAll(
    KeyStore.layer(options.keyCache),
    TierService.layer({
      plans: options.plans,
      thresholds: options.thresholds,
      renewalUrl: options.renewalUrl,
      ...(options.holdingsTtlMs !== undefined ? { holdingsTtlMs: options.holdingsTtlMs } : {})
    })
  )
  const keys = KeyService.layer({ apiBaseUrl: options.apiBaseUrl }).pipe(Layer.provideMerge(base))
  return Devices.layer({ verificationUri: options.verificationUri }).pipe(Layer.provideMerge(keys))
}

/** The settings of `layerTest`: the default plans and thresholds, `example.test` URLs, holdings read on every call. */
export const testOptions: AccountsOptions = {
  plans: resolvePlans({}, 30),
  thresholds: DefaultTierThresholds,
  renewalUrl: "https://example.test/pricing",
  verificationUri: "https://example.test/device",
  apiBaseUrl: "https://api.example.test",
  holdingsTtlMs: 0
}

/**
 * The real accounts subsystem over `Database.layerTest` (`testOptions`). Its ports are the test's:
 * the wallet side (`AccountWallets.layerTest`), the events (`AccountEvents.layerTest`) and the
 * balances (`BalanceReader.layerTest`), or the real ones.
 */
export const layerTest: Layer.Layer<
  KeyService.KeyService | KeyStore.KeyStore | TierService.TierService | Devices.Devices,
  SqlError,
  AccountWallets | AccountEvents | BalanceReader
> = layer(testOptions).pipe(Layer.provide(Database.layerTest))
