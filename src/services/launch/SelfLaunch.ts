/**
 * Self-signed launches on either chain (launch spec 2.3, 2.7, 3.1-3.4): the one service the
 * self-signed routes call. Build and dry run go to the request's chain; confirm and the job read
 * go to the chain of the ledger row the id names (the confirm body carries no chain). The wire
 * shapes of the build's artifacts are decided here (spec 4 names only their fields).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import { MATRIX_VERSION } from "../../domain/Economics.js"
import type { HoodOperation } from "./HoodOperation.js"
import { HoodSelfLaunch, type HoodSelfBuild, type HoodSelfLaunchShape } from "./HoodSelfLaunch.js"
import { launchStorage } from "./internal/LaunchGates.js"
import { jobRecord, type LaunchJobView } from "./internal/LaunchRecords.js"
import { readBuild } from "./internal/SelfBuilds.js"
import { LaunchLedger, type LaunchLedgerShape, type LaunchRecord, type LaunchRef, layerTest as launchLedgerTest } from "./LaunchLedger.js"
import type { StoredResult } from "./LaunchLedgerMachine.js"
import { type LaunchError, launchFailure } from "./LaunchError.js"
import type { SelfLaunchBody } from "./request/DecodeLaunchRequest.js"
import { type SelfBuild, type SelfCaller, SolanaSelfLaunch, type SolanaSelfLaunchShape } from "./SolanaSelfLaunch.js"
import * as Database from "../../db/Database.js"
import type { SelfDryRunView } from "./internal/SelfDryRunView.js"

export interface SelfConfirmBody {
  readonly clientLaunchId: string
  readonly signature?: string | undefined
  readonly feeTxHash?: string | undefined
  readonly devBuySignature?: string | undefined
  readonly operationId?: string | undefined
  readonly signedTransaction?: string | undefined
}

export type SelfBuildAnswer =
  /** The unsigned artifacts (or a Hood TEE operation). */
  | { readonly _tag: "Built"; readonly view: SelfBuildView }
  /** Same id and body already confirmed: the launch result. */
  | { readonly _tag: "Replay"; readonly result: StoredResult }

export interface SelfLaunchShape {
  readonly dryRun: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<SelfDryRunView, LaunchError>
  readonly build: (caller: SelfCaller, body: SelfLaunchBody) => Effect.Effect<SelfBuildAnswer, LaunchError>
  /** 200 confirmed result, or a Hood TEE operation's next state. */
  readonly confirm: (caller: SelfCaller, body: SelfConfirmBody) => Effect.Effect<StoredResult, LaunchError>
  /** The job record (2.7) of a self-signed row the caller read (`LaunchJobs.ts`: one ledger read per job read); undefined for another path's row. */
  readonly job: (ref: LaunchRef, row: LaunchRecord) => Effect.Effect<LaunchJobView | undefined, LaunchError>
}

export class SelfLaunch extends Context.Tag("curvestream/SelfLaunch")<SelfLaunch, SelfLaunchShape>() {}

/** A self-signed build's answer (launch spec 2.3), which the route sends inside its envelope. */
export type SelfBuildView = ReturnType<typeof solanaBuildBody> | ReturnType<typeof hoodBuildBody>

/** The answer of a Solana build. */
export const solanaBuildBody = (b: SelfBuild) => ({
  clientLaunchId: b.clientLaunchId,
  chain: "solana",
  transaction: b.transaction,
  mint: b.mint,
  pool: b.pool,
  expiresAt: b.expiresAtMs,
  fee: b.fee,
  signClaim: b.signClaim,
  matrixVersion: MATRIX_VERSION
})

/** The answer of a Hood build: the `createCurve` leg, the fee leg, and a TEE wallet's operation. */
export const hoodBuildBody = (b: HoodSelfBuild) => ({
  clientLaunchId: b.clientLaunchId,
  chain: "hood",
  transaction: b.transaction,
  mint: b.mint,
  pool: b.pool,
  expiresAt: b.expiresAtMs,
  fee: b.fee,
  feeTransfer: b.feeTransfer,
  ...(b.operation !== undefined ? { operation: b.operation } : {}),
  matrixVersion: MATRIX_VERSION
})

export const make = (deps: { readonly solana: SolanaSelfLaunchShape; readonly hood: HoodSelfLaunchShape; readonly ledger: LaunchLedgerShape }) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { solana, hood, ledger } = deps
    const notFound = () => launchFailure("job_not_found", "No self-signed launch with this clientLaunchId on this account; build again", { retryable: false })

    const build: SelfLaunchShape["build"] = (caller, body) =>
      body.request.chain === "solana"
        ? Effect.map(solana.build(caller, body), (o) => (o._tag === "Built" ? { _tag: "Built", view: solanaBuildBody(o.build) } : o))
        : Effect.map(hood.build(caller, body), (o) => (o._tag === "Built" ? { _tag: "Built", view: hoodBuildBody(o.build) } : o))

    const dryRun: SelfLaunchShape["dryRun"] = (caller, body) => (body.request.chain === "solana" ? solana.dryRun(caller, body) : hood.dryRun(caller, body))

    const confirm: SelfLaunchShape["confirm"] = (caller, body) =>
      Effect.gen(function* () {
        const row = yield* ledger.get({ accountId: caller.accountId, clientLaunchId: body.clientLaunchId }).pipe(launchStorage("reading the launch ledger"))
        if (row === undefined || row.path !== "self") return yield* notFound()
        if (row.chain === "hood") return yield* hood.confirm(caller, body)
        if (body.signature === undefined) {
          return yield* launchFailure("validation_failed", "signature is required: the broadcast launch transaction's signature", { field: "signature", retryable: false })
        }
        return yield* solana.confirm(caller, { clientLaunchId: body.clientLaunchId, signature: body.signature })
      })

    const job: SelfLaunchShape["job"] = (ref, row) =>
      Effect.gen(function* () {
        if (row.path !== "self") return undefined
        const stored = yield* readBuild<unknown, unknown>({ ...ref, attempt: row.attempt }).pipe(Effect.provideService(SqlClient.SqlClient, sql), launchStorage("reading the job"))
        const operation = stored?.operation as HoodOperation | null | undefined
        // Hood has no token before confirm (3.2); a Solana build's mint is known from the build.
        return jobRecord(row, { mint: row.chain === "solana" ? stored?.mint : null, pool: stored?.pool }, operation != null ? { operation } : {})
      })

    return { dryRun, build, confirm, job } satisfies SelfLaunchShape
  })

export const layer: Layer.Layer<SelfLaunch, never, SqlClient.SqlClient | SolanaSelfLaunch | HoodSelfLaunch | LaunchLedger> = Layer.effect(
  SelfLaunch,
  Effect.gen(function* () {
    return yield* make({ solana: yield* SolanaSelfLaunch, hood: yield* HoodSelfLaunch, ledger: yield* LaunchLedger })
  })
)

/** The real dispatcher over `Database.layerTest` and the real ledger (`LaunchLedger.layerTest`); the per-chain self launches and the failure codes are the test's. */
export const layerTest = layer.pipe(Layer.provide(launchLedgerTest), Layer.provide(Database.layerTest))
