/**
 * The curve factory's `configHash`: keccak256(abi.encode(quoteToken, virtualQuote,
 * graduationThreshold, tokenSupply, stakerAllocationBps, feeBps, dexVersion)), the same bytes as
 * `CurveFactory.configHashOf`. The launch service computes it from its economics matrix and
 * compares one value with what the chain recorded (spec 2.9 verify `provenance.configHash`).
 */
import { type Address, encodeAbiParameters, type Hex, keccak256 } from "viem"

export type DexVersion = "v3" | "v4"

export const HOOD_TOKEN_SUPPLY_RAW = 1_000_000_000n * 10n ** 18n
export const HOOD_TOKEN_DECIMALS = 18

export const dexVersionNumber = (v: DexVersion): 3 | 4 => (v === "v3" ? 3 : 4)
export const dexVersionOf = (n: number): DexVersion => {
  if (n === 3) return "v3"
  if (n === 4) return "v4"
  throw new RangeError(`dexVersion ${n} is neither 3 nor 4`)
}

export interface ConfigHashInput {
  readonly quoteToken: Address
  readonly virtualQuoteRaw: bigint
  readonly thresholdRaw: bigint
  readonly tokenSupplyRaw?: bigint
  readonly stakerAllocationBps: number
  readonly feeBps: number
  readonly dexVersion: DexVersion
}

export const configHash = (i: ConfigHashInput): Hex =>
  keccak256(
    encodeAbiParameters(
      [
        { type: "address" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint256" },
        { type: "uint16" },
        { type: "uint16" },
        { type: "uint8" }
      ],
      [
        i.quoteToken,
        i.virtualQuoteRaw,
        i.thresholdRaw,
        i.tokenSupplyRaw ?? HOOD_TOKEN_SUPPLY_RAW,
        i.stakerAllocationBps,
        i.feeBps,
        dexVersionNumber(i.dexVersion)
      ]
    )
  )
