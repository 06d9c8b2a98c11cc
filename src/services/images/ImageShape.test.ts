/** The shape gates at their boundaries (3:2 exactly, one pixel either side) and the crop box. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { centeredSquare, isRoughlySquare, isWideBanner } from "./ImageShape.js"

describe("image shape (roughly square: at most 1.5:1)", () => {
  it.each([
    [100, 100, true],
    [150, 100, true], // exactly 1.5:1
    [151, 100, false], // one pixel over
    [100, 150, true], // tall, exactly 1.5:1
    [100, 151, false],
    [3, 2, true],
    [1_500_000, 1_000_001, true],
    [1_500_001, 1_000_000, false],
    [1, 1, true],
    [2, 1, false],
    [0, 10, false],
    [10, 0, false],
    [Number.NaN, 10, false]
  ])("%i x %i -> %s", (width, height, want) => {
    expect(isRoughlySquare({ width, height })).toBe(want)
  })
})

describe("banner shape (wider than 1.5:1)", () => {
  it.each([
    [150, 100, false], // exactly 1.5:1 is not wider
    [151, 100, true],
    [1500, 1000, false],
    [1501, 1000, true],
    [300, 100, true],
    [100, 100, false],
    [100, 300, false], // tall
    [3, 2, false],
    [4, 2, true],
    [0, 0, false]
  ])("%i x %i -> %s", (width, height, want) => {
    expect(isWideBanner({ width, height })).toBe(want)
  })

  it("no image passes both gates", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 100_000 }), (width, height) => {
        expect(isRoughlySquare({ width, height }) && isWideBanner({ width, height })).toBe(false)
      })
    )
  })
})

describe("centered square crop", () => {
  it.each([
    [[300, 200], { left: 50, top: 0, width: 200, height: 200 }],
    [[200, 300], { left: 0, top: 50, width: 200, height: 200 }],
    [[201, 200], { left: 0, top: 0, width: 200, height: 200 }], // odd leftover: the extra column on the right
    [[203, 200], { left: 1, top: 0, width: 200, height: 200 }],
    [[200, 200], { left: 0, top: 0, width: 200, height: 200 }],
    [[1, 9], { left: 0, top: 4, width: 1, height: 1 }]
  ] as const)("%j -> %j", ([width, height], want) => {
    expect(centeredSquare({ width, height })).toEqual(want)
  })

  it("is the largest square inside the image, centered within one pixel", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50_000 }), fc.integer({ min: 1, max: 50_000 }), (width, height) => {
        const box = centeredSquare({ width, height })
        expect(box.width).toBe(Math.min(width, height))
        expect(box.height).toBe(box.width)
        expect(box.left + box.width).toBeLessThanOrEqual(width)
        expect(box.top + box.height).toBeLessThanOrEqual(height)
        const right = width - box.left - box.width
        const bottom = height - box.top - box.height
        expect(right - box.left).toBeGreaterThanOrEqual(0)
        expect(right - box.left).toBeLessThanOrEqual(1)
        expect(bottom - box.top).toBeGreaterThanOrEqual(0)
        expect(bottom - box.top).toBeLessThanOrEqual(1)
      })
    )
  })
})
