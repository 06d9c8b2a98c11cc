/**
 * Atomic launches on Solana (launch spec 1's atomic row and rules 2, 3 and 7; 2.4; 2.8; 3.5;
 * endpoint rules 7 to 10): a launch and its 1 to 4 first buys built as one block-engine bundle,
 * submitted once, and followed until every landed item is booked. Typed input (a decoded
 * `AtomicLaunchBody` and the caller), one failure (`LaunchError`); no HTTP. The decisions live in
 * the pure parts this composes: `PricingLadder` (the fills), `SpendGate` (limits and holds),
 * `SubmitCheck` (the client legs), the `BundleActor` (every state and what is owed), `BundleViews`
 * (the answers); `BundleRunner` performs the actor's outputs; the rows are `BundleStore`'s.
 *
 * Build, in order (every refusal before the ledger's `begin` records nothing): the block engine is
 * configured (501) → plan → the creator and each buyer resolved (main: the key may use the embedded
 * wallet and its delegation is live; linked: the payer rules, TEE only with `TEE_LAUNCH_BUYS_ENABLED`)
 * → the ledger's repeat rules (a same-id build of a live bundle answers it again; one that cannot
 * land any more is superseded; one that was sent waits for the chain, up to `sameIdWaitMs`) →
 * exclusive eligibility → images → the ladder → the spend gate → the tip account → the bundle on
 * one blockhash → `begin`, whose transaction re-checks the gate under the key's row lock, stores
 * the bundle, reserves the main payer's holds, records a sign claim per client leg and the token
 * row (`hidden` until booked).
 *
 * Submit: the bundle consumed (`SubmitBegun`, stored under the row lock: a second submit meanwhile
 * is 409 retryable), the client legs checked (bytes refusal: resubmittable; shape: consumed), the
 * owner's legs signed (`Signing` stored first: holds kept from here), then the runner sends once.
 * A repeat after a send answers the stored outcome; nothing is ever sent twice.
 *
 * One fiber of one process drives a bundle at a time (its row lease); a background pass every `recoveryIntervalMs`
 * expires stale builds and settles sent or landed bundles from the chain, and at start every
 * unsettled bundle resumes where it was (`BundleResume.ts`).
 */
import { randomBytes } from "node:crypto"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { createSolanaRpc } from "@solana/kit"
import { Clock, Context, Duration, Effect, Layer, Option, Schedule } from "effect"
import type { AgentLaunches } from "../../../../actors/AgentLaunches.js"
import { AgentLaunchRegistry } from "../../../../actors/AgentLaunches.js"
import { type BundleState, initialBundle } from "../../../../actors/bundle/BundleActor.js"
import type { BlockEngineClient } from "../../../chain/solana/client/BlockEngineClient.js"
import { readSentBundle } from "../../../chain/solana/launch/BundleChainRead.js"
import { makeRowLeases, type RowLeases } from "../../../db/RowLease.js"
import { findQuotePair } from "../../../domain/QuotePairs.js"
import type { Plan } from "../../../domain/Plans.js"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import { TierService } from "../../accounts/TierService.js"
import { ImageService, type ImageServiceShape } from "../../images/ImageService.js"
import type { KeyError } from "../../keys/KeyError.js"
import { lockAccountKey } from "../../keys/KeyRepository.js"
import type { SpendAsset, SpendLimit, TxLimit } from "../../keys/KeyRules.js"
import { usdMicrosOf } from "../../prices/Money.js"
import { isPriceAsset, PriceSource, type PriceSourceShape, type UsdPrice } from "../../prices/PriceSource.js"
import type { Principal } from "../../wallets/Principal.js"
import { WalletProvider, type WalletProviderShape } from "../../wallets/WalletProvider.js"
import { WalletService, type WalletServiceShape } from "../../wallets/WalletService.js"
import { idempotencyHash } from "../Idempotency.js"
import { exclusiveEligibility, fetchImages, launchHoldings, launchStorage, payerRules } from "../internal/LaunchGates.js"
import { attribute, jobRecord, solanaLaunchResult } from "../internal/LaunchRecords.js"
import { type Also, type BeginInput, LaunchLedger, type LaunchLedgerError, type LaunchLedgerShape, type LaunchRecord, type LaunchRef } from "../LaunchLedger.js"
import type { StoredResult } from "../LaunchLedgerMachine.js"
import { fromLedger, fromProvider, fromSolana, type LaunchError, launchFailure } from "../LaunchError.js"
import { canonicalBody } from "../request/CanonicalBody.js"
import type { AtomicLaunchBody, AtomicPayer } from "../request/DecodeLaunchRequest.js"
import { launchTermsOf, SolanaLaunch, type SolanaLaunchShape } from "../SolanaLaunch.js"
import { launchCurveParams } from "../../../chain/solana/launch/LaunchTransaction.js"
import type { BookedLeg } from "./AtomicBookings.js"
import { bundleIo, decodeStoredBuild, encodeStoredBuild, resumeBundle, type StoredBundleBuild } from "./BundleResume.js"
import { makeRunner } from "./BundleRunner.js"
import { type BundleRow, findBundle, findBundleOfAttempt, insertBundle, reserveHolds, unsettledBundles, windowUsedUsdMicros } from "./BundleStore.js"
import { type BundleIdentity, bundleRecord, type SubmitOutcome, submitOutcome } from "./BundleViews.js"
import { type Ladder, priceLadder } from "./PricingLadder.js"
import { gateBundle, type GateLeg, type GateResult, holdsOf } from "./SpendGate.js"
import { checkSubmittedLegs } from "./SubmitCheck.js"

/** Who builds: the key's account, the key, and what the gates read from them. */
export interface AtomicCaller {
  readonly accountId: string
  readonly keyId: string
  readonly keyPrefix: string
  readonly keyDailyCap: number
  readonly plan: Plan
  readonly embeddedWallet: "allowed" | "denied"
  readonly spendLimits: ReadonlyArray<SpendLimit> | null
  readonly txLimit: TxLimit | null
  /** The account was referred: 10% off the platform fee (document 2, 2.1). */
  readonly referred: boolean
  readonly principal: Principal
}

export interface AtomicSubmitInput {
  readonly bundleId: string
  readonly signedTxsBase64: ReadonlyArray<string>
}

export type AtomicBuildAnswer =
  | { readonly _tag: "Built"; readonly body: Record<string, unknown> }
  /** Same id and body already confirmed: the stored launch result. */
  | { readonly _tag: "Replay"; readonly result: StoredResult }

export type AtomicSubmitAnswer = SubmitOutcome

export interface AtomicLaunchShape {
  readonly build: (caller: AtomicCaller, body: AtomicLaunchBody) => Effect.Effect<AtomicBuildAnswer, LaunchError>
  readonly submit: (caller: AtomicCaller, input: AtomicSubmitInput) => Effect.Effect<AtomicSubmitAnswer, LaunchError>
  /** Spec 2.8; unknown or foreign id: `JOB_NOT_FOUND`. */
  readonly bundle: (accountId: string, bundleId: string) => Effect.Effect<Record<string, unknown>, LaunchError>
  /** The job record (2.7) of an atomic row, with its newest `bundleId`; undefined when the id names none. */
  readonly job: (ref: LaunchRef) => Effect.Effect<Record<string, unknown> | undefined, LaunchError>
  /**
   * Carries every unsettled bundle on under its lease: expires stale builds, settles sent or
   * landed ones from the chain, and settles a submit whose driver is gone (its lease ended).
   */
  readonly recoverPass: Effect.Effect<{ readonly bundles: number; readonly failed: number }>
}

export class AtomicLaunch extends Context.Tag("curvestream/AtomicLaunch")<AtomicLaunch, AtomicLaunchShape>() {}

export const AtomicLaunchDefaults = {
  /** Spec 4 rule 9: a `bundleId` is held up to 10 minutes. */
  holdMs: 10 * 60_000,
  /** Rule 9: a same-id build after a send can take up to about 95 s to answer. */
  sameIdWaitMs: 95_000,
  /** How often that wait reads the bundle and settles it from the chain. */
  sameIdPollMs: 1_000,
  statusDeadlineMs: 30_000,
  pollMs: 100,
  recoveryIntervalMs: 2_000,
  slotMs: 400
} as const

export interface AtomicLaunchConfig {
  readonly baseUrl: string
  readonly solanaExplorerUrl: string
  readonly exclusiveHolderPassRaw: bigint
  readonly teeLaunchBuysEnabled: boolean
  readonly rpcUrl: string
  /** `BLOCK_ENGINE_URL`'s client; undefined: atomic builds answer 501 (rule 10). */
  readonly engine: BlockEngineClient | undefined
  /** `BUNDLE_TIP_LAMPORTS`: the tip the launch transaction's payer pays the block engine. */
  readonly tipLamports: bigint
  readonly holdMs?: number
  readonly sameIdWaitMs?: number
  readonly sameIdPollMs?: number
  readonly statusDeadlineMs?: number
  readonly pollMs?: number
  readonly recoveryIntervalMs?: number
  readonly slotMs?: number
}

export interface AtomicLaunchDeps {
  readonly ledger: LaunchLedgerShape
  readonly images: ImageServiceShape
  readonly solana: SolanaLaunchShape
  readonly wallets: WalletServiceShape
  readonly provider: WalletProviderShape
  readonly prices: PriceSourceShape
  readonly holdings: (accountId: string) => Effect.Effect<bigint | undefined>
  readonly agentLaunches: AgentLaunches
  /** Single ownership of a bundle across processes (default: leases in this database). */
  readonly leases?: RowLeases
}

/** The row-lease kind of an atomic bundle (`RowLease.ts`). */
export const BUNDLE_LEASE_KIND = "atomic_bundle"

/** One leg as built: its bytes (for `/submit`'s check and for signing the owner's legs) and who signs it. */
export interface StoredLeg {
  readonly index: number
  readonly signer: "server" | "client"
  readonly wireBase64: string
  readonly messageBase64: string
  readonly bytes: number
  /** A client leg's sign claim (the relay signs exactly these bytes once); null on server legs. */
  readonly signClaim: { readonly claimId: string; readonly walletId: string } | null
}

/** What an atomic bundle row keeps: the resume's fields plus the legs as built. */
export interface AtomicStoredBuild extends StoredBundleBuild {
  readonly legs: ReadonlyArray<StoredLeg>
}

const encodeBuild = (b: AtomicStoredBuild): string => JSON.stringify({ ...(JSON.parse(encodeStoredBuild(b)) as object), legs: b.legs })
const decodeBuild = (text: string): AtomicStoredBuild => ({ ...decodeStoredBuild(text), legs: (JSON.parse(text) as { legs?: ReadonlyArray<StoredLeg> }).legs ?? [] })

/** A resolved payer: who signs (server for the embedded wallet) and the wallet the sign claim names. */
interface ResolvedPayer {
  readonly kind: "main" | "linked" | "tee"
  readonly address: string
  readonly walletId: string | null
}

const newBundleId = () => `bnd_${randomBytes(16).toString("hex")}`

/** The canonical body of an atomic build: the launch, the creator and the first buys enter the idempotency hash. */
const canonicalAtomicBody = (body: AtomicLaunchBody) => ({
  ...(canonicalBody(body.request) as Record<string, never>),
  payer: payerText(body.payer),
  firstBuys: body.firstBuys.map((b) => ({ payer: payerText(b.payer), amountRaw: b.amountRaw.toString() }))
})

const payerText = (p: AtomicPayer): string => (p.type === "main" ? "main" : `linked:${p.linkedWalletId}`)

const keyRefusal = (r: Extract<GateResult, { _tag: "Refused" }>["refusal"]): LaunchError => {
  const e: KeyError = r.error
  return e.reason === "tx_limit_reached"
    ? launchFailure("key_limit_reached", e.message, { retryable: e.retryable ?? false, details: e.details ?? {} })
    : launchFailure("spend_limit_exceeded", e.message, { field: r.field, retryable: false, details: e.details ?? {} })
}

export const make = (config: AtomicLaunchConfig, deps: AtomicLaunchDeps) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const o = { ...AtomicLaunchDefaults, ...config }
    const { ledger, images, solana, wallets, provider, prices } = deps
    const links = { baseUrl: config.baseUrl, solanaExplorerUrl: config.solanaExplorerUrl }
    const withSql = <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.provideService(self, SqlClient.SqlClient, sql)
    const rpc = createSolanaRpc(config.rpcUrl)
    const runner =
      config.engine === undefined
        ? undefined
        : makeRunner({ engine: config.engine, readChain: (v) => readSentBundle(rpc, v), statusDeadlineMs: o.statusDeadlineMs, pollMs: o.pollMs })
    /**
     * A bundle is driven under its row lease, by one fiber of one process: a lease this process
     * already holds is not taken again, so the lease alone excludes a second fiber here too.
     */
    const leases = deps.leases ?? makeRowLeases(sql)
    const fenceOf = (bundleId: string) => leases.fenceIn(BUNDLE_LEASE_KIND, bundleId)
    let tipAccount: string | undefined

    /** Storage failures (and a ledger refusal while booking, which a later pass retries) answer retryable `LAUNCH_FAILED`. */
    const stored =
      (what: string) =>
      <A, E, R>(self: Effect.Effect<A, E | SqlError | LaunchLedgerError, R>) =>
        launchStorage(what)(
          Effect.catchIf(
            self,
            (e): e is LaunchLedgerError => typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "LaunchLedgerError",
            (e) => Effect.fail(launchFailure("launch_failed", `${what} failed: ${e.message}; read the bundle`, { retryable: true }))
          )
        )
    const notFound = () => launchFailure("job_not_found", "No atomic bundle with this bundleId on this account (unknown, expired, consumed or foreign); build again", { retryable: false })

    // ---- payers ------------------------------------------------------------------------------

    const resolvePayer = (caller: AtomicCaller, p: AtomicPayer, field: string, purpose: "launch" | "spend", cache: Map<string, ResolvedPayer>) =>
      Effect.gen(function* () {
        const key = payerText(p)
        const known = cache.get(key)
        if (known !== undefined) return known
        let resolved: ResolvedPayer
        if (p.type === "main") {
          if (caller.embeddedWallet === "denied") {
            return yield* launchFailure("embedded_wallet_not_permitted", "This key's embedded-wallet permission is denied; it cannot use an embedded-wallet leg", { field, retryable: false })
          }
          // A named main payer with no embedded wallet is the request's fault (AGENT_WALLET_MISSING, 400, naming the payer);
          // the headless route, which names no payer, answers AGENT_WALLET_NOT_EMBEDDED (403).
          const w = yield* provider.resolveDelegation(caller.accountId, "solana").pipe(
            Effect.catchTags({
              WalletProviderError: (e) =>
                Effect.fail(
                  e.reason === "not_embedded"
                    ? launchFailure("agent_wallet_missing", "The main payer has no embedded Solana wallet on this account", { field, retryable: false })
                    : fromProvider(e)
                )
            }),
            stored("reading the embedded wallet")
          )
          resolved = { kind: "main", address: w.address, walletId: null }
        } else {
          // The creator's wallet is checked to launch (a TEE wallet's `allowLaunch`); a buyer's to spend, never relying on `allowLaunch`.
          const w = yield* payerRules(wallets, caller.principal, p.linkedWalletId, "solana", purpose).pipe(
            Effect.mapError((e) => (e.field === "linkedWalletId" ? launchFailure(e.reason, e.message, { field: `${field}.linkedWalletId`, retryable: false, details: e.details ?? {} }) : e))
          )
          if (w.walletKind === "tee" && !config.teeLaunchBuysEnabled) {
            return yield* launchFailure("validation_failed", "a TEE wallet joins an atomic launch only when TEE launch buys are on (TEE_LAUNCH_BUYS_ENABLED)", {
              field: `${field}.linkedWalletId`,
              retryable: false
            })
          }
          resolved = { kind: w.walletKind === "tee" ? "tee" : "linked", address: w.address, walletId: w.id }
        }
        cache.set(key, resolved)
        return resolved
      })

    // ---- pricing and gating ------------------------------------------------------------------

    const quoteDecimals = (quoteAsset: string) => findQuotePair("solana", quoteAsset)?.decimals ?? 9

    const usdOfRaw = (quoteAsset: string) =>
      Effect.map(
        isPriceAsset(quoteAsset) ? Effect.option(prices.usd(quoteAsset)) : Effect.succeed(Option.none<UsdPrice>()),
        (price) => (raw: bigint): bigint | null => usdMicrosOf(raw, quoteDecimals(quoteAsset), Option.getOrNull(price))
      )

    const usedInWindow = (caller: AtomicCaller, nowMs: number) =>
      caller.txLimit === null
        ? Effect.succeed(0)
        : windowUsedUsdMicros(caller.keyId, caller.txLimit.reset, nowMs).pipe(withSql, Effect.orElseSucceed(() => null))

    const gate = (caller: AtomicCaller, asset: string, legs: ReadonlyArray<GateLeg>, usdOf: (raw: bigint) => bigint | null, used: number | null, nowMs: number) =>
      gateBundle({
        keyPrefix: caller.keyPrefix,
        asset: asset as SpendAsset,
        spendLimits: caller.spendLimits,
        txLimit: caller.txLimit,
        legs,
        usedUsdMicros: used,
        usdMicrosOf: usdOf,
        nowMs
      })

    const tip = Effect.gen(function* () {
      if (tipAccount !== undefined) return tipAccount
      const answer = yield* Effect.promise(() => config.engine!.tipAccounts())
      if (typeof answer === "string") {
        return yield* launchFailure("launch_failed", `the block engine's tip accounts could not be read (${answer}); nothing was built`, {
          retryable: true,
          details: { reason: "block_engine_unavailable" }
        })
      }
      tipAccount = answer[0]!
      return tipAccount
    })

    // ---- stored bundles ----------------------------------------------------------------------

    const identity = (row: BundleRow<AtomicStoredBuild>): BundleIdentity => ({
      bundleId: row.bundleId,
      clientLaunchId: row.clientLaunchId,
      mint: row.mint,
      keyPrefix: row.keyPrefix
    })

    const buildBody = (row: BundleRow<AtomicStoredBuild>) => ({
      success: true,
      bundleId: row.bundleId,
      clientLaunchId: row.clientLaunchId,
      mint: row.mint,
      expiresAt: row.expiresAtMs,
      legs: row.build.legs.map((l) => {
        const buy = row.state.buys.find((b) => b.index === l.index)
        return {
          index: l.index,
          role: l.index === 0 ? "launch" : "buy",
          signer: l.signer,
          ...(buy !== undefined ? { expectedFill: { amountOutRaw: buy.expectedOutRaw.toString(), minAmountOutRaw: buy.minAmountOutRaw.toString() } } : {}),
          ...(l.signer === "client" ? { unsignedTxBase64: l.wireBase64, signClaim: l.signClaim } : {})
        }
      })
    })

    const load = (bundleId: string) => findBundle(bundleId, decodeBuild).pipe(withSql, stored("reading the bundle"))

    /**
     * Runs `f` while this process holds the bundle's row lease (renewed while `f` runs); a second
     * driver meanwhile, here or in another process, is refused (submit) or skips
     * it (recovery). A driver that loses the lease (it stalled past it) stops with `LAUNCH_FAILED`,
     * retryable, having stored nothing more.
     */
    const drive = <A>(bundleId: string, busy: Effect.Effect<A, LaunchError>, f: Effect.Effect<A, LaunchError>): Effect.Effect<A, LaunchError> =>
      Effect.flatMap(leases.take(BUNDLE_LEASE_KIND, bundleId).pipe(stored("taking the bundle")), (taken) =>
        taken
          ? leases.whileHeld(BUNDLE_LEASE_KIND, bundleId, f).pipe(
              Effect.catchTag("RowLeaseLost", (e) => Effect.fail(launchFailure("launch_failed", `${e.message}; read the bundle`, { retryable: true })))
            )
          : busy
      )

    const ioOf = (row: BundleRow<AtomicStoredBuild>) =>
      bundleIo(ledger, row, () => Date.now(), fenceOf(row.bundleId)).pipe(withSql)

    // ---- build -------------------------------------------------------------------------------

    const beginInput = (caller: AtomicCaller, body: AtomicLaunchBody, creator: ResolvedPayer): BeginInput => ({
      accountId: caller.accountId,
      clientLaunchId: body.request.clientLaunchId,
      keyId: caller.keyId,
      path: "atomic",
      chain: "solana",
      payer: creator.kind === "main" ? "embedded" : creator.kind,
      canonicalBody: canonicalAtomicBody(body),
      dailyCap: { keyDailyCap: caller.keyDailyCap, plan: caller.plan }
    })

    /** A same-id, same-body build while an attempt is in flight (rule 9's repeat): answer, supersede or wait. */
    const repeat = (row: LaunchRecord) =>
      Effect.gen(function* () {
        const bundle = yield* findBundleOfAttempt(row.accountId, row.clientLaunchId, row.attempt, decodeBuild).pipe(withSql, stored("reading the bundle"))
        if (bundle === undefined) return "fresh" as const
        const nowMs = yield* Clock.currentTimeMillis
        const s = bundle.state
        if (s.phase === "built") {
          const view = yield* solana.mintView(bundle.mint)
          const live = nowMs < bundle.expiresAtMs && view._tag === "Read" && view.blockHeight < bundle.build.lastValidBlockHeight
          if (live) return { _tag: "Built", body: buildBody(bundle) } satisfies AtomicBuildAnswer
          // Nothing was signed for it and its transactions cannot land (or cannot be told to): replaced.
          yield* drive(bundle.bundleId, inProgress(), Effect.flatMap(ioOf(bundle), (io) => runner!.apply(s, { _tag: "Supersede", atMs: nowMs }, io)).pipe(stored("superseding the bundle")))
          return "rebuild" as const
        }
        // Expired or consumed before anything was sent: nothing can land; a new attempt in the same slot.
        if (s.phase === "expired" && s.launchSignature === null) return "rebuild" as const
        if (s.phase === "submitting" || s.phase === "signing") return yield* inProgress()
        if (s.phase === "sent" || s.phase === "landed") {
          // Wait for the chain to decide (recovery passes), then answer as the ledger then stands.
          const lookOnce = Effect.gen(function* () {
            const current = yield* load(bundle.bundleId)
            if (current === undefined) return "gone" as const
            const settleOnce = drive(current.bundleId, Effect.succeed(current.state), Effect.flatMap(load(current.bundleId), (fresh) => (fresh === undefined ? Effect.succeed(current.state) : settle(fresh))))
            if (current.state.phase !== "sent" && !(current.state.phase === "landed" && current.state.buys.some((b) => b.outcome === "pending"))) {
              if (current.state.phase === "landed") yield* settleOnce
              return "decided" as const
            }
            yield* settleOnce
            return "pending" as const
          })
          const waitedMs = (yield* Clock.currentTimeMillis) - nowMs
          yield* awaitUntil(lookOnce, (look) => look !== "pending", {
            what: "the chain's decision on the sent bundle",
            timeoutMs: Math.max(0, o.sameIdWaitMs - waitedMs),
            intervalMs: o.sameIdPollMs
          }).pipe(Effect.catchTag("AwaitTimedOut", () => Effect.void))
        }
        return "ledger" as const
      })

    const inProgress = () =>
      Effect.fail(launchFailure("idempotency_conflict", "A submit of this bundle is in progress; read the bundle or retry shortly", { retryable: true, details: { reason: "submit_in_progress" } }))

    const build: AtomicLaunchShape["build"] = (caller, body) =>
      Effect.gen(function* () {
        if (config.engine === undefined || runner === undefined) {
          return yield* launchFailure("block_engine_missing", "Atomic launches need a block engine; this server has none configured (BLOCK_ENGINE_URL)", { retryable: true })
        }
        if (!caller.plan.capabilities.selfSignedLaunch) {
          return yield* launchFailure("tier_required", "Atomic launches need the Pro or Max plan", { retryable: false, details: { requiredPlans: ["pro", "max"] } })
        }
        const request = body.request
        const payers = new Map<string, ResolvedPayer>()
        const creator = yield* resolvePayer(caller, body.payer, "payer", "launch", payers)
        const buyers: ResolvedPayer[] = []
        for (let i = 0; i < body.firstBuys.length; i++) buyers.push(yield* resolvePayer(caller, body.firstBuys[i]!.payer, `firstBuys[${i}].payer`, "spend", payers))
        const input = beginInput(caller, body, creator)

        // The repeat rules, then the ledger's own (different body, replay, in flight).
        let row = yield* ledger.get(input).pipe(stored("reading the launch ledger"))
        let rebuild = false
        if (row !== undefined && row.path === "atomic" && row.bodyHash === idempotencyHash(input.canonicalBody) && row.state === "submitted") {
          const r = yield* repeat(row)
          if (typeof r === "object") return r
          rebuild = r === "rebuild"
          if (r === "ledger") row = yield* ledger.get(input).pipe(stored("reading the launch ledger"))
        }
        if (!rebuild) {
          const seen = yield* ledger.preview(input).pipe(Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), stored("reading the launch ledger"))
          if (seen._tag === "Replay") return { _tag: "Replay", result: seen.result } satisfies AtomicBuildAnswer
        }

        yield* exclusiveEligibility(deps.holdings, config.exclusiveHolderPassRaw, caller.accountId, request)
        const pictures = yield* fetchImages(images, request)

        // The ladder on the launch's own curve, and the gate over it (nothing reserved yet).
        const feeBps = BigInt(caller.plan.feeBps)
        const spec = { request, payer: creator.address, platformFeeBps: feeBps, metadataUri: images.hostedUrlOf(pictures.image), accountId: caller.accountId }
        const terms = launchTermsOf(request)
        if (terms === undefined) return yield* Effect.dieMessage(`AtomicLaunch: not a Solana request (${request.chain}/${request.quoteAsset})`)
        const ladder: Ladder = priceLadder({ curveParams: launchCurveParams(terms), amountsRaw: body.firstBuys.map((b) => b.amountRaw), platformFeeBps: feeBps, referred: caller.referred })
        if (ladder._tag !== "Priced") {
          return yield* launchFailure("validation_failed", `firstBuys[${ladder.position}] cannot be priced on this curve (${ladder.reason})`, {
            field: `firstBuys[${ladder.position}]`,
            retryable: false,
            details: { reason: ladder.reason }
          })
        }
        const gateLegs: ReadonlyArray<GateLeg> = ladder.legs.map((l, i) => ({
          position: i,
          payerKind: buyers[i]!.kind === "main" ? "main" : "linked",
          wallet: buyers[i]!.address,
          amountRaw: l.amountInRaw,
          feeRaw: l.platformFeeRaw
        }))
        const usdOf = yield* usdOfRaw(request.quoteAsset)
        const gateNowMs = yield* Clock.currentTimeMillis
        const verdict = gate(caller, request.quoteAsset, gateLegs, usdOf, yield* usedInWindow(caller, gateNowMs), gateNowMs)
        if (verdict._tag === "Refused") return yield* keyRefusal(verdict.refusal)

        const tipTo = yield* tip
        const hosted = yield* images.rehost(pictures.image).pipe(stored("re-hosting the image"))
        if (pictures.banner !== null) yield* images.rehost(pictures.banner).pipe(stored("re-hosting the banner"))
        const attempt = row === undefined ? 1 : row.attempt + 1
        const built = yield* solana
          .buildAtomic(
            { ...spec, metadataUri: hosted.url, attempt },
            ladder.legs.map((l, i) => ({ buyer: buyers[i]!.address, amountInRaw: l.amountInRaw, minAmountOutRaw: l.minAmountOutRaw, platformFeeRaw: l.platformFeeRaw })),
            { account: tipTo, lamports: config.tipLamports }
          )
          .pipe(Effect.mapError(fromSolana))
        // Two legs with the same bytes would carry one signature: the chain would take one and drop the other.
        for (let j = 1; j < built.bundle.legs.length; j++) {
          const i = built.bundle.legs.findIndex((l) => l.messageBase64 === built.bundle.legs[j]!.messageBase64)
          if (i < j) {
            return yield* launchFailure("validation_failed", `firstBuys[${j - 1}] builds the same transaction as ${i === 0 ? "the launch" : `firstBuys[${i - 1}]`}; change its payer or amount`, {
              field: `firstBuys[${j - 1}]`,
              retryable: false
            })
          }
        }

        const nowMs = yield* Clock.currentTimeMillis
        const bundleId = newBundleId()
        const expiresAtMs = nowMs + o.holdMs
        const txExpiresAtMs = nowMs + Number(built.blocksLeft) * o.slotMs + 60_000
        const clientTradeId = (index: number) => `${bundleId}-b${index}`
        const bookedLegs: ReadonlyArray<Omit<BookedLeg, "signature">> = ladder.legs.map((l) => ({
          index: l.index,
          clientTradeId: clientTradeId(l.index),
          amountInRaw: l.amountInRaw,
          platformFeeRaw: l.platformFeeRaw,
          usdMicros: usdOf(l.amountInRaw + l.platformFeeRaw)
        }))
        const result = solanaLaunchResult(links, request, { mint: built.mint, curve: built.bundle.curve, signature: "", slot: 0n, devBuy: null, fee: null })
        const signers: ReadonlyArray<ResolvedPayer> = [creator, ...buyers]

        const also: Also<LaunchError | SqlError> = (record) =>
          Effect.gen(function* () {
            if (record.attempt !== attempt) {
              return yield* launchFailure("launch_failed", "another build of this clientLaunchId moved first; retry with the same id", { retryable: true, details: { reason: "build_in_progress" } })
            }
            // The gate again under the key's row lock: concurrent builds of one key see each other's holds.
            yield* lockAccountKey(caller.accountId, caller.keyPrefix)
            const again = gate(caller, request.quoteAsset, gateLegs, usdOf, yield* usedInWindow(caller, nowMs), nowMs)
            if (again._tag === "Refused") return yield* keyRefusal(again.refusal)
            const legs: StoredLeg[] = []
            for (let i = 0; i < built.bundle.legs.length; i++) {
              const leg = built.bundle.legs[i]!
              const payer = signers[i]!
              let signClaim: StoredLeg["signClaim"] = null
              if (payer.kind !== "main") {
                const claim = yield* wallets
                  .recordBuilt({
                    accountId: caller.accountId,
                    walletId: payer.walletId!,
                    keyId: caller.keyId,
                    chain: "solana",
                    transaction: new Uint8Array(Buffer.from(leg.wireBase64, "base64")),
                    purpose: i === 0 ? "launch" : "trade",
                    txExpiresAtMs
                  })
                  .pipe(Effect.mapError((e) => launchFailure("launch_failed", e.message, { retryable: true })))
                signClaim = { claimId: claim.claimId, walletId: payer.walletId! }
              }
              legs.push({ index: i, signer: payer.kind === "main" ? "server" : "client", wireBase64: leg.wireBase64, messageBase64: leg.messageBase64, bytes: leg.bytes, signClaim })
            }
            const storedBuild: AtomicStoredBuild = {
              buyers: buyers.map((b) => b.address),
              lastValidBlockHeight: built.lastValidBlockHeight,
              booking: {
                bundleId,
                accountId: caller.accountId,
                keyId: caller.keyId,
                clientLaunchId: request.clientLaunchId,
                attempt,
                mint: built.mint,
                curve: built.bundle.curve,
                quoteAsset: request.quoteAsset,
                visibility: request.visibility,
                result,
                platformFeeBps: feeBps,
                legs: bookedLegs
              },
              legs
            }
            const state = initialBundle(
              bundleId,
              expiresAtMs,
              ladder.legs.map((l) => ({ clientTradeId: clientTradeId(l.index), amountInRaw: l.amountInRaw, expectedOutRaw: l.amountOutRaw, minAmountOutRaw: l.minAmountOutRaw }))
            )
            yield* insertBundle(
              { bundleId, accountId: caller.accountId, keyId: caller.keyId, keyPrefix: caller.keyPrefix, clientLaunchId: request.clientLaunchId, attempt, mint: built.mint, build: storedBuild, state, submitToken: null, expiresAtMs },
              encodeBuild,
              nowMs
            )
            yield* reserveHolds({ bundleId, keyId: caller.keyId, accountId: caller.accountId, asset: request.quoteAsset }, holdsOf(gateLegs, usdOf), nowMs)
            yield* attribute(
              { accountId: caller.accountId, keyId: caller.keyId, path: "atomic", chain: "solana", mint: built.mint, visibility: "hidden", requestedVisibility: request.visibility },
              deps.agentLaunches
            )(record)
          })

        const admission: Effect.Effect<{ readonly _tag: "Accepted" | "Replay"; readonly result?: StoredResult }, LaunchError | SqlError | LaunchLedgerError> = rebuild
          ? Effect.as(ledger.rebuild({ accountId: caller.accountId, clientLaunchId: request.clientLaunchId, attempt: attempt - 1 }, also), { _tag: "Accepted" as const }).pipe(
              // The superseded attempt was failed meanwhile (its expiry's bookkeeping): a fresh attempt, as any same-id build after a failure.
              Effect.catchTag("LaunchLedgerError", () => ledger.begin(input, also))
            )
          : ledger.begin(input, also)
        const admitted = yield* admission.pipe(
          Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }),
          stored("recording the bundle")
        )
        if (admitted._tag === "Replay") return { _tag: "Replay", result: admitted.result ?? {} } satisfies AtomicBuildAnswer
        const row2 = yield* load(bundleId)
        if (row2 === undefined) return yield* Effect.dieMessage(`AtomicLaunch: bundle ${bundleId} not found after its build committed`)
        return { _tag: "Built", body: buildBody(row2) } satisfies AtomicBuildAnswer
      })

    // ---- submit ------------------------------------------------------------------------------

    /**
     * One recovery pass over a stored bundle (chain read, owed bookings), by its lease holder: a
     * bundle found `submitting` or `signing` under our lease lost its driver (that driver's lease
     * ended), so it is settled as a restart would.
     */
    const settle = (row: BundleRow<AtomicStoredBuild>) =>
      Effect.flatMap(Clock.currentTimeMillis, (nowMs) => resumeBundle(runner!, ledger, row, nowMs, fenceOf(row.bundleId))).pipe(withSql, stored("settling the bundle"))

    const answerSent = (row: BundleRow<AtomicStoredBuild>, s: BundleState): AtomicSubmitAnswer | undefined => submitOutcome(identity(row), s)

    const submit: AtomicLaunchShape["submit"] = (caller, input) =>
      Effect.gen(function* () {
        if (runner === undefined) {
          return yield* launchFailure("block_engine_missing", "Atomic launches need a block engine; this server has none configured (BLOCK_ENGINE_URL)", { retryable: true })
        }
        const first = yield* load(input.bundleId)
        if (first === undefined || first.accountId !== caller.accountId) return yield* notFound()
        return yield* drive(input.bundleId, inProgress(), submitDriven(caller, input))
      })

    const submitDriven = (caller: AtomicCaller, input: AtomicSubmitInput) =>
      Effect.gen(function* () {
        // Consume under the row lock: the first submit moves `built` to `submitting` before verifying anything.
        const nowMs = yield* Clock.currentTimeMillis
        const consumed = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              const row = yield* findBundle(input.bundleId, decodeBuild, true)
              if (row === undefined) return undefined
              const io = yield* bundleIo(ledger, row, () => nowMs)
              if (row.state.phase === "built" && nowMs >= row.expiresAtMs) {
                return { row, state: yield* runner!.apply(row.state, { _tag: "Expire", atMs: nowMs }, io) }
              }
              return { row, state: yield* runner!.apply(row.state, { _tag: "SubmitBegun", atMs: nowMs }, io) }
            })
          )
          .pipe(withSql, stored("consuming the bundle"))
        if (consumed === undefined) return yield* notFound()
        const { row } = consumed
        let s = consumed.state
        const io = yield* ioOf(row)
        if (s.phase !== "submitting" || row.state.phase !== "built") {
          // Not this call's to run: the stored outcome (one recovery pass first for an unknown one), never a resend.
          if (s.phase === "submitting" || s.phase === "signing") return yield* inProgress()
          if (s.phase === "sent") s = yield* settle({ ...row, state: s })
          const answer = answerSent(row, s)
          if (answer !== undefined) return answer
          return yield* notFound()
        }
        const legs = row.build.legs.map((l) => ({ index: l.index, signer: l.signer, assembled: { wireBase64: l.wireBase64, messageBase64: l.messageBase64, bytes: l.bytes } }))
        const check = checkSubmittedLegs(legs, input.signedTxsBase64)
        if (check._tag === "Refused") {
          yield* runner!.apply(s, { _tag: "SubmitRefused", kind: check.kind, detail: check.detail, atMs: yield* Clock.currentTimeMillis }, io).pipe(stored("refusing the submit"))
          return yield* check.kind === "bytes"
            ? launchFailure("unrecognized_transaction", `${check.detail}; nothing was signed or sent: sign the leg exactly as built and submit again before expiresAt`, { field: check.field, retryable: false })
            : launchFailure("validation_failed", `${check.detail}; the bundle was consumed: build again`, { field: check.field, retryable: false })
        }
        s = yield* runner!.apply(s, { _tag: "Signing", atMs: yield* Clock.currentTimeMillis }, io).pipe(stored("recording the signing"))
        const wires: string[] = []
        for (let i = 0; i < check.wires.length; i++) {
          const w = check.wires[i]
          if (w !== null && w !== undefined) {
            wires.push(w)
            continue
          }
          const signed = yield* Effect.either(solana.signEmbedded(caller.accountId, row.build.legs[i]!.wireBase64))
          if (signed._tag === "Left") {
            // Nothing left: the attempt fails, the holds stay (rule 7: owner signing had started).
            yield* runner!.apply(s, { _tag: "SendAbandoned", atMs: yield* Clock.currentTimeMillis }, io).pipe(stored("abandoning the bundle"))
            return yield* fromSolana(signed.left)
          }
          wires.push(signed.right)
        }
        const after = yield* runner!.send(s, wires, row.build.buyers, row.mint, row.build.lastValidBlockHeight, io).pipe(stored("sending the bundle"))
        const answer = answerSent(row, after)
        if (answer === undefined) return yield* Effect.dieMessage(`AtomicLaunch: bundle ${row.bundleId} sent but has no submit answer (${after.phase})`)
        return answer
      })

    // ---- reads -------------------------------------------------------------------------------

    const bundle: AtomicLaunchShape["bundle"] = (accountId, bundleId) =>
      Effect.gen(function* () {
        const row = yield* load(bundleId)
        if (row === undefined || row.accountId !== accountId) return yield* notFound()
        return { success: true, bundle: bundleRecord(identity(row), row.state) }
      })

    const job: AtomicLaunchShape["job"] = (ref) =>
      Effect.gen(function* () {
        const row = yield* ledger.get(ref).pipe(stored("reading the job"))
        if (row === undefined || row.path !== "atomic") return undefined
        const b = yield* findBundleOfAttempt(ref.accountId, ref.clientLaunchId, row.attempt, decodeBuild).pipe(withSql, stored("reading the job"))
        return jobRecord(row, { mint: b?.mint, pool: b?.build.booking.curve, signature: b?.state.launchSignature }, b !== undefined ? { bundleId: b.bundleId } : {})
      })

    // ---- recovery ----------------------------------------------------------------------------

    const recoverPass: AtomicLaunchShape["recoverPass"] = Effect.gen(function* () {
      if (runner === undefined) return { bundles: 0, failed: 0 }
      const nowMs = yield* Clock.currentTimeMillis
      const rows = yield* unsettledBundles().pipe(withSql, Effect.orElseSucceed(() => []))
      // A live build has nothing due (it expires at expiresAt): left alone, no lease taken.
      const due = rows.filter((r) => r.phase !== "built" || r.expiresAtMs <= nowMs)
      let failed = 0
      for (const { bundleId } of due) {
        // Re-read under the lease: the row may have moved since the listing.
        const r = yield* Effect.either(drive(bundleId, Effect.void, Effect.flatMap(load(bundleId), (row) => (row === undefined ? Effect.void : Effect.asVoid(settle(row))))))
        if (r._tag === "Left") failed++
      }
      return { bundles: due.length, failed }
    })

    if (runner !== undefined) {
      yield* Effect.forkScoped(
        recoverPass.pipe(
          Effect.catchAllCause((c) => Effect.logWarning("atomic bundle recovery pass failed", c)),
          Effect.repeat(Schedule.spaced(Duration.millis(o.recoveryIntervalMs)))
        )
      )
    }

    return { build, submit, bundle, job, recoverPass } satisfies AtomicLaunchShape
  })

export const layer = (
  config: AtomicLaunchConfig
): Layer.Layer<AtomicLaunch, never, SqlClient.SqlClient | LaunchLedger | ImageService | SolanaLaunch | WalletService | WalletProvider | PriceSource | AgentLaunchRegistry | TierService> =>
  Layer.scoped(
    AtomicLaunch,
    Effect.gen(function* () {
      return yield* make(config, {
        ledger: yield* LaunchLedger,
        images: yield* ImageService,
        solana: yield* SolanaLaunch,
        wallets: yield* WalletService,
        provider: yield* WalletProvider,
        prices: yield* PriceSource,
        holdings: yield* launchHoldings,
        agentLaunches: yield* AgentLaunchRegistry
      })
    })
  )
