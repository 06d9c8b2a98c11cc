/**
 * The spec's shape rules (launch spec 2.1 and 8) and the upload's square crop, as pure functions
 * of an image's displayed width and height in pixels.
 *
 * - An image (`imageUrl`) is "roughly square": its long side is at most 1.5 times its short side
 *   (`max ≤ 1.5 · min`, so exactly 3:2 passes).
 * - A banner (`bannerUrl`) is "wider than 1.5:1": `width > 1.5 · height` (exactly 3:2 fails, and a
 *   tall image fails however narrow).
 * - The upload crop is the largest centered square; an odd leftover puts the extra pixel on the
 *   right or bottom (`left = floor((w - side) / 2)`).
 *
 * Integer arithmetic only (`2·max ≤ 3·min`), so no ratio is ever rounded.
 */

export interface Dimensions {
  readonly width: number
  readonly height: number
}

export interface CropBox {
  readonly left: number
  readonly top: number
  readonly width: number
  readonly height: number
}

/** The spec's gate, 1.5:1, as the integer pair 3:2. */
const ratioNumerator = 3
const ratioDenominator = 2

const valid = (d: Dimensions): boolean => Number.isSafeInteger(d.width) && Number.isSafeInteger(d.height) && d.width > 0 && d.height > 0

/** `imageUrl`: aspect ratio at most 1.5:1, either orientation. */
export const isRoughlySquare = (d: Dimensions): boolean =>
  valid(d) && ratioDenominator * Math.max(d.width, d.height) <= ratioNumerator * Math.min(d.width, d.height)

/** `bannerUrl`: wider than 1.5:1. */
export const isWideBanner = (d: Dimensions): boolean => valid(d) && ratioDenominator * d.width > ratioNumerator * d.height

export const isSquare = (d: Dimensions): boolean => d.width === d.height

/** The largest centered square inside `d`. */
export const centeredSquare = (d: Dimensions): CropBox => {
  const side = Math.min(d.width, d.height)
  return { left: Math.floor((d.width - side) / 2), top: Math.floor((d.height - side) / 2), width: side, height: side }
}
