/**
 * Where the engine reaches Solana: the embedded localnet (default; on its own worker thread,
 * `thread.ts`, reached through the sockets it serves like any cluster) or a real cluster named by
 * `SOLANA_RPC_URL` / `YELLOWSTONE_URL` / `BLOCK_ENGINE_URL`. Also the keeper's
 * signing key: the localnet's keeper in embedded mode, `KEEPER_SECRET_KEY` otherwise (no key:
 * the keeper does not run, and says so).
 */
import { type Address, createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from "@solana/kit"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { type LocalnetThreadError, startLocalnetThread } from "../internal/LocalnetThread.js"
import { keeperSigner } from "./client/DevSigners.js"
import type { StakingRewardsRound } from "./localnet/Faucet.js"
import type { SolanaLocalnetThreadInfo, SolanaLocalnetThreadOptions } from "./localnet/threadTypes.js"

/**
 * What the endpoints need from the configuration (`AppConfigShape["solana"]` extends it; the
 * composition root passes that). Declared here so the chain layer never reaches up to `config/`.
 */
export interface SolanaEndpointsConfig {
  /** Unset (with YELLOWSTONE_URL unset): the embedded Solana localnet runs in-process. */
  readonly rpcUrl: string | undefined
  readonly yellowstoneUrl: string | undefined
  readonly yellowstoneToken: Redacted.Redacted<string> | undefined
  readonly blockEngineUrl: string | undefined
  readonly localnetSlotMs: number
  /** The keeper's signing key (base58, 64 bytes) for a real cluster; the localnet's keeper otherwise. */
  readonly keeperSecretKey: Redacted.Redacted<string> | undefined
}

export interface SolanaEndpointsShape {
  readonly embedded: boolean
  readonly rpcUrl: string
  readonly grpcUrl: string
  readonly grpcToken: string | undefined
  readonly blockEngineUrl: string | undefined
  readonly keeper: KeyPairSigner | undefined
  /** The embedded localnet's faucet (funding the local account's wallets, simulated rewards); undefined against a cluster. */
  readonly localFaucet: LocalFaucet | undefined
  /** Fails when the embedded localnet's thread crashes; never against a cluster. */
  readonly localnetCrashed: Effect.Effect<never, LocalnetThreadError>
}

/** The embedded localnet's faucet calls (`localnet/Faucet.ts`, run on the localnet's thread). */
export interface LocalFaucet {
  /** Tops `owner` up to at least `lamports` and, per mint, the raw amount given; never beyond. */
  topUp(owner: Address, lamports: bigint, tokens: ReadonlyArray<readonly [Address, bigint]>): Effect.Effect<void, LocalnetThreadError>
  /** One round of simulated staking rewards; the reward ids distributed. */
  distributeRewards(owners: ReadonlyArray<Address>, round: StakingRewardsRound): Effect.Effect<ReadonlyArray<bigint>, LocalnetThreadError>
}

export class SolanaConfigError extends Schema.TaggedError<SolanaConfigError>()("SolanaConfigError", {
  message: Schema.String
}) {}

export class SolanaEndpoints extends Context.Tag("curvestream/SolanaEndpoints")<SolanaEndpoints, SolanaEndpointsShape>() {
  /** `localnet`: where the embedded localnet keeps its ledger (unset: a new chain in memory each start). */
  static readonly layer = (
    s: SolanaEndpointsConfig,
    localnet?: { readonly dataDir: string; readonly fsync: boolean }
  ): Layer.Layer<SolanaEndpoints, LocalnetThreadError | SolanaConfigError> => {
    if (s.yellowstoneUrl === undefined && s.rpcUrl === undefined) {
      return Layer.scoped(
        SolanaEndpoints,
        Effect.gen(function* () {
          const options: SolanaLocalnetThreadOptions = { ledger: { slotMs: s.localnetSlotMs }, ...localnet }
          const thread = yield* startLocalnetThread<SolanaLocalnetThreadInfo>("solana", new URL("./localnet/thread.ts", import.meta.url), options)
          return {
            embedded: true,
            rpcUrl: thread.info.rpcUrl,
            grpcUrl: thread.info.grpcUrl,
            grpcToken: undefined,
            blockEngineUrl: thread.info.blockEngineUrl,
            keeper: yield* Effect.promise(() => keeperSigner()),
            localFaucet: {
              topUp: (owner, lamports, tokens) => Effect.asVoid(thread.call("topUp", [owner, lamports, tokens])),
              distributeRewards: (owners, round) => Effect.map(thread.call("distributeRewards", [owners, round]), (ids) => ids as ReadonlyArray<bigint>)
            },
            localnetCrashed: thread.crashed
          }
        })
      )
    }
    return Layer.effect(
      SolanaEndpoints,
      Effect.gen(function* () {
        if (s.yellowstoneUrl === undefined || s.rpcUrl === undefined) {
          return yield* new SolanaConfigError({ message: "SOLANA_RPC_URL and YELLOWSTONE_URL must be set together (or both unset for the embedded localnet)" })
        }
        const keeper =
          s.keeperSecretKey === undefined
            ? undefined
            : yield* Effect.tryPromise({
                try: () => createKeyPairSignerFromBytes(getBase58Encoder().encode(Redacted.value(s.keeperSecretKey!))),
                catch: () => new SolanaConfigError({ message: "KEEPER_SECRET_KEY is not a base58 64-byte key" })
              })
        return {
          embedded: false,
          rpcUrl: s.rpcUrl,
          grpcUrl: s.yellowstoneUrl,
          grpcToken: s.yellowstoneToken === undefined ? undefined : Redacted.value(s.yellowstoneToken),
          blockEngineUrl: s.blockEngineUrl,
          keeper,
          localFaucet: undefined,
          localnetCrashed: Effect.never
        }
      })
    )
  }
}
