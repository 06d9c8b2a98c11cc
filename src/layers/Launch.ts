/**
 * Launches: the ledger, hosted images, the Solana and Hood chain sides, the headless, self-signed
 * and atomic launch services over them (their background runs live as long as the layer), and the
 * recovery this layer owns: launches and atomic bundles a previous run left in flight, resumed when
 * the layer is built, then a sweep for launches whose owner's lease ended (`Recovery.ts`).
 */
import { launchFailureCodesLayer } from "../../api/LaunchCodes.js"
import { Effect, Layer, Redacted } from "effect"
import { makeBlockEngineClient } from "../chain/solana/client/BlockEngineClient.js"
import { TREASURY_ADDRESS } from "../chain/solana/localnet/DevKeys.js"
import { HoodEndpoints } from "../chain/hood/HoodEndpoints.js"
import { SolanaEndpoints } from "../chain/solana/SolanaEndpoints.js"
import { AppConfig, type AppConfigShape } from "../config/AppConfig.js"
import { readOrCreateKeyFile } from "../platform/KeyFile.js"
import * as ImageServiceModule from "../services/images/ImageService.js"
import * as AtomicLaunchModule from "../services/launch/atomic/AtomicLaunch.js"
import * as HeadlessLaunchModule from "../services/launch/HeadlessLaunch.js"
import * as HoodLaunchModule from "../services/launch/HoodHeadlessLaunch.js"
import * as HoodSelfLaunchModule from "../services/launch/HoodSelfLaunch.js"
import * as LaunchLedgerModule from "../services/launch/LaunchLedger.js"
import * as SelfLaunchModule from "../services/launch/SelfLaunch.js"
import * as SolanaLaunchModule from "../services/launch/SolanaLaunch.js"
import * as SolanaSelfLaunchModule from "../services/launch/SolanaSelfLaunch.js"
import { publicUrlOf, ResolvedPlans, solanaTreasuryOf } from "./Common.js"
import { recoveryPass } from "./Recovery.js"
import * as path from "node:path"

const LAUNCH_MINT_SECRET_FILE = "launch-mint-secret"

/**
 * The secret launch mints derive from: `LAUNCH_MINT_SECRET`, else (embedded mode) a random one kept
 * in the data directory (mode 0600) so restarts and crash recovery derive the same mints.
 */
const launchMintSecret = (config: AppConfigShape): Effect.Effect<Uint8Array, Error> =>
  Effect.gen(function* () {
    if (config.launch.mintSecret !== undefined) return Uint8Array.from(Buffer.from(Redacted.value(config.launch.mintSecret).trim(), "hex"))
    if (config.databaseUrl !== undefined) return yield* Effect.fail(new Error("LAUNCH_MINT_SECRET must be set when the engine uses a PostgreSQL server (DATABASE_URL)"))
    const file = path.join(config.dataDir, LAUNCH_MINT_SECRET_FILE)
    const text = yield* Effect.try({
      try: () => readOrCreateKeyFile(config.dataDir, LAUNCH_MINT_SECRET_FILE, 32),
      catch: (e) => new Error(`cannot read or create ${file}: ${String(e)}`)
    })
    const secret = Uint8Array.from(Buffer.from(text.trim(), "base64"))
    if (secret.byteLength < 32) return yield* Effect.fail(new Error(`${file} is not base64 of at least 32 bytes; restore it (launch mints derive from it)`))
    return secret
  })

const servicesLayer = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const endpoints = yield* SolanaEndpoints
    const hood = yield* HoodEndpoints
    const publicUrl = publicUrlOf(config)
    const mintSecret = yield* launchMintSecret(config)
    const treasury = solanaTreasuryOf(config, endpoints.embedded)
    if (treasury === undefined && config.launch.enabled) {
      return yield* Effect.fail(new Error("SOLANA_TREASURY_ADDRESS must be set to launch against a configured Solana cluster"))
    }
    const hoodSide = {
      chain: hood.chain,
      rpcUrl: hood.rpcUrl,
      factory: hood.addresses.factory,
      bondingCurveBytecode: hood.bondingCurveBytecode,
      ...(hood.addresses.usdg !== undefined ? { usdg: hood.addresses.usdg } : {}),
      ...(config.launch.hoodExplorerUrl !== undefined ? { explorerUrl: config.launch.hoodExplorerUrl } : {}),
      baseUrl: publicUrl
    }
    const chains = Layer.mergeAll(
      ImageServiceModule.layer({ publicBaseUrl: publicUrl, allowLoopbackForTests: config.launch.imageAllowLoopbackForTests }),
      SolanaLaunchModule.layer({ rpcUrl: endpoints.rpcUrl, mintSecret: Redacted.make(mintSecret), treasury: treasury ?? TREASURY_ADDRESS }),
      HoodLaunchModule.layer({ ...hoodSide, plans: yield* ResolvedPlans })
    )
    const exclusiveHolderPassRaw = BigInt(config.launch.exclusiveHolderPassSvc) * 10n ** 6n
    const headless = HeadlessLaunchModule.layer({
      baseUrl: publicUrl,
      solanaExplorerUrl: config.launch.solanaExplorerUrl,
      ...(config.launch.hoodExplorerUrl !== undefined ? { hoodExplorerUrl: config.launch.hoodExplorerUrl } : {}),
      exclusiveHolderPassRaw
    })
    const selfSigned = SelfLaunchModule.layer.pipe(
      Layer.provideMerge(
        Layer.merge(
          SolanaSelfLaunchModule.layer({
            baseUrl: publicUrl,
            solanaExplorerUrl: config.launch.solanaExplorerUrl,
            exclusiveHolderPassRaw,
            teeLaunchBuysEnabled: config.launch.teeLaunchBuys,
            ...(endpoints.embedded ? { slotMs: config.solana.localnetSlotMs } : {})
          }),
          HoodSelfLaunchModule.layer({ ...hoodSide, exclusiveHolderPassRaw, teeLaunchBuysEnabled: config.launch.teeLaunchBuys })
        )
      )
    )
    const atomic = AtomicLaunchModule.layer({
      baseUrl: publicUrl,
      solanaExplorerUrl: config.launch.solanaExplorerUrl,
      exclusiveHolderPassRaw,
      teeLaunchBuysEnabled: config.launch.teeLaunchBuys,
      rpcUrl: endpoints.rpcUrl,
      engine: endpoints.blockEngineUrl === undefined ? undefined : makeBlockEngineClient({ url: endpoints.blockEngineUrl }),
      tipLamports: config.solana.bundleTipLamports,
      ...(endpoints.embedded ? { slotMs: config.solana.localnetSlotMs } : {})
    })
    return Layer.mergeAll(headless, selfSigned, atomic).pipe(Layer.provideMerge(chains), Layer.provideMerge(LaunchLedgerModule.layer.pipe(Layer.provide(launchFailureCodesLayer))))
  })
)

/** Headless launches left in flight (resumed, then swept), and atomic bundles left unsettled (resumed once). */
const recovery = Layer.scopedDiscard(
  Effect.gen(function* () {
    yield* recoveryPass({
      what: "launches",
      pass: (yield* HeadlessLaunchModule.HeadlessLaunch).resumeInFlight,
      started: (n) => `resuming ${n} launches a previous run left in flight`,
      swept: (n) => `taking over ${n} launches whose owner's lease ended`
    })
    const bundles = yield* (yield* AtomicLaunchModule.AtomicLaunch).recoverPass
    if (bundles.bundles > 0) yield* Effect.logInfo(`resumed ${bundles.bundles} atomic bundles a previous run left unsettled (${bundles.failed} left for the next pass)`)
  })
)

/** The launch services from the configuration and the endpoints, with their recovery. */
export const layerConfig = recovery.pipe(Layer.provideMerge(servicesLayer))
