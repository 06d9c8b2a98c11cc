/**
 * Accounts and keys, wallets and webhooks over PostgreSQL: the wallet master key and the local
 * wallet provider, the wallet service (its key directory over the keys table), the accounts
 * layer (its wallet port over the wallet side, its events into the webhook outbox, Solana
 * balances for Pro by holding), the webhook service and the delivery worker (a fiber for the
 * layer's lifetime), and the spend gate's hold sweeper (holds whose builds were never used or
 * whose outcome never came, released once expired).
 */
import { Effect, Layer, Redacted } from "effect"
import { hoodPublicClient } from "../chain/hood/client/HoodClient.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig } from "../config/AppConfig.js"
import * as BalanceReader from "../services/accounts/BalanceReader.js"
import { runHoldSweeper } from "../services/spend/SpendStore.js"
import { resolveMasterKey } from "../services/webhooks/SecretBox.js"
import { chainClaimReconciler } from "../services/wiring/ChainReconciler.js"
import * as Stack from "../services/wiring/Stack.js"
import { publicUrlOf, requireServerSecret, ResolvedPlans, stakedMintOf } from "./Common.js"

const stackLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const embeddedDataDir = config.databaseUrl === undefined ? config.dataDir : undefined
    yield* requireServerSecret(config, "WALLET_MASTER_KEY", config.wallets.masterKey)
    const webhookKey = yield* resolveMasterKey({
      configured: config.webhooks.secretKey === undefined ? undefined : Redacted.value(config.webhooks.secretKey),
      dataDir: embeddedDataDir
    })
    const publicUrl = publicUrlOf(config)
    return Stack.layer({
      plans: yield* ResolvedPlans,
      thresholds: config.accounts.tierThresholds,
      publicUrl,
      renewalUrl: config.accounts.renewalUrl ?? `${publicUrl}/pricing`,
      holdingsTtlMs: config.accounts.holdingsTtlMs,
      verificationUri: config.accounts.deviceVerificationUri ?? `${publicUrl}/device`,
      balances: BalanceReader.solanaLayer({
        rpcUrl: endpoints.rpcUrl,
        stakedMint: stakedMintOf(config, endpoints.embedded),
        ttlMs: config.accounts.holdingsTtlMs
      }),
      wallets: {
        masterKey: config.wallets.masterKey,
        dataDir: embeddedDataDir,
        ceilingLamports: config.wallets.ceilingLamports,
        ceilingWei: config.wallets.ceilingWei,
        reconciler: chainClaimReconciler({ solanaRpcUrl: endpoints.rpcUrl, hood: hoodPublicClient(hood.chain, hood.rpcUrl) })
      },
      webhooks: { masterKey: webhookKey, allowLoopbackForTests: config.webhooks.allowLoopbackForTests }
    })
  })
)

/** The account stack with the spend gate's hold sweeper running for the layer's lifetime. */
export const layerConfig = Layer.merge(stackLayer, Layer.scopedDiscard(Effect.forkScoped(runHoldSweeper())))
