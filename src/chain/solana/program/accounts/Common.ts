/**
 * Enumerations shared by the svc-curve account and event layouts, with their one-byte codes.
 * A code is never repurposed; an unknown code makes a decoder return undefined.
 */
export const ACCOUNT_LAYOUT_VERSION = 1

/** First byte of every svc-curve account. */
export const AccountDiscriminator = {
  Curve: 1,
  Pool: 2,
  FeeVault: 3,
  Metadata: 4,
  Config: 5
} as const

export const CurveModes = ["open", "exclusive", "exp-a", "exp-b", "exp-c", "exp-custom"] as const
export type CurveMode = (typeof CurveModes)[number]
export const isExpMode = (m: CurveMode): boolean => m.startsWith("exp-")

export const Lifecycles = ["trading", "completed", "migrated"] as const
export type Lifecycle = (typeof Lifecycles)[number]

/** How the quote asset is held: lamports on program-owned vaults (WSOL pair) or SPL token accounts. */
export const QuoteKinds = ["native", "spl"] as const
export type QuoteKind = (typeof QuoteKinds)[number]

export const codeOf = <T extends string>(values: ReadonlyArray<T>, v: T): number => {
  const i = values.indexOf(v)
  if (i < 0) throw new RangeError(`unknown value ${v}`)
  return i
}

export const valueOf = <T extends string>(values: ReadonlyArray<T>, code: number): T => {
  const v = values[code]
  if (v === undefined) throw new RangeError(`unknown code ${code}`)
  return v
}
