import { createSolanaRpc, generateKeyPairSigner } from "@solana/kit"
import { it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect } from "vitest"
import { ataOf, tokenBalance } from "./localnet/LedgerTokens.js"
import { openStoredLedger } from "./localnet/LedgerStore.js"
import { USDC_MINT_ADDRESS } from "./program/ProgramIds.js"
import { SolanaEndpoints } from "./SolanaEndpoints.js"

const dir = mkdtempSync(path.join(os.tmpdir(), "solana-endpoints-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const embedded = {
  rpcUrl: undefined,
  yellowstoneUrl: undefined,
  yellowstoneToken: undefined,
  blockEngineUrl: undefined,
  localnetSlotMs: 100,
  keeperSecretKey: undefined
}

describe("SolanaEndpoints, embedded", () => {
  it.scopedLive(
    "runs the localnet on its own thread: served over its sockets, funded over the worker port, its journal holding what it did after the engine's scope closed",
    () =>
      Effect.gen(function* () {
        const owner = (yield* Effect.promise(() => generateKeyPairSigner())).address
        // The endpoints' own scope, closed by the test's scope too if an assertion fails first.
        const scope = yield* Scope.make()
        yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
        const endpoints = Context.get(yield* Layer.buildWithScope(SolanaEndpoints.layer(embedded, { dataDir: dir, fsync: true }), scope), SolanaEndpoints)
        expect(endpoints.embedded).toBe(true)
        yield* endpoints.localFaucet!.topUp(owner, 5_000_000n, [[USDC_MINT_ADDRESS, 7_000_000n]])
        // Topped up to the amounts, never beyond: a second call moves nothing.
        yield* endpoints.localFaucet!.topUp(owner, 5_000_000n, [[USDC_MINT_ADDRESS, 7_000_000n]])
        const rpc = createSolanaRpc(endpoints.rpcUrl)
        const lamports = (yield* Effect.promise(() => rpc.getBalance(owner, { commitment: "processed" }).send())).value
        expect(lamports).toBe(5_000_000n)
        yield* Scope.close(scope, Exit.void)
        // The thread closed the ledger's journal when the scope closed: a reopened chain holds the funds.
        const stored = yield* Effect.acquireRelease(
          Effect.sync(() => openStoredLedger(dir)),
          (s) => Effect.sync(() => s.close())
        )
        expect(stored.created).toBe(false)
        expect(stored.ledger.getBalance(owner)).toBe(5_000_000n)
        expect(tokenBalance(stored.ledger, ataOf(owner, USDC_MINT_ADDRESS))).toBe(7_000_000n)
      })
  )
})
