/**
 * The headless launch (launch spec 1 rules 1-10, 2.1, 2.5-2.7, 3.1, endpoint rules 1-3): the gates
 * in the spec's order, the ledger's admission, the chain run on either chain, the writes that
 * follow a settled attempt, the job read, the dry run, and the recovery of attempts a crash left
 * in flight. Typed input (a decoded `LaunchRequest` and the caller), one failure (`LaunchError`);
 * no HTTP.
 *
 * Order of a launch (each refusal before `begin` records nothing):
 *   embedded-wallet permission → idempotency preview (a confirmed same-body id replays here,
 *   touching nothing else) → exclusive eligibility → image (and banner) fetch → the embedded
 *   wallet's delegation (live, either chain) → Solana: the transaction's size → the image
 *   re-host → `begin` (the id and a daily-cap slot, one transaction, writing the attempt's
 *   inputs beside the row) → the chain run, in the background. A blocking request waits for it (`syncWaitMs`); `async`
 *   answers 202 at once.
 *
 * Invariants:
 * - Money moves once: an attempt's mint (Solana, from the attempt) or curve address (Hood,
 *   CREATE2 salt from the attempt) is fixed before anything is sent, and the ledger row records
 *   the signed transaction before it leaves (`sent`). A request that goes away does not stop the
 *   run (it runs in the service's scope), so no attempt is abandoned half-sent.
 * - Runs are bounded: at most `executionsMax` chain runs at once in this process; more wait.
 * - After a crash, `resumeInFlight` (at start, and then periodically in every API process) carries
 *   every in-flight headless row no live process drives to `confirmed` or `failed` from what the
 *   chain shows: a Solana attempt with a recorded signature is recovered (landed / reverted /
 *   never lands); one that never reached `sent` sent nothing and is run again with its own mint;
 *   Hood resumes through `HoodHeadlessLaunch.recover`.
 * - One process drives a row at a time (`RowLease`, kind `launch`): `begin` makes the accepting
 *   process its owner in the same transaction, the run renews the lease while it is alive and gives
 *   it back when it ends, and a resume skips rows whose lease is live and takes over only rows whose
 *   lease ended (their owner died). The ledger writes that send or settle (`sent`, `confirm`,
 *   `fail`) check the lease in their own transaction, so a process that lost the row sends and
 *   books nothing more.
 * - 3.1 "Also": the launch attribution (`launched_tokens`, the `AgentLaunches` registry) is
 *   written in the `sent` transaction, before the transaction leaves; confirmation writes the
 *   token's `confirmed_at`, the key's launch usage, the platform fee total and `launch.confirmed`
 *   in the ledger's `confirm` transaction; a definitive failure after acceptance emits
 *   `launch.failed` in the ledger's `fail` transaction.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Deferred, Duration, Effect, Either, Layer, Option } from "effect"
import { type AgentLaunches, AgentLaunchRegistry } from "../../../actors/AgentLaunches.js"
import type { Chain } from "../../domain/Chain.js"
import { MATRIX_VERSION } from "../../domain/Economics.js"
import type { Plan } from "../../domain/Plans.js"
import { awaitUntil } from "../../platform/AwaitUntil.js"
import { ImageService, type ImageServiceShape, type ResolvedImage } from "../images/ImageService.js"
import { TierService } from "../accounts/TierService.js"
import type { Principal } from "../wallets/Principal.js"
import { WalletProvider, type WalletProviderShape } from "../wallets/WalletProvider.js"
import { HoodHeadlessLaunch, type HoodHeadlessLaunchShape } from "./HoodHeadlessLaunch.js"
import { type Also, type AttemptRef, type BeginInput, LaunchLedger, type LaunchLedgerShape, type LaunchRecord, type LaunchRef } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import { errorCodeOf, fromHood, fromLedger, fromProvider, fromSolana, fromWallet, type LaunchError, launchFailure } from "./LaunchError.js"
import { canonicalBody } from "./request/CanonicalBody.js"
import { type LaunchRequest, needsExclusiveEligibility } from "./request/LaunchRequest.js"
import { exclusiveEligibility, fetchImages, launchStorage, launchHoldings } from "./internal/LaunchGates.js"
import {
  attribute,
  confirmedWrites,
  curveTermsOf,
  failedWrites,
  hoodFeePaid,
  jobRecord,
  solanaLaunchResult,
  storedDevBuy,
  type StoredDevBuy
} from "./internal/LaunchRecords.js"
import { SolanaLaunch, type SolanaLaunched, type SolanaLaunchShape } from "./SolanaLaunch.js"
import { SolanaLaunchReasonTraits } from "./SolanaLaunchError.js"
import { decodeStoredRequest, encodeStoredRequest } from "./StoredRequest.js"
import { makeRowLeases, type RowLeaseLost, type RowLeases } from "../../db/RowLease.js"

/** Who launches: the key's account, the key, and what the gates read from them. */
export interface HeadlessCaller {
  readonly accountId: string
  readonly keyId: string
  /** General rule 2: `denied` keys cannot use the headless route. */
  readonly embeddedWallet: "allowed" | "denied"
  /** The key's issued daily launch cap (the effective cap is the higher of it and the plan's). */
  readonly keyDailyCap: number
  readonly plan: Plan
  /** The caller as the wallet rules see it (Hood's linked-wallet rule). */
  readonly principal: Principal
}

export type LaunchOutcome =
  /** The launch result (2.5): a confirmed attempt, or the stored one replayed. */
  | { readonly _tag: "Launched"; readonly result: StoredResult; readonly replayed: boolean }
  /** `async`: accepted after the pre-flight gates, running in the background. */
  | { readonly _tag: "Accepted"; readonly clientLaunchId: string; readonly status: "submitted" }

export interface HeadlessLaunchShape {
  /** Every check, no write, no cap slot, nothing on chain (2.6). */
  readonly dryRun: (caller: HeadlessCaller, request: LaunchRequest) => Effect.Effect<Record<string, unknown>, LaunchError>
  readonly launch: (caller: HeadlessCaller, request: LaunchRequest) => Effect.Effect<LaunchOutcome, LaunchError>
  /** The job record (2.7); a foreign or unknown id is `job_not_found`. */
  readonly job: (ref: LaunchRef) => Effect.Effect<Record<string, unknown>, LaunchError>
  /** Carries the in-flight headless rows a previous process left to a settled state (in the background); returns how many. */
  readonly resumeInFlight: Effect.Effect<number, LaunchError>
}

export class HeadlessLaunch extends Context.Tag("curvestream/HeadlessLaunch")<HeadlessLaunch, HeadlessLaunchShape>() {}

export interface HeadlessLaunchConfig {
  /** The engine's public base URL (`links.candle`). */
  readonly baseUrl: string
  /** Solana explorer base; `links.explorer` is `<base>/tx/<signature>` (always present on Solana). */
  readonly solanaExplorerUrl: string
  /** Hood explorer base; `links.explorer` only when set (spec 2.5). */
  readonly hoodExplorerUrl?: string
  /** Holder pass (docs/decisions.md): platform-token units (raw) held or staked for `exclusive`. */
  readonly exclusiveHolderPassRaw: bigint
  /** Chain runs at once in this process (default 64). */
  readonly executionsMax?: number
  /** How long a blocking request waits for its run before answering retryable `LAUNCH_FAILED` (default 90 s). */
  readonly syncWaitMs?: number
  /** Between chain reads while an attempt's outcome is unknown (default 1 s). */
  readonly recoveryPollMs?: number
  /** How long one process keeps reading before leaving an unknown attempt to the next start (default 10 min). */
  readonly recoveryMaxMs?: number
  /** In-flight rows looked at per resume (default 10,000; the rest at the next one). */
  readonly resumeMax?: number
}

export const HeadlessLaunchDefaults = {
  executionsMax: 64,
  syncWaitMs: 90_000,
  recoveryPollMs: 1_000,
  recoveryMaxMs: 10 * 60_000,
  resumeMax: 10_000
} as const

export interface HeadlessLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly solana: SolanaLaunchShape
  readonly hood: HoodHeadlessLaunchShape
  readonly provider: WalletProviderShape
  /** Raw platform-token holdings (held + staked) of the account; undefined when unreadable. */
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
  /** Who drives an in-flight row (default: this service's own leases over its database). */
  readonly leases?: RowLeases
}

/** The lease kind of launch ledger rows; the key is the row's (account, clientLaunchId). */
export const LAUNCH_LEASE_KIND = "launch"

export const launchLeaseKey = (ref: LaunchRef): string => JSON.stringify([ref.accountId, ref.clientLaunchId])

/** What the gates resolved for an attempt, stored beside it for recovery. */
interface Resolved {
  readonly keyId: string
  readonly payer: string | null
  readonly metadataUri: string
  readonly platformFeeBps: string
  readonly principal: Principal
}

/** A storage failure is logged once and answered retryable `LAUNCH_FAILED` (the same id is safe to retry). */
const storage = launchStorage

export const make = (config: HeadlessLaunchConfig, deps: HeadlessLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const scope = yield* Effect.scope
    const { ledger, images, solana, hood, provider } = deps
    const o = { ...HeadlessLaunchDefaults, ...config }
    const runs = yield* Effect.makeSemaphore(o.executionsMax)
    const withSql = <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(self, SqlClient.SqlClient, sql)
    const leases = deps.leases ?? makeRowLeases(sql)
    /** `also` behind the row's lease: a process that no longer owns the row writes (and so sends) nothing. */
    const fenced =
      (ref: LaunchRef, also: Also): Also =>
      (record) =>
        Effect.zipRight(leases.fenceIn(LAUNCH_LEASE_KIND, launchLeaseKey(ref)), also(record))

    // The attributions recorded so far, oldest first, before any read can build a feed row.
    const known = yield* sql<{ chain: Chain; mint: string; account_id: string }>`
      SELECT chain, mint, account_id FROM launched_tokens WHERE visibility = 'production' ORDER BY attributed_at`.pipe(Effect.orDie)
    for (const a of known) deps.agentLaunches.add(a.chain, a.mint, a.account_id)

    const beginInput = (caller: HeadlessCaller, request: LaunchRequest): BeginInput => ({
      accountId: caller.accountId,
      clientLaunchId: request.clientLaunchId,
      keyId: caller.keyId,
      path: "headless",
      chain: request.chain,
      payer: "embedded",
      canonicalBody: canonicalBody(request),
      dailyCap: { keyDailyCap: caller.keyDailyCap, plan: caller.plan }
    })

    // ---- gates -------------------------------------------------------------------------------

    const permitted = (caller: HeadlessCaller) =>
      caller.embeddedWallet === "denied"
        ? Effect.fail(
            launchFailure("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot use the headless route", {
              retryable: false
            })
          )
        : Effect.void

    const eligible = (caller: HeadlessCaller, request: LaunchRequest) =>
      exclusiveEligibility(deps.holdings, o.exclusiveHolderPassRaw, caller.accountId, request)

    const resolveImages = (request: LaunchRequest) => fetchImages(images, request)

    const rehost = (resolved: ResolvedImage) => images.rehost(resolved).pipe(storage("re-hosting the image"))

    const embeddedWallet = (accountId: string, chain: Chain) =>
      provider.resolveDelegation(accountId, chain === "solana" ? "solana" : "evm").pipe(
        Effect.catchTags({ WalletProviderError: (e) => Effect.fail(fromProvider(e)) }), storage("reading the embedded wallet")
      )

    const solanaSpec = (request: LaunchRequest, payer: string, metadataUri: string, platformFeeBps: bigint) => ({
      request,
      payer,
      platformFeeBps,
      metadataUri
    })

    const sized = (caller: HeadlessCaller, request: LaunchRequest, payer: string, metadataUri: string) =>
      solana.size({ ...solanaSpec(request, payer, metadataUri, BigInt(caller.plan.feeBps)), accountId: caller.accountId }).pipe(Effect.mapError(fromSolana))

    const preview = (caller: HeadlessCaller, request: LaunchRequest) =>
      ledger.preview(beginInput(caller, request)).pipe(
        Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("reading the launch ledger")
      )

    // ---- results and the writes around a settled attempt (3.1 "Also") ---------------------------

    const links = { baseUrl: config.baseUrl, solanaExplorerUrl: config.solanaExplorerUrl }

    /** Written in the `sent` transaction: the attribution, before the transaction leaves. */
    const attributed = (caller: { accountId: string; keyId: string }, request: LaunchRequest, mint: string): Also =>
      attribute({ ...caller, path: "headless", chain: request.chain, mint, visibility: request.visibility }, deps.agentLaunches)

    /** Written in the `confirm` transaction. */
    const confirmedAlso = (keyId: string, fee: { readonly quoteAsset: string; readonly feeRaw: bigint } | null, devBuy: unknown): Also =>
      confirmedWrites({ keyId, fee, devBuy })

    const failedAlso = failedWrites

    const settleFailure = (ref: AttemptRef, error: LaunchError) => {
      const code = errorCodeOf(error)
      return ledger.fail(ref, code, { also: fenced(ref, failedAlso(code)) }).pipe(
        Effect.catchTag("LaunchLedgerError", () => Effect.void),
        storage("recording the failure"),
        Effect.zipRight(Effect.fail(error))
      )
    }

    // ---- the chain runs -----------------------------------------------------------------------

    interface Attempt {
      readonly ref: AttemptRef
      readonly request: LaunchRequest
      readonly resolved: Resolved
    }

    const writeAttempt = (a: Attempt): Also => () =>
      Effect.gen(function* () {
        const s = yield* SqlClient.SqlClient
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* s`
          INSERT INTO headless_launch_attempts (account_id, client_launch_id, attempt, request, resolved, created_at)
          VALUES (${a.ref.accountId}, ${a.ref.clientLaunchId}, ${a.ref.attempt}, ${JSON.stringify(encodeStoredRequest(a.request))}::jsonb,
            ${JSON.stringify(a.resolved)}::jsonb, ${at})
          ON CONFLICT (account_id, client_launch_id, attempt) DO NOTHING`
      })

    const confirmSolana = (a: Attempt, launched: SolanaLaunched) => {
      const result = solanaLaunchResult(links, a.request, launched)
      const fee = launched.fee === null ? null : { quoteAsset: a.request.quoteAsset, feeRaw: launched.fee.feeRaw }
      return ledger
        .confirm(a.ref, result, { mint: launched.mint, pool: launched.curve, signature: launched.signature }, fenced(a.ref, confirmedAlso(a.resolved.keyId, fee, result.devBuy)))
        .pipe(Effect.as(result))
    }

    const solanaInput = (a: Attempt) => ({
      ...solanaSpec(a.request, a.resolved.payer!, a.resolved.metadataUri, BigInt(a.resolved.platformFeeBps)),
      accountId: a.ref.accountId,
      attempt: a.ref.attempt
    })

    /** Reads the chain until a recorded Solana attempt is decided, within `recoveryMaxMs`. */
    const recoverSolana = (a: Attempt, signature: string, lastValidBlockHeight: bigint) =>
      Effect.gen(function* () {
        const look = solana.recover({ ...solanaInput(a), signature, lastValidBlockHeight }).pipe(Effect.either)
        const seen = yield* awaitUntil(look, (r) => Either.isRight(r) && r.right._tag !== "Pending", {
          what: "the recorded attempt's outcome",
          timeoutMs: o.recoveryMaxMs,
          intervalMs: o.recoveryPollMs,
          interruptPoll: true
        }).pipe(Effect.option)
        if (Option.isNone(seen) || Either.isLeft(seen.value) || seen.value.right._tag === "Pending") {
          return yield* launchFailure("launch_failed", "the launch's outcome is not known yet; retry with the same clientLaunchId", { retryable: true })
        }
        const r = seen.value.right
        switch (r._tag) {
          case "Landed":
            return yield* confirmSolana(a, r.launched)
          case "Reverted":
            return yield* settleFailure(a.ref, launchFailure("launch_failed", `the launch transaction failed on chain: ${r.chainError}`, { retryable: true }))
          case "NeverLands":
            return yield* settleFailure(a.ref, launchFailure("launch_failed", "the launch transaction expired before it landed", { retryable: true }))
        }
      })

    const runSolana = (a: Attempt) =>
      solana
        .launch(solanaInput(a), (sending) =>
          ledger.sent(a.ref, { mint: sending.mint, pool: sending.curve, signature: sending.signature }, fenced(a.ref, (record) =>
            Effect.gen(function* () {
              const s = yield* SqlClient.SqlClient
              yield* s`
                UPDATE headless_launch_attempts SET last_valid_block_height = ${sending.lastValidBlockHeight.toString()}::numeric
                WHERE account_id = ${a.ref.accountId} AND client_launch_id = ${a.ref.clientLaunchId} AND attempt = ${a.ref.attempt}`
              yield* attributed({ accountId: a.ref.accountId, keyId: a.resolved.keyId }, a.request, sending.mint)(record)
            })
          ))
        )
        .pipe(
          Effect.flatMap((launched) => confirmSolana(a, launched)),
          Effect.catchTag("SolanaLaunchError", (e) => {
            if (SolanaLaunchReasonTraits[e.reason].definitive) return settleFailure(a.ref, fromSolana(e))
            // Confirmation timed out: the transaction may still land; read the chain until it is decided.
            return ledger.timedOut(a.ref).pipe(
              Effect.zipRight(withSql(readLastValid(a.ref))),
              Effect.flatMap((lvbh) => recoverSolana(a, e.signature!, lvbh ?? 0n))
            )
          })
        )

    /** Hood's ledger writes happen inside `HoodHeadlessLaunch`; the "Also" writes ride on them. */
    const driveHood = (a: Attempt, resumed: boolean) => {
      const input = {
        attempt: a.ref,
        principal: a.resolved.principal,
        request: a.request,
        metadataUri: a.resolved.metadataUri,
        onSend: (token: `0x${string}`) => fenced(a.ref, attributed({ accountId: a.ref.accountId, keyId: a.resolved.keyId }, a.request, token)),
        also: fenced(a.ref, (record: LaunchRecord) =>
          record.state === "confirmed"
            ? confirmedAlso(a.resolved.keyId, hoodFeePaid(storedDevBuy(record.result)), record.result?.devBuy)(record)
            : failedAlso(record.errorCode ?? "LAUNCH_FAILED")(record))
      }
      return (resumed ? hood.recover(input) : hood.launch(input)).pipe(
        Effect.map((r) => r.result),
        Effect.catchTags({
          HoodLaunchError: (e) => Effect.fail(fromHood(e)),
          LaunchLedgerError: (e) => Effect.fail(fromLedger(e)),
          WalletError: (e) => Effect.fail(fromWallet(e))
        }),
        storage("recording the Hood launch")
      )
    }

    const run = (a: Attempt, resumed: boolean): Effect.Effect<StoredResult, LaunchError> =>
      (a.request.chain === "solana" ? runSolanaOrResume(a, resumed) : driveHood(a, resumed)).pipe(
        Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("recording the launch"),
        runs.withPermits(1)
      ) as Effect.Effect<StoredResult, LaunchError>

    const runSolanaOrResume = (a: Attempt, resumed: boolean) =>
      Effect.gen(function* () {
        if (!resumed) return yield* runSolana(a)
        const row = yield* ledger.get(a.ref)
        const lvbh = yield* withSql(readLastValid(a.ref))
        if (row?.signature != null && lvbh !== undefined) return yield* recoverSolana(a, row.signature, lvbh)
        // Never reached `sent`: nothing left; run the attempt (its mint is its own, so it cannot create twice).
        return yield* runSolana(a)
      })

    const readLastValid = (ref: AttemptRef) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (s) => s<{ lvbh: string | null }>`
          SELECT last_valid_block_height::text AS lvbh FROM headless_launch_attempts
          WHERE account_id = ${ref.accountId} AND client_launch_id = ${ref.clientLaunchId} AND attempt = ${ref.attempt}`
      ).pipe(Effect.map((rows) => (rows[0]?.lvbh == null ? undefined : BigInt(rows[0].lvbh))))

    /** A run stopped because another process took the row over (this one stalled past its lease). */
    const leaseLost = (_: RowLeaseLost) =>
      launchFailure("launch_failed", "another engine process carries this launch on; poll its job or retry with the same clientLaunchId", { retryable: true })

    /** Runs `self` as the owner of the row's lease (already taken): renewed while it runs, given back after. */
    const owning = <A>(ref: LaunchRef, self: Effect.Effect<A, LaunchError>) =>
      leases.whileHeld(LAUNCH_LEASE_KIND, launchLeaseKey(ref), self).pipe(Effect.catchTag("RowLeaseLost", (e) => Effect.fail(leaseLost(e))))

    /**
     * Starts a run in the service's scope (a request going away does not stop it), holding the row's
     * lease, which the caller took; the deferred gets its outcome.
     */
    const start = (a: Attempt, resumed: boolean) =>
      Effect.gen(function* () {
        const done = yield* Deferred.make<StoredResult, LaunchError>()
        yield* owning(a.ref, run(a, resumed)).pipe(
          Effect.tapErrorCause((cause) => Effect.logDebug(`launch ${a.ref.clientLaunchId} attempt ${a.ref.attempt} ended`, cause)),
          Effect.exit,
          Effect.flatMap((exit) => Deferred.done(done, exit)),
          Effect.forkIn(scope)
        )
        return done
      })

    // ---- the operations -----------------------------------------------------------------------

    const admitted = (caller: HeadlessCaller, request: LaunchRequest) =>
      Effect.gen(function* () {
        yield* permitted(caller)
        const seen = yield* preview(caller, request)
        if (seen._tag === "Replay") return { _tag: "Replay" as const, result: seen.result }
        yield* eligible(caller, request)
        const pictures = yield* resolveImages(request)
        return { _tag: "Checked" as const, pictures }
      })

    const launch: HeadlessLaunchShape["launch"] = (caller, request) =>
      Effect.gen(function* () {
        const checked = yield* admitted(caller, request)
        if (checked._tag === "Replay") return { _tag: "Launched", result: checked.result, replayed: true } satisfies LaunchOutcome
        // The embedded wallet's delegation (live, on either chain) and the size before anything is
        // stored: a refusal here records nothing, not even the re-hosted image.
        const wallet = yield* embeddedWallet(caller.accountId, request.chain)
        const payer = request.chain === "solana" ? wallet.address : null
        if (payer !== null) yield* sized(caller, request, payer, images.hostedUrlOf(checked.pictures.image))
        const hosted = yield* rehost(checked.pictures.image)
        if (checked.pictures.banner !== null) yield* rehost(checked.pictures.banner)
        const resolved: Resolved = {
          keyId: caller.keyId,
          payer,
          metadataUri: hosted.url,
          platformFeeBps: String(caller.plan.feeBps),
          principal: caller.principal
        }
        let attempt: Attempt | undefined
        const admission = yield* ledger
          .begin(beginInput(caller, request), (record) => {
            attempt = { ref: { accountId: record.accountId, clientLaunchId: record.clientLaunchId, attempt: record.attempt }, request, resolved }
            // The accepting process owns the new attempt from the transaction that makes it in flight.
            return Effect.zipRight(writeAttempt(attempt)(record), leases.claimIn(LAUNCH_LEASE_KIND, launchLeaseKey(record)))
          })
          .pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("recording the launch"))
        if (admission._tag === "Replay") return { _tag: "Launched", result: admission.result, replayed: true } satisfies LaunchOutcome
        const done = yield* start(attempt!, false)
        if (request.async) return { _tag: "Accepted", clientLaunchId: request.clientLaunchId, status: "submitted" } satisfies LaunchOutcome
        const result = yield* Deferred.await(done).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(o.syncWaitMs),
            onTimeout: () =>
              launchFailure("launch_failed", "the launch is still confirming; retry with the same clientLaunchId or poll its job", { retryable: true })
          })
        )
        return { _tag: "Launched", result, replayed: false } satisfies LaunchOutcome
      })

    const dryRun: HeadlessLaunchShape["dryRun"] = (caller, request) =>
      Effect.gen(function* () {
        const checked = yield* admitted(caller, request)
        const pictures = checked._tag === "Checked" ? checked.pictures : yield* resolveImages(request)
        // The metadata URI the launch would write: the image's hosted URL (content-addressed), so the size is the launch's.
        const imageUrl = images.hostedUrlOf(pictures.image)
        // The delegation first, as the launch checks it; then Hood's in-run gates (rule 8, the configuration).
        const wallet = yield* embeddedWallet(caller.accountId, request.chain)
        if (request.chain === "hood") {
          yield* hood.preflight({ principal: caller.principal, request, metadataUri: imageUrl }).pipe(
            Effect.catchTags({ HoodLaunchError: (e) => Effect.fail(fromHood(e)), WalletError: (e) => Effect.fail(fromWallet(e)) }),
            storage("reading the wallets")
          )
        }
        const exclusive = needsExclusiveEligibility(request.mode) ? yield* eligible(caller, request) : undefined
        const size = request.chain === "solana" ? (yield* sized(caller, request, wallet.address, imageUrl)).size : undefined
        return {
          success: true,
          dryRun: true,
          launchWallet: wallet.address,
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
          checks: {
            image: "ok",
            ...(pictures.banner !== null ? { banner: "ok" } : {}),
            ...(exclusive === true ? { exclusiveEligible: true } : {})
          },
          matrixVersion: MATRIX_VERSION,
          ...(size !== undefined ? { size: { txBytes: size.txBytes, limit: size.limit, maxNameBytes: size.maxNameBytes, fits: true } } : {}),
          ...curveTermsOf(request)
        }
      })

    const job: HeadlessLaunchShape["job"] = (ref) =>
      Effect.gen(function* () {
        const row = yield* ledger.get(ref).pipe(storage("reading the job"))
        if (row === undefined || row.path !== "headless") {
          return yield* launchFailure("job_not_found", "No launch job with this clientLaunchId on this account", { retryable: false })
        }
        const live = row.chain === "hood" ? yield* hood.devBuyStatus(ref) : undefined
        const devBuy = live ?? storedDevBuy(row.result)
        return jobRecord(row, {}, row.chain === "hood" && devBuy !== undefined ? { devBuy: devBuyFields(devBuy) } : {})
      })

    /**
     * Takes over one in-flight row whose lease ended (or that never had one); false when a live
     * process drives it, another resume took it first, or it settled meanwhile.
     */
    const takeOver = (row: LaunchRecord) =>
      Effect.gen(function* () {
        const key = launchLeaseKey(row)
        if (!(yield* leases.take(LAUNCH_LEASE_KIND, key))) return false
        const kept = Effect.gen(function* () {
          // Read again under the lease: the previous owner may have settled it after the list was read.
          const current = yield* ledger.get(row)
          const ref = { accountId: row.accountId, clientLaunchId: row.clientLaunchId, attempt: row.attempt }
          if (current === undefined || current.attempt !== row.attempt || (current.state !== "submitted" && current.state !== "confirming")) return false
          const stored = yield* withSql(readAttempt(row))
          if (stored === undefined) {
            // Accepted, but its inputs never committed with it: impossible (one transaction); fail it cleanly.
            yield* owning(ref, settleFailure(ref, launchFailure("launch_failed", "the attempt's inputs are missing", { retryable: true }))).pipe(Effect.ignore)
            return false
          }
          yield* start({ ref, request: stored.request, resolved: stored.resolved }, true)
          return true
        })
        return yield* kept.pipe(
          Effect.tap((started) => (started ? Effect.void : leases.release(LAUNCH_LEASE_KIND, key))),
          Effect.tapErrorCause(() => leases.release(LAUNCH_LEASE_KIND, key).pipe(Effect.ignore))
        )
      }).pipe(storage("resuming an in-flight launch"))

    const resumeInFlight: HeadlessLaunchShape["resumeInFlight"] = Effect.gen(function* () {
      const rows = yield* ledger.inFlight("headless", o.resumeMax).pipe(storage("reading in-flight launches"))
      const driven = yield* leases.live(LAUNCH_LEASE_KIND, rows.map(launchLeaseKey)).pipe(storage("reading launch leases"))
      let resumed = 0
      for (const row of rows) {
        if (driven.has(launchLeaseKey(row))) continue
        if (yield* takeOver(row)) resumed++
      }
      return resumed
    })

    const readAttempt = (row: LaunchRecord) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (s) => s<{ request: unknown; resolved: Resolved }>`
          SELECT request, resolved FROM headless_launch_attempts
          WHERE account_id = ${row.accountId} AND client_launch_id = ${row.clientLaunchId} AND attempt = ${row.attempt}`
      ).pipe(Effect.map((rows) => (rows[0] === undefined ? undefined : { request: decodeStoredRequest(rows[0].request), resolved: rows[0].resolved })))

    return { dryRun, launch, job, resumeInFlight } satisfies HeadlessLaunchShape
  })

/** 2.7's `devBuy` on a Hood job: outcome, pending signature, fee outcome (of the live report or the stored result). */
const devBuyFields = (v: Pick<StoredDevBuy, "outcome" | "pendingSignature" | "feeOutcome">) => ({
  outcome: v.outcome ?? null,
  pendingSignature: v.pendingSignature ?? null,
  feeOutcome: v.feeOutcome ?? null
})


/** Scoped: background runs live as long as the layer. */
export const layer = (
  config: HeadlessLaunchConfig
): Layer.Layer<
  HeadlessLaunch,
  never,
  SqlClient.SqlClient | LaunchLedger | ImageService | SolanaLaunch | HoodHeadlessLaunch | WalletProvider | TierService | AgentLaunchRegistry
> =>
  Layer.scoped(
    HeadlessLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        solana: yield* SolanaLaunch,
        hood: yield* HoodHeadlessLaunch,
        provider: yield* WalletProvider,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry
      })
    })
  )
