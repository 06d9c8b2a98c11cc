/**
 * The actor shard's per-message work without the actor: ring push, drain, state lookup, identity
 * check (actors/runtime/Mailbox.ts). Printed, never asserted (moved out of
 * actors/runtime/Mailbox.test.ts, which keeps the mailbox's correctness tests).
 *
 * Run: `npx tsx bench/mailbox.ts`.
 */
import { Mailbox } from "../actors/runtime/Mailbox.js"

const box = new Mailbox<number>(4096)
const states = new Map<string, number>()
const keys = Array.from({ length: 1000 }, (_, i) => `solana:Mint${i}`)
const rounds = 200
let applied = 0
const started = performance.now()
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < 4096; i++) box.tryPush(keys[i % 1000]!, i)
  while (box.size > 0) {
    box.drain(1024, (key, value) => {
      const state = states.get(key)
      const next = value // the step
      if (next !== state) {
        states.set(key, next)
        applied++
      }
    })
  }
}
const perMessageNs = ((performance.now() - started) * 1e6) / (rounds * 4096)
console.log(`actors: mailbox push + drain + state map ≈ ${perMessageNs.toFixed(0)} ns per message (${rounds * 4096} messages, ${applied} applied)`)
