/**
 * Program-derived addresses, synchronously. The localnet executes programs synchronously, so it
 * cannot await kit's `getProgramDerivedAddress` (WebCrypto digests are async); this module does
 * the same derivation with node:crypto's SHA-256 and kit's off-curve rule (`isOffCurveAddress`) decided on
 * the candidate's bytes (`bytesAreCurvePoint`), and `Layouts.test.ts` pins it equal to kit's. The
 * client's instruction builders use it too (`client/CurveInstructions.ts`, `client/SplInstructions.ts`):
 * without kit's async digest per bump it takes about a third of the wall time.
 *
 * What a candidate costs (issue 34): the on-curve test is a field exponentiation in BigInt (about
 * 115 µs here, kit's or noble's alike), and about half the candidates are on the curve. kit's test
 * takes base58 text, so a candidate was also encoded to base58 and decoded back (about 40 µs) and
 * the program id decoded from base58 (about 30 µs) for every candidate; now the test reads the
 * digest's bytes, only the accepted candidate is encoded, and the ids' and seeds' bytes come from
 * `addressBytesShared`'s memo.
 *
 * Derivation (Solana's): sha256(seed_0 ‖ … ‖ seed_n ‖ bump ‖ programId ‖ "ProgramDerivedAddress"),
 * accepted only off the ed25519 curve; `find` tries bump 255 downwards. At most 16 seeds of at
 * most 32 bytes each (RangeError otherwise). `find`'s results and `create`'s answers (on-curve ones
 * too) are kept in bounded maps (65,536 entries each, cleared when full); a search's rejected bumps
 * are not kept.
 */
import { createHash } from "node:crypto"
import { ed25519 } from "@noble/curves/ed25519.js"
import type { Address } from "@solana/kit"
import { addressBytesShared, addressFromBytesOnce, addressToBytes, utf8Bytes } from "./internal/bytes.js"
import { BoundedMemo } from "../../../platform/BoundedMemo.js"
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
  h.update(addressBytesShared(programId))
  h.update(PDA_MARKER)
  return h.digest()
}

/** 2^255 − 19, the field of ed25519. */
const P = 2n ** 255n - 19n

/**
 * Whether 32 bytes are a compressed ed25519 point by kit's rule (`isOffCurveAddress` is its
 * negation; kit's own byte-level test is not exported): y is the bytes little-endian with the top bit
 * cleared, not reduced (y ≥ p is read mod p, as curve25519-dalek and ZIP 215 do), and the point
 * exists when (y² − 1)/(d·y² + 1) has a square root mod p. noble's `fromBytes` with `zip215` decides
 * exactly that. kit refuses one more case, x = 0 with the sign bit set (y ≡ ±1, where the root is 0),
 * which noble's ZIP 215 reading (and Solana's runtime) accept: those three byte strings are tested
 * here first. `Layouts.test.ts` pins this equal to kit's over random bytes and each edge.
 */
export const bytesAreCurvePoint = (bytes: Uint8Array): boolean => {
  if (bytes.length !== 32) return false
  if ((bytes[31]! & 0x80) !== 0 && isUnitY(bytes)) return false
  try {
    ed25519.Point.fromBytes(bytes, true)
    return true
  } catch {
    return false
  }
}

/** Whether y (the bytes little-endian, top bit cleared) is 1, p − 1 or p + 1: y ≡ ±1 mod p. */
const isUnitY = (bytes: Uint8Array): boolean => {
  // Cheap reject first: 1 has a zero top byte; p ± 1 have 0x7f.
  const top = bytes[31]! & 0x7f
  if (top !== 0 && top !== 0x7f) return false
  let y = 0n
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? top : bytes[i]!)
  return y === 1n || y === P - 1n || y === P + 1n
}

/** One candidate, uncached (seeds checked by the caller). */
const deriveCandidate = (seeds: ReadonlyArray<Seed>, programId: Address): Address | undefined => {
  const digest = hashCandidate(seeds, programId)
  // Not through the base58 memo: an accepted candidate is kept by the caller's own cache, and a
  // rejected one is never encoded at all.
  return bytesAreCurvePoint(digest) ? undefined : addressFromBytesOnce(digest)
}

/** `findProgramAddressSync`'s results. */
const found = new BoundedMemo<string, FoundPda>(CACHE_ENTRIES_MAX)
/** `createProgramAddressSync`'s answers, an on-curve one (null) too. */
const created = new BoundedMemo<string, Address | null>(CACHE_ENTRIES_MAX)

const cacheKey = (seeds: ReadonlyArray<Seed>, programId: Address): string =>
  `${programId}:${seeds.map((s) => Buffer.from(s).toString("hex")).join(".")}`

/**
 * The address for exactly these seeds (bump included by the caller), or undefined when on-curve.
 * Kept: the localnet's runtime asks it for every CPI a program signs with its seeds (a curve's
 * vaults sign each trade's transfers), the same few seeds again and again.
 */
export const createProgramAddressSync = (seeds: ReadonlyArray<Seed>, programId: Address): Address | undefined => {
  checkSeeds(seeds, 0)
  const key = cacheKey(seeds, programId)
  const hit = created.peek(key)
  if (hit !== undefined) return hit ?? undefined
  return created.keep(key, deriveCandidate(seeds, programId) ?? null) ?? undefined
}

export const findProgramAddressSync = (seeds: ReadonlyArray<Seed>, programId: Address): FoundPda => {
  checkSeeds(seeds, 1)
  const key = cacheKey(seeds, programId)
  const hit = found.peek(key)
  if (hit !== undefined) return hit
  for (let bump = 255; bump >= 0; bump--) {
    const address = deriveCandidate([...seeds, Uint8Array.of(bump)], programId)
    if (address !== undefined) return found.keep(key, { address, bump })
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
