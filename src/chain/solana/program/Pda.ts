/**
 * Program-derived addresses, synchronously. The localnet executes programs synchronously, so it
 * cannot await kit's `getProgramDerivedAddress` (WebCrypto digests are async); this module does
 * the same derivation with node:crypto's SHA-256 and kit's own off-curve check (`isOffCurveAddress`), and
 * `Layouts.test.ts` pins it equal to kit's. The client's instruction builders use it too
 * (`client/CurveInstructions.ts`, `client/SplInstructions.ts`): without kit's async digest per bump
 * it takes about a third of the wall time.
 *
 * Derivation (Solana's): sha256(seed_0 ‖ … ‖ seed_n ‖ bump ‖ programId ‖ "ProgramDerivedAddress"),
 * accepted only off the ed25519 curve; `find` tries bump 255 downwards. At most 16 seeds of at
 * most 32 bytes each (RangeError otherwise). Results are cached in a bounded map (65,536 entries,
 * cleared when full).
 */
import { createHash } from "node:crypto"
import { type Address, isOffCurveAddress } from "@solana/kit"
import { addressFromBytesOnce, addressToBytes, utf8Bytes } from "./internal/bytes.js"
import { ASSOCIATED_TOKEN_PROGRAM_ID, SVC_CURVE_PROGRAM_ID, TOKEN_PROGRAM_ID } from "./ProgramIds.js"

export const MAX_SEEDS = 16
export const MAX_SEED_BYTES = 32
const PDA_MARKER = utf8Bytes("ProgramDerivedAddress")
const CACHE_ENTRIES_MAX = 65_536

export type Seed = Uint8Array

export interface FoundPda {
  readonly address: Address
  readonly bump: number
}

const checkSeeds = (seeds: ReadonlyArray<Seed>, extra: number): void => {
  if (seeds.length + extra > MAX_SEEDS) throw new RangeError(`more than ${MAX_SEEDS} seeds`)
  for (const s of seeds) if (s.length > MAX_SEED_BYTES) throw new RangeError(`seed over ${MAX_SEED_BYTES} bytes`)
}

const hashCandidate = (seeds: ReadonlyArray<Seed>, programId: Address): Uint8Array => {
  const h = createHash("sha256")
  for (const s of seeds) h.update(s)
  h.update(addressToBytes(programId))
  h.update(PDA_MARKER)
  return new Uint8Array(h.digest())
}

/** The address for exactly these seeds (bump included by the caller), or undefined when on-curve. */
export const createProgramAddressSync = (seeds: ReadonlyArray<Seed>, programId: Address): Address | undefined => {
  checkSeeds(seeds, 0)
  // Not through the base58 memo: a bump search's rejected candidates never come back, and the
  // found address is kept by `find`'s own cache.
  const candidate = addressFromBytesOnce(hashCandidate(seeds, programId))
  return isOffCurveAddress(candidate) ? candidate : undefined
}

const cache = new Map<string, FoundPda>()

const cacheKey = (seeds: ReadonlyArray<Seed>, programId: Address): string =>
  `${programId}:${seeds.map((s) => Buffer.from(s).toString("hex")).join(".")}`

export const findProgramAddressSync = (seeds: ReadonlyArray<Seed>, programId: Address): FoundPda => {
  checkSeeds(seeds, 1)
  const key = cacheKey(seeds, programId)
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  for (let bump = 255; bump >= 0; bump--) {
    const address = createProgramAddressSync([...seeds, Uint8Array.of(bump)], programId)
    if (address !== undefined) {
      if (cache.size >= CACHE_ENTRIES_MAX) cache.clear()
      const found = { address, bump }
      cache.set(key, found)
      return found
    }
  }
  throw new RangeError("no viable bump seed")
}

// ---------------------------------------------------------------------------------------------
// Seed families. Each function returns the seeds WITHOUT the bump.

const s = (text: string): Seed => utf8Bytes(text)
const k = (a: Address): Seed => addressToBytes(a)

export const Seeds = {
  config: (): Seed[] => [s("config")],
  curve: (mint: Address): Seed[] => [s("curve"), k(mint)],
  metadata: (mint: Address): Seed[] => [s("metadata"), k(mint)],
  tokenVault: (curve: Address): Seed[] => [s("token_vault"), k(curve)],
  stakerVault: (curve: Address): Seed[] => [s("staker_vault"), k(curve)],
  quoteVault: (curve: Address): Seed[] => [s("quote_vault"), k(curve)],
  feeVault: (curve: Address): Seed[] => [s("fee_vault"), k(curve)],
  feeVaultQuote: (feeVault: Address): Seed[] => [s("fee_vault_quote"), k(feeVault)],
  pool: (mint: Address): Seed[] => [s("pool"), k(mint)],
  poolTokenVault: (pool: Address): Seed[] => [s("pool_token_vault"), k(pool)],
  poolQuoteVault: (pool: Address): Seed[] => [s("pool_quote_vault"), k(pool)],
  /** The associated token account of `owner` for `mint` (ATA program; the token program id in the middle). */
  associatedToken: (owner: Address, mint: Address, tokenProgram: Address = TOKEN_PROGRAM_ID): Seed[] => [
    k(owner),
    k(tokenProgram),
    k(mint)
  ]
} as const

export const findAssociatedTokenAddressSync = (owner: Address, mint: Address): FoundPda =>
  findProgramAddressSync(Seeds.associatedToken(owner, mint), ASSOCIATED_TOKEN_PROGRAM_ID)

export const findConfigAddressSync = (): FoundPda => findProgramAddressSync(Seeds.config(), SVC_CURVE_PROGRAM_ID)

/** Every svc-curve address of one launched mint (before and after migration). */
export interface CurveAddresses {
  readonly mint: Address
  readonly curve: FoundPda
  readonly metadata: FoundPda
  readonly tokenVault: FoundPda
  readonly stakerVault: FoundPda
  readonly quoteVault: FoundPda
  readonly feeVault: FoundPda
  readonly feeVaultQuote: FoundPda
  readonly pool: FoundPda
  readonly poolTokenVault: FoundPda
  readonly poolQuoteVault: FoundPda
}

export const curveAddressesSync = (mint: Address): CurveAddresses => {
  const find = (seeds: Seed[]) => findProgramAddressSync(seeds, SVC_CURVE_PROGRAM_ID)
  const curve = find(Seeds.curve(mint))
  const feeVault = find(Seeds.feeVault(curve.address))
  const pool = find(Seeds.pool(mint))
  return {
    mint,
    curve,
    metadata: find(Seeds.metadata(mint)),
    tokenVault: find(Seeds.tokenVault(curve.address)),
    stakerVault: find(Seeds.stakerVault(curve.address)),
    quoteVault: find(Seeds.quoteVault(curve.address)),
    feeVault,
    feeVaultQuote: find(Seeds.feeVaultQuote(feeVault.address)),
    pool,
    poolTokenVault: find(Seeds.poolTokenVault(pool.address)),
    poolQuoteVault: find(Seeds.poolQuoteVault(pool.address))
  }
}
