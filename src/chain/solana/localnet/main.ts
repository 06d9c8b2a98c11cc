/**
 * The Solana localnet on its own (`npm run localnet`): the ledger with its JSON-RPC, Yellowstone
 * gRPC and block-engine servers, printed as one JSON line on stdout
 * (`{rpcUrl, grpcUrl, blockEngineUrl, keeperSecretKey}`), running until SIGINT or SIGTERM. Point
 * the engine at it with SOLANA_RPC_URL, YELLOWSTONE_URL, BLOCK_ENGINE_URL and KEEPER_SECRET_KEY
 * to run the chain and the engine as separate processes (the restart test does).
 * LOCALNET_GENESIS_SEED (default the ledger's) seeds the genesis hash: another seed, another chain.
 * LOCALNET_BUNDLE_FAULTS=true turns on the block engine's fault switch (`localnet_setBundleFaults`,
 * tests only: a bundle's acknowledgement and statuses lost while on).
 */
import { NodeRuntime } from "@effect/platform-node"
import { getBase58Decoder } from "@solana/kit"
import { Config, Effect, Layer } from "effect"
import { KEEPER_SEED, publicKeyBytesFromSeed } from "./DevKeys.js"
import { SolanaLocalnet } from "./LocalnetService.js"

const program = Effect.gen(function* () {
  const localnet = yield* SolanaLocalnet
  const keeperSecretKey = getBase58Decoder().decode(new Uint8Array([...KEEPER_SEED, ...publicKeyBytesFromSeed(KEEPER_SEED)]))
  process.stdout.write(
    JSON.stringify({ rpcUrl: localnet.rpcUrl, grpcUrl: localnet.grpcUrl, blockEngineUrl: localnet.blockEngineUrl, keeperSecretKey }) + "\n"
  )
  return yield* Effect.never
})

const layer = Layer.unwrapEffect(
  Effect.map(
    Config.all({
      slotMs: Config.integer("LOCALNET_SLOT_MS").pipe(Config.withDefault(400)),
      genesisSeed: Config.string("LOCALNET_GENESIS_SEED").pipe(Config.option),
      bundleFaults: Config.boolean("LOCALNET_BUNDLE_FAULTS").pipe(Config.withDefault(false))
    }),
    ({ slotMs, genesisSeed, bundleFaults }) =>
      SolanaLocalnet.layer({
        ledger: { slotMs, ...(genesisSeed._tag === "Some" ? { genesisSeed: genesisSeed.value } : {}) },
        ...(bundleFaults ? { blockEngine: { faultSwitch: true } } : {})
      })
  )
)

program.pipe(Effect.provide(layer), NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: true }))
