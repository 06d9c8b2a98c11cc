/**
 * The embedded bus across a real process restart. A child process (ingest/bus/testing/
 * restartChild.ts) publishes and consumes in group `g`, reporting each acknowledgement and each
 * delivered batch; it is stopped mid-stream (SIGKILL, or SIGTERM for a clean scope close), and
 * this process reopens the same directory and checks: every acknowledged record is there, in
 * order, byte for byte; the group's committed offsets are consistent with what the child handled;
 * and the group resumes exactly at its committed offset.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { Chunk, Effect, Queue } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { BusRecord } from "../../ingest/bus/Bus.js"
import { make } from "../../ingest/bus/EmbeddedBus.js"
import { RESTART_GROUP, RESTART_PARTITIONS, RESTART_TOPIC, restartKey, restartValue } from "../support/busRestartChild.js"
import { eventually } from "../support/eventually.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
const childScript = path.join(root, "test/support/busRestartChild.ts")

interface Ack {
  readonly seq: number
  readonly partition: number
  readonly offset: number
}
interface Batch {
  readonly partition: number
  readonly first: number
  readonly last: number
}

/** A running child with everything it has reported so far. */
const startChild = (dir: string) => {
  const child = spawn(process.execPath, ["--import", "tsx", childScript, dir], { cwd: root, stdio: ["ignore", "pipe", "pipe"] })
  const acks: Array<Ack> = []
  const batches: Array<Batch> = []
  const lines: Array<string> = []
  let stderr = ""
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  createInterface({ input: child.stdout! }).on("line", (line) => {
    lines.push(line)
    const [tag, a, b, c] = line.split(" ")
    if (tag === "A") {
      const first = Number(a)
      b!.split(",").forEach((pos, i) => {
        const [partition, offset] = pos.split(":").map(Number)
        acks.push({ seq: first + i, partition: partition!, offset: offset! })
      })
    } else if (tag === "B") batches.push({ partition: Number(a), first: Number(b), last: Number(c) })
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal }))
  )
  return { child, acks, batches, lines, exited, stderr: () => stderr }
}

const children: Array<ChildProcess> = []
const dirs: Array<string> = []
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  for (const dir of dirs.splice(0)) await fs.rm(dir, { recursive: true, force: true })
})

const dec = new TextDecoder()

/**
 * Opens the directory in this process and checks it against what the child reported. Returns the
 * committed offsets found.
 */
const verifyReopened = (dir: string, acks: ReadonlyArray<Ack>, batches: ReadonlyArray<Batch>) =>
  Effect.scoped(
    Effect.gen(function* () {
      const bus = yield* make({ dir, partitions: RESTART_PARTITIONS })
      const ends = yield* bus.endOffsets(RESTART_TOPIC)

      // 1. Every acknowledged record is readable at its acknowledged position, exact bytes.
      for (const ack of acks) {
        const [record] = yield* bus.read(RESTART_TOPIC, ack.partition, ack.offset, 1)
        expect(record, `seq ${ack.seq}`).toBeDefined()
        expect(record!.offset).toBe(ack.offset)
        expect(record!.key).toBe(restartKey(ack.seq))
        expect(dec.decode(record!.value)).toBe(restartValue(ack.seq))
      }

      // 2. Each partition is contiguous from 0, and per key the sequence numbers only grow.
      const lastSeqByKey = new Map<string, number>()
      for (let p = 0; p < RESTART_PARTITIONS; p++) {
        let offset = 0
        while (offset < ends.get(p)!) {
          const records = yield* bus.read(RESTART_TOPIC, p, offset, 1000)
          for (const r of records) {
            expect(r.offset).toBe(offset++)
            const seq = Number(dec.decode(r.value).slice(1).replace(/\.+$/, ""))
            expect(r.key).toBe(restartKey(seq))
            expect(seq).toBeGreaterThan(lastSeqByKey.get(r.key) ?? -1)
            lastSeqByKey.set(r.key, seq)
          }
        }
      }

      // 3. Committed offsets agree with the batches the child handled: at a batch boundary, at
      //    least past every batch but the last reported one (the child only fetched batch n+1
      //    after batch n's commit was durable), at most past the last one.
      const committed = yield* bus.committed(RESTART_GROUP, RESTART_TOPIC)
      for (let p = 0; p < RESTART_PARTITIONS; p++) {
        const mine = batches.filter((b) => b.partition === p)
        const c = committed.get(p) ?? 0
        const boundaries = [0, ...mine.map((b) => b.last + 1)]
        expect(boundaries, `partition ${p} committed ${c}`).toContain(c)
        if (mine.length >= 2) expect(c).toBeGreaterThanOrEqual(mine[mine.length - 2]!.last + 1)
        if (mine.length >= 1) expect(c).toBeLessThanOrEqual(mine[mine.length - 1]!.last + 1)
      }

      // 4. The group resumes exactly at the committed offsets: nothing committed comes again,
      //    nothing after it is skipped.
      const seen = yield* Queue.unbounded<BusRecord>()
      yield* bus.subscribe({ group: RESTART_GROUP, topic: RESTART_TOPIC, fromBeginning: true }, (batch) => Queue.offerAll(seen, batch.records))
      const expected = [...ends].reduce((n, [p, end]) => n + end - (committed.get(p) ?? 0), 0)
      const delivered: Array<BusRecord> = []
      while (delivered.length < expected) {
        delivered.push(...Chunk.toArray(yield* Queue.takeBetween(seen, 1, expected - delivered.length).pipe(Effect.timeout("20 seconds"))))
      }
      for (let p = 0; p < RESTART_PARTITIONS; p++) {
        const from = committed.get(p) ?? 0
        expect(delivered.filter((r) => r.partition === p).map((r) => r.offset)).toEqual(
          Array.from({ length: ends.get(p)! - from }, (_, i) => from + i)
        )
      }
      return { committed, ends }
    })
  )

describe("embedded bus across a process restart", () => {
  it("SIGKILL mid-stream: nothing acknowledged is lost and the group resumes at its committed offsets", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-bus-restart-"))
    dirs.push(dir)
    const run = startChild(dir)
    children.push(run.child)
    await eventually(() => run.acks.length >= 4000 && run.batches.length >= 40, { what: "the child to publish and consume", deadlineMs: 30_000, intervalMs: 10 }).catch((e: unknown) => {
      throw new Error(`${String(e)}\nchild stderr:\n${run.stderr()}`)
    })
    run.child.kill("SIGKILL")
    const exit = await run.exited
    expect(exit.signal).toBe("SIGKILL")
    expect(run.lines).not.toContain("closed")
    const acks = [...run.acks]
    const batches = [...run.batches]
    const { committed } = await Effect.runPromise(verifyReopened(dir, acks, batches))
    expect([...committed.values()].some((c) => c > 0)).toBe(true)
    console.log(`SIGKILL restart: ${acks.length} acknowledged records verified; ${batches.length} batches handled before the kill`)
  })

  it("SIGTERM closes through the scope: offsets written, lock released, everything acknowledged kept", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "curvestream-bus-restart-"))
    dirs.push(dir)
    const run = startChild(dir)
    children.push(run.child)
    await eventually(() => run.acks.length >= 2000 && run.batches.length >= 20, { what: "the child to publish and consume", deadlineMs: 30_000, intervalMs: 10 })
    run.child.kill("SIGTERM")
    const exit = await run.exited
    expect(exit.code).toBe(0)
    expect(run.lines[run.lines.length - 1]).toBe("closed")
    await expect(fs.access(path.join(dir, ".lock"))).rejects.toThrow()
    const offsetFiles = await fs.readdir(path.join(dir, RESTART_TOPIC, "_offsets"))
    expect(offsetFiles).toEqual([`${RESTART_GROUP}.json`])
    // verifyReopened consumed the rest in group g, so its commits now sit at the end offsets.
    const { ends } = await Effect.runPromise(verifyReopened(dir, [...run.acks], [...run.batches]))

    // A second generation on the same directory: offsets continue, the group resumes at its commits.
    const again = startChild(dir)
    children.push(again.child)
    await eventually(() => again.acks.length >= 200 && new Set(again.batches.map((b) => b.partition)).size === RESTART_PARTITIONS, { what: "the second child", deadlineMs: 30_000, intervalMs: 10 })
    for (let p = 0; p < RESTART_PARTITIONS; p++) {
      expect(again.acks.find((a) => a.partition === p)?.offset).toBe(ends.get(p))
      expect(again.batches.find((b) => b.partition === p)?.first).toBe(ends.get(p))
    }
    again.child.kill("SIGTERM")
    expect((await again.exited).code).toBe(0)
  })
})
