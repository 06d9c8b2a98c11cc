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
import { requestMemo } from "../../chain/solana/client/RequestMemo.js"
import { SolanaEndpoints } from "../../chain/solana/SolanaEndpoints.js"
import { makeRowLeases, type RowLeases } from "../../db/RowLease.js"
import { storageFailure } from "../../domain/ServiceFailure.js"
import { SVC_MINT, USDC_MINT } from "../../domain/QuotePairs.js"
import { AccountEvents, type AccountEventsShape } from "../accounts/AccountEvents.js"
import type { SpendAttempt } from "../spend/SpendGate.js"
import { check as checkSpend, holdAround, type ReserveInput } from "../spend/SpendStore.js"
import { PriceSource, type PriceSourceShape } from "../prices/PriceSource.js"
import { usdOfQuote } from "../spend/SpendValue.js"
import { addressKey, type WalletChain } from "../wallets/ChainKeys.js"
import { WalletProvider, type WalletProviderShape } from "../wallets/WalletProvider.js"
import { WalletService, type WalletServiceShape } from "../wallets/WalletService.js"
import { makeTeeTransfers, type SignedTransferSubmit, type TeeTransferFailure } from "./internal/TeeTransfers.js"
import type { Principal } from "../wallets/Principal.js"
import { walletRefusal } from "../wallets/WalletRefusal.js"
import { makeHoodTransfers, type HoodTransfersOptions } from "./HoodTransfers.js"
import { makeHoodTransferBuild } from "./internal/HoodTransferBuild.js"
import { makeSolanaTransfers, SOLANA_FEE_LAMPORTS, SYSTEM_ACCOUNT_MIN, TOKEN_ACCOUNT_RENT } from "./SolanaTransfers.js"
import { makeTransferRunner, type TransferChainPort, type TransferKey, stateOf } from "./TransferAttempt.js"
import { type TransferError, transferError } from "./TransferError.js"
import { step } from "./TransferMachine.js"
import { classifyDestination, type OwnWallet } from "./TransferRules.js"
import { MAIN_PAYER, makeTransferStore, transferReservationId, type TransferRow } from "./TransferStore.js"

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
  readonly nowMs?: () => number
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

const NAMED_MINTS: Readonly<Record<string, string | null>> = { sol: null, usdc: USDC_MINT, svc: SVC_MINT }

const storage = storageFailure("transfers", () => transferError("storage", "Internal error; nothing was recorded"))

export const makeTransferService = (options: TransferServiceOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const nowMs = options.nowMs ?? Date.now
    const provider = options.provider
    const solana = makeSolanaTransfers(options.solanaRpcUrl)
    const hood = options.hood === undefined ? undefined : makeHoodTransfers(options.hood)
    const hoodPort = hood?.port((accountId, bytes) => provider.signWithEmbedded(accountId, "evm", bytes))
    /** A Hood row on a server without a Hood node (configured before a restart): never sent, left `sending` until a server with the node settles it. */
    const hoodOff: TransferChainPort = {
      send: () => Effect.fail({ message: "this server does not run Hood transfers" }),
      observe: () => Effect.fail({ message: "this server does not run Hood transfers" })
    }
    const store = makeTransferStore(sql, options.events, nowMs)
    const portOf = (chain: TransferRow["chain"]): TransferChainPort => (chain === "solana" ? solana.port : (hoodPort ?? hoodOff))
    const claimWallets = options.wallets
    const runner = makeTransferRunner({
      sql,
      leases: options.leases ?? makeRowLeases(sql),
      store,
      chainOf: portOf,
      confirmTimeoutMs: options.confirmTimeoutMs ?? 60_000,
      pollIntervalMs: options.pollIntervalMs ?? 500,
      // A claim the relay signed follows the transfer's outcome, whoever settles it (docs/decisions.md "A transfer's sign claim follows the transfer").
      settleClaim:
        claimWallets === undefined
          ? undefined
          : (claimId, outcome) => Effect.flatMap(claimWallets.claimStatus(claimId), (claim) => (claim?.state === "signed" ? claimWallets.settleClaim(claimId, outcome) : Effect.void))
    })
    const withSql = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(e, SqlClient.SqlClient, sql)
    const chainDown = (e: { readonly message: string }) => transferError("chain_unavailable", `The chain could not be read: ${e.message}; nothing was recorded`)

    const viewOf = (r: TransferRow, replay: boolean): TransferView => ({
      status: r.state === "confirmed" ? "confirmed" : r.state === "built" ? "built" : "sending",
      clientTransferId: r.clientTransferId,
      chain: r.chain,
      asset: r.asset,
      amountRaw: r.amountRaw.toString(),
      from: r.from,
      to: r.to,
      destinationClass: r.destinationClass,
      destinationKind: r.destinationKind,
      ...(r.toWalletId !== null ? { walletId: r.toWalletId } : {}),
      ...(r.state !== "built" ? { signature: r.signature } : {}),
      replay,
      payer: r.payer,
      ...(r.walletId !== null ? { linkedWalletId: r.walletId } : {}),
      ...(r.state === "built" && r.transaction !== null && r.claimId !== null
        ? {
            transaction: r.transaction,
            signClaim: { claimId: r.claimId, expiresAt: new Date(r.claimExpiresAtMs ?? r.createdAtMs).toISOString() },
            ...(r.chain === "solana" ? { lastValidBlockHeight: (r.lastValidBlockHeight ?? 0n).toString() } : {})
          }
        : {})
    })

    /** A row under the id, answered by the machine for this request (`Recorded`: a TEE build's repeat): the view, or its refusal. */
    const answer = (row: TransferRow, requestHash: string, replay: boolean, as: "Built" | "Recorded" = "Built"): Effect.Effect<TransferView, TransferError> => {
      const [, outputs] = step(stateOf(row), as === "Built" ? { _tag: "Built", requestHash, signature: row.signature } : { _tag: "Recorded", requestHash })
      const refusal = outputs.find((o) => o._tag === "Refuse")
      if (refusal?._tag === "Refuse") {
        return refusal.reason === "idempotency_conflict"
          ? Effect.fail(transferError("idempotency_conflict", `clientTransferId ${row.clientTransferId} was used for another transfer`))
          : refusal.reason === "built"
            ? Effect.fail(transferError("idempotency_conflict", `clientTransferId ${row.clientTransferId} is a TEE build waiting for its signed transaction (POST /transfer/submit)`))
            : Effect.fail(
                transferError("transfer_failed", `The transfer under ${row.clientTransferId} failed: ${row.error ?? "unknown"}; use a new clientTransferId`, {
                  details: { signature: row.signature, error: row.error }
                })
              )
      }
      return Effect.succeed(viewOf(row, replay))
    }

    const ownWallets = (accountId: string, embedded: string, chain: WalletChain = "solana") =>
      Effect.map(
        sql<{ id: string; address_key: string; kind: "linked" | "imported" | "tee" }>`
          SELECT id, address_key, kind FROM wallets WHERE account_id = ${accountId} AND chain = ${chain} AND revoked_at IS NULL ORDER BY seq LIMIT 1000`,
        (rows): ReadonlyArray<OwnWallet> => [
          { addressKey: addressKey(chain, embedded), kind: "embedded", walletId: null },
          ...rows.map((r) => ({ addressKey: r.address_key, kind: r.kind, walletId: r.id }))
        ]
      )

    const approvedId = (accountId: string, to: string, chain: WalletChain = "solana") =>
      Effect.map(
        sql<{ id: string }>`
          SELECT id FROM withdrawal_addresses WHERE account_id = ${accountId} AND chain = ${chain} AND address_key = ${addressKey(chain, to)} AND revoked_at IS NULL`,
        (rows) => rows[0]?.id ?? null
      )

    /** The account's embedded wallet on `chain`, its agent access approved and live. */
    const embeddedOf = (accountId: string, chain: WalletChain) =>
      provider.resolveDelegation(accountId, chain).pipe(
        Effect.catchTag("WalletProviderError", (e) => {
          const r = walletRefusal(e)
          const reason = r.reason === "not_embedded" ? "wallet_not_embedded" : r.reason === "not_delegated" ? "wallet_not_delegated" : r.reason === "delegation_revoked" ? "delegation_revoked" : "signing_refused"
          return Effect.fail(transferError(reason, r.message, { retryable: r.retryable }))
        })
      )

    /** What the spend gate weighs: the amount out of the paying wallet (`rail`: the embedded wallet's or the TEE wallet's), valued in USD (launched tokens have no price here). */
    const gateInput = (caller: TransferCaller, input: TransferInput, rail: "main" | "tee" = "main") =>
      Effect.map(
        options.prices === undefined ? Effect.succeed(null) : usdOfQuote(options.prices, input.chain, input.asset, input.amountRaw),
        (usdMicros) => ({
          accountId: caller.accountId,
          keyPrefix: caller.keyPrefix,
          chain: input.chain,
          attempt: { rail, purpose: "transfer", side: "buy", asset: input.asset, amountRaw: input.amountRaw, usdMicros } satisfies SpendAttempt
        })
      )

    /** The spend gate's hold around an attempt's sign and send, released when it ends before its row exists (recorded rows are settled by their save). */
    const heldAround = <A, E>(caller: TransferCaller, input: TransferInput, gate: Omit<ReserveInput, "reservationId">, run: Effect.Effect<A, E>) =>
      withSql(
        holdAround(
          {
            input: { ...gate, reservationId: transferReservationId({ accountId: caller.accountId, clientTransferId: input.clientTransferId }) },
            recorded: Effect.map(store.get(caller.accountId, input.clientTransferId), (row) => row !== undefined),
            what: "transfer"
          },
          run
        )
      )

    const hoodBuild =
      hood === undefined
        ? undefined
        : makeHoodTransferBuild({
            hood,
            store,
            runner,
            provider,
            nowMs,
            embeddedOf,
            ownWallets,
            approvedId,
            gateInput,
            heldAround,
            answer,
            withSql,
            chainDown
          })

    /** The Solana source's balances and the mint, refused unless they cover the amount, the network fee and any account the transfer creates. */
    const solanaFunds = (from: string, input: TransferInput, mint: string | null, who: string) =>
      Effect.gen(function* () {
        const source = yield* Effect.mapError(solana.source(from, input.to, mint), chainDown)
        if (source.decimals === undefined) return yield* transferError("asset_unsupported", `${input.asset} is not an SPL token mint on Solana`)
        const needLamports = mint === null ? input.amountRaw + SOLANA_FEE_LAMPORTS : SOLANA_FEE_LAMPORTS + (source.createsAccount ? TOKEN_ACCOUNT_RENT : 0n)
        const leftLamports = source.lamports - needLamports
        const short =
          (source.tokenRaw !== null && source.tokenRaw < input.amountRaw) || leftLamports < 0n || (mint === null && leftLamports > 0n && leftLamports < SYSTEM_ACCOUNT_MIN)
        if (short) {
          return yield* transferError("insufficient_balance", `${who} cannot cover the amount, the network fee and any account the transfer creates`, {
            details: {
              balanceLamports: source.lamports.toString(),
              neededLamports: needLamports.toString(),
              ...(source.tokenRaw !== null ? { balanceRaw: source.tokenRaw.toString() } : {})
            }
          })
        }
        return { ...source, decimals: source.decimals }
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
            nowMs,
            mintOf: (asset) => (asset in NAMED_MINTS ? NAMED_MINTS[asset]! : asset),
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
      }).pipe(storage, Effect.withSpan("TransferService.build"))

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
          createdAtMs: nowMs()
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
