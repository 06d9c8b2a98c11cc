/**
 * Committed offsets of one consumer group on one topic: partition → next offset to consume. Kept
 * in memory and, with a directory, in `<topic>/_offsets/<group>.json`, replaced atomically (temp,
 * fsync, rename, fsync dir). Commits are group-committed too: concurrent commits share one file
 * write, and each resolves only once a write that includes it is durable.
 */
import * as fs from "node:fs/promises"
import { Schema } from "effect"
import { isErrno, writeFileAtomic } from "./fsx.js"

export const OffsetsFile = Schema.Struct({
  version: Schema.Literal(1),
  group: Schema.String,
  topic: Schema.String,
  offsets: Schema.Record({ key: Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]{0,3})$/)), value: Schema.NonNegativeInt })
})
const OffsetsJson = Schema.parseJson(OffsetsFile)
const decodeOffsets = Schema.decodeUnknownEither(OffsetsJson)
const encodeOffsets = Schema.encodeSync(OffsetsJson)

interface Waiter {
  readonly generation: number
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

export class OffsetStore {
  readonly committed = new Map<number, number>()
  private generation = 0
  private writtenGeneration = 0
  private writing: Promise<void> | undefined = undefined
  private waiters: Array<Waiter> = []

  private constructor(
    readonly group: string,
    readonly topic: string,
    readonly file: string | undefined,
    private readonly fsync: boolean
  ) {}

  /** Loads the group's file when there is one; a file that does not parse is an error, not an empty map. */
  static async load(group: string, topic: string, file: string | undefined, fsync: boolean): Promise<OffsetStore> {
    const store = new OffsetStore(group, topic, file, fsync)
    if (file === undefined) return store
    let text: string
    try {
      text = await fs.readFile(file, "utf8")
    } catch (error) {
      if (isErrno(error, "ENOENT")) return store
      throw error
    }
    const decoded = decodeOffsets(text)
    if (decoded._tag === "Left") throw new Error(`${file} is not a valid offsets file: ${decoded.left.message}`)
    for (const [partition, next] of Object.entries(decoded.right.offsets)) store.committed.set(Number(partition), next)
    return store
  }

  /** Records the commit; resolves once it is on disk (at once in memory mode). */
  commit(partition: number, nextOffset: number): Promise<void> {
    this.committed.set(partition, nextOffset)
    if (this.file === undefined) return Promise.resolve()
    const generation = ++this.generation
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ generation, resolve, reject })
      if (this.writing === undefined) this.writing = this.writeLoop()
    })
  }

  /** Resolves once every commit made so far is on disk. */
  async drain(): Promise<void> {
    while (this.writing !== undefined) await this.writing.catch(() => {})
  }

  private async writeLoop(): Promise<void> {
    try {
      while (this.writtenGeneration < this.generation) {
        const generation = this.generation
        const offsets: Record<number, number> = {}
        for (const [partition, next] of [...this.committed].sort((a, b) => a[0] - b[0])) offsets[partition] = next
        let failure: unknown = undefined
        try {
          await writeFileAtomic(this.file!, encodeOffsets({ version: 1, group: this.group, topic: this.topic, offsets }), this.fsync)
          this.writtenGeneration = generation
        } catch (error) {
          failure = error
          // Everything up to `generation` failed to persist; later commits retry on their own write.
          this.writtenGeneration = generation
        }
        const settled = this.waiters.filter((w) => w.generation <= generation)
        this.waiters = this.waiters.filter((w) => w.generation > generation)
        for (const w of settled) {
          if (failure === undefined) w.resolve()
          else w.reject(failure)
        }
      }
    } finally {
      this.writing = undefined
    }
  }
}
