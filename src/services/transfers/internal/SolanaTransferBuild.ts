/**
 * The embedded payer's transfer on Solana (the rail's order in `TransferService`, from step 2):
 * the embedded wallet and its delegation, the destination, the spend gate's decision, the funds;
 * then the dry run's plan, or the hold around build, sign, record `sending` and send once (the
 * runner), answered as the row stands.
 */
import { type Clock, Effect } from "effect"
import { requestMemo } from "../../../chain/solana/client/RequestMemo.js"
import { SVC_MINT, USDC_MINT } from "../../../domain/QuotePairs.js"
import { check as checkSpend } from "../../spend/SpendStore.js"
import { addressKey } from "../../wallets/ChainKeys.js"
import type { WalletProviderShape } from "../../wallets/WalletProvider.js"
import { walletRefusal } from "../../wallets/WalletRefusal.js"
import type { SolanaTransfers } from "../SolanaTransfers.js"
import type { TransferKey, TransferRunner } from "../TransferAttempt.js"
import { transferError } from "../TransferError.js"
import { classifyDestination } from "../TransferRules.js"
import type { TransferCaller, TransferInput, TransferView } from "../TransferService.js"
import { MAIN_PAYER, type TransferRow, type TransferStore } from "../TransferStore.js"
import { answer } from "./TransferAnswers.js"
import type { TransferParts } from "./TransferParts.js"

/** The named assets' mints on Solana (`sol` is lamports: no mint); anything else is a mint address. */
const NAMED_MINTS: Readonly<Record<string, string | null>> = { sol: null, usdc: USDC_MINT, svc: SVC_MINT }

export const solanaMintOf = (asset: string): string | null => (asset in NAMED_MINTS ? NAMED_MINTS[asset]! : asset)

export interface SolanaTransferBuildDeps {
  readonly solana: SolanaTransfers
  readonly store: TransferStore
  readonly runner: TransferRunner
  readonly provider: WalletProviderShape
  /** Time: the Effect `Clock` the transfer service is built under. */
  readonly clock: Clock.Clock
  readonly parts: TransferParts
}

export const makeSolanaTransferBuild = (deps: SolanaTransferBuildDeps) => {
  const { solana, store, runner, provider, clock } = deps
  const { embeddedOf, ownWallets, approvedId, gateInput, heldAround, withSql, chainDown, solanaFunds } = deps.parts

  const build = (caller: TransferCaller, input: TransferInput, requestHash: string) =>
    Effect.gen(function* () {
      const embedded = yield* embeddedOf(caller.accountId, "solana")
      const from = embedded.address

      const mint = input.asset in NAMED_MINTS ? NAMED_MINTS[input.asset]! : input.asset
      const destination = classifyDestination({
        sourceKey: addressKey("solana", from),
        destinationKey: addressKey("solana", input.to),
        ownWallets: yield* ownWallets(caller.accountId, from),
        approvedId: yield* approvedId(caller.accountId, input.to)
      })
      if (destination._tag === "Refused") {
        return yield* destination.reason === "same_wallet"
          ? transferError("same_wallet", "The destination is the source wallet itself")
          : transferError("destination_not_allowed", "A transfer goes only to one of the account's own wallets or to an approved withdrawal address")
      }

      const gate = yield* gateInput(caller, input)
      const decided = yield* withSql(checkSpend(gate))
      if (decided._tag === "Refused") return yield* Effect.fail(decided.error)

      const source = yield* solanaFunds(from, input, mint, "The embedded wallet")
      const plan = {
        clientTransferId: input.clientTransferId,
        chain: "solana" as const,
        asset: input.asset,
        amountRaw: input.amountRaw.toString(),
        from,
        to: input.to,
        destinationClass: destination.destinationClass,
        destinationKind: destination.destinationKind,
        ...(destination.walletId !== null ? { walletId: destination.walletId } : {}),
        payer: "main" as const
      }
      if (input.dryRun) return { status: "ready", ...plan, replay: false, createsAccount: source.createsAccount } satisfies TransferView

      return yield* heldAround(caller, input, gate, send(caller, input, requestHash, from, mint, source, destination))
    })

  /** Builds, signs, records `sending` and sends once (the runner), its spend held by the caller. */
  const send = (
    caller: TransferCaller,
    input: TransferInput,
    requestHash: string,
    from: string,
    mint: string | null,
    source: { readonly decimals: number | null; readonly createsAccount: boolean },
    destination: { readonly destinationClass: TransferRow["destinationClass"]; readonly destinationKind: TransferRow["destinationKind"]; readonly walletId: string | null }
  ) =>
    Effect.gen(function* () {
      const built = yield* Effect.mapError(
        solana.build({
          owner: from,
          to: input.to,
          mint,
          amountRaw: input.amountRaw,
          decimals: source.decimals,
          createsAccount: source.createsAccount,
          memo: requestMemo("transfer", caller.accountId, input.clientTransferId)
        }),
        chainDown
      )
      const signed = yield* provider.signWithEmbedded(caller.accountId, "solana", built.wire).pipe(
        Effect.catchTag("WalletProviderError", (e) => Effect.fail(transferError("signing_refused", walletRefusal(e).message)))
      )
      const row: TransferRow = {
        ...MAIN_PAYER,
        accountId: caller.accountId,
        clientTransferId: input.clientTransferId,
        keyId: caller.keyId,
        keyPrefix: caller.keyPrefix,
        requestHash,
        chain: "solana",
        asset: input.asset,
        mint,
        amountRaw: input.amountRaw,
        from,
        to: input.to,
        destinationClass: destination.destinationClass,
        destinationKind: destination.destinationKind,
        toWalletId: destination.walletId,
        state: "sending",
        signature: signed.signature,
        lastValidBlockHeight: built.lastValidBlockHeight,
        error: null,
        createdAtMs: yield* clock.currentTimeMillis
      }
      const key: TransferKey = { accountId: caller.accountId, clientTransferId: input.clientTransferId }
      // Recorded `sending` (this process its driver) before the one send; then the chain's verdict.
      const applied = yield* runner
        .apply(key, undefined, { event: { _tag: "Built", requestHash, signature: signed.signature }, insert: row, wire: signed.signedTransaction })
        .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
      if (applied._tag !== "Saved") {
        // Another request under this id recorded first: answer as its row stands; nothing of ours was sent.
        const now = yield* store.get(caller.accountId, input.clientTransferId)
        if (now === undefined) return yield* Effect.dieMessage("transfer row vanished after a racing insert")
        return yield* answer(now, requestHash, true)
      }
      return yield* answer(applied.state, requestHash, false)
    })


  return build
}
