/**
 * What every part of the creator-fee service works over: its ports, time, the claim leases and
 * this process's bound on claims in flight.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { storageFailure } from "../../../domain/ServiceFailure.js"
import { WalletProvider } from "../../wallets/WalletProvider.js"
import { WalletService } from "../../wallets/WalletService.js"
import type { CreatorFeesOptions } from "../CreatorFees.js"
import { makeFeeClaimLocks } from "../FeeClaimLocks.js"
import { feeError } from "../FeeError.js"
import type { FeeClaim } from "../FeeViews.js"
import { makeHoodCreatorFees } from "../HoodCreatorFees.js"
import { makeSolanaCreatorFees } from "../SolanaCreatorFees.js"

export const FEE_PAGE_DEFAULT = 20
export const FEE_PAGE_MAX = 50

/** The members every claim answer opens with. */
export type ClaimBase = Pick<FeeClaim, "mint" | "chain" | "dryRun" | "recipient" | "warnings" | "dust">

export const storage = storageFailure("fees", () => feeError("storage", "Internal error; nothing was recorded"))

export const feeContext = (options: CreatorFeesOptions) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const provider = yield* WalletProvider
    const wallets = yield* WalletService
    const solana = makeSolanaCreatorFees(options.solanaRpcUrl)
    const hood = options.hood === undefined ? undefined : makeHoodCreatorFees(options.hood, provider)
    /** Time: the Effect `Clock` the service is built under (TestClock or a fixed clock in tests). */
    const clock = yield* Effect.clock
    /** This process's running claims (the bound); which tokens are claimed anywhere is `locks`. */
    const inFlight = new Set<string>()
    const locks = makeFeeClaimLocks(sql, options.claimLeaseMs)
    const inFlightMax = options.claimsInFlightMax ?? 1_000

    return { options, sql, provider, wallets, solana, hood, clock, inFlight, locks, inFlightMax }
  })

export type FeeCtx = Effect.Effect.Success<ReturnType<typeof feeContext>>
