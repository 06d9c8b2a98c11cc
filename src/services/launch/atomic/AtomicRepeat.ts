/**
 * A same-id, same-body atomic build while an attempt is in flight (endpoint rule 9's repeat): a
 * live build is answered again; one that cannot land any more is superseded (a new attempt in the
 * same slot); one being submitted is 409 retryable; one that was sent waits for the chain (up to
 * `sameIdWaitMs`, settling it each look) and is then answered as the ledger stands.
 */
import { Clock, Effect } from "effect"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import type { BeginInput, LaunchRecord } from "../LaunchLedger.js"
import type { AtomicLaunchBody } from "../request/DecodeLaunchRequest.js"
import type { AtomicBuildAnswer, AtomicCaller } from "./AtomicLaunch.js"
import type { AtomicBundles } from "./AtomicBundles.js"
import { buildBody, canonicalAtomicBody, decodeBuild, type ResolvedPayer } from "./AtomicRules.js"
import { findBundleOfAttempt } from "./BundleStore.js"

export const makeAtomicRepeat = (b: AtomicBundles) => {
  const { o, withSql, runner, stored, load, drive, ioOf, inProgress, settle } = b
  const { solana } = b.deps

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
        if (live) return { _tag: "Built", view: buildBody(bundle) } satisfies AtomicBuildAnswer
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

  return { beginInput, repeat }
}
