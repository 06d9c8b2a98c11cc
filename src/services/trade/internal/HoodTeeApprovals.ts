/**
 * A Hood TEE wallet's token approval before a sell, built by the server (issue 28; docs/decisions.md
 * "A Hood TEE sell's approval, built by the server"). A TEE wallet signs only through the sign relay,
 * under a single-use claim for a transaction the service built; its sell needs the token's allowance
 * to the spender (`HoodTradeChain.spenderOf`, the one place that decides it), and one transaction
 * cannot carry both. So:
 * - build (a `payer: tee` sell whose allowance is short, `HoodPricedTrade.approval`): the
 *   `approve(spender, max)` transaction for the wallet bound to the key (`approveCall`, the request
 *   tag in its calldata: the approval is this request's own), on the wallet's `pending` nonce, the
 *   wallet's ETH checked against its gas at the fee cap, its own sign claim (`recordBuilt`, purpose
 *   `trade_approval`, `swap:write`), recorded in `agent_trade_approvals` under the sell's
 *   `clientTradeId`. No spend is held (it moves no money) and no trade row is written. A repeat of
 *   the id answers the same approval while it can be signed; signed and not mined, a retryable
 *   `pending` (`approval_pending`); lapsed (reverted, nonce taken, claim expired unsigned) a new one.
 *   At most one live approval per wallet, token and spender (a unique index): another id's build
 *   meanwhile answers `pending` naming it, so two approvals are never in flight on two nonces.
 * - submit (`/submit` with the sell's id and the relay's signed bytes, before the sell is built):
 *   the bytes must be the built approval signed by the TEE wallet (`SignedEvm.builtHashOf`), else
 *   `wrong_transaction` and nothing changes; recorded `sending` with the bytes (one request wins
 *   the conditional save and sends, preflight first), then the chain's verdict awaited.
 * - the sell: once the approval is mined the allowance is there, and the same build answers the sell
 *   on the wallet's next `pending` nonce (the approval's + 1): the two never share a nonce. An
 *   approval of the id left unsigned when the allowance is found in place (approved some other
 *   way) has its claim expired first, so the relay never signs it onto the sell's nonce.
 * - a crash between the `sending` save and the send: the next build or submit of the id finds the
 *   row `sending`, no receipt, its nonce not passed, and sends the kept bytes again (same nonce and
 *   hash: never a second approval). * - edges (docs/decisions.md "A relay-signed Hood TEE approval never submitted, and the approval's
 *   edges"): a changed body is refused before the sell too; a claim is expired only while unsigned
 *   (`expireOpen`), else the standing is read again; an approval found mined is answered
 *   `approval_confirmed`, never replaced; one signed at the relay, never submitted, unknown to the
 *   node, lapses once its claim's lifetime passed and a new one is built on the same nonce.
 */
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { getAddress, type Hash, type Hex } from "viem"
import { requestTag } from "../../../chain/hood/client/RequestTag.js"
import { builtHashOf } from "../../../chain/hood/client/SignedEvm.js"
import { awaitUntil } from "../../../platform/AwaitUntil.js"
import { approveCall, type HoodTradeChain, MAX_ALLOWANCE } from "../HoodTradeChain.js"
import { tradeError } from "../TradeError.js"
import { type TradeCaller, type TradeRequest, tradeBodyHash } from "../TradeInputs.js"
import { approvalView, type TradeApprovalView } from "../TradeViews.js"
import type { HoodPricedTrade } from "./HoodTradeSubmit.js"
import type { TradeContext } from "./TradeContext.js"
import { type ApprovalRow, type ApprovalVerdict, approvalHashOf, approvalStanding, makeTradeApprovalStore, type TradeApprovalStore } from "./TradeApprovalStore.js"

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex")
const hexOf = (bytes: Uint8Array): Hex => `0x${Buffer.from(bytes).toString("hex")}`

/** Where a stored approval stands and how it settles: its claim and the chain read, the rule (`approvalStanding`) decides. */
const approvalStandings = (ctx: TradeContext, hood: HoodTradeChain, store: TradeApprovalStore) => {
  const wallets = ctx.wallets

  const pendingRefusal = (row: ApprovalRow, signature: string | undefined) =>
    tradeError(
      "pending",
      signature === undefined
        ? `The wallet's token approval built for clientTradeId ${row.clientTradeId} is not signed yet: sign and submit it under that id, or build again once its claim expired`
        : `The wallet's token approval for clientTradeId ${row.clientTradeId} is signed and not mined yet: build again once it is`,
      {
      retryable: true,
        details: { reason: "approval_pending", clientTradeId: row.clientTradeId, spender: row.spender, nonce: row.nonce.toString(), signature: signature ?? "" }
      }
    )

  /**
   * Where `row` stands now (its claim, the chain's verdict on its hash); an unsigned claim past its
   * lifetime is expired here. A claim the relay signed whose bytes never reached this server nor the
   * node, past its lifetime (the wallet service's clock), is failed here and the approval lapses, so
   * a new one can be built on the same nonce (docs/decisions.md "A relay-signed Hood TEE approval
   * never submitted"): of the two, only one can be mined on that nonce, and either grants the allowance.
   */
  const standingOf = (row: ApprovalRow) =>
    Effect.gen(function* () {
      const claim = wallets === undefined ? undefined : yield* wallets.claimStatus(row.claimId)
      const hash = approvalHashOf(row, claim)
      const verdict: ApprovalVerdict | undefined =
        row.state === "approved" || row.state === "lapsed" || hash === undefined ? undefined : yield* hood.plainVerdict(hash as Hash, getAddress(row.wallet), row.nonce)
      const standing = approvalStanding(row, claim, verdict)
      if (standing === "in_flight" && row.state === "built" && row.signedTransaction === null && claim?.state === "signed" && hash !== undefined && wallets !== undefined) {
        // The row first (only while no submit has moved it to `sending`), then the claim: a submit
        // racing this lapse either wins and sends (the approval stays in flight) or finds it lapsed
        // and sends nothing; a crash between the two leaves a lapsed row, which `settled` finishes.
        if ((yield* wallets.signedPastLifetime(row.claimId)) && (yield* hood.transaction(hash as Hash)) === undefined) {
          if (!(yield* store.lapseUnsent(row))) return { standing: "in_flight" as const, hash }
          yield* wallets.failSignedPastLifetime(row.claimId)
          return { standing: "lapsed" as const, hash }
        }
      }
      if (standing !== "expire") return { standing, hash }
      // Unsigned: lapsed once its claim can no longer be signed (the relay's mirror condition), else open.
      const expired = wallets === undefined ? true : yield* wallets.expireUnsigned(row.claimId)
      return { standing: expired ? ("lapsed" as const) : ("open" as const), hash }
    })

  /**
   * An `open` approval's claim expired, only if the relay has still not signed it (one conditional
   * update, `expireOpen`): undefined when it moved; else (signed meanwhile) the standing read again.
   */
  const expiredOrStanding = (row: ApprovalRow) =>
    Effect.gen(function* () {
      if (wallets === undefined || (yield* wallets.expireOpen(row.claimId))) return undefined
      return yield* standingOf(row)
    })

  /** Settles a row that can no longer change (its claim follows: confirmed, failed or expired). */
  const settled = (row: ApprovalRow, standing: "approved" | "lapsed") =>
    Effect.gen(function* () {
      yield* store.settle(row, standing)
      if (wallets !== undefined) {
        const claim = yield* wallets.claimStatus(row.claimId)
        if (claim?.state === "signed") yield* wallets.settleClaim(row.claimId, standing === "approved" ? "confirmed" : "failed").pipe(Effect.ignore)
      }
    })

  /** Sends the kept signed bytes again (after a crash between the `sending` save and the send). A refusal decides nothing. */
  const resend = (row: ApprovalRow) => (row.signedTransaction === null ? Effect.void : Effect.asVoid(hood.send(row.signedTransaction as Hex)))

  /**
   * A build's own stored approval: the answer it gives (the same approval while open, confirmed once
   * mined with the allowance there, or the refusal), or undefined once it was settled and removed
   * (lapsed, or mined and since spent) so a new one replaces it.
   */
  const ownAnswer = (mine: ApprovalRow, bodyHash: string, spender: string, p: { readonly wallet: string; readonly mint: string }, amountInRaw: bigint) =>
    Effect.gen(function* () {
      if (mine.bodyHash !== bodyHash) return yield* tradeError("idempotency_conflict", "This clientTradeId was used with a different body", { details: { state: mine.state } })
      let { standing, hash } = yield* standingOf(mine)
      const same = mine.spender === spender
      if (same && standing === "open") return approvalView(mine, MAX_ALLOWANCE, "approval_built", true)
      if (standing === "open") {
        // For a spender the market no longer uses: its claim expired only while still unsigned.
        const now = yield* expiredOrStanding(mine)
        if (now === undefined) standing = "lapsed" // its claim expired unsigned just now: replaced below
        else ({ standing, hash } = now)
        if (standing === "open") return yield* pendingRefusal(mine, hash)
      }
      if (standing === "resend") yield* resend(mine)
      if (standing === "in_flight" || standing === "resend") return yield* pendingRefusal(mine, hash)
      if (same && standing === "approved") {
        // Mined after the allowance was read: answered confirmed (the next build is the sell), never replaced.
        yield* settled(mine, "approved")
        const allowed = yield* hood.allowance(getAddress(p.wallet), getAddress(p.mint), getAddress(spender))
        if (allowed >= amountInRaw) return approvalView({ ...mine, signature: hash ?? mine.signature }, MAX_ALLOWANCE, "approval_confirmed", true)
      }
      // Lapsed, mined and since spent below amountIn, or for a spender the market no longer uses: a new approval replaces it.
      yield* settled(mine, standing === "approved" ? "approved" : "lapsed")
      yield* store.remove({ ...mine, state: "lapsed" })
      return undefined
    })


  return { pendingRefusal, standingOf, expiredOrStanding, settled, resend, ownAnswer }
}

export const makeHoodTeeApprovals = (ctx: TradeContext, hood: HoodTradeChain) => {
  const store = makeTradeApprovalStore(ctx.sql)
  const wallets = ctx.wallets
  const { pendingRefusal, standingOf, expiredOrStanding, settled, resend, ownAnswer } = approvalStandings(ctx, hood, store)

  /** `POST /build` of a TEE sell whose allowance is short: the approval to sign first. */
  const build = (caller: TradeCaller, request: TradeRequest, p: HoodPricedTrade) =>
    Effect.gen(function* () {
      const short = p.approval
      if (wallets === undefined || p.walletId === null || short === undefined) return yield* tradeError("chain_unsupported", "TEE payers need the wallet service", { field: "payer" })
      const bodyHash = tradeBodyHash(request)
      const mine = yield* store.get(caller.accountId, request.clientTradeId)
      if (mine !== undefined) {
        const answer = yield* ownAnswer(mine, bodyHash, short.spender, p, request.amountInRaw)
        if (answer !== undefined) return answer
      }
      const other = yield* store.live(p.wallet, p.mint, short.spender)
      if (other !== undefined) {
        const { standing, hash } = yield* standingOf(other)
        if (standing === "resend") yield* resend(other)
        if (standing === "open" || standing === "in_flight" || standing === "resend") return yield* pendingRefusal(other, hash)
        yield* settled(other, standing)
      }
      const u = yield* hood.unsigned(p.wallet, approveCall(p.mint, short.spender, requestTag("approval", caller.accountId, request.clientTradeId)))
      const held = yield* hood.holdings(p.wallet, p.mint)
      const needWei = u.gas * u.maxFeePerGas
      if (held.weiRaw < needWei) {
        return yield* tradeError("insufficient_balance", `${p.who} has ${held.weiRaw} wei; the token approval the sell needs first costs up to ${needWei} (gas at the fee cap)`, {
          details: { reason: "approval_gas", balanceRaw: held.weiRaw.toString(), requiredRaw: needWei.toString() }
        })
      }
      const claim = yield* wallets.recordBuilt({
        accountId: caller.accountId,
        walletId: p.walletId,
        keyId: caller.keyId,
        chain: "evm",
        transaction: u.bytes,
        purpose: "trade_approval",
        requiredScopes: ["swap:write"],
        txExpiresAtMs: null
      })
      if ((yield* ctx.store.get(caller.accountId, request.clientTradeId)) !== undefined) {
        // The id's sell was built meanwhile (its approval mined): this claim is never used; the next build answers the sell.
        yield* wallets.expireOpen(claim.claimId).pipe(Effect.ignore)
        return yield* tradeError("pending", `The sell of clientTradeId ${request.clientTradeId} was built meanwhile: build again with the same body for it`, { retryable: true, details: { reason: "approval_pending" } })
      }
      const row: ApprovalRow = {
        accountId: caller.accountId,
        clientTradeId: request.clientTradeId,
        bodyHash,
        walletId: p.walletId,
        wallet: p.wallet,
        mint: p.mint,
        spender: short.spender,
        nonce: BigInt(u.nonce),
        transaction: Buffer.from(u.bytes).toString("base64"),
        messageHash: sha256Hex(u.bytes),
        claimId: claim.claimId,
        signedTransaction: null,
        signature: null,
        state: "built",
        createdAtMs: yield* ctx.clock.currentTimeMillis
      }
      if (yield* store.insert(row)) return approvalView(row, MAX_ALLOWANCE, "approval_built", false)
      // Another request recorded this id, or the wallet's live approval, first: this claim is never used.
      yield* wallets.expireOpen(claim.claimId).pipe(Effect.ignore)
      const first = yield* store.get(caller.accountId, request.clientTradeId)
      if (first !== undefined && first.bodyHash === bodyHash && first.state === "built") return approvalView(first, MAX_ALLOWANCE, "approval_built", true)
      const holder = first ?? (yield* store.live(p.wallet, p.mint, short.spender))
      if (holder === undefined) return yield* tradeError("pending", "Another build of this wallet's approval moved first; build again", { retryable: true, details: { reason: "approval_pending" } })
      return yield* pendingRefusal(holder, holder.signature ?? undefined)
    })

  /**
   * Before a TEE sell is built on the wallet's nonce: the id's approval was built for this body (a
   * changed body is refused, nothing moved), and an unsigned approval of the id can no longer be
   * signed (it would take that nonce); one the relay signed meanwhile, not mined, holds the sell.
   */
  const beforeSell = (caller: TradeCaller, request: TradeRequest) =>
    Effect.gen(function* () {
      const mine = yield* store.get(caller.accountId, request.clientTradeId)
      if (mine === undefined) return
      if (mine.bodyHash !== tradeBodyHash(request)) return yield* tradeError("idempotency_conflict", "This clientTradeId was used with a different body", { details: { state: mine.state } })
      if (mine.state === "approved" || mine.state === "lapsed") return
      let { standing, hash } = yield* standingOf(mine)
      if (standing === "open") {
        const now = yield* expiredOrStanding(mine)
        if (now === undefined) return yield* store.settle(mine, "lapsed")
        ;({ standing, hash } = now)
      }
      if (standing === "resend") yield* resend(mine)
      if (standing === "open" || standing === "in_flight" || standing === "resend") return yield* pendingRefusal(mine, hash)
      yield* settled(mine, standing)
    })

  /** The chain's verdict on a submitted approval, polled within the rail's confirmation bound. */
  const awaited = (row: ApprovalRow, hash: Hash) =>
    awaitUntil(Effect.either(hood.plainVerdict(hash, getAddress(row.wallet), row.nonce)), (v) => v._tag === "Right" && (v.right._tag === "Receipt" || v.right.neverLands), {
      what: `the token approval ${hash}`,
      timeoutMs: ctx.confirmTimeoutMs,
      intervalMs: ctx.pollIntervalMs
    }).pipe(
      Effect.map((v) => (v._tag === "Right" ? v.right : undefined)),
      Effect.catchTag("AwaitTimedOut", () => Effect.succeed(undefined))
    )

  /**
   * `POST /submit` of the id before its sell was built: the approval's signed bytes, sent once and
   * awaited. Undefined when the id has no approval (the caller answers `trade_not_found`).
   */
  const submit = (caller: TradeCaller, clientTradeId: string, signedTransaction: Uint8Array) =>
    Effect.gen(function* () {
      const row = yield* store.get(caller.accountId, clientTradeId)
      if (row === undefined) return undefined
      const signed = hexOf(signedTransaction)
      const hash = yield* builtHashOf(signed, row.messageHash, row.wallet)
      if (hash === undefined) {
        return yield* tradeError("wrong_transaction", "signedTransaction is not the built token approval signed by the TEE wallet; nothing was sent", { field: "signedTransaction" })
      }
      if (row.state === "approved") return approvalView({ ...row, signature: hash }, MAX_ALLOWANCE, "approval_confirmed", true)
      if (row.state === "lapsed") {
        return yield* tradeError("never_landed", "This token approval can no longer land (reverted, its nonce taken, or its claim expired) and this submit never succeeds: POST /build again with the same clientTradeId and body for a new approval", {
          details: { reason: "approval_lapsed", signature: row.signature ?? "" }
        })
      }
      // One request moves `built → sending` and sends; a repeat (or the loser of a race) awaits the same hash.
      const won = row.state === "built" ? yield* store.markSending(row, hash, signed) : false
      if (won) {
        const refused = yield* hood.send(signed)
        if (refused?.outcome === "reverted" && refused.error.startsWith("the preflight reverted")) {
          yield* settled(row, "lapsed")
          return yield* tradeError("trade_reverted", `The token approval reverted in its preflight (${refused.error}); nothing was sent: POST /build again with the same clientTradeId and body for a new approval`, { details: { reason: "approval_reverted" } })
        }
      } else if (row.state === "sending") yield* resend(row)
      const verdict = yield* awaited(row, hash)
      if (verdict === undefined) return yield* pendingRefusal(row, hash)
      if (verdict._tag === "Receipt" && verdict.success) {
        yield* settled(row, "approved")
        return approvalView({ ...row, signature: hash }, MAX_ALLOWANCE, "approval_confirmed", !won)
      }
      yield* settled(row, "lapsed")
      return yield* tradeError(verdict._tag === "Receipt" ? "trade_reverted" : "never_landed", `The token approval ${hash} ${verdict._tag === "Receipt" ? "reverted on chain" : "never landed (its nonce was taken)"}: nothing traded and this submit never succeeds; POST /build again with the same clientTradeId and body for a new approval`, {
        details: { reason: "approval_failed", signature: hash }
      })
    })

  return { build, beforeSell, submit }
}

export type HoodTeeApprovals = ReturnType<typeof makeHoodTeeApprovals>
export type { TradeApprovalView }
