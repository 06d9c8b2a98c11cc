/**
 * The transfer machine over rows (`transferMachine`): a TEE row entering `sending` keeps the
 * signed bytes it is sent with (the Hood port broadcasts the same bytes again after a crash; the
 * server cannot sign for a TEE wallet), a main-payer row never stores them, and the bytes travel
 * as the `Send` output either way. And what the node refusing a `Send` decides: the embedded
 * wallet's bytes fail the row; a TEE row's (its caller holds them too) decide nothing unless they
 * can never land.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { type TransferChainPort, transferMachine, transferPorts } from "./TransferAttempt.js"
import { MAIN_PAYER, type TransferRow } from "./TransferStore.js"

const base: TransferRow = {
  ...MAIN_PAYER,
  accountId: "acct",
  clientTransferId: "t-1",
  keyId: "kid",
  keyPrefix: "prefix00",
  requestHash: "h",
  chain: "hood",
  asset: "eth",
  mint: null,
  amountRaw: 5n,
  from: "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
  to: "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
  destinationClass: "approved",
  destinationKind: "vault",
  toWalletId: null,
  state: "built",
  signature: "",
  lastValidBlockHeight: 3n,
  error: null,
  createdAtMs: 0
}
const tee: TransferRow = { ...base, payer: "tee", walletId: "w-1", claimId: "clm-1", claimExpiresAtMs: 1_800_000, transaction: "0x02", messageHash: "ab" }

describe("transferMachine", () => {
  it("a TEE row entering sending keeps the signed bytes it is sent with", () => {
    const [next, outputs] = transferMachine.step(tee, { event: { _tag: "Sent", signature: "0xhash" }, wire: "0x02signed" })
    expect(next).toMatchObject({ state: "sending", signature: "0xhash", signedTransaction: "0x02signed" })
    expect(outputs).toEqual([{ _tag: "Send", wire: "0x02signed" }, { _tag: "Await" }])
  })

  it("a TEE row moved to sending without bytes (the caller broadcast them) stores none; a main-payer row never stores them", () => {
    const [reconciled] = transferMachine.step(tee, { event: { _tag: "Sent", signature: "0xhash" } })
    expect(reconciled).toMatchObject({ state: "sending", signedTransaction: null })
    const [main, outputs] = transferMachine.step(undefined, { event: { _tag: "Built", requestHash: "h", signature: "0xmain" }, insert: { ...base, state: "sending", signature: "0xmain" }, wire: "0x02main" })
    expect(main).toMatchObject({ state: "sending", signature: "0xmain", signedTransaction: null })
    expect(outputs).toContainEqual({ _tag: "Send", wire: "0x02main" })
  })
})

describe("a Send the node refuses", () => {
  const refusing = (final: boolean): TransferChainPort => ({
    send: () => Effect.fail({ message: "preflight: insufficient funds", final }),
    observe: () => Effect.succeed({ outcome: "pending" })
  })
  const perform = (row: TransferRow, final: boolean) =>
    Effect.runPromise(
      transferPorts({ chainOf: () => refusing(final), confirmTimeoutMs: 1, pollIntervalMs: 1 }).perform(
        { accountId: row.accountId, clientTransferId: row.clientTransferId },
        { ...row, state: "sending" },
        { _tag: "Send", wire: "0x02" }
      )
    )

  it("fails the embedded wallet's row: its bytes never left the server", async () => {
    expect(await perform(base, false)).toEqual({ event: { _tag: "Observed", outcome: "reverted", error: "the node refused the transaction: preflight: insufficient funds" } })
  })

  it("decides nothing for a TEE row (its caller holds the same bytes), unless they can never land", async () => {
    expect(await perform(tee, false)).toBeUndefined()
    expect(await perform(tee, true)).toMatchObject({ event: { _tag: "Observed", outcome: "reverted" } })
  })
})
