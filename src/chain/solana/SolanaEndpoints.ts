/**
 * Where the engine reaches Solana: the embedded localnet (started in-process, default) or a real
 * cluster named by `SOLANA_RPC_URL` / `YELLOWSTONE_URL` / `BLOCK_ENGINE_URL`. Also the keeper's
 * signing key: the localnet's keeper in embedded mode, `KEEPER_SECRET_KEY` otherwise (no key:
 * the keeper does not run, and says so).
 */
import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from "@solana/kit"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { keeperSigner } from "./client/DevSigners.js"
import type { Ledger } from "./localnet/Ledger.js"
import { SolanaLocalnet, type SolanaLocalnetError } from "./localnet/LocalnetService.js"

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
  /** The embedded localnet's ledger (funding the local account's wallets); undefined against a cluster. */
  readonly localLedger: Ledger | undefined
}

export class SolanaConfigError extends Schema.TaggedError<SolanaConfigError>()("SolanaConfigError", {
  message: Schema.String
}) {}

export class SolanaEndpoints extends Context.Tag("curvestream/SolanaEndpoints")<SolanaEndpoints, SolanaEndpointsShape>() {
  /** `localnet`: where the embedded localnet keeps its ledger (unset: a new chain in memory each start). */
  static readonly layer = (
    s: SolanaEndpointsConfig,
    localnet?: { readonly dataDir: string; readonly fsync: boolean }
  ): Layer.Layer<SolanaEndpoints, SolanaLocalnetError | SolanaConfigError> => {
    if (s.yellowstoneUrl === undefined && s.rpcUrl === undefined) {
      return Layer.effect(
        SolanaEndpoints,
        Effect.gen(function* () {
          const localnet = yield* SolanaLocalnet
          return {
            embedded: true,
            rpcUrl: localnet.rpcUrl,
            grpcUrl: localnet.grpcUrl,
            grpcToken: undefined,
            blockEngineUrl: localnet.blockEngineUrl,
            keeper: yield* Effect.promise(() => keeperSigner()),
            localLedger: localnet.ledger
          }
        })
      ).pipe(Layer.provide(SolanaLocalnet.layer({ ledger: { slotMs: s.localnetSlotMs }, ...localnet })))
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
          localLedger: undefined
        }
      })
    )
  }
}
