/**
 * Reads a failed launch simulation (or preflight) error: does it say the payer cannot cover the
 * network fee, the rent, the dev buy or the platform fee? Pure; the error is Solana's JSON shape
 * (`TransactionError`, numbers possibly as bigints as kit returns them).
 *
 * - `InsufficientFundsForFee`, `AccountNotFound` (the payer has no account: never funded), and
 *   `InsufficientFundsForRent` at index 0 (the fee payer left below its rent reserve) are the
 *   payer's balance.
 * - `Custom 1` at any launch instruction: the System program's `ResultWithNegativeLamports` and
 *   SPL Token's `InsufficientFunds` are both 1, and svc-curve's own codes start at 6000, so a 1 is
 *   always a System or Token refusal for want of funds (directly or through svc-curve's CPI).
 * - On an SPL pair, an account-shaped refusal at the dev buy or the fee transfer
 *   (`IncorrectProgramId`, `InvalidAccountData`, `UninitializedAccount`, `InvalidAccountOwner`,
 *   `IllegalOwner`) means the payer's quote token account is missing or not a token account:
 *   `quote_account_suspect`, which the caller confirms by reading that account.
 */
import type { LaunchInstructionRole } from "./LaunchTransaction.js"

export type SimulationVerdict = "insufficient_owner_balance" | "quote_account_suspect" | "other"

const PAYER_FUNDS_ROLES: ReadonlySet<LaunchInstructionRole> = new Set([
  "create_curve",
  "create_payer_token_account",
  "dev_buy",
  "create_treasury_account",
  "platform_fee",
  "bundle_tip"
])

const ACCOUNT_SHAPED = new Set(["IncorrectProgramId", "InvalidAccountData", "UninitializedAccount", "InvalidAccountOwner", "IllegalOwner"])

const asNumber = (v: unknown): number | undefined =>
  typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined

/** The error as plain JSON text (bigints written as numbers), for messages and logs. */
export const transactionErrorText = (err: unknown): string =>
  JSON.stringify(err, (_, v: unknown) => (typeof v === "bigint" ? Number(v) : v)) ?? "null"

export const classifySimulationError = (
  err: unknown,
  roles: ReadonlyArray<LaunchInstructionRole>,
  quoteKind: "native" | "spl"
): SimulationVerdict => {
  if (err === "InsufficientFundsForFee" || err === "AccountNotFound") return "insufficient_owner_balance"
  if (typeof err !== "object" || err === null) return "other"
  const rent = (err as { InsufficientFundsForRent?: { account_index?: unknown } }).InsufficientFundsForRent
  if (rent !== undefined) return asNumber(rent.account_index) === 0 ? "insufficient_owner_balance" : "other"
  const ix = (err as { InstructionError?: readonly [unknown, unknown] }).InstructionError
  if (ix === undefined) return "other"
  const index = asNumber(ix[0])
  const role = index === undefined ? undefined : roles[index]
  if (role === undefined) return "other"
  const value = ix[1]
  if (typeof value === "object" && value !== null && asNumber((value as { Custom?: unknown }).Custom) === 1) {
    return PAYER_FUNDS_ROLES.has(role) ? "insufficient_owner_balance" : "other"
  }
  if (value === "InsufficientFunds" && PAYER_FUNDS_ROLES.has(role)) return "insufficient_owner_balance"
  if (quoteKind === "spl" && (role === "dev_buy" || role === "platform_fee") && typeof value === "string" && ACCOUNT_SHAPED.has(value)) {
    return "quote_account_suspect"
  }
  return "other"
}
