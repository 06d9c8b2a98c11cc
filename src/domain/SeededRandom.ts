/**
 * The one seeded random source of plain (non-Effect) code: mulberry32, floats in [0, 1). The same
 * seed gives the same sequence, so a seeded run replays exactly (simulated mentions, property and
 * replay tests). Effect code takes its randomness from the `Random` service seeded the same way
 * (`Effect.withRandom(Random.make(seed))`, as the simulations do). Never for secrets.
 */
export const mulberry32 = (seed: number): (() => number) => {
  let a = seed >>> 0
  return (): number => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
