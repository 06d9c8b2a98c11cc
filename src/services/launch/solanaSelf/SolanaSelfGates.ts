/**
 * A Solana self-signed launch's gates and inputs (launch spec 2.3, endpoint rules 4 and 6): the
 * plan, the payer (payer rules, TEE rules, the key's cap), eligibility, the images, the launch
 * spec for a payer, and a new attempt's metadata (fetched, sized against, re-hosted).
 */
import { Effect } from "effect"
import { platformFeeRaw } from "../../../chain/solana/launch/LaunchTransaction.js"
import { exclusiveEligibility, fetchImages, launchStorage, selfPayer, selfSignedTier } from "../internal/LaunchGates.js"
import type { BeginInput } from "../LaunchLedger.js"
import { fromSolana } from "../LaunchError.js"
import { canonicalSelfBody } from "../request/CanonicalBody.js"
import type { SelfLaunchBody } from "../request/DecodeLaunchRequest.js"
import type { LaunchRequest } from "../request/LaunchRequest.js"
import type { SelfCaller } from "../SolanaSelfLaunch.js"
import type { SolanaSelfContext } from "./SolanaSelfContext.js"

const storage = launchStorage

export type SolanaSelfGates = ReturnType<typeof makeSolanaSelfGates>

export const makeSolanaSelfGates = (ctx: SolanaSelfContext) => {
  const { config, deps } = ctx
  const { images, solana, wallets } = deps

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

  /** The images fetched, the launch sized against its metadata URI, the images and document hosted: the URI a new attempt writes. */
  const freshMetadata = (caller: SelfCaller, body: SelfLaunchBody, payer?: string) =>
    Effect.gen(function* () {
      const pictures = yield* resolveImages(body.request)
      if (payer !== undefined) {
        yield* solana.size(spec(caller, body.request, payer, images.metadataUrlOf(body.request, pictures))).pipe(Effect.mapError(fromSolana))
      }
      const hosted = yield* images.hostLaunch(body.request, pictures).pipe(storage("re-hosting the images and the metadata document"))
      return hosted.metadataUrl
    })

  const solanaOnly = (request: LaunchRequest) =>
    request.chain === "solana" ? Effect.void : Effect.dieMessage("SolanaSelfLaunch: a Hood request reached the Solana self-signed service")

  return { beginInput, tier, checkedPayer, eligible, resolveImages, spec, freshMetadata, solanaOnly }
}
