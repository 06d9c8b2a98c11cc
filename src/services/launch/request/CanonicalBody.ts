/**
 * The canonical body of a launch request: the value the idempotency hash is taken over (launch
 * spec 2.1, 2.2, endpoint rule 1). Two bodies that decode to the same launch have the same
 * canonical body, whatever their key order, number spelling or defaulted members; two that
 * launch differently do not.
 *
 * Shape: every member of the decoded request except `async`; amounts (`buyAmountRaw`,
 * `curve.*Raw`) as decimal strings of raw units, so `5` and `5.0` SOL are one curve; defaults
 * resolved (an omitted `stakerAllocationBps` equals the default written out); absent optional
 * members as null. `curve` is the request's own curve on `exp-custom` and
 * null otherwise (the other modes name their curve by `mode` and `quoteAsset`). `creatorFeeBps` is
 * present only when nonzero. No numbers: bps
 * travel as decimal strings too. `Idempotency.ts` writes it as sorted-key text and hashes it.
 */
import type { CanonicalJson } from "../Idempotency.js"
import type { LaunchRequest } from "./LaunchRequest.js"

export const canonicalBody = (req: LaunchRequest): CanonicalJson => {
  const socials: Record<string, string> = {}
  for (const [key, url] of Object.entries(req.socials)) if (url !== undefined) socials[key] = url
  return {
    bannerUrl: req.banner?.url ?? null,
    buyAmountRaw: req.buyAmountRaw.toString(),
    chain: req.chain,
    clientLaunchId: req.clientLaunchId,
    curve:
      req.mode === "exp-custom"
        ? { thresholdRaw: req.curve.thresholdRaw.toString(), virtualQuoteRaw: req.curve.virtualQuoteRaw.toString() }
        : null,
    // Only when chosen: a body without it (every launch before the field existed) hashes as before.
    ...(req.creatorFeeBps !== 0n ? { creatorFeeBps: req.creatorFeeBps.toString() } : {}),
    description: req.description,
    dexVersion: req.dexVersion,
    imageUrl: req.image.url,
    mode: req.mode,
    name: req.name,
    quoteAsset: req.quoteAsset,
    socials,
    stakerAllocationBps: req.stakerAllocationBps.toString(),
    symbol: req.symbol,
    visibility: req.visibility
  }
}

/** The canonical body of a self-signed build (2.3): `linkedWalletId` is part of the idempotency hash. */
export const canonicalSelfBody = (req: LaunchRequest, linkedWalletId: string): CanonicalJson => ({
  ...(canonicalBody(req) as Record<string, CanonicalJson>),
  linkedWalletId
})
