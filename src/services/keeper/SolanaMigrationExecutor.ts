/**
 * The keeper's Solana side: a `migrate` instruction signed by the keeper key, sent over
 * JSON-RPC like any client transaction, and progress positions after the confirmed slot.
 */
import { address, type KeyPairSigner } from "@solana/kit"
import { Effect } from "effect"
import { solanaPosition } from "../../../ingest/ChainEvent.js"
import { getMigrateInstruction } from "../../chain/solana/client/CurveInstructions.js"
import type { RpcSender } from "../../chain/solana/RpcSender.js"
import type { MigrationExecutor } from "./MigrationKeeper.js"

const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e))

export const solanaMigrationExecutor = (sender: RpcSender, keeper: KeyPairSigner): MigrationExecutor => ({
  chain: "solana",
  progressPosition: (attempt) =>
    Effect.tryPromise({
      try: (signal) => sender.rpc.getSlot({ commitment: "confirmed" }).send({ abortSignal: signal }),
      catch: describe
    }).pipe(Effect.map((slot) => solanaPosition(slot, 999_999, attempt % 10_000))),
  migrate: (core) =>
    Effect.tryPromise({
      try: async () =>
        sender.send(keeper, [
          await getMigrateInstruction({ keeper, mint: address(core.mint), quoteMint: address(core.identity.quoteMint) })
        ]),
      catch: describe
    })
})
