/**
 * The trade rail's write side and account reads (issue 28): `POST /api/v1/trade/agent/submit`
 * (the one-shot trade: `payer: main`, the embedded wallet signs server-side and sends; `async:
 * true` answers 202 with the trade's URL), `POST /api/v1/trade/agent/build` (with `dryRun: true`:
 * every check and the priced trade, nothing recorded), `GET /api/v1/trade/agent/trades/{id}` and
 * `GET /api/v1/agent/trades` (newest first, cursor pages, filters). HTTP only: key auth with
 * `swap:write` (test keys refused: the rail has no test mode), the body decoded
 * (`decodeTradeBody`), then one call to `TradeService`; failures go through the error table.
 */
import { Effect, Schema } from "effect"
import { validationFailed } from "../../src/domain/ApiError.js"
import type { AgentPrincipal } from "../../src/services/keys/Principals.js"
import { type AgentTransactions, TRANSACTION_KINDS } from "../../src/services/trade/AgentTransactions.js"
import type {
  SignedConfirm,
  SignedSubmit,
  SignedTradeFailure,
  TradeAcceptedView,
  TradeApprovalView,
  TradeBuiltView,
  TradeCaller,
  TradeDryRunView,
  TradeRequest,
  TradeServiceShape,
  TradeView
} from "../../src/services/trade/TradeService.js"
import { agentToWalletPrincipal } from "../auth/Adapters.js"
import { AGENT_AUTH_HEADERS, type AgentAuth, WHILE_PAUSED } from "../auth/AgentKeyAuth.js"
import { ErrorTable, mapFailure } from "../ErrorTable.js"
import { tradeAnswer } from "../TradeCodes.js"
import { keyCheckRefusals, tableRefusals } from "../RouteRefusals.js"
import { json } from "../Http.js"
import { answer, refusal } from "../OpenApi.js"
import { chainParam, enumParam, parseExactAddress, intParam, stringParam, timeParam } from "../QueryParams.js"
import { decodedBody, route, type RouteDef } from "../Router.js"
import { type Decoded, isObject } from "./KeyDecoders.js"
import { MAX_AMOUNT } from "./MarketRoutes.js"

export const CLIENT_TRADE_ID_CHARS_MAX = 128
export const WALLET_ID_CHARS_MAX = 128
/** A signed Solana transaction is at most 1,232 bytes: 1,644 base64 chars. */
export const SIGNED_TRANSACTION_BASE64_CHARS_MAX = 1_644
/** The same bound as 0x-hex (a Hood signed transaction as the sign relay answers it): 2 + 2,464 chars. */
export const SIGNED_TRANSACTION_HEX_CHARS_MAX = 2 + 2 * 1_232
const BASE64_PATTERN = /^[A-Za-z0-9+/]+={0,2}$/
const EVM_HEX_PATTERN = /^0x[0-9a-fA-F]+$/
const SIGNATURE_PATTERN = /^[1-9A-HJ-NP-Za-km-z]{64,88}$/
const EVM_TX_HASH_PATTERN = /^0x[0-9a-fA-F]{64}$/

/** `POST /submit` with `signedTransaction` (a linked or TEE build, signed) or `POST /confirm`'s body, decoded. */
export const decodeSignedSubmitBody = (body: Record<string, unknown>): Decoded<SignedSubmit> => {
  const id = body.clientTradeId
  if (typeof id !== "string" || id.length < 1 || id.length > CLIENT_TRADE_ID_CHARS_MAX) {
    return validationFailed("clientTradeId", `clientTradeId must be a string of 1 to ${CLIENT_TRADE_ID_CHARS_MAX} chars`)
  }
  const tx = body.signedTransaction
  // Hood: the sign relay answers an EVM transaction as 0x-hex; taken as is beside base64 (no transaction of either chain is base64 starting "0x").
  if (typeof tx === "string" && tx.startsWith("0x")) {
    if (!EVM_HEX_PATTERN.test(tx) || tx.length > SIGNED_TRANSACTION_HEX_CHARS_MAX || tx.length % 2 !== 0) {
      return validationFailed("signedTransaction", `signedTransaction as 0x-hex must be whole bytes (at most ${SIGNED_TRANSACTION_HEX_CHARS_MAX} chars)`)
    }
    return { clientTradeId: id, signedTransaction: new Uint8Array(Buffer.from(tx.slice(2), "hex")) }
  }
  if (typeof tx !== "string" || tx.length === 0 || tx.length > SIGNED_TRANSACTION_BASE64_CHARS_MAX || !BASE64_PATTERN.test(tx)) {
    return validationFailed("signedTransaction", `signedTransaction must be the built transaction signed, base64 (at most ${SIGNED_TRANSACTION_BASE64_CHARS_MAX} chars)`)
  }
  return { clientTradeId: id, signedTransaction: new Uint8Array(Buffer.from(tx, "base64")) }
}

export const decodeConfirmBody = (body: unknown): Decoded<SignedConfirm> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const id = body.clientTradeId
  if (typeof id !== "string" || id.length < 1 || id.length > CLIENT_TRADE_ID_CHARS_MAX) {
    return validationFailed("clientTradeId", `clientTradeId must be a string of 1 to ${CLIENT_TRADE_ID_CHARS_MAX} chars`)
  }
  if (typeof body.signature !== "string" || !(SIGNATURE_PATTERN.test(body.signature) || EVM_TX_HASH_PATTERN.test(body.signature))) {
    return validationFailed("signature", "signature must be a base58 transaction signature (Solana) or a 0x transaction hash (Hood)")
  }
  return { clientTradeId: id, signature: body.signature }
}

/** `POST /submit`'s body: a trade to sign and send (payer main), or a linked or TEE build's signed transaction. */
export const decodeSubmitBody = (body: unknown): Decoded<({ readonly _tag: "Trade" } & TradeBody) | ({ readonly _tag: "Signed" } & SignedSubmit)> => {
  if (isObject(body) && body.signedTransaction !== undefined) {
    const signed = decodeSignedSubmitBody(body)
    return "clientTradeId" in signed ? { _tag: "Signed", ...signed } : signed
  }
  // A linked or TEE trade is not one-shot: named before its other fields.
  if (isObject(body) && (body.payer === "linked" || body.payer === "tee") && body.dryRun !== true) {
    return validationFailed("payer", `payer ${body.payer}: build at /api/v1/trade/agent/build, sign, then submit {clientTradeId, signedTransaction} here`)
  }
  const trade = decodeTradeBody(body)
  if (!("clientTradeId" in trade)) return trade
  return { _tag: "Trade", ...trade }
}
export const TRADE_BODY_BYTES_MAX = 4 * 1024
const AMOUNT_PATTERN = /^[1-9][0-9]{0,79}$/
const MIN_OUT_PATTERN = /^[0-9]{1,80}$/

export interface TradeBody extends TradeRequest {
  readonly dryRun: boolean
  readonly async: boolean
}

/** The trade body into a `TradeRequest`, or `VALIDATION_FAILED` naming the field. Members not named here are ignored. */
export const decodeTradeBody = (body: unknown): Decoded<TradeBody> => {
  if (!isObject(body)) return validationFailed("body", "body must be a JSON object")
  const id = body.clientTradeId
  if (typeof id !== "string" || id.length < 1 || id.length > CLIENT_TRADE_ID_CHARS_MAX) {
    return validationFailed("clientTradeId", `clientTradeId must be a string of 1 to ${CLIENT_TRADE_ID_CHARS_MAX} chars`)
  }
  const chain = body.chain
  if (chain !== "solana" && chain !== "hood") return validationFailed("chain", "chain must be solana or hood")
  const mintMessage = `mint must be a ${chain} token address`
  if (typeof body.mint !== "string" || typeof parseExactAddress(chain, body.mint, "mint", mintMessage) !== "string") return validationFailed("mint", mintMessage)
  const side = body.side
  if (side !== "buy" && side !== "sell") return validationFailed("side", "side must be buy or sell")
  if (typeof body.amountIn !== "string" || !AMOUNT_PATTERN.test(body.amountIn) || BigInt(body.amountIn) > MAX_AMOUNT[chain]) {
    return validationFailed("amountIn", "amountIn must be a whole number of raw units, at least 1, within the chain's amount range")
  }
  const slippageBps = body.slippageBps
  if (slippageBps !== undefined && (typeof slippageBps !== "number" || !Number.isInteger(slippageBps) || slippageBps < 0 || slippageBps > 5_000)) {
    return validationFailed("slippageBps", "slippageBps must be an integer from 0 to 5000")
  }
  const minAmountOut = body.minAmountOut
  if (minAmountOut !== undefined && (typeof minAmountOut !== "string" || !MIN_OUT_PATTERN.test(minAmountOut) || BigInt(minAmountOut) > MAX_AMOUNT[chain])) {
    return validationFailed("minAmountOut", "minAmountOut must be a whole number of raw units")
  }
  if (slippageBps !== undefined && minAmountOut !== undefined) return validationFailed("minAmountOut", "send slippageBps or minAmountOut, not both")
  const payer = body.payer ?? "main"
  if (payer !== "main" && payer !== "linked" && payer !== "tee") return validationFailed("payer", "payer must be main, linked or tee")
  const linkedWalletId = body.linkedWalletId
  if (payer === "main" && linkedWalletId !== undefined) return validationFailed("linkedWalletId", "payer main trades from the embedded wallet: send linkedWalletId with payer linked or tee")
  if (payer !== "main") {
    if (typeof linkedWalletId !== "string" || linkedWalletId.length < 1 || linkedWalletId.length > WALLET_ID_CHARS_MAX) {
      return validationFailed("linkedWalletId", `payer ${payer} needs linkedWalletId: the paying wallet's id (1 to ${WALLET_ID_CHARS_MAX} chars)`)
    }
  }
  if (body.dryRun !== undefined && typeof body.dryRun !== "boolean") return validationFailed("dryRun", "dryRun must be a boolean")
  if (body.async !== undefined && typeof body.async !== "boolean") return validationFailed("async", "async must be a boolean")
  return {
    clientTradeId: id,
    chain,
    mint: body.mint,
    side,
    amountInRaw: BigInt(body.amountIn),
    ...(typeof slippageBps === "number" ? { slippageBps } : {}),
    ...(typeof minAmountOut === "string" ? { minAmountOutRaw: BigInt(minAmountOut) } : {}),
    payer,
    ...(payer !== "main" && typeof linkedWalletId === "string" ? { linkedWalletId } : {}),
    dryRun: body.dryRun === true,
    async: body.async === true
  }
}

export const tradeCallerOf = (p: AgentPrincipal): TradeCaller => ({
  accountId: p.accountId,
  keyId: p.key.id,
  keyPrefix: p.key.prefix,
  embeddedWallet: p.key.embeddedWallet,
  planFeeBps: BigInt(p.plan.feeBps),
  referred: p.account.referredBy !== null,
  principal: agentToWalletPrincipal(p),
  spendKey: p.key
})

const Amount = Schema.String.annotations({ description: "Raw units (decimal string)" })

const TradeBodyWire = Schema.Struct({
  clientTradeId: Schema.String.annotations({ description: "1 to 128 chars; idempotent per account: a repeat answers the stored outcome" }),
  chain: Schema.Literal("solana", "hood"),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  amountIn: Amount.annotations({ description: "Exact input: quote (buy) or tokens (sell), raw units" }),
  slippageBps: Schema.optional(Schema.Int.annotations({ description: "0..5000, default 100: minAmountOut = amountOut less this, rounded down" })),
  minAmountOut: Schema.optional(Amount.annotations({ description: "The chain-enforced minimum out (instead of slippageBps)" })),
  payer: Schema.optional(Schema.Literal("main", "linked", "tee")).annotations({
    description: "main (default): the embedded wallet signs server-side; linked (an imported wallet) or tee (a TEE wallet bound to this key), Solana or Hood: /build answers the unsigned transaction and its sign claim"
  }),
  linkedWalletId: Schema.optional(Schema.String.annotations({ description: "The paying wallet's id (payer linked or tee)" })),
  dryRun: Schema.optional(Schema.Boolean),
  async: Schema.optional(Schema.Boolean).annotations({ description: "submit only: answer 202 once the trade is recorded; poll jobUrl" })
}).annotations({ identifier: "AgentTradeRequest" })

const Fee = Schema.Struct({ bps: Schema.Int, feeRaw: Amount, asset: Schema.Literal("quote") })

export const TradeResponse = Schema.Struct({
  success: Schema.Literal(true),
  clientTradeId: Schema.String,
  chain: Schema.Literal("solana", "hood"),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  venue: Schema.String,
  payer: Schema.Literal("main", "linked", "tee"),
  wallet: Schema.String,
  quoteMint: Schema.String,
  quoteAsset: Schema.String,
  amountIn: Amount,
  expectedOut: Amount.annotations({ description: "The quote's fill the trade was priced at" }),
  minAmountOut: Amount,
  amountOut: Schema.NullOr(Amount).annotations({ description: "What the chain executed (null until executed)" }),
  fee: Fee,
  signature: Schema.String,
  status: Schema.Literal("built", "sending", "executed", "failed"),
  errorCode: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  replay: Schema.Boolean
}).annotations({ identifier: "AgentTrade" })

const AcceptedResponse = Schema.Struct({
  success: Schema.Literal(true),
  accepted: Schema.Literal(true),
  clientTradeId: Schema.String,
  status: Schema.Literal("built", "sending", "executed", "failed"),
  jobUrl: Schema.String
}).annotations({ identifier: "AgentTradeAccepted" })

const DryRunResponse = Schema.Struct({
  success: Schema.Literal(true),
  dryRun: Schema.Literal(true),
  clientTradeId: Schema.String,
  chain: Schema.Literal("solana", "hood"),
  mint: Schema.String,
  side: Schema.Literal("buy", "sell"),
  venue: Schema.String,
  payer: Schema.Literal("main", "linked", "tee"),
  wallet: Schema.String,
  quoteMint: Schema.String,
  quoteAsset: Schema.String,
  amountIn: Amount,
  expectedOut: Amount,
  minAmountOut: Amount,
  fee: Fee,
  approval: Schema.optional(
    Schema.Struct({ spender: Schema.String, allowanceRaw: Amount }).annotations({
      description: "Hood, payer tee, a sell whose allowance to spender is short: the build answers the token approval the service builds first (status approval_built)"
    })
  )
}).annotations({ identifier: "AgentTradeDryRun" })

const BuiltResponse = Schema.Struct({
  ...TradeResponse.fields,
  walletId: Schema.String,
  transaction: Schema.String.annotations({
    description: "The unsigned transaction, base64: Solana wire bytes (the payer's signature slot empty); Hood the serialized unsigned EIP-1559 transaction"
  }),
  signClaim: Schema.Struct({ claimId: Schema.String, expiresAt: Schema.String }).annotations({
    description: "The single-use claim the wallet's sign relay (POST /api/v1/agent/wallets/{id}/sign) signs these exact bytes under"
  }),
  lastValidBlockHeight: Schema.String.annotations({
    description: "Solana: past this block height the transaction can never land. Hood: the transaction's nonce (it never lands once another transaction takes it)"
  })
}).annotations({ identifier: "AgentTradeBuilt" })

export const ApprovalResponse = Schema.Struct({
  success: Schema.Literal(true),
  clientTradeId: Schema.String,
  chain: Schema.Literal("hood"),
  mint: Schema.String,
  side: Schema.Literal("sell"),
  payer: Schema.Literal("tee"),
  wallet: Schema.String,
  walletId: Schema.String,
  status: Schema.Literal("approval_built", "approval_confirmed").annotations({
    description: "approval_built: sign approval.transaction at the sign relay, then POST /submit {clientTradeId, signedTransaction}; approval_confirmed: mined, build again with the same body for the sell"
  }),
  approval: Schema.Struct({
    spender: Schema.String.annotations({ description: "Who the token lets pull the sold tokens: the trade router (every Hood sell goes through it, on the curve and after graduation)" }),
    amount: Amount.annotations({ description: "The allowance set: the max (2^256 - 1), so the wallet approves each spender once" }),
    transaction: Schema.String.annotations({ description: "The unsigned approve transaction, base64 (serialized unsigned EIP-1559)" }),
    signClaim: Schema.Struct({ claimId: Schema.String, expiresAt: Schema.String }).annotations({
      description: "The single-use claim the TEE wallet's sign relay (POST /api/v1/agent/wallets/{id}/sign) signs these exact bytes under"
    }),
    nonce: Schema.String.annotations({ description: "The approval's nonce; the sell is built after it is mined, on the next one" }),
    signature: Schema.String.annotations({ description: "The signed approval's hash once submitted, else empty" })
  }),
  replay: Schema.Boolean
}).annotations({ identifier: "AgentTradeApproval" })

const SignedSubmitWire = Schema.Struct({
  clientTradeId: Schema.String,
  signedTransaction: Schema.String.annotations({
    description: "The built transaction with the paying wallet's signature, base64 (Hood: the serialized signed EIP-1559 transaction, base64 or 0x-hex as the sign relay answers it)"
  })
}).annotations({ identifier: "AgentTradeSignedSubmit" })

const ConfirmWire = Schema.Struct({
  clientTradeId: Schema.String,
  signature: Schema.String.annotations({ description: "The built transaction you broadcast yourself: its signature (base58, Solana) or its hash (0x, Hood)" })
}).annotations({ identifier: "AgentTradeConfirm" })

const ListResponse = Schema.Struct({
  success: Schema.Literal(true),
  trades: Schema.Array(TradeResponse.pipe(Schema.omit("success"))),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AgentTradeList" })

const TransactionItem = Schema.Struct({
  kind: Schema.Literal(...TRANSACTION_KINDS),
  chain: Schema.Literal("solana", "hood"),
  id: Schema.String.annotations({ description: "The client's id of the record: clientLaunchId, clientTradeId, clientStakeId, rewardId or clientTransferId" }),
  at: Schema.String.annotations({ description: "When the service recorded it (ISO 8601)" }),
  status: Schema.String.annotations({ description: "The record's state as its rail keeps it (launch confirmed; trade sending, executed, failed; ...)" }),
  signature: Schema.NullOr(Schema.String),
  mint: Schema.NullOr(Schema.String),
  side: Schema.NullOr(Schema.Literal("buy", "sell")).annotations({ description: "A trade's side; null for every other kind" }),
  asset: Schema.NullOr(Schema.String).annotations({ description: "What amountRaw counts: a quote asset's name, svc, or a token's mint" }),
  amountRaw: Schema.NullOr(Amount).annotations({ description: "What the account spent or received, raw units; null when the record has no amount" }),
  fee: Schema.NullOr(Schema.Struct({ bps: Schema.Int, feeRaw: Amount })).annotations({ description: "The platform fee the record carries (trade; a launch's dev buy)" }),
  ref: Schema.NullOr(Schema.String).annotations({ description: "The record's own read route, when it has one" })
}).annotations({ identifier: "AgentTransaction" })

const TransactionList = Schema.Struct({
  success: Schema.Literal(true),
  transactions: Schema.Array(TransactionItem),
  nextCursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "AgentTransactionList" })

/** What a trade write checks the key for. */
const TRADE_WRITES = { scopes: ["swap:write"], testKeys: "forbid" } as const

/**
 * A trade write's refusals: the trade, spend-gate and (linked and TEE payers) wallet, payer and
 * sign-claim rows (`SignedTradeFailure`), and the key check's.
 */
const refusals = tableRefusals(
  [ErrorTable.TradeError, ErrorTable.SpendError, ErrorTable.PayerError, ErrorTable.SignClaimError, ErrorTable.WalletError],
  keyCheckRefusals(TRADE_WRITES),
  {
    400: "VALIDATION_FAILED naming the field (linkedWalletId: the wallet is not this account's, revoked, attribution-only, on another chain, or a TEE wallet bound to another key); SLIPPAGE_EXCEEDED (the market pays less than minAmountOut; on submit also when the chain refused it: nothing moved); TRADE_REVERTED (a Hood TEE sell's token approval that reverted, reason approval_reverted or approval_failed: build again with the same clientTradeId and body for a new approval); AGENT_WALLET_MISSING; SPEND_LIMIT_EXCEEDED (a buy's amount plus fee over the key's per-asset cap)",
    402: "the embedded wallet cannot pay amount, fee and rent (or hold the tokens sold)",
    403: "the key's scope (swap:write) and environment, the wallet and its delegation; KEY_LIMIT_REACHED (a buy over the key's txLimit window, with resetsAt; reason limit_unavailable when the USD value cannot be read: retryable); a paused key (VALIDATION_FAILED, reason key_paused). A sell is never refused by the key's limits",
    404: "the mint was not launched on this service (routing.reason external_token); JOB_NOT_FOUND: submit or confirm of an id never built",
    409: "IDEMPOTENCY_CONFLICT (changed body; reason prior_attempt_in_flight while the first attempt settles, not_sent for a build waiting for its signed transaction, or approval_pending while a Hood TEE wallet's token approval is signed and not mined or another clientTradeId's approval of the wallet is live, retryable; an approval signed at the relay and never submitted stops holding once its sign claim's lifetime passed: the next build answers a new approval on the same nonce), MARKET_NOT_TRADABLE; VALIDATION_FAILED (signedTransaction or signature): not the built transaction signed by its paying wallet, nothing sent",
    500: "SWAP_FAILED (not retryable): the transaction never landed (nothing moved; use a new clientTradeId); a Hood TEE sell's token approval submitted that can no longer land (reason approval_lapsed, or approval_failed when its nonce was taken): nothing traded, build again with the same clientTradeId and body for a new approval",
    503: "the chain could not be read (retryable)"
  }
)

export const tradeRoutes = (options: {
  readonly agentAuth: AgentAuth
  readonly trades: TradeServiceShape
  readonly transactions: AgentTransactions
}): ReadonlyArray<RouteDef> => {
  const { agentAuth, trades, transactions } = options
  const writer = (req: { headers: Readonly<Record<string, string>> }) => agentAuth.authenticate(req.headers, TRADE_WRITES)
  const body = decodedBody({ schema: TradeBodyWire, maxBytes: TRADE_BODY_BYTES_MAX, decode: (b: unknown) => decodeTradeBody(b) })

  const submit = route({
    method: "POST",
    path: "/api/v1/trade/agent/submit",
    operationId: "submitAgentTrade",
    summary: "One-shot trade (payer main), or a linked or TEE build's signed transaction: sent once, answered confirmed",
    description: [
      "payer main: the account's embedded wallet signs server-side; one call from quote to confirmed. The transaction carries minAmountOut (yours, or the fill less slippageBps) as the program's minimum out.",
      "Linked or TEE build: {clientTradeId, signedTransaction}, exactly the built transaction with the paying wallet's valid signature (anything else is refused and nothing is sent); sent once, whatever the number of concurrent submits.",
      "Idempotent on clientTradeId: a repeat answers the stored outcome (replay: true) and never resends; a changed body is IDEMPOTENCY_CONFLICT.",
      "async: true (payer main) answers 202 once the trade is recorded, with jobUrl (GET /api/v1/trade/agent/trades/{clientTradeId})."
    ].join(" "),
    tags: ["trade"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: decodedBody({ schema: Schema.Union(TradeBodyWire, SignedSubmitWire), maxBytes: TRADE_BODY_BYTES_MAX, decode: (b: unknown) => decodeSubmitBody(b) }),
    responses: {
      200: answer(
        "The executed trade (also a replay of it); with dryRun, the dry run's figures (nothing recorded or sent); a Hood TEE sell's approval submitted before its sell was built: the mined approval (status approval_confirmed)",
        Schema.Union(TradeResponse, DryRunResponse, ApprovalResponse)
      ),
      202: answer("Accepted (async): poll jobUrl", AcceptedResponse),
      ...refusals
    },
    authenticate: writer,
    handler: (_req, { body: b }, principal) => {
      const caller = tradeCallerOf(principal)
      if (b._tag === "Signed") {
        return mapFailure(trades.submitSigned(caller, { clientTradeId: b.clientTradeId, signedTransaction: b.signedTransaction })).pipe(
          Effect.map((answer) => json(200, { success: true, ...tradeAnswer(answer) }))
        )
      }
      const { _tag, dryRun, async: background, ...request } = b
      const call: Effect.Effect<TradeDryRunView | TradeView | TradeAcceptedView, SignedTradeFailure> = dryRun ? trades.dryRun(caller, request) : trades.submit(caller, request, background)
      return mapFailure(call).pipe(
        Effect.map((answer) => json("accepted" in answer ? 202 : 200, { success: true, ...tradeAnswer(answer) }))
      )
    }
  })

  const build = route({
    method: "POST",
    path: "/api/v1/trade/agent/build",
    operationId: "buildAgentTrade",
    summary: "A linked or TEE payer's trade built: the unsigned transaction and its single-use sign claim; with dryRun: true every check and the figures (nothing recorded)",
    description: [
      "payer linked (an imported wallet; Solana or Hood) or tee (a TEE wallet bound to this key; Solana or Hood), with linkedWalletId: every check of the trade, the key's spend limits held (strict per rail: advisory for an imported wallet where the spec says so), then the unsigned transaction recorded with its sign claim (status built).",
      "Sign it with the wallet's sign relay (POST /api/v1/agent/wallets/{id}/sign with signClaim.claimId) or the wallet's own key, then POST /submit {clientTradeId, signedTransaction}; or broadcast it yourself and POST /confirm {clientTradeId, signature}.",
      "A repeat of the id answers the stored build (replay: true). payer main builds, signs and sends in one call at /submit; its build answers dryRun: true only.",
      "Hood, payer tee, a sell whose allowance to the spender is short: the answer is the token approval the service built (status approval_built, its own sign claim): sign it at the relay, POST /submit {clientTradeId, signedTransaction} (answered approval_confirmed once mined), then build again with the same body for the sell. A repeat answers the same approval; signed and not mined yet, IDEMPOTENCY_CONFLICT reason approval_pending (retryable)."
    ].join(" "),
    tags: ["trade"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body,
    responses: {
      200: answer("The dry run's figures, or the built trade; a Hood TEE sell whose allowance is short: the token approval to sign and submit first (status approval_built)", Schema.Union(DryRunResponse, BuiltResponse, ApprovalResponse)),
      ...refusals
    },
    authenticate: writer,
    handler: (_req, { body: b }, principal) => {
      const { dryRun, async: _a, ...request } = b
      const caller = tradeCallerOf(principal)
      if (dryRun) return mapFailure(trades.dryRun(caller, request)).pipe(Effect.map((answer) => json(200, { success: true, ...tradeAnswer(answer) })))
      if (request.payer === "main") {
        return Effect.fail(validationFailed("dryRun", "payer main builds and sends in one call at /api/v1/trade/agent/submit; /build answers dryRun: true for it"))
      }
      const call: Effect.Effect<TradeBuiltView | TradeApprovalView, SignedTradeFailure> = trades.build(caller, request)
      return mapFailure(call).pipe(Effect.map((answer) => json(200, { success: true, ...tradeAnswer(answer) })))
    }
  })

  const confirm = route({
    method: "POST",
    path: "/api/v1/trade/agent/confirm",
    operationId: "confirmAgentTrade",
    summary: "A linked or TEE build you broadcast yourself: its signature verified over the built transaction, the chain's verdict awaited, recorded once",
    description:
      "Nothing is sent. The signature must be the paying wallet's signature of the built message; the trade then settles from the chain as a submitted one (executed once with trade.executed, or failed). A repeat answers the trade as it stands.",
    tags: ["trade"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    body: decodedBody({ schema: ConfirmWire, maxBytes: TRADE_BODY_BYTES_MAX, decode: (b: unknown) => decodeConfirmBody(b) }),
    responses: { 200: answer("The executed trade (also a replay of it)", TradeResponse), ...refusals },
    authenticate: writer,
    handler: (_req, { body: b }, principal) =>
      mapFailure(trades.confirm(tradeCallerOf(principal), b)).pipe(Effect.map((answer) => json(200, { success: true, ...tradeAnswer(answer) })))
  })

  const reader = (req: { headers: Readonly<Record<string, string>> }) =>
    agentAuth.authenticate(req.headers, { anyScope: ["swap:write", "account:read"], ...WHILE_PAUSED })

  const one = route({
    method: "GET",
    path: "/api/v1/trade/agent/trades/{clientTradeId}",
    operationId: "getAgentTrade",
    summary: "A trade as it stands (status sending, executed or failed)",
    tags: ["trade"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    pathParams: { clientTradeId: stringParam("The trade's clientTradeId", { required: true, maxLength: CLIENT_TRADE_ID_CHARS_MAX }) },
    responses: {
      200: { description: "The trade", schema: TradeResponse },
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "swap:write or account:read"),
      404: refusal(["JOB_NOT_FOUND"], "no trade with this clientTradeId on the account")
    },
    authenticate: reader,
    handler: (_req, { clientTradeId }, principal) =>
      mapFailure(trades.trade(tradeCallerOf(principal), clientTradeId)).pipe(Effect.map((answer) => json(200, { success: true, ...tradeAnswer(answer) })))
  })

  const list = route({
    method: "GET",
    path: "/api/v1/agent/trades",
    operationId: "listAgentTrades",
    summary: "The account's agent trades, newest first, by cursor",
    tags: ["trade"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    query: {
      chain: chainParam("solana or hood"),
      mint: stringParam("Token mint or address", { maxLength: 64 }),
      side: enumParam("buy or sell", ["buy", "sell"]),
      since: timeParam("Created at or after"),
      until: timeParam("Created before"),
      cursor: stringParam("nextCursor of the previous page", { maxLength: 512 }),
      limit: intParam("Page size", { min: 1, max: 100, default: 50 })
    },
    responses: {
      200: { description: "A page of trades", schema: ListResponse },
      400: refusal(["VALIDATION_FAILED"], "a filter or the cursor"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "swap:write or account:read")
    },
    authenticate: reader,
    handler: (_req, q, principal) =>
      mapFailure(
        trades.trades(tradeCallerOf(principal), {
          ...(q.chain !== undefined ? { chain: q.chain } : {}),
          ...(q.mint !== undefined ? { mint: q.mint } : {}),
          ...(q.side !== undefined ? { side: q.side } : {}),
          ...(q.since !== undefined ? { sinceMs: q.since } : {}),
          ...(q.until !== undefined ? { untilMs: q.until } : {}),
          ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
          limit: q.limit
        })
      ).pipe(Effect.map((answer) => json(200, { success: true, ...tradeAnswer(answer) })))
  })

  const movements = route({
    method: "GET",
    path: "/api/v1/agent/transactions",
    operationId: "listAgentTransactions",
    summary: "Every movement the service recorded for the account (launches with their dev buy, trades, staking, reward claims, transfers), newest first, by cursor",
    description:
      "One list over the rails' own records, ordered by (at, kind, id) descending. Creator-fee claims are not listed: the service keeps no record of them. See docs/decisions.md \"Account transactions\".",
    tags: ["trade"],
    auth: "agentKey",
    headers: AGENT_AUTH_HEADERS,
    query: {
      chain: chainParam("solana or hood"),
      kind: enumParam("One kind of movement", TRANSACTION_KINDS),
      since: timeParam("Recorded at or after"),
      until: timeParam("Recorded before"),
      cursor: stringParam("nextCursor of the previous page", { maxLength: 512 }),
      limit: intParam("Page size", { min: 1, max: 100, default: 50 })
    },
    responses: {
      200: answer("A page of movements", TransactionList),
      400: refusal(["VALIDATION_FAILED"], "a filter or the cursor"),
      401: refusal(["UNAUTHORIZED", "KEY_EXPIRED"]),
      403: refusal(["SCOPE_MISSING"], "swap:write or account:read")
    },
    authenticate: reader,
    handler: (_req, q, principal) =>
      mapFailure(
        transactions.list(principal.accountId, {
          ...(q.chain !== undefined ? { chain: q.chain } : {}),
          ...(q.kind !== undefined ? { kind: q.kind } : {}),
          ...(q.since !== undefined ? { sinceMs: q.since } : {}),
          ...(q.until !== undefined ? { untilMs: q.until } : {}),
          ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
          limit: q.limit
        })
      ).pipe(Effect.map((answer) => json(200, { success: true, ...answer })))
  })

  return [submit, build, confirm, one, list, movements]
}
