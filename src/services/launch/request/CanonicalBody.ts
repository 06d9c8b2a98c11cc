/**
 * The canonical body of a launch request: the value the idempotency hash is taken over (launch
 * spec 2.1, 2.2, endpoint rule 1). Two bodies that decode to the same launch have the same
 * canonical body, whatever their key order, number spelling or defaulted members; two that
 * launch differently do not.
 *
 * Shape: every member of the decoded request except `async`, with keys sorted at every level;
 * amounts (`buyAmountRaw`, `curve.*Raw`) as decimal strings of raw units, so `5` and `5.0` SOL
 * are one curve; defaults resolved (an omitted `stakerAllocationBps` equals the default written
 * out); absent optional members as null. `curve` is the request's own curve on `exp-custom` and
 * null otherwise (the other modes name their curve by `mode` and `quoteAsset`).
 */
import type { LaunchRequest } from "./LaunchRequest.js"

/** A JSON value with no floats in it (local until `Idempotency.ts` exports the shared type). */
export type CanonicalJson = null | boolean | number | string | ReadonlyArray<CanonicalJson> | { readonly [key: string]: CanonicalJson }

const sortKeys = (value: CanonicalJson): CanonicalJson => {
  if (value === null || typeof value !== "object") return value
  if (Array.isArray(value)) return value.map(sortKeys)
  const record = value as { readonly [key: string]: CanonicalJson }
  const sorted: Record<string, CanonicalJson> = {}
  for (const key of Object.keys(record).sort()) sorted[key] = sortKeys(record[key] as CanonicalJson)
  return sorted
}

export const canonicalBody = (req: LaunchRequest): CanonicalJson => {
  const socials: Record<string, CanonicalJson> = {}
  for (const [key, url] of Object.entries(req.socials)) if (url !== undefined) socials[key] = url
  return sortKeys({
    clientLaunchId: req.clientLaunchId,
    chain: req.chain,
    quoteAsset: req.quoteAsset,
    mode: req.mode,
    curve:
      req.mode === "exp-custom"
        ? { virtualQuoteRaw: req.curve.virtualQuoteRaw.toString(), thresholdRaw: req.curve.thresholdRaw.toString() }
        : null,
    stakerAllocationBps: req.stakerAllocationBps.toString(),
    dexVersion: req.dexVersion,
    buyAmountRaw: req.buyAmountRaw.toString(),
    name: req.name,
    symbol: req.symbol,
    imageUrl: req.image.url,
    bannerUrl: req.banner?.url ?? null,
    description: req.description,
    socials,
    visibility: req.visibility
  })
}
