/**
 * A transfer on Hood from the account's embedded EVM wallet (server-signed), the Hood half of
 * `TransferService.build`: the same order of refusals, the same row, machine and attempt runner;
 * only the chain port differs (`HoodTransfers`). The caller already answered a known id and
 * checked the key's embedded-wallet permission.
 *
 * In order, first refusal wins and a refusal records nothing: the embedded wallet and its
 * delegation; the destination (own wallet or approved withdrawal address, `TransferRules`); the
 * asset (ETH, USDG or a token the factory launched); the spend gate's decision. Then, under the
 * wallet's lock (`HoodSender`'s, shared with the trade rail, held through signing, recording,
 * the send and the verdict): a row for the id already? its answer (a racing request); the
 * unsigned transaction on the wallet's next nonce at the node's fee caps; the balances (ETH for
 * the value plus gas limit × fee cap; the token's balance for a token); a dry run answers
 * `ready` here; else the spend hold, the embedded wallet's signature, `sending` recorded with the
 * nonce (in `lastValidBlockHeight`) and the one send (preflight first) and its verdict (the runner).
 */
import type { SqlError } from "@effect/sql/SqlError"
import type * as SqlClient from "@effect/sql/SqlClient"
import { type Clock, Effect } from "effect"
import { getAddress } from "viem"
import type { SpendError } from "../../spend/SpendError.js"
import type { SpendAttempt } from "../../spend/SpendGate.js"
import { check as checkSpend, type ReserveInput } from "../../spend/SpendStore.js"
import { addressKey, type WalletChain } from "../../wallets/ChainKeys.js"
import type { EmbeddedWallet, WalletProviderShape } from "../../wallets/WalletProvider.js"
import { walletRefusal } from "../../wallets/WalletRefusal.js"
import { hoodTransferCall, type HoodTransfers, type HoodUnavailable } from "../HoodTransfers.js"
import type { TransferKey, TransferRunner } from "../TransferAttempt.js"
import { type TransferError, transferError } from "../TransferError.js"
import { classifyDestination, type OwnWallet } from "../TransferRules.js"
import { MAIN_PAYER, type TransferStore, type TransferRow } from "../TransferStore.js"
import type { TransferCaller, TransferInput, TransferView } from "../TransferService.js"

export interface HoodTransferBuildDeps {
  readonly hood: HoodTransfers
  readonly store: TransferStore
  readonly runner: TransferRunner
  readonly provider: WalletProviderShape
  /** Time: the Effect `Clock` the transfer service is built under. */
  readonly clock: Clock.Clock
  readonly embeddedOf: (accountId: string, chain: WalletChain) => Effect.Effect<EmbeddedWallet, TransferError | SqlError>
  readonly ownWallets: (accountId: string, embedded: string, chain: WalletChain) => Effect.Effect<ReadonlyArray<OwnWallet>, SqlError>
  readonly approvedId: (accountId: string, to: string, chain: WalletChain) => Effect.Effect<string | null, SqlError>
  readonly gateInput: (
    caller: TransferCaller,
    input: TransferInput
  ) => Effect.Effect<{ readonly accountId: string; readonly keyPrefix: string; readonly chain: TransferInput["chain"]; readonly attempt: SpendAttempt }>
  /** The spend gate's hold around the sign and send (`SpendStore.holdAround`, with this rail's reservation id and row). */
  readonly heldAround: <A, E>(caller: TransferCaller, input: TransferInput, gate: Omit<ReserveInput, "reservationId">, run: Effect.Effect<A, E>) => Effect.Effect<A, E | SpendError>
  readonly answer: (row: TransferRow, requestHash: string, replay: boolean) => Effect.Effect<TransferView, TransferError>
  readonly withSql: <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.Effect<A, E>
  readonly chainDown: (e: { readonly message: string }) => TransferError
}

export const makeHoodTransferBuild =
  (deps: HoodTransferBuildDeps) =>
  (caller: TransferCaller, input: TransferInput, requestHash: string): Effect.Effect<TransferView, TransferError | SpendError | SqlError> =>
    Effect.gen(function* () {
      const { hood, store } = deps
      const down = (e: HoodUnavailable) => deps.chainDown(e)
      const from = getAddress((yield* deps.embeddedOf(caller.accountId, "evm")).address)
      // `normalized` by the service: EIP-55 when it is an address at all (anything else matches no wallet and is refused).
      const to = input.to
      const destination = classifyDestination({
        sourceKey: addressKey("evm", from),
        destinationKey: addressKey("evm", to),
        ownWallets: yield* deps.ownWallets(caller.accountId, from, "evm"),
        approvedId: yield* deps.approvedId(caller.accountId, to, "evm")
      })
      if (destination._tag === "Refused") {
        return yield* destination.reason === "same_wallet"
          ? transferError("same_wallet", "The destination is the source wallet itself")
          : transferError("destination_not_allowed", "A transfer goes only to one of the account's own wallets or to an approved withdrawal address")
      }
      const token = yield* Effect.mapError(hood.tokenOf(input.asset), down)
      if (token === undefined) return yield* transferError("asset_unsupported", `${input.asset} is neither ETH, USDG nor a token launched on this service's Hood factory`)

      const gate = yield* deps.gateInput(caller, input)
      const decided = yield* deps.withSql(checkSpend(gate))
      if (decided._tag === "Refused") return yield* Effect.fail(decided.error)

      return yield* hood.withWallet(
        from,
        Effect.gen(function* () {
          // A request that waited for the lock behind the one that recorded this id: its answer, nothing built.
          const raced = yield* store.get(caller.accountId, input.clientTransferId)
          if (raced !== undefined) return yield* deps.answer(raced, requestHash, true)

          const source = yield* Effect.mapError(hood.source(from, getAddress(to), token), down)
          const built = yield* Effect.mapError(hood.unsigned(from, hoodTransferCall({ to: getAddress(to), token, amountRaw: input.amountRaw, toHasCode: source.toHasCode })), down)
          const neededWei = built.value + built.gas * built.maxFeePerGas
          if (source.weiRaw < neededWei || (source.tokenRaw !== null && source.tokenRaw < input.amountRaw)) {
            return yield* transferError("insufficient_balance", "The embedded wallet cannot cover the amount and the network fee (gas limit at the fee cap)", {
              details: {
                balanceWei: source.weiRaw.toString(),
                neededWei: neededWei.toString(),
                ...(source.tokenRaw !== null ? { balanceRaw: source.tokenRaw.toString(), neededRaw: input.amountRaw.toString() } : {})
              }
            })
          }
          const plan = {
            clientTransferId: input.clientTransferId,
            chain: "hood" as const,
            asset: input.asset,
            amountRaw: input.amountRaw.toString(),
            from,
            to,
            destinationClass: destination.destinationClass,
            destinationKind: destination.destinationKind,
            ...(destination.walletId !== null ? { walletId: destination.walletId } : {}),
            payer: "main" as const
          }
          if (input.dryRun) return { status: "ready", ...plan, replay: false, createsAccount: false } satisfies TransferView

          return yield* deps.heldAround(caller, input, gate, Effect.gen(function* () {
            const signed = yield* deps.provider
              .signWithEmbedded(caller.accountId, "evm", built.bytes)
              .pipe(Effect.catchTag("WalletProviderError", (e) => Effect.fail(transferError("signing_refused", walletRefusal(e).message))))
            const row: TransferRow = {
              ...MAIN_PAYER,
              accountId: caller.accountId,
              clientTransferId: input.clientTransferId,
              keyId: caller.keyId,
              keyPrefix: caller.keyPrefix,
              requestHash,
              chain: "hood",
              asset: input.asset,
              mint: token,
              amountRaw: input.amountRaw,
              from,
              to,
              destinationClass: destination.destinationClass,
              destinationKind: destination.destinationKind,
              toWalletId: destination.walletId,
              state: "sending",
              signature: signed.signature,
              // Hood: the transaction's nonce (what decides that it never lands).
              lastValidBlockHeight: BigInt(built.nonce),
              error: null,
              createdAtMs: yield* deps.clock.currentTimeMillis
            }
            const key: TransferKey = { accountId: caller.accountId, clientTransferId: input.clientTransferId }
            const applied = yield* deps.runner
              .apply(key, undefined, { event: { _tag: "Built", requestHash, signature: signed.signature }, insert: row, wire: signed.signedTransaction })
              .pipe(Effect.catchTag("RowLeaseLost", () => Effect.succeed({ _tag: "Moved" } as const)))
            if (applied._tag !== "Saved") {
              // Another process recorded this id first: answer as its row stands; nothing of ours was sent.
              const now = yield* store.get(caller.accountId, input.clientTransferId)
              if (now === undefined) return yield* Effect.dieMessage("transfer row vanished after a racing insert")
              return yield* deps.answer(now, requestHash, true)
            }
            return yield* deps.answer(applied.state, requestHash, false)
          }))
        })
      )
    })
