/**
 * Every error code the two spec documents name, with its HTTP status and retryable hint, plus
 * the few transport-level codes the spec leaves open (unknown route, wrong method, oversized
 * body, internal defect). This table is the single mapping from a failure to the wire; a
 * conformance test reads both spec files and fails when a code named there is missing here.
 *
 * `status` is the code's usual status. A few codes carry a different status in specific
 * situations the spec names (VALIDATION_FAILED is 501 without a block engine, 403 while agent
 * features are off, 404 for an unknown key prefix, 409 for a revoked key's access change); an
 * `ApiError` may override the status for those cases.
 */

export interface ErrorCodeInfo {
  readonly status: number
  /** The spec's hint: `true`, `false`, or `"sometimes"` (depends on the situation). */
  readonly retryable: boolean | "sometimes"
  readonly meaning: string
}

const e = (status: number, retryable: boolean | "sometimes", meaning: string): ErrorCodeInfo => ({
  status,
  retryable,
  meaning
})

export const ErrorCodes = {
  // Launch and market reads (document 1, section 7)
  VALIDATION_FAILED: e(400, false, "field validation; see field"),
  INVALID_NAME_BYTES: e(400, false, "name over 32 UTF-8 bytes"),
  INVALID_SYMBOL: e(400, false, "symbol over 10 UTF-8 bytes"),
  IMAGE_TOO_LARGE: e(400, false, "image over 10 MB"),
  IMAGE_UNREACHABLE: e(400, false, "image did not resolve or respond in time"),
  IMAGE_REDIRECT_NOT_ALLOWED: e(400, false, "image URL redirected"),
  IMAGE_WRONG_SHAPE: e(400, false, "image not roughly square"),
  BANNER_UNREACHABLE: e(400, false, "banner did not resolve in time"),
  BANNER_WRONG_SHAPE: e(400, false, "banner not wider than 1.5:1"),
  DEV_BUY_UNSUPPORTED_FOR_PAIR: e(400, false, "nonzero buy on a pair without a dev-buy path"),
  DEV_BUY_TOO_LOW: e(400, false, "retained for older servers; current servers answer VALIDATION_FAILED"),
  DEV_BUY_TOO_HIGH: e(400, false, "above the dev-buy ceiling"),
  QUOTE_PAIR_UNKNOWN: e(400, false, "unknown quoteAsset for the chain"),
  CURVE_OUT_OF_RANGE: e(400, false, "custom curve outside limits"),
  UPLOAD_INVALID: e(400, false, "malformed upload body or unsupported type"),
  AGENT_WALLET_MISSING: e(400, false, "main payer has no embedded wallet for the chain"),
  SPEND_LIMIT_EXCEEDED: e(400, false, "buy amount plus fee exceeds the key's cap for the asset"),
  TRANSACTION_TOO_LARGE: e(400, false, "assembled Solana launch transaction over 1232 bytes"),
  UNAUTHORIZED: e(401, false, "missing, malformed, unknown or revoked key"),
  KEY_EXPIRED: e(401, false, "key expired"),
  FEE_LEG_MISSING: e(402, false, "self-signed launch lacks a verifying fee transfer"),
  INSUFFICIENT_OWNER_BALANCE: e(402, true, "owner wallet cannot cover fee, rent and dev buy"),
  SCOPE_MISSING: e(403, false, "key lacks the scope"),
  TIER_REQUIRED: e(403, false, "plan does not include this"),
  EXCLUSIVE_NOT_ELIGIBLE: e(403, false, "exclusive requested, account not eligible"),
  EMBEDDED_WALLET_NOT_PERMITTED: e(403, false, "key's embedded-wallet permission is denied"),
  SIGNER_MISMATCH: e(403, false, "confirmed transaction's signers exclude the linked wallet"),
  AGENT_WALLET_NOT_EMBEDDED: e(403, false, "no embedded wallet for the chain"),
  AGENT_WALLET_NOT_DELEGATED: e(403, true, "embedded wallet exists, agent access never approved"),
  DELEGATION_REVOKED: e(403, true, "delegation rejected now"),
  KEY_LIMIT_REACHED: e(403, "sometimes", "key's txLimit would be exceeded"),
  TEST_ENVIRONMENT_FORBIDDEN: e(403, false, "test key on a rail with no test mode"),
  UNRECOGNIZED_TRANSACTION: e(403, false, "no matching build-time claim, or bytes altered"),
  SPEND_POLICY_DENIED: e(403, false, "owner wallet's policy rejected the transaction"),
  MARKET_NOT_FOUND: e(404, false, "no market for chain and mint"),
  JOB_NOT_FOUND: e(404, false, "unknown, expired, consumed or foreign id"),
  IDEMPOTENCY_CONFLICT: e(409, "sometimes", "id reused with a different body, already confirmed, or in flight"),
  MARKET_NOT_TRADABLE: e(409, false, "curve cannot execute the side"),
  RATE_LIMITED: e(429, true, "per-minute limit exceeded"),
  DAILY_CAP_REACHED: e(429, true, "daily launch cap reached"),
  LAUNCH_FAILED: e(500, true, "build, broadcast or confirmation failed"),
  SWAP_FAILED: e(500, "sometimes", "unclassified failure executing or recording a swap leg"),
  LAUNCH_DISABLED: e(503, false, "HEADLESS_LAUNCH_ENABLED not true"),
  HOOD_LAUNCH_UNAVAILABLE: e(503, true, "Hood configuration incomplete; nothing broadcast"),
  QUOTE_UNAVAILABLE: e(503, true, "price dependency failed"),
  FEED_UNAVAILABLE: e(503, true, "feed not available yet"),
  BUILD_TIMEOUT: e(504, true, "build step exceeded its deadline"),
  SLIPPAGE_EXCEEDED: e(400, false, "trade row code: an atomic buy failed on chain on its minimum"),
  TRADE_REVERTED: e(400, false, "trade row code: an atomic buy reverted on chain"),
  SELF_BUILD_EXPIRED: e(409, false, "ledger row code: a self-signed build older than 30 minutes, failed by the sweep"),
  TRADE_BUILD_EXPIRED: e(409, false, "trade row code: a build expired before landing (superseded when the buy landed)"),
  WALLET_LIMIT_REACHED: e(400, false, "account has the maximum active linked wallets"),
  WALLET_ALREADY_LINKED: e(409, false, "address already has an active linked-wallet row"),

  // Keys, wallets, staking, fees, webhooks, market data (document 2, section 7)
  KEY_ACCESS_STALE: e(409, false, "expectScopes differs from stored scopes"),
  KEY_ACCESS_PARTNER_KEY: e(409, false, "key holds a partner scope"),
  LOOSEN_REQUIRES_SESSION: e(403, false, "agent key tried to widen access or loosen a cap"),
  KEY_ISSUANCE_FAILED: e(503, true, "dependency unreachable at issuance"),
  WEBHOOK_LIMIT_REACHED: e(400, false, "more than 3 active endpoints"),
  REBIND_TOO_MANY: e(400, false, "rebind outside 1 to 200 wallets"),
  REBIND_TARGET_INVALID: e(400, false, "rebind target key invalid"),
  REBIND_WALLET_INVALID: e(400, false, "rebind wallet invalid"),
  REBIND_STALE: e(409, false, "binding changed since preview"),
  REBIND_BUILD_OPEN: e(409, true, "a build for the wallet is inside its 30-minute window"),
  REBIND_FORWARD_OPEN: e(409, "sometimes", "a forwarded sign is not yet settled"),
  REBIND_SCOPE_FULL: e(409, false, "selected-scope target over 1,000 assignments"),
  REBIND_RECONCILE_INCOMPLETE: e(503, true, "incomplete chain read; nothing changed"),
  FEE_NOT_CLAIMABLE: e(409, false, "refused before signing"),
  FEE_CLAIM_FAILED: e(500, "sometimes", "failed after checks; read fees before retrying"),
  STAKING_REWARD_NOT_FOUND: e(404, false, "no such reward"),
  STAKING_REWARD_NOT_OWNED: e(403, false, "reward belongs to a wallet this key may not use"),
  STAKING_REWARD_ALREADY_CLAIMED: e(409, false, "already paid"),
  REWARD_CLAIM_PENDING: e(409, true, "claim in progress or uncertain"),
  STAKING_REWARD_CLAIM_FAILED: e(503, true, "retryable; still pays at most once"),

  // Transport-level codes the spec leaves open (docs/decisions.md, "Error envelope").
  ROUTE_NOT_FOUND: e(404, false, "no route for this path"),
  METHOD_NOT_ALLOWED: e(405, false, "the path exists but not for this method"),
  BODY_TOO_LARGE: e(413, false, "request body over the size limit"),
  URI_TOO_LONG: e(414, false, "request target over the length limit"),
  ADMIN_REQUIRED: e(403, false, "the route is for operator admins"),
  REPLAY_RUNNING: e(409, true, "a replay is already running for this account; the body carries its job_id"),
  INTERNAL: e(500, true, "unexpected failure; nothing was recorded")
} as const satisfies Record<string, ErrorCodeInfo>

export type ErrorCode = keyof typeof ErrorCodes

export const isErrorCode = (s: string): s is ErrorCode => Object.hasOwn(ErrorCodes, s)
