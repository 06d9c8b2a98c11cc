/**
 * The Hood localnet on its own (`npx tsx src/chain/hood/localnet/main.ts`): the Hardhat (EDR) node
 * with the Hood stack deployed, printed as one JSON line on stdout
 * (`{rpcUrl, wsUrl, chainId, addresses, keeperPrivateKey}`), running until SIGINT or SIGTERM.
 * Point the engine at it with HOOD_RPC_URL to run the chain and the engine as separate processes.
 * HOOD_LOCALNET_PORT (default 0 = free port), HOOD_LOCALNET_BLOCK_MS (default 1000; 0 = automine only)
 * and HOOD_LOCALNET_FAULT_SWITCH (default false; true serves `localnet_setRpcFaults`, for tests).
 */
import { NodeRuntime } from "@effect/platform-node"
import { Config, Effect, Layer } from "effect"
import { HoodLocalnet } from "./LocalnetService.js"

const program = Effect.gen(function* () {
  const localnet = yield* HoodLocalnet
  process.stdout.write(
    JSON.stringify({
      rpcUrl: localnet.rpcUrl,
      wsUrl: localnet.wsUrl,
      chainId: localnet.chainId,
      addresses: localnet.addresses,
      keeperPrivateKey: localnet.roles.keeper.privateKey
    }) + "\n"
  )
  return yield* Effect.never
})

const layer = Layer.unwrapEffect(
  Effect.map(
    Config.all({
      port: Config.integer("HOOD_LOCALNET_PORT").pipe(Config.withDefault(0)),
      blockIntervalMs: Config.integer("HOOD_LOCALNET_BLOCK_MS").pipe(Config.withDefault(1000)),
      faultSwitch: Config.boolean("HOOD_LOCALNET_FAULT_SWITCH").pipe(Config.withDefault(false))
    }),
    // Managed mining: block timestamps follow wall time.
    ({ port, blockIntervalMs, faultSwitch }) => HoodLocalnet.layer({ port, blockIntervalMs, clockMs: Date.now, faultSwitch })
  )
)

program.pipe(Effect.provide(layer), NodeRuntime.runMain({ disableErrorReporting: false, disablePrettyLogger: true }))
