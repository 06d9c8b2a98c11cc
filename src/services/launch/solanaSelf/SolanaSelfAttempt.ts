/**
 * One attempt of a Solana self-signed build (launch spec 3.2, 3.3): the transaction for the payer
 * on a fresh blockhash, then, inside the ledger transaction that admits the attempt, the sign
 * claim, the build row and the `hidden` token row (and the dev buy's spend hold); and the stored
 * build read back.
 */
import { getBase64Encoder } from "@solana/kit"
import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Effect } from "effect"
import type { WalletView } from "../../wallets/WalletService.js"
import { reserveIn } from "../../spend/SpendStore.js"
import { devBuyAttempt, devBuyReservationId } from "../internal/LaunchSpend.js"
import { attribute } from "../internal/LaunchRecords.js"
import { Overlap, readBuild, storeBuild } from "../internal/SelfBuilds.js"
import type { Also, AttemptRef, LaunchRecord } from "../LaunchLedger.js"
import { fromSolana } from "../LaunchError.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"
import { BLOCKHASH_LIFETIME_MS_MAX } from "../SelfBuildRules.js"
import type { SolanaLaunchInput } from "../SolanaLaunch.js"
import type { SelfBuild, SelfCaller } from "../SolanaSelfLaunch.js"
import type { Resolved, SolanaSelfContext, StoredBuild } from "./SolanaSelfContext.js"
import type { SolanaSelfGates } from "./SolanaSelfGates.js"

export type SolanaSelfAttempts = ReturnType<typeof makeSolanaSelfAttempts>

export const makeSolanaSelfAttempts = (ctx: SolanaSelfContext, gates: SolanaSelfGates) => {
  const { deps, sql, slotMs } = ctx
  const { solana, wallets } = deps
  const { spec } = gates
  const fromBase64 = getBase64Encoder()

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
      // The dev buy through the spend gate (document 2, 4.1): a TEE wallet's is held against the key's USD window before
      // anything is signed (refused past it); a linked wallet's is metered, its txLimit advisory.
      const spend = yield* devBuyAttempt(deps.prices, payer.walletKind === "tee" ? "tee" : "linked", request, caller.plan.feeBps)
      let claimId = ""
      const also: Also<unknown> = (record) =>
        Effect.gen(function* () {
          // Another build of this id moved the row first: roll this one back.
          if (record.attempt !== attempt) return yield* Effect.fail(new Overlap())
          if (spend !== undefined) {
            yield* reserveIn({
              reservationId: devBuyReservationId("self", { accountId: caller.accountId, clientLaunchId: request.clientLaunchId, attempt }),
              accountId: caller.accountId,
              keyPrefix: caller.keyPrefix,
              chain: "solana",
              attempt: spend
            })
          }
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

  return { readStored, buildAttempt }
}
