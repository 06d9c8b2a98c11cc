/** The agent transfer rail (Solana and Hood, embedded payer), on the one attempt runner, with its recovery (`Recovery.ts`). */
import { Effect, Layer } from "effect"
import * as TransferModule from "../services/transfers/TransferService.js"
import { periodicPass, recoveryPass } from "./Recovery.js"

const serviceLayer = TransferModule.endpointsLayer

const recovery = Layer.scopedDiscard(
  Effect.flatMap(TransferModule.TransferService, (transfers) =>
    Effect.zipRight(
      recoveryPass({
        what: "transfers",
        pass: transfers.recover,
        started: (n) => `settling ${n} transfers a previous run left in flight`,
        swept: (n) => `settling ${n} transfers whose owner's lease ended`
      }),
      periodicPass({ what: "relay-signed TEE transfers", pass: transfers.watchTee, swept: (n) => `settled ${n} relay-signed TEE transfers from the chain` })
    )
  )
)

/** The transfer service from the endpoints, with its recovery. */
export const layerConfig = recovery.pipe(Layer.provideMerge(serviceLayer))
