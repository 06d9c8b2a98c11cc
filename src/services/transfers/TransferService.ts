/**
 * The agent transfer rail (spec document 2: 2.1 "Only Withdraw moves funds", "Transaction-limit
 * rules", section 6 `transfer.executed`), main (embedded, server-signed) payer: on Solana SOL,
 * USDC, the platform token and launched SPL tokens; on Hood ETH, USDG and launched tokens
 * (`internal/HoodTransferBuild.ts`: the same order, under the wallet's nonce lock).
 *
 * Order of a build, first refusal wins and a refusal records nothing:
 * 1. a known `clientTransferId` is answered from its row (same body: the transfer as it stands,
 *    never sent again; another body: `idempotency_conflict`), before any chain read;
 * 2. the key's embedded-wallet permission, then the embedded wallet and its delegation;
 * 3. the destination (`TransferRules`): one of the account's own wallets or an active approved
 *    withdrawal address;
 * 4. THE SPEND GATE (`src/services/spend/`), as every spending rail: the key's per-asset cap and
 *    its `txLimit` window against the transfer's USD value, the key's limits read from storage
 *    (fails closed when a USD cap cannot be valued); a dry run only asks, a build holds the value
 *    under the key's lock before anything is signed (reservation `transfer:[account, id]`), the
 *    `confirmed` save books it, the `failed` save releases it, and an attempt that ends before
 *    its row exists releases it at once (the sweep covers a killed process);
 * 5. balances: the amount, the network fee and a created token account's rent;
 * then (not a dry run) build, sign with the embedded wallet, record `sending` and send once through
 * the attempt runner, which settles it from the chain and writes `transfer.executed` with
 * `confirmed`. Racing requests under one id: one row is inserted; the others answer as it stands.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { getAddress, isAddress } from "viem"
import { HoodEndpoints } from "../../chain/hood/HoodEndpoints.js"
import { SolanaEndpoints } from "../../chain/solana/SolanaEndpoints.js"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { AccountEvents, type AccountEventsShape } from "../accounts/AccountEvents.js"
import { PriceSource, type PriceSourceShape } from "../prices/PriceSource.js"
import { WalletProvider, type WalletProviderShape, layerTest as walletProviderTest } from "../wallets/WalletProvider.js"
import { settleSignedClaim, WalletService, type WalletServiceShape } from "../wallets/WalletService.js"
import { makeTeeTransfers, type SignedTransferSubmit, type TeeTransferFailure } from "./internal/TeeTransfers.js"
import type { Principal } from "../wallets/Principal.js"
import { makeHoodTransfers, type HoodTransfersOptions } from "./HoodTransfers.js"
import { makeHoodTransferBuild } from "./internal/HoodTransferBuild.js"
import { makeSolanaTransferBuild, solanaMintOf } from "./internal/SolanaTransferBuild.js"
import { answer, viewOf } from "./internal/TransferAnswers.js"
import { makeTransferParts } from "./internal/TransferParts.js"
import { makeSolanaTransfers } from "./SolanaTransfers.js"
import { makeTransferRunner, type TransferChainPort } from "./TransferAttempt.js"
import { transferError } from "./TransferError.js"
import { makeTransferStore, type TransferRow } from "./TransferStore.js"
import * as Database from "../../db/Database.js"

export interface TransferCaller {
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  readonly embeddedWallet: "allowed" | "denied"
  /** The key as the wallet rules see it (its scopes, read at this request); a TEE payer needs it. */
  readonly principal?: Principal
}

export interface TransferInput {
  readonly clientTransferId: string
  readonly chain: "solana" | "hood"
  /** Solana: `sol`, `usdc`, `svc` or an SPL mint address. Hood: `eth`, `usdg` or a launched token's address (EIP-55). */
  readonly asset: string
  readonly amountRaw: bigint
  readonly to: string
  readonly dryRun: boolean
  /** `main` (default): the embedded wallet, signed server-side; `tee`: the TEE wallet `linkedWalletId` bound to the key, signed through the sign relay. */
  readonly payer?: "main" | "tee"
  readonly linkedWalletId?: string
}

export interface TransferView {
  /** `built`: a TEE build waiting for its signed transaction (`/transfer/submit`). */
  readonly status: "ready" | "built" | "sending" | "confirmed"
  readonly clientTransferId: string
  readonly chain: "solana" | "hood"
  readonly asset: string
  readonly amountRaw: string
  readonly from: string
  readonly to: string
  readonly destinationClass: "own" | "approved"
  readonly destinationKind: string
  readonly walletId?: string
  readonly signature?: string
  readonly replay: boolean
  readonly createsAccount?: boolean
  readonly payer: "main" | "tee"
  /** The paying TEE wallet's id (payer tee). */
  readonly linkedWalletId?: string
  /** A TEE build: the unsigned transaction (Solana base64 wire bytes; Hood the 0x-hex serialized transaction), its single-use sign claim and (Solana) when its blockhash expires. */
  readonly transaction?: string
  readonly signClaim?: { readonly claimId: string; readonly expiresAt: string }
  readonly lastValidBlockHeight?: string
}

export interface TransferServiceOptions {
  readonly solanaRpcUrl: string
  /** The Hood node and contracts; absent: Hood transfers are refused (`chain_unsupported`). */
  readonly hood?: HoodTransfersOptions
  readonly provider: WalletProviderShape
  readonly events: AccountEventsShape
  /** USD prices for the spend gate; absent: a key with a USD cap is refused `limit_unavailable`. */
  readonly prices?: PriceSourceShape
  readonly leases?: RowLeases
  readonly confirmTimeoutMs?: number
  readonly pollIntervalMs?: number
  /** The wallet rules and sign claims (the TEE payer, on Solana and, with `hood`, on Hood); absent: TEE transfers are refused (`chain_unsupported`). */
  readonly wallets?: WalletServiceShape
}

/** The digest of what a request asks (its id excluded; `dryRun` excluded: a dry run records nothing). */
export const requestHashOf = (i: TransferInput): string =>
  createHash("sha256")
    .update(JSON.stringify([i.chain, i.asset, i.amountRaw.toString(), i.to, ...(i.payer === "tee" ? ["tee", i.linkedWalletId ?? ""] : [])]))
    .digest("hex")

/** Hood addresses in their EIP-55 form (the hash, the row and the event carry it), whatever case the request used; anything else as sent. */
export const normalized = (i: TransferInput): TransferInput => {
  if (i.chain !== "hood") return i
  const evm = (a: string) => (isAddress(a, { strict: false }) ? getAddress(a.toLowerCase()) : a)
  return { ...i, to: evm(i.to), asset: i.asset === "eth" || i.asset === "usdg" ? i.asset : evm(i.asset) }
}

const storage = storageFailure("transfers", () => transferError("storage", "Internal error; nothing was recorded"))

export const makeTransferService = (options: TransferServiceOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    /** Time: the Effect `Clock` the service is built under, handed to its parts. */
    const clock = yield* Effect.clock
    const provider = options.provider
    const solana = makeSolanaTransfers(options.solanaRpcUrl)
    const hood = options.hood === undefined ? undefined : makeHoodTransfers(options.hood)
    const hoodPort = hood?.port((accountId, bytes) => provider.signWithEmbedded(accountId, "evm", bytes))
    /** A Hood row on a server without a Hood node (configured before a restart): never sent, left `sending` until a server with the node settles it. */
    const hoodOff: TransferChainPort = {
      send: () => Effect.fail({ message: "this server does not run Hood transfers", final: true }),
      observe: () => Effect.fail({ message: "this server does not run Hood transfers" })
    }
    const store = makeTransferStore(sql, options.events, clock)
    const portOf = (chain: TransferRow["chain"]): TransferChainPort => (chain === "solana" ? solana.port : (hoodPort ?? hoodOff))
    const runner = makeTransferRunner({
      sql,
      leases: options.leases ?? makeRowLeases(sql),
      store,
      chainOf: portOf,
      confirmTimeoutMs: options.confirmTimeoutMs ?? 60_000,
      pollIntervalMs: options.pollIntervalMs ?? 500,
      // A claim the relay signed follows the transfer's outcome, whoever settles it (docs/decisions.md "A transfer's sign claim follows the transfer").
      settleClaim: settleSignedClaim(options.wallets)
    })
    const parts = makeTransferParts({ sql, provider, prices: options.prices, store, solana })
    const { withSql, chainDown, embeddedOf, ownWallets, approvedId, gateInput, heldAround, solanaFunds } = parts
    const solanaBuild = makeSolanaTransferBuild({ solana, store, runner, provider, clock, parts })

    const hoodBuild =
      hood === undefined
        ? undefined
        : makeHoodTransferBuild({
            hood,
            store,
            runner,
            provider,
            clock,
            embeddedOf,
            ownWallets,
            approvedId,
            gateInput,
            heldAround,
            answer,
            withSql,
            chainDown
          })

    const tee =
      options.wallets === undefined
        ? undefined
        : makeTeeTransfers({
            sql,
            store,
            runner,
            solana,
            hood,
            portOf,
            wallets: options.wallets,
            clock,
            mintOf: solanaMintOf,
            solanaFunds,
            gateInput,
            heldAround,
            answer,
            viewOf,
            withSql,
            chainDown
          })

    const build = (caller: TransferCaller, request: TransferInput): Effect.Effect<TransferView, TeeTransferFailure> =>
      Effect.gen(function* () {
        const input = normalized(request)
        const requestHash = requestHashOf(input)
        const existing = yield* store.get(caller.accountId, input.clientTransferId)
        if (existing !== undefined) return yield* answer(existing, requestHash, true, input.payer === "tee" ? "Recorded" : "Built")

        if (input.payer === "tee") {
          if (tee === undefined) return yield* transferError("chain_unsupported", "This server does not run transfers out of a TEE wallet (payer tee)")
          return yield* tee.build(caller, input, requestHash)
        }

        if (caller.embeddedWallet !== "allowed") {
          return yield* transferError("embedded_wallet_not_permitted", "This key may not use the embedded wallet (embeddedWallet is denied)")
        }
        if (input.chain === "hood") {
          if (hoodBuild === undefined) return yield* transferError("chain_unsupported", "This server does not run Hood transfers (no Hood node is configured)")
          return yield* hoodBuild(caller, input, requestHash)
        }
        return yield* solanaBuild(caller, input, requestHash)
      }).pipe(storage, Effect.withSpan("TransferService.build"))

    /** `POST /transfer/submit`: a TEE build's signed transaction, verified and sent once. */
    const submit = (caller: TransferCaller, input: SignedTransferSubmit): Effect.Effect<TransferView, TeeTransferFailure> =>
      (tee === undefined ? Effect.fail(transferError("transfer_not_found", `No transfer ${input.clientTransferId.slice(0, 128)} built with a TEE payer on this server`)) : tee.submit(caller, input)).pipe(
        storage,
        Effect.withSpan("TransferService.submit")
      )

    /** Settles the transfers left in flight (sent, verdict unread): the start pass and the sweep. */
    const recover = storage(runner.recover).pipe(Effect.withSpan("TransferService.recover"))

    /**
     * One pass over relay-signed TEE builds nobody submitted (`TeeTransfers.reconcile`): it reads
     * the chain per row, so it runs periodically, never in the start pass that holds the listener.
     */
    const watchTee = storage(tee === undefined ? Effect.succeed(0) : tee.reconcile).pipe(Effect.withSpan("TransferService.watchTee"))

    return { build, submit, recover, watchTee, requestHashOf }
  })

export type TransferServiceShape = Effect.Effect.Success<ReturnType<typeof makeTransferService>>

export class TransferService extends Context.Tag("curvestream/TransferService")<TransferService, TransferServiceShape>() {}

/** The service over the wallet provider, the account events port (the webhook outbox) and USD prices in context. */
export const layer = (
  options: Omit<TransferServiceOptions, "provider" | "events" | "prices" | "wallets">
): Layer.Layer<TransferService, never, SqlClient.SqlClient | WalletProvider | AccountEvents | PriceSource> =>
  Layer.effect(
    TransferService,
    Effect.gen(function* () {
      const provider = yield* WalletProvider
      const events = yield* AccountEvents
      const prices = yield* PriceSource
      // The wallet service when this process has one (the TEE payer's sign claims).
      const wallets = Option.getOrUndefined(yield* Effect.serviceOption(WalletService))
      return yield* makeTransferService({ ...options, provider, events, prices, ...(wallets !== undefined ? { wallets } : {}) })
    })
  )

/** The service on this server's chains: the Solana node, and the Hood node with its factory and USDG. */
export const endpointsLayer: Layer.Layer<TransferService, never, SqlClient.SqlClient | WalletProvider | AccountEvents | PriceSource | SolanaEndpoints | HoodEndpoints> =
  Layer.unwrapEffect(
    Effect.map(Effect.all([SolanaEndpoints, HoodEndpoints]), ([solana, hood]) =>
      layer({ solanaRpcUrl: solana.rpcUrl, hood: { chain: hood.chain, rpcUrl: hood.rpcUrl, factory: hood.addresses.factory, usdg: hood.addresses.usdg } })
    )
  )

/** The real transfer service over `Database.layerTest` and the real local provider (`WalletProvider.layerTest`); the events and prices are the test's. */
export const layerTest = (options: Omit<TransferServiceOptions, "provider" | "events" | "prices" | "wallets">) =>
  layer(options).pipe(Layer.provide(walletProviderTest), Layer.provide(Database.layerTest))
