/**
 * Reading a node's refusal. `@solana/kit` wraps the transaction error a node names in the RPC
 * error that carried it (a preflight failure's `cause`, a server error's `context.cause`), so the
 * question "is this refusal X" walks that chain, at most five links deep.
 */
import { isSolanaError, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM, type SolanaErrorCode } from "@solana/kit"

const MAX_DEPTH = 4

/** The first value `pick` finds on `e` or the errors it wraps (`cause`, `context.cause`). Pure. */
const findInChain = <A>(e: unknown, pick: (e: object) => A | undefined, depth = 0): A | undefined => {
  if (depth > MAX_DEPTH || typeof e !== "object" || e === null) return undefined
  const found = pick(e)
  if (found !== undefined) return found
  const context = (e as { readonly context?: { readonly cause?: unknown } }).context
  return findInChain((e as { readonly cause?: unknown }).cause, pick, depth + 1) ?? findInChain(context?.cause, pick, depth + 1)
}

/** Whether the refusal is (or wraps) the Solana error `code`, e.g. an unknown blockhash or "already processed". */
export const causedBy = (e: unknown, code: SolanaErrorCode): boolean => findInChain(e, (x) => (isSolanaError(x, code) ? true : undefined)) === true

/** The program's custom error code the refusal carries (an instruction's `Custom(n)`), if any. */
export const customCodeOf = (e: unknown): number | undefined =>
  findInChain(e, (x) => (isSolanaError(x, SOLANA_ERROR__INSTRUCTION_ERROR__CUSTOM) ? Number(x.context.code) : undefined))
