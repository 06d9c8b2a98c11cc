/**
 * Launch spec 4 rule 10: a server without a block engine (`BLOCK_ENGINE_URL` unset against a
 * configured cluster) answers every atomic build and submit `block_engine_missing` (501
 * `VALIDATION_FAILED`, retryable) before reading or recording anything, and runs no recovery pass.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { describe, expect, it } from "vitest"
import * as Database from "../../src/db/Database.js"
import { make } from "../../src/services/launch/atomic/AtomicLaunch.js"

describe("atomic launches without a block engine", () => {
  it("build and submit fail block_engine_missing, retryable; nothing is read, recorded or resumed", async () => {
    const scope = await Effect.runPromise(Scope.make())
    try {
      const ctx = await Effect.runPromise(Layer.buildWithScope(Database.layerTest, scope))
      // Dependencies that throw on any use: the refusal must come before every one of them.
      const untouched = new Proxy({}, { get: (_t, p) => { throw new Error(`touched ${String(p)}`) } }) as never
      const service = await Effect.runPromise(
        Effect.provide(
          Effect.provideService(
            make(
              { baseUrl: "http://x", solanaExplorerUrl: "http://x", exclusiveHolderPassRaw: 0n, teeLaunchBuysEnabled: false, rpcUrl: "http://127.0.0.1:9", engine: undefined, tipLamports: 1n },
              { ledger: untouched, images: untouched, solana: untouched, wallets: untouched, provider: untouched, prices: untouched, holdings: untouched, agentLaunches: untouched }
            ),
            Scope.Scope,
            scope
          ),
          ctx
        )
      )
      const caller = untouched
      const attempts: ReadonlyArray<Effect.Effect<unknown, { readonly reason: string; readonly retryable?: boolean | undefined }>> = [service.build(caller, untouched), service.submit(caller, { bundleId: "bnd_x", signedTxsBase64: [] })]
      for (const attempt of attempts) {
        const exit = await Effect.runPromiseExit(attempt)
        expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" ? [exit.cause.error.reason, exit.cause.error.retryable] : exit).toEqual(["block_engine_missing", true])
      }
      expect(await Effect.runPromise(service.recoverPass)).toEqual({ bundles: 0, failed: 0 })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
