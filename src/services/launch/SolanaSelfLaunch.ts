/**
 * Self-signed launches on Solana (launch spec 1 rules 2-4, 2.3, 3.1's self-signed rows, 3.2, 3.3,
 * endpoint rules 4-6): the service builds the launch transaction for the agent's own linked
 * (imported) or TEE wallet, stakes out a single-use sign claim so the relay signs exactly that
 * build once, and `confirm` records what the chain shows after the agent broadcast it. Typed input
 * (a decoded `SelfLaunchBody` and the caller), one failure (`LaunchError`); no HTTP.
 *
 * Order of a build (every refusal before the ledger's `begin` or `rebuild` records nothing):
 *   plan (`TIER_REQUIRED`) → the lazy 30-minute sweep of this account's own builds → the payer
 *   rules (wallet on this account, active, spend-capable, on Solana; TEE: bound to this key and
 *   `allowLaunch`) → TEE dev buy (0 unless `TEE_LAUNCH_BUYS_ENABLED`) → the key's per-asset cap on
 *   `buyAmount` plus the platform fee → then either the repeat table of 3.3 (an earlier build of
 *   this id and body is in flight or was swept), or a new attempt: exclusive eligibility → image
 *   fetch → size → re-host → build (fresh blockhash, signed by the attempt's mint) → `begin`,
 *   whose transaction also stores the build, inserts the token row `hidden` and stakes out the claim.
 *
 * Invariants:
 * - Money moves once: the service never signs for the payer nor sends. An attempt's mint is
 *   derived from (account, id, attempt), so one attempt can create at most one curve; a new
 *   transaction (and mint) is handed out only when the chain proves the earlier one dead (3.3).
 * - A repeat that is refused or answers the same transaction writes nothing (the clock does not
 *   move). Overlapping builds return one transaction; the loser answers retryable `LAUNCH_FAILED`.
 * - `confirm` writes only what it verified on chain: a successful transaction, the build's payer
 *   among its signers, the attempt's mint touched and its curve created by the payer. It may be
 *   called after `expiresAt`, and confirms a swept build from its landed signature even at the cap.
 */
import { getBase64Encoder } from "@solana/kit"
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Effect, Layer } from "effect"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import { platformFeeRaw } from "../../chain/solana/launch/LaunchTransaction.js"
import { isSolanaSignature } from "../../domain/ChainValues.js"
import { MATRIX_VERSION } from "../../domain/Economics.js"
import type { Plan } from "../../domain/Plans.js"
import { TierService } from "../accounts/TierService.js"
import { ImageService, type ImageServiceShape } from "../images/ImageService.js"
import type { SpendLimit } from "../keys/KeyRules.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletService, type WalletServiceShape, type WalletView } from "../wallets/WalletService.js"
import { idempotencyHash } from "./Idempotency.js"
import { exclusiveEligibility, fetchImages, launchStorage, payerRules, selfPayer, selfSignedTier, launchHoldings } from "./internal/LaunchGates.js"
import { attribute, confirmedWrites, solanaLaunchResult } from "./internal/LaunchRecords.js"
import { admitted, failOnChainFailure, Overlap, overlapping, readBuild, recordConfirmed, selfJobNotFound, storeBuild, sweepOwnBuilds } from "./internal/SelfBuilds.js"
import { type Also, type AttemptRef, type BeginInput, LaunchLedger, type LaunchLedgerShape, type LaunchRecord, type LaunchRef } from "./LaunchLedger.js"
import { isRevivable, type StoredResult } from "./LaunchLedgerMachine.js"
import { fromLedger, fromSolana, fromWallet, type LaunchError, launchFailure } from "./LaunchError.js"
import { canonicalSelfBody } from "./request/CanonicalBody.js"
import type { SelfLaunchBody } from "./request/DecodeLaunchRequest.js"
import type { LaunchRequest } from "./request/LaunchRequest.js"
import { BLOCKHASH_LIFETIME_MS_MAX, repeatBuild } from "./SelfBuildRules.js"
import { SolanaLaunch, type SolanaLaunchInput, type SolanaLaunchShape } from "./SolanaLaunch.js"

/** Who builds: the key's account, the key, and what the gates read from them. */
export interface SelfCaller {
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  /** The key's issued daily launch cap (the effective cap is the higher of it and the plan's). */
  readonly keyDailyCap: number
  readonly plan: Plan
  /** The key's per-asset caps (spec document 2, 2.1); null: uncapped. */
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  /** The caller as the wallet rules see it (payer rules, TEE binding). */
  readonly principal: Principal
}

export interface SelfConfirmInput {
  readonly clientLaunchId: string
  readonly signature: string
}

/** The unsigned artifacts of a build (launch spec 4: `transaction`, `mint`, `pool`, `expiresAt`, `fee`, `clientLaunchId`). */
export interface SelfBuild {
  readonly clientLaunchId: string
  /** Wire bytes, base64: the mint's signature in place, the payer's slot empty. */
  readonly transaction: string
  readonly mint: string
  readonly pool: string
  /** Epoch ms at which the transaction's blockhash is expected to expire (docs/decisions.md). */
  readonly expiresAtMs: number
  /** The platform fee leg of the dev buy; null without one. */
  readonly fee: { readonly bps: number; readonly feeRaw: string; readonly treasury: string } | null
  /** The single-use claim the sign relay signs this build under. */
  readonly signClaim: { readonly claimId: string; readonly walletId: string }
}

export type SelfBuildOutcome =
  | { readonly _tag: "Built"; readonly build: SelfBuild }
  /** Same id and body already confirmed: the stored launch result. */
  | { readonly _tag: "Replay"; readonly result: StoredResult }

export interface SolanaSelfLaunchShape {
  /** Build's checks with the same refusals; nothing built, reserved, recorded or uploaded (endpoint rule 4). */
  readonly dryRun: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<Record<string, unknown>, LaunchError>
  readonly build: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<SelfBuildOutcome, LaunchError>
  /** Verifies the broadcast signature on chain and records the launch (3.1, 3.2). */
  readonly confirm: (caller: SelfCaller, input: SelfConfirmInput) => Effect.Effect<StoredResult, LaunchError>
}

export class SolanaSelfLaunch extends Context.Tag("curvestream/SolanaSelfLaunch")<SolanaSelfLaunch, SolanaSelfLaunchShape>() {}

export interface SolanaSelfLaunchConfig {
  readonly baseUrl: string
  readonly solanaExplorerUrl: string
  /** Holder pass (docs/decisions.md): platform-token units (raw) held or staked for `exclusive`. */
  readonly exclusiveHolderPassRaw: bigint
  /** `TEE_LAUNCH_BUYS_ENABLED`: a TEE wallet may carry a dev buy (general rule 3). */
  readonly teeLaunchBuysEnabled: boolean
  /** The cluster's slot time, turning blocks into `expiresAt` and `retryAfter` (default 400 ms). */
  readonly slotMs?: number
}

export interface SolanaSelfLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly solana: SolanaLaunchShape
  readonly wallets: WalletServiceShape
  /** Raw platform-token holdings (held + staked) of the account; undefined when unreadable. */
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
}

/** What a build row holds (`self_launch_builds`). */
interface StoredBuild {
  readonly attempt: number
  readonly walletId: string
  readonly walletKind: "imported" | "tee"
  readonly payer: string
  readonly keyId: string
  readonly request: LaunchRequest
  readonly metadataUri: string
  readonly platformFeeBps: bigint
  readonly build: SelfBuild
  readonly lastValidBlockHeight: bigint
  readonly builtAtMs: number
}

const storage = launchStorage

export const make = (config: SolanaSelfLaunchConfig, deps: SolanaSelfLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { ledger, images, solana, wallets } = deps
    const slotMs = config.slotMs ?? 400
    const links = { baseUrl: config.baseUrl, solanaExplorerUrl: config.solanaExplorerUrl }
    const fromBase64 = getBase64Encoder()

    const beginInput = (caller: SelfCaller, body: SelfLaunchBody, payerKind: "linked" | "tee"): BeginInput => ({
      accountId: caller.accountId,
      clientLaunchId: body.request.clientLaunchId,
      keyId: caller.keyId,
      path: "self",
      chain: "solana",
      payer: payerKind,
      canonicalBody: canonicalSelfBody(body.request, body.linkedWalletId),
      dailyCap: { keyDailyCap: caller.keyDailyCap, plan: caller.plan }
    })

    // ---- gates -------------------------------------------------------------------------------

    const tier = (caller: SelfCaller) => selfSignedTier(caller.plan)

    /** The payer rules, the TEE rules and the key's cap (endpoint rules 4 and 6), in that order. */
    const checkedPayer = (caller: SelfCaller, body: SelfLaunchBody) =>
      selfPayer(wallets, caller, body.linkedWalletId, "solana", body.request, platformFeeRaw(body.request.buyAmountRaw, BigInt(caller.plan.feeBps)), config.teeLaunchBuysEnabled)

    const eligible = (caller: SelfCaller, request: LaunchRequest) => exclusiveEligibility(deps.holdings, config.exclusiveHolderPassRaw, caller.accountId, request)

    const resolveImages = (request: LaunchRequest) => fetchImages(images, request)

    const spec = (caller: SelfCaller, request: LaunchRequest, payer: string, metadataUri: string) => ({
      request,
      payer,
      platformFeeBps: BigInt(caller.plan.feeBps),
      metadataUri,
      accountId: caller.accountId
    })

    // ---- stored builds -----------------------------------------------------------------------

    type Resolved = { readonly metadataUri: string; readonly platformFeeBps: string }

    const readStored = (ref: AttemptRef) =>
      readBuild<Resolved, SelfBuild["fee"]>(ref).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.map((r): StoredBuild | undefined =>
          r === undefined
            ? undefined
            : {
                attempt: r.attempt,
                walletId: r.walletId,
                walletKind: r.walletKind,
                payer: r.payer,
                keyId: r.keyId,
                request: r.request,
                metadataUri: r.resolved.metadataUri,
                platformFeeBps: BigInt(r.resolved.platformFeeBps),
                lastValidBlockHeight: r.lastValidBlockHeight ?? 0n,
                builtAtMs: r.builtAtMs,
                build: {
                  clientLaunchId: r.clientLaunchId,
                  transaction: r.transaction,
                  mint: r.mint,
                  pool: r.pool,
                  expiresAtMs: r.expiresAtMs,
                  fee: r.fee,
                  signClaim: { claimId: r.claimId, walletId: r.walletId }
                }
              }
        )
      )

    /**
     * A new attempt's build: the transaction for `payer` on a fresh blockhash, then (in the
     * ledger's transaction, through `admit`) the build row, the `hidden` token row and the claim.
     */
    const buildAttempt = (
      caller: SelfCaller,
      body: SelfLaunchBody,
      payer: WalletView,
      attempt: number,
      metadataUri: string,
      admit: (also: Also<unknown>) => Effect.Effect<LaunchRecord | "replay", unknown>
    ) =>
      Effect.gen(function* () {
        const request = body.request
        const input: SolanaLaunchInput = { ...spec(caller, request, payer.address, metadataUri), attempt }
        const built = yield* solana.buildForPayer(input).pipe(Effect.mapError(fromSolana))
        const builtAtMs = yield* Clock.currentTimeMillis
        const expiresAtMs = builtAtMs + Number(built.blocksLeft) * slotMs
        const fee = built.fee === null ? null : { bps: Number(built.fee.bps), feeRaw: built.fee.feeRaw.toString(), treasury: built.fee.treasury }
        let claimId = ""
        const also: Also<unknown> = (record) =>
          Effect.gen(function* () {
            // Another build of this id moved the row first: roll this one back.
            if (record.attempt !== attempt) return yield* Effect.fail(new Overlap())
            const claim = yield* wallets.recordBuilt({
              accountId: caller.accountId,
              walletId: payer.id,
              keyId: caller.keyId,
              chain: "solana",
              transaction: new Uint8Array(fromBase64.encode(built.transactionBase64)),
              purpose: "launch",
              txExpiresAtMs: Math.max(expiresAtMs, builtAtMs + BLOCKHASH_LIFETIME_MS_MAX)
            })
            claimId = claim.claimId
            yield* storeBuild<Resolved, SelfBuild["fee"]>({
              accountId: caller.accountId,
              clientLaunchId: request.clientLaunchId,
              attempt,
              chain: "solana",
              walletId: payer.id,
              walletKind: payer.walletKind === "tee" ? "tee" : "imported",
              payer: payer.address,
              keyId: caller.keyId,
              request,
              resolved: { metadataUri, platformFeeBps: String(caller.plan.feeBps) },
              mint: built.mint,
              pool: built.curve,
              transaction: built.transactionBase64,
              lastValidBlockHeight: built.lastValidBlockHeight,
              expiresAtMs,
              fee,
              claimId: claim.claimId,
              builtAtMs,
              operation: null
            })
            // 3.2: the token row is `hidden` until confirm promotes it to the requested visibility.
            yield* attribute(
              { accountId: caller.accountId, keyId: caller.keyId, path: "self", chain: "solana", mint: built.mint, visibility: "hidden", requestedVisibility: request.visibility },
              deps.agentLaunches
            )(record)
          })
        const admitted = yield* admit(also)
        if (admitted === "replay") return undefined
        return {
          clientLaunchId: request.clientLaunchId,
          transaction: built.transactionBase64,
          mint: built.mint,
          pool: built.curve,
          expiresAtMs,
          fee,
          signClaim: { claimId, walletId: payer.id }
        } satisfies SelfBuild
      })

    // ---- the repeat table (3.3) --------------------------------------------------------------

    const repeat = (caller: SelfCaller, body: SelfLaunchBody, payer: WalletView, row: LaunchRecord) =>
      Effect.gen(function* () {
        const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
        const stored = yield* readStored(ref).pipe(storage("reading the build"))
        const nowMs = yield* Clock.currentTimeMillis
        // Without a stored build (not produced by this service: the build row commits with the attempt) the mint is still the attempt's.
        const mint = stored?.build.mint ?? (yield* solana.attemptMint(row.accountId, row.clientLaunchId, row.attempt))
        const view = yield* solana.mintView(mint)
        const claim = stored === undefined ? undefined : yield* wallets.claimStatus(stored.build.signClaim.claimId).pipe(Effect.mapError(fromWallet))
        const answer = repeatBuild(
          {
            stored: stored !== undefined,
            swept: row.state === "failed",
            lastValidBlockHeight: stored?.lastValidBlockHeight ?? null,
            builtAtMs: stored?.builtAtMs ?? row.attemptStartedAtMs,
            mint,
            payer: stored?.walletKind === "tee" ? "tee" : "linked",
            signed: claim !== undefined && claim.state !== "open"
          },
          view,
          nowMs,
          slotMs
        )
        switch (answer._tag) {
          case "OnChain":
            return yield* launchFailure("idempotency_conflict", "an earlier build of this clientLaunchId landed: confirm it with its signature; do not build again", {
              retryable: false,
              details: { reason: "prior_attempt_on_chain", mint: answer.mint }
            })
          case "InFlight":
            return yield* launchFailure(
              "idempotency_conflict",
              "an earlier build of this clientLaunchId can still land: broadcast and confirm what was signed, or build again after retryAfter",
              { retryable: true, details: { reason: "prior_attempt_in_flight", retryAfter: answer.retryAfterMs } }
            )
          case "ChainReadFailed":
            return yield* launchFailure("launch_failed", "the chain could not be read to decide this repeat build; retry", {
              retryable: true,
              details: { reason: "chain_read_failed" }
            })
          case "SameTransaction":
            return { _tag: "Built", build: stored!.build } satisfies SelfBuildOutcome
          case "Rebuild": {
            // Proven dead: a new transaction, mint and expiresAt. The stored metadata is reused (nothing re-uploaded).
            const metadataUri = stored?.metadataUri ?? (yield* freshMetadata(caller, body))
            const next = row.attempt + 1
            const built = yield* buildAttempt(caller, body, payer, next, metadataUri, (also) =>
              row.state === "failed"
                ? Effect.map(ledger.begin(beginInput(caller, body, payer.walletKind === "tee" ? "tee" : "linked"), also), (a) =>
                    a._tag === "Replay" ? ("replay" as const) : a.record
                  )
                : ledger.rebuild(ref, also)
            ).pipe(admitted)
            if (built === undefined) return yield* overlapping()
            return { _tag: "Built", build: built } satisfies SelfBuildOutcome
          }
        }
      })

    /** The image fetched, sized against and re-hosted: the metadata URI a new attempt writes. */
    const freshMetadata = (caller: SelfCaller, body: SelfLaunchBody, payer?: string) =>
      Effect.gen(function* () {
        const pictures = yield* resolveImages(body.request)
        if (payer !== undefined) {
          yield* solana.size(spec(caller, body.request, payer, images.hostedUrlOf(pictures.image))).pipe(Effect.mapError(fromSolana))
        }
        const hosted = yield* images.rehost(pictures.image).pipe(storage("re-hosting the image"))
        if (pictures.banner !== null) yield* images.rehost(pictures.banner).pipe(storage("re-hosting the banner"))
        return hosted.url
      })

    // ---- the operations -----------------------------------------------------------------------

    const solanaOnly = (request: LaunchRequest) =>
      request.chain === "solana" ? Effect.void : Effect.dieMessage("SolanaSelfLaunch: a Hood request reached the Solana self-signed service")

    const sweep = (accountId: string) => sweepOwnBuilds(ledger, accountId)

    const build: SolanaSelfLaunchShape["build"] = (caller, body) =>
      Effect.gen(function* () {
        yield* solanaOnly(body.request)
        yield* tier(caller)
        yield* sweep(caller.accountId)
        const payer = yield* checkedPayer(caller, body)
        const payerKind = payer.walletKind === "tee" ? "tee" : "linked"
        const input = beginInput(caller, body, payerKind)
        const row = yield* ledger.get(input).pipe(storage("reading the launch ledger"))
        const sameRequest = row !== undefined && row.path === "self" && row.bodyHash === idempotencyHash(input.canonicalBody)
        if (sameRequest && (row.state === "submitted" || isRevivable(row))) return yield* repeat(caller, body, payer, row)
        // A new attempt (or a replay, or a refusal the ledger decides): nothing written before `begin`.
        const seen = yield* ledger.preview(input).pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("reading the launch ledger"))
        if (seen._tag === "Replay") return { _tag: "Replay", result: seen.result } satisfies SelfBuildOutcome
        yield* eligible(caller, body.request)
        const metadataUri = yield* freshMetadata(caller, body, payer.address)
        const attempt = row === undefined ? 1 : row.attempt + 1
        const built = yield* buildAttempt(caller, body, payer, attempt, metadataUri, (also) =>
          Effect.map(ledger.begin(input, also), (a) => (a._tag === "Replay" ? ("replay" as const) : a.record))
        ).pipe(admitted)
        if (built === undefined) {
          // Confirmed between the preview and `begin`: answer the stored result.
          const now = yield* ledger.get(input).pipe(storage("reading the launch ledger"))
          return { _tag: "Replay", result: now?.result ?? {} } satisfies SelfBuildOutcome
        }
        return { _tag: "Built", build: built } satisfies SelfBuildOutcome
      })

    const dryRun: SolanaSelfLaunchShape["dryRun"] = (caller, body) =>
      Effect.gen(function* () {
        yield* solanaOnly(body.request)
        yield* tier(caller)
        const payer = yield* checkedPayer(caller, body)
        const request = body.request
        const exclusive = yield* eligible(caller, request)
        const pictures = yield* resolveImages(request)
        const size = (yield* solana.size(spec(caller, request, payer.address, images.hostedUrlOf(pictures.image))).pipe(Effect.mapError(fromSolana))).size
        return {
          success: true,
          dryRun: true,
          launchWallet: payer.address,
          launchWalletId: payer.id,
          resolved: {
            chain: request.chain,
            quoteAsset: request.quoteAsset,
            mode: request.mode,
            stakerAllocationBps: Number(request.stakerAllocationBps),
            dexVersion: request.dexVersion,
            visibility: request.visibility,
            buyAmount: request.buyAmountRaw.toString(),
            ...(request.mode === "exp-custom"
              ? { curve: { virtualQuoteRaw: request.curve.virtualQuoteRaw.toString(), thresholdRaw: request.curve.thresholdRaw.toString() } }
              : {})
          },
          checks: { image: "ok", ...(pictures.banner !== null ? { banner: "ok" } : {}), ...(exclusive === true ? { exclusiveEligible: true } : {}) },
          matrixVersion: MATRIX_VERSION,
          size: { txBytes: size.txBytes, limit: size.limit, maxNameBytes: size.maxNameBytes, fits: true }
        }
      })

    const notFound = selfJobNotFound

    const confirm: SolanaSelfLaunchShape["confirm"] = (caller, input) =>
      Effect.gen(function* () {
        yield* tier(caller)
        const ref: LaunchRef = { accountId: caller.accountId, clientLaunchId: input.clientLaunchId }
        const row = yield* ledger.get(ref).pipe(storage("reading the launch ledger"))
        if (row === undefined || row.path !== "self" || row.chain !== "solana") return yield* notFound()
        if (row.state === "confirmed") return row.result ?? {}
        if (row.state === "failed" && !isRevivable(row)) return yield* notFound()
        // The confirm body carries no chain: an EVM hash, or base58 that is not 64 bytes, is refused here, never sent to the chain as a read.
        if (!isSolanaSignature(input.signature)) {
          return yield* launchFailure("validation_failed", "signature must be the launch transaction's base58 Solana signature (64 bytes)", { field: "signature", retryable: false })
        }
        const attemptRef = { ...ref, attempt: row.attempt }
        const stored = yield* readStored(attemptRef).pipe(storage("reading the build"))
        if (stored === undefined) return yield* notFound()
        // The payer rules again (spec 2.3): the wallet is still this account's, active and able to pay.
        yield* payerRules(wallets, caller.principal, stored.walletId, "solana")
        const launchInput: SolanaLaunchInput = {
          request: stored.request,
          payer: stored.payer,
          platformFeeBps: stored.platformFeeBps,
          metadataUri: stored.metadataUri,
          accountId: caller.accountId,
          attempt: row.attempt
        }
        const seen = yield* solana.verifySigned(launchInput, input.signature).pipe(Effect.mapError(fromSolana))
        switch (seen._tag) {
          case "SignerMismatch":
            return yield* launchFailure("signer_mismatch", "the transaction's signers do not include the wallet this launch was built for", { retryable: false })
          case "NotThisLaunch":
            return yield* launchFailure("validation_failed", "this transaction does not create this launch's mint", { field: "signature", retryable: false })
          case "Failed": {
            const failure = launchFailure("launch_failed", `the launch transaction failed on chain: ${seen.chainError}; build again with the same clientLaunchId`, {
              retryable: true,
              details: { reason: "reverted", signature: input.signature }
            })
            yield* failOnChainFailure(ledger, row)
            return yield* failure
          }
          case "NotFound": {
            const view = yield* solana.mintView(stored.build.mint)
            if (view._tag === "Unreadable") {
              return yield* launchFailure("launch_failed", "the chain could not be read; confirm again", { retryable: true, details: { reason: "chain_read_failed" } })
            }
            const dead = view.caughtUp && !view.mintAccountExists && view.blockHeight > stored.lastValidBlockHeight
            if (dead) return yield* notFound()
            return yield* launchFailure("validation_failed", "the signature is not on chain yet; confirm again once it lands", { field: "signature", retryable: true })
          }
          case "Landed": {
            const result = solanaLaunchResult(links, stored.request, seen.launched)
            const onChain = { mint: seen.launched.mint, pool: seen.launched.curve, signature: seen.launched.signature }
            const writes = confirmedWrites({
              keyId: stored.keyId,
              fee: seen.launched.fee === null ? null : { quoteAsset: stored.request.quoteAsset, feeRaw: seen.launched.fee.feeRaw },
              devBuy: result.devBuy,
              visibility: stored.request.visibility
            })
            const confirmed = yield* recordConfirmed(ledger, row, result, onChain, writes)
            yield* wallets.settleClaim(stored.build.signClaim.claimId, "confirmed").pipe(Effect.ignore)
            return confirmed
          }
        }
      })

    return { dryRun, build, confirm } satisfies SolanaSelfLaunchShape
  })

export const layer = (
  config: SolanaSelfLaunchConfig
): Layer.Layer<SolanaSelfLaunch, never, SqlClient.SqlClient | LaunchLedger | ImageService | SolanaLaunch | WalletService | TierService | AgentLaunchRegistry> =>
  Layer.effect(
    SolanaSelfLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        solana: yield* SolanaLaunch,
        wallets: yield* WalletService,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry
      })
    })
  )
