/**
 * The headless route's gates before anything is stored (spec 2.1, 2.6; general rule 2): the key's
 * embedded-wallet permission, the ledger's preview (a replay answers the stored result),
 * exclusive eligibility, the images, the owner's delegated embedded wallet, and the Solana size.
 */
import { Effect } from "effect"
import type { Chain } from "../../../domain/Chain.js"
import type { LaunchPictures } from "../../images/ImageService.js"
import type { HeadlessCaller } from "../HeadlessLaunch.js"
import { exclusiveEligibility, fetchImages, launchStorage } from "../internal/LaunchGates.js"
import type { BeginInput } from "../LaunchLedger.js"
import { fromLedger, fromProvider, fromSolana, launchFailure } from "../LaunchError.js"
import { canonicalBody } from "../request/CanonicalBody.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { HeadlessContext } from "./HeadlessContext.js"

const storage = launchStorage

export type HeadlessGates = ReturnType<typeof makeHeadlessGates>

export const makeHeadlessGates = (ctx: HeadlessContext) => {
  const { o, deps } = ctx
  const { ledger, images, solana, provider } = deps

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

  const hostLaunch = (request: LaunchRequest, pictures: LaunchPictures) =>
    images.hostLaunch(request, pictures).pipe(storage("re-hosting the images and the metadata document"))

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
    solana.size(solanaSpec(request, payer, metadataUri, BigInt(caller.plan.feeBps))).pipe(Effect.mapError(fromSolana))

  const preview = (caller: HeadlessCaller, request: LaunchRequest) =>
    ledger.preview(beginInput(caller, request)).pipe(
      Effect.catchTags({ LaunchLedgerError: (e) => Effect.fail(fromLedger(e)) }), storage("reading the launch ledger")
    )

  const admitted = (caller: HeadlessCaller, request: LaunchRequest) =>
    Effect.gen(function* () {
      yield* permitted(caller)
      const seen = yield* preview(caller, request)
      if (seen._tag === "Replay") return { _tag: "Replay" as const, result: seen.result }
      const exclusive = yield* eligible(caller, request)
      const pictures = yield* resolveImages(request)
      return { _tag: "Checked" as const, pictures, exclusive }
    })

  return { beginInput, eligible, resolveImages, hostLaunch, embeddedWallet, solanaSpec, sized, admitted }
}
