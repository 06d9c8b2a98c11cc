/**
 * Accounts and keys, wallets and webhooks composed over one PostgreSQL (`SqlClient`): the wallet
 * master key and the local wallet provider; the wallet service (its `KeyDirectory` over the keys
 * table); the accounts layer with its ports implemented by the other two subsystems
 * (`AccountWallets` over the wallet side, `AccountEvents` = the webhook outbox) and the given
 * chain balances; the webhook service; and, unless turned off, the webhook delivery worker as a
 * fiber for the layer's lifetime; withdrawal addresses and trusted wallets (their events through
 * the same outbox). The composition root and the integration tests build the same
 * stack, so what the tests prove is what runs.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Layer, type Redacted } from "effect"
import * as Database from "../../db/Database.js"
import { type Plan, resolvePlans } from "../../domain/Plans.js"
import type { Resolver } from "../../net/PublicTarget.js"
import type { AccountEvents } from "../accounts/AccountEvents.js"
import * as AccountsLayer from "../accounts/AccountsLayer.js"
import type { AccountWallets } from "../accounts/AccountWallets.js"
import type { BalanceReader } from "../accounts/BalanceReader.js"
import type { Devices } from "../accounts/Devices.js"
import { DefaultTierThresholds, type TierThresholds } from "../accounts/Tier.js"
import type { TierService } from "../accounts/TierService.js"
import type { KeyService } from "../keys/KeyService.js"
import type { KeyStore } from "../keys/KeyStore.js"
import * as TrustedWallets from "../transfers/TrustedWallets.js"
import * as WithdrawalAddresses from "../transfers/WithdrawalAddresses.js"
import * as MasterKey from "../wallets/MasterKey.js"
import * as WalletProvider from "../wallets/WalletProvider.js"
import * as WalletService from "../wallets/WalletService.js"
import * as DeliveryWorker from "../webhooks/DeliveryWorker.js"
import { type SecretBoxError, testMasterKey } from "../webhooks/SecretBox.js"
import * as WebhookService from "../webhooks/WebhookService.js"
import { accountEventsLayer, accountWalletsLayer, makeKeyDirectory } from "./Wiring.js"

/** Time is the Effect `Clock` the stack is built under. */
export interface StackOptions {
  readonly plans: ReadonlyArray<Plan>
  readonly thresholds: TierThresholds
  /** `apiBaseUrl` of issued keys. */
  readonly publicUrl: string
  readonly renewalUrl: string
  readonly verificationUri: string
  readonly holdingsTtlMs?: number
  /** Chain balances for Pro by holding (the Solana reader in production). */
  readonly balances: Layer.Layer<BalanceReader>
  readonly wallets: {
    /** `WALLET_MASTER_KEY`; unset: generated under `dataDir`, or ephemeral without one. */
    readonly masterKey: Redacted.Redacted<string> | undefined
    readonly dataDir: string | undefined
    readonly ceilingLamports?: bigint
    readonly ceilingWei?: bigint
    readonly reconciler?: WalletService.ClaimReconciler
  }
  readonly webhooks: {
    /** 32 bytes (`SecretBox.resolveMasterKey`). */
    readonly masterKey: Uint8Array
    readonly allowLoopbackForTests: boolean
    /** DNS for the public-target check (tests); default the system resolver. */
    readonly resolve?: Resolver
    /** Delivery worker settings; `false`: no worker (tests that drive delivery themselves). */
    readonly worker?: Omit<DeliveryWorker.DeliveryWorkerOptions, "masterKey" | "allowLoopbackForTests"> | false
  }
}

export type StackServices =
  | KeyService
  | KeyStore
  | TierService
  | Devices
  | AccountWallets
  | AccountEvents
  | BalanceReader
  | WalletService.WalletService
  | WalletProvider.WalletProvider
  | MasterKey.WalletMasterKey
  | WebhookService.WebhookService
  | WithdrawalAddresses.WithdrawalAddresses
  | TrustedWallets.TrustedWallets

export const layer = (options: StackOptions): Layer.Layer<StackServices, MasterKey.MasterKeyError | SecretBoxError, SqlClient.SqlClient> => {
  const walletSide = WalletProvider.layerLocal({
    ...(options.wallets.ceilingLamports !== undefined ? { ceilingLamports: options.wallets.ceilingLamports } : {}),
    ...(options.wallets.ceilingWei !== undefined ? { ceilingWei: options.wallets.ceilingWei } : {})
  }).pipe(Layer.provideMerge(MasterKey.layer({ masterKey: options.wallets.masterKey, dataDir: options.wallets.dataDir })))
  const ports = Layer.mergeAll(accountWalletsLayer, accountEventsLayer, options.balances)
  const accounts = AccountsLayer.layer({
    plans: options.plans,
    thresholds: options.thresholds,
    renewalUrl: options.renewalUrl,
    verificationUri: options.verificationUri,
    apiBaseUrl: options.publicUrl,
    ...(options.holdingsTtlMs !== undefined ? { holdingsTtlMs: options.holdingsTtlMs } : {})
  }).pipe(Layer.provideMerge(ports))
  const wallets = Layer.unwrapEffect(
    Effect.map(SqlClient.SqlClient, (sql) =>
      WalletService.layer({
        plans: options.plans,
        keys: makeKeyDirectory(sql),
        ...(options.wallets.reconciler !== undefined ? { reconciler: options.wallets.reconciler } : {})
      })
    )
  )
  const transfers = Layer.merge(WithdrawalAddresses.layer(), TrustedWallets.layer).pipe(
    Layer.provide(accountEventsLayer)
  )
  const hooks = { masterKey: options.webhooks.masterKey, allowLoopbackForTests: options.webhooks.allowLoopbackForTests }
  const resolve = options.webhooks.resolve !== undefined ? { resolve: options.webhooks.resolve } : {}
  const worker = options.webhooks.worker === false ? Layer.empty : DeliveryWorker.layer({ ...(options.webhooks.worker ?? {}), ...resolve, ...hooks })
  return Layer.mergeAll(accounts, wallets, transfers, WebhookService.layer({ ...hooks, ...resolve }), worker).pipe(Layer.provideMerge(walletSide))
}

/**
 * The stack as the engine wires it, over `Database.layerTest`: the default plans and thresholds,
 * `api.example.test` URLs, holdings read on every call, an ephemeral wallet master key, the fixed
 * webhook test key with loopback targets allowed, and no delivery worker (tests drive delivery).
 * Chain balances and DNS are the test's (`BalanceReader.layerTest`, a fixed table).
 */
export const layerTest = (options: {
  readonly balances: Layer.Layer<BalanceReader>
  readonly resolve?: Resolver
}): Layer.Layer<StackServices, MasterKey.MasterKeyError | SecretBoxError | SqlError> =>
  layer({
    plans: resolvePlans({}, 30),
    thresholds: DefaultTierThresholds,
    publicUrl: "https://api.example.test",
    renewalUrl: "https://api.example.test/pricing",
    verificationUri: "https://api.example.test/device",
    holdingsTtlMs: 0,
    balances: options.balances,
    wallets: { masterKey: undefined, dataDir: undefined },
    webhooks: {
      masterKey: testMasterKey,
      allowLoopbackForTests: true,
      ...(options.resolve !== undefined ? { resolve: options.resolve } : {}),
      worker: false
    }
  }).pipe(Layer.provide(Database.layerTest))
